"""What API drift the libraries are known for, shared by the API check and its recipes:
which libraries are checked, and the calls each renamed keyword of
:data:`autofix.categories.renames.KEYWORD_RENAMES` belongs to (:data:`OWNER_CALLS`)."""

from __future__ import annotations

from autofix.categories.renames import Rename
from autofix.toolkit.patterns import ANY_TRAINER, ANY_TRAINING_ARGS, TRL_CONFIG

#: Libraries whose imports and keyword arguments the API check reads.
CHECKED_LIBRARIES = ("transformers", "datasets", "trl", "peft")
#: Libraries whose classes a script's own classes may subclass (their overrides are checked).
BASE_LIBRARIES = (*CHECKED_LIBRARIES, "torch", "keras", "tf_keras", "tensorflow", "accelerate")
#: The qualified names of the calls each :attr:`Rename.owner` stands for.
OWNER_CALLS = {"training-args": ANY_TRAINING_ARGS, "trainer": ANY_TRAINER,
               "trl-config": TRL_CONFIG}


def owner_calls(rename: Rename) -> str:
    """The regex of the qualified names of the calls ``rename`` applies to."""
    return OWNER_CALLS[rename.owner]


def top_level(name: str) -> str:
    """The top-level package of a dotted name (``trl`` for ``trl.trainer.SFTConfig``)."""
    return name.split(".", 1)[0]
