"""What API drift the libraries are known for, shared by the API check and its recipes.

:data:`KEYWORD_RENAMES` are keyword arguments the libraries renamed (the release that
renamed each is in its note). Which of the two names a call must use is never read from
this table or from a version number: the API check asks the installed callable
(``inspect.signature`` in the target interpreter) which of the pair it takes, and a
traceback names the one it rejected. The table only says the two names are one setting.
"""

from __future__ import annotations

from dataclasses import dataclass

from autofix.toolkit.patterns import ANY_TRAINER, ANY_TRAINING_ARGS, TRL_CONFIG

#: Libraries whose imports and keyword arguments the API check reads.
CHECKED_LIBRARIES = ("transformers", "datasets", "trl", "peft")
#: Libraries whose classes a script's own classes may subclass (their overrides are checked).
BASE_LIBRARIES = (*CHECKED_LIBRARIES, "torch", "keras", "tf_keras", "tensorflow", "accelerate")


@dataclass(frozen=True)
class Rename:
    """Keyword ``old`` became ``new`` in ``library`` (``note``: where, since when) for the
    callables whose qualified names match ``calls`` (the only calls a rename made from a
    traceback, without the API check's facts, touches: ``DataCollatorWithPadding(
    tokenizer=)`` is no ``Trainer(tokenizer=)``)."""

    old: str
    new: str
    library: str
    note: str
    calls: str

    def partner(self, name: str) -> str:
        """The other name of the pair ("" when ``name`` is neither)."""
        return self.new if name == self.old else self.old if name == self.new else ""


KEYWORD_RENAMES: tuple[Rename, ...] = (
    Rename("evaluation_strategy", "eval_strategy", "transformers",
           "TrainingArguments and its subclasses (TRL's configs too), transformers 4.41",
           ANY_TRAINING_ARGS),
    Rename("tokenizer", "processing_class", "transformers",
           "Trainer and its subclasses, transformers 4.46; TRL's trainers, TRL 0.12",
           ANY_TRAINER),
    Rename("max_seq_length", "max_length", "trl", "SFTConfig, TRL 0.20", TRL_CONFIG),
)


def rename_of(name: str) -> Rename | None:
    """The rename keyword ``name`` is one side of (None when it is none)."""
    return next((r for r in KEYWORD_RENAMES if r.partner(name)), None)


def partners(name: str) -> list[str]:
    """The names keyword ``name`` was renamed to or from (:data:`KEYWORD_RENAMES`)."""
    return [p for p in (r.partner(name) for r in KEYWORD_RENAMES) if p]


def top_level(name: str) -> str:
    """The top-level package of a dotted name (``trl`` for ``trl.trainer.SFTConfig``)."""
    return name.split(".", 1)[0]
