"""The libraries' own advice, as one family: a failure whose message names the change
(``set X to Y``, ``either A or B``, ``X has to be specified``, ``use X instead``, ``did you
mean X``, ``X requires Y``), raised by transformers, datasets, accelerate, TRL or PEFT.

A category of this family is not one pattern per message: the message is parsed into typed
edits (:func:`autofix.categories.advice.parse_advice`) and sorted by where it was raised
(:data:`AREAS`: the file of the raising frame, ``TrainingArguments``, ``Trainer``, a
callback, a collator, a model or PEFT config, ``datasets``, ``accelerate``) and by what
the advice changes (its ``owner`` when the message names it: "via the TrainingArguments",
"to `Trainer`", ``args.x``; else the call the named argument belongs to). The diagnosis'
advice is the library's, worded as the change to make. The family comes after the course's
and the reported faults, so a category that knows a message better (``no-pad-token``,
``head-size-mismatch``...) wins; what reaches it is the advice nothing else claimed.

An advice that only names an environment change (``pip install wandb``, an upgrade) is not
this family's: autofix edits scripts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from autofix.categories.advice import Advice, parse_advice
from autofix.categories.failure import Failure
from autofix.categories.model import EXAMPLES_DIR, Category
from autofix.types import ExceptionInfo, Frame

#: The libraries whose advice the family reads.
LIBRARIES = ("transformers", "datasets", "accelerate", "trl", "peft")

_PACKAGE = r"(?:^|/)(?:site|dist)-packages/"

#: Where a library raised: area -> regex searched in the raising frame's file (``/``
#: separators). The innermost frame of the five libraries that belongs to an area is the
#: one that raised (a helper it calls, ``transformers/utils/...``, is skipped). Files
#: read on transformers 5.24, TRL 1.16, PEFT 0.21, datasets 5.2, accelerate 1.15.
AREAS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(_PACKAGE + pattern)) for name, pattern in (
        # TrainingArguments and its subclasses' __post_init__ (Seq2Seq, TRL's configs)
        ("training-arguments", r"transformers/training_args\w*\.py$"
                               r"|trl/trainer/\w*config\w*\.py$"),
        ("callback", r"transformers/trainer_callback\.py$"
                     r"|transformers/integrations/integration_utils\.py$"),
        ("collator", r"transformers/data/data_collator\.py$|trl/.*collat\w*\.py$"),
        ("trainer", r"transformers/trainer\w*\.py$|trl/trainer/\w+\.py$"),
        ("model", r"transformers/(modeling_utils|configuration_utils|modeling_\w+)\.py$"
                  r"|transformers/models/|transformers/integrations/peft\.py$"
                  r"|transformers/generation/|peft/"),
        ("datasets", r"datasets/"),
        ("accelerate", r"accelerate/"),
    ))

_LIBRARY_FILE = re.compile(_PACKAGE + r"(?:" + "|".join(LIBRARIES) + r")/")

#: The keyword arguments of ``Trainer.__init__`` (transformers 5.24) and of TRL's trainers
#: (``SFTTrainer``, ``DPOTrainer``, ``GRPOTrainer``, ``RewardTrainer``, TRL 1.16): an advice
#: raised in a trainer that names one of them changes the trainer's call; any other name
#: is a field of its arguments (``TrainingArguments``, ``SFTConfig``...).
TRAINER_PARAMETERS = frozenset((
    "model", "args", "data_collator", "train_dataset", "eval_dataset", "processing_class",
    "tokenizer", "model_init", "compute_loss_func", "compute_metrics", "callbacks",
    "optimizers", "optimizer_cls_and_kwargs", "preprocess_logits_for_metrics", "peft_config",
    "ref_model", "reward_funcs", "reward_processing_classes", "formatting_func",
    "environment_factory", "rollout_func",
))

#: Owners (the object the advised argument belongs to) that are training arguments: the
#: class names, and the dict fields of ``TrainingArguments`` advice is given about.
_ARGS_OWNER = re.compile(r"^(?:\w*TrainingArguments|\w*Config)$|_kwargs$|^(?:accelerator|fsdp)"
                         r"_config$|^args$")
_MODEL_OWNER = re.compile(r"^(?:from_pretrained|model\.\w*config|\w*Peft\w*|get_peft_model"
                          r"|\w*(?:Lora|Prefix\w*|Prompt\w*|IA3|Adalora)Config"
                          r"|PeftModel\.from_pretrained)$")
_TRAINER_OWNER = re.compile(r"^\w*Trainer$")
#: Library and tool names: an advice about one (``X requires wandb``) is an environment
#: change, not a script edit.
_ENVIRONMENT = re.compile(r"^(?:torch|pytorch|accelerate|peft|transformers|deepspeed|trl|vllm"
                          r"|datasets|wandb|tensorboard|bitsandbytes|flash_attn|torchao"
                          r"|liger[\w-]*|kernels|scipy|sklearn|evaluate)$", re.IGNORECASE)


@dataclass(frozen=True)
class LibraryAdvice:
    """The advice of one failure: the exception that gives it, the frame that raised it,
    the area that frame belongs to (:data:`AREAS`), the library (``trl``...) and the
    parsed edits (environment-only advice left out)."""

    exc: ExceptionInfo
    frame: Frame
    area: str
    library: str
    advice: tuple[Advice, ...]

    @property
    def where(self) -> str:
        """``trl/trainer/sft_config.py:__post_init__``: the raising file and function."""
        return f"{package_path(self.frame.file)}:{self.frame.function}"


def package_path(file: str) -> str:
    """``/.../site-packages/transformers/trainer.py`` -> ``transformers/trainer.py``."""
    path = file.replace("\\", "/")
    found = re.search(_PACKAGE + r"(.+)$", path)
    return found.group(1) if found else path.rsplit("/", 1)[-1]


def raising_frame(exc: ExceptionInfo) -> tuple[Frame, str] | None:
    """The innermost frame of ``exc`` that belongs to one of the five libraries' areas, and
    the area; ``None`` when the error was raised in the user's code or another library
    (a frame outside the five libraries inside the library frame wins: torch raised it)."""
    for frame in reversed(exc.frames):
        path = frame.file.replace("\\", "/")
        if not _LIBRARY_FILE.search(path):
            return None
        for name, pattern in AREAS:
            if pattern.search(path):
                return frame, name
    return None


def actionable(advice: tuple[Advice, ...]) -> tuple[Advice, ...]:
    """The advice that names a script edit: installs and upgrades left out, and advice
    about a package (``requires wandb``) too."""
    def keep(a: Advice) -> bool:
        if a.kind == "install":
            return False
        if a.kind == "either":
            return any(keep(b) for b in a.alternatives)
        return not (a.target and _ENVIRONMENT.match(a.target))

    return tuple(a for a in advice if keep(a))


def message_of(exc: ExceptionInfo) -> str:
    """The message as the library wrote it: a ``KeyError``'s quotes taken off."""
    text = exc.message.strip()
    if exc.short_type == "KeyError" and len(text) > 1 and text[0] == text[-1] \
            and text[0] in "'\"":
        text = text[1:-1].replace("\\'", "'")
    return text


def library_advice(exc: ExceptionInfo) -> LibraryAdvice | None:
    """The advice of ``exc`` or of the first exception it was chained from that gives one,
    raised in an area of the five libraries; ``None`` when none does."""
    for candidate in (exc, *exc.chain):
        found = raising_frame(candidate)
        if found is None:
            continue
        advice = actionable(parse_advice(message_of(candidate)))
        if advice:
            frame, area = found
            library = package_path(frame.file).split("/", 1)[0]
            return LibraryAdvice(candidate, frame, area, library, advice)
    return None


def _first(advice: Advice) -> Advice:
    return _first(advice.alternatives[0]) if advice.kind == "either" and advice.alternatives \
        else advice


def owner_area(found: LibraryAdvice) -> str:
    """What the advice changes: ``training-arguments``, ``trainer``, ``model``, else the
    area it was raised in (``datasets``, ``accelerate``, ``collator``). The first advice
    decides (for ``either A or B``, A): its owner when the message names one, else, for
    an error raised by a trainer or a callback, a trainer's own parameter
    (:data:`TRAINER_PARAMETERS`) or a function it was given (an advice on what the function
    returns: a reward function, a rollout function), or else a field of its arguments."""
    first = _first(found.advice[0])
    owner = first.owner or ""
    if found.area in ("datasets", "accelerate", "collator"):
        return found.area
    if _TRAINER_OWNER.match(owner):
        return "trainer"
    if _MODEL_OWNER.match(owner):
        return "model"
    if _ARGS_OWNER.match(owner):
        return "training-arguments"
    if found.area == "model":
        return "model"
    if found.area == "trainer" and (first.target in TRAINER_PARAMETERS
                                    or (first.constraint or "").startswith("return ")):
        return "trainer"  # a trainer's own parameter, or a function given to it (what it returns)
    return "training-arguments"


# -- wording ---------------------------------------------------------------------------

def literal(value: object) -> str:
    """A value as it is written in Python: ``"no"``, ``False``, ``3``."""
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    return repr(value)


def _bound(target: str, advice: Advice) -> str:
    """``save_strategy == eval_strategy``, ``eval_steps (non-zero)``, ``bf16=False``."""
    if advice.has_value:
        return f"{target}={literal(advice.value)}"
    constraint = advice.constraint or ""
    if re.match(r"(?:[<>!=]=?|between|in |a multiple)", constraint):
        return f"{target} {constraint}"
    return f"{target} ({constraint})" if constraint else target


def describe(advice: Advice) -> str:
    """One advice as the change to make: ``set eval_strategy="no" in TrainingArguments``,
    ``pass eval_dataset to Trainer``, ``set max_steps (the library needs a value)``, ``use
    X instead of Y``; ``either A, or B`` for alternatives."""
    target = advice.target or "it"
    owner = advice.owner or ""
    where = f" in {owner}" if owner else ""
    kind = advice.kind
    if kind == "either":
        alternatives = advice.alternatives
        same = {(a.kind, a.target, a.owner) for a in alternatives}
        if len(alternatives) > 3 and len(same) == 1 and alternatives[0].kind == "set" \
                and all(a.has_value for a in alternatives):
            first = alternatives[0]
            values = ", ".join(literal(a.value) for a in alternatives[:4])
            more = f" ({len(alternatives)} values)" if len(alternatives) > 4 else ""
            return (f"set {first.target}" + (f" in {first.owner}" if first.owner else "")
                    + f" to one of {values}{', ...' if more else ''}{more}")
        parts = [describe(a) for a in alternatives]
        return "either " + ", or ".join(parts) if len(parts) > 1 else "".join(parts)
    if kind == "set" and (advice.constraint or "").startswith("return "):
        return f"make {target}{where} {advice.constraint}"  # a function's contract
    if kind == "set":
        return f"set {_bound(target, advice)}{where}"
    if kind == "specify":
        return f"set {_bound(target, advice)}{where} (the library needs a value)"
    if kind == "rename":
        if advice.has_value and advice.target:
            return f"use {advice.value} instead of {advice.target}"
        return f"use {advice.value}" if advice.has_value else f"rename {target}"
    if kind == "requires":
        change = f"{_bound(target, advice)}{where}"
        return f"{advice.when} requires {change}" if advice.when else f"set {change}"
    if kind == "pass":
        value = f"={literal(advice.value)}" if advice.has_value else ""
        return f"pass {target}{value}" + (f" to {owner}" if owner else "")
    if kind == "remove":
        value = f"={literal(advice.value)}" if advice.has_value else ""
        return f"remove {target}{value}" + (f" from {owner}" if owner else "") + \
            (f" ({advice.constraint})" if advice.constraint else "")
    if kind == "call":
        return f"call {target}() first"
    return f"{kind} {target}"


def advice_text(found: LibraryAdvice) -> str:
    """The diagnosis' advice: the change the library names, and where it raised it."""
    changes = "; ".join(describe(a) for a in found.advice)
    file, _, function = found.where.partition(":")
    return f"{found.library} advises ({file}, {function}): {changes}"


# -- the family ----------------------------------------------------------------------------

def _in(*owners: str) -> Callable[[Failure], bool | None]:
    """A ``check``: the failure gives library advice that changes one of ``owners``."""
    def check(failure: Failure) -> bool | None:
        found = library_advice(failure.exc)
        return found is not None and owner_area(found) in owners
    return check


def _advise(failure: Failure) -> str:
    found = library_advice(failure.exc)
    return advice_text(found) if found is not None else ""


def _examples(category_id: str) -> tuple[str, ...]:
    """The saved real tracebacks of ``category_id`` (every ``*.txt`` of its folder;
    ``benchmarks/trigger_advice.py`` writes them)."""
    folder = EXAMPLES_DIR / category_id
    return tuple(sorted(p.name for p in folder.glob("*.txt"))) if folder.is_dir() else ()


def _family(id: str, title: str, owners: tuple[str, ...], no_recipe: str,
            overrides: tuple[str, ...] = (), recipes: tuple[str, ...] = ()) -> Category:
    return Category(id=id, title=title, check=_in(*owners), advise=_advise,
                    examples=_examples(id), no_recipe=no_recipe, overrides=overrides,
                    recipes=recipes, hint="the library's message names the change to make")


_ADVICE_ONLY = ("the library names the change, but whether it suits this script is the "
                "user's choice: autofix reports it")

#: The family, in classification order.
ADVICE: tuple[Category, ...] = (
    _family("training-args-conflict",
            "training arguments the library rejects: they contradict each other, the data, "
            "the machine or the trainer they are given to",
            ("training-arguments",),
            "no recipe makes this change safely: autofix reports the library's advice",
            recipes=("advice-define-argument", "advice-set-argument", "bf16-without-gpu",
                     "eval-dataset-for-strategy", "max-steps-for-stream",
                     "training-args-best-metric", "training-args-strategies")),
    _family("trainer-setup",
            "a trainer built without (or with a wrong) argument its library names",
            ("trainer",), "no recipe makes this change safely: autofix reports the library's "
                          "advice"),
    _family("model-setup-advice",
            "a model loaded or adapted (from_pretrained, its config, PEFT) with arguments "
            "the library rejects", ("model",), _ADVICE_ONLY),
    _family("collator-advice", "a data collator built with arguments the library rejects",
            ("collator",), _ADVICE_ONLY),
    # a folder saved as a DatasetDict loaded as a Dataset raises FileNotFoundError with the
    # loader to use: the library's advice beats "no such file"
    _family("dataset-call-advice", "a datasets call the library rejects, with its advice",
            ("datasets",), _ADVICE_ONLY, overrides=("missing-file",)),
    _family("accelerate-advice",
            "an Accelerator set up or used in a way accelerate rejects, with its advice",
            ("accelerate",), _ADVICE_ONLY),
)


def advice_of(exc: ExceptionInfo) -> Iterator[Advice]:
    """Every advice the failure ``exc`` gives (the first advising exception's), flattened:
    the alternatives of an ``either`` one by one."""
    found = library_advice(exc)
    for advice in found.advice if found else ():
        yield from advice.alternatives if advice.kind == "either" else (advice,)
