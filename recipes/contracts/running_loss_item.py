"""graph-reused: a running loss total kept as a tensor and backwarded.

``total_loss += loss`` keeps every step's graph in the total; ``total_loss.backward()``
then goes back through the first step's graph, which its own backward freed: "Trying to
backward through the graph a second time". The facts at the failure give the tensor
``backward()`` got, and the failing line names the total.

Fix, in the loop around the failing line: the total accumulates numbers
(``total_loss += loss.item()``), the step backpropagates its own loss
(``loss.backward()``), and the total's ``.item()`` reads elsewhere in the program become
the total itself (it is a float now).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.categories.failure import backward_tensor
from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.facts import example_failure
from autofix.toolkit.scope import PlannedEdits, replace_with
from autofix.types import ExceptionInfo

from ._backward import failing_line, loop_around, the_backward, the_failure


def _failure(line: int) -> ExceptionInfo:
    tensor = {"kind": "tensor", "dtype": "torch.float32", "shape": [], "requires_grad": True}
    return example_failure(
        "RuntimeError", "Trying to backward through the graph a second time (or directly "
        "access saved tensors after they have already been freed).", user={},
        library={"self": tensor}, library_file="torch/_tensor.py",
        library_function="backward", user_line=line)


_HEAD = "import torch\ntotal_loss = 0\nfor step, (x, y) in enumerate(loader):\n" \
        "    loss = criterion(model(x), y)\n"


class RunningLossItem(PlannedEdits):
    id = "running-loss-item"
    category = "graph-reused"
    title = "keep the running loss total as a number and backpropagate the step's loss"
    requires_imports = ("torch",)
    subject_from_change = True
    nothing_to_do = "the backwarded tensor is no running total of the loop"

    examples = (
        Example(
            before=_HEAD + "    total_loss += loss\n    total_loss.backward()\n"
                           "    print(total_loss.item() / (step + 1))\n",
            after=_HEAD + "    total_loss += loss.item()\n    loss.backward()\n"
                          "    print(total_loss / (step + 1))\n",
            failure=_failure(6),
        ),
        Example(  # total = total + loss, in a function
            before=("import torch\ndef train():\n    running = 0.0\n    for x, y in loader:\n"
                    "        loss = f(x, y)\n        running = running + loss\n"
                    "        running.backward()\n    return running\n"),
            after=("import torch\ndef train():\n    running = 0.0\n    for x, y in loader:\n"
                   "        loss = f(x, y)\n        running = running + loss.item()\n"
                   "        loss.backward()\n    return running\n"),
            failure=_failure(7),
        ),
        Example(  # a total backwarded after the loop: not a step's loss
            before=_HEAD + "    total_loss += loss\ntotal_loss.backward()\n",
            failure=_failure(6),
        ),
        Example(  # the step's own loss backwarded: another cause
            before=_HEAD + "    total_loss += loss.item()\n    loss.backward()\n",
            failure=_failure(6),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = the_failure(self)
        if backward_tensor(failure) is None:
            raise NotApplicable("the facts show no backward() call")
        _, receiver = the_backward(self, failing_line(self, failure))
        loop = loop_around(self, receiver)
        if not isinstance(receiver, cst.Name) or loop is None:
            raise NotApplicable(self.nothing_to_do)
        total = receiver.value
        steps = self._added(loop, total)
        if len(steps) != 1:
            raise NotApplicable(f"{total} is not a running total of one loss name in the "
                                "loop around the failing line")
        step = steps[0]
        item = cst.Call(func=cst.Attribute(value=step, attr=cst.Name("item")))
        self.plan_edit(step, replace_with(item),
                       f"{code(item)} added to {total}: the total keeps numbers, not graphs")
        self.plan_edit(receiver, replace_with(cst.Name(step.value)),
                       f"{step.value}.backward(): each step backpropagates its own loss")
        for read in m.findall(self.program.tree, m.Call(func=m.Attribute(
                value=m.Name(total), attr=m.Name("item")), args=[])):
            self.plan_edit(read, replace_with(cst.Name(total)),
                           f"{total} read as it is (a number now)")

    @staticmethod
    def _added(loop: cst.For | cst.While, total: str) -> list[cst.Name]:
        """The names added to ``total`` in ``loop``: ``total += loss``, ``total = total +
        loss``, ``total = loss + total``."""
        found: list[cst.Name] = []
        for add in m.findall(loop.body, m.AugAssign(target=m.Name(total),
                                                    operator=m.AddAssign())):
            assert isinstance(add, cst.AugAssign)
            if isinstance(add.value, cst.Name):
                found.append(add.value)
        for assign in m.findall(loop.body, m.Assign(targets=[m.AssignTarget(
                target=m.Name(total))], value=m.BinaryOperation(operator=m.Add()))):
            assert isinstance(assign, cst.Assign) and isinstance(assign.value,
                                                                 cst.BinaryOperation)
            pair = (assign.value.left, assign.value.right)
            for this, other in (pair, pair[::-1]):
                if m.matches(this, m.Name(total)) and isinstance(other, cst.Name):
                    found.append(other)
        return found
