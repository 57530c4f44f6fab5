"""The registry of fault categories: how each one shows, with real examples.

Ids and messages come from the project's fault catalogue (``shared/faults.md``), measured
on transformers 5.24 / datasets 5.2 / torch 2.13 (``v5``) and transformers 4.57.6 /
datasets 5.0.1 (``v4``) on CPU. Each category lists example tracebacks saved from real
runs under ``autofix/examples/<id>/``; the test suite classifies every one of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

EXAMPLES_DIR = Path(__file__).parent / "examples"
#: Learning rates at or above this are too high to fine-tune a pretrained transformer: the
#: HF course (chapter 8) advises 1e-5 to 1e-4; 1e-3 is Adam's and Keras' "adam" default.
LR_TOO_HIGH = 1e-3


@dataclass(frozen=True)
class Category:
    """One fault category.

    ``patterns`` are regular expressions searched in ``"Type: message"`` of the exception
    and of the exceptions it was chained from; ``types`` restricts by exception class name
    (empty: any). ``examples`` name files in ``autofix/examples/<id>/``.
    """

    id: str
    title: str
    patterns: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    hint: str = ""
    #: Categories this one wins over when both match the same exception chain (the same
    #: message can have two causes; a chained cause decides).
    overrides: tuple[str, ...] = ()
    compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", tuple(re.compile(p) for p in self.patterns))

    def matches(self, exc_type: str, message: str) -> bool:
        """True when an exception of class ``exc_type`` (short name) with ``message`` shows
        this fault."""
        if self.types and exc_type not in self.types:
            return False
        if not self.compiled:
            return bool(self.types)
        text = f"{exc_type}: {message}"
        return any(p.search(text) for p in self.compiled)

    def matching_line(self, message: str) -> str:
        """The first line of ``message`` a pattern matches ("" when none does).

        TensorFlow wraps the real error deep in a long message ("Graph execution error:
        ... Received a label value of 2 ..."); this is the line worth quoting.
        """
        for line in message.splitlines():
            if any(p.search(line) for p in self.compiled):
                return line.strip()
        return ""

    def example_paths(self) -> list[Path]:
        """The saved example tracebacks of this category."""
        return [EXAMPLES_DIR / self.id / name for name in self.examples]


CATEGORIES: tuple[Category, ...] = (
    Category(
        id="syntax-error",
        title="the script does not parse",
        types=("SyntaxError", "IndentationError", "TabError"),
        examples=("v5.txt",),
        hint="autofix does not rewrite code that does not parse; fix it at the location shown",
    ),
    Category(
        id="cuda-device-assert",
        title="a device-side error reported at the wrong line (CUDA is asynchronous)",
        patterns=(
            r"CUDA error: device-side assert triggered",
            r"CUBLAS_STATUS_\w+",
            r"CUDA error: an illegal memory access",
        ),
        examples=("sim-v5.txt", "sim-v4.txt"),
    ),
    Category(
        id="api-drift",
        title="a course script on today's libraries: a renamed or removed API",
        patterns=(
            r"unexpected keyword argument '(evaluation_strategy|eval_strategy|tokenizer|"
            r"processing_class)'",
            r"cannot import name '(AdamW|load_metric)' from '(transformers|datasets)",
        ),
        examples=("v5-evaluation-strategy.txt", "v5-trainer-tokenizer.txt", "v5-adamw.txt",
                  "v4-adamw.txt"),
    ),
    Category(
        id="string-labels",
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
        id="raw-dataset",
        title="the untokenized dataset reaches Trainer",
        patterns=(
            r"You must specify exactly one of input_ids or inputs_embeds",
            r"You have to specify either input_ids or inputs_embeds",
            r"No columns in the dataset match the model's forward method signature",
            r"encodings to this method that includes input_ids, but you provided",
        ),
        examples=("v5.txt", "v4.txt"),
    ),
    Category(
        id="ragged-batch",
        title="batches are not padded (no tokenizer or padding collator)",
        patterns=(
            r"expected sequence of length \d+ at dim \d+ \(got \d+\)",
            r"Unable to create tensor, you should probably activate truncation and/or padding",
            r"all input arrays must have the same shape",
            r"stack expects each tensor to be equal size",
        ),
        examples=("v5.txt", "v4.txt", "v4-tf.txt"),
    ),
    Category(
        id="metric-on-logits",
        title="compute_metrics compares logits with class ids",
        patterns=(
            r"only (length-1|size-1|0-dimensional) arrays can be converted to Python scalars",
            r"mix of multiclass and continuous-multioutput targets",
            r"operands could not be broadcast together with shapes \(\d+,\d+\) \(\d+,\)",
        ),
        examples=("v5.txt",),
    ),
    Category(
        id="label-column-name",
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
    Category(
        id="label-out-of-range",
        title="labels outside the classification head (num_labels too small)",
        patterns=(
            r"Target -?\d+ is out of bounds",
            r"Received a label value of -?\d+ which is outside the valid range",
        ),
        examples=("v5.txt", "v4.txt", "v4-tf.txt"),
    ),
)

#: Faults from the project's corpus of public reports (``sample_scripts/corpus/``,
#: ``manifest.toml`` there names each report). Messages measured on transformers 5.24 /
#: datasets 5.2 / torch 2.13 CPU. ``hint`` states the cause and the fix; a category with
#: a recipe applies it, the others report the advice.
REPORTED: tuple[Category, ...] = (
    Category(
        id="token-labels-not-padded",
        title="per-token labels with a collator that pads the inputs but not the labels",
        patterns=(r"features \(`labels` in this case\) have excessive nesting",),
        overrides=("ragged-batch",),
        examples=("v5.txt",),
        hint="token classification needs DataCollatorForTokenClassification(tokenizer), "
             "which pads the labels with -100",
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
        hint="Hugging Face models compute the loss only from a `labels` argument: rename "
             "the dataset column (ds = ds.rename_column(\"label\", \"labels\")) or pass "
             "labels=... to the model",
    ),
    Category(
        id="no-checkpoint-to-resume",
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
        title="rows without text (None) reach the tokenizer",
        patterns=(r"TextEncodeInput must be Union\[TextInputSequence",
                  r"TextInputSequence must be str"),
        examples=("v5.txt",),
        hint="some rows have no text (null/NaN in the file): drop them before tokenizing, "
             "ds = ds.filter(lambda ex: ex[\"text\"] is not None) for each text column",
    ),
    Category(
        id="float-token-ids",
        title="token ids in a float tensor reach the embedding lookup",
        patterns=(r"Expected tensor for argument #1 'indices' to have one of the following "
                  r"scalar types: Long, Int",),
        examples=("v5.txt",),
        hint="torch.Tensor(...) makes float32; build id tensors with torch.tensor(ids) "
             "(int64) or call .long() on them",
    ),
)

#: Training symptoms, confirmed by the probe while the script trains (no traceback).
SYMPTOMS: tuple[Category, ...] = (
    Category(
        id="nan-loss",
        title="the loss became NaN or infinite",
        hint="the evidence names the first non-finite step and the samples of that batch",
    ),
    Category(
        id="stalled-loss",
        title="the loss stays near the chance level ln(C) or stops falling",
        hint="autofix knows two root causes: a string Keras loss on logits and a learning "
             "rate of 1e-3 or more",
    ),
)

#: Root causes of a symptom: they have recipes but no traceback of their own.
ROOT_CAUSES: tuple[Category, ...] = (
    Category(
        id="keras-string-loss",
        title="a Keras loss given as a string (from_logits=False) on a model that outputs "
              "logits",
    ),
    Category(
        id="lr-too-high",
        title="a learning rate of 1e-3 or more on a pretrained transformer",
    ),
)

#: Diagnoses that are not faults of the script's code but of the run itself.
TIMEOUT = Category(
    id="timeout",
    title="the script ran past --timeout and was killed",
    hint="raise --timeout, or check for a hang (a blocking read, a dead lock, a huge dataset)",
)
UNKNOWN = Category(
    id="unknown",
    title="a failure autofix has no category for",
    hint="the key traceback lines are shown; no recipe was tried",
)

CATEGORIES = (*CATEGORIES, *REPORTED)

_BY_ID = {c.id: c for c in (*CATEGORIES, *SYMPTOMS, *ROOT_CAUSES, TIMEOUT, UNKNOWN)}


def get_category(category_id: str) -> Category:
    """The category with id ``category_id``; raises ``KeyError`` for an unknown id."""
    return _BY_ID[category_id]


def all_categories() -> tuple[Category, ...]:
    """Every category: traceback ones, symptoms, root causes, ``timeout``, ``unknown``."""
    return (*CATEGORIES, *SYMPTOMS, *ROOT_CAUSES, TIMEOUT, UNKNOWN)
