"""api-drift: ``evaluation_strategy`` <-> ``eval_strategy`` in ``TrainingArguments``.

transformers 4.41.0 renamed ``evaluation_strategy`` to ``eval_strategy`` (the old name was
deprecated and later removed: "unexpected keyword argument 'evaluation_strategy'" on
today's releases); installs older than 4.41 know only ``evaluation_strategy``. The name is
chosen by the target environment's version, so the rename also runs backwards.
"""

from __future__ import annotations

import libcst as cst

from autofix.recipe import Example, NotApplicable, Recipe
from autofix.versions import at_least

#: transformers 4.41.0 introduced ``eval_strategy``.
EVAL_STRATEGY_SINCE = "4.41.0"
_ARGS = r"transformers(\.[\w.]*)?\.(Seq2Seq)?TrainingArguments"
_NAMES = ("evaluation_strategy", "eval_strategy")


class RenameEvalStrategy(Recipe):
    id = "drift-eval-strategy"
    category = "api-drift"
    title = "use the evaluation-strategy argument name of the installed transformers"

    examples = (
        Example(
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', evaluation_strategy='epoch')\n"),
            after=("from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', eval_strategy='epoch')\n"),
            evidence="TypeError: TrainingArguments.__init__() got an unexpected keyword "
                     "argument 'evaluation_strategy'",
        ),
        Example(  # an old install wants the old name
            before=("import transformers\n"
                    "args = transformers.TrainingArguments('out', eval_strategy='steps')\n"),
            after=("import transformers\n"
                   "args = transformers.TrainingArguments('out', evaluation_strategy='steps')\n"),
            versions={"transformers": "4.38.2"},
            evidence="TypeError: __init__() got an unexpected keyword argument 'eval_strategy'",
        ),
        Example(  # the error is about something else
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', evaluation_strategy='epoch')\n"),
            evidence="TypeError: __init__() got an unexpected keyword argument 'tokenizer'",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if not any(f"'{name}'" in self.rc.diagnosis.evidence for name in _NAMES):
            raise NotApplicable("the error is not about evaluation_strategy/eval_strategy")
        version = self.rc.versions.get("transformers", "")
        self.wanted = "eval_strategy" if at_least(version, EVAL_STRATEGY_SINCE) \
            else "evaluation_strategy"
        new = super().transform_module_impl(tree)
        if not self.edits:
            raise NotApplicable(f"TrainingArguments already uses {self.wanted}")
        return new

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, _ARGS):
            return updated_node
        args = []
        for arg in updated_node.args:
            if arg.keyword is not None and arg.keyword.value in _NAMES \
                    and arg.keyword.value != self.wanted:
                self.changed(original_node, f"{arg.keyword.value}= -> {self.wanted}=")
                arg = arg.with_changes(keyword=cst.Name(self.wanted))
            args.append(arg)
        return updated_node.with_changes(args=args)

    def summary(self) -> str:
        version = self.rc.versions.get("transformers", "unknown")
        return f"{self.edits[0]} (transformers {version})"
