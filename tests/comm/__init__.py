"""Tests of compass.comm (entity memory, graph, protocol) and local memory (hand-built geometries, no environment)."""
