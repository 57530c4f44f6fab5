"""zero-grad-before-step: the gradients are cleared between ``backward()`` and ``step()``.

A hand loop that calls ``optimizer.zero_grad()`` (or ``model.zero_grad()``) after
``loss.backward()`` and before ``optimizer.step()`` steps on no gradients: PyTorch's
``zero_grad`` sets them to ``None`` (``set_to_none=True``, the default since 2.0), and the
optimizer skips a parameter without a gradient, so the weights never move and the loss
stays at chance. The probe's step evidence shows it (gradients missing at every step of a
window while ``backward()`` and ``zero_grad()`` both ran between the steps); the fix is
PyTorch's own order, where the tutorials and reviewers put it: the ``zero_grad()``
statement moves to the top of the step, before its forward (after the lines that only
move the batch), in the same block; it goes when the same call already clears the
gradients before the forward or right after the step. Only a statement of the block that
holds the ``backward()`` call, between it and the step, is moved; a ``zero_grad`` under a
condition is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.statements import method_call

from ._training import step_top

_LOOP = (
    "for batch in loader:\n"
    "    loss = model(**batch).loss\n"
    "    loss.backward()\n"
)


#: The probe's step evidence for this fault (``ProbeReport.facts``).
_FACTS = {"step_evidence": {"cause": "zero-grad-before-step", "step": 10}}


def _has_backward(stmt: cst.BaseStatement) -> bool:
    return bool(m.findall(stmt, m.Call(func=m.Attribute(attr=m.Name("backward")))))


class ZeroGradAfterStep(PlannedEdits):
    id = "zero-grad-before-step"
    category = "zero-grad-before-step"
    title = "clear the gradients at the top of the step, not between backward() and step()"
    requires_words = (("zero_grad",), ("backward",))
    nothing_to_do = "no zero_grad() statement between a backward() call and a step() call"

    examples = (
        Example(
            before=_LOOP + "    optimizer.zero_grad()\n    optimizer.step()\n"
                           "    print(loss.item())\n",
            after="for batch in loader:\n    optimizer.zero_grad()\n"
                  "    loss = model(**batch).loss\n    loss.backward()\n"
                  "    optimizer.step()\n    print(loss.item())\n",
            run_facts=_FACTS,
        ),
        Example(  # the batch moved to the device first: cleared after the move
            before="def train_step(model, batch, optimizer):\n"
                   "    batch = {k: v.to(device) for k, v in batch.items()}\n"
                   "    loss = model(**batch).loss\n    loss.backward()\n"
                   "    optimizer.zero_grad()\n    optimizer.step()\n",
            after="def train_step(model, batch, optimizer):\n"
                  "    batch = {k: v.to(device) for k, v in batch.items()}\n"
                  "    optimizer.zero_grad()\n    loss = model(**batch).loss\n"
                  "    loss.backward()\n    optimizer.step()\n",
            run_facts=_FACTS,
        ),
        Example(  # the same call already follows the step: the misplaced one goes
            before=_LOOP + "    model.zero_grad()\n    optimizer.step()\n"
                           "    model.zero_grad()\n",
            after=_LOOP + "    optimizer.step()\n    model.zero_grad()\n",
            run_facts=_FACTS,
        ),
        Example(  # the right order: nothing to do
            before=_LOOP + "    optimizer.step()\n    optimizer.zero_grad()\n",
            run_facts=_FACTS,
        ),
        Example(  # gradient accumulation under a condition: left alone
            before=_LOOP + "    if step % 4 == 3:\n        optimizer.step()\n"
                           "        optimizer.zero_grad()\n",
            run_facts=_FACTS,
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        evidence = self.rc.facts.get("step_evidence")
        if not isinstance(evidence, dict) or evidence.get("cause") != self.category:
            raise NotApplicable("the step evidence shows no gradients cleared before step()")
        for block in m.findall(tree, m.IndentedBlock() | m.Module()):
            assert isinstance(block, (cst.IndentedBlock, cst.Module))
            self._block(block)

    def _block(self, block: cst.IndentedBlock | cst.Module) -> None:
        body: Sequence[cst.BaseStatement] = block.body
        moves: list[tuple[int, int, bool]] = []  # (zero_grad index, new index, drop)
        for i, stmt in enumerate(body):
            call = method_call(stmt, "zero_grad")
            if call is None or not any(_has_backward(s) for s in body[:i]):
                continue
            after = next((j for j in range(i + 1, len(body))
                          if method_call(body[j], "step") is not None), None)
            if after is None or any(_has_backward(s) for s in body[i + 1:after]):
                continue
            last_backward = max(j for j in range(i) if _has_backward(body[j]))
            if any(method_call(s, "zero_grad") for s in body[last_backward + 1:i]):
                continue
            first_backward = next(j for j in range(i) if _has_backward(body[j]))
            top = step_top(body, first_backward)
            same = code(stmt).strip()
            again = any(method_call(s, "zero_grad") is not None and code(s).strip() == same
                        for s in (*body[:top], *body[after + 1:after + 2]))
            moves.append((i, top, again))
        if not moves:
            return

        def edit(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, (cst.IndentedBlock, cst.Module))
            statements = list(node.body)
            for i, top, drop in reversed(moves):
                moved = statements.pop(i)
                if not drop:
                    statements.insert(top, moved)
            return node.with_changes(body=statements)

        for i, top, drop in moves:
            self.changed(body[i], f"{code(body[i]).strip()} moved to the top of the step, "
                                  f"before {code(body[top]).strip().splitlines()[0]}"
                         if not drop else
                         f"{code(body[i]).strip()} between backward() and step() removed "
                         "(the same call already clears the gradients)")
        self.plan[block] = edit
