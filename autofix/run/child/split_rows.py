"""Rows that are in both the training and the evaluation data (``eval-rows-in-training``).

A held-out score means something only on rows the model never trained on. A split made
twice with different seeds, an evaluation set cut from the training set, or training on
the concatenation of the training and test rows all give an evaluation that scores
memorised rows: the metric is too good and nothing raises.

Checked on the data the run really uses, by row identity (a hash of each row's bytes: the
inputs of a ``TensorDataset``, a tensor or array, the non-label columns of a
``datasets.Dataset``, the first item of a map-style dataset's rows; a ``Subset`` of the
same dataset by its indices):

* ``Trainer.train()``: its ``train_dataset`` against each ``eval_dataset``;
* a hand loop: the training ``DataLoader``'s dataset (the one whose batch the first
  optimizer step trained on) against each ``DataLoader`` iterated with gradients off
  (an evaluation) over another dataset object, unless the name the user's code binds that
  loader to says training (``train...``: a deliberate training score).

A scaler fitted on every row is the same leak seen from the statistics' side
(``stats-before-split``, which the source reading finds in the script; this finds it in
any of the user's modules): a scikit-learn scaler (``StandardScaler``, ``MinMaxScaler``,
``RobustScaler``, ``MaxAbsScaler``) whose ``transform`` is later given two sets of rows
that are both among the rows it was fitted on and share almost none (under
:data:`DISJOINT`): a training and an evaluation part, both of which its statistics saw.

A fault needs at least :data:`MIN_ROWS` evaluation rows read, :data:`SHARE` of them found
among the training rows, and rows that are unique within each side (at most
:data:`DUPLICATES` duplicated): data whose rows repeat by construction (templated
sentences) can share rows by chance, independent draws of distinct rows cannot. Up to
:data:`MAX_ROWS` rows are read per side (a larger training set can only lower the share
found, never raise it).
"""

from __future__ import annotations

import types
from typing import Any

from .events import State
from .invariants import report, user_frame, where

KIND = "eval-rows-in-training"
MIN_ROWS = 20
SHARE = 0.5
DUPLICATES = 0.05
MAX_ROWS = 20000
#: Rows read through a map-style dataset's ``__getitem__`` (it may tokenize each row).
MAX_ITEMS = 2000
#: Two parts of a scaler's fitted rows share at most this share of the smaller one.
DISJOINT = 0.1
#: Scikit-learn's scalers, whose ``fit`` sees the rows their statistics come from.
SCALERS = ("StandardScaler", "MinMaxScaler", "RobustScaler", "MaxAbsScaler")
LABEL_COLUMNS = frozenset({"label", "labels", "label_ids", "idx", "id", "index",
                           "__index_level_0__"})


class Seen:
    """What the check has seen in this run (reset per process)."""

    train: Any = None  # the training dataset of a hand loop
    pending: list[tuple[Any, dict[str, Any], str]] = []  # eval data seen before it
    compared: set[int] = set()


def _tensor_rows(value: Any) -> list[bytes]:
    data = value.detach().cpu() if hasattr(value, "detach") else value
    import numpy as np

    array = np.ascontiguousarray(np.asarray(data)[:MAX_ROWS])
    if array.ndim == 0 or array.shape[0] == 0:
        return []
    flat = array.reshape(array.shape[0], -1)
    return [row.tobytes() for row in flat]


def _dataset_rows(data: Any) -> list[bytes]:
    columns = [c for c in data.column_names if c not in LABEL_COLUMNS]
    if not columns:
        return []
    part = data.select_columns(columns).select(range(min(len(data), MAX_ROWS)))
    return [repr(row).encode() for row in zip(*(part[c] for c in columns), strict=True)]


def row_keys(data: Any) -> tuple[str, list[bytes]]:
    """How ``data``'s rows are identified and their keys: ("indices", ...) for a
    ``Subset`` (its base dataset's identity is the first key), else ("rows", row bytes)."""
    if type(data).__name__ == "Subset" and hasattr(data, "indices"):
        base = data.dataset
        return "indices", [str(id(base)).encode(),
                           *(str(int(i)).encode() for i in list(data.indices)[:MAX_ROWS])]
    if hasattr(data, "column_names") and hasattr(data, "select_columns"):
        return "rows", _dataset_rows(data)
    tensors = getattr(data, "tensors", None)
    if isinstance(tensors, tuple) and tensors:
        return "rows", _tensor_rows(tensors[0])
    if hasattr(data, "shape") and hasattr(data, "dtype"):
        return "rows", _tensor_rows(data)
    if hasattr(data, "__getitem__") and hasattr(data, "__len__"):
        rows = []
        for i in range(min(len(data), MAX_ITEMS)):
            item = data[i]
            item = item[0] if isinstance(item, (tuple, list)) else \
                item.get("input_ids", item) if isinstance(item, dict) else item
            tensor = hasattr(item, "shape") and bool(getattr(item, "ndim", 0))
            rows.append(_tensor_rows(item[None])[0] if tensor else repr(item).encode())
        return "rows", rows
    return "", []


def overlap(train: Any, evaluation: Any) -> dict[str, Any] | None:
    """The rows of ``evaluation`` found in ``train`` (module docstring): ``None`` when
    they cannot be read or the evidence is too thin, else the counts."""
    kind_t, train_keys = row_keys(train)
    kind_e, eval_keys = row_keys(evaluation)
    if not kind_t or kind_t != kind_e or len(eval_keys) < MIN_ROWS + (kind_e == "indices"):
        return None
    if kind_t == "indices":
        if train_keys[0] != eval_keys[0]:
            return None
        train_keys, eval_keys = train_keys[1:], eval_keys[1:]
    unique_train, unique_eval = set(train_keys), set(eval_keys)
    if len(unique_train) < (1 - DUPLICATES) * len(train_keys) or \
            len(unique_eval) < (1 - DUPLICATES) * len(eval_keys):
        return None
    shared = sum(1 for k in eval_keys if k in unique_train)
    if shared < SHARE * len(eval_keys):
        return None
    return {"shared": shared, "eval_rows": len(eval_keys), "train_rows": len(train_keys),
            "by": kind_t}


def compare(train: Any, evaluation: Any, place: dict[str, Any], how: str) -> None:
    """Report ``evaluation`` data (named by ``how``) whose rows are in ``train``."""
    if train is None or evaluation is None or id(evaluation) in Seen.compared:
        return
    Seen.compared.add(id(evaluation))
    found = overlap(train, evaluation)
    if found is None:
        return
    share = found["shared"] / found["eval_rows"]
    by = "index" if found["by"] == "indices" else "content"
    report(KIND, f"{found['shared']} of the {found['eval_rows']} rows of {how} ({share:.0%}) "
                 f"are training rows too (same {by}, among {found['train_rows']} training "
                 "rows read): the evaluation scores rows the model trained on, so its metric "
                 "says nothing about held-out data; evaluate on a split made once, apart "
                 "from the training rows", place, {**found, "data": how})


def patch_trainer(module: types.ModuleType) -> None:
    """``transformers.trainer``: at ``Trainer.train()``, each evaluation split against the
    training split."""
    trainer_cls = getattr(module, "Trainer", None)
    original = getattr(trainer_cls, "train", None)
    if original is None or getattr(original, "_autofix_rows", False):
        return

    def train(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            evaluation = self.eval_dataset
            splits = evaluation.items() if isinstance(evaluation, dict) else \
                [("eval_dataset", evaluation)]
            place = where(user_frame(2))
            for name, split in splits:
                if split is not None and split is not self.train_dataset:
                    compare(self.train_dataset, split, place,
                            f"Trainer's {name if name == 'eval_dataset' else repr(name)}")
        except Exception:  # noqa: BLE001 - the probe must never break the script
            pass
        return original(self, *args, **kwargs)

    train._autofix_rows = True  # type: ignore[attr-defined]
    trainer_cls.train = train  # type: ignore[union-attr]


def _bound_name(frame: Any, value: Any) -> str:
    if frame is None:
        return ""
    for scope in (frame.f_locals, frame.f_globals):
        for name, bound in list(scope.items()):
            if bound is value:
                return str(name)
    return ""


def _evaluation_loader(loader: Any) -> None:
    import torch

    if State.in_trainer or torch.is_grad_enabled():
        return
    frame = user_frame(3)
    if frame is None:
        return
    name = _bound_name(frame, loader)
    if name.lower().startswith("train"):
        return
    dataset = getattr(loader, "dataset", None)
    if dataset is None:
        return
    how = f"the evaluation loader `{name}`" if name else "an evaluation DataLoader"
    if Seen.train is None:
        if len(Seen.pending) < 8:
            Seen.pending.append((dataset, where(frame), how))
        return
    if dataset is not Seen.train:
        compare(Seen.train, dataset, where(frame), how)


def patch_loader(module: types.ModuleType) -> None:
    """``torch.utils.data.dataloader``: each ``DataLoader`` iterated with gradients off
    is compared with the training data (known at the first optimizer step, through
    :mod:`loops`)."""
    loader_cls = module.DataLoader
    original = loader_cls.__iter__
    if getattr(original, "_autofix_rows", False):
        return

    def __iter__(self: Any) -> Any:
        try:
            _evaluation_loader(self)
        except Exception:  # noqa: BLE001 - the probe must never break the script
            pass
        return original(self)

    __iter__._autofix_rows = True  # type: ignore[attr-defined]
    loader_cls.__iter__ = __iter__


def at_first_step() -> None:
    """The training data is the dataset of the loader the first step's batch came from;
    evaluation loaders seen before are compared now."""
    from . import loops

    iterator = loops.training_iterator()
    dataset = getattr(iterator, "_dataset", None)
    if dataset is None or Seen.train is not None:
        return
    Seen.train = dataset
    for data, place, how in Seen.pending:
        if data is not dataset:
            compare(dataset, data, place, how)
    Seen.pending.clear()


def patch_optimizer(module: types.ModuleType) -> None:
    """``torch.optim.optimizer``: :func:`at_first_step` at a hand loop's first step."""
    def after_step(optimizer: Any, args: Any, kwargs: Any) -> None:
        if Seen.train is None and not State.in_trainer:
            try:
                at_first_step()
            except Exception:  # noqa: BLE001 - the probe must never break the script
                Seen.train = False

    module.register_optimizer_step_post_hook(after_step)


# --- a scaler fitted on every row ------------------------------------------------------------


def _row_set(value: Any) -> set[bytes]:
    try:
        return set(_tensor_rows(value))
    except Exception:  # noqa: BLE001 - a sparse matrix, a DataFrame of objects: not read
        return set()


def fitted(scaler: Any, rows: Any, frame: Any) -> None:
    """Remember the rows ``scaler`` was fitted on and where (the user's ``frame``)."""
    scaler._autofix_fit = (_row_set(rows), where(frame) if frame is not None else {})
    scaler._autofix_parts = []


def transformed(scaler: Any, rows: Any) -> None:
    """Check the rows given to ``scaler.transform`` against its fitted rows and the parts
    transformed before (module docstring)."""
    fit = getattr(scaler, "_autofix_fit", None)
    if not fit or not fit[0] or not fit[1]:
        return
    seen, place = fit
    part = _row_set(rows)
    if len(part) < MIN_ROWS or part == seen or len(part & seen) < 0.9 * len(part):
        return
    parts: list[set[bytes]] = scaler._autofix_parts
    for other in parts:
        shared = len(other & part)
        if shared <= DISJOINT * min(len(other), len(part)):
            small, large = sorted((len(other), len(part)))
            report("stats-before-split",
                   f"{type(scaler).__name__} at {str(place.get('file', '')).rsplit('/', 1)[-1]}"
                   f":{place.get('line')} (`{place.get('text')}`) was fitted on {len(seen)} "
                   f"rows that hold both parts it then transforms ({large} and {small} "
                   "rows, sharing none): the evaluation rows' statistics leak into "
                   "training; fit it on the training part only", place,
                   {"fitted_rows": len(seen), "parts": [large, small]})
            return
    if len(parts) < 4:
        parts.append(part)


def _scaler_method(name: str, original: Any) -> Any:
    def method(self: Any, X: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N803
        out = original(self, X, *args, **kwargs)
        try:
            if name == "fit":
                fitted(self, X, user_frame(2))
            else:
                transformed(self, X)
        except Exception:  # noqa: BLE001 - the probe must never break the script
            pass
        return out

    method._autofix_rows = True  # type: ignore[attr-defined]
    method.__wrapped__ = original  # type: ignore[attr-defined]
    return method


def patch_scalers(module: types.ModuleType) -> None:
    """``sklearn.preprocessing._data``: each scaler's ``fit`` remembers its rows and its
    ``transform`` checks the parts it is given (``fit_transform`` runs both)."""
    for cls_name in SCALERS:
        cls = getattr(module, cls_name, None)
        for name in ("fit", "transform"):
            original = getattr(cls, name, None)
            if original is not None and not getattr(original, "_autofix_rows", False):
                setattr(cls, name, _scaler_method(name, original))
