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

from autofix.types import ProbeReport

EXAMPLES_DIR = Path(__file__).parent / "examples"
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
    MISSING_FILE,
)

def _keras_string_loss(probe: ProbeReport) -> bool:
    """A string (or from_logits=False) Keras loss on a Hugging Face model, which outputs
    logits: the loss is computed on the wrong quantity and stays near chance."""
    return any(k.hf_model and (isinstance(k.loss, str) or bool(k.loss and k.from_logits is False))
               for k in probe.keras)


def _lr_too_high(probe: ProbeReport) -> bool:
    """A learning rate at or above :data:`LR_TOO_HIGH` at any recorded step."""
    rates = [s.lr for s in probe.steps if s.lr is not None]
    return bool(rates) and max(rates) >= LR_TOO_HIGH * (1 - 1e-6)  # float32 1e-3 > 1e-3


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
