"""Faults of data structures at the failing boundary: a ``DatasetDict`` where a split is
needed, a datasets ``Column`` where a list is needed, a ``DataLoader`` over rows of Python
lists, columns the user's code reads that ``Trainer`` removed, the class ids in a column
``Trainer`` does not pass as labels, a batched map that changes the row count, and the
structure of the predictions ``compute_metrics`` gets (a tuple, logits where ids are
decoded, rows lost by a bare-tensor output, a multi-class metric left binary).

Recognised from the facts at the failure (``autofix/run/child/facts.py``, read through
:class:`~autofix.categories.failure.Failure`) and the probe report (the datasets each
``Trainer`` got); the message is one more fact. Measured on transformers 5.24 / datasets
5.2 / torch 2.13 CPU (``sample_scripts/corpus``: d02, d05, d06, d08, d09, d15, d22, d23,
d24, d25, d58, d60, d63).
"""

from __future__ import annotations

import ast
import math
import re

from autofix.categories.failure import (
    Failure,
    Value,
    failure_of,
    is_float,
    kind,
    library_frames,
    shape,
    type_name,
)
from autofix.categories.model import Category
from autofix.types import ProbeReport

#: The columns a text model takes as inputs (never a label column).
MODEL_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids", "position_ids",
                          "inputs_embeds", "pixel_values", "decoder_input_ids",
                          "decoder_attention_mask", "special_tokens_mask"})
#: Columns named like row ids, never taken for labels.
_ROW_ID = re.compile(r"^(idx|id|index|guid|uid)$|_(id|idx)$")


def _values(failure: Failure) -> list[Value]:
    """Every summary of the failing frames, and each split of a ``DatasetDict`` among them
    (``data["train"]`` given to ``Trainer``)."""
    found = [v for f in failure.frame_facts() for v in f.values.values()]
    return found + [split for v in found if kind(v) == "datasetdict"
                    for split in (v.get("datasets") or {}).values()]


def datasetdict_given(failure: Failure) -> bool | None:
    """A ``DatasetDict`` (all splits) is among the failing frames' values, or was given to
    ``Trainer`` as a dataset (the probe's roles ``train:<split>``)."""
    if any(":" in d.role for t in failure.probe.trainers for d in t.datasets):
        return True
    if not failure.has_facts:
        return None
    return any(kind(v) == "datasetdict" for v in _values(failure))


def _splits_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    splits = next((list(v.get("splits", {})) for v in (_values(failure) if failure else [])
                   if kind(v) == "datasetdict"), [])
    if not splits:
        return ""
    return (f"this is a DatasetDict with the splits {splits}: select one (dataset["
            f"{splits[0]!r}]) where a Dataset is needed")


def column_object(failure: Failure) -> bool | None:
    """A datasets ``Column`` (``ds["text"]`` on datasets >= 4, a lazy column) reached a
    call that needs a list (the tokenizer's ``text``)."""
    if not failure.has_facts:
        return None
    return any(type_name(v).endswith(".Column") for f in library_frames(failure, 3)
               for v in f.values.values())


def _transposed(value: Value) -> bool:
    """A batch field that the default collate turned into a list of per-position tensors
    (rows of Python lists: ``[tensor(B), tensor(B), ...]``)."""
    items = value.get("items") or []
    return kind(value) == "list" and bool(items) and kind(items[0]) == "tensor" \
        and len(shape(items[0]) or ()) == 1


def unformatted_loader_batch(failure: Failure) -> bool | None:
    """The batch of a ``DataLoader`` with torch's default collate over a datasets
    ``Dataset`` whose format is ``None`` (Python lists): each model input arrived as a list
    of per-position tensors instead of one (batch, length) tensor."""
    loaders = [v for v in _values(failure) if kind(v) == "loader"]
    if not loaders:
        return None
    plain = [ld for ld in loaders if str(ld.get("collate_fn", "")).endswith("default_collate")
             and kind(ld.get("dataset")) == "dataset" and ld["dataset"].get("format") is None]
    if not plain:
        return False
    batches = [v for f in failure.user_frames() for v in f.values.values()
               if kind(v) == "mapping"]
    return any(_transposed(b.get("values", {}).get(key, {})) for b in batches
               for key in MODEL_INPUTS)


def _missing_key(failure: Failure) -> str:
    """The key of a ``KeyError`` ("" for another error)."""
    if failure.exc.short_type != "KeyError":
        return ""
    try:
        key = ast.literal_eval(failure.exc.message.strip())
    except (ValueError, SyntaxError):
        return ""
    return key if isinstance(key, str) else ""


def removed_column_read(failure: Failure) -> bool | None:
    """The user's code (a custom collator, an overriding ``compute_loss``) reads a column of
    the dataset given to ``Trainer`` that the batches no longer hold: ``Trainer`` removes
    the columns the model's ``forward`` does not take (``remove_unused_columns=True``)."""
    key = _missing_key(failure)
    if not key:
        return None
    given = [d for t in failure.probe.trainers for d in t.datasets if d.role.startswith("train")]
    if not given or not failure.has_facts:
        return None
    if not any(key in d.columns for d in given) or key in MODEL_INPUTS:
        return False
    frame = next(iter(failure.user_frames()), None)
    if frame is None:
        return None
    rows = [v for v in frame.values.values() if kind(v) == "mapping"]
    rows += [i for v in frame.values.values() if kind(v) == "list"
             for i in v.get("items") or () if kind(i) == "mapping"]
    return bool(rows) and all(key not in (r.get("keys") or ()) for r in rows)


def _removed_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    key = _missing_key(failure) if failure is not None else ""
    if not key:
        return ""
    return (f"Trainer removed the column {key!r} (the model's forward does not take it) "
            f"before your code reads it: pass remove_unused_columns=False to "
            "TrainingArguments")


def label_candidates(failure: Failure) -> list[str]:
    """Integer scalar columns of the dataset given to ``Trainer`` (as the failing frames
    show it) that are neither a model input nor a row id, when it has no ``label`` /
    ``labels`` column, and whose values are class ids of the model's head (at least two
    of them, all in ``0 .. num_labels - 1``): where its class ids are."""
    trainers = failure.probe.trainers
    given = {c for t in trainers for d in t.datasets if d.role == "train" for c in d.columns}
    heads = [t.num_labels for t in trainers if isinstance(t.num_labels, int)]
    if not given or given & {"label", "labels", "label_ids"} or not heads:
        return []
    for value in _values(failure):
        if kind(value) == "dataset" and set(value.get("columns") or ()) == given:
            features = value.get("features") or {}
            ranges = value.get("ranges") or {}
            return [c for c, f in features.items()
                    if re.match(r"(Value\('u?int\d+'\)|ClassLabel)", str(f))
                    and c not in MODEL_INPUTS and not _ROW_ID.search(c)
                    and _class_ids(ranges.get(c), heads[0])]
    return []


def _class_ids(measured: Value | None, num_labels: int) -> bool:
    """A column's measured values are class ids of a head of ``num_labels`` outputs."""
    if not measured:
        return False
    low, high, distinct = measured.get("min"), measured.get("max"), measured.get("n_distinct")
    return isinstance(low, int) and isinstance(high, int) and low >= 0 and \
        high < max(num_labels, 2) and isinstance(distinct, int) and distinct >= 2


def labels_under_other_name(failure: Failure) -> bool | None:
    """The model got no labels (its output has no loss) while the training set holds its
    class ids in one integer column under another name: ``Trainer`` passes only columns
    the model's ``forward`` takes (``labels``), so it dropped that one."""
    if not failure.probe.trainers or not failure.has_facts:
        return None
    return len(label_candidates(failure)) == 1


def _eval_predictions(failure: Failure) -> Value | None:
    """The predictions ``compute_metrics`` was given (the ``EvalPrediction``'s, else a
    local of the user's frames named like predictions)."""
    for frame in failure.user_frames():
        for value in frame.values.values():
            if kind(value) == "eval-prediction":
                return value.get("predictions")
    return None


def _first(predictions: Value | None) -> Value | None:
    if kind(predictions) == "tuple":
        items = predictions.get("items") or []  # type: ignore[union-attr]
        return items[0] if items else None
    return predictions


def _seq2seq(failure: Failure) -> bool:
    return any("Seq2Seq" in t.trainer_class for t in failure.probe.trainers) or any(
        v.get("is_encoder_decoder") is True for v in _values(failure) if kind(v) == "model")


def logits_decoded(failure: Failure) -> bool | None:
    """A ``Seq2SeqTrainer`` evaluated without generating: ``compute_metrics`` got the
    logits (batch, length, vocabulary), a float array, where it decodes token ids."""
    predictions = _eval_predictions(failure)
    if predictions is None:
        return None
    logits = _first(predictions)
    return _seq2seq(failure) and is_float(logits) and len(shape(logits) or ()) == 3


def predictions_tuple(failure: Failure) -> bool | None:
    """``compute_metrics`` got a tuple (logits, hidden states or attentions...) as its
    predictions, the logits first: the model returns more than its logits."""
    predictions = _eval_predictions(failure)
    if predictions is None:
        return None
    if _seq2seq(failure):
        return False  # a tuple there is the logits of a run without generation
    first = _first(predictions)
    return kind(predictions) == "tuple" and is_float(first) and len(shape(first) or ()) >= 2


def rows_lost_per_batch(failure: Failure) -> bool | None:
    """``compute_metrics`` got fewer prediction rows than labels, one row fewer per
    evaluation batch: the model's output is a bare tensor (not a dict or ModelOutput), so
    ``Trainer.prediction_step`` took it for a tuple and dropped its first element (row)."""
    loop = next((f for f in failure.frame_facts()
                 if f.function == "evaluation_loop" and not f.user), None)
    if loop is None:
        return None
    preds, labels = shape(loop.values.get("all_preds")), shape(loop.values.get("all_labels"))
    size = loop.values.get("batch_size", {}).get("value")
    model = type_name(loop.values.get("model"))
    if not preds or not labels or not isinstance(size, int) or size < 1:
        return None
    lost = labels[0] - preds[0]
    return lost > 0 and lost == math.ceil(labels[0] / size) and \
        not model.startswith("transformers.")


def binary_average_on_classes(failure: Failure) -> bool | None:
    """A scikit-learn metric left at ``average='binary'`` on labels of more than two
    classes."""
    for frame in library_frames(failure):
        average = frame.values.get("average")
        truth = frame.values.get("y_true")
        if average is None or truth is None:
            continue
        if average.get("value") != "binary":
            return False
        distinct = truth.get("n_distinct")
        return isinstance(distinct, int) and distinct > 2 or \
            frame.values.get("y_type", {}).get("value") == "multiclass"
    return None


def map_kept_columns(failure: Failure) -> bool | None:
    """A batched ``Dataset.map`` whose function returned more rows than it was given
    (``return_overflowing_tokens``: several windows per document) while the map keeps the
    input columns (no ``remove_columns``), which still have one row per document."""
    single = next((f for f in failure.frame_facts() if f.function == "_map_single"), None)
    if single is None:
        return None
    kept = single.values.get("remove_columns")
    return kept is None or kind(kept) == "none"


DATA: tuple[Category, ...] = (
    Category(
        id="datasetdict-not-split",
        title="a DatasetDict (all splits) where one split (a Dataset) is needed",
        patterns=(r"'DatasetDict' object has no attribute",
                  r"Please first select a split",
                  r"Dataset argument should be a datasets\.Dataset"),
        check=datasetdict_given,
        advice=_splits_advice,
        hint="select the split: dataset[\"train\"] where a Dataset is needed (load_dataset "
             "returns a DatasetDict, one key per split, even for one file)",
    ),
    Category(
        id="dataset-column-object",
        title="a datasets Column object where a list of values is needed",
        patterns=(r"text input must be of type `str`",),
        check=column_object,
        needs_facts=True,
        hint="on datasets >= 4, ds[\"text\"] is a lazy Column: pass list(ds[\"text\"]) to "
             "the tokenizer, or tokenize with ds.map(fn, batched=True)",
    ),
    Category(
        id="dataset-not-torch-formatted",
        title="a DataLoader with the default collate over a datasets Dataset of Python lists",
        check=unformatted_loader_batch,
        needs_facts=True,
        hint="give the DataLoader a collator that makes tensors "
             "(collate_fn=DataCollatorWithPadding(tokenizer)), or set_format(\"torch\") on "
             "the dataset",
    ),
    Category(
        id="unused-columns-removed",
        title="the script's own code reads a column that Trainer removed as unused",
        types=("KeyError",),
        check=removed_column_read,
        needs_facts=True,
        advice=_removed_advice,
        hint="Trainer drops the columns the model's forward does not take: pass "
             "remove_unused_columns=False to TrainingArguments when a collator or "
             "compute_loss reads them",
    ),
    Category(
        id="label-column-unnamed",
        title="the class ids are in a column Trainer does not pass to the model as labels",
        patterns=(r"The model did not return a loss from the inputs, only the following "
                  r"keys: logits",),
        check=labels_under_other_name,
        needs_facts=True,
        hint="rename the class-id column to \"labels\" (ds.rename_column(name, \"labels\")): "
             "Trainer passes only the columns the model's forward takes",
    ),
    Category(
        id="map-changes-row-count",
        recipes=("map-overflow-columns", "map-remove-columns"),
        title="a batched map returns more rows than it gets and keeps the input columns",
        patterns=(r"expected length \d+ but got length \d+",),
        raised_in=("map-function",),
        check=map_kept_columns,
        needs_facts=True,
        hint="a map that changes the number of rows (return_overflowing_tokens) must not "
             "keep the input columns: carry each one through overflow_to_sample_mapping, or "
             "pass remove_columns=dataset.column_names",
    ),
    Category(
        id="seq2seq-metrics-without-generate",
        title="Seq2SeqTrainer evaluates without generating, so compute_metrics gets logits",
        check=logits_decoded,
        needs_facts=True,
        raised_in=("compute-metrics",),
        hint="set predict_with_generate=True in Seq2SeqTrainingArguments so that "
             "compute_metrics gets generated token ids",
    ),
    Category(
        id="predictions-tuple",
        title="compute_metrics gets a tuple (logits and hidden states) as predictions",
        check=predictions_tuple,
        needs_facts=True,
        raised_in=("compute-metrics",),
        hint="the model returns more than its logits (output_hidden_states, attentions): "
             "take predictions[0] when it is a tuple, or pass Trainer a "
             "preprocess_logits_for_metrics that returns the logits",
    ),
    Category(
        id="model-output-not-dict",
        title="a model returning a bare tensor: Trainer drops one row per evaluation batch",
        check=rows_lost_per_batch,
        needs_facts=True,
        raised_in=("compute-metrics",),
        hint="return the logits in a dict from compute_loss ((loss, {\"logits\": logits})) "
             "or a ModelOutput from forward: Trainer treats other outputs as tuples and "
             "drops their first element",
    ),
    Category(
        id="metric-average-binary",
        title="a scikit-learn metric left at average='binary' on more than two classes",
        patterns=(r"Target is multiclass but average='binary'",),
        check=binary_average_on_classes,
        hint="pass average=\"macro\" (or \"weighted\", \"micro\") to f1_score / "
             "precision_score / recall_score for more than two classes",
    ),
)
