"""Preflight checks at ``Trainer.train()`` (issue 10): every fault one run can see.

Runs inside the child (standard library only at import; ``torch`` and ``datasets`` are the
child's own, imported when a check runs). Before the first optimizer step it does what the
course's checklist (chapter 8, "Debugging the training pipeline") does by hand, each check
on the real objects and independent of the others:

1. ``collate``: one batch of the training set through the Trainer's own dataloader and
   collator (ragged rows, string labels);
2. ``forward``: that batch through the model and the Trainer's loss, gradients off (raw
   text reaching the model, dtype mismatches);
3. ``collate-tokenized``: when the training set reaching the model is not the one the script
   tokenized, one batch of the tokenized version of the same split (the result of
   ``Dataset.map`` on it) through the same collator: the padding fault that the raw-dataset
   fault hides until it is fixed;
4. ``labels``: the labels of the whole split against the head (``num_labels``), through the
   real loss (``cross_entropy`` on the largest label).

Each failing check emits a ``finding`` event holding the exception the run would raise
(type, message, frames, chain). The checks never change the Trainer: the dataloader is
rebuilt by training, the model is put back in training mode.
"""

from __future__ import annotations

import os
import traceback
import weakref
from typing import Any

from . import sampling
from .events import emit

ENABLED = os.environ.get("AUTOFIX_PREFLIGHT", "0") == "1"
#: Rows of the tokenized split collated by check 3 (a Trainer's default batch size is 8).
SIBLING_ROWS = 8


class _Mapped:
    """``Dataset.map`` results by the fingerprint of the dataset they were mapped from."""

    results: dict[str, Any] = {}


def patch_map(module: Any) -> None:
    """Record every ``Dataset.map`` result under its source's fingerprint (weakly)."""
    dataset_cls = getattr(module, "Dataset", None)
    if not ENABLED or dataset_cls is None or getattr(dataset_cls.map, "_autofix", False):
        return
    original = dataset_cls.map

    def map(self: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - the method's name
        result = original(self, *args, **kwargs)
        try:
            source = getattr(self, "_fingerprint", None)
            if source and result is not self:
                _Mapped.results[source] = weakref.ref(result)
        except Exception:  # noqa: BLE001 - the probe must never break the script
            pass
        return result

    map._autofix = True  # type: ignore[attr-defined]
    dataset_cls.map = map


def _describe(exc: BaseException, check: str, depth: int = 0) -> dict[str, Any]:
    frames = [{"file": f.filename, "line": f.lineno or 0, "function": f.name,
               "text": f.line or ""} for f in traceback.extract_tb(exc.__traceback__)]
    inner = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    kind = type(exc)
    return {"check": check, "type": f"{kind.__module__}.{kind.__qualname__}",
            "message": str(exc), "frames": frames,
            "chain": [_describe(inner, check, depth + 1)] if inner is not None and depth < 5
            else []}


def _tokenized_sibling(dataset: Any) -> Any:
    """The last ``Dataset.map`` result derived from ``dataset`` (``None``: not mapped)."""
    found, seen = None, set()
    key = getattr(dataset, "_fingerprint", None)
    while key and key not in seen and key in _Mapped.results:
        seen.add(key)
        result = _Mapped.results[key]()
        if result is None:
            break
        found, key = result, getattr(result, "_fingerprint", None)
    return found


def _first_batch(trainer: Any) -> Any:
    return next(iter(trainer.get_train_dataloader()))


def _forward(trainer: Any, batch: Any) -> None:
    import torch

    model = trainer.model
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            trainer.compute_loss(model, trainer._prepare_inputs(batch))
    finally:
        model.train(was_training)


def _collate_sibling(trainer: Any, sibling: Any) -> None:
    rows = sibling.select(range(min(len(sibling), SIBLING_ROWS)))
    if getattr(trainer.args, "remove_unused_columns", True):
        rows = trainer._remove_unused_columns(rows, description="training")
    trainer.data_collator([rows[i] for i in range(len(rows))])


def _labels_against_head(trainer: Any, dataset: Any) -> None:
    import torch

    config = getattr(trainer.model, "config", None)
    num_labels = getattr(config, "num_labels", None)
    if not isinstance(num_labels, int) or num_labels < 2 or \
            getattr(config, "problem_type", None) not in (None, "single_label_classification"):
        return
    column = next((c for c in ("labels", "label") if c in (dataset.column_names or [])), "")
    if not column:
        return
    values = [v for v in dataset.unique(column) if isinstance(v, int) and v != -100]
    whole = sampling.full_label_max(column)  # the split before --sample-rows cut it
    if isinstance(whole, (int, float)) and float(whole).is_integer():
        values.append(int(whole))
    if values and max(values) >= num_labels:
        torch.nn.functional.cross_entropy(torch.zeros(1, num_labels),
                                          torch.tensor([max(values)]))


def run_checks(trainer: Any) -> list[Exception]:
    """Every check on ``trainer``; returns the exceptions found, in check order (each also
    emitted as a ``finding`` event)."""
    findings: list[dict[str, Any]] = []
    errors: list[Exception] = []

    def attempt(check: str, action: Any, *args: Any) -> bool:
        try:
            action(*args)
            return True
        except Exception as exc:  # noqa: BLE001 - each failure is a finding
            findings.append(_describe(exc, check))
            errors.append(exc)
            return False

    dataset = trainer.train_dataset
    if dataset is None or not hasattr(dataset, "column_names"):
        return errors
    batch: list[Any] = []
    if attempt("collate", lambda: batch.append(_first_batch(trainer))):
        attempt("forward", _forward, trainer, batch[0])
    sibling = _tokenized_sibling(dataset)
    if findings and sibling is not None and sibling is not dataset:
        attempt("collate-tokenized", _collate_sibling, trainer, sibling)
    attempt("labels", _labels_against_head, trainer, dataset)
    for finding in findings:
        emit("finding", **finding)
    return errors
