"""What a person should change, from the probe's facts, when no recipe can (advice text).

:func:`advice_for` turns a diagnosis and the facts the probe reported about the run (the
datasets given to ``Trainer``, their columns and label range, the model's ``num_labels``)
into one or two sentences naming the concrete change. It is shown as the diagnosis hint
(terminal, JSON report and the summary of a session that gave up). The rules follow the
course's chapter 8 ("Debugging the training pipeline"): what the model receives decides.
"""

from __future__ import annotations

from autofix.types import DatasetFacts, Diagnosis, ProbeReport

#: Columns a transformers text model needs in its batches.
_MODEL_INPUTS = ("input_ids", "inputs_embeds")


def _columns(data: DatasetFacts) -> str:
    return "[" + ", ".join(data.columns) + "]"


def _seen(probe: ProbeReport) -> list[DatasetFacts]:
    return [d for t in probe.trainers for d in t.datasets] + list(probe.datasets)


def _label_range(data: DatasetFacts) -> str:
    if data.label_classes:
        return f"{data.label_classes} classes (ClassLabel)"
    if data.label_min is not None and data.label_max is not None:
        return f"labels {data.label_min:g}..{data.label_max:g}"
    return "labels of unknown range"


def advice_for(diagnosis: Diagnosis, probe: ProbeReport) -> str:
    """One sentence (or two) saying what to change, from ``probe``'s facts; ``""`` when the
    facts do not say more than the category's generic hint.

    Inputs: ``diagnosis.category`` (an id from ``autofix/categories.py``) and the run's
    :class:`~autofix.types.ProbeReport`. Never raises for missing facts.
    """
    category = diagnosis.category
    seen = _seen(probe)
    if category == "raw-dataset":
        raw = [d for d in seen if d.columns and not any(c in d.columns for c in _MODEL_INPUTS)]
        if raw:
            d = raw[0]
            return (f"Trainer received columns {_columns(d)} and no input_ids for its "
                    f"{d.role} dataset: pass the tokenized dataset (the result of "
                    f"dataset.map(tokenize_function, batched=True)) instead of the raw one")
    if category == "ragged-batch":
        return ("batches hold sequences of different lengths: give Trainer the tokenizer "
                "(processing_class=tokenizer) or a collator "
                "(data_collator=DataCollatorWithPadding(tokenizer)); with a DataLoader, "
                "collate_fn=DataCollatorWithPadding(tokenizer)")
    if category in ("label-out-of-range", "nan-loss"):
        for trainer in probe.trainers:
            train = trainer.dataset("train")
            if train is None or trainer.num_labels is None:
                continue
            if train.label_min is not None and train.label_min >= 1:
                return (f"the model has num_labels={trainer.num_labels} and the training "
                        f"labels run {train.label_min:g}..{train.label_max:g}: shift them to "
                        "start at 0 (e.g. dataset.map(lambda b: {'label': b['label'] - 1}))")
            wanted = train.label_classes or (
                int(train.label_max) + 1 if train.label_max is not None else None)
            if wanted and wanted > trainer.num_labels:
                return (f"the model was built with num_labels={trainer.num_labels} but the "
                        f"training data has {_label_range(train)}: create it with "
                        f"num_labels={wanted} (change the value where it is defined)")
    if category == "label-column-name":
        for d in seen:
            if d.label_column and d.label_column not in ("labels",):
                return (f"the dataset's label column is {d.label_column!r} "
                        f"(columns {_columns(d)}): rename it to what the script asks for, "
                        f"or ask for {d.label_column!r}")
    if category == "string-labels":
        strings = [d for d in seen if d.label_kind == "str"]
        if strings:
            return (f"column {strings[0].label_column!r} holds strings: encode it as class "
                    f"ids first (dataset.class_encode_column({strings[0].label_column!r}))")
    return ""
