"""multi-label-head-single-labels: one class id per example on a head set to
``problem_type="multi_label_classification"``.

Public report: alibaba/EasyNLP#130 (``Target size (torch.Size([16])) must be the same as
input size (torch.Size([16, 3]))``: the multi-label (BCE) loss wants a multi-hot row per
example, transformers 5.24 / torch 2.13, measured). One integer class id per example is
single-label classification: without ``problem_type`` transformers picks it from the
labels' dtype (integer ids: cross-entropy). The fix drops the keyword (and a
``config.problem_type = "multi_label_classification"`` line) where the script sets it.
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, Recipe, keyword, patterns, remove_keyword
from autofix.toolkit.scope import string_value

MULTI_LABEL = "multi_label_classification"


class DropMultiLabelProblemType(Recipe):
    id = "drop-multi-label-problem-type"
    category = "multi-label-head-single-labels"
    requires_words = ((MULTI_LABEL,),)
    requires_imports = ("transformers",)
    title = "drop problem_type=\"multi_label_classification\" for one class id per example"
    nothing_to_do = "the script does not set problem_type=\"multi_label_classification\""
    restores = ("multi-label-head-single-labels",)

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "model = M.from_pretrained(\n"
                "    ckpt, num_labels=3, problem_type=\"multi_label_classification\",\n"
                "    id2label=names)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "model = M.from_pretrained(\n"
                "    ckpt, num_labels=3, id2label=names)\n"
            ),
        ),
        Example(  # set on the config after it is made
            before=(
                "import transformers\n"
                "config = transformers.AutoConfig.from_pretrained(ckpt, num_labels=3)\n"
                "config.problem_type = \"multi_label_classification\"\n"
            ),
            after=(
                "import transformers\n"
                "config = transformers.AutoConfig.from_pretrained(ckpt, num_labels=3)\n"
            ),
        ),
        Example(  # another problem type: left alone
            before=(
                "from transformers import BertConfig\n"
                "config = BertConfig(problem_type=\"regression\")  # multi_label_classification\n"
            ),
        ),
    )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        arg = keyword(original_node, "problem_type")
        if arg is None or string_value(arg.value) != MULTI_LABEL or not \
                self.is_qualified(original_node.func, patterns.TRANSFORMERS_ANY):
            return updated_node
        self.changed(original_node, "dropped problem_type=\"multi_label_classification\"")
        return remove_keyword(updated_node, "problem_type")

    def leave_SimpleStatementLine(
            self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        statement = original_node.body[0] if len(original_node.body) == 1 else None
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1 and \
                isinstance(statement.targets[0].target, cst.Attribute) and \
                statement.targets[0].target.attr.value == "problem_type" and \
                string_value(statement.value) == MULTI_LABEL:
            self.changed(original_node, "dropped problem_type = \"multi_label_classification\"")
            return cst.RemovalSentinel.REMOVE
        return updated_node

    def summary(self) -> str:
        return ("drop problem_type=\"multi_label_classification\": one class id per example "
                "is single-label classification")
