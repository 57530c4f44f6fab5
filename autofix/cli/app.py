"""The ``autofix`` typer application: its commands, its help and ``--version``."""

from __future__ import annotations

import importlib.metadata
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from autofix.cli.batch import batch
from autofix.cli.branches import register as register_branches
from autofix.cli.fix import FixCommand, fix
from autofix.cli.listing import recipes
from autofix.cli.options import PlainHelp


class _DefaultToFix(TyperGroup):
    """Lets ``autofix train.py ...`` mean ``autofix fix train.py ...``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # click.Context
        own = {opt for param in self.get_params(ctx) for opt in param.opts}
        if args and args[0] not in self.commands and args[0].split("=", 1)[0] not in own:
            args = ["fix", *args]
        return super().parse_args(ctx, args)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"autofix {importlib.metadata.version('autofix')}")
        raise typer.Exit(0)


app = typer.Typer(
    cls=_DefaultToFix,
    add_completion=True,
    rich_markup_mode=None,  # plain click help: flags are shown as flags, never `<bool>`
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
    help="Repair a Hugging Face training script: run it, diagnose the failure, apply a "
         "LibCST recipe, commit each fix on a git branch, and rerun until it trains.\n\n"
         "`autofix SCRIPT [OPTIONS] [-- SCRIPT_ARGS...]` is short for `autofix fix SCRIPT ...`."
         "\n\nExit codes: 0 fixed or nothing to fix, 1 could not fix, 2 usage or environment "
         "error, 3 a bug in autofix (traceback log path printed), 130 interrupted.",
)


@app.callback()
def _main(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Repair Hugging Face training scripts (see `autofix fix --help`)."""


app.command("fix", cls=FixCommand)(fix)
app.command("batch", cls=PlainHelp)(batch)
app.command("recipes")(recipes)
register_branches(app)


def main() -> None:  # pragma: no cover - console-script entry
    app()
