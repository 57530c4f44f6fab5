"""add-zero-grad: a hand loop that steps its optimizer but never clears the gradients.

PyTorch adds every ``backward()`` into ``.grad``; without ``optimizer.zero_grad()`` each
step is taken on the sum of all gradients since the start (PyTorch's "Zeroing out
gradients" recipe), so the update grows step after step. The probe counts the run's
optimizer steps, ``backward()`` calls and ``zero_grad()`` calls (on an optimizer or on an
``nn.Module``); with steps and backward calls and no ``zero_grad()`` the run's finding is
``zero-grad-missing``.

The fix goes where the PyTorch tutorials and reviewers put it, at the top of the training
step: ``<optimizer>.zero_grad()`` right before the step's forward (after the lines that
only move the batch to the device), in the block that holds the step's ``backward()`` and
``<optimizer>.step()`` (a loop's body, a ``train_step`` function, a method, module level).
A step under a condition of its own (gradient accumulation: ``if (i + 1) % 4 == 0:
optimizer.step()``) clears the accumulated gradients right after it, under the same
condition: at the top of each micro-batch it would throw them away. A block that already
calls ``zero_grad()`` somewhere is left as it is. The optimizer is the receiver of
``.step()`` made by a ``torch.optim`` class (or named ``opt...``, ``self.optimizer``); a
scheduler's ``step()`` is never one.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.operators import insert_statement
from autofix.toolkit.scope import PlannedEdits

from ._training import calls_backward, is_optimizer, receiver, step_top

_FACTS = {"zero_grad_calls": 0, "optimizer_steps": 30, "backward_calls": 30}

_OPT = "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"


class AddZeroGrad(PlannedEdits):
    id = "add-zero-grad"
    category = "zero-grad-missing"
    title = "clear the gradients at the top of each training step (optimizer.zero_grad())"
    requires_words = (("step",), ("backward",))
    nothing_to_do = "no optimizer.step() statement of a torch.optim optimizer"

    examples = (
        Example(  # a loop at module level: before the forward, after the batch's move
            before=_OPT + "for x, y in loader:\n    x, y = x.to(device), y.to(device)\n"
                          "    loss = loss_fn(model(x), y)\n    loss.backward()\n"
                          "    optimizer.step()\n",
            after=_OPT + "for x, y in loader:\n    x, y = x.to(device), y.to(device)\n"
                         "    optimizer.zero_grad()\n    loss = loss_fn(model(x), y)\n"
                         "    loss.backward()\n    optimizer.step()\n",
            run_facts=_FACTS,
        ),
        Example(  # gradient accumulation: cleared under the step's own condition
            before=_OPT + "for i, (x, y) in enumerate(loader):\n"
                          "    (loss_fn(model(x), y) / 4).backward()\n"
                          "    if i % 4 == 3:\n        optimizer.step()\n"
                          "        scheduler.step()\n",
            after=_OPT + "for i, (x, y) in enumerate(loader):\n"
                         "    (loss_fn(model(x), y) / 4).backward()\n"
                         "    if i % 4 == 3:\n        optimizer.step()\n"
                         "        optimizer.zero_grad()\n        scheduler.step()\n",
            run_facts=_FACTS,
        ),
        Example(  # a train_step function given the optimizer: at the top of its body
            before="def train_step(model, batch, opt):\n    \"\"\"One step.\"\"\"\n"
                   "    out = model(**batch)\n    out.loss.backward()\n    opt.step()\n"
                   "    return out.loss.item()\n",
            after="def train_step(model, batch, opt):\n    \"\"\"One step.\"\"\"\n"
                  "    opt.zero_grad()\n    out = model(**batch)\n    out.loss.backward()\n"
                  "    opt.step()\n    return out.loss.item()\n",
            run_facts=_FACTS,
        ),
        Example(  # a method of a class-based trainer
            before="class Runner:\n    def step(self, batch):\n"
                   "        batch = {k: v.to(self.device) for k, v in batch.items()}\n"
                   "        loss = self.model(**batch).loss\n        loss.backward()\n"
                   "        self.optimizer.step()\n",
            after="class Runner:\n    def step(self, batch):\n"
                  "        batch = {k: v.to(self.device) for k, v in batch.items()}\n"
                  "        self.optimizer.zero_grad()\n"
                  "        loss = self.model(**batch).loss\n        loss.backward()\n"
                  "        self.optimizer.step()\n",
            run_facts=_FACTS,
        ),
        Example(  # a scheduler's step() only: nothing to do
            before="for x, y in loader:\n    loss.backward()\n    scheduler.step()\n",
            run_facts=_FACTS,
        ),
        Example(  # the run cleared its gradients: not this recipe's fault
            before=_OPT + "for x, y in loader:\n    loss_fn(model(x), y).backward()\n"
                          "    optimizer.step()\n",
            run_facts={**_FACTS, "zero_grad_calls": 30},
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        if self.rc.facts.get("zero_grad_calls") != 0:
            raise NotApplicable("the run called zero_grad(): its gradients are cleared")
        for block in m.findall(tree, m.IndentedBlock() | m.Module()):
            assert isinstance(block, (cst.IndentedBlock, cst.Module))
            if m.findall(block, m.Call(func=m.Attribute(attr=m.Name("zero_grad")))):
                continue  # this block clears gradients already (on a path the run skipped)
            body = list(block.body)
            for i, stmt in enumerate(body):
                name = receiver(stmt, "step")
                if name is None or not is_optimizer(tree, name):
                    continue
                backward = next((j for j in range(i - 1, -1, -1) if calls_backward(body[j])),
                                None)
                assert isinstance(stmt, cst.SimpleStatementLine)
                if backward is None:  # the step under its own condition: after it
                    insert_statement(self, stmt, f"{name}.zero_grad()",
                                     f"{name}.zero_grad() after {code(stmt).strip()}, under its "
                                     "condition: the gradients were never cleared, so every "
                                     "step added to the last", before=False)
                    continue
                top = body[step_top(body, backward)]
                assert isinstance(top, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
                insert_statement(self, top, f"{name}.zero_grad()",
                                 f"{name}.zero_grad() at the top of the step that "
                                 f"{code(stmt).strip()} ends: the gradients were never "
                                 "cleared, so every step added to the last")
