"""Tests of compass.memory and compass.comm (hand-built geometries, no environment)."""
