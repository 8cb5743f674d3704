"""Test doubles shared by the test suites (fake VLM server, tiny offline models)."""
