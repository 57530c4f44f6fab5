"""Drift between a script's own classes and the installed libraries: an overriding method
the library now calls with arguments it lacks, a trainer given the arguments class it is
not paired with, an override the library no longer calls, and a class TRL removed.

The API check finds the first three before any run (``autofix/run/child/overrides.py``,
from the installed library's own source and signatures) and words each as the run would
raise it; a run that gets there anyway raises the same message, which these categories
match only where the library raised it (the innermost frame is the library's call of the
user's method, or the trainer reading its arguments), so the same message from the user's
own code is not taken for drift.
"""

from __future__ import annotations

import re

from autofix.categories.failure import Failure
from autofix.categories.model import Category

#: A frame of an installed package (not the user's files).
_INSTALLED = re.compile(r"[/\\](site|dist)-packages[/\\]")
_CALLED = re.compile(r"\b(\w+)\.(\w+)\(\)")


def _library_called_override(failure: Failure) -> bool | None:
    """The ``TypeError`` was raised at a library line that calls the method the message
    names (the call into the user's override; Python raises it before the method runs)."""
    frames = failure.exc.frames
    if not frames:
        return None
    named = _CALLED.search(failure.exc.message)
    last = frames[-1]
    if named is None or not _INSTALLED.search(last.file):
        return False
    return f".{named.group(2)}(" in last.text or "getattr(" in last.text


def _trainer_read_args(failure: Failure) -> bool | None:
    """The ``AttributeError`` was raised in a trainer's own code reading its arguments."""
    frames = failure.exc.frames
    if not frames:
        return None
    last = frames[-1]
    return bool(_INSTALLED.search(last.file)) and "args." in last.text \
        and re.search(r"(transformers[/\\]trainer\w*|trl[/\\]trainer[/\\]\w+)\.py$",
                      last.file) is not None


DRIFT: tuple[Category, ...] = (
    Category(
        id="override-signature",
        title="an overriding method the installed library calls with arguments it lacks",
        patterns=(
            r"\b\w+\.(?!__init__\(\))\w+\(\) got an unexpected keyword argument '\w+'",
            r"\b\w+\.(?!__init__\(\))\w+\(\) takes (from \d+ to )?\d+ positional arguments? "
            r"but \d+ (was|were) given",
        ),
        types=("TypeError",),
        check=_library_called_override,
        examples=("v5.txt",),
        before_run=True,
        hint="give the overriding method the parameter the library passes (its default, "
             "e.g. num_items_in_batch=None), or **kwargs where it forwards them to super()",
    ),
    Category(
        id="args-class-mismatch",
        title="a trainer given an arguments class it is not paired with",
        patterns=(r"'\w*(TrainingArguments|Config)' object has no attribute '\w+'",),
        types=("AttributeError",),
        check=_trainer_read_args,
        examples=("v5.txt",),
        before_run=True,
        hint="build the trainer's arguments with its own class (Seq2SeqTrainer: "
             "Seq2SeqTrainingArguments; TRL trainers: their Config), same keywords",
    ),
    Category(
        id="stale-override",
        title="a method of a library subclass that overrides nothing the library calls",
        types=("StaleOverride",),
        patterns=(r"overrides nothing",),
        no_recipe="whether the code belongs in another hook, or nowhere, is the author's "
                  "call: autofix reports it",
        hint="move the code into the hook the installed library calls (the finding names "
             "the closest one), or delete the method",
        before_run=True,
    ),
    Category(
        id="completion-collator-removed",
        title="TRL's DataCollatorForCompletionOnlyLM, removed in TRL 0.20",
        patterns=(r"cannot import name 'DataCollatorForCompletionOnlyLM' from 'trl'",),
        no_recipe="the replacement is a change of the data (prompt/completion rows), which "
                  "only the author can split safely: autofix advises",
        examples=("v5.txt",),
        hint="drop the collator and give SFTTrainer prompt/completion rows (a 'prompt' and "
             "a 'completion' column, split where the response template starts): "
             "SFTConfig(completion_only_loss=True), the default for such rows, computes the "
             "loss on the completion only",
    ),
)
