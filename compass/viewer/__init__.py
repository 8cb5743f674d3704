"""``compass view``: a local web app over run directories and the skill library (docs/viewer.md)."""
