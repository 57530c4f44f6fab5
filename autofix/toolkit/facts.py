"""The facts at the failure, for recipes: what the objects in the failing frames were.

A recipe that fixes a value where it is defined needs to know which value was wrong (the
string ``"5e-5"`` the optimizer got as ``lr``, the ``DatasetDict`` in ``train_dataset``),
not only where the error was raised. The diagnosis carries the exception it was made from
(:attr:`autofix.types.Diagnosis.failure`) with the facts of its frames
(``autofix/run/child/facts.py``); :func:`failure_of` reads them as a
:class:`~autofix.categories.failure.Failure`, with the datasets each ``Trainer`` got.

:func:`example_failure` builds such an exception for a recipe's examples: one user frame
(and optionally one library frame) with the summaries given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autofix.categories.failure import Failure
from autofix.categories.sites import all_frames, frame_keys, raised_site
from autofix.types import ExceptionInfo, Frame, FrameFacts, ProbeReport, RecipeContext


def failure_of(rc: RecipeContext) -> Failure | None:
    """The failure the recipe is fixing, with its facts, the trainers' datasets and the
    run's facts (``None`` for a diagnosis without an exception: a symptom, a finding before
    any run)."""
    exc = rc.diagnosis.failure
    if exc is None:
        return None
    frames = tuple(key for candidate in (exc, *exc.chain)
                   for key in frame_keys(all_frames(candidate)))
    return Failure(exc, raised_site(exc), frames,
                   ProbeReport(trainers=list(rc.trainers), datasets=list(rc.datasets),
                               facts=dict(rc.facts)))


def user_value(failure: Failure | None, name: str) -> Mapping[str, Any] | None:
    """The summary of the user's local ``name`` in the innermost user frame holding one
    (``None`` when no user frame has it)."""
    if failure is None:
        return None
    return failure.value(name, user=True)


def example_failure(exc_type: str, message: str, user: Mapping[str, Mapping[str, Any]],
                    library: Mapping[str, Mapping[str, Any]] | None = None, *,
                    library_file: str = "site-packages/lib/module.py",
                    library_function: str = "check", user_line: int = 1,
                    user_function: str = "<module>") -> ExceptionInfo:
    """An exception as the child reports it, for a recipe's :class:`Example`: a user
    frame (``script.py``, ``user_line``) holding the summaries ``user`` and, when
    ``library`` is given, the library frame inside it that raised, holding those."""
    frames = [Frame("script.py", user_line, user_function, "")]
    facts = [FrameFacts("script.py", user_line, user_function, True, dict(user))]
    if library is not None:
        frames.append(Frame(library_file, 1, library_function, ""))
        facts.insert(0, FrameFacts(library_file, 1, library_function, False, dict(library)))
    return ExceptionInfo(exc_type, message, tuple(frames), (), tuple(facts))
