"""graph-reused: a recurrent state carried from one step to the next without detach.

A stateful RNN loop (``logits, state = model(x, state)``) feeds each step the state the
previous step returned, graph and all: the second ``backward()`` goes back through the
first step's freed graph ("Trying to backward through the graph a second time"). The
facts at the failure show the carried state: a local of the user's frame that records a
graph (a tensor with ``requires_grad``, or a tuple of them: an LSTM's ``(h, c)``).

Fix (truncated backpropagation through time): right after the assignment in the loop that
takes the state as an argument and binds it again, the state is detached,
``state = state.detach()`` for a tensor, ``state = tuple(s.detach() for s in state)``
for a tuple, so each step backpropagates through its own window only.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.facts import example_failure
from autofix.toolkit.operators import insert_statement
from autofix.toolkit.scope import PlannedEdits
from autofix.types import ExceptionInfo

from ._backward import (
    failing_line,
    loop_around,
    requires_grad,
    statement_of,
    the_backward,
    the_failure,
    user_fact,
)


def _failure(line: int, state: dict[str, object]) -> ExceptionInfo:
    loss = {"kind": "tensor", "dtype": "torch.float32", "shape": [], "requires_grad": True}
    return example_failure(
        "RuntimeError", "Trying to backward through the graph a second time (or directly "
        "access saved tensors after they have already been freed).", user={"state": state},
        library={"self": loss}, library_file="torch/_tensor.py",
        library_function="backward", user_line=line)


_H = {"kind": "tensor", "dtype": "torch.float32", "shape": [1, 8, 32], "requires_grad": True}
_LOOP = "import torch\nstate = None\nfor x, y in windows:\n"


class DetachCarriedState(PlannedEdits):
    id = "detach-carried-state"
    category = "graph-reused"
    title = "detach the recurrent state carried from one step to the next"
    requires_imports = ("torch",)
    subject_from_change = True
    nothing_to_do = "no state is fed back into a call of the loop around the failing line"

    examples = (
        Example(  # an LSTM's (h, c)
            before=_LOOP + "    logits, state = model(x, state)\n"
                           "    loss = criterion(logits, y)\n    loss.backward()\n",
            after=_LOOP + "    logits, state = model(x, state)\n"
                          "    state = tuple(s.detach() for s in state)\n"
                          "    loss = criterion(logits, y)\n    loss.backward()\n",
            failure=_failure(6, {"kind": "tuple", "len": 2, "items": [_H, _H]}),
        ),
        Example(  # a GRU's hidden tensor, keyword argument
            before=_LOOP + "    out, state = rnn(x, hx=state)\n    out.sum().backward()\n",
            after=_LOOP + "    out, state = rnn(x, hx=state)\n    state = state.detach()\n"
                          "    out.sum().backward()\n",
            failure=_failure(5, _H),
        ),
        Example(  # detached already
            before=_LOOP + "    logits, state = model(x, state)\n"
                           "    state = tuple(s.detach() for s in state)\n"
                           "    logits.sum().backward()\n",
            failure=_failure(6, {"kind": "tuple", "len": 2, "items": [_H, _H]}),
        ),
        Example(  # a state that records no graph: not what was reused
            before=_LOOP + "    logits, state = model(x, state)\n    logits.sum().backward()\n",
            failure=_failure(5, {"kind": "tuple", "len": 2, "items": [
                {**_H, "requires_grad": False}, {**_H, "requires_grad": False}]}),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = the_failure(self)
        _, receiver = the_backward(self, failing_line(self, failure))
        loop = loop_around(self, receiver)
        if loop is None:
            raise NotApplicable(self.nothing_to_do)
        found = 0
        for assign in m.findall(loop.body, m.Assign()):
            assert isinstance(assign, cst.Assign)
            if not isinstance(assign.value, cst.Call):
                continue
            given = {a.value.value for a in assign.value.args if isinstance(a.value, cst.Name)}
            for name in sorted(self._bound(assign) & given):
                fact = user_fact(failure, name)
                if not requires_grad(fact):
                    continue
                text = (f"{name} = {name}.detach()" if (fact or {}).get("kind") == "tensor"
                        else f"{name} = tuple(s.detach() for s in {name})")
                anchor = statement_of(self, assign)
                assert isinstance(anchor, cst.SimpleStatementLine)
                if self._detached_next(anchor, name):
                    self.reason = f"{name} is detached right after {code(assign.value)}"
                    continue
                insert_statement(self, anchor, text, f"{text}: the state carried to the next "
                                 "step without the graph of this one", before=False)
                found += 1
        if not found:
            raise NotApplicable(self.reason or self.nothing_to_do)

    def _detached_next(self, anchor: cst.SimpleStatementLine, name: str) -> bool:
        """The statement after ``anchor`` in its block rebinds ``name`` with ``.detach()``."""
        holder = self.program.parent(anchor)
        body = list(getattr(holder, "body", ()))
        after = body[body.index(anchor) + 1:body.index(anchor) + 2] if anchor in body else []
        return any(m.findall(s, m.Assign(targets=[m.AssignTarget(target=m.Name(name))]))
                   and m.findall(s, m.Attribute(attr=m.Name("detach"))) for s in after)

    @staticmethod
    def _bound(assign: cst.Assign) -> set[str]:
        names: set[str] = set()
        for target in assign.targets:
            node = target.target
            elements = node.elements if isinstance(node, (cst.Tuple, cst.List)) else [node]
            for element in elements:
                value = element.value if isinstance(element, cst.Element) else element
                if isinstance(value, cst.Name):
                    names.add(value.value)
        return names
