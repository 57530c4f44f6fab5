"""The one error boundary every command body runs inside, and what it shares: the
consoles, the exit codes, and writing a ``--report`` document.

Exit codes (:mod:`autofix.errors`): 0 fixed or nothing to fix, 1 could not fix, 2 usage
or environment error, 3 a bug in autofix (traceback saved, its path printed), 130
interrupted. :func:`boundary` maps every exception that escapes a command to one of them
through :func:`autofix.errors.classify_error`, which batch workers use per script too.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from autofix.errors import EXIT_FIXED, EXIT_GAVE_UP, EXIT_INTERRUPTED, EXIT_USAGE, classify_error
from autofix.reports.formats import error_json, write_session_report
from autofix.reports.terminal import print_hint, write_report
from autofix.types import SessionResult, Status


def exit_code(result: SessionResult) -> int:
    """The process exit code for a finished session."""
    if result.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FIXED if result.status in (Status.FIXED, Status.CLEAN) else EXIT_GAVE_UP


def consoles(report: Path | None = None) -> tuple[Console, Console]:
    """Stdout and stderr consoles, after checking ``--report`` and making SIGTERM/SIGHUP
    (closing the terminal, a CI timeout) end autofix like Ctrl-C, children killed first."""
    console, err = output_console(), error_console()
    problem = report_problem(report)
    if problem:
        err.print(f"[bold red]error:[/bold red] --report {report}: {problem}")
        raise typer.Exit(EXIT_USAGE)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    # A shell starts background jobs with SIGINT ignored, and Python then installs no
    # KeyboardInterrupt handler: restore it, so Ctrl-C always kills the child cleanly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return console, err


def output_console() -> Console:
    """Stdout: lines are never hard-wrapped (a pipe or a log keeps one line per event;
    a terminal folds what is longer than it)."""
    return Console(highlight=False, soft_wrap=True)


def error_console() -> Console:
    """Stderr: errors and hints wrapped to the terminal on a terminal, one line each in a
    pipe or a log (never hard-wrapped at 80 columns there)."""
    err = Console(stderr=True, highlight=False)
    err.soft_wrap = not err.is_terminal
    return err


def usage_error(err: Console, message: str, hint: str = "") -> typer.Exit:
    """Print ``message`` (and ``hint``) as a usage error; returns the exit to raise (2)."""
    err.print(f"[bold red]error:[/bold red] {escape(message)}")
    if hint:
        print_hint(err, hint)
    return typer.Exit(EXIT_USAGE)


@contextlib.contextmanager
def boundary(err: Console, report: Path | None = None,
             cleanup: Callable[[], Any] | None = None) -> Iterator[None]:
    """The error boundary around a command body: an exception that escapes it ends
    autofix with the code :func:`autofix.errors.classify_error` gives (2 usage or
    environment, 130 Ctrl-C, 3 a bug, its traceback saved and the log path printed);
    the message goes to stderr and, with ``--report``, into the report. ``cleanup`` runs
    first (stops a spinner)."""
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
            print_hint(err, verdict.hint)
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
                write_document(report, document, err)
        raise typer.Exit(verdict.code) from None


def report_problem(path: Path | None) -> str:
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


def write_document(path: Path | None, document: dict[str, Any], err: Console) -> None:
    """Write a JSON ``--report`` document (nothing when ``path`` is ``None``); exit 2 when
    it cannot be written."""
    if path is None:
        return
    try:
        write_report(path, document)
    except OSError as exc:
        raise usage_error(err, f"cannot write --report {path}: {exc}") from None
