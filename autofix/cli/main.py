"""The ``autofix`` command line (typer): a thin layer over :func:`autofix.loop.engine.repair`.

Exit codes: 0 fixed or nothing to fix, 1 could not fix, 2 usage or environment error,
3 a bug in autofix (traceback saved, its path printed), 130 interrupted. Every command
body runs inside :func:`boundary`, the one place that maps exceptions to exit codes
(through :func:`autofix.errors.classify_error`, which batch workers use per script).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import shlex
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
from typer.core import TyperCommand, TyperGroup

try:  # typer >= 0.20 vendors click; older versions use the click package
    from typer._click import Context
    from typer._click.exceptions import NoSuchOption, UsageError
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import Context  # type: ignore[assignment]
    from click.exceptions import NoSuchOption, UsageError  # type: ignore[assignment]

from autofix.batch.local import BatchOptions, Row, batch_json, batch_markdown, run_batch
from autofix.cli import branches as cli_branches
from autofix.errors import (
    EXIT_CRASH,
    EXIT_FIXED,
    EXIT_GAVE_UP,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    classify_error,
)
from autofix.loop.engine import Options, repair
from autofix.reports.formats import error_json, write_session_report
from autofix.reports.terminal import ConsoleObserver, print_summary, write_report
from autofix.run.runner import LAUNCHERS, default_python
from autofix.run.sandbox import Sandbox, isolation
from autofix.toolkit.discovery import all_recipes, origin, plugins
from autofix.types import SessionResult, Status

__all__ = ["EXIT_CRASH", "EXIT_FIXED", "EXIT_GAVE_UP", "EXIT_INTERRUPTED", "EXIT_USAGE", "app",
           "boundary", "exit_code"]


class _DefaultToFix(TyperGroup):
    """Lets ``autofix train.py ...`` mean ``autofix fix train.py ...``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # click.Context
        own = {opt for param in self.get_params(ctx) for opt in param.opts}
        if args and args[0] not in self.commands and args[0].split("=", 1)[0] not in own:
            args = ["fix", *args]
        return super().parse_args(ctx, args)


class _FixCommand(TyperCommand):
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


def exit_code(result: SessionResult) -> int:
    """The process exit code for a finished session."""
    if result.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FIXED if result.status in (Status.FIXED, Status.CLEAN) else EXIT_GAVE_UP


@app.command("fix", cls=_FixCommand)
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
        help="Write a report of the runs, fixes (with diffs) and loss curves: .html or .md "
             "for people, otherwise JSON (schema: autofix/reports/report.schema.json).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Run and diagnose as usual, print every fix as a diff with its "
                          "evidence, but commit nothing and write no branch.")] = False,
    only: Annotated[list[str] | None, typer.Option(
        "--only", metavar="RECIPE", help="Apply only this recipe (repeatable; ids from "
                                         "`autofix recipes`).")] = None,
    skip: Annotated[list[str] | None, typer.Option(
        "--skip", metavar="RECIPE", help="Never apply this recipe (repeatable).")] = None,
    launcher: Annotated[str | None, typer.Option(
        help="Start the script with torchrun or accelerate (launch), on --nproc-per-node "
             "processes; the probe runs in every rank.")] = None,
    nproc_per_node: Annotated[int, typer.Option(
        help="Processes per node for --launcher.", min=1)] = 1,
    sample_rows: Annotated[int, typer.Option(
        help="Diagnosis runs cut each dataset split the script loads to this many evenly "
             "spread rows (0: off); the last run uses the data as loaded.", min=0)] = 2000,
    one_at_a_time: Annotated[bool, typer.Option(
        "--one-at-a-time", help="One fault per run: no API check before the first run and "
                                "no preflight checks at train().")] = False,
) -> None:
    """Repair SCRIPT on a branch; your files, index and current branch stay untouched.

    The script runs in the folder you call autofix from (as `python SCRIPT` would), in
    single and batch mode alike: relative data paths are looked up from there.
    """
    console, err = _consoles(report)
    _check_recipe_ids(err, (only or []) + (skip or []))
    if launcher is not None and launcher not in LAUNCHERS:
        err.print(f"[bold red]error:[/bold red] --launcher is one of {', '.join(LAUNCHERS)}")
        raise typer.Exit(EXIT_USAGE)
    options = Options(
        script=script, python=python or default_python(), args=tuple(script_args or ()),
        branch=branch, timeout=timeout or None, max_steps=0 if full else max_steps,
        max_iterations=max_iterations, resume=resume, init=init, dry_run=dry_run,
        only=tuple(only or ()), skip=tuple(skip or ()),
        launcher=launcher or "", nproc_per_node=nproc_per_node,
        sample_rows=sample_rows, one_at_a_time=one_at_a_time,
    )
    for problem in plugins().problems:  # a broken plugin is reported, never fatal
        err.print(f"[yellow]warning:[/yellow] {escape(problem)}")
    observer = ConsoleObserver(console, script.name, options.max_steps)
    with boundary(err, report, observer.close):
        result = repair(options, observer)
    observer.close()
    print_summary(console, result)
    if report is not None:
        try:
            written = write_session_report(report, result)
        except OSError as exc:
            err.print(f"[bold red]error:[/bold red] cannot write --report {report}: {exc}")
            raise typer.Exit(EXIT_USAGE) from None
        console.print("report: " + ", ".join(str(p) for p in written))
    raise typer.Exit(exit_code(result))


def _check_recipe_ids(err: Console, ids: list[str]) -> None:
    """Exit 2 for a ``--only``/``--skip`` id that names no recipe."""
    known = {r.id for r in all_recipes()}
    unknown = [i for i in ids if i not in known]
    if unknown:
        err.print(f"[bold red]error:[/bold red] unknown recipe(s): {', '.join(unknown)}")
        err.print("  hint: `autofix recipes` lists the recipe ids")
        raise typer.Exit(EXIT_USAGE)


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
        if report is not None and report.suffix.lower() in (".html", ".htm", ".md"):
            with contextlib.suppress(OSError):
                write_session_report(report, SessionResult(Status.ERROR, "", verdict.message,
                                                           interrupted=verdict.code ==
                                                           EXIT_INTERRUPTED))
        else:
            document = error_json(verdict.message)
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


def _write_error(path: Path | None, message: str, err: Console) -> None:
    """The report of a session stopped before its first run, in the format ``path`` asks."""
    if path is not None and path.suffix.lower() in (".html", ".htm", ".md"):
        try:
            write_session_report(path, SessionResult(Status.ERROR, "", message))
        except OSError:
            pass
        return
    _write(path, error_json(message), err)


def _write(path: Path | None, document: dict[str, Any], err: Console) -> None:
    if path is None:
        return
    try:
        write_report(path, document)
    except OSError as exc:
        err.print(f"[bold red]error:[/bold red] cannot write --report {path}: {exc}")
        raise typer.Exit(EXIT_USAGE) from None


def _rows_table(rows: list[Row], width: int = 120) -> Table:
    """The batch table for a ``width``-column console; seconds tick while a script runs,
    a long last line is cut with an ellipsis instead of wrapping inside the table."""
    on_ray = any(r.nodes for r in rows)
    table = Table()
    script_width = max((len(r.path) for r in rows), default=6)
    table.add_column("script", no_wrap=True)
    for name in ("status", "run", "fixes"):
        table.add_column(name, no_wrap=True)
    table.add_column("last", no_wrap=True)
    table.add_column("seconds", justify="right", no_wrap=True)
    if on_ray:
        table.add_column("node", no_wrap=True)
    room = max(10, width - script_width - len("interrupted") - 3 - 5 - 7 - 19)
    for row in rows:
        style = {"fixed": "green", "clean": "green", "gave_up": "yellow", "error": "red",
                 "interrupted": "red", "running": "cyan"}.get(row.status, "dim")
        table.add_row(row.path, f"[{style}]{row.status}[/{style}]", str(row.run or ""),
                      str(row.fixes), escape(_cut(row.error or row.note, room)),
                      f"{row.elapsed():.0f}", *([" > ".join(row.nodes)] if on_ray else []))
    return table


def _cut(text: str, room: int) -> str:
    """The first line of ``text``, cut to ``room`` characters with an ellipsis."""
    line = text.splitlines()[0] if text.strip() else ""
    return line if len(line) <= room else line[:room - 1] + "…"


class _RowLines:
    """Batch progress off a terminal: one line when a row's status or run changes."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.seen: dict[str, tuple[str, int]] = {}

    def __call__(self, rows: list[Row]) -> None:
        for row in rows:
            key = (row.status, row.run)
            if self.seen.get(row.path) != key and row.status != "waiting":
                self.seen[row.path] = key
                what = f"run {row.run}" if row.status == "running" else row.status
                self.console.print(f"{row.path}: {what}" + (f" ({row.fixes} fixes)"
                                                            if row.fixes else ""))


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
    """Repair many scripts and notebooks, each on its own branch from the same HEAD.

    Every script runs in the folder you call autofix from, as in single mode: relative
    data paths are looked up from there.
    """
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
            from autofix.batch.ray_backend import RayOptions
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
    options = BatchOptions(paths, jobs, branch_prefix, template, backend, limits, ray_options)
    with boundary(err, None, cancel.set):
        if console.is_terminal:  # a live table; the final one is printed once, below
            with Live(console=console, refresh_per_second=2, transient=True,
                      get_renderable=lambda: _rows_table(rows, console.width)):
                def changed(current: list[Row]) -> None:
                    rows[:] = current

                result_rows = run_batch(options, changed, cancel)
        else:
            result_rows = run_batch(options, _RowLines(console), cancel)
    console.print(_rows_table(result_rows, console.width))
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


def recipes_table(width: int = 200) -> Table:
    """The recipe listing shown by ``autofix recipes`` (generated from the classes) for a
    ``width``-column console: ids and categories are never wrapped or cut, the description
    wraps, and the module column is left out when it would not fit on one line."""
    found = all_recipes()
    ids = max(len(r.id) for r in found)
    cats = max(len(r.category) for r in found)
    modules = max(len(r.__module__) for r in found)
    with_module = ids + cats + modules + 30 + 13 + 12 <= width
    table = Table()
    table.add_column("recipe", no_wrap=True, min_width=ids)
    table.add_column("category", no_wrap=True, min_width=cats)
    table.add_column("what it does")
    if with_module:
        table.add_column("module", no_wrap=True, min_width=modules)
    table.add_column("origin", no_wrap=True)
    for recipe in found:
        table.add_row(recipe.id, recipe.category, recipe.title,
                      *([recipe.__module__] if with_module else []), origin(recipe))
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
        console = Console()
        console.print(recipes_table(console.width))


cli_branches.register(app)


def main() -> None:  # pragma: no cover - console-script entry
    app()
