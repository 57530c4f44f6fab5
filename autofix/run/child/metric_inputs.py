"""Metric inputs that are not class ids of the labels' shape (``metric-on-flat-argmax``).

A metric compares one predicted class id per labelled row with that row's label. An
``argmax()`` without a dimension over a 2-D logits tensor returns one flat index into the
whole matrix, and ``argmax(dim=0)`` one row index per class; compared with the labels by
``==`` they broadcast, and the accuracy is a number that means nothing, with no error.
Two checks, on the run's real values:

* every ``argmax`` the user's code calls directly (``Tensor.argmax``, ``torch.argmax``,
  ``numpy.argmax``) on a value of 2 or more dimensions with more than one row: without a
  dimension (a flat index), or along axis 0 of a 2-D value whose width is the logits'
  width the loss saw (``chance.Task.width``) and differs from its row count (one index
  per class, not per row). A line that unravels the index (``unravel_index``,
  ``divmod``, ``//``, ``%``) is left alone: there a flat index is meant.
* ``Trainer``'s ``compute_metrics`` is called once more, after its first real call, on
  predictions that are right on every row (logits of the real predictions' shape whose
  argmax along the class axis is each row's label; for multi-hot labels, positive where
  the label is 1); every score it returns whose name says accuracy, F1, precision,
  recall or Matthews correlation must then be 1. One under 1 says the function does not
  compare per-row class ids with the labels (an argmax without ``axis=-1``, over the batch
  axis, or none). The extra call's printed output is swallowed.

Each fault is one ``invariant`` event at the argmax's line (or the ``compute_metrics``
``def``), with the call's form, dimension and input shape for the recipe
(``argmax-last-axis``).
"""

from __future__ import annotations

import contextlib
import io
import re
import types
from typing import Any

from . import chance
from .invariants import Sent, caller_is_user, is_user_file, report, where

KIND = "metric-on-flat-argmax"
#: A line that turns a flat index back into coordinates: a flat argmax is meant there.
UNRAVELS = re.compile(r"unravel_index|divmod|//|%")
#: Score names that a perfect prediction brings to 1 (case-insensitive search).
SCORES = re.compile(r"acc|f1|precision|recall|matthews|mcc|exact", re.I)
#: A perfect prediction's score must be at least this (float rounding).
PERFECT = 0.999


class Seen:
    """What the checks did in this run (reset per process)."""

    metrics_checked = False


def _dims(value: Any) -> tuple[int, ...]:
    shape = getattr(value, "shape", None)
    try:
        return tuple(int(s) for s in shape) if shape is not None else ()
    except TypeError:
        return ()


def _flat_or_batch_axis(value: Any, dim: Any) -> str:
    """"flat" or "batch axis" when an argmax of ``value`` along ``dim`` (None: no
    dimension) gives no class id per row (module docstring), else ""."""
    shape = _dims(value)
    if len(shape) < 2 or shape[0] < 2:
        return ""
    if dim is None:
        return "flat"
    if isinstance(dim, int) and len(shape) == 2 and dim in (0, -2) \
            and shape[1] == chance.Task.width and shape[0] != shape[1]:
        return "batch axis"
    return ""


def check_argmax(form: str, value: Any, dim: Any, frame: Any) -> None:
    """Report an argmax of ``value`` along ``dim`` called as ``form`` ("tensor" method,
    "torch" or "numpy" function) from the user's ``frame`` when it gives no class id per
    row."""
    what = _flat_or_batch_axis(value, dim)
    if not what:
        return
    place = where(frame)
    if UNRAVELS.search(place["text"]):
        return
    shape = list(_dims(value))
    name = str(place["file"]).rsplit("/", 1)[-1]
    result = "one flat index into the whole matrix" if what == "flat" else \
        f"one row index per class ({shape[1]} values for {shape[0]} rows)"
    report(KIND, f"argmax at {name}:{place['line']} (`{place['text']}`) over a value of "
                 f"shape {shape} {'without a dimension' if what == 'flat' else 'along axis 0'}"
                 f" gives {result}, not one class id per row: compared with the labels it "
                 "broadcasts and the metric is meaningless (take argmax(dim=-1))",
           place, {"form": form, "dim": dim, "shape": shape, "what": what})


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], names: tuple[str, ...],
         position: int) -> Any:
    for name in names:
        if name in kwargs:
            return kwargs[name]
    return args[position] if len(args) > position else None


def _wrap_method(original: Any) -> Any:
    def argmax(self: Any, *args: Any, **kwargs: Any) -> Any:
        frame = caller_is_user()
        if frame is not None:
            try:
                check_argmax("tensor", self, _arg(args, kwargs, ("dim",), 0), frame)
            except Exception:  # noqa: BLE001 - the probe must never break the script
                pass
        return original(self, *args, **kwargs)

    argmax._autofix_argmax = True  # type: ignore[attr-defined]
    argmax.__wrapped__ = original  # type: ignore[attr-defined]
    argmax.__doc__ = getattr(original, "__doc__", None)
    return argmax


def _wrap_function(form: str, original: Any, names: tuple[str, ...]) -> Any:
    def argmax(value: Any, *args: Any, **kwargs: Any) -> Any:
        frame = caller_is_user()
        if frame is not None:
            try:
                check_argmax(form, value, _arg(args, kwargs, names, 0), frame)
            except Exception:  # noqa: BLE001 - the probe must never break the script
                pass
        return original(value, *args, **kwargs)

    argmax._autofix_argmax = True  # type: ignore[attr-defined]
    argmax.__wrapped__ = original  # type: ignore[attr-defined]
    argmax.__name__ = "argmax"
    argmax.__doc__ = getattr(original, "__doc__", None)
    return argmax


def patch_torch(module: types.ModuleType) -> None:
    """``torch``: ``Tensor.argmax`` and ``torch.argmax`` called from the user's code."""
    tensor_cls = getattr(module, "Tensor", None)
    method = getattr(tensor_cls, "argmax", None)
    if method is not None and not getattr(method, "_autofix_argmax", False):
        tensor_cls.argmax = _wrap_method(method)  # type: ignore[union-attr]
    function = getattr(module, "argmax", None)
    if function is not None and not getattr(function, "_autofix_argmax", False):
        module.argmax = _wrap_function("torch", function, ("dim",))  # type: ignore[attr-defined]


def patch_numpy(module: types.ModuleType) -> None:
    """``numpy``: ``numpy.argmax`` called from the user's code (an array's own
    ``.argmax`` method is C code and cannot be wrapped)."""
    function = getattr(module, "argmax", None)
    if function is not None and not getattr(function, "_autofix_argmax", False):
        module.argmax = _wrap_function("numpy", function, ("axis",))  # type: ignore[attr-defined]


# --- Trainer's compute_metrics ---------------------------------------------------------


def perfect_predictions(predictions: Any, labels: Any) -> Any:
    """Logits shaped like ``predictions`` (a float numpy array) that are right on every
    row of ``labels``: +4 at each row's class and -4 elsewhere (class ids one axis shorter,
    -100 left at 0), or +4/-4 by a multi-hot label of the same shape. ``None`` when the
    shapes or values are not a classifier's."""
    import numpy as np

    preds, ys = np.asarray(predictions), np.asarray(labels)
    if preds.dtype.kind != "f" or ys.dtype.kind not in "iub" and not (
            ys.dtype.kind == "f" and np.all(np.mod(ys, 1) == 0)):
        return None
    if preds.shape == ys.shape and preds.ndim >= 2:  # multi-hot rows
        if not np.isin(ys, (0, 1)).all():
            return None
        return np.where(ys > 0, 4.0, -4.0).astype(preds.dtype)
    if preds.ndim != ys.ndim + 1 or preds.shape[:-1] != ys.shape or preds.shape[-1] < 2:
        return None
    ids = ys.astype(np.int64)
    kept = ids != -100
    if not kept.any() or ids[kept].min() < 0 or ids[kept].max() >= preds.shape[-1]:
        return None
    out = np.full(preds.shape, -4.0, dtype=preds.dtype)
    index = np.nonzero(kept)
    out[(*index, ids[kept])] = 4.0
    return out


def _scores(metrics: Any) -> dict[str, float]:
    """The scores of a metrics dict that a perfect prediction brings to 1."""
    if not isinstance(metrics, dict):
        return {}
    out = {}
    for key, value in metrics.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        if SCORES.search(str(key)) and 0.0 <= number <= 1.0:
            out[str(key)] = number
    return out


def check_metrics(compute_metrics: Any, given: Any, real: Any) -> None:
    """Call ``compute_metrics`` on perfect predictions built from ``given`` (the
    ``EvalPrediction`` of its real call, whose result was ``real``) and report a score
    under :data:`PERFECT` (module docstring)."""
    scores = _scores(real)
    code = getattr(compute_metrics, "__code__", None)
    if not scores or code is None or not is_user_file(code.co_filename):
        return
    predictions, labels = getattr(given, "predictions", None), getattr(given, "label_ids", None)
    if labels is None or isinstance(labels, (tuple, list)):
        return
    first = predictions[0] if isinstance(predictions, tuple) and predictions else predictions
    perfect = perfect_predictions(first, labels)
    if perfect is None:
        return
    new_predictions = (perfect, *predictions[1:]) if isinstance(predictions, tuple) else perfect
    fields = {k: getattr(given, k) for k in ("inputs", "losses") if hasattr(given, k)}
    with contextlib.redirect_stdout(io.StringIO()):
        got = _scores(compute_metrics(type(given)(predictions=new_predictions,
                                                  label_ids=labels, **fields)))
    wrong = {k: v for k, v in got.items() if k in scores and v < PERFECT}
    lines = [line for _, _, line in code.co_lines() if line is not None]
    if not wrong or any(kind == KIND and file == code.co_filename and line in lines
                        for kind, file, line in Sent.keys):
        return  # an argmax inside it was named already
    import linecache

    line = code.co_firstlineno
    place = {"file": code.co_filename, "line": line, "function": code.co_name,
             "text": linecache.getline(code.co_filename, line).strip()[:200]}
    shown = ", ".join(f"{k} {v:.3f}" for k, v in wrong.items())
    report(KIND, f"{code.co_name}() returns {shown} for predictions that are right on every "
                 f"row (logits of shape {list(perfect.shape)} whose argmax along the last "
                 "axis is each row's label), where a correct metric gives 1: it does not "
                 "compare one class id per row with the labels (an argmax without axis=-1, "
                 "or over the batch axis)",
           place, {"form": "compute_metrics", "metrics": {k: [scores[k], v]
                                                           for k, v in wrong.items()},
                   "shape": list(perfect.shape)})


def checked(compute_metrics: Any) -> Any:
    """``compute_metrics`` that runs :func:`check_metrics` after its first real call
    (never for ``batch_eval_metrics``' per-batch calls)."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = compute_metrics(*args, **kwargs)
        if not Seen.metrics_checked and len(args) == 1 and not kwargs:
            Seen.metrics_checked = True
            try:
                check_metrics(compute_metrics, args[0], result)
            except Exception:  # noqa: BLE001 - the user's function refused our values
                pass
        return result

    wrapper._autofix_metrics = True  # type: ignore[attr-defined]
    wrapper.__wrapped__ = compute_metrics  # type: ignore[attr-defined]
    return wrapper


def patch_trainer(module: types.ModuleType) -> None:
    """``transformers.trainer``: each ``Trainer``'s ``compute_metrics`` is :func:`checked`."""
    trainer_cls = getattr(module, "Trainer", None)
    original = getattr(trainer_cls, "__init__", None)
    if original is None or getattr(original, "_autofix_metrics", False):
        return

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        metrics = getattr(self, "compute_metrics", None)
        if callable(metrics) and not getattr(metrics, "_autofix_metrics", False):
            self.compute_metrics = checked(metrics)

    __init__._autofix_metrics = True  # type: ignore[attr-defined]
    setattr(trainer_cls, "__init__", __init__)  # noqa: B010 - a class we do not own
