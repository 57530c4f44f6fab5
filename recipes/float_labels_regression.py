"""float-labels-on-classifier: float targets (scores) on a single-label classification
head.

``*ForSequenceClassification`` picks its loss from ``config.problem_type``; a checkpoint
saved for classification (or ``num_labels`` > 1 with integer-looking config) makes it
``single_label_classification``, and cross-entropy on float targets raises
``RuntimeError: expected target dtype to be Long or Byte, but got Float`` (torch 2.13,
transformers 5.24 and 4.57.6, measured). Scores are a regression target: the model
documentation's regression setup is ``num_labels=1`` (MSE loss), and
``problem_type="regression"`` overrides a ``problem_type`` stored in the loaded config;
``ignore_mismatched_sizes=True`` lets a checkpoint whose head had another size load with a
fresh 1-output head. The recipe edits the ``from_pretrained`` call of the model that
failed: the last sequence-classification model loaded above the failing line.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

from autofix.recipe import Example, Recipe, keyword
from autofix.types import DatasetFacts, TrainerFacts

from ._training_args import set_keyword

SEQ_CLS_PATTERN = r"transformers(\.[\w.]*)?\.\w*ForSequenceClassification\.from_pretrained"
_SETTINGS = (("num_labels", "1"), ("problem_type", '"regression"'),
             ("ignore_mismatched_sizes", "True"))

_HEAD = (
    "from transformers import AutoModelForSequenceClassification\n"
    "model = AutoModelForSequenceClassification.from_pretrained('ckpt', num_labels=2)\n"
)
_SECOND = "model = AutoModelForSequenceClassification.from_pretrained(STAGE1)\ntrainer.train()\n"


def _floats(low: float, high: float) -> tuple[TrainerFacts, ...]:
    data = DatasetFacts("train", ("label",), 10, "label", "float", None, low, high)
    return (TrainerFacts("Trainer", "BertForSequenceClassification", 2, (data,)),)


class RegressionHead(Recipe):
    id = "float-labels-regression"
    category = "float-labels-on-classifier"
    requires_imports = ("transformers",)
    title = "train float targets with a 1-output regression head"
    nothing_to_do = "no *ForSequenceClassification.from_pretrained call above the failing line"

    examples = (
        Example(  # the second model (loaded from a binary checkpoint) is the one that fails
            before=_HEAD + _SECOND,
            after=_HEAD + "model = AutoModelForSequenceClassification.from_pretrained(\n"
                          "    STAGE1,\n    num_labels=1,\n    problem_type=\"regression\",\n"
                          "    ignore_mismatched_sizes=True,\n)\ntrainer.train()\n",
            line=4, trainers=_floats(0.0, 4.6),
        ),
        Example(  # a function, num_labels replaced, multi-line layout kept
            before=("import transformers\n"
                    "def build(path):\n"
                    "    return transformers.BertForSequenceClassification.from_pretrained(\n"
                    "        path,\n"
                    "        num_labels=3,\n"
                    "    )\n"),
            after=("import transformers\n"
                   "def build(path):\n"
                   "    return transformers.BertForSequenceClassification.from_pretrained(\n"
                   "        path,\n"
                   "        num_labels=1,\n"
                   "        problem_type=\"regression\",\n"
                   "        ignore_mismatched_sizes=True,\n"
                   "    )\n"),
        ),
        Example(  # the failing model is not a sequence classifier (loaded below the line)
            before="trainer.train()\n" + _HEAD, line=1,
        ),
        Example(  # a config object decides the head: left to the user
            before=("from transformers import AutoModelForSequenceClassification\n"
                    "m = AutoModelForSequenceClassification.from_pretrained('c', config=cfg)\n"),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self.target: cst.Call | None = None
        return super().transform_module_impl(tree)

    def visit_Module(self, node: cst.Module) -> None:
        failing = self.rc.diagnosis.line
        for call in m.findall(node, m.Call()):
            if self.is_qualified(cst.ensure_type(call, cst.Call).func, SEQ_CLS_PATTERN) and (
                    not failing or self.get_metadata(PositionProvider, call).start.line
                    <= failing):
                self.target = cst.ensure_type(call, cst.Call)  # the last one above the line

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if original_node is not self.target:
            return updated_node
        if keyword(updated_node, "config") is not None:
            self.reason = "the model is built from a config= object; set num_labels=1 and " \
                          "problem_type='regression' there"
            return updated_node
        for name, value in _SETTINGS:
            updated_node = set_keyword(updated_node, name, cst.parse_expression(value))
        self.changed(original_node, "num_labels=1, problem_type=\"regression\", "
                                    "ignore_mismatched_sizes=True on the model that trains "
                                    "on float targets")
        return updated_node
