"""What the checks of data and evaluation invariants share: where in the user's code a
value was seen, and the one event that reports a broken invariant.

The checks (:mod:`loss_inputs`, :mod:`metric_inputs`, :mod:`label_maps`,
:mod:`split_rows`, :mod:`label_masks`) run inside the user's interpreter on the real
objects of the run (the tensor a loss gets, the predictions a metric compares, the
mappings each split was encoded with, the rows of the training and evaluation data, a
batch's labels and attention mask). Each broken invariant is sent once per place as an
``invariant`` event (:data:`contract.Event.INVARIANT`): its category id, the evidence line
a person reads, the user's file, line and function where it showed, and the measurements
a recipe needs (``facts``). The parent reads it as a run finding and keeps the event under
``facts["invariants"]`` for the recipes. Standard library only.
"""

from __future__ import annotations

import linecache
import sys
from typing import Any

from .contract import Event
from .events import State, emit
from .numeric import is_user_file as _is_user_file


class Sent:
    """The invariant events sent in this run: (kind, file, line) (reset per process)."""

    keys: set[tuple[str, str, int]] = set()


_USER: dict[str, bool] = {}


def is_user_file(name: str) -> bool:
    """:func:`numeric.is_user_file`, remembered per file name (the probes that wrap hot
    library calls ask it on every call)."""
    known = _USER.get(name)
    if known is None:
        known = _USER[name] = _is_user_file(name)
    return known


def user_frame(skip: int = 2) -> Any:
    """The innermost frame (from ``skip`` frames up) whose file is the user's
    (:func:`numeric.is_user_file`), or ``None``."""
    try:
        frame: Any = sys._getframe(skip)
    except ValueError:
        return None
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None


def caller_is_user(depth: int = 2) -> Any:
    """The frame ``depth`` up from the caller of this function when it is the user's
    (the library call was made directly from the user's code), else ``None``."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return None
    return frame if is_user_file(frame.f_code.co_filename) else None


def where(frame: Any) -> dict[str, Any]:
    """``file``, ``line``, ``function`` and the line's ``text`` of ``frame`` (empty values
    for ``None``); the text is the patched source's line (the bootstrap caches it)."""
    if frame is None:
        return {"file": "", "line": 0, "function": "", "text": ""}
    file, line = frame.f_code.co_filename, frame.f_lineno
    return {"file": file, "line": line, "function": frame.f_code.co_name,
            "text": linecache.getline(file, line).strip()[:200]}


def report(kind: str, evidence: str, place: dict[str, Any],
           facts: dict[str, Any] | None = None) -> bool:
    """Send one ``invariant`` event for ``kind`` at ``place`` (:func:`where`), once per
    (kind, file, line); returns whether it was sent now."""
    key = (kind, str(place.get("file", "")), int(place.get("line", 0) or 0))
    if key in Sent.keys:
        return False
    Sent.keys.add(key)
    emit(Event.INVARIANT, kind=kind, step=State.steps, evidence=evidence, **place,
         facts=facts or {})
    return True


def seen(kind: str) -> bool:
    """An ``invariant`` event of ``kind`` was sent in this run."""
    return any(k == kind for k, _, _ in Sent.keys)
