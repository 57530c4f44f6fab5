"""The course's faults (chapter 8, "Debugging the training pipeline") and their kin: the
messages they raise on transformers 5.24 / datasets 5.2 / torch 2.13 (``v5``) and
transformers 4.57.6 / datasets 5.0.1 (``v4``) on CPU, with the facts that refine them and
the advice derived from the probe's facts."""

from __future__ import annotations

import difflib
import re
from types import MappingProxyType

from autofix.categories.facts import (
    MODEL_INPUTS,
    columns_text,
    label_range_text,
    seen_datasets,
)
from autofix.categories.failure import Failure, ids_at_embedding, logits_with_class_ids
from autofix.categories.model import SOURCE_SCAN, Category, Place
from autofix.categories.renames import (
    UNUSED_BY_PARSER,
    refused_items,
    renamed_in_parser_refusal,
)
from autofix.paths import folder_name, missing_path
from autofix.types import Diagnosis, ProbeReport, SourceFacts

#: Frames of the lookup of ``input_ids`` (the word embeddings), not of positions or token
#: types: where the two embedding categories' "index out of range in self" is raised.
WORD_EMBEDDING_FRAMES = (r"transformers/models/.*: .*\w+\(\s*input_ids\b",
                         r"transformers/models/.*: .*(word_embeddings|embed_tokens|wte)\(")
#: Wrappers that hide the model's forward signature from Trainer.
WRAPPERS = ("DataParallel", "DistributedDataParallel")


def _string_labels_behind(probe: ProbeReport) -> str:
    """The same "Unable to create tensor" message: string labels decide."""
    return "string-labels" if any(d.label_kind == "str" for d in seen_datasets(probe)) else ""


def _wrapper_hid_columns(probe: ProbeReport) -> str:
    """A model wrapped in DataParallel hides its forward's arguments from Trainer."""
    return "model-wrapped-dataparallel" if any(t.model_class in WRAPPERS
                                               for t in probe.trainers) else ""


def _parser_refused_a_rename(failure: Failure) -> bool | None:
    """``HfArgumentParser`` refusing options or keys is drift only when one of them is a
    renamed configuration field (a typo or a field of another dataclass is not); any other
    message: no say."""
    if UNUSED_BY_PARSER.search(failure.exc.message) is None:
        return None
    return bool(renamed_in_parser_refusal(failure.exc.message))


def _renamed_option_advice(failure: Failure) -> str:
    """For a parser's refusal: which renamed name to pass instead, and where it came from."""
    renamed = renamed_in_parser_refusal(failure.exc.message)
    if not renamed:
        return ""
    first = renamed[0]
    swaps = ", ".join(f"{o.replacement} for {o.given}" for o in renamed)
    where = "on the command line" if first.option else "in the dict or file the script parses"
    return (f"{first.rename.library} renamed {first.rename.old} to {first.rename.new} "
            f"({first.rename.note}): pass {swaps} {where}")


def _tokens_added_past_rows(failure: Failure) -> bool | None:
    """The failing lookup's facts: a tokenizer grown by added tokens past the embedding's
    rows shows the fault; tokenizers none of which grew past them, or no tokenizer at all
    in the described frames, show another (:func:`_ids_past_rows`); no lookup facts: no
    say."""
    ids = ids_at_embedding(failure)
    if ids is None:
        return None
    return bool(ids.with_added_tokens())


def _ids_past_rows(failure: Failure) -> bool | None:
    """Ids at or past the embedding's last row (or a tokenizer whose own vocabulary is
    larger than it), with no tokenizer grown by added tokens to explain them."""
    ids = ids_at_embedding(failure)
    if ids is None:
        return None
    return (ids.beyond or bool(ids.larger())) and not ids.with_added_tokens()


def _vocab_advice(failure: Failure) -> str:
    """Which side is smaller, in numbers, and what decides the fix."""
    ids = ids_at_embedding(failure)
    if ids is None:
        return ""
    seen = f"token ids up to {ids.max_id} reach" if ids.max_id is not None else "ids reach"
    larger = ids.larger()
    if larger:
        return (f"{seen} an embedding of {ids.rows} rows while the tokenizer has "
                f"{larger[0].get('len')} tokens: a model built from a config takes "
                "vocab_size=len(tokenizer); a checkpoint's model wants the checkpoint's own "
                "tokenizer")
    return (f"{seen} an embedding of {ids.rows} rows and no tokenizer of that size was seen: "
            "the ids come from another vocabulary; tokenize with the model's tokenizer or "
            "build the config with a vocab_size that covers them")


def _unknown_options_advice(failure: Failure) -> str:
    """The refused options or keys, each with the parser's closest option (``difflib``, the
    parser's long options from the facts at the failure) when one is close."""
    items, option = refused_items(failure.exc.message)
    names = [i.partition("=")[0] for i in items if not option or i.startswith("-")]
    parser = next(failure.summaries(kind="parser"), None)
    known = [str(o) for o in (parser or {}).get("options", [])]
    if not option:  # dict or file keys: compare with the fields
        known = sorted({o.lstrip("-").replace("-", "_") for o in known})
    parts = []
    for name in names:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        parts.append(f"{name} (did you mean {close[0]}?)" if close else name)
    if not parts:
        return ""
    where = "the command line" if option else "the dict or file the script parses"
    return (f"HfArgumentParser has no field for {', '.join(parts)}, given on {where}: "
            "correct or remove it")


def _raw_dataset_advice(probe: ProbeReport) -> str:
    raw = [d for d in seen_datasets(probe)
           if d.columns and not any(c in d.columns for c in MODEL_INPUTS)]
    if not raw:
        return ""
    d = raw[0]
    given = (f"Trainer received columns {columns_text(d)} and no input_ids for its "
             f"{d.role} dataset") if probe.trainers else (
        f"the {d.role} dataset has columns {columns_text(d)} and no input_ids")
    return (f"{given}: pass the tokenized dataset (the result of "
            f"dataset.map(tokenize_function, batched=True)) instead of the raw one")


def _ragged_batch_advice(probe: ProbeReport) -> str:
    return ("batches hold sequences of different lengths: give Trainer the tokenizer "
            "(processing_class=tokenizer) or a collator "
            "(data_collator=DataCollatorWithPadding(tokenizer)); with a DataLoader, "
            "collate_fn=DataCollatorWithPadding(tokenizer)")


def label_count_advice(probe: ProbeReport) -> str:
    """Labels against the head: labels that start at 1, or more classes than
    ``num_labels`` (also the advice of a NaN loss, whose cause may be the same)."""
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
                    f"training data has {label_range_text(train)}: create it with "
                    f"num_labels={wanted} (change the value where it is defined)")
    return ""


def _label_column_advice(probe: ProbeReport) -> str:
    for d in seen_datasets(probe):
        if d.label_column and d.label_column not in ("labels",):
            return (f"the dataset's label column is {d.label_column!r} "
                    f"(columns {columns_text(d)}): rename it to what the script asks for, "
                    f"or ask for {d.label_column!r}")
    return ""


def _string_labels_advice(probe: ProbeReport) -> str:
    strings = [d for d in seen_datasets(probe) if d.label_kind == "str"]
    if not strings:
        return ""
    return (f"column {strings[0].label_column!r} holds strings: encode it as class "
            f"ids first (dataset.class_encode_column({strings[0].label_column!r}))")


#: Faces too common to mean logits on their own (numpy's TypeError for any array used as an
#: index, sklearn's for any 2-D float target): metric-on-logits only when the facts show
#: scores beside class ids (``label_list[p]`` with ``p`` a row of token logits in
#: ``run_ner.py``'s ``compute_metrics``; a 2-class accuracy on logits).
_LOGITS_ONLY_WITH_FACTS = (
    r"mix of binary and continuous-multioutput targets",
    r"only integer scalar arrays can be converted to a scalar index",
)
_NEEDS_LOGITS = re.compile("|".join(_LOGITS_ONLY_WITH_FACTS))


def _logits_reach_the_metric(failure: Failure) -> bool | None:
    """True when a described frame holds logits beside the class ids they are compared
    with; for the faces of :data:`_LOGITS_ONLY_WITH_FACTS` nothing less will do (False)."""
    if logits_with_class_ids(failure) is not None:
        return True
    faces = (f"{e.type}: {e.message}" for e in (failure.exc, *failure.exc.chain))
    return False if any(_NEEDS_LOGITS.search(text) for text in faces) else None


def _missing_file_where(diagnosis: Diagnosis, place: Place) -> Diagnosis:
    """Name the missing path and the folder it was looked up from."""
    path = missing_path(diagnosis.evidence)
    looked = f"looked up from {folder_name(place.cwd, place.root)}"
    return Diagnosis(**{**diagnosis.__dict__,
                        "evidence": f"missing file {path!r}, {looked}" if path else
                        f"{diagnosis.evidence} ({looked})",
                        "details": (*diagnosis.details, f"working folder: {place.cwd}")})


#: A data file the script opens does not exist where it is looked up (its relative path is
#: resolved from the folder the script runs in: the caller's cwd, single and batch mode).
MISSING_FILE = Category(
    id="missing-file",
    title="a data file the script opens does not exist",
    types=("FileNotFoundError",),
    patterns=(r"No such file or directory", r"Unable to find", r"does not exist",
              r"not found", r"FileNotFoundError"),
    examples=("v5.txt",),
    explain=_missing_file_where,
    no_recipe="the path is the user's to correct: autofix does not guess where a file is",
    hint="relative paths are looked up from the folder autofix runs the script in (the one "
         "you call autofix from, as `python SCRIPT` would): cd to the folder the path is "
         "relative to, or build it from __file__",
)



def _logits_metrics(facts: SourceFacts) -> list[Diagnosis]:
    """``metric-on-logits`` for each label metric the source reader found given a model's
    raw logits (the reading ``logits-metrics``: :mod:`autofix.toolkit.logits_scan`), at the
    metric call's line."""
    return [Diagnosis(
        category="metric-on-logits",
        evidence=f"{found['name']}() is given the model's logits ({found['predictions']}), "
                 "where it takes class ids",
        line=found["line"], line_text=found["line_text"],
        details=("found by reading the script: the predictions reach the metric from a "
                 "model output's .logits with no argmax on the way; the metric raises on "
                 "them after training",),
        via=SOURCE_SCAN) for found in facts["logits-metrics"]]


COURSE: tuple[Category, ...] = (
    Category(
        id="syntax-error",
        no_recipe="the script does not parse",
        title="the script does not parse",
        types=("SyntaxError", "IndentationError", "TabError"),
        examples=("v5.txt",),
        unparsable=True,
        hint="autofix does not rewrite code that does not parse; fix it at the location shown",
    ),
    Category(
        id="cuda-device-assert",
        no_recipe="the device-side error is classified from the rerun on CPU",
        title="a device-side error reported at the wrong line (CUDA is asynchronous)",
        patterns=(
            r"CUDA error: device-side assert triggered",
            r"CUBLAS_STATUS_\w+",
            r"CUDA error: an illegal memory access",
        ),
        examples=("sim-v5.txt", "sim-v4.txt"),
        # course, chapter 8: "execute the next steps of the training pipeline on the CPU";
        # CUDA_LAUNCH_BLOCKING=1 makes CUDA report synchronously where a GPU stays visible
        rerun_env=MappingProxyType({"CUDA_VISIBLE_DEVICES": "", "CUDA_LAUNCH_BLOCKING": "1"}),
        rerun_note='rerun on CPU with CUDA_VISIBLE_DEVICES="" CUDA_LAUNCH_BLOCKING=1',
    ),
    Category(
        id="api-drift",
        recipes=("drift-adamw", "drift-keyword", "drift-load-metric", "drift-option"),
        title="a course script on today's libraries: a renamed or removed API",
        patterns=(
            r"unexpected keyword argument '(evaluation_strategy|eval_strategy|tokenizer|"
            r"processing_class)'",
            r"cannot import name '(AdamW|load_metric)' from '(transformers|datasets)",
            # a keyword a library trainer or configuration class no longer takes (TRL's
            # SFTTrainer(max_seq_length=), DPOTrainer(beta=), SFTConfig(max_seq_length=))
            r"\b\w*(Trainer|Config|TrainingArguments)\.__init__\(\) got an unexpected "
            r"keyword argument '\w+'",
            # a renamed field given to HfArgumentParser: a command-line option, a dict key
            UNUSED_BY_PARSER.pattern,
        ),
        check=_parser_refused_a_rename,
        advise=_renamed_option_advice,
        before_run=True,
        examples=("v5-evaluation-strategy.txt", "v5-trainer-tokenizer.txt", "v5-adamw.txt",
                  "v4-adamw.txt", "v5-sfttrainer-max-seq-length.txt",
                  "v5-dpotrainer-beta.txt", "v5-parser-renamed-option.txt",
                  "old-parser-renamed-option.txt"),
    ),
    Category(
        id="unknown-parser-option",
        no_recipe="which option was meant is the user's to say: the command line or the "
                  "parsed file is not the script",
        title="an option or key HfArgumentParser has no field for (a typo, or a field of "
              "a dataclass the parser was not given)",
        patterns=(UNUSED_BY_PARSER.pattern,),
        advise=_unknown_options_advice,
        examples=("v5.txt",),
        hint="every option and key must name a field of the dataclasses given to "
             "HfArgumentParser",
    ),
    Category(
        id="string-labels",
        advice=_string_labels_advice,
        title="the label column holds strings, not class ids",
        patterns=(r"too many dimensions 'str'",),
        overrides=("ragged-batch",),
        examples=("v5.txt",),
        hint="class-encode the label column",
    ),
    Category(
        id="map-returns-nothing",
        title="the function given to Dataset.map returns nothing, so the data stay raw",
        patterns=(r"can only concatenate list \(not \"str\"\) to list",),
        examples=("v5.txt",),
    ),
    Category(
        id="map-return-tensors",
        title="the tokenizer is asked for tensors inside the function given to Dataset.map",
        patterns=(
            r"Unable to create tensor, you should probably activate truncation and/or padding",
            r"expected sequence of length \d+ at dim \d+ \(got \d+\)",
        ),
        raised_in=("map-function",),
        examples=("v5.txt", "v4.txt"),
        hint="drop return_tensors in the map function; a collator pads the batches later",
    ),
    Category(
        id="added-tokens-not-resized",
        title="tokens added to the tokenizer, the model's embeddings not resized",
        patterns=(r"index out of range in self",),
        raised_in=("embedding",),
        frame_patterns=WORD_EMBEDDING_FRAMES,
        check=_tokens_added_past_rows,
        examples=("v5.txt", "v4.txt"),
        hint="call model.resize_token_embeddings(len(tokenizer)) after adding tokens",
    ),
    Category(
        id="vocab-size-mismatch",
        title="token ids past the model's embedding rows: a model built for a smaller "
              "vocabulary than its tokenizer's",
        patterns=(r"index out of range in self",),
        raised_in=("embedding",),
        frame_patterns=WORD_EMBEDDING_FRAMES,
        check=_ids_past_rows,
        needs_facts=True,
        advise=_vocab_advice,
        examples=("v5.txt",),
        hint="the embedding needs a row per token id: build the config with "
             "vocab_size=len(tokenizer), or use the checkpoint's own tokenizer",
    ),
    Category(
        id="decode-ignored-labels",
        title="compute_metrics decodes label ids that still hold the -100 padding",
        patterns=(
            r"number too small to fit in target type",
            r"out of range integral type conversion attempted",
            r"can't convert negative int to unsigned",
        ),
        raised_in=("compute-metrics",),
        examples=("v5.txt", "v4.txt"),
        hint="replace -100 by tokenizer.pad_token_id before decoding",
    ),
    Category(
        id="keras3-objects",
        title="Keras 3 objects (tensorflow.keras / keras) given to a tf-keras model",
        patterns=(
            r"Could not interpret (optimizer|loss|metric|callback)\w* identifier: "
            r"<keras\.src\.",
            r"<keras\.src\.\S+ object at 0x[0-9a-f]+> is not a (valid|supported)",
        ),
        examples=("v4-tf.txt",),
        hint="use tf_keras objects with transformers TF models (TensorFlow >= 2.16)",
    ),
    Category(
        id="raw-dataset",
        recipes=("raw-dataset", "map-returns-nothing"),
        refine=_wrapper_hid_columns,
        advice=_raw_dataset_advice,
        title="the untokenized dataset reaches Trainer",
        patterns=(
            r"You must specify exactly one of input_ids or inputs_embeds",
            r"You have to specify either input_ids or inputs_embeds",
            r"No columns in the dataset match the model's forward method signature",
            r"encodings to this method that includes input_ids, but you provided",
        ),
        # the last: transformers' own message, saved by benchmarks/trigger_advice.py
        examples=("v5.txt", "v4.txt", "transformers-trainer-1216.txt"),
    ),
    Category(
        id="ragged-batch",
        recipes=("ragged-batch", "ragged-batch-loader", "ragged-batch-set-collator",
                 "ragged-batch-tf"),
        refine=_string_labels_behind,
        advice=_ragged_batch_advice,
        title="batches are not padded (no tokenizer or padding collator)",
        patterns=(
            r"expected sequence of length \d+ at dim \d+ \(got \d+\)",
            r"Unable to create tensor, you should probably activate truncation and/or padding",
            r"all input arrays must have the same shape",
            r"stack expects each tensor to be equal size",
            # torch's default_collate on rows of Python lists of different lengths
            r"each element in list of batch should be of equal size",
        ),
        raised_in=("collator",),  # raised in a Dataset.map function it is map-return-tensors
        examples=("v5.txt", "v4.txt", "v4-tf.txt"),
    ),
    Category(
        id="metric-on-logits",
        recipes=("metric-on-logits", "metric-on-logits-call"),
        title="compute_metrics compares logits with class ids",
        patterns=(
            r"only (length-1|size-1|0-dimensional) arrays can be converted to Python scalars",
            r"mix of multiclass and continuous-multioutput targets",
            r"operands could not be broadcast together with shapes \(\d+,\d+\) \(\d+,\)",
            *_LOGITS_ONLY_WITH_FACTS,
        ),  # no raised_in: hand-written loops call the metric themselves
        check=_logits_reach_the_metric,
        examples=("v5.txt",),
        source_diagnoses=_logits_metrics,
    ),
    Category(
        id="label-column-name",
        advice=_label_column_advice,
        title="the label column is asked for under the wrong name (label / labels)",
        patterns=(
            r"Column \w+ not found in dataset",
            r"got an unexpected keyword argument 'label'",
        ),
        examples=("v4-tf.txt",),
    ),
    Category(
        id="keras-labels-in-dict",
        title="labels inside the Keras input dict while compile(loss=...) expects them apart",
        patterns=(
            r"No gradients provided for any variable",
            r"Could not find label column\(s\) in input dict",
        ),
        examples=("v4-tf.txt",),
    ),
    MISSING_FILE,
)

