"""Planners decide which skill each agent runs: the library-only planner and the VLM planner."""
