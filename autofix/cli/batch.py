"""``autofix batch PATHS...``: many scripts and notebooks, each on its own branch, with a
live table on a terminal and one line per change elsewhere."""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from autofix.batch.jobs import Row
from autofix.batch.local import BatchOptions, run_batch
from autofix.cli.boundary import boundary, consoles, usage_error, write_document
from autofix.cli.options import (
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
    make_settings,
)
from autofix.errors import EXIT_CRASH, EXIT_FIXED, EXIT_GAVE_UP, EXIT_USAGE
from autofix.reports.batch import batch_json, batch_markdown
from autofix.run.sandbox import Sandbox, isolation
from autofix.settings import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_MAX_STEPS,
    DEFAULT_SAMPLE_ROWS,
    DEFAULT_TIMEOUT,
)


def rows_table(rows: list[Row], width: int = 120) -> Table:
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


def batch(
    paths: Annotated[list[str], typer.Argument(
        help="Scripts, notebooks, folders (searched recursively) or globs.")],
    jobs: Annotated[int, typer.Option(
        help="Scripts repaired at once (default: the number of cores).", min=1)
    ] = os.cpu_count() or 1,
    branch_prefix: Annotated[str, typer.Option(
        help="Each script's branch is this prefix + its path in the repo.")] = "autofix/",
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
    report: Annotated[Path | None, typer.Option(
        "--report", metavar="PATH",
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
    console, err = consoles(report)
    if backend not in ("thread", "ray") or ship not in ("auto", "shared", "upload"):
        raise usage_error(err, "--backend is thread or ray; --ship is auto, shared or upload")
    limits = Sandbox(memory_mb=memory_mb, cpu_seconds=cpu_seconds,
                     max_processes=max_processes, pass_env=tuple(pass_env or ())) \
        if sandbox else None
    settings = dataclasses.replace(make_settings(
        err, python=python, timeout=timeout, max_steps=max_steps, full=full,
        max_iterations=max_iterations, dry_run=dry_run, only=only, skip=skip,
        launcher=launcher, nproc_per_node=nproc_per_node, sample_rows=sample_rows,
        one_at_a_time=one_at_a_time), sandbox=limits)
    ray_options = None
    if backend == "ray":
        try:
            from autofix.batch.ray_backend import RayOptions
        except ImportError:
            raise usage_error(err, "--backend ray needs Ray: pip install 'autofix[ray]'") \
                from None
        ray_options = RayOptions(address=address, cpus=cpus_per_script, memory_mb=memory_mb,
                                 max_retries=max_retries, ship=ship,
                                 max_upload_mb=max_upload_mb)
    if limits is not None:
        shown = ", ".join(f"{k}: {v}" for k, v in isolation().items())
        err.print(f"sandbox: {escape(shown)}")
    cancel = threading.Event()
    rows: list[Row] = []
    options = BatchOptions(paths, jobs, branch_prefix, settings, backend, ray_options)
    with boundary(err, None, cancel.set):
        if console.is_terminal:  # a live table; the final one is printed once, below
            with Live(console=console, refresh_per_second=2, transient=True,
                      get_renderable=lambda: rows_table(rows, console.width)):
                def changed(current: list[Row]) -> None:
                    rows[:] = current

                result_rows = run_batch(options, changed, cancel)
        else:
            result_rows = run_batch(options, _RowLines(console), cancel)
    console.print(rows_table(result_rows, console.width))
    if report is not None:
        document = batch_json(result_rows)
        if limits is not None:
            document["sandbox"] = isolation()
        write_document(report, document, err)
        markdown = report.with_suffix(".md")
        markdown.write_text(batch_markdown(result_rows), encoding="utf-8")
        console.print(f"reports: {report}, {markdown}")
    ok = all(r.status in ("fixed", "clean") for r in result_rows)
    codes = {r.code for r in result_rows}
    gave_up = any(r.status in ("gave_up", "interrupted") for r in result_rows)
    raise typer.Exit(EXIT_FIXED if ok else EXIT_CRASH if EXIT_CRASH in codes
                     else EXIT_GAVE_UP if gave_up or not codes - {0} else EXIT_USAGE)


