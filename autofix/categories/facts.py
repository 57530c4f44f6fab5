"""Readings of the probe's facts that several categories share (datasets seen, their
columns and label ranges; the samples of a non-finite loss's first bad batch), for their
``refine``, ``advice`` and ``symptom_cause`` behaviour."""

from __future__ import annotations

from autofix.types import DatasetFacts, ProbeReport, SampleLoss

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


def sample_lines(samples: tuple[SampleLoss, ...], limit: int = 8) -> list[str]:
    """The first bad batch's samples as evidence lines (``batch sample 3: label 2, loss
    nan``), at most ``limit`` of them and a line counting the rest."""
    lines = [f"batch sample {s.index}: label {s.label}, loss "
             f"{'n/a' if s.loss is None else format(s.loss, '.4g')}" for s in samples[:limit]]
    if len(samples) > limit:
        lines.append(f"... {len(samples) - limit} more samples")
    return lines


def all_ignored(samples: tuple[SampleLoss, ...]) -> bool:
    """Every sample of the batch is labelled -100 (ignored by the loss): a mean over zero
    targets. ``False`` for no samples."""
    return bool(samples) and all(s.label == -100 for s in samples)


def all_ignored_text(samples: tuple[SampleLoss, ...]) -> str:
    """The evidence line of a batch whose labels are all ignored."""
    return (f"all {len(samples)} labels of that batch are -100 (ignored), so the mean loss "
            "is taken over zero targets")
