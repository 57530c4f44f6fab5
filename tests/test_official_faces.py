"""Faces of the official scripts' faults that only the facts at the failure tell apart:
numpy's and sklearn's generic errors are ``metric-on-logits`` only when a frame holds
scores beside the class ids they are compared with."""

from __future__ import annotations

from typing import Any

from autofix.loop.diagnosis import classify
from autofix.types import ExceptionInfo, Frame, FrameFacts


def _array(dtype: str, *shape: int, **stats: Any) -> dict[str, Any]:
    return {"kind": "array", "dtype": dtype, "shape": list(shape), **stats}


def _failure(message: str, exc_type: str, values: dict[str, dict[str, Any]],
             function: str = "compute_metrics") -> ExceptionInfo:
    frames = (Frame("/u/run_ner.py", 530, function, "true_predictions = [...]"),)
    facts = (FrameFacts("/u/run_ner.py", 530, function, True, values),) if values else ()
    return ExceptionInfo(exc_type, message, frames, (), facts)


TOKEN_LOGITS = {"predictions": _array("float32", 8, 32, 5, integral=False),
                "labels": _array("int64", 8, 32, min=0, max=4)}


def test_numpy_index_error_is_the_metric_on_token_logits_only_with_the_facts() -> None:
    message = "only integer scalar arrays can be converted to a scalar index"
    assert classify(_failure(message, "builtins.TypeError", TOKEN_LOGITS)).id \
        == "metric-on-logits"
    ids = {"predictions": _array("int64", 8, 32, min=0, max=4),
           "labels": _array("int64", 8, 32, min=0, max=4)}
    assert classify(_failure(message, "builtins.TypeError", ids)).id == "unknown"
    assert classify(_failure(message, "builtins.TypeError", {})).id == "unknown"


def test_binary_accuracy_on_logits_needs_scores_beside_the_labels() -> None:
    message = ("Classification metrics can't handle a mix of binary and continuous-multioutput "
               "targets")
    logits = {"y_pred": _array("float32", 64, 2, integral=False),
              "y_true": _array("int64", 64, min=0, max=1)}
    assert classify(_failure(message, "builtins.ValueError", logits, "_check_targets")).id \
        == "metric-on-logits"
    probabilities = {"y_pred": _array("float32", 64, 2, integral=False),
                     "y_true": _array("float32", 64, 2, integral=True)}  # multi-label
    assert classify(_failure(message, "builtins.ValueError", probabilities,
                             "_check_targets")).id == "unknown"


def test_the_course_faces_keep_matching_without_facts() -> None:
    message = "Classification metrics can't handle a mix of multiclass and " \
              "continuous-multioutput targets"
    assert classify(_failure(message, "builtins.ValueError", {})).id == "metric-on-logits"
