"""The ``autofix`` command line (typer): a thin layer over :func:`autofix.engine.repair`.

Exit codes: 0 fixed or nothing to fix, 1 could not fix, 2 usage or environment error,
3 a bug in autofix (traceback saved, its path printed), 130 interrupted. Every command
body runs inside :func:`boundary`, the one place that maps exceptions to exit codes
(through :func:`autofix.errors.classify_error`, which batch workers use per script).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from autofix.batch import BatchOptions, Row, batch_json, batch_markdown, run_batch
from autofix.engine import Options, repair
from autofix.errors import (
    EXIT_CRASH,
    EXIT_FIXED,
    EXIT_GAVE_UP,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    classify_error,
)
from autofix.registry import all_recipes
from autofix.report import ConsoleObserver, error_report, print_summary, write_report
from autofix.runner import LAUNCHERS, default_python
from autofix.sandbox import Sandbox, isolation
from autofix.types import SessionResult, Status

__all__ = ["EXIT_CRASH", "EXIT_FIXED", "EXIT_GAVE_UP", "EXIT_INTERRUPTED", "EXIT_USAGE", "app",
           "boundary", "exit_code"]


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
         "error, 3 a bug in autofix (traceback log path printed), 130 interrupted.",
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
    launcher: Annotated[str | None, typer.Option(
        help="Start the script with torchrun or accelerate (launch), on --nproc-per-node "
             "processes; the probe runs in every rank.")] = None,
    nproc_per_node: Annotated[int, typer.Option(
        help="Processes per node for --launcher.", min=1)] = 1,
) -> None:
    """Repair SCRIPT on a branch; your files, index and current branch stay untouched."""
    console, err = _consoles(report)
    if launcher is not None and launcher not in LAUNCHERS:
        err.print(f"[bold red]error:[/bold red] --launcher is one of {', '.join(LAUNCHERS)}")
        raise typer.Exit(EXIT_USAGE)
    options = Options(
        script=script, python=python or default_python(), args=tuple(script_args or ()),
        branch=branch, timeout=timeout or None, max_steps=0 if full else max_steps,
        max_iterations=max_iterations, resume=resume, init=init,
        launcher=launcher or "", nproc_per_node=nproc_per_node,
    )
    observer = ConsoleObserver(console, script.name)
    with boundary(err, report, observer.close):
        result = repair(options, observer)
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


@contextlib.contextmanager
def boundary(err: Console, report: Path | None = None,
             cleanup: Any = None) -> Iterator[None]:
    """The error boundary around a command body: an exception that escapes it ends
    autofix with the code :func:`autofix.errors.classify_error` gives (2 usage or
    environment, 130 Ctrl-C, 3 a bug, its traceback saved and the log path printed);
    the message goes to stderr and, with ``--report``, into the report. ``cleanup`` (a
    callable) runs first (stops a spinner)."""
    try:
        yield
    except (typer.Exit, typer.Abort, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - this is the boundary
        if cleanup is not None:
            cleanup()
        verdict = classify_error(exc)
        label = "interrupted" if verdict.code == EXIT_INTERRUPTED else "error"
        err.print(f"[bold red]{label}:[/bold red] {escape(verdict.message)}")
        if verdict.hint:
            err.print(f"  hint: {escape(verdict.hint)}")
        document = error_report(verdict.message)
        document["interrupted"] = verdict.code == EXIT_INTERRUPTED
        if verdict.log is not None:
            document["log"] = str(verdict.log)
        with contextlib.suppress(typer.Exit):
            _write(report, document, err)
        raise typer.Exit(verdict.code) from None


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
    on_ray = any(r.nodes for r in rows)
    table = Table("script", "status", "run", "fixes", "last", "seconds",
                  *(["node"] if on_ray else []))
    for row in rows:
        style = {"fixed": "green", "clean": "green", "gave_up": "yellow", "error": "red",
                 "interrupted": "red", "running": "cyan"}.get(row.status, "dim")
        table.add_row(row.path, f"[{style}]{row.status}[/{style}]", str(row.run or ""),
                      str(row.fixes), escape(row.error or row.note), f"{row.seconds:.0f}",
                      *([" > ".join(row.nodes)] if on_ray else []))
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
    backend: Annotated[str, typer.Option(
        help="thread (this machine) or ray (one Ray task per script).")] = "thread",
    address: Annotated[str | None, typer.Option(
        help="Ray cluster: auto (the running one) or HOST:PORT; default: a local Ray.")
    ] = None,
    cpus_per_script: Annotated[float, typer.Option(
        help="Ray: CPUs declared per script.", min=0.01)] = 1.0,
    memory_mb: Annotated[int, typer.Option(
        help="Memory per script in MiB: declared to Ray; the address-space limit under "
             "--sandbox.", min=64)] = 4096,
    max_retries: Annotated[int, typer.Option(
        help="Ray: reruns of a task whose node or worker died.", min=0)] = 3,
    ship: Annotated[str, typer.Option(
        help="Ray: how the work tree reaches workers: auto, shared (same filesystem) or "
             "upload (runtime_env working_dir).")] = "auto",
    max_upload_mb: Annotated[int, typer.Option(
        help="Ray: largest work tree uploaded as working_dir (MiB).", min=1)] = 100,
    sandbox: Annotated[bool, typer.Option(
        "--sandbox", help="Untrusted scripts: credentials scrubbed from the environment, "
                          "memory/CPU/process limits, no network, a throwaway copy.")
    ] = False,
    pass_env: Annotated[list[str] | None, typer.Option(
        help="--sandbox: keep this variable although it looks like a credential "
             "(repeatable).")] = None,
    cpu_seconds: Annotated[int, typer.Option(
        help="--sandbox: CPU seconds per run.", min=1)] = 3600,
    max_processes: Annotated[int, typer.Option(
        help="--sandbox: processes (and threads) per run.", min=8)] = 512,
) -> None:
    """Repair many scripts and notebooks, each on its own branch from the same HEAD."""
    console, err = _consoles(report)
    if backend not in ("thread", "ray") or ship not in ("auto", "shared", "upload"):
        err.print("[bold red]error:[/bold red] --backend is thread or ray; --ship is auto, "
                  "shared or upload")
        raise typer.Exit(EXIT_USAGE)
    template = Options(script=Path("."), python=python or default_python(),
                       timeout=timeout or None, max_steps=max_steps,
                       max_iterations=max_iterations)
    limits = Sandbox(memory_mb=memory_mb, cpu_seconds=cpu_seconds,
                     max_processes=max_processes, pass_env=tuple(pass_env or ())) \
        if sandbox else None
    ray_options = None
    if backend == "ray":
        try:
            from autofix.raybatch import RayOptions
        except ImportError:
            err.print("[bold red]error:[/bold red] --backend ray needs Ray: "
                      "pip install 'autofix[ray]'")
            raise typer.Exit(EXIT_USAGE) from None
        ray_options = RayOptions(address=address, cpus=cpus_per_script, memory_mb=memory_mb,
                                 max_retries=max_retries, ship=ship,
                                 max_upload_mb=max_upload_mb)
    if limits is not None:
        shown = ", ".join(f"{k}: {v}" for k, v in isolation().items())
        err.print(f"sandbox: {escape(shown)}")
    cancel = threading.Event()
    rows: list[Row] = []
    with boundary(err, None, cancel.set):
        with Live(console=console, refresh_per_second=4, transient=False) as live:
            def changed(current: list[Row]) -> None:
                rows[:] = current
                live.update(_rows_table(current))

            result_rows = run_batch(BatchOptions(paths, jobs, branch_prefix, template,
                                                 backend, limits, ray_options),
                                    changed, cancel)
    console.print(_rows_table(result_rows))
    if report is not None:
        document = batch_json(result_rows)
        if limits is not None:
            document["sandbox"] = isolation()
        _write(report, document, err)
        markdown = report.with_suffix(".md")
        markdown.write_text(batch_markdown(result_rows), encoding="utf-8")
        console.print(f"reports: {report}, {markdown}")
    ok = all(r.status in ("fixed", "clean") for r in result_rows)
    codes = {r.code for r in result_rows}
    gave_up = any(r.status in ("gave_up", "interrupted") for r in result_rows)
    raise typer.Exit(EXIT_FIXED if ok else EXIT_CRASH if EXIT_CRASH in codes
                     else EXIT_GAVE_UP if gave_up or not codes - {0} else EXIT_USAGE)


def recipes_table() -> Table:
    """The recipe listing shown by ``autofix recipes`` (generated from the classes)."""
    table = Table("recipe", "category", "what it does", "module")
    for recipe in all_recipes():
        table.add_row(recipe.id, recipe.category, recipe.title, recipe.__module__)
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
    """List the fix recipes autofix knows."""
    if markdown:
        typer.echo(recipes_markdown(), nl=False)
    else:
        Console().print(recipes_table())


def main() -> None:  # pragma: no cover - console-script entry
    app()
