"""add-zero-grad: a hand loop that steps its optimizer but never clears the gradients.

PyTorch adds every ``backward()`` into ``.grad``; without ``optimizer.zero_grad()`` each
step is taken on the sum of all gradients since the start (PyTorch's "Zeroing out
gradients" recipe), so the update grows step after step. The probe counts the run's
optimizer steps, ``backward()`` calls and ``zero_grad()`` calls (on an optimizer or on an
``nn.Module``); with steps and backward calls and no ``zero_grad()`` the run's finding is
``zero-grad-missing``. The fix is that recipe's order: ``<optimizer>.zero_grad()`` right
after each ``<optimizer>.step()`` statement of the script, in the block that holds it (a
gradient accumulation's step under its condition gets it under the same condition; a
block that already calls ``zero_grad()`` somewhere is left as it is). The
optimizer is the receiver of ``.step()`` made by a ``torch.optim`` class (or any callable
named ``...Optimizer``/``optim...``); a scheduler's ``step()`` is never one.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.operators import insert_statement
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.statements import method_call

#: The classes of ``torch.optim`` (2.x) and the usual third-party optimizers.
OPTIMIZERS = frozenset({
    "SGD", "Adam", "AdamW", "Adamax", "Adadelta", "Adagrad", "ASGD", "LBFGS", "NAdam",
    "RAdam", "RMSprop", "Rprop", "SparseAdam", "Adafactor", "Lion", "Adam8bit", "AdamW8bit",
})

_FACTS = {"zero_grad_calls": 0, "optimizer_steps": 30, "backward_calls": 30}

_HEAD = (
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for x, y in loader:\n"
    "    loss = loss_fn(model(x), y)\n"
    "    loss.backward()\n"
)


def _step_receiver(stmt: cst.BaseStatement) -> str | None:
    """The name ``X`` of a statement ``X.step()`` (no arguments), else ``None``."""
    call = method_call(stmt, "step")
    if call is None or call.args:
        return None
    func = call.func
    assert isinstance(func, cst.Attribute)
    return func.value.value if isinstance(func.value, cst.Name) else None


def _made_by_optimizer(tree: cst.Module, name: str) -> bool:
    """Whether ``name`` is assigned anywhere in ``tree`` from a call of an optimizer class
    (:data:`OPTIMIZERS`, or a callable whose last name says ``Optimizer``/``optim``), or
    is named as one (``opt``, ``optimizer``: a function's parameter given the optimizer)."""
    if name.lower().startswith("opt"):
        return True
    for assign in m.findall(tree, m.Assign(targets=[m.AssignTarget(m.Name(name))],
                                           value=m.Call())):
        assert isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)
        callee = (get_full_name_for_node(assign.value.func) or "").rsplit(".", 1)[-1]
        if callee in OPTIMIZERS or "optimizer" in callee.lower() or \
                callee.lower().startswith("optim"):
            return True
    return False


class AddZeroGrad(PlannedEdits):
    id = "add-zero-grad"
    category = "zero-grad-missing"
    title = "clear the gradients after each optimizer.step() (optimizer.zero_grad())"
    requires_words = (("step",), ("backward",))
    nothing_to_do = "no optimizer.step() statement of a torch.optim optimizer"

    examples = (
        Example(
            before=_HEAD + "    optimizer.step()\n",
            after=_HEAD + "    optimizer.step()\n    optimizer.zero_grad()\n",
            run_facts=_FACTS,
        ),
        Example(  # gradient accumulation: cleared under the step's own condition
            before=_HEAD + "    if i % 4 == 3:\n        optimizer.step()\n"
                           "        scheduler.step()\n",
            after=_HEAD + "    if i % 4 == 3:\n        optimizer.step()\n"
                          "        optimizer.zero_grad()\n        scheduler.step()\n",
            run_facts=_FACTS,
        ),
        Example(  # the optimizer given to a training function
            before="def fit(model, loader, opt):\n    for x, y in loader:\n"
                   "        loss_fn(model(x), y).backward()\n        opt.step()\n",
            after="def fit(model, loader, opt):\n    for x, y in loader:\n"
                  "        loss_fn(model(x), y).backward()\n        opt.step()\n"
                  "        opt.zero_grad()\n",
            run_facts=_FACTS,
        ),
        Example(  # a scheduler's step() only: nothing to do
            before="for x, y in loader:\n    loss.backward()\n    scheduler.step()\n",
            run_facts=_FACTS,
        ),
        Example(  # the run cleared its gradients: not this recipe's fault
            before=_HEAD + "    optimizer.step()\n",
            run_facts={**_FACTS, "zero_grad_calls": 30},
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        if self.rc.facts.get("zero_grad_calls") != 0:
            raise NotApplicable("the run called zero_grad(): its gradients are cleared")
        for block in m.findall(tree, m.IndentedBlock()):
            assert isinstance(block, cst.IndentedBlock)
            if m.findall(block, m.Call(func=m.Attribute(attr=m.Name("zero_grad")))):
                continue  # this block clears gradients already (on a path the run skipped)
            for stmt in block.body:
                name = _step_receiver(stmt)
                if name is None or not _made_by_optimizer(tree, name):
                    continue
                assert isinstance(stmt, cst.SimpleStatementLine)
                insert_statement(self, stmt, f"{name}.zero_grad()",
                                 f"{name}.zero_grad() after {code(stmt).strip()}: the "
                                 "gradients were never cleared, so every step added to the "
                                 "last", before=False)
