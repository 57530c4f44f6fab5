"""Errors and the one error boundary (pre-commit's ``error_handler``).

Exit codes: 0 fixed or nothing to fix, 1 could not fix (a finished session that gave up),
2 usage or environment error (:class:`AutofixError` and its subclasses), 130 Ctrl-C, 3 an
unexpected error: a bug in autofix, whose traceback is saved to a log file whose path is
printed. :func:`classify_error` is the single place that maps an exception to a code; the
CLI (``fix``, ``batch``) and each batch worker go through it.
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

EXIT_FIXED, EXIT_GAVE_UP, EXIT_USAGE, EXIT_CRASH, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class AutofixError(Exception):
    """A usage or environment problem: bad path, not a git repo, bad --python, branch exists.

    ``hint`` is a one-line suggestion shown under the message; ``exit_code`` the
    process exit code the boundary uses (2).
    """

    exit_code = EXIT_USAGE

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class GitError(AutofixError):
    """A git command failed (GitPython's ``GitCommandError`` never leaves :mod:`autofix.vcs`)."""


def log_dir() -> Path:
    """Where crash logs go: ``$AUTOFIX_LOG_DIR``, else ``$XDG_CACHE_HOME/autofix``, else
    ``~/.cache/autofix`` (as pre-commit's ``~/.cache/pre-commit/pre-commit.log``); the
    system temporary directory when none can be created."""
    env = os.environ.get("AUTOFIX_LOG_DIR")
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME")
                                      or Path.home() / ".cache") / "autofix"
    try:
        base.mkdir(parents=True, exist_ok=True)
        return base
    except OSError:
        return Path(tempfile.gettempdir())


def save_traceback(text: str | BaseException, what: str = "crash") -> Path:
    """Write ``text`` (or the formatted traceback of an exception) to a new log file and
    return its path; never raises (the path names the file even if writing failed)."""
    if isinstance(text, BaseException):
        text = "".join(traceback.format_exception(text))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = log_dir() / f"autofix-{what}-{stamp}-{os.getpid()}.log"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError:
        pass
    return path


@dataclass(frozen=True)
class ErrorVerdict:
    """How the boundary ends for one exception: ``code``, the ``message`` to print, a
    ``hint`` and, for a crash, the saved traceback ``log``."""

    code: int
    message: str
    hint: str = ""
    log: Path | None = None

    @property
    def status(self) -> str:
        """The report status for it: ``interrupted`` or ``error``."""
        return "interrupted" if self.code == EXIT_INTERRUPTED else "error"


def classify_error(exc: BaseException) -> ErrorVerdict:
    """Map an exception that escaped a session to an :class:`ErrorVerdict`:
    :class:`AutofixError` -> its ``exit_code`` (2), ``KeyboardInterrupt`` -> 130, anything
    else -> 3 with the traceback saved (the message names the log file)."""
    if isinstance(exc, AutofixError):
        return ErrorVerdict(exc.exit_code, str(exc), exc.hint)
    if isinstance(exc, KeyboardInterrupt):
        return ErrorVerdict(EXIT_INTERRUPTED, "interrupted by the user; each branch holds "
                                              "the fixes committed so far")
    log = save_traceback(exc)
    return ErrorVerdict(EXIT_CRASH, f"autofix crashed (a bug in autofix): "
                                    f"{type(exc).__name__}: {exc}",
                        f"the traceback is saved in {log}; please report it", log)
