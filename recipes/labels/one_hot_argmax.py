"""one-hot-targets-to-cross-entropy: integer one-hot rows given to cross-entropy.

Public report: prateekjoshi565/Fine-Tuning-BERT#2. ``nn.CrossEntropyLoss`` reads a 2-D
target as class probabilities, which must be floats: integer one-hot rows raise
``Expected floating point type for target with class probabilities, got Long`` (torch
2.13; older torch: ``0D or 1D target tensor expected, multi-target not supported``). The
class id of a one-hot row is its argmax, so the fix gives the loss ``targets.argmax(-1)``
at the failing loss call (only when the facts at the failure show one-hot rows as wide as
the logits: a row of probabilities or a multi-hot row is another fault).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from autofix.categories.failure import Failure, is_one_hot, labels_at_loss, shape
from autofix.toolkit import Example, NotApplicable, Recipe, code, patterns
from autofix.types import ExceptionInfo, FrameFacts


def _one_hot_failure() -> ExceptionInfo:
    target = {"kind": "tensor", "dtype": "torch.int64", "shape": [16, 3], "min": 0, "max": 1,
              "distinct": [0, 1], "ignored": 0, "negatives": 0, "one_hot": True}
    logits = {"kind": "tensor", "dtype": "torch.float32", "shape": [16, 3]}
    return ExceptionInfo("builtins.RuntimeError", "Expected floating point type for target "
                         "with class probabilities, got Long", facts=(
                             FrameFacts("torch/nn/functional.py", 1, "cross_entropy", False,
                                        {"input": logits, "target": target}),))


class OneHotArgmax(Recipe):
    id = "one-hot-argmax"
    category = "one-hot-targets-to-cross-entropy"
    requires_imports = ("torch",)
    title = "give cross-entropy the class ids of the one-hot rows (argmax)"
    nothing_to_do = "no cross-entropy call at the failing line"
    restores = ("one-hot-targets-to-cross-entropy",)

    examples = (
        Example(
            before=(
                "import torch\n"
                "loss_fn = torch.nn.CrossEntropyLoss()\n"
                "for ids, targets in loader:\n"
                "    loss = loss_fn(model(ids).logits, targets)\n"
            ),
            after=(
                "import torch\n"
                "loss_fn = torch.nn.CrossEntropyLoss()\n"
                "for ids, targets in loader:\n"
                "    loss = loss_fn(model(ids).logits, targets.argmax(-1))\n"
            ),
            line=4, failure=_one_hot_failure(),
        ),
        Example(  # no facts showing one-hot rows: left alone
            before=(
                "import torch.nn.functional as F\n"
                "loss = F.cross_entropy(logits, targets)\n"
            ),
            line=2,
        ),
    )

    def visit_Module(self, node: cst.Module) -> bool:
        exc = self.rc.diagnosis.failure
        at = labels_at_loss(Failure(exc)) if exc is not None else None
        if at is None or not is_one_hot(at.target) or (shape(at.target) or (0,))[-1] != at.width:
            raise NotApplicable("the facts at the failure show no one-hot rows as wide as the "
                                "logits")
        self.losses = {t.value for t in self._loss_names(node)}
        return True

    def _loss_names(self, node: cst.Module) -> list[cst.Name]:
        import libcst.matchers as m

        names = []
        for assign in m.findall(node, m.Assign(value=m.Call())):
            assert isinstance(assign, cst.Assign)
            call = cst.ensure_type(assign.value, cst.Call)
            if self.is_qualified(call.func, patterns.CROSS_ENTROPY) and \
                    len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                names.append(assign.targets[0].target)
        return names

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        line = self.get_metadata(PositionProvider, original_node).start.line
        if self.rc.diagnosis.line and line != self.rc.diagnosis.line:
            return updated_node
        func = original_node.func
        is_loss = isinstance(func, cst.Name) and func.value in self.losses or \
            self.is_qualified(func, patterns.CROSS_ENTROPY)
        positional = [a for a in updated_node.args if a.keyword is None]
        if not is_loss or len(positional) < 2 or positional[1].star:
            return updated_node
        target = positional[1]
        if isinstance(target.value, cst.Call) and code(target.value).endswith(".argmax(-1)"):
            return updated_node
        new = cst.Call(func=cst.Attribute(target.value, cst.Name("argmax")),
                       args=[cst.Arg(cst.UnaryOperation(cst.Minus(), cst.Integer("1")))])
        self.changed(original_node, f"{code(target.value)} -> {code(new)}")
        return updated_node.with_changes(args=[a.with_changes(value=new) if a is target else a
                                               for a in updated_node.args])

    def summary(self) -> str:
        return "give cross-entropy class ids: the argmax of the one-hot target rows"
