"""The ``autofix`` command line (typer): a thin layer over :func:`autofix.engine.repair`.

Exit codes: 0 fixed or nothing to fix, 1 could not fix, 2 usage or environment error,
130 interrupted. Errors are mapped to exit codes here and nowhere else.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Annotated, Any

import git
import typer
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from autofix.batch import BatchOptions, Row, batch_json, batch_markdown, run_batch
from autofix.engine import Options, repair
from autofix.errors import AutofixError
from autofix.registry import all_recipes, origin, plugins
from autofix.report import ConsoleObserver, error_report, print_summary, write_report
from autofix.runner import default_python
from autofix.types import SessionResult, Status

EXIT_FIXED, EXIT_GAVE_UP, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class _DefaultToFix(TyperGroup):
    """Lets ``autofix train.py ...`` mean ``autofix fix train.py ...``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # click.Context
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["fix", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_DefaultToFix,
    add_completion=False,
    no_args_is_help=True,
    help="Repair a Hugging Face training script: run it, diagnose the failure, apply a "
         "LibCST recipe, commit each fix on a git branch, and rerun until it trains.\n\n"
         "`autofix SCRIPT [OPTIONS] [-- SCRIPT_ARGS...]` is short for `autofix fix SCRIPT ...`."
         "\n\nExit codes: 0 fixed or nothing to fix, 1 could not fix, 2 usage or environment "
         "error, 130 interrupted.",
)


def exit_code(result: SessionResult) -> int:
    """The process exit code for a finished session."""
    if result.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FIXED if result.status in (Status.FIXED, Status.CLEAN) else EXIT_GAVE_UP


@app.command("fix")
def fix(
    script: Annotated[Path, typer.Argument(help="The training script to repair (.py).")],
    script_args: Annotated[list[str] | None, typer.Argument(
        help="Arguments for the script, after --.", show_default=False)] = None,
    branch: Annotated[str | None, typer.Option(
        help="Branch for the fixes (default: autofix/<script stem>), made from HEAD.")] = None,
    python: Annotated[str | None, typer.Option(
        help="Interpreter of the training environment (default: the one running autofix).")
    ] = None,
    timeout: Annotated[float, typer.Option(
        help="Seconds per run before the script and its children are killed (0: none).",
        min=0)] = 600.0,
    max_steps: Annotated[int, typer.Option(
        help="Stop healthy training after this many optimizer steps (a stalled loss is "
             "judged from step 40 on).", min=1)] = 60,
    full: Annotated[bool, typer.Option(
        "--full", help="Run the script to its end instead of stopping at --max-steps.")
    ] = False,
    max_iterations: Annotated[int, typer.Option(
        help="Most fixes to try before giving up.", min=1)] = 8,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue an existing --branch from its tip.")] = False,
    init: Annotated[bool, typer.Option(
        "--init", help="Not a git repo: create one with the script as first commit.")
    ] = False,
    report: Annotated[Path | None, typer.Option(
        help="Write a JSON report of the runs and fixes to this path.")] = None,
) -> None:
    """Repair SCRIPT on a branch; your files, index and current branch stay untouched."""
    console, err = _consoles(report)
    options = Options(
        script=script, python=python or default_python(), args=tuple(script_args or ()),
        branch=branch, timeout=timeout or None, max_steps=0 if full else max_steps,
        max_iterations=max_iterations, resume=resume, init=init,
    )
    for problem in plugins().problems:  # a broken plugin is reported, never fatal
        err.print(f"[yellow]warning:[/yellow] {escape(problem)}")
    observer = ConsoleObserver(console, script.name)
    try:
        result = repair(options, observer)
    except AutofixError as exc:
        observer.close()
        _print_error(err, exc)
        _write(report, error_report(str(exc)), err)
        raise typer.Exit(EXIT_USAGE) from None
    except git.GitCommandError as exc:
        observer.close()
        err.print(f"[bold red]error:[/bold red] git failed: {escape(str(exc))}")
        _write(report, error_report(f"git failed: {exc}"), err)
        raise typer.Exit(EXIT_USAGE) from None
    observer.close()
    print_summary(console, result)
    _write(report, result.to_json(), err)
    raise typer.Exit(exit_code(result))


def _consoles(report: Path | None) -> tuple[Console, Console]:
    """Stdout and stderr consoles, after checking ``--report`` and making SIGTERM/SIGHUP
    (closing the terminal, a CI timeout) end autofix like Ctrl-C, children killed first."""
    console = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False)
    problem = _report_problem(report)
    if problem:
        err.print(f"[bold red]error:[/bold red] --report {report}: {problem}")
        raise typer.Exit(EXIT_USAGE)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    # A shell starts background jobs with SIGINT ignored, and Python then installs no
    # KeyboardInterrupt handler: restore it, so Ctrl-C always kills the child cleanly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return console, err


def _print_error(err: Console, exc: AutofixError) -> None:
    err.print(f"[bold red]error:[/bold red] {escape(str(exc))}")
    if exc.hint:
        err.print(f"  hint: {escape(exc.hint)}")


def _report_problem(path: Path | None) -> str:
    """Why ``--report PATH`` could not be written, checked before any run ("" if fine)."""
    if path is None:
        return ""
    if path.is_dir():
        return "is a directory"
    if not path.parent.is_dir():
        return f"{path.parent} is not a directory"
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        return "not writable"
    return ""


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM/SIGHUP end autofix like Ctrl-C: the child's process group is killed first."""
    raise KeyboardInterrupt


def _write(path: Path | None, document: dict[str, Any], err: Console) -> None:
    if path is None:
        return
    try:
        write_report(path, document)
    except OSError as exc:
        err.print(f"[bold red]error:[/bold red] cannot write --report {path}: {exc}")
        raise typer.Exit(EXIT_USAGE) from None


def _rows_table(rows: list[Row]) -> Table:
    table = Table("script", "status", "run", "fixes", "last", "seconds")
    for row in rows:
        style = {"fixed": "green", "clean": "green", "gave_up": "yellow", "error": "red",
                 "interrupted": "red", "running": "cyan"}.get(row.status, "dim")
        table.add_row(row.path, f"[{style}]{row.status}[/{style}]", str(row.run or ""),
                      str(row.fixes), escape(row.error or row.note), f"{row.seconds:.0f}")
    return table


@app.command("batch")
def batch(
    paths: Annotated[list[str], typer.Argument(
        help="Scripts, notebooks, folders (searched recursively) or globs.")],
    jobs: Annotated[int, typer.Option(
        help="Scripts repaired at once (default: the number of cores).", min=1)
    ] = os.cpu_count() or 1,
    branch_prefix: Annotated[str, typer.Option(
        help="Each script's branch is this prefix + its path in the repo.")] = "autofix/",
    python: Annotated[str | None, typer.Option(
        help="Interpreter of the training environment.")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per run (0: none).", min=0)] = 600.0,
    max_steps: Annotated[int, typer.Option(help="Optimizer steps per run.", min=1)] = 60,
    max_iterations: Annotated[int, typer.Option(help="Most fixes per script.", min=1)] = 8,
    report: Annotated[Path | None, typer.Option(
        help="JSON report; a Markdown report for people is written next to it (.md).")
    ] = None,
) -> None:
    """Repair many scripts and notebooks, each on its own branch from the same HEAD."""
    console, err = _consoles(report)
    template = Options(script=Path("."), python=python or default_python(),
                       timeout=timeout or None, max_steps=max_steps,
                       max_iterations=max_iterations)
    cancel = threading.Event()
    rows: list[Row] = []
    try:
        with Live(console=console, refresh_per_second=4, transient=False) as live:
            def changed(current: list[Row]) -> None:
                rows[:] = current
                live.update(_rows_table(current))

            result_rows = run_batch(BatchOptions(paths, jobs, branch_prefix, template),
                                    changed, cancel)
    except AutofixError as exc:
        _print_error(err, exc)
        raise typer.Exit(EXIT_USAGE) from None
    except KeyboardInterrupt:
        cancel.set()
        err.print("[bold red]interrupted[/bold red]: running scripts stopped; their "
                  "branches hold the fixes committed so far")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    console.print(_rows_table(result_rows))
    if report is not None:
        _write(report, batch_json(result_rows), err)
        markdown = report.with_suffix(".md")
        markdown.write_text(batch_markdown(result_rows), encoding="utf-8")
        console.print(f"reports: {report}, {markdown}")
    ok = all(r.status in ("fixed", "clean") for r in result_rows)
    raise typer.Exit(EXIT_FIXED if ok else EXIT_GAVE_UP)


def recipes_table() -> Table:
    """The recipe listing shown by ``autofix recipes`` (generated from the classes)."""
    table = Table("recipe", "category", "what it does", "module", "origin")
    for recipe in all_recipes():
        table.add_row(recipe.id, recipe.category, recipe.title, recipe.__module__,
                      origin(recipe))
    return table


def recipes_markdown() -> str:
    """The same listing as a Markdown table (the README's copy is checked against it)."""
    rows = ["| recipe | category | what it does | module |", "|---|---|---|---|"]
    rows += [f"| `{r.id}` | `{r.category}` | {r.title} | `{r.__module__}` |"
             for r in all_recipes()]
    return "\n".join(rows) + "\n"


@app.command("recipes")
def recipes(
    markdown: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False,
) -> None:
    """List the fix recipes autofix knows, with their origin (autofix or a plugin)."""
    err = Console(stderr=True, highlight=False)
    for problem in plugins().problems:  # reported, never fatal
        err.print(f"[yellow]warning:[/yellow] {escape(problem)}")
    if markdown:
        typer.echo(recipes_markdown(), nl=False)
    else:
        Console().print(recipes_table())


def main() -> None:  # pragma: no cover - console-script entry
    app()
