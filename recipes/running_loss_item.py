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
        adds = [a for a in m.findall(loop.body, m.AugAssign(target=m.Name(total),
                                                             operator=m.AddAssign()))
                if isinstance(a, cst.AugAssign)]
        if len(adds) != 1 or not isinstance(adds[0].value, cst.Name):
            raise NotApplicable(f"{total} is not a running total of one loss name in the "
                                "loop around the failing line")
        add = adds[0]
        assert isinstance(add.value, cst.Name)
        step = add.value
        item = cst.Call(func=cst.Attribute(value=step, attr=cst.Name("item")))
        self.plan_edit(add.value, replace_with(item),
                       f"{total} += {code(item)}: the total keeps numbers, not graphs")
        self.plan_edit(receiver, replace_with(cst.Name(step.value)),
                       f"{step.value}.backward(): each step backpropagates its own loss")
        for read in m.findall(self.program.tree, m.Call(func=m.Attribute(
                value=m.Name(total), attr=m.Name("item")), args=[])):
            self.plan_edit(read, replace_with(cst.Name(total)),
                           f"{total} read as it is (a number now)")
