"""The runtime provenance of an offending value: which of the user's names hold it, and
which data loaders of the user's frames could have made the batch it belongs to.

The static side (``autofix/toolkit/provenance.py``) follows a name back through the
script's source to where the value is made; it starts from what this module finds on the
real objects:

- ``holders``: the user's frames (innermost first) whose locals hold the offending value
  itself, a tensor sharing its storage (``labels.view(-1)`` inside a model is the user's
  ``labels``), or a container that holds it (``batch["labels"]``, ``batch[2]``): each
  ``{"file", "line", "function", "name", "key"}`` (``key`` "" for the value itself);
  when no name holds it, the tensors it may be rows of (a copy made by indexing:
  ``features[idx]``), marked ``"rows": True``;
- ``loaders``: the ``DataLoader``s the user's frames hold (locals, and attributes of a
  local ``self``), and the ``Trainer``s, which build their training loader themselves:
  ``{"file", "line", "function", "name", "kind", "batch_size", "rows", "drop_last",
  "last_batch", "dataset", "getitem", "collate"}``, ``kind`` ``"loader"`` or
  ``"trainer"``, ``rows`` the length of its dataset, ``last_batch`` the rows of its last
  batch, ``getitem``/``collate`` the ``"file:line"`` of the user's
  ``Dataset.__getitem__`` / ``collate_fn`` ("" when the library's own).

Standard library only; never raises.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

#: Holders and loaders reported, at most.
MAX_HOLDERS = 6
MAX_LOADERS = 6


def _is_library(filename: str) -> bool:
    path = os.path.abspath(filename)
    if "site-packages" in path or "dist-packages" in path or filename.startswith("<") \
            or not os.path.isfile(path):
        return True
    prefixes = {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return any(path.startswith(p + os.sep) for p in prefixes)


def user_frames(frames: list[Any], root: str) -> list[Any]:
    """The frames of ``frames`` (outermost first) in the user's files (not a library's,
    under ``root`` when given), innermost first; the child's own files left out."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = []
    for frame in reversed(frames):
        name = frame.f_code.co_filename
        path = os.path.abspath(name)
        if _is_library(name) or path.startswith(here + os.sep):
            continue
        if root and not path.startswith(os.path.abspath(root) + os.sep):
            continue
        out.append(frame)
    return out


def _same(candidate: Any, value: Any) -> bool:
    """``candidate`` is ``value``, or a tensor of the same storage and dtype: a view of it
    (``labels`` and the ``labels.view(-1)`` a model's loss got) or the tensor it is a slice
    of (``ids`` and the ``ids[i:i + 20]`` a batch is)."""
    if candidate is value:
        return True
    try:
        return (hasattr(candidate, "untyped_storage") and hasattr(value, "untyped_storage")
                and candidate.dtype == value.dtype and candidate.numel() > 0
                and candidate.untyped_storage().data_ptr()
                == value.untyped_storage().data_ptr())
    except Exception:  # noqa: BLE001
        return False


def _key_of(container: Any, value: Any) -> str | None:
    """The key (``"labels"``) or index (``"2"``) under which ``container`` (a mapping, a
    tuple or a list) holds ``value``, ``None`` when it does not."""
    try:
        if isinstance(container, Mapping) or (hasattr(container, "keys")
                                              and hasattr(container, "__getitem__")
                                              and not hasattr(container, "shape")):
            for key in list(container.keys())[:64]:
                if isinstance(key, str) and _same(container[key], value):
                    return key
        elif isinstance(container, (tuple, list)):
            for i, item in enumerate(container[:16]):
                if _same(item, value):
                    return str(i)
    except Exception:  # noqa: BLE001
        return None
    return None


def _rows_of(candidate: Any, value: Any) -> bool:
    """``candidate`` is a tensor whose rows ``value`` may be picked from: the same dtype,
    rank and row shape, at least as many rows (``features[idx]`` copies rows of
    ``features``: no storage is shared)."""
    try:
        return (hasattr(candidate, "untyped_storage") and hasattr(value, "untyped_storage")
                and candidate is not value and candidate.dtype == value.dtype
                and candidate.dim() == value.dim() >= 1
                and tuple(candidate.shape[1:]) == tuple(value.shape[1:])
                and candidate.shape[0] >= value.shape[0])
    except Exception:  # noqa: BLE001
        return False


def holders(value: Any, frames: list[Any]) -> list[dict[str, Any]]:
    """The user's names that hold ``value`` in ``frames`` (user frames, innermost first);
    when none does, the tensors it may be rows of (``"rows": True``: a copy made by
    indexing, as ``features[idx]``)."""
    out: list[dict[str, Any]] = []
    if value is None:
        return out
    for frame in frames:
        for name, candidate in list(frame.f_locals.items())[:200]:
            if name.startswith("__"):
                continue
            key = "" if _same(candidate, value) else _key_of(candidate, value)
            if key is None:
                continue
            out.append({"file": frame.f_code.co_filename, "line": frame.f_lineno,
                        "function": frame.f_code.co_name, "name": name, "key": key})
            if len(out) >= MAX_HOLDERS:
                return out
    if out:
        return out
    for frame in frames:
        for name, candidate in list(frame.f_locals.items())[:200]:
            if not name.startswith("__") and _rows_of(candidate, value):
                out.append({"file": frame.f_code.co_filename, "line": frame.f_lineno,
                            "function": frame.f_code.co_name, "name": name, "key": "",
                            "rows": True})
                if len(out) >= MAX_HOLDERS:
                    return out
    return out


def _is_loader(value: Any) -> bool:
    return all(hasattr(value, a) for a in ("dataset", "batch_size", "collate_fn", "sampler")) \
        and not isinstance(value, type)


def _is_trainer(value: Any) -> bool:
    """A transformers (or TRL) ``Trainer``: it builds its training loader itself."""
    return all(hasattr(value, a) for a in ("get_train_dataloader", "train_dataset", "args")) \
        and not isinstance(value, type)


def _user_code(func: Any) -> str:
    """``"file:line"`` of a function defined in the user's files, "" otherwise."""
    code = getattr(getattr(func, "__func__", func), "__code__", None)
    if code is None or _is_library(code.co_filename):
        return ""
    return f"{code.co_filename}:{code.co_firstlineno}"


def describe_loader(loader: Any) -> dict[str, Any]:
    """A loader's batch size, dataset length, ``drop_last``, the rows of its last batch,
    its dataset's class and where the user's ``__getitem__``/``collate_fn`` are; a
    ``Trainer`` is described by the training loader it builds (``kind`` ``"trainer"``:
    ``args.train_batch_size``, ``args.dataloader_drop_last``, its ``data_collator``)."""
    if _is_trainer(loader):
        args = loader.args
        batch = getattr(args, "train_batch_size", None) or getattr(
            args, "per_device_train_batch_size", None)
        return _dataset_facts({"kind": "trainer", "batch_size": batch,
                               "drop_last": bool(getattr(args, "dataloader_drop_last", False)),
                               "collate": _user_code(getattr(loader, "data_collator", None))},
                              loader.train_dataset)
    return _dataset_facts({"kind": "loader", "batch_size": loader.batch_size,
                           "drop_last": bool(getattr(loader, "drop_last", False)),
                           "collate": _user_code(loader.collate_fn)}, loader.dataset)


def _dataset_facts(out: dict[str, Any], dataset: Any) -> dict[str, Any]:
    kind = type(dataset)
    out["dataset"] = f"{kind.__module__}.{kind.__qualname__}"
    getitem = getattr(kind, "__getitem__", None)
    out["getitem"] = _user_code(getitem) if getitem is not None else ""
    try:
        rows = len(dataset)
    except Exception:  # noqa: BLE001 - an iterable dataset has no length
        return out
    out["rows"] = rows
    batch = out.get("batch_size")
    if isinstance(batch, int) and batch > 0:
        out["last_batch"] = rows % batch or batch
    return out


def loaders(frames: list[Any]) -> list[dict[str, Any]]:
    """The data loaders the user's ``frames`` hold (locals, and attributes of ``self``)."""
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    for frame in frames:
        named = list(frame.f_locals.items())[:200]
        owner = frame.f_locals.get("self")
        attrs = getattr(owner, "__dict__", None)
        if isinstance(attrs, dict):
            named += [(f"self.{k}", v) for k, v in list(attrs.items())[:200]]
        for name, value in named:
            if id(value) in seen or not (_is_loader(value) or _is_trainer(value)):
                continue
            seen.add(id(value))
            try:
                facts = describe_loader(value)
            except Exception:  # noqa: BLE001
                continue
            out.append({"file": frame.f_code.co_filename, "line": frame.f_lineno,
                        "function": frame.f_code.co_name, "name": name, **facts})
            if len(out) >= MAX_LOADERS:
                return out
    return out


def provenance(value: Any, frames: list[Any], root: str) -> dict[str, Any]:
    """``{"holders", "loaders"}`` of ``value`` at a failure whose frames (outermost
    first) are ``frames``. Never raises."""
    try:
        mine = user_frames(frames, root)
        return {"holders": holders(value, mine), "loaders": loaders(mine)}
    except Exception:  # noqa: BLE001
        return {"holders": [], "loaders": []}
