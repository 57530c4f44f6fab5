"""``python -m autofix`` runs the CLI."""

from autofix.cli import app

app(prog_name="autofix")
