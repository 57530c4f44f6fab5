"""Labels against the head: what the labels that reach a classification loss are, set
against what the head is (its number of outputs, its ``problem_type``), read from the facts
at the failure (``autofix/categories/failure.py``: the loss's ``target`` and ``input``, the
model's ``forward`` frame with the model, its labels and logits, the user's datasets and
frames) and from the probe's report. Measured on transformers 5.24 / torch 2.13 CPU and on
transformers 4.57.6 + TensorFlow 2.21 (Keras faces).

The message is one more fact, never enough alone where the same text has several causes:
``Target -1 is out of bounds`` is a placeholder label (a negative label never means the head
is too small), ``Expected input batch_size (16) to match target batch_size (48)`` is integer
multi-hot rows when the labels are ``[B, C]`` 0/1 rows as wide as the logits and per-token
labels when they are as wide as ``input_ids``, ``Target size ([16]) ... input size ([16,
3])`` is class ids on a multi-label head when the targets are integers and float scores
otherwise.
"""

from __future__ import annotations

import re

from autofix.categories.catalogue.course import label_count_advice
from autofix.categories.facts import sample_lines
from autofix.categories.failure import (
    Failure,
    Value,
    dataset_with_column,
    failure_of,
    head_at_failure,
    is_float,
    is_integer,
    is_one_hot,
    is_zero_one,
    label_in_message,
    labels_at_loss,
    shape,
    sizes_in_message,
    user_values_of_kind,
)
from autofix.categories.model import Category, Kind
from autofix.categories.script_terms import argument_on
from autofix.types import Diagnosis, Finding, ProbeReport, RunResult, SymptomReport

#: The ignore index of torch's and transformers' losses (labels the loss skips).
IGNORE_INDEX = -100

#: torch's message for a per-row target whose batch is not the logits' batch.
BATCH_MISMATCH = r"Expected input batch_size \(\d+\) to match target batch_size \(\d+\)"
#: ``F.binary_cross_entropy_with_logits`` on a 2-D target and 2-D logits of other widths.
MULTI_LABEL_WIDTH = (r"Target size \(torch\.Size\(\[\d+, \d+\]\)\) must be the same as input "
                     r"size \(torch\.Size\(\[\d+, \d+\]\)\)")
#: The same check on a 1-D target (one value per row) against 2-D logits.
ONE_PER_ROW_ON_BCE = (r"Target size \(torch\.Size\(\[\d+\]\)\) must be the same as input "
                      r"size \(torch\.Size\(\[\d+, \d+\]\)\)")
#: TensorFlow's categorical losses on labels and logits of other widths.
KERAS_SHAPES = r"Shapes \(\d+, \d+\) and \(\d+, \d+\) are incompatible"


def _messages(failure: Failure) -> str:
    return "\n".join(e.message for e in (failure.exc, *failure.exc.chain))


def _label_value(failure: Failure) -> int | None:
    """The label an out-of-range message names (the exception's or a chained one's)."""
    for exc in (failure.exc, *failure.exc.chain):
        value = label_in_message(exc.message)
        if value is not None:
            return value
    return None


def _negative_label(failure: Failure) -> int | None:
    """A negative label the failure shows: the message's, else the smallest one the loss
    read (the ignore index -100 is never read by torch's losses, so it never shows there;
    TensorFlow's sparse losses have no ignore index and name it)."""
    value = _label_value(failure)
    if value is not None and value < 0:
        return value
    at = labels_at_loss(failure)
    if at is not None and at.negatives and at.min is not None:
        return int(at.min)
    return None


def _head_too_small(failure: Failure) -> bool | None:
    """``label-out-of-range``: a label at or above the head's width. False for a negative
    label (a placeholder or the ignore index: a bigger head never fixes it) and for targets
    that are not one class id per row; None without facts or a label in the message."""
    if _negative_label(failure) is not None:
        return False
    at = labels_at_loss(failure)
    if at is not None:
        if len(shape(at.target) or ()) != 1 and "nll" not in at.loss:
            return False
        return at.max is not None and at.max >= at.width
    value = _label_value(failure)
    return True if value is not None and value >= 0 else None


def _placeholder(failure: Failure) -> bool | None:
    """Negative labels other than the ignore index -100 (GLUE-style test splits carry -1
    on every row)."""
    value = _negative_label(failure)
    if value is None:
        return None
    return value != IGNORE_INDEX


def _ignore_index(failure: Failure) -> bool | None:
    """The ignore index -100 reached a loss that has none (Keras' sparse cross-entropy)."""
    value = _label_value(failure)
    return None if value is None else value == IGNORE_INDEX


def _where(failure: Failure) -> str:
    """Which Trainer entry point raised: ``predict``, ``evaluate`` or ``train``."""
    text = " ".join(failure.frames)
    if "trainer.py:predict:" in text:
        return "predict"
    if "trainer.py:evaluate:" in text or "evaluation_loop" in text and \
            "trainer.py:_inner_training_loop" not in text:
        return "evaluate"
    if "evaluation_loop" in text:
        return "evaluate during training"
    return "train"


def _placeholder_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    if failure is None:
        return ""
    value = _negative_label(failure)
    at = labels_at_loss(failure)
    rows = f"every label of the batch is {value}" if at is not None and at.min == at.max \
        else f"labels include {value}"
    where = _where(failure)
    if where == "predict":
        line = failure.user_line[2] if failure.user_line else ""
        split = argument_on(line, position=0, method="predict") or "test"
        return (f"{rows}: the split given to trainer.predict has no gold labels (a "
                f"placeholder). Predict without its label column, "
                f"trainer.predict({split}.remove_columns(\"label\")); the loss is then not "
                "computed and the predictions are what you want")
    if where.startswith("evaluate"):
        return (f"{rows}: the evaluation split has no gold labels (a placeholder). Evaluate "
                "on a labelled split (e.g. a train_test_split of the training data) and keep "
                "the unlabelled split for trainer.predict without its label column")
    data = dataset_with_column(failure, "label")
    drop = f"{data} = {data}.filter(lambda ex: ex[\"label\"] >= 0)" if data else \
        "keep the rows whose label is 0 or more"
    return (f"{rows}: rows without a gold label (a placeholder) reach training. Drop them "
            f"before training, {drop}")


def _multi_label_width(failure: Failure) -> bool | None:
    """Multi-hot targets ``[B, K]`` against logits ``[B, C]``, ``K != C``."""
    at = labels_at_loss(failure)
    if at is not None:
        target = shape(at.target) or ()
        return len(target) == 2 and target[-1] != at.width
    sizes = sizes_in_message(_messages(failure))
    if len(sizes) >= 2 and len(sizes[0]) == 2 and len(sizes[1]) == 2:
        return sizes[0][1] != sizes[1][1]
    return None


def _width_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    at = labels_at_loss(failure) if failure is not None else None
    if at is None:
        return ""
    width = (shape(at.target) or (0, 0))[-1]
    return (f"the multi-hot label rows are {width} wide and the head has {at.width} outputs: "
            f"create the model with num_labels={width} and "
            "problem_type=\"multi_label_classification\" (change the value where it is "
            "defined)")


def _class_ids_on_bce(failure: Failure) -> bool | None:
    """One integer class id per row given to the multi-label (BCE) loss."""
    at = labels_at_loss(failure)
    if at is None:
        return None
    if len(shape(at.target) or ()) != 1:
        return False
    if is_integer(at.target):
        return at.min is not None and at.min >= 0 and (at.max or 0) < at.width
    return False


def _float_scores(failure: Failure) -> bool | None:
    """``float-labels-on-classifier``: refuted when the targets are integer class ids, or
    floats that are all whole class ids of the head (class ids stored as floats)."""
    at = labels_at_loss(failure)
    if at is None:
        return None
    if is_integer(at.target):
        return False
    if is_float(at.target) and at.target.get("integral") and at.min is not None \
            and at.min >= 0 and (at.max or 0) < at.width and at.width > 1:
        return False
    return True


def _class_ids_as_floats(failure: Failure) -> bool | None:
    at = labels_at_loss(failure)
    if at is None:
        return None
    return bool(is_float(at.target) and at.target.get("integral") and at.min is not None
                and at.min >= 0 and (at.max or 0) < at.width and at.width > 1
                and len(shape(at.target) or ()) == 1)


def _class_ids_advice(failure: Failure) -> str:
    """The advice for class ids stored as floats, in the script's own terms: the user's
    line the loss's target came through, the target expression on it and its dtype at the
    loss; for data given to a trainer, the ``datasets`` label column the probe read (by
    name, with the dataset's variable from the line) and its int64 cast; "" when the facts
    at the loss are missing (the hint stands)."""
    at = labels_at_loss(failure)
    if at is None:
        return ""
    dtype = str(at.target.get("dtype", "float")).removeprefix("torch.")
    line = failure.user_line[2] if failure.user_line else ""
    lead = failure.lead()
    columns = [d.label_column for t in failure.probe.trainers for d in t.datasets
               if d.role == "train" and d.label_column] + \
        [d.label_column for d in failure.probe.datasets if d.label_column]
    if columns:
        column = columns[0]
        data = argument_on(line, "train_dataset") or dataset_with_column(failure, column)
        cast = f"{data} = {data}.cast_column({column!r}, Value(\"int64\"))" if data else \
            f"cast_column({column!r}, Value(\"int64\")) on the dataset given for training"
        return (f"{lead}the loss gets whole class ids as {dtype} from the datasets column "
                f"{column!r}; the classification loss takes int64: cast the column before "
                f"training, {cast} (from datasets import Value); a regression head would "
                "be wrong")
    target = argument_on(line, "target", "labels", position=1)
    held = f"`{target}`" if target else "the loss's target"
    return (f"{lead}{held} holds whole class ids as {dtype}; the classification loss takes "
            "int64: build them as int64 where the script makes them floats "
            "(dtype=torch.long instead of a float dtype, .long() instead of .float())"
            + (f", or pass `{target}.long()` to the loss" if target else "")
            + "; a regression head would be wrong")


def _is_batch_message(failure: Failure) -> bool:
    return bool(re.search(BATCH_MISMATCH, _messages(failure)))


def _multi_hot_ints(failure: Failure) -> bool | None:
    """Integer 0/1 rows as wide as the logits: multi-hot labels that select the
    single-label (cross-entropy) loss by their dtype, or break the multi-label one."""
    head = head_at_failure(failure)
    labels = head.labels if head is not None else None
    if labels is None:
        at = labels_at_loss(failure)
        if at is not None and not _is_batch_message(failure):
            return is_integer(at.target) and len(shape(at.target) or ()) == 2
        return False if _is_batch_message(failure) else None
    dims, logits = shape(labels) or (), shape(head.logits if head else None) or ()
    return len(dims) == 2 and is_integer(labels) and is_zero_one(labels) \
        and bool(logits) and dims == logits


def _token_labels(failure: Failure) -> bool | None:
    """Labels shaped like ``input_ids`` (one per token: a token-classification or masked-LM
    batch) reaching a sequence-classification head."""
    head = head_at_failure(failure)
    if head is None or head.labels is None:
        return None
    dims = shape(head.labels) or ()
    ids = shape(head.input_ids) or ()
    if len(dims) != 2 or dims != ids or not head.model_class.endswith("ForSequenceClassification"):
        return False
    logits = shape(head.logits) or ()
    return not (dims == logits and is_zero_one(head.labels))


def _token_labels_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    head = head_at_failure(failure) if failure is not None else None
    if head is None or head.labels is None:
        return ""
    masked = (head.labels.get("max") or 0) >= max(head.num_labels or 2, 2) * 10
    wanted = "AutoModelForMaskedLM (the labels are masked-LM token ids)" if masked else \
        "AutoModelForTokenClassification (one tag per token)"
    return (f"the labels are {list(shape(head.labels) or ())}, one per token like input_ids, "
            f"but {head.model_class} predicts one class per sequence: load {wanted}")


def _one_hot_to_ce(failure: Failure) -> bool | None:
    """Integer one-hot rows as wide as the logits given to cross-entropy."""
    at = labels_at_loss(failure)
    if at is None:
        return None
    target = shape(at.target) or ()
    return len(target) == 2 and target[-1] == at.width and is_integer(at.target) \
        and is_one_hot(at.target)


def _user_id2label(failure: Failure) -> Value | None:
    for frame in failure.user_frames():
        for name in ("id2label", "label2id"):
            value = frame.values.get(name)
            if value is not None and value.get("kind") == "mapping":
                return value
    return None


def _label_map_short(failure: Failure) -> bool | None:
    """The head took its size from an ``id2label`` map shorter than the classes: the user's
    ``id2label`` (or ``label2id``) has as many entries as the model has outputs, and a label
    at or above that count reached the loss."""
    if not _head_too_small(failure):
        return None
    names = _user_id2label(failure)
    head = head_at_failure(failure)
    if names is None or head is None or head.num_labels is None:
        return None
    return bool(len(names.get("keys", ())) == head.num_labels == head.model.get("id2label_size"))


def _float_label_data(failure: Failure) -> bool | None:
    """A dataset in the user's frames whose label column holds floats (scores)."""
    found = None
    for _, data in user_values_of_kind(failure, "dataset"):
        features = data.get("features") or {}
        for column in ("labels", "label"):
            text = str(features.get(column, ""))
            if text:
                found = "float" in text and not text.startswith(("List", "Sequence"))
                if found:
                    return True
    return found


def _keras_loss(failure: Failure) -> str:
    return next((k.loss or "" for k in reversed(failure.probe.keras)), "")


def _categorical_on_ids(failure: Failure) -> bool | None:
    """A Keras categorical cross-entropy (one-hot rows wanted) given one class id per row:
    the shapes ``(B, 1)`` and ``(B, C)``."""
    loss = _keras_loss(failure).lower()
    if not loss:
        return None
    sizes = [s for s in _shapes_in(_messages(failure))]
    return "categorical" in loss and "sparse" not in loss and bool(sizes) and sizes[0][1] == 1


def _shapes_in(message: str) -> list[tuple[int, int]]:

    found = re.search(r"Shapes \((\d+), (\d+)\) and \((\d+), (\d+)\) are incompatible", message)
    if not found:
        return []
    a, b, c, d = (int(g) for g in found.groups())
    return [(a, b), (c, d)]


def _one_hot_width(failure: Failure) -> bool | None:
    """One-hot rows of another width than the Keras model's outputs."""
    loss = _keras_loss(failure).lower()
    sizes = _shapes_in(_messages(failure))
    if not loss or not sizes:
        return None
    return "categorical" in loss and "sparse" not in loss and sizes[0][1] > 1 \
        and sizes[0][1] != sizes[1][1]


def _one_hot_width_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    if failure is None:
        return ""
    sizes = _shapes_in(_messages(failure))
    rows = [v for _, v in user_values_of_kind(failure, "array") if is_one_hot(v)]
    if not sizes:
        return ""
    width, outputs = sizes[0][1], sizes[1][1]
    used = rows[0].get("hot_columns") if rows else None
    if isinstance(used, list) and used and len(used) <= outputs < width:
        return (f"the one-hot label rows are {width} wide (to_categorical infers max(code) + 1) "
                f"but only columns {used} are used and the head has {outputs} outputs: map "
                f"the codes to class ids 0..{outputs - 1} before one-hot encoding (or pass "
                "num_classes); which mapping is right is yours to say")
    return (f"the one-hot label rows are {width} wide and the head has {outputs} outputs: make "
            "them agree (num_labels, or the one-hot width)")


def _sparse_advice(probe: ProbeReport) -> str:
    return ("the labels are one class id per row and the loss is a categorical cross-entropy, "
            "which wants one-hot rows: use SparseCategoricalCrossentropy (and "
            "SparseCategoricalAccuracy)")


def _ragged_label_lists(failure: Failure) -> bool | None:
    """Lists of class ids of varying length (``Sequence(ClassLabel)``) as the labels of a
    sequence-classification head: multi-label topics stored as id lists, not multi-hot."""
    models = [v for frame in failure.frame_facts() for v in frame.values.values()
              if v.get("kind") == "model" and "num_labels" in v]
    if not models:
        return None
    if not any(str(m.get("type", "")).endswith("ForSequenceClassification") for m in models):
        return False
    for _, data in user_values_of_kind(failure, "dataset"):
        features = data.get("features") or {}
        text = str(features.get("labels", features.get("label", "")))
        if text.startswith(("List(ClassLabel", "Sequence(ClassLabel", "List(Value('int",
                            "Sequence(Value('int")):
            return True
    return None


def _multi_label_ids_advice(failure: Failure) -> str:
    """The user's split whose column holds lists of class ids (an integer list feature
    that is not a model input), made multi-hot in the split's own name with the model's
    ``num_labels`` when the user's frames hold the model; "" when no such split is seen."""
    inputs = ("input_ids", "attention_mask", "token_type_ids", "special_tokens_mask")
    models = [v for _, v in user_values_of_kind(failure, "model")
              if isinstance(v.get("num_labels"), int)]
    width = str(models[0]["num_labels"]) if models else "num_labels"
    for name, value in user_values_of_kind(failure, "dataset"):
        for column, feature in (value.get("features") or {}).items():
            text = str(feature)
            if column in inputs or not re.match(r"(List|Sequence)\(.*Value\('int", text):
                continue
            return (f"{failure.lead()}the {column!r} column of `{name}` holds lists of class "
                    f"ids ({text}); a multi-label head wants one float 0/1 per class: "
                    f"{name} = {name}.map(lambda ex: {{{column!r}: [float(i in ex[{column!r}]) "
                    f"for i in range({width})]}}), then cast the column to floats "
                    f"({name}.cast_column({column!r}, List(Value(\"float32\"))), from "
                    "datasets import List, Value)")
    return ""


def _misaligned(failure: Failure) -> bool | None:
    """Per-token labels whose rows are not as long as their ``input_ids`` rows (word-level
    tags not aligned to the sub-word tokens), in the features a collator was given."""
    for frame in failure.frame_facts():
        features = frame.values.get("features")
        if features is None or features.get("kind") != "list":
            continue
        rows = [r.get("values", {}) for r in features.get("items", [])
                if r.get("kind") == "mapping"]
        pairs = [(r["labels"].get("len"), r["input_ids"].get("len")) for r in rows
                 if "labels" in r and "input_ids" in r]
        pairs = [(a, b) for a, b in pairs if isinstance(a, int) and isinstance(b, int)]
        if pairs:
            return bool(sum(a != b for a, b in pairs) * 2 > len(pairs))
    return None


def _outside_the_head(symptom: SymptomReport) -> Diagnosis | None:
    """``label-out-of-range`` for a non-finite loss whose first bad batch holds labels
    outside the head (``>= num_labels``, or negative other than -100): the course's first
    look at a NaN, its per-sample losses against the labels; ``None`` otherwise."""
    head = symptom.num_labels
    outside = [s for s in symptom.samples
               if head is not None and (s.label >= head or -100 < s.label < 0)]
    if not outside:
        return None
    labels = sorted({s.label for s in outside})
    return Diagnosis(
        category="label-out-of-range", via=symptom.kind,
        evidence=f"{symptom.evidence}; labels {labels} of samples "
                 f"{[s.index for s in outside]} are outside num_labels={head}",
        details=tuple(sample_lines(symptom.samples)),
    )


def _regression_on_class_ids(run: RunResult) -> list[Finding]:
    """``regression-on-class-ids``: a ``Trainer`` whose model has ``num_labels=1`` given a
    training split of integer labels above 0 (the run's trainer facts): it fits an MSE
    regression to class ids."""
    out = []
    for trainer in run.probe.trainers:
        train = next((d for d in trainer.datasets if d.role == "train"), None)
        if trainer.num_labels == 1 and train is not None and train.label_kind == "int" \
                and (train.label_classes or 0) + (train.label_max or 0) >= 1:
            out.append(Finding("regression-on-class-ids", 0,
                               f"the model has num_labels=1, so Trainer fits a regression (MSE) "
                               f"to the integer class ids of column '{train.label_column}' "
                               f"(up to {train.label_max or train.label_classes}); for "
                               "classification set num_labels to the number of classes"))
    return out


LABELS: tuple[Category, ...] = (
    Category(
        id="placeholder-labels",
        check=_placeholder,
        advice=_placeholder_advice,
        title="placeholder labels (-1: no gold label) reach the loss",
        patterns=(r"Target -\d+ is out of bounds",
                  r"Received a label value of -\d+ which is outside the valid range"),
        raised_in=("loss",),
        examples=("v5.txt",),
        hint="a negative label marks a row without a gold label: predict or evaluate without "
             "the label column, or drop those rows; a bigger head never fixes it",
    ),
    Category(
        id="keras-ignore-index-labels",
        check=_ignore_index,
        title="-100 (the PyTorch ignore index) in the labels of a Keras loss",
        patterns=(r"Received a label value of -100 which is outside the valid range",),
        raised_in=("loss",),
        examples=("v4-tf.txt",),
        hint="Keras' sparse cross-entropy has no ignore index: compile without loss= so the "
             "Hugging Face model's internal loss masks -100, or mask it with sample weights",
    ),
    Category(
        id="label-map-size-mismatch",
        check=_label_map_short,
        needs_facts=True,
        advice=label_count_advice,
        title="id2label lists fewer classes than the data has (the head takes its size "
              "from it)",
        patterns=(r"Target \d+ is out of bounds",),
        raised_in=("loss",),
        examples=("v5.txt",),
        hint="from_pretrained(num_labels=N, id2label=...) sizes the head from id2label: give "
             "id2label (and label2id) one entry per class",
    ),
    Category(
        id="label-out-of-range",
        recipes=("label-out-of-range", "labels-from-zero"),
        check=_head_too_small,
        advice=label_count_advice,
        title="labels outside the classification head (num_labels too small)",
        patterns=(
            r"Target \d+ is out of bounds",
            r"Received a label value of \d+ which is outside the valid range",
        ),
        raised_in=("loss",),
        examples=("v5.txt", "v4.txt", "v4-tf.txt"),
        symptom_cause=_outside_the_head,
    ),
    Category(
        id="multi-label-width-mismatch",
        check=_multi_label_width,
        advice=_width_advice,
        title="multi-hot label rows of another width than the head",
        patterns=(MULTI_LABEL_WIDTH,),
        raised_in=("loss",),
        examples=("v5.txt",),
        hint="the head needs one output per label of the multi-hot rows: num_labels = their "
             "length, with problem_type=\"multi_label_classification\"",
    ),
    Category(
        id="multi-label-head-single-labels",
        check=_class_ids_on_bce,
        needs_facts=True,
        title="one class id per example on a multi-label head",
        patterns=(ONE_PER_ROW_ON_BCE,),
        raised_in=("loss",),
        examples=("v5.txt",),
        hint="problem_type=\"multi_label_classification\" wants multi-hot rows; one class id "
             "per example is single-label classification: drop problem_type",
    ),
    Category(
        id="class-ids-as-floats",
        recipes=("class-ids-long", "cast-where-made"),
        check=_class_ids_as_floats,
        needs_facts=True,
        advise=_class_ids_advice,
        title="class ids stored as floats on a classification head",
        patterns=(r"expected target dtype to be Long or Byte, but got Float",
                  r"expected scalar type Long but found Float", ONE_PER_ROW_ON_BCE),
        raised_in=("loss",),
        hint="the labels are whole class ids stored as floats: build them as int64 where "
             "they are made (the label column cast to int64, dtype=torch.long); a regression "
             "head would be wrong",
    ),
    Category(
        id="float-labels-on-classifier",
        check=_float_scores,
        title="float targets (scores) on a single-label classification head",
        patterns=(
            r"expected target dtype to be Long or Byte, but got Float",
            r"expected scalar type Long but found Float",
            # num_labels > 1 and float labels: transformers infers multi-label (BCE) and
            # gets one score per row for a row of logits
            ONE_PER_ROW_ON_BCE,
        ),
        raised_in=("loss",),
        examples=("v5.txt", "v5-num-labels-2.txt"),  # raised by torch: same on 4.57.6
        hint="scores need a 1-output regression head (num_labels=1, "
             "problem_type='regression'); class ids stored as floats need casting to int",
    ),
    Category(
        id="problem-type-conflict",
        check=_float_label_data,
        needs_facts=True,
        title="a classification checkpoint's problem_type kept for a 1-output regression head",
        patterns=(r"`problem_type=\"single_label_classification\"` requires `num_labels > 1`",),
        examples=("v5.txt",),
        hint="the checkpoint's config says single_label_classification: load its config, set "
             "problem_type=\"regression\" and num_labels=1 on it, and load the model with "
             "config=config, ignore_mismatched_sizes=True",
    ),
    Category(
        id="int-labels-on-multi-label-head",
        recipes=("cast-multi-hot-float", "multi-hot-dtype", "cast-where-made"),
        check=_multi_hot_ints,
        title="integer multi-hot targets on a multi-label head (BCE needs floats)",
        patterns=(r"result type Float can't be cast to the desired output type Long",
                  BATCH_MISMATCH),
        raised_in=("loss",),
        examples=("v5.txt", "v4.txt", "v5-batch-size.txt"),
        hint="cast the multi-hot label vectors to float where they are built (integer rows "
             "select the single-label loss, or break the multi-label one)",
    ),
    Category(
        id="token-labels-on-sequence-head",
        check=_token_labels,
        needs_facts=True,
        advice=_token_labels_advice,
        title="per-token labels (shaped like input_ids) on a sequence-classification head",
        patterns=(BATCH_MISMATCH,),
        raised_in=("loss",),
        examples=("v5.txt",),
        hint="labels shaped like input_ids are per token: load the token-classification "
             "(or masked-LM, for a masked-LM collator) class of the model",
    ),
    Category(
        id="one-hot-targets-to-cross-entropy",
        check=_one_hot_to_ce,
        title="integer one-hot rows given to cross-entropy, which wants class ids",
        patterns=(r"Expected floating point type for target with class probabilities, got "
                  r"Long", r"0D or 1D target tensor expected, multi-target not supported"),
        raised_in=("loss",),
        examples=("v5.txt",),
        hint="cross-entropy takes one class id per row (or float probabilities): give it "
             "targets.argmax(-1)",
    ),
    Category(
        id="multi-label-ids-not-multi-hot",
        check=_ragged_label_lists,
        needs_facts=True,
        no_recipe="turning id lists into multi-hot rows changes the data's format: autofix "
                  "advises",
        title="multi-label topics stored as lists of class ids, not multi-hot rows",
        patterns=(r"features \(`labels` in this case\) have excessive nesting",),
        overrides=("ragged-batch", "token-labels-not-padded"),
        raised_in=("collator",),
        examples=("v5.txt",),
        advise=_multi_label_ids_advice,
        hint="a multi-label head wants one float 0/1 per class: turn each list of label ids "
             "into a multi-hot row, e.g. ds.map(lambda ex: {\"labels\": [float(i in "
             "ex[\"labels\"]) for i in range(num_labels)]}) with the column cast to floats",
    ),
    Category(
        id="token-labels-misaligned",
        check=_misaligned,
        needs_facts=True,
        no_recipe="aligning word tags to sub-words needs the tokenizer's word_ids() in the "
                  "script's own map function: autofix advises",
        title="word-level tags used as sub-word token labels (rows not aligned with "
              "input_ids)",
        patterns=(r"features \(`labels` in this case\) have excessive nesting",
                  r"expected sequence of length \d+ at dim \d+ \(got \d+\)"),
        overrides=("ragged-batch", "token-labels-not-padded"),
        raised_in=("collator",),
        examples=("v5.txt",),
        hint="align the word tags to the sub-word tokens with word_ids(): the first sub-token "
             "of a word gets its tag, the others and the special tokens -100",
    ),
    Category(
        id="binary-single-output-head",
        title="0/1 class labels on a 1-output head (trained as a regression)",
        hint="a 1-output head trains an MSE regression on the class ids; binary "
             "classification is num_labels=2",
    ),
    Category(
        id="keras-categorical-loss-sparse-labels",
        check=_categorical_on_ids,
        needs_facts=True,
        advice=_sparse_advice,
        title="a Keras categorical cross-entropy given one class id per row",
        patterns=(KERAS_SHAPES,),
        raised_in=("loss",),
        examples=("v4-tf.txt",),
        hint="CategoricalCrossentropy wants one-hot rows; class ids need "
             "SparseCategoricalCrossentropy",
    ),
    Category(
        id="one-hot-width-mismatch",
        check=_one_hot_width,
        needs_facts=True,
        advice=_one_hot_width_advice,
        no_recipe="which code maps to which class is the data's: autofix names the columns "
                  "used and the head's width",
        title="one-hot label rows of another width than the Keras model's outputs",
        patterns=(KERAS_SHAPES,),
        raised_in=("loss",),
        examples=("v4-tf.txt",),
        hint="the one-hot width (to_categorical infers max(code) + 1) must equal num_labels",
    ),
    Category(
        id="regression-on-class-ids",
        title="a head with num_labels=1 trained on integer class ids: Trainer fits an MSE "
              "regression to the ids instead of classifying",
        hint="for classification set num_labels to the number of classes (a run finding: the "
             "probe reads the head's width and the training labels)",
        no_recipe="a 1-output head on integer labels may be a real regression: the finding "
                  "names the column and its range",
        kind=Kind.FINDING,
        findings=_regression_on_class_ids,
    ),
)

__all__ = ["LABELS"]
