"""Faults from the project's corpus of public reports (``sample_scripts/corpus/``,
``manifest.toml`` there names each report), measured on transformers 5.24 / datasets 5.2 /
torch 2.13 CPU. ``hint`` states the cause and the fix; a category with a recipe applies
it, the others report the advice and say why no edit is safe (``no_recipe``)."""

from __future__ import annotations

from autofix.categories.model import Category

#: The reported faults (``sample_scripts/corpus/``,
#: ``manifest.toml`` there names each report). Messages measured on transformers 5.24 /
#: datasets 5.2 / torch 2.13 CPU. ``hint`` states the cause and the fix; a category with
#: a recipe applies it, the others report the advice.
REPORTED: tuple[Category, ...] = (
    Category(
        id="token-labels-not-padded",
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
        hint="truncate to the model's max_position_embeddings: a tokenizer loaded without "
             "model_max_length does not truncate with truncation=True alone; pass "
             "max_length=model.config.max_position_embeddings (or set "
             "tokenizer.model_max_length), and never pad beyond it",
    ),
    Category(
        id="model-without-head",
        no_recipe="the task head (and its num_labels) is the user's choice: autofix advises",
        title="a base model without a task head (AutoModel) given to Trainer",
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
        no_recipe="the labels may be passed several ways: autofix advises",
        title="the model returned no loss in a hand-written loop (labels not passed as "
              "`labels`)",
        patterns=(r"'NoneType' object has no attribute 'backward'",),
        examples=("v5.txt",),
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
        hint="some rows have no text (null/NaN in the file): drop them before tokenizing, "
             "ds = ds.filter(lambda ex: ex[\"text\"] is not None) for each text column",
    ),
    Category(
        id="float-token-ids",
        no_recipe="no recipe rebuilds the id tensors yet",
        title="token ids in a float tensor reach the embedding lookup",
        patterns=(r"Expected tensor for argument #1 'indices' to have one of the following "
                  r"scalar types: Long, Int",),
        examples=("v5.txt",),
        hint="torch.Tensor(...) makes float32; build id tensors with torch.tensor(ids) "
             "(int64) or call .long() on them",
    ),
)

