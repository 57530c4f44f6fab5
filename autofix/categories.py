"""The registry of fault categories: how each one shows, with real examples.

Ids and messages come from the project's fault catalogue (``shared/faults.md``), measured
on transformers 5.24 / datasets 5.2 / torch 2.13 (``v5``) and transformers 4.57.6 /
datasets 5.0.1 (``v4``) on CPU. Each category lists example tracebacks saved from real
runs under ``autofix/examples/<id>/``; the test suite classifies every one of them.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from autofix.child.preflight import PROBABILITY_LOSSES
from autofix.types import ExceptionInfo, Frame, ProbeReport

EXAMPLES_DIR = Path(__file__).parent / "examples"

#: Where an error can be raised: site name -> regex searched in ``"file:function: text"``
#: of a frame (file with ``/`` separators). :func:`raised_site` takes the innermost frame
#: that matches one of them, in this order within a frame. The same message means
#: different faults at different sites: "Unable to create tensor" from a collator is an
#: unpadded batch, from the function given to ``Dataset.map`` a tokenizer asked for
#: tensors (measured on transformers 5.24 and 4.57.6).
SITES: tuple[tuple[str, str], ...] = (
    ("collator", r"transformers/data/data_collator\.py:|torch/utils/data/_utils/collate\.py:"
                 r"|datasets/utils/tf_utils\.py:|:\w*collat\w*: |:to_tf_dataset: "),
    ("map-function", r"datasets/arrow_dataset\.py:(apply_function\w*|_map_single|map): "
                     r"|datasets/dataset_dict\.py:map: "),
    ("embedding", r"torch/nn/functional\.py:embedding: "),
    ("loss", r"torch/nn/functional\.py:(cross_entropy|nll_loss|mse_loss|l1_loss|smooth_l1_loss"
             r"|binary_cross_entropy\w*): |torch/nn/modules/loss\.py:|transformers/loss/"
             r"|(tf_keras|keras)/src/(losses|backend)\.py:|keras/src/losses/"),
    ("compute-metrics", r"transformers/trainer\w*\.py:\w+: .*compute_metrics\("),
    ("model-forward", r"transformers/models/.*:(forward|call): |transformers/modeling_\w+\.py:"),
    ("optimizer", r"(tf_keras|keras)/src/optimizers/|keras/src/optimizers/"),
    ("training-arguments", r"transformers/training_args\w*\.py:"),
    ("trainer", r"transformers/trainer\w*\.py:"),
)
_SITES = tuple((name, re.compile(pattern)) for name, pattern in SITES)
#: Learning rates at or above this are too high to fine-tune a pretrained transformer: the
#: HF course (chapter 8) advises 1e-5 to 1e-4; 1e-3 is Adam's and Keras' "adam" default.
LR_TOO_HIGH = 1e-3


class CategoryId(str, enum.Enum):
    """The built-in category ids (``shared/faults.md``). Category ids are plain strings
    everywhere (``Diagnosis.category``, commit trailers, JSON): these members compare
    equal to them. Categories added later (other modules, plugins) register a
    :class:`Category` with :func:`register_category` and need no member here."""

    SYNTAX_ERROR = "syntax-error"
    CUDA_DEVICE_ASSERT = "cuda-device-assert"
    API_DRIFT = "api-drift"
    STRING_LABELS = "string-labels"
    MAP_RETURNS_NOTHING = "map-returns-nothing"
    RAW_DATASET = "raw-dataset"
    RAGGED_BATCH = "ragged-batch"
    METRIC_ON_LOGITS = "metric-on-logits"
    LABEL_COLUMN_NAME = "label-column-name"
    KERAS_LABELS_IN_DICT = "keras-labels-in-dict"
    LABEL_OUT_OF_RANGE = "label-out-of-range"
    NAN_LOSS = "nan-loss"
    STALLED_LOSS = "stalled-loss"
    KERAS_STRING_LOSS = "keras-string-loss"
    LR_TOO_HIGH = "lr-too-high"
    TIMEOUT = "timeout"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return str(self.value)


class Kind(str, enum.Enum):
    """How a category shows: a traceback, a training symptom the probe confirms, a root
    cause found behind a symptom, or a property of the run itself."""

    ERROR = "error"
    SYMPTOM = "symptom"
    ROOT_CAUSE = "root-cause"
    RUN = "run"


@dataclass(frozen=True)
class RootCause:
    """A rule naming a root cause behind a symptom from the run's facts: when
    ``found(probe)`` holds, ``category`` (which has recipes) is a cause."""

    category: str
    found: Callable[[ProbeReport], bool]
    why: str = ""


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
    kind: Kind = Kind.ERROR
    #: Environment for a rerun before this category is trusted: the first traceback is
    #: not the real one (a CUDA device-side assert points at the wrong line), so the
    #: engine reruns with this environment and classifies that run instead.
    rerun_env: Mapping[str, str] | None = None
    #: Shown while the rerun runs and in the commit ("rerun on CPU with ...").
    rerun_note: str = ""
    #: For symptoms: the rules naming fixable root causes from the run's facts, in order.
    root_causes: tuple[RootCause, ...] = ()
    #: Sites (:data:`SITES`) the error must be raised in (empty: anywhere). Only an
    #: exception without any frame (a bare message) is not restricted.
    raised_in: tuple[str, ...] = ()
    #: Regexes of which one must match ``"file:function: text"`` of some frame (empty:
    #: none needed); e.g. the embedding lookup of ``input_ids``, not of positions.
    frame_patterns: tuple[str, ...] = ()
    compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", tuple(re.compile(p) for p in self.patterns))

    def matches(self, exc_type: str, message: str, site: str = "",
                frames: tuple[str, ...] = ()) -> bool:
        """True when an exception of class ``exc_type`` (short name) with ``message``,
        raised at ``site`` (:func:`raised_site`, "" unknown) with ``frames`` (``"file:
        function: text"`` strings, see :func:`frame_keys`) shows this fault."""
        if self.types and exc_type not in self.types:
            return False
        if self.raised_in and frames and site not in self.raised_in:
            return False
        if self.frame_patterns and not any(re.search(p, f) for p in self.frame_patterns
                                           for f in frames):
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


#: A data file the script opens does not exist where it is looked up (its relative path is
#: resolved from the folder the script runs in: the caller's cwd, single and batch mode).
MISSING_FILE = Category(
    id="missing-file",
    title="a data file the script opens does not exist",
    types=("FileNotFoundError",),
    patterns=(r"No such file or directory", r"Unable to find", r"does not exist",
              r"not found", r"FileNotFoundError"),
    examples=("v5.txt",),
    hint="relative paths are looked up from the folder autofix runs the script in (the one "
         "you call autofix from, as `python SCRIPT` would): cd to the folder the path is "
         "relative to, or build it from __file__",
)


_MESSAGE_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)[ *]*$')
#: TensorFlow graph-mode errors carry the real stack (and error) inside their message.
_GRAPH_HEADERS = ("in user code:", "defined at (most recent call last):")


def message_frames(message: str) -> tuple[Frame, ...]:
    """The frames TensorFlow lists inside a graph-mode error's message (``in user code:``,
    ``Detected at node ... defined at (most recent call last):``), outermost first, each
    with the source line that follows it when there is one; empty for other messages."""
    if not any(h in message for h in _GRAPH_HEADERS):
        return ()
    frames: list[Frame] = []
    lines = message.splitlines()
    for i, line in enumerate(lines):
        found = _MESSAGE_FRAME.match(line)
        if found:
            after = lines[i + 1].strip() if i + 1 < len(lines) else ""
            text = "" if _MESSAGE_FRAME.match(after) else after
            frames.append(Frame(found[1], int(found[2]), found[3], text))
    return tuple(frames)


def inner_message(message: str) -> str:
    """The real error of a TensorFlow graph-mode message (the first line after the last
    frame it lists, e.g. ``ValueError: Could not find label column(s) ...`` under ``in
    user code:``); "" for other messages or when there is none."""
    if not message_frames(message):
        return ""
    lines = message.splitlines()
    last = max(i for i, line in enumerate(lines) if _MESSAGE_FRAME.match(line))
    rest = [line.strip() for line in lines[last + 1:] if line.strip()]
    if rest and lines[last + 1].strip() == rest[0] and len(rest) > 1 \
            and lines[last + 1].startswith("        "):
        rest = rest[1:]  # the source line of the last frame
    return rest[0] if rest else ""


def frame_keys(frames: tuple[Frame, ...]) -> tuple[str, ...]:
    """``"file:function: text"`` of each frame, file with ``/`` separators (what
    :data:`SITES` and ``frame_patterns`` are matched against)."""
    return tuple(f"{f.file.replace(chr(92), '/')}:{f.function}: {f.text}" for f in frames)


def all_frames(exc: ExceptionInfo) -> tuple[Frame, ...]:
    """The frames of ``exc``, outermost first, then those inside its message (a TensorFlow
    graph error raised by an op runs deeper than the Python frame that executed it)."""
    return (*exc.frames, *message_frames(exc.message))


def raised_site(exc: ExceptionInfo) -> str:
    """The site (:data:`SITES`) of the innermost frame of ``exc`` that matches one, else
    of the exceptions it was chained from (a cause raised deep inside a tokenizer takes
    the site of the exception that wraps it); "" when no frame matches."""
    for candidate in (exc, *exc.chain):
        for key in reversed(frame_keys(all_frames(candidate))):
            for name, pattern in _SITES:
                if pattern.search(key):
                    return name
    return ""


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
        # course, chapter 8: "execute the next steps of the training pipeline on the CPU";
        # CUDA_LAUNCH_BLOCKING=1 makes CUDA report synchronously where a GPU stays visible
        rerun_env=MappingProxyType({"CUDA_VISIBLE_DEVICES": "", "CUDA_LAUNCH_BLOCKING": "1"}),
        rerun_note='rerun on CPU with CUDA_VISIBLE_DEVICES="" CUDA_LAUNCH_BLOCKING=1',
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
        id="training-args-conflict",
        title="training arguments that contradict each other or name what evaluation lacks",
        patterns=(
            r"--load_best_model_at_end requires the save and eval strategy to match",
            r"--load_best_model_at_end requires the saving steps to be a (round )?multiple",
            r"The `metric_for_best_model` training argument is set to",
            # other contradictions TrainingArguments.__post_init__ names (transformers 5.24);
            # no recipe yet: classified, with the library's message as the advice
            r"lr_scheduler_type \w+ requires an eval strategy",
            r"evaluation strategy \S+ requires either non-zero --eval_steps or --logging_steps",
            r"Your setup doesn't support bf16/gpu\. You need to assign use_cpu",
            r"At most one of fp16 and bf16 can be True",
            r"--dataloader_prefetch_factor can only be set when data is loaded in a different",
        ),
        raised_in=("training-arguments", "trainer"),
        examples=("v5-strategies.txt", "v4-strategies.txt", "v5-best-metric.txt",
                  "v5-plateau.txt", "v5-eval-steps.txt", "v5-bf16-cpu.txt"),
        hint="the library's message names the argument to change",
    ),
    Category(
        id="float-labels-on-classifier",
        title="float targets (scores) on a single-label classification head",
        patterns=(
            r"expected target dtype to be Long or Byte, but got Float",
            r"expected scalar type Long but found Float",
            # num_labels > 1 and float labels: transformers infers multi-label (BCE) and
            # gets one score per row for a row of logits
            r"Target size \(torch\.Size\(\[\d+\]\)\) must be the same as input size "
            r"\(torch\.Size\(\[\d+, \d+\]\)\)",
        ),
        raised_in=("loss",),
        examples=("v5.txt", "v5-num-labels-2.txt"),  # raised by torch: same on 4.57.6
        hint="scores need a 1-output regression head (num_labels=1, "
             "problem_type='regression'); class ids stored as floats need casting to int",
    ),
    Category(
        id="int-labels-on-multi-label-head",
        title="integer multi-hot targets on a multi-label head (BCE needs floats)",
        patterns=(r"result type Float can't be cast to the desired output type Long",),
        raised_in=("loss",),
        examples=("v5.txt", "v4.txt"),
        hint="cast the multi-hot label vectors to float (e.g. ds.cast_column('labels', "
             "Sequence(Value('float32'))))",
    ),
    Category(
        id="added-tokens-not-resized",
        title="tokens added to the tokenizer, the model's embeddings not resized",
        patterns=(r"index out of range in self",),
        raised_in=("embedding",),
        # the lookup of input_ids (word embeddings), not of positions or token types
        frame_patterns=(r"transformers/models/.*: .*\w+\(\s*input_ids\b",
                        r"transformers/models/.*: .*(word_embeddings|embed_tokens|wte)\(",),
        examples=("v5.txt", "v4.txt"),
        hint="call model.resize_token_embeddings(len(tokenizer)) after adding tokens",
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
        raised_in=("collator",),  # raised in a Dataset.map function it is map-return-tensors
        examples=("v5.txt", "v4.txt", "v4-tf.txt"),
    ),
    Category(
        id="metric-on-logits",
        title="compute_metrics compares logits with class ids",
        patterns=(
            r"only (length-1|size-1|0-dimensional) arrays can be converted to Python scalars",
            r"mix of multiclass and continuous-multioutput targets",
            r"operands could not be broadcast together with shapes \(\d+,\d+\) \(\d+,\)",
        ),  # no raised_in: hand-written loops call the metric themselves
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
        raised_in=("loss",),
        examples=("v5.txt", "v4.txt", "v4-tf.txt"),
    ),
    MISSING_FILE,
)

def _keras_string_loss(probe: ProbeReport) -> bool:
    """A Keras cross-entropy that reads probabilities (a string name or loss function of
    :data:`PROBABILITY_LOSSES`, or a loss object with ``from_logits=False``) on a Hugging
    Face model, which outputs logits: the loss is computed on the wrong quantity. The
    model's internal loss (``compile`` without ``loss``: Hugging Face's ``dummy_loss``) and
    a loss object with ``from_logits=True`` are not this fault."""
    return any(k.hf_model and (k.loss in PROBABILITY_LOSSES or k.from_logits is False)
               for k in probe.keras)


def _lr_too_high(probe: ProbeReport) -> bool:
    """A learning rate at or above :data:`LR_TOO_HIGH` at any recorded step."""
    rates = [s.lr for s in probe.steps if s.lr is not None]
    return bool(rates) and max(rates) >= LR_TOO_HIGH * (1 - 1e-6)  # float32 1e-3 > 1e-3

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
        kind=Kind.SYMPTOM,
    ),
    Category(
        id="stalled-loss",
        title="the loss stays near the chance level ln(C) or stops falling",
        hint="autofix knows two root causes: a string Keras loss on logits and a learning "
             "rate of 1e-3 or more",
        kind=Kind.SYMPTOM,
        root_causes=(
            RootCause("keras-string-loss", _keras_string_loss,
                      "a string Keras loss on a model that outputs logits"),
            RootCause("lr-too-high", _lr_too_high, "a learning rate of 1e-3 or more"),
        ),
    ),
)

#: Root causes of a symptom: they have recipes but no traceback of their own.
ROOT_CAUSES: tuple[Category, ...] = (
    Category(
        id="keras-string-loss",
        title="a Keras loss given as a string (from_logits=False) on a model that outputs "
              "logits",
        hint="drop loss= so the model computes its own loss on the logits, or pass a loss "
             "with from_logits=True",
        kind=Kind.ROOT_CAUSE,
    ),
    Category(
        id="lr-too-high",
        title="a learning rate of 1e-3 or more on a pretrained transformer",
        kind=Kind.ROOT_CAUSE,
    ),
)

#: Diagnoses that are not faults of the script's code but of the run itself.
TIMEOUT = Category(
    id="timeout",
    title="the script ran past --timeout and was killed",
    hint="raise --timeout, or check for a hang (a blocking read, a dead lock, a huge dataset)",
    kind=Kind.RUN,
)
UNKNOWN = Category(
    id="unknown",
    title="a failure autofix has no category for",
    hint="the key traceback lines are shown; no recipe was tried",
    kind=Kind.RUN,
)

_REGISTRY: dict[str, Category] = {}


def register_category(category: Category, *, replace: bool = False) -> Category:
    """Add ``category`` to the registry (classification order: registration order, so
    built-ins first). Other modules and plugins call this for their own categories; a
    recipe's ``category`` must be registered before the recipe class is defined.

    Raises ``ValueError`` for an id already registered (unless ``replace``) or an id that
    is not lower-case words joined by ``-``.
    """
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", str(category.id)):
        raise ValueError(f"category id {category.id!r} must be lower-case words joined by '-'")
    if str(category.id) in _REGISTRY and not replace:
        raise ValueError(f"category {category.id!r} is already registered")
    _REGISTRY[str(category.id)] = category
    return category


CATEGORIES = (*CATEGORIES, *REPORTED)

for _category in (*CATEGORIES, *SYMPTOMS, *ROOT_CAUSES, TIMEOUT, UNKNOWN):
    register_category(_category)


def get_category(category_id: str) -> Category:
    """The category with id ``category_id``; raises ``KeyError`` for an unknown id."""
    return _REGISTRY[str(category_id)]


def is_category(category_id: str) -> bool:
    """True when ``category_id`` is registered (the recipe contract's "known category")."""
    return str(category_id) in _REGISTRY


def all_categories() -> tuple[Category, ...]:
    """Every registered category, in registration order (traceback ones, symptoms, root
    causes, ``timeout``, ``unknown``, then any registered later)."""
    return tuple(_REGISTRY.values())


def symptom_ids() -> frozenset[str]:
    """Ids of the training-symptom categories (``nan-loss``, ``stalled-loss``, ...)."""
    return frozenset(c.id for c in _REGISTRY.values() if c.kind is Kind.SYMPTOM)
