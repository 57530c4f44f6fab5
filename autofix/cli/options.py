"""The options ``fix`` and ``batch`` share (one definition each, so their help cannot
drift apart) and the :class:`~autofix.settings.Settings` built from them."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperArgument, TyperCommand

from autofix.cli.boundary import usage_error
from autofix.run.child.symptoms import STALL_RULE
from autofix.settings import LAUNCHERS, Settings
from autofix.toolkit.discovery import all_recipes

Launcher = enum.Enum("Launcher", {name: name for name in LAUNCHERS}, type=str)  # type: ignore[misc]

PythonOption = Annotated[str | None, typer.Option(
    "--python", metavar="PATH",
    help="Interpreter of the training environment (default: the one running autofix).")]
TimeoutOption = Annotated[float, typer.Option(
    "--timeout", metavar="SECONDS", min=0,
    help="Seconds per run before the script and its children are killed (0: none).")]
MaxStepsOption = Annotated[int, typer.Option(
    "--max-steps", metavar="N", min=1,
    help=f"Stop healthy training after N optimizer steps (a stalled loss is {STALL_RULE}).")]
FullOption = Annotated[bool, typer.Option(
    "--full", help="Run the script to its end instead of stopping at --max-steps.")]
MaxIterationsOption = Annotated[int, typer.Option(
    "--max-iterations", metavar="N", min=1, help="Most fixes to try before giving up.")]
DryRunOption = Annotated[bool, typer.Option(
    "--dry-run", help="Run and diagnose as usual, print every fix as a diff with its "
                      "evidence, but commit nothing and write no branch.")]
OnlyOption = Annotated[list[str] | None, typer.Option(
    "--only", metavar="RECIPE",
    help="Apply only this recipe (repeatable; ids from `autofix recipes`).")]
SkipOption = Annotated[list[str] | None, typer.Option(
    "--skip", metavar="RECIPE", help="Never apply this recipe (repeatable).")]
LauncherOption = Annotated[Launcher | None, typer.Option(
    "--launcher", case_sensitive=False,
    help="Start the script with torchrun or accelerate (launch), on --nproc-per-node "
         "processes; the probe runs in every rank.")]
NprocOption = Annotated[int, typer.Option(
    "--nproc-per-node", metavar="N", min=1, help="Processes per node for --launcher.")]
SampleRowsOption = Annotated[int, typer.Option(
    "--sample-rows", metavar="N", min=0,
    help="Diagnosis runs cut each dataset split the script loads to N evenly spread rows "
         "(0: off); the last run uses the data as loaded.")]
OneAtATimeOption = Annotated[bool, typer.Option(
    "--one-at-a-time", help="One fault per run: no API check before the first run and no "
                            "preflight checks at train().")]
WarmOption = Annotated[bool | None, typer.Option(
    "--warm/--cold", show_default=False,
    help="--warm: the runs are forks of one warm interpreter per session that has imported "
         "torch, transformers and datasets once (a run goes cold by itself where a fork "
         "could differ); --cold: every run in a fresh interpreter. Default: warm, except "
         "for a script that imports TensorFlow or Keras.")]

CleanTreeOption = Annotated[bool, typer.Option(
    "--clean-tree", help="Refuse to start (exit 2) when tracked files have uncommitted "
                         "changes or the script is not committed; by default autofix runs "
                         "the files as they are and snapshots an edited script on the "
                         "branch.")]


class PlainHelp(TyperCommand):
    """A command whose help names each argument by its metavar alone (``SCRIPT``,
    ``PATHS...``), in the usage line too, instead of typer's ``SCRIPT <path>`` and
    ``{SCRIPT}``; every option that takes a value has a metavar or lists its choices."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperArgument):
                name = param.metavar or (param.name or "").upper()
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
                param._usage_display_name = lambda name=name: name  # type: ignore[method-assign,misc]


def check_recipe_ids(err: Console, ids: list[str]) -> None:
    """Exit 2 for a ``--only``/``--skip`` id that names no recipe."""
    known = {r.id for r in all_recipes()}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise usage_error(err, f"unknown {'recipe' if len(unknown) == 1 else 'recipes'}: "
                               f"{', '.join(unknown)}",
                          "`autofix recipes` lists the recipe ids")


def make_settings(err: Console, *, python: str | None, timeout: float, max_steps: int,
                  full: bool, max_iterations: int, dry_run: bool, only: list[str] | None,
                  skip: list[str] | None, launcher: Launcher | None, nproc_per_node: int,
                  sample_rows: int, one_at_a_time: bool, args: tuple[str, ...] = (),
                  branch: str | None = None, resume: bool = False, init: bool = False,
                  cwd: Path | None = None, clean_tree: bool = False,
                  warm: bool | None = None) -> Settings:
    """The :class:`Settings` the options give (exit 2 for an unknown recipe id)."""
    check_recipe_ids(err, (only or []) + (skip or []))
    return Settings(
        python=python or Settings().python, args=args, branch=branch,
        cwd=cwd or Path.cwd(), timeout=timeout or None, max_steps=0 if full else max_steps,
        max_iterations=max_iterations, resume=resume, init=init, dry_run=dry_run,
        only=tuple(only or ()), skip=tuple(skip or ()),
        launcher=launcher.value if launcher is not None else "",
        nproc_per_node=nproc_per_node, sample_rows=sample_rows, one_at_a_time=one_at_a_time,
        clean_tree=clean_tree, warm=warm)
