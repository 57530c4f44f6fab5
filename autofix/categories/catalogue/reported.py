"""Faults from the project's corpus of public reports (``sample_scripts/corpus/``,
``manifest.toml`` there names each report), measured on transformers 5.24 / datasets 5.2 /
torch 2.13 CPU. ``hint`` states the cause and the fix; a category with a recipe applies
it, the others report the advice and say why no edit is safe (``no_recipe``)."""

from __future__ import annotations

from autofix.categories.failure import (
    Failure,
    Value,
    is_float,
    is_int_list,
    is_integer,
    is_model_output,
    kind,
    shape,
    type_name,
    user_values,
    user_values_of_kind,
)
from autofix.categories.model import Category
from autofix.categories.script_terms import argument_on, attribute_owner, column_reads


def _label_like(failure: Failure, batch: int | None) -> list[str]:
    """The user's locals that hold class ids for a batch of ``batch`` rows: 1-D integer
    tensors of that length and ``name["key"]`` for such a tensor held in a mapping (a
    batch dict); without any, ``torch.tensor(...)`` of such a list of ints."""
    def ids(value: Value) -> bool:
        return kind(value) == "tensor" and is_integer(value) and batch is not None \
            and shape(value) == (batch,)

    names = [name for name, value in user_values_of_kind(failure, "tensor") if ids(value)]
    lists = []
    for frame in failure.user_frames():
        for name, value in frame.values.items():
            if kind(value) == "mapping" and not type_name(value).startswith("transformers."):
                held = [(k, v) for k, v in value.get("values", {}).items()
                        if isinstance(v, dict)]
                names += [f"{name}[{k!r}]" for k, v in held if ids(v)]
                lists += [f"torch.tensor({name}[{k!r}])" for k, v in held if is_int_list(v, batch)]
            elif is_int_list(value, batch):
                lists.append(f"torch.tensor({name})")
    return list(dict.fromkeys(names or lists))


def _loss_none_advice(failure: Failure) -> str:
    """The model call that made the output read for ``.loss`` got no ``labels``: the
    output's variable from the failing line, what it holds (the probe's summary of the
    ``ModelOutput``), the model's class, and the user's locals that hold the batch's class
    ids (1-D int64 as long as the logits' batch); "" when the output is not known."""
    line = failure.user_line[2] if failure.user_line else ""
    owner = attribute_owner(line, "loss")
    outputs = user_values(failure, owner) if owner.isidentifier() else []
    if not outputs or kind(outputs[0]) != "mapping":
        return ""
    keys = list(outputs[0].get("keys", ()))
    models = [(n, v) for n, v in user_values_of_kind(failure, "model")]
    model = f"`{models[0][0]}` ({type_name(models[0][1]).rsplit('.', 1)[-1]})" if models \
        else "the model"
    if "last_hidden_state" in keys:
        return (f"{failure.lead()}`{owner}` holds hidden states only ({', '.join(keys)}): "
                f"{model} has no task head, so no labels give a loss; load the task class "
                "(…ForSequenceClassification with num_labels, …ForTokenClassification) "
                "or compute the loss from the hidden states yourself")
    logits = outputs[0].get("values", {}).get("logits")
    dims = shape(logits) if isinstance(logits, dict) else None
    labels = _label_like(failure, dims[0] if dims else None)
    given = f"labels={labels[0]}" if len(labels) == 1 else "labels=<the batch's class ids>"
    held = f" (`{labels[0]}` holds them)" if len(labels) == 1 else \
        (f" (one of {', '.join(f'`{n}`' for n in labels)})" if labels else "")
    return (f"{failure.lead()}`{owner}` has no loss, only {', '.join(keys) or 'no fields'}: "
            f"{model} computes the loss only from a `labels` argument, and the call that "
            f"made `{owner}` passed none. Pass {given} to that call{held}")


def _text_columns(keys: tuple[tuple[str, str], ...], columns: list[str]) -> list[str]:
    named = [key for _, key in keys if key in columns]
    return list(dict.fromkeys(named))


def _missing_text_advice(failure: Failure) -> str:
    """Rows without text, dropped in the script's own data: the pandas DataFrame or the
    ``datasets`` split the failing line's columns come from (the largest of the user's
    that has them), with those columns (``chunk["premise"]`` or ``df.premise`` on the line
    gives ``premise``); "" when no such table is in the user's frames."""
    line = failure.user_line[2] if failure.user_line else ""
    keys = column_reads(line)
    frames = sorted(user_values_of_kind(failure, "dataframe"),
                    key=lambda item: -int(item[1].get("num_rows") or 0))
    for name, value in frames:
        columns = _text_columns(keys, list(value.get("columns", ())))
        if columns:
            return (f"{failure.lead()}some rows of `{name}` have no text (NaN) in "
                    f"{', '.join(repr(c) for c in columns)}: drop them before tokenizing, "
                    f"{name} = {name}.dropna(subset={columns!r})")
    splits = sorted(user_values_of_kind(failure, "dataset"),
                    key=lambda item: -int(item[1].get("num_rows") or 0))
    found = [(name, _text_columns(keys, list(value.get("columns", ()))) or
              [c for c, f in value.get("features", {}).items() if "string" in str(f)])
             for name, value in splits]
    found += [(name, _text_columns(keys, list(dict.fromkeys(
        c for cols in value.get("splits", {}).values() for c in cols))))
        for name, value in user_values_of_kind(failure, "datasetdict")]
    for name, columns in found:
        if columns:
            test = " and ".join(f"ex[{c!r}] is not None" for c in columns)
            return (f"{failure.lead()}some rows of `{name}` have no text (None) in "
                    f"{', '.join(repr(c) for c in columns)}: drop them before tokenizing, "
                    f"{name} = {name}.filter(lambda ex: {test})")
    return ""


def _positions_advice(failure: Failure) -> str:
    """The user's model's ``max_position_embeddings`` against the user's tokenizer's
    ``model_max_length`` (what ``truncation=True`` cuts to), each by its variable: pass
    the model's length as ``max_length`` where that tokenizer is called; "" when the
    user's frames hold no model with a position limit."""
    models = [(n, v) for n, v in user_values_of_kind(failure, "model")
              if isinstance(v.get("max_position_embeddings"), int)]
    if not models:
        return ""
    model, summary = models[0]
    limit = int(summary["max_position_embeddings"])
    tokenizers = user_values_of_kind(failure, "tokenizer")
    if not tokenizers:
        return (f"{failure.lead()}`{model}` has {limit} positions and longer sequences "
                f"reach it: truncate the inputs to {limit} tokens before the model")
    tok, facts = tokenizers[0]
    cut = facts.get("model_max_length")
    cuts = f"truncates to {cut} tokens (its model_max_length)" if isinstance(cut, int) \
        else "has no model_max_length, so truncation=True alone does not cut"
    return (f"{failure.lead()}`{tok}` {cuts} and `{model}` has {limit} positions: pass "
            f"max_length={limit} (with truncation=True) where `{tok}(...)` encodes the "
            f"text, or set {tok}.model_max_length = {limit}; never pad beyond it")


def _head_advice(failure: Failure) -> str:
    """The base model given to ``Trainer`` by its variable and class, the task class of
    the same family to load instead (``BertModel`` -> ``BertForSequenceClassification``)
    and ``num_labels`` from the training split's class ids; "" when the user's frames hold
    no base model."""
    bases = [(n, v) for n, v in user_values_of_kind(failure, "model")
             if type_name(v).rsplit(".", 1)[-1].endswith("Model")]
    if not bases:
        return ""
    name, value = bases[0]
    cls = type_name(value).rsplit(".", 1)[-1]
    family = cls.removesuffix("Model")
    train = next((d for t in failure.probe.trainers for d in t.datasets
                  if d.role == "train" and d.label_column), None)
    classes = None
    if train is not None and train.label_kind == "int":
        classes = train.label_classes or (int(train.label_max) + 1
                                          if train.label_max is not None else None)
    labels = f"num_labels={classes}" if classes else "num_labels=<the number of classes>"
    column = f" (the {train.label_column!r} column's class ids)" \
        if train is not None and classes else ""
    return (f"{failure.lead()}`{name}` is a {cls}: a base model returns hidden states and no "
            f"loss. Load the task class instead, {family}ForSequenceClassification (or "
            f"AutoModelForSequenceClassification) with {labels}{column}, "
            f"{family}ForTokenClassification for per-token labels")


def _float_ids_from_data(failure: Failure) -> str:
    """Float ids made by the data a trainer batches: the ``data_collator`` named on the
    failing line (the user's own collator), else the user's dataset whose ``input_ids``
    feature is a float; "" when neither is seen."""
    line = failure.user_line[2] if failure.user_line else ""
    collator = argument_on(line, "data_collator")
    if collator and collator.isidentifier():
        return (f"{failure.lead()}the batches of `{collator}` (the data_collator) hold "
                "input_ids as floats; the embedding looks ids up as int64: build them "
                f"in `{collator}` with dtype=torch.long (or call .long() on them)")
    for name, value in user_values_of_kind(failure, "dataset"):
        feature = str(value.get("features", {}).get("input_ids", ""))
        if "float" in feature:
            return (f"{failure.lead()}the input_ids column of `{name}` holds floats "
                    f"({feature}); the embedding looks ids up as int64: cast it, {name} = "
                    f"{name}.cast_column(\"input_ids\", List(Value(\"int64\"))) (from "
                    "datasets import List, Value)")
    return ""


def _float_ids_advice(failure: Failure) -> str:
    """The user's float tensor of whole token ids that reached the embedding (a local, or
    a batch dict's ``input_ids``), by name and dtype, made int64 where the script builds
    it; else :func:`_float_ids_from_data`."""
    def whole_floats(value: Value) -> bool:
        return kind(value) == "tensor" and is_float(value) and bool(value.get("integral"))

    floats = [(name, value) for name, value in user_values_of_kind(failure, "tensor")
              if whole_floats(value)]
    floats += [(f"{name}[{key!r}]", held) for name, value in
               user_values_of_kind(failure, "mapping") if not is_model_output(value)
               for key, held in (value.get("values") or {}).items()
               if key == "input_ids" and isinstance(held, dict) and whole_floats(held)]
    if not floats:
        return _float_ids_from_data(failure)
    name, value = floats[0]
    dtype = str(value.get("dtype", "float")).removeprefix("torch.")
    dims = "x".join(str(d) for d in shape(value) or ())
    return (f"{failure.lead()}`{name}` holds token ids as {dtype} ({dims}); the embedding "
            f"looks ids up as int64: build `{name}` as int64 where the script makes it "
            "(dtype=torch.long where it is built from a list), or pass "
            f"`{name}.long()` to the model")


#: The reported faults (``sample_scripts/corpus/``,
#: ``manifest.toml`` there names each report). Messages measured on transformers 5.24 /
#: datasets 5.2 / torch 2.13 CPU. ``hint`` states the cause and the fix; a category with
#: a recipe applies it, the others report the advice.
REPORTED: tuple[Category, ...] = (
    Category(
        id="token-labels-not-padded",
        recipes=("lm-labels-collator", "token-classification-collator"),
        title="per-token labels with a collator that pads the inputs but not the labels",
        patterns=(r"features \(`labels` in this case\) have excessive nesting",),
        overrides=("ragged-batch",),
        examples=("v5.txt", "v5-causal-lm.txt"),
        hint="per-token labels need a collator that pads them with -100: "
             "DataCollatorForTokenClassification(tokenizer) for token classification, "
             "DataCollatorForSeq2Seq(tokenizer) for a causal or seq2seq language model "
             "whose rows bring their own labels",
    ),
    Category(
        id="no-pad-token",
        title="the tokenizer (or the model's config) has no padding token",
        patterns=(
            r"Asking to pad but the tokenizer does not have a padding token",
            r"Cannot handle batch sizes > 1 if no padding token is defined",
        ),
        examples=("v5-collator.txt", "v5-seqcls.txt"),
        hint="GPT-2 style tokenizers have no pad token: set tokenizer.pad_token = "
             "tokenizer.eos_token (the attention mask hides the padding) and "
             "model.config.pad_token_id = tokenizer.pad_token_id",
    ),
    Category(
        id="mlm-without-mask-token",
        title="a masked-LM collator on a tokenizer without a mask token (a causal model)",
        patterns=(r"does not have a mask token which is necessary for masked language "
                  r"modeling",),
        examples=("v5.txt",),
        hint="a causal language model trains with DataCollatorForLanguageModeling(tokenizer, "
             "mlm=False)",
    ),
    Category(
        id="head-size-mismatch",
        title="a checkpoint whose head was trained for another number of labels",
        patterns=(
            r"You set `ignore_mismatched_sizes` to `False`, thus raising an error",
            r"size mismatch for \S+: copying a param with shape",
        ),
        examples=("v5.txt",),
        hint="load it with ignore_mismatched_sizes=True and the new num_labels: the head is "
             "initialised afresh and trained on your labels",
    ),
    Category(
        id="longer-than-positions",
        frame_guards=(r"modeling_\w+\.py:\w+: .*(position|token_type)",),
        no_recipe="which length to truncate to is the model's and the data's: autofix advises",
        title="sequences longer than the model's position embeddings",
        patterns=(
            r"The expanded size of the tensor \(\d+\) must match the existing size \(\d+\)",
            r"The size of tensor a \(\d+\) must match the size of tensor b \(\d+\) at "
            r"non-singleton dimension 1",
        ),
        examples=("v5-no-model-max-length.txt", "v5-max-length.txt"),
        advise=_positions_advice,
        hint="truncate to the model's max_position_embeddings: a tokenizer loaded without "
             "model_max_length does not truncate with truncation=True alone; pass "
             "max_length=model.config.max_position_embeddings (or set "
             "tokenizer.model_max_length), and never pad beyond it",
    ),
    Category(
        id="model-without-head",
        no_recipe="the task head (and its num_labels) is the user's choice: autofix advises",
        title="a base model without a task head (AutoModel) given to Trainer",
        advise=_head_advice,
        patterns=(r"The model did not return a loss from the inputs, only the following "
                  r"keys: last_hidden_state",),
        examples=("v5.txt",),
        hint="AutoModel returns hidden states, not a loss: load the task class "
             "(AutoModelForSequenceClassification with num_labels, "
             "AutoModelForTokenClassification, ...) so the labels give a loss",
    ),
    Category(
        id="dataframe-to-trainer",
        frame_guards=(r"[/\\]pandas[/\\]", r"fetch\.py:\w+: "),
        title="a pandas DataFrame given to Trainer as a dataset",
        types=("KeyError",),
        examples=("v5.txt",),
        hint="Trainer indexes datasets by row; convert the DataFrame with "
             "datasets.Dataset.from_pandas(df, preserve_index=False)",
    ),
    Category(
        id="model-wrapped-dataparallel",
        title="the model is wrapped in DataParallel before it is given to Trainer",
        hint="Trainer wraps the model for several GPUs itself; the wrapper's forward(*inputs, "
             "**kwargs) hides the model's arguments, so every column is dropped: give "
             "Trainer the model, not torch.nn.DataParallel(model)",
    ),
    Category(
        id="loss-is-none",
        title="the model returned no loss in a hand-written loop (labels not passed as "
              "`labels`)",
        patterns=(r"'NoneType' object has no attribute 'backward'",),
        examples=("v5.txt",),
        advise=_loss_none_advice,
        hint="Hugging Face models compute the loss only from a `labels` argument: rename "
             "the dataset column (ds = ds.rename_column(\"label\", \"labels\")) or pass "
             "labels=... to the model",
    ),
    Category(
        id="no-checkpoint-to-resume",
        no_recipe="whether to start afresh or point at a checkpoint is the user's choice",
        title="resume_from_checkpoint with no checkpoint in the output directory",
        patterns=(r"No valid checkpoint found in output directory",
                  r"Can't find a valid checkpoint at"),
        examples=("v5.txt",),
        hint="resume_from_checkpoint=True needs a checkpoint-* folder in output_dir from an "
             "earlier run with saving on: start without it, or pass the checkpoint's path",
    ),
    Category(
        id="cuda-unavailable",
        title="the script asks for a CUDA device on a machine without one",
        patterns=(r"Torch not compiled with CUDA enabled",
                  r"Found no NVIDIA driver on your system",
                  r"No CUDA GPUs are available"),
        examples=("v5.txt",),
        hint="choose the device at run time: torch.device(\"cuda\" if "
             "torch.cuda.is_available() else \"cpu\")",
    ),
    Category(
        id="missing-text-values",
        no_recipe="dropping rows changes the data: autofix advises",
        title="rows without text (None) reach the tokenizer",
        patterns=(r"TextEncodeInput must be Union\[TextInputSequence",
                  r"TextInputSequence must be str"),
        examples=("v5.txt",),
        advise=_missing_text_advice,
        hint="some rows have no text (null/NaN in the file): drop them before tokenizing, "
             "ds = ds.filter(lambda ex: ex[\"text\"] is not None) for each text column",
    ),
    Category(
        id="float-token-ids",
        recipes=("ids-long", "cast-where-made"),
        title="token ids in a float tensor reach the embedding lookup",
        patterns=(r"Expected tensor for argument #1 'indices' to have one of the following "
                  r"scalar types: Long, Int",),
        examples=("v5.txt",),
        advise=_float_ids_advice,
        hint="torch.Tensor(...) makes float32; build id tensors with torch.tensor(ids) "
             "(int64) or call .long() on them",
    ),
)

