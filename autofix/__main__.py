"""``python -m autofix`` runs the CLI."""

from autofix.cli.main import app

app(prog_name="autofix")
