"""metric-on-logits, hand-written evaluation face: a metric called with logits.

In a hand-written evaluation loop the logits reach the metric call directly
(``accuracy_score(references, predictions)`` where ``predictions`` holds
``outputs.logits``). Fix, at the failing call only: the predictions argument (named
``pred...``/``logit...``, or ``predictions=``/``y_pred=``) becomes
``np.argmax(predictions, axis=-1)``, as in the course's evaluation loop.
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import PositionProvider

from autofix.toolkit import Example, Recipe, code

_PREDICTIONS = re.compile(r"pred|logit", re.IGNORECASE)
_BEFORE = (
    "from sklearn.metrics import accuracy_score\n"
    "predictions = np.concatenate(all_predictions)\n"
    "print('accuracy:', accuracy_score(references, predictions))\n"
)


class ArgmaxAtMetricCall(Recipe):
    id = "metric-on-logits-call"
    category = "metric-on-logits"
    title = "take the argmax of the logits where the metric is called"
    nothing_to_do = "no metric call with a predictions argument on the failing line"

    examples = (
        Example(
            before=_BEFORE,
            after=(
                "from sklearn.metrics import accuracy_score\n"
                "import numpy as np\n"
                "\n"
                "predictions = np.concatenate(all_predictions)\n"
                "print('accuracy:', accuracy_score(references, np.argmax(predictions, "
                "axis=-1)))\n"
            ),
            line=3,
        ),
        Example(  # the failing line passes no predictions
            before=_BEFORE + "print(len(references))\n",
            line=4,
        ),
    )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        position = self.get_metadata(PositionProvider, original_node)
        line = self.rc.diagnosis.line
        if not line or not position.start.line <= line <= position.end.line or self.edits:
            return updated_node
        args = list(updated_node.args)
        for i, arg in enumerate(args):
            name = arg.keyword.value if arg.keyword is not None else ""
            value = code(arg.value)
            if "argmax" in value or not (_PREDICTIONS.search(name) or (
                    not name and isinstance(arg.value, cst.Name)
                    and _PREDICTIONS.search(value))):
                continue
            AddImportsVisitor.add_needed_import(self.context, "numpy", asname="np")
            args[i] = arg.with_changes(
                value=cst.parse_expression(f"np.argmax({value}, axis=-1)"))
            self.changed(original_node, f"np.argmax({value}, axis=-1) at line {line}")
            return updated_node.with_changes(args=args)
        return updated_node
