"""Diagnosis on a slice of big data (issue 10): datasets the script loads are cut to
``AUTOFIX_SAMPLE_ROWS`` rows per split before the script sees them.

Runs inside the child (standard library only; ``datasets`` is the child's own). The rows
kept are spread evenly over the split (every k-th row), so a split sorted by label keeps
every label. The label range of the WHOLE split is measured before cutting
(``Dataset.unique`` on the Arrow column) and reported in the ``sampled`` event, so a fix
such as ``num_labels`` is measured on all the data, not on the slice.

Patched entry points: ``datasets.load_dataset`` and the ``Dataset.from_*`` constructors.
"""

from __future__ import annotations

import functools
import types
from typing import Any

from .events import emit

SAMPLE_ROWS = 0  # set by the bootstrap from AUTOFIX_SAMPLE_ROWS (contract.Env)
_LABEL_COLUMNS = ("labels", "label", "label_ids")
#: (split, label column, whole-split min, max) of every split cut so far in this run.
CUT: list[tuple[str, str, Any, Any]] = []
_CONSTRUCTORS = ("from_dict", "from_list", "from_pandas", "from_csv", "from_json",
                 "from_parquet", "from_generator", "from_text")


def _label_facts(ds: Any) -> dict[str, Any]:
    """Label column, kind and range of the whole (uncut) split."""
    columns = list(getattr(ds, "column_names", None) or [])
    column = next((c for c in _LABEL_COLUMNS if c in columns), "")
    if not column:
        return {}
    try:
        values = [v for v in ds.unique(column) if v is not None]
    except Exception:  # noqa: BLE001 - not a datasets.Dataset
        return {}
    if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                             for v in values):
        return {"label_column": column}
    return {"label_column": column, "label_min": min(values), "label_max": max(values)}


def cut(ds: Any, origin: str, split: str = "") -> Any:
    """``ds`` cut to :data:`SAMPLE_ROWS` evenly spread rows (unchanged when it is smaller,
    not a map-style ``Dataset``, or sampling is off)."""
    if SAMPLE_ROWS <= 0 or not hasattr(ds, "select"):
        return ds
    try:
        rows = len(ds)
    except TypeError:  # IterableDataset: no length, nothing to cut
        return ds
    if rows <= SAMPLE_ROWS:
        return ds
    step = rows / SAMPLE_ROWS
    kept = ds.select([int(i * step) for i in range(SAMPLE_ROWS)])
    facts = _label_facts(ds)
    if "label_max" in facts:
        CUT.append((split, facts["label_column"], facts["label_min"], facts["label_max"]))
    emit("sampled", origin=origin, split=split, rows=rows, kept=SAMPLE_ROWS, **facts)
    return kept


def full_label_max(column: str, split: str = "train") -> Any:
    """The largest label of the uncut ``split`` (any cut split when that one is unknown)
    in ``column``; ``None`` when no such split was cut."""
    named = [high for s, c, _, high in CUT if c == column and s == split]
    anywhere = [high for _, c, _, high in CUT if c == column]
    found = named or (anywhere if len({s for s, c, _, _ in CUT if c == column}) <= 1 else [])
    return max(found) if found else None


def _cut_any(result: Any, origin: str) -> Any:
    if hasattr(result, "keys") and hasattr(result, "__setitem__") and not hasattr(result,
                                                                                  "select"):
        for split in list(result.keys()):  # DatasetDict
            result[split] = cut(result[split], origin, str(split))
        return result
    return cut(result, origin)


def patch_load(module: types.ModuleType) -> None:
    """Wrap ``datasets.load.load_dataset`` (bound into ``datasets`` right after)."""
    original = getattr(module, "load_dataset", None)
    if SAMPLE_ROWS <= 0 or original is None or getattr(original, "_autofix", False):
        return

    @functools.wraps(original)
    def load_dataset(*args: Any, **kwargs: Any) -> Any:
        return _cut_any(original(*args, **kwargs), "load_dataset")

    load_dataset._autofix = True  # type: ignore[attr-defined]
    module.load_dataset = load_dataset  # type: ignore[attr-defined]


def patch_constructors(module: types.ModuleType) -> None:
    """Wrap the ``Dataset.from_*`` class methods of ``datasets.arrow_dataset``."""
    dataset_cls = getattr(module, "Dataset", None)
    if SAMPLE_ROWS <= 0 or dataset_cls is None:
        return
    for name in _CONSTRUCTORS:
        original = getattr(dataset_cls, name, None)
        if original is None or getattr(original, "_autofix", False):
            continue

        def make(original: Any, name: str) -> Any:
            @functools.wraps(original)
            def constructor(*args: Any, **kwargs: Any) -> Any:
                return cut(original(*args, **kwargs), f"Dataset.{name}")

            constructor._autofix = True  # type: ignore[attr-defined]
            return staticmethod(constructor)

        setattr(dataset_cls, name, make(original, name))
