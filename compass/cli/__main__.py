"""``python -m compass.cli`` (runs this checkout, not an installed copy)."""

from compass.cli.main import app

app()
