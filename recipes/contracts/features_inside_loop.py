"""graph-reused: features computed once through a trainable module, before the loop.

``features = embedding(tokens)`` before the training loop builds one graph; every step's
loss goes back through it, and the second ``backward()`` finds it freed ("Trying to
backward through the graph a second time"). The facts at the failure show the reused
value: a local of the user's frame that records a graph (a tensor with
``requires_grad``) assigned before the loop around the failing line and read inside it.

Fix: that assignment moved to the top of the loop's body, so each step computes its
features through the module again (and the module trains through them). Only a plain
``name = <call>`` statement in the block that holds the loop, bound once, whose value
reads nothing the loop assigns.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.facts import example_failure
from autofix.toolkit.insert import parse_statement
from autofix.toolkit.scope import PlannedEdits
from autofix.types import ExceptionInfo

from ._backward import (
    failing_line,
    loop_around,
    requires_grad,
    the_backward,
    the_failure,
    user_fact,
)


def _failure(line: int, grad: bool = True) -> ExceptionInfo:
    loss = {"kind": "tensor", "dtype": "torch.float32", "shape": [], "requires_grad": True}
    features = {"kind": "tensor", "dtype": "torch.float32", "shape": [256, 96],
                "requires_grad": grad}
    return example_failure(
        "RuntimeError", "Trying to backward through the graph a second time (or directly "
        "access saved tensors after they have already been freed).",
        user={"features": features}, library={"self": loss},
        library_file="torch/_tensor.py", library_function="backward", user_line=line)


_HEAD = "import torch\nembedding = torch.nn.Embedding(50, 16)\n"
_STEP = ("    loss = criterion(head(features), labels)\n    optimizer.zero_grad()\n"
         "    loss.backward()\n")


def _removed(node: cst.CSTNode) -> cst.CSTNode:
    return cst.RemovalSentinel.REMOVE  # type: ignore[return-value]


class FeaturesInsideLoop(PlannedEdits):
    id = "features-inside-loop"
    category = "graph-reused"
    title = "compute the features inside the training loop, once per step"
    requires_imports = ("torch",)
    subject_from_change = True
    nothing_to_do = "no value with a graph is computed before the loop and reused in it"

    examples = (
        Example(
            before=_HEAD + "features = embedding(tokens).flatten(1)\nfor epoch in range(5):\n"
                   + _STEP,
            after=_HEAD + "for epoch in range(5):\n    features = embedding(tokens)."
                          "flatten(1)\n" + _STEP,
            failure=_failure(7),
        ),
        Example(  # a constant input without a graph: not the reused value
            before=_HEAD + "features = torch.randn(256, 96)\nfor epoch in range(5):\n" + _STEP,
            failure=_failure(7, grad=False),
        ),
        Example(  # the loop changes what the features are computed from
            before=_HEAD + "features = embedding(tokens)\nfor epoch in range(5):\n"
                   "    tokens = shuffle(tokens)\n" + _STEP,
            failure=_failure(8),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = the_failure(self)
        _, receiver = the_backward(self, failing_line(self, failure))
        loop = loop_around(self, receiver)
        if loop is None:
            raise NotApplicable(self.nothing_to_do)
        holder = self.program.parent(loop)
        if not isinstance(holder, (cst.IndentedBlock, cst.Module)) or \
                not isinstance(loop.body, cst.IndentedBlock):
            raise NotApplicable(self.nothing_to_do)
        body = list(holder.body)
        assigned_in_loop = {n.value for t in m.findall(loop, m.AssignTarget() | m.For())
                            for n in m.findall(t.target if isinstance(t, cst.For) else t,
                                               m.Name()) if isinstance(n, cst.Name)}
        moved = []
        for stmt in body[:body.index(loop)]:
            if not m.matches(stmt, m.SimpleStatementLine(body=[m.Assign(
                    targets=[m.AssignTarget(target=m.Name())], value=m.Call())])):
                continue
            assert isinstance(stmt, cst.SimpleStatementLine)
            assign = stmt.body[0]
            assert isinstance(assign, cst.Assign) and isinstance(assign.targets[0].target,
                                                                  cst.Name)
            name = assign.targets[0].target.value
            reads = {n.value for n in m.findall(assign.value, m.Name())
                     if isinstance(n, cst.Name)}
            if not requires_grad(user_fact(failure, name)) or name in assigned_in_loop or \
                    not m.findall(loop.body, m.Name(name)):
                continue
            if reads & assigned_in_loop:
                self.reason = (f"{code(assign.value)} reads what the loop assigns "
                               f"({', '.join(sorted(reads & assigned_in_loop))})")
                continue
            moved.append(stmt)
        if not moved:
            raise NotApplicable(self.reason or self.nothing_to_do)
        for stmt in moved:
            self.plan_edit(stmt, _removed, f"{code(stmt).strip()} moved into the loop")
        texts = [code(s).strip() for s in moved]

        def edit(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, cst.IndentedBlock)
            return node.with_changes(body=[*(parse_statement(t) for t in texts), *node.body])

        self.plan_edit(loop.body, edit, "each step computes its features through the "
                       "module again")
