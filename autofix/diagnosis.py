"""Sorts a failed run into a fault category (:mod:`autofix.categories`)."""

from __future__ import annotations

from pathlib import Path

from autofix.categories import CATEGORIES, TIMEOUT, UNKNOWN, Category
from autofix.traceback_text import parse_traceback
from autofix.types import Diagnosis, ExceptionInfo, Frame, RunOutcome, RunResult

_STDIN_HINT = (
    "the script reads standard input, which autofix closes; pass values as arguments "
    "(autofix SCRIPT -- ARGS) or environment variables"
)


def classify(exc: ExceptionInfo) -> Category:
    """The first category whose patterns match ``exc`` or an exception it was chained from.

    The exception itself is tried against every category before its chain, so a wrapper's
    own message wins over its cause's. Returns :data:`UNKNOWN` when nothing matches.
    """
    for candidate in (exc, *exc.chain):
        for category in CATEGORIES:
            if category.matches(candidate.short_type, candidate.message):
                return category
    return UNKNOWN


def user_frame(exc: ExceptionInfo, script: Path) -> Frame | None:
    """The innermost frame inside the user's script, or ``None`` when it never appears."""
    target = str(script)
    for frame in reversed(exc.frames):
        if frame.file == target:
            return frame
    for inner in exc.chain:
        found = user_frame(inner, script)
        if found is not None:
            return found
    return None


def key_lines(exc: ExceptionInfo, script: Path, limit: int = 6) -> tuple[str, ...]:
    """The traceback lines a person reads first: the script's frames, the innermost
    library frame, then the error line."""
    lines = [
        f"{Path(f.file).name}:{f.line} in {f.function}: {f.text}".rstrip(": ")
        for f in exc.frames
        if f.file == str(script)
    ][-(limit - 2):]
    if exc.frames and exc.frames[-1].file != str(script):
        last = exc.frames[-1]
        lines.append(f"{last.file}:{last.line} in {last.function}: {last.text}".rstrip(": "))
    lines.append(exc.headline())
    return tuple(lines)


def exception_of(run: RunResult) -> ExceptionInfo | None:
    """The run's exception: the probe's report, else parsed from the output tail."""
    return run.probe.exception or parse_traceback(run.output_tail)


def diagnose(run: RunResult, script: Path) -> Diagnosis:
    """Diagnose a run that did not succeed.

    ``script`` is the absolute path the child ran as (frames are matched against it).
    A timeout gives ``timeout``; an exception its category; anything else ``unknown``
    with the last output line as evidence. Never raises for odd output.
    """
    if run.outcome is RunOutcome.TIMEOUT:
        return Diagnosis(
            category=TIMEOUT.id,
            evidence=f"killed after {run.seconds:.0f} s; last output: {run.last_line[:200]}",
            hint=TIMEOUT.hint,
        )
    exc = exception_of(run)
    if exc is None:
        return Diagnosis(
            category=UNKNOWN.id,
            evidence=f"exit code {run.returncode}; last output: {run.last_line[:200]}",
            hint=UNKNOWN.hint,
        )
    category = classify(exc)
    frame = user_frame(exc, script)
    hint = category.hint
    if exc.short_type == "EOFError" and any(f.function == "<module>" or "input" in f.text
                                            for f in exc.frames):
        hint = _STDIN_HINT
    return Diagnosis(
        category=category.id,
        evidence=exc.headline()[:300],
        file=str(script) if frame else "",
        line=frame.line if frame else 0,
        line_text=frame.text if frame else "",
        details=key_lines(exc, script),
        hint=hint,
    )
