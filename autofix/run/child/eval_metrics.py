"""The script's own evaluation results (``Trainer.evaluate``, or the evaluation during
training), sent to autofix so that a report shows what the verifying run measured.

Standard library only. The probe's own early evaluation (a few rows before training, to
exercise ``compute_metrics``) is not the script's and is not recorded: it runs with the
Trainer's callbacks emptied (``early.quiet``), so ``on_evaluate`` does not see it.
"""

from __future__ import annotations

import math
from typing import Any

from .contract import Event
from .events import emit

#: Most metrics sent per evaluation (a script can log many; a report shows the first).
MAX_METRICS = 40


def numbers(metrics: Any) -> dict[str, float]:
    """The finite numeric entries of ``metrics`` (a mapping, e.g. ``{"eval_loss": 0.52,
    "eval_accuracy": 0.81, "epoch": 1.0}``), at most :data:`MAX_METRICS`; anything else
    (strings, lists, NaN) is left out."""
    out: dict[str, float] = {}
    if not hasattr(metrics, "items"):
        return out
    for key, value in metrics.items():
        if isinstance(value, bool):
            continue
        number: float
        if isinstance(value, (int, float)):
            number = float(value)
        else:
            try:
                number = float(value.item())  # a 0-d tensor or numpy scalar
            except Exception:  # noqa: BLE001 - not a number
                continue
        if math.isfinite(number) and len(out) < MAX_METRICS:
            out[str(key)] = number
    return out


def record(step: int, metrics: Any) -> None:
    """Emit one ``eval_metrics`` event (nothing when no entry is a number)."""
    found = numbers(metrics)
    if found:
        emit(Event.EVAL_METRICS, step=int(step or 0), metrics=found)
