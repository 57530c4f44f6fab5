"""``autofix batch PATHS...``: many scripts and notebooks, each on its own branch, with a
live table on a terminal and one line per change elsewhere."""

from __future__ import annotations

import dataclasses
import enum
import os
import threading
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from autofix.batch.jobs import Row
from autofix.batch.local import BatchOptions, run_batch
from autofix.cli.boundary import boundary, consoles, usage_error
from autofix.cli.fix import command_line
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
    PythonOption,
    SampleRowsOption,
    SkipOption,
    TimeoutOption,
    WarmOption,
    make_settings,
)
from autofix.errors import EXIT_CRASH, EXIT_FIXED, EXIT_GAVE_UP, EXIT_USAGE, AutofixError
from autofix.reports.batch import row_label, write_batch_reports
from autofix.reports.terminal import print_table
from autofix.run.sandbox import INSTALL_HINT, isolation, not_isolated, require_isolation
from autofix.settings import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_MAX_STEPS,
    DEFAULT_SAMPLE_ROWS,
    DEFAULT_TIMEOUT,
    Sandbox,
)
from autofix.words import plural


def rows_table(rows: list[Row], width: int = 120, live: bool = True) -> Table:
    """The batch table for a ``width``-column console; seconds tick while a script runs.
    ``live`` (the table redrawn while the batch runs): a long last line is cut with an
    ellipsis, never wrapped, so every row stays one line; the final table wraps it."""
    on_ray = any(r.nodes for r in rows)
    table = Table()
    script_width = max((len(r.path) for r in rows), default=6)
    table.add_column("script", no_wrap=True)
    for name in ("status", "run", "fixes"):
        table.add_column(name, no_wrap=True)
    if live:
        table.add_column("last", no_wrap=True)
    else:
        table.add_column("last", min_width=20, ratio=1, overflow="fold")
    table.add_column("seconds", justify="right", no_wrap=True)
    if on_ray:
        table.add_column("node", no_wrap=True)
    room = max(10, width - script_width - len("interrupted") - 3 - 5 - 7 - 19)
    for row in rows:
        style = {"fixed": "green", "clean": "green", "gave_up": "yellow", "findings": "yellow",
                 "error": "red", "interrupted": "red", "running": "cyan"}.get(row.status, "dim")
        last = row.error or row.note
        table.add_row(row.path, f"[{style}]{row_label(row)}[/{style}]", str(row.run or ""),
                      str(row.fixes), escape(_cut(last, room) if live else last.strip()),
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
                self.console.print(f"{row.path}: {what}" + (f" ({plural(row.fixes, 'fix')})"
                                                            if row.fixes else ""))


Backend = enum.Enum("Backend", {"thread": "thread", "ray": "ray"}, type=str)
Ship = enum.Enum("Ship", {n: n for n in ("auto", "shared", "upload")}, type=str)  # type: ignore[misc]


#: ``--jobs``'s default: the machine's cores.
CORES = os.cpu_count() or 1

PathsArgument = Annotated[list[str], typer.Argument(
    metavar="PATHS...", help="Scripts, notebooks, folders (searched recursively) or globs.",
    show_default=False)]
JobsOption = Annotated[int, typer.Option(
    metavar="N", help="Scripts repaired at once (default: the number of cores).", min=1)]
BranchPrefixOption = Annotated[str, typer.Option(
    metavar="PREFIX", help="Each script's branch is this prefix + its path in the repo.")]
ReportOption = Annotated[Path | None, typer.Option(
    "--report", metavar="PATH",
    help="Write the batch report: .html (a page for people) or .md, with the JSON for "
         "tools next to it (.json); any other name is the JSON, with a .md next to it.")]
BackendOption = Annotated[Backend, typer.Option(
    case_sensitive=False, help="thread (this machine) or ray (one Ray task per script).")]
AddressOption = Annotated[str | None, typer.Option(
    metavar="ADDRESS",
    help="Ray cluster: auto (the running one) or HOST:PORT; default: a local Ray.")]
CpusOption = Annotated[float, typer.Option(
    metavar="N", help="Ray: CPUs declared per script.", min=0.01)]
MemoryOption = Annotated[int, typer.Option(
    metavar="MIB", help="Memory per script in MiB: declared to Ray; the address-space "
                        "limit under --sandbox.", min=64)]
RetriesOption = Annotated[int, typer.Option(
    metavar="N", help="Ray: reruns of a task whose node or worker died.", min=0)]
ShipOption = Annotated[Ship, typer.Option(
    case_sensitive=False,
    help="Ray: how the work tree reaches workers: auto, shared (same filesystem) or "
         "upload (runtime_env working_dir).")]
UploadOption = Annotated[int, typer.Option(
    metavar="MIB", help="Ray: largest work tree uploaded as working_dir (MiB).", min=1)]
SandboxOption = Annotated[bool, typer.Option(
    "--sandbox", help="Untrusted scripts: each run sees only its throwaway copy, the "
                      "training environment and a private /tmp (bubblewrap), no network, "
                      "credentials scrubbed from the environment, memory/CPU/process "
                      "limits.")]
RequireIsolationOption = Annotated[bool, typer.Option(
    "--require-isolation", help="--sandbox, and refuse to run (exit 2) where bubblewrap "
                                "cannot isolate the runs' files, network and processes.")]
PassEnvOption = Annotated[list[str] | None, typer.Option(
    metavar="NAME", help="--sandbox: keep this variable although it looks like a "
                         "credential (repeatable).")]
CpuSecondsOption = Annotated[int, typer.Option(
    metavar="SECONDS", help="--sandbox: CPU seconds per run.", min=1)]
ProcessesOption = Annotated[int, typer.Option(
    metavar="N", help="--sandbox: processes (and threads) per run.", min=8)]


def batch(
    paths: PathsArgument,
    jobs: JobsOption = CORES,
    branch_prefix: BranchPrefixOption = "autofix/",
    python: PythonOption = None,
    timeout: TimeoutOption = DEFAULT_TIMEOUT,
    max_steps: MaxStepsOption = DEFAULT_MAX_STEPS,
    full: FullOption = False,
    max_iterations: MaxIterationsOption = DEFAULT_MAX_ITERATIONS,
    dry_run: DryRunOption = False,
    only: OnlyOption = None,
    skip: SkipOption = None,
    launcher: LauncherOption = None,
    nproc_per_node: NprocOption = 1,
    sample_rows: SampleRowsOption = DEFAULT_SAMPLE_ROWS,
    one_at_a_time: OneAtATimeOption = False,
    clean_tree: CleanTreeOption = False,
    warm: WarmOption = None,
    report: ReportOption = None,
    backend: BackendOption = Backend.thread,
    address: AddressOption = None,
    cpus_per_script: CpusOption = 1.0,
    memory_mb: MemoryOption = 4096,
    max_retries: RetriesOption = 3,
    ship: ShipOption = Ship.auto,  # type: ignore[attr-defined]
    max_upload_mb: UploadOption = 100,
    sandbox: SandboxOption = False,
    pass_env: PassEnvOption = None,
    cpu_seconds: CpuSecondsOption = 3600,
    max_processes: ProcessesOption = 512,
    require_isolation_: RequireIsolationOption = False,
) -> None:
    """Repair many scripts and notebooks, each on its own branch from the same HEAD.

    Every script runs in the folder you call autofix from, as in single mode: relative
    data paths are looked up from there.
    """
    console, err = consoles(report)
    limits = Sandbox(memory_mb=memory_mb, cpu_seconds=cpu_seconds,
                     max_processes=max_processes, pass_env=tuple(pass_env or ()),
                     require_isolation=require_isolation_) \
        if sandbox or require_isolation_ else None
    settings = dataclasses.replace(make_settings(
        err, python=python, timeout=timeout, max_steps=max_steps, full=full,
        max_iterations=max_iterations, dry_run=dry_run, only=only, skip=skip,
        launcher=launcher, nproc_per_node=nproc_per_node, sample_rows=sample_rows,
        one_at_a_time=one_at_a_time, clean_tree=clean_tree, warm=warm), sandbox=limits)
    ray_options = None
    if backend.value == "ray":
        try:
            from autofix.batch.ray_backend import RayOptions
        except ImportError:
            raise usage_error(err, "--backend ray needs Ray: pip install 'autofix[ray]'") \
                from None
        ray_options = RayOptions(address=address, cpus=cpus_per_script, memory_mb=memory_mb,
                                 max_retries=max_retries, ship=ship.value,
                                 max_upload_mb=max_upload_mb)
    if limits is not None:
        print_isolation(err, limits)
    started = time.monotonic()
    cancel = threading.Event()
    rows: list[Row] = []
    options = BatchOptions(paths, jobs, branch_prefix, settings, backend.value, ray_options)
    with boundary(err, None, cancel.set):
        if console.is_terminal:  # a live table; the final one is printed once, below
            with Live(console=console, refresh_per_second=2, transient=True,
                      get_renderable=lambda: rows_table(rows, console.width)):
                def changed(current: list[Row]) -> None:
                    rows[:] = current

                result_rows = run_batch(options, changed, cancel)
        else:
            result_rows = run_batch(options, _RowLines(console), cancel)
    print_table(console, rows_table(result_rows, console.width, live=False))
    if limits is not None:
        console.print(f"isolation: {escape(isolation_summary(result_rows))}")
    if report is not None:
        try:
            written = write_batch_reports(report, result_rows, command_line(),
                                          time.monotonic() - started,
                                          isolation() if limits is not None else None)
        except OSError as exc:
            raise usage_error(err, f"cannot write --report {report}: {exc}") from None
        console.print("reports: " + ", ".join(str(p) for p in written))
    raise typer.Exit(exit_code(result_rows))


def print_isolation(err: Console, limits: Sandbox) -> None:
    """Before a sandboxed batch: what isolates its runs here, one ``sandbox:`` line, and
    what does not, with how to get it; exit 2 instead when ``--require-isolation`` asks for
    what is missing."""
    if limits.require_isolation:
        try:
            require_isolation()
        except AutofixError as exc:
            raise usage_error(err, str(exc), exc.hint) from None
    shown = ", ".join(f"{k}: {v}" for k, v in isolation().items())
    err.print(f"sandbox: {escape(shown)}")
    missing = not_isolated()
    if missing:
        tool = isolation()["isolation"]
        why = tool[len("none: "):] if tool.startswith("none: ") else "see above"
        err.print(f"[yellow]warning:[/yellow] not isolated here: {', '.join(missing)} "
                  f"({escape(why)}); {escape(INSTALL_HINT)}; --require-isolation refuses "
                  f"to run without it")


def isolation_summary(rows: list[Row]) -> str:
    """What isolated the batch's runs, for the line after its table: the tool each row's
    runs had (``bubblewrap 0.8.0 for all 5 scripts``), one phrase per kind met."""
    kinds: dict[str, int] = {}
    for row in rows:
        tool = row.isolation.get("isolation", "not started")
        kinds[tool] = kinds.get(tool, 0) + 1
    if len(kinds) == 1:
        tool, n = next(iter(kinds.items()))
        return f"{tool} for {'all ' if n > 1 else ''}{plural(n, 'script')}"
    return "; ".join(f"{tool} for {plural(n, 'script')}" for tool, n in kinds.items())


def exit_code(rows: list[Row]) -> int:
    """The batch's exit code from its rows: 0 when every script was fixed or clean, else 3
    when a row crashed autofix, else 1 when one gave up or was interrupted or no row ended
    by an error (``Row.code`` 0), else 2 (a row's usage or environment error)."""
    ok = all(r.status in ("fixed", "clean") for r in rows)
    codes = {r.code for r in rows}
    gave_up = any(r.status in ("gave_up", "findings", "interrupted") for r in rows)
    return EXIT_FIXED if ok else EXIT_CRASH if EXIT_CRASH in codes \
        else EXIT_GAVE_UP if gave_up or not codes - {0} else EXIT_USAGE


