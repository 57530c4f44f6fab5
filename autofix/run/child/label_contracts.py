"""Contracts between the labels and the head, checked at ``Trainer.train()`` before the
first step (from :func:`preflight.run_checks`; the first also at a hand loop's first
``DataLoader`` iteration, from ``preflight.loop_checks``), for faults that raise nothing
and train wrongly:

- ``binary-single-output-head``: integer labels that are exactly {0, 1} on a 1-output
  sequence-classification head whose ``problem_type`` the script did not set to
  ``"regression"``: transformers then fits an MSE regression to the class ids.
- ``token-labels-misaligned``: a token-classification model whose training rows hold
  ``labels`` lists of another length than their ``input_ids`` (word-level tags that were
  never aligned to the sub-word tokens; ``DataCollatorForTokenClassification`` pads them
  with -100 and every tag lands on the wrong token), checked row by row before collation.

Each failing contract is a ``preflight_fault`` event (check, category, evidence); the run
goes on as the script would. Runs inside the child: standard library only; the dataset is
read through its own methods. Never raises.
"""

from __future__ import annotations

from typing import Any

from .contract import Event
from .events import emit

#: Rows compared for the token-label alignment (the start of the split).
ALIGN_ROWS = 32
#: The ignore index of torch's and transformers' losses.
IGNORE_INDEX = -100


def _label_column(dataset: Any) -> str:
    columns = getattr(dataset, "column_names", None) or []
    return next((c for c in ("labels", "label") if c in columns), "")


def binary_on_one_output(trainer: Any) -> str:
    """The evidence of a ``binary-single-output-head`` fault on ``trainer`` ("" when the
    contract holds or cannot be checked): :func:`binary_head_labels` on its model and
    training split."""
    return binary_head_labels(getattr(trainer, "model", None),
                              getattr(trainer, "train_dataset", None))


def binary_head_labels(model: Any, dataset: Any, declared: Any = "") -> str:
    """The evidence of a ``binary-single-output-head`` fault: ``model`` (a
    ``*ForSequenceClassification`` with ``config.num_labels == 1`` and no
    ``problem_type="regression"`` set) trained on ``dataset`` (a ``datasets.Dataset``)
    whose label column holds exactly the ints 0 and 1. ``declared``: the
    ``problem_type`` the script gave the model, read just before its first forward (that
    forward sets a ``None`` one to "regression" for a 1-output head); "": the config's as
    it is now. "" when the contract holds or cannot be checked. Shared by
    ``Trainer.train()`` and a hand loop's first ``DataLoader`` iteration
    (``preflight.loop_checks``)."""
    config = getattr(model, "config", None)
    problem = getattr(config, "problem_type", None) if declared == "" else declared
    if getattr(config, "num_labels", None) != 1 or problem == "regression" or \
            not type(model).__name__.endswith("ForSequenceClassification") or \
            not hasattr(dataset, "unique"):
        return ""
    column = _label_column(dataset)
    if not column:
        return ""
    values = [v for v in dataset.unique(column) if v is not None]
    if sorted(values) != [0, 1] or not all(type(v) is int for v in values):
        return ""
    return (f"{type(model).__name__} has num_labels=1 and the labels of column {column!r} "
            "are the class ids 0 and 1: a 1-output head trains an MSE regression on them "
            "(problem_type becomes 'regression'); binary classification is num_labels=2")


def misaligned_token_labels(trainer: Any) -> str:
    """The evidence of a ``token-labels-misaligned`` fault on ``trainer`` ("" when the rows
    are aligned or the contract does not apply)."""
    model = getattr(trainer, "model", None)
    dataset: Any = getattr(trainer, "train_dataset", None)
    if not type(model).__name__.endswith("ForTokenClassification") or \
            not hasattr(dataset, "select") or \
            not {"input_ids", "labels"} <= set(getattr(dataset, "column_names", None) or []):
        return ""
    rows = dataset.select(range(min(len(dataset), ALIGN_ROWS)))
    pairs = [(labels, ids) for labels, ids in zip(rows["labels"], rows["input_ids"],
                                                   strict=False)
             if isinstance(labels, list) and isinstance(ids, list)]
    bad = [i for i, (labels, ids) in enumerate(pairs) if len(labels) != len(ids)]
    if not pairs or len(bad) * 2 <= len(pairs):
        return ""
    first = bad[0]
    labels, ids = pairs[first]
    return (f"the labels of {len(bad)} of the first {len(pairs)} training rows are not as long "
            f"as their input_ids (row {first}: {len(labels)} labels for {len(ids)} tokens): "
            "word-level tags used as sub-word labels; the collator pads them with -100, so each "
            "tag sits on the wrong token")


#: check name -> (category, the check)
CHECKS = (("labels-binary-head", "binary-single-output-head", binary_on_one_output),
          ("labels-aligned", "token-labels-misaligned", misaligned_token_labels))


def _emit_failing(name: str, category: str, contract: Any, *args: Any) -> int:
    """Run one contract on ``args``; emit a ``preflight_fault`` event when it fails.
    Returns 1 when it failed, else 0. Never raises."""
    try:
        evidence = contract(*args)
    except Exception:  # noqa: BLE001 - a contract that cannot be read finds nothing
        evidence = ""
    if evidence:
        emit(Event.PREFLIGHT_FAULT, check=name, category=category, evidence=evidence)
    return 1 if evidence else 0


def check_loop(model: Any, dataset: Any, declared: Any = "") -> int:
    """The contracts that apply to a hand loop training ``model`` on ``dataset``:
    :func:`binary_head_labels` (``declared``: the ``problem_type`` the script gave the
    model, read before its first forward). Emits a ``preflight_fault`` event when it fails;
    returns how many failed (0 or 1). Never raises."""
    return _emit_failing("labels-binary-head", "binary-single-output-head",
                         binary_head_labels, model, dataset, declared)


def check(trainer: Any) -> int:
    """Run every contract on ``trainer`` (before any forward: a forward sets the head's
    ``problem_type``); emit a ``preflight_fault`` event per failing one. Returns how many
    failed."""
    return sum(_emit_failing(name, category, contract, trainer)
               for name, category, contract in CHECKS)
