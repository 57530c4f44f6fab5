"""What the recipes that set ``TrainingArguments`` keywords share: the evaluation-strategy
keyword's two names, and :class:`SetFlag`, one flag set when the facts at the failure show
its fault (``keep-unused-columns``, ``predict-with-generate``), where the script defines it
(the call's keyword, the constant or default it comes from, the dict given as
``TrainingArguments(**hp)``), through the value-source service
(:mod:`autofix.toolkit.values`). Not a recipe itself: the registry skips modules whose
name starts with ``_``."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from autofix.categories.failure import Failure
from autofix.toolkit import NotApplicable, patterns
from autofix.toolkit.facts import failure_of
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.values import CallOwner, NotFollowed, Values

#: The evaluation-strategy keyword, under either of its names (renamed in 4.41.0).
EVAL_STRATEGY = ("eval_strategy", "evaluation_strategy")


class SetFlag(PlannedEdits):
    """Sets one boolean setting (``flag=value``) of each ``TrainingArguments(...)`` call
    matched by ``args_pattern`` where the script defines it (:meth:`CallOwner.set
    <autofix.toolkit.values.CallOwner.set>`: the keyword, the literal it comes from, an
    entry of the dict given as ``**hp``; added to the call, or to that dict, when absent),
    when :meth:`shows` finds the fault in the facts at the failure
    (``Diagnosis.failure``); ``NotApplicable(no_facts)`` when it does not. The commit line
    says ``flag=value (because)``."""

    abstract = True
    flag: ClassVar[str] = ""
    value: ClassVar[bool] = True
    because: ClassVar[str] = ""
    no_facts: ClassVar[str] = ""
    args_pattern: ClassVar[str] = patterns.TRAINING_ARGS

    def shows(self, failure: Failure) -> bool | None:
        """True when the facts at the failure show the fault this flag fixes."""
        raise NotImplementedError

    def prepare(self, tree: cst.Module) -> None:
        failure = failure_of(self.rc)
        if failure is None or self.shows(failure) is not True:
            raise NotApplicable(self.no_facts)
        values = Values(self)
        for call in values.calls(self.args_pattern):
            try:
                if not CallOwner(values, call).set(self.flag, self.value, self.because):
                    self.reason = f"{self.flag}={self.value} is set already"
            except NotFollowed as declined:
                self.reason = str(declined)
