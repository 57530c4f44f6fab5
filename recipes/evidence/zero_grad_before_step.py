"""zero-grad-before-step: the gradients are cleared between ``backward()`` and ``step()``.

A hand loop that calls ``optimizer.zero_grad()`` (or ``model.zero_grad()``) after
``loss.backward()`` and before ``optimizer.step()`` steps on no gradients: PyTorch's
``zero_grad`` sets them to ``None`` (``set_to_none=True``, the default since 2.0), and the
optimizer skips a parameter without a gradient, so the weights never move and the loss
stays at chance. The probe's step evidence shows it (gradients missing at every step of a
window while ``backward()`` and ``zero_grad()`` both ran between the steps); the fix is
PyTorch's own order (the "Zeroing out gradients" recipe: ``zero_grad`` before the forward
or after the step): the ``zero_grad()`` statement moves to right after the first
``.step()`` statement that follows it in the same block, or goes when the same call
already follows that step. Only a statement of the block that holds the ``backward()``
call, between it and the step, is moved; a ``zero_grad`` under a condition is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.statements import method_call

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
    title = "clear the gradients after optimizer.step(), not between backward() and step()"
    requires_words = (("zero_grad",), ("backward",))
    nothing_to_do = "no zero_grad() statement between a backward() call and a step() call"

    examples = (
        Example(
            before=_LOOP + "    optimizer.zero_grad()\n    optimizer.step()\n"
                           "    print(loss.item())\n",
            after=_LOOP + "    optimizer.step()\n    optimizer.zero_grad()\n"
                          "    print(loss.item())\n",
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
        moves: list[tuple[int, int, bool]] = []  # (zero_grad index, step index, drop)
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
            again = after + 1 < len(body) and method_call(body[after + 1], "zero_grad") \
                is not None and code(body[after + 1]).strip() == code(stmt).strip()
            moves.append((i, after, again))
        if not moves:
            return

        def edit(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, (cst.IndentedBlock, cst.Module))
            statements = list(node.body)
            for i, after, drop in reversed(moves):
                moved = statements[i]
                if not drop:
                    statements.insert(after + 1, moved)
                del statements[i]
            return node.with_changes(body=statements)

        for i, after, drop in moves:
            self.changed(body[i], f"{code(body[i]).strip()} moved after "
                                  f"{code(body[after]).strip()}" if not drop else
                         f"{code(body[i]).strip()} between backward() and step() removed "
                         "(the same call follows the step)")
        self.plan[block] = edit
