"""loss-off-graph: the loss rebuilt from the values of per-example losses.

``torch.tensor(losses)`` on a list of loss tensors copies their values into a new leaf
tensor without a graph (torch only warns when it is given one tensor), so
``loss.backward()`` fails: "element 0 of tensors does not require grad and does not have a
grad_fn", while the model's forward did record a graph (the child's ``forward``: gradients
on, an output requiring grad). ``torch.stack`` joins the same tensors into one and keeps
the graph (PyTorch docs, ``torch.tensor``: "When data is a tensor x, torch.tensor() reads
out 'the data' from whatever it is passed, and constructs a leaf variable").

Fix: the backwarded value is followed back to where it is made (through names, a helper's
``return``, the methods that keep the data); each ``torch.tensor(X)`` (``as_tensor``,
``Tensor``, ``FloatTensor``) there whose ``X`` is no literal becomes ``torch.stack(X)``.
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, NotApplicable, code, patterns
from autofix.toolkit.facts import example_failure
from autofix.toolkit.provenance import Provenance
from autofix.toolkit.scope import PlannedEdits, replace_with
from autofix.types import ExceptionInfo

from ..contracts._backward import failing_line, the_backward, the_failure


def _failure(line: int) -> ExceptionInfo:
    failure = example_failure(
        "RuntimeError", "element 0 of tensors does not require grad and does not have a "
        "grad_fn", user={"loss": {"kind": "tensor", "dtype": "torch.float32", "shape": [],
                                  "requires_grad": False},
                         "model": {"kind": "model", "params": 4, "trainable": 4}},
        user_line=line)
    return ExceptionInfo(failure.type, failure.message, failure.frames, failure.chain,
                         failure.facts, failure.contract,
                         {"grad": True, "graph": True, "training": True})


_HELPER = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "def weighted(model, xb, yb, wb):\n"
    "    losses = []\n"
    "    for xi, yi, wi in zip(xb, yb, wb):\n"
    "        losses.append(wi * F.cross_entropy(model(xi[None]), yi[None]))\n"
    "    return torch.tensor(losses).mean()\n"
    "for xb, yb, wb in loader:\n"
    "    loss = weighted(model, xb, yb, wb)\n"
    "    loss.backward()\n"
)


def _values_of_tensors(data: cst.BaseExpression) -> bool:
    """``data`` may hold tensors: a name, attribute, subscript or comprehension, or a list
    or tuple display with an item that is not a number literal (``[ce, 0.1 * l2]``)."""
    if isinstance(data, (cst.List, cst.Tuple)):
        return bool(data.elements) and any(
            not isinstance(e.value, (cst.Integer, cst.Float, cst.UnaryOperation))
            for e in data.elements)
    return isinstance(data, (cst.Name, cst.Attribute, cst.Subscript, cst.ListComp,
                             cst.GeneratorExp))


class StackLossValues(PlannedEdits):
    id = "stack-loss-values"
    category = "loss-off-graph"
    title = "join per-example losses with torch.stack, which keeps the graph, instead of " \
            "copying their values with torch.tensor"
    requires_imports = ("torch",)
    requires_words = (("backward",),)
    subject_from_change = True
    nothing_to_do = "the backwarded loss was not followed to a torch.tensor(...) of values"

    examples = (
        Example(before=_HELPER,
                after=_HELPER.replace("torch.tensor(losses)", "torch.stack(losses)"),
                failure=_failure(10)),
        Example(  # in the loop itself, by name
            before="import torch\nfor x, y in loader:\n"
                   "    parts = [crit(model(x), y), reg(model)]\n"
                   "    loss = torch.tensor(parts).sum()\n    loss.backward()\n",
            after="import torch\nfor x, y in loader:\n"
                  "    parts = [crit(model(x), y), reg(model)]\n"
                  "    loss = torch.stack(parts).sum()\n    loss.backward()\n",
            failure=_failure(5)),
        Example(  # the parts of an objective in a list display, in a method
            before="import torch\nclass Fit:\n    def objective(self, x, y):\n"
                   "        return torch.tensor([crit(self.model(x), y), 0.1 * l2()]).sum()\n"
                   "    def step(self, x, y):\n        loss = self.objective(x, y)\n"
                   "        loss.backward()\n",
            after="import torch\nclass Fit:\n    def objective(self, x, y):\n"
                  "        return torch.stack([crit(self.model(x), y), 0.1 * l2()]).sum()\n"
                  "    def step(self, x, y):\n        loss = self.objective(x, y)\n"
                  "        loss.backward()\n",
            failure=_failure(7)),
        Example(  # a literal: not the losses' values
            before="import torch\nfor x, y in loader:\n"
                   "    loss = torch.tensor([0.0]).sum()\n    loss.backward()\n",
            failure=_failure(4)),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = the_failure(self)
        _, receiver = the_backward(self, failing_line(self, failure))
        provenance = Provenance(self)
        found: dict[int, cst.Call] = {}
        for origin in provenance.origins(receiver):
            for node in (*origin.via, origin.node):
                for call in self._copies(node):
                    found.setdefault(id(call), call)
        if not found:
            raise NotApplicable(self.nothing_to_do)
        for call in found.values():
            stacked = call.with_changes(
                func=cst.Attribute(value=cst.Name("torch"), attr=cst.Name("stack")),
                args=[call.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
            self.plan_edit(call, replace_with(stacked),
                           f"{code(stacked)} in place of {code(call)} (line "
                           f"{provenance.line(call)}): torch.stack keeps the losses' graph, "
                           "torch.tensor copies their values into a new leaf")

    def _copies(self, node: cst.CSTNode) -> list[cst.Call]:
        """The ``torch.tensor(X)`` calls in ``node`` (itself or the receivers of its method
        calls) whose one positional argument is an expression, not a literal."""
        out: list[cst.Call] = []
        while isinstance(node, cst.Call):
            if self.is_qualified(node.func, patterns.TORCH_COPYING) and len(node.args) >= 1 \
                    and node.args[0].keyword is None and not node.args[0].star \
                    and all(a.keyword is not None for a in node.args[1:]) \
                    and _values_of_tensors(node.args[0].value):
                out.append(node)
                break
            if not isinstance(node.func, cst.Attribute):
                break
            node = node.func.value
        return out
