"""A team's own fault: the Weights & Biases logger asks for a login on machines that have
none. Category ``demo-wandb-login`` and a recipe that turns the reporting off."""

from __future__ import annotations

import libcst as cst

from autofix.categories import Category
from autofix.toolkit import Example, Recipe, append_keyword, keyword

CATEGORIES = (
    Category(
        id="demo-wandb-login",
        title="the wandb logger needs a login the machine does not have",
        patterns=(r"api_key not configured \(no-tty\)",),
        hint="pass report_to=\"none\" to TrainingArguments (or log in to wandb)",
    ),
)


class ReportToNone(Recipe):
    id = "demo-report-to-none"
    category = "demo-wandb-login"
    title = "turn the wandb reporting off (report_to=\"none\")"

    examples = (
        Example(
            before="from transformers import TrainingArguments\nargs = TrainingArguments('out')\n",
            after=("from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', report_to=\"none\")\n"),
        ),
        Example(  # reporting is already chosen
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', report_to='tensorboard')\n"),
        ),
    )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, r"transformers\.TrainingArguments") \
                or keyword(updated_node, "report_to") is not None:
            return updated_node
        self.changed(original_node, 'report_to="none"')
        return append_keyword(updated_node, "report_to", cst.SimpleString('"none"'))
