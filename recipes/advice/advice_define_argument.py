"""training-args-conflict: the library requires an argument the script left undefined.

``EarlyStoppingCallback`` asserts ``metric_for_best_model`` is defined (transformers 5.24,
``trainer_callback.py``, ``on_train_begin``: ``EarlyStoppingCallback requires
metric_for_best_model to be defined``): it compares that metric from one evaluation to the
next. The message names the argument, not a value; the value is the one the library itself
documents for the argument left unset: ``TrainingArguments``' docstring for
``metric_for_best_model``, "Will default to ``"loss"`` if unspecified and
``load_best_model_at_end=True`` (to use the evaluation loss)". The recipe sets that
documented value where the script builds its arguments (``eval_loss``, the name the
evaluation reports it under). An argument with no documented value is left to the advice.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from autofix.categories.advice import Advice
from autofix.toolkit import Example, NotApplicable

from ._advice import AdviceRecipe

#: Arguments the library requires defined, with the value its docs give the unset case.
DOCUMENTED = {"metric_for_best_model": "eval_loss"}
_EVIDENCE = ("AssertionError: EarlyStoppingCallback requires metric_for_best_model to be "
             "defined")


class DefineArgument(AdviceRecipe):
    id = "advice-define-argument"
    category = "training-args-conflict"
    title = "define the argument the library requires, with its documented value"
    nothing_to_do = "no TrainingArguments call to give the argument"

    examples = (
        Example(
            before=(
                "from transformers import EarlyStoppingCallback, Trainer, TrainingArguments\n"
                "args = TrainingArguments('out', eval_strategy='epoch')\n"
                "trainer = Trainer(model, args, callbacks=[EarlyStoppingCallback(2)])\n"
            ),
            after=(
                "from transformers import EarlyStoppingCallback, Trainer, TrainingArguments\n"
                "args = TrainingArguments(\n"
                "    'out',\n"
                "    eval_strategy='epoch',\n"
                "    metric_for_best_model=\"eval_loss\",\n"
                ")\n"
                "trainer = Trainer(model, args, callbacks=[EarlyStoppingCallback(2)])\n"
            ),
            evidence=_EVIDENCE,
        ),
        Example(  # the arguments from a dict given as **
            before=(
                "from transformers import TrainingArguments\n"
                "hp = {'output_dir': 'out', 'eval_strategy': 'steps'}\n"
                "args = TrainingArguments(**hp)\n"
            ),
            after=(
                "from transformers import TrainingArguments\n"
                "hp = {'output_dir': 'out', 'eval_strategy': 'steps', "
                "'metric_for_best_model': \"eval_loss\"}\n"
                "args = TrainingArguments(**hp)\n"
            ),
            evidence=_EVIDENCE,
        ),
        Example(  # the script sets it already (to a value the check accepts): left alone
            before=(
                "from transformers import TrainingArguments\n"
                "args = TrainingArguments('out', metric_for_best_model='f1')\n"
            ),
            evidence=_EVIDENCE,
        ),
    )

    @classmethod
    def handles(cls, advice: Sequence[Advice], message: str) -> bool:
        return cls.the_requirement(advice) is not None

    @staticmethod
    def the_requirement(advice: Sequence[Advice]) -> Advice | None:
        """The one ``requires X to be defined`` of ``advice`` whose ``X`` has a documented
        value (:data:`DOCUMENTED`), else ``None``."""
        if len(advice) != 1:
            return None
        need = advice[0]
        if need.kind != "requires" or need.constraint != "defined" \
                or need.target not in DOCUMENTED:
            return None
        return need

    def make(self, tree: cst.Module) -> None:
        need = self.the_requirement(self.advice)
        assert need is not None and need.target is not None
        args = self.the_args()
        if args.get(need.target).present:
            raise NotApplicable(f"the script sets {need.target} already: its value is not "
                                "None where it is built")
        value = DOCUMENTED[need.target]
        args.set(need.target, value, "the value the library documents when "
                                                    "it is not given")
