"""``autofix fix SCRIPT`` (also ``autofix SCRIPT``): one repair session on a branch."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

try:  # typer >= 0.20 vendors click; older versions use the click package
    from typer._click import Context
    from typer._click.exceptions import NoSuchOption, UsageError
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import Context  # type: ignore[assignment]
    from click.exceptions import NoSuchOption, UsageError  # type: ignore[assignment]

from autofix.cli.boundary import boundary, consoles, exit_code, usage_error
from autofix.cli.options import (
    CleanTreeOption,
    DryRunOption,
    FullOption,
    LauncherOption,
    MaxIterationsOption,
    MaxStepsOption,
    NprocOption,
    OneAtATimeOption,
    OnlyOption,
    PlainHelp,
    PythonOption,
    SampleRowsOption,
    SkipOption,
    TimeoutOption,
    WarmOption,
    make_settings,
)
from autofix.errors import AutofixError
from autofix.loop.engine import repair
from autofix.reports.formats import write_session_report
from autofix.reports.terminal import ConsoleObserver, print_summary, print_tree_state
from autofix.settings import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_MAX_STEPS,
    DEFAULT_SAMPLE_ROWS,
    DEFAULT_TIMEOUT,
)
from autofix.toolkit.discovery import plugins
from autofix.vcs.repo import repo_containing, repo_root
from autofix.vcs.tree import dirty_files, merge_advice


class FixCommand(PlainHelp):
    """``fix``: an unknown option is most often a script argument without ``--`` in front;
    the error then shows the command line that passes it to the script (exit 2)."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        original = list(args)
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as exc:
            raise UsageError(forgotten_dashes(original, exc.option_name), ctx) from None


def forgotten_dashes(args: list[str], option: str) -> str:
    """The message for ``option``, unknown to autofix: the same command line with the
    script's arguments moved behind ``--`` (from ``option`` on)."""
    at = args.index(option) if option in args else len(args)
    head, tail = args[:at], [a for a in args[at:] if a != "--"]
    if "--" in head:  # arguments were already given after --: keep them first
        cut = head.index("--")
        head, tail = head[:cut], head[cut + 1:] + tail
    line = shlex.join(["autofix", *head, "--", *tail])
    return (f"{option} is not an autofix option. Arguments for the script go after `--`:\n"
            f"    {line}")


def fix(
    script: Annotated[Path, typer.Argument(
        metavar="SCRIPT", help="The training script or notebook to repair (.py, .ipynb).")],
    script_args: Annotated[list[str] | None, typer.Argument(
        metavar="[-- SCRIPT_ARGS...]", help="Arguments for the script, after --.",
        show_default=False)] = None,
    branch: Annotated[str | None, typer.Option(
        "--branch", metavar="NAME",
        help="Branch for the fixes (default: autofix/<script stem>), made from HEAD.")] = None,
    python: PythonOption = None,
    timeout: TimeoutOption = DEFAULT_TIMEOUT,
    max_steps: MaxStepsOption = DEFAULT_MAX_STEPS,
    full: FullOption = False,
    max_iterations: MaxIterationsOption = DEFAULT_MAX_ITERATIONS,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue an existing --branch from its tip.")] = False,
    init: Annotated[bool, typer.Option(
        "--init", help="Not a git repo: create one with the script as first commit.")
    ] = False,
    report: Annotated[Path | None, typer.Option(
        "--report", metavar="PATH",
        help="Write a report of the runs, fixes (with diffs) and loss curves: .html or .md "
             "for people, otherwise JSON (schema: autofix/reports/report.schema.json).")] = None,
    dry_run: DryRunOption = False,
    only: OnlyOption = None,
    skip: SkipOption = None,
    launcher: LauncherOption = None,
    nproc_per_node: NprocOption = 1,
    sample_rows: SampleRowsOption = DEFAULT_SAMPLE_ROWS,
    one_at_a_time: OneAtATimeOption = False,
    clean_tree: CleanTreeOption = False,
    warm: WarmOption = None,
) -> None:
    """Repair SCRIPT on a branch; your files, index and current branch stay untouched.

    The script runs in the folder you call autofix from (as `python SCRIPT` would), in
    single and batch mode alike: relative data paths are looked up from there.
    """
    console, err = consoles(report)
    settings = make_settings(
        err, python=python, timeout=timeout, max_steps=max_steps, full=full,
        max_iterations=max_iterations, dry_run=dry_run, only=only, skip=skip,
        launcher=launcher, nproc_per_node=nproc_per_node, sample_rows=sample_rows,
        one_at_a_time=one_at_a_time, args=tuple(script_args or ()), branch=branch,
        resume=resume, init=init, clean_tree=clean_tree, warm=warm)
    for problem in plugins().problems:  # a broken plugin is reported, never fatal
        err.print(f"[yellow]warning:[/yellow] {escape(problem)}")
    observer = ConsoleObserver(console, script.name, settings.max_steps)
    with boundary(err, report, observer.close):
        if not clean_tree:
            _say_what_happens_to_uncommitted_files(console, script)
        result = repair(script, settings, observer=observer)
    observer.close()
    result.command = command_line()
    merge = None
    if result.mergeable and not result.dry_run:
        try:  # a summary without tailored merge commands is better than none
            merge = merge_advice(repo_containing(script.resolve().parent), result.branch)
        except AutofixError:
            merge = None
    print_summary(console, result, merge=merge)
    if report is not None:
        try:
            written = write_session_report(report, result, merge)
        except OSError as exc:
            raise usage_error(err, f"cannot write --report {report}: {exc}") from None
        console.print("report: " + ", ".join(str(p) for p in written))
    raise typer.Exit(exit_code(result))


def command_line() -> str:
    """The command line this process was started with, as the user typed it
    (``autofix fix train.py --max-steps 5 -- --epochs 1``), shell-quoted."""
    return shlex.join(["autofix", *sys.argv[1:]])


def _say_what_happens_to_uncommitted_files(console: Console, script: Path) -> None:
    """Before the first run: which files are uncommitted and what autofix does with each
    (nothing when the script is in no repository yet: the session says why)."""
    if not script.is_file():
        return
    try:
        repo = repo_containing(script.resolve().parent)
        rel = script.resolve().relative_to(repo_root(repo)).as_posix()
        dirty = dirty_files(repo)
    except (AutofixError, ValueError, OSError):
        return
    print_tree_state(console, dirty, [rel])
