"""Readings of the probe's facts that several categories share (datasets seen, their
columns and label ranges), for their ``refine`` and ``advice`` behaviour."""

from __future__ import annotations

from autofix.types import DatasetFacts, ProbeReport

#: Columns a transformers text model needs in its batches.
MODEL_INPUTS = ("input_ids", "inputs_embeds")


def seen_datasets(probe: ProbeReport) -> list[DatasetFacts]:
    """Every dataset the probe reported: those given to a ``Trainer``, then the others
    (a ``DataLoader``'s, ``to_tf_dataset``'s)."""
    return [d for t in probe.trainers for d in t.datasets] + list(probe.datasets)


def columns_text(data: DatasetFacts) -> str:
    """``[a, b]``: the dataset's column names as a person reads them."""
    return "[" + ", ".join(data.columns) + "]"


def label_range_text(data: DatasetFacts) -> str:
    """``3 classes (ClassLabel)``, ``labels 0..2`` or ``labels of unknown range``."""
    if data.label_classes:
        return f"{data.label_classes} classes (ClassLabel)"
    if data.label_min is not None and data.label_max is not None:
        return f"labels {data.label_min:g}..{data.label_max:g}"
    return "labels of unknown range"
