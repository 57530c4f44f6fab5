"""no-grad-training: the training loss is computed with gradients off.

A loop body factored into a function shared by training and evaluation and decorated with
``@torch.no_grad()`` (or run inside ``with torch.no_grad():``) computes its loss without a
graph, and ``loss.backward()`` fails: "element 0 of tensors does not require grad and does
not have a grad_fn". The facts at the failure show a loss without a graph while the
model's weights require grad. Fix, where gradients are turned off around the
``backward()`` call:

- a decorated function: the decorator goes; when ``backward()`` runs only under ``if
  COND:`` in it (a function shared with evaluation), the body runs in ``with
  torch.set_grad_enabled(COND):`` so evaluation keeps gradients off;
- a ``with torch.no_grad():`` block: it becomes ``with torch.set_grad_enabled(COND):``
  under the same condition, else its body runs without it;
- a ``with torch.no_grad():`` block before the ``backward()`` call's statement, in the
  same block, that only holds the forward (a name it assigns is read on the way to the
  loss): its body runs without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from autofix.categories.catalogue.values import VALUES
from autofix.toolkit import Example, NotApplicable, code, patterns
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.scope import PlannedEdits
from autofix.types import ExceptionInfo

_CHECK = next(c for c in VALUES if c.id == "no-grad-training").check


def _failure() -> ExceptionInfo:
    return example_failure(
        "RuntimeError", "element 0 of tensors does not require grad and does not have a "
        "grad_fn", user={"loss": {"kind": "tensor", "dtype": "torch.float32", "shape": []},
                         "model": {"kind": "model", "params": 4, "trainable": 4}})


class EnableGradTraining(PlannedEdits):
    id = "enable-grad-training"
    category = "no-grad-training"
    title = "record gradients in the training step (no torch.no_grad around backward)"
    requires_imports = ("torch",)
    requires_words = (("backward",),)
    nothing_to_do = "no backward() call under torch.no_grad() / inference_mode()"

    examples = (
        Example(
            before="import torch\n\n@torch.no_grad()\ndef run_epoch(loader, train):\n"
                   "    for batch in loader:\n"
                   "        loss = model(**batch).loss\n"
                   "        if train:\n"
                   "            loss.backward()\n",
            after="import torch\n\ndef run_epoch(loader, train):\n"
                  "    with torch.set_grad_enabled(train):\n"
                  "        for batch in loader:\n"
                  "            loss = model(**batch).loss\n"
                  "            if train:\n"
                  "                loss.backward()\n",
            failure=_failure(),
        ),
        Example(  # a training-only function: the decorator goes
            before="import torch\n\n@torch.no_grad()\ndef train_step(batch):\n"
                   "    loss = model(**batch).loss\n    loss.backward()\n",
            after="import torch\n\ndef train_step(batch):\n"
                  "    loss = model(**batch).loss\n    loss.backward()\n",
            failure=_failure(),
        ),
        Example(  # a with block around the training step
            before="import torch\nfor batch in loader:\n    with torch.no_grad():\n"
                   "        loss = model(**batch).loss\n        loss.backward()\n"
                   "    opt.step()\n",
            after="import torch\nfor batch in loader:\n"
                  "    loss = model(**batch).loss\n    loss.backward()\n"
                  "    opt.step()\n",
            failure=_failure(),
        ),
        Example(  # only the forward under no_grad, the loss and backward after it
            before="import torch\nfor ids, labels in loader:\n    with torch.no_grad():\n"
                   "        out = model(ids)\n    loss = crit(out.logits, labels)\n"
                   "    loss.backward()\n",
            after="import torch\nfor ids, labels in loader:\n    out = model(ids)\n"
                  "    loss = crit(out.logits, labels)\n    loss.backward()\n",
            failure=_failure(),
        ),
        Example(  # gradients are on: another cause (a detached loss)
            before="import torch\nloss = torch.tensor(model(**batch).loss.item())\n"
                   "loss.backward()\n",
            failure=_failure(),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = failure_of(self.rc)
        if failure is None or _CHECK is None or _CHECK(failure) is not True:
            raise NotApplicable("the facts at the failure show no loss without a graph")
        for call in self.program.calls:
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward":
                self._enable_at(call)

    def _enable_at(self, call: cst.Call) -> None:
        condition: cst.BaseExpression | None = None
        for anc in self.program.ancestors(call):
            if isinstance(anc, cst.If) and condition is None:
                condition = anc.test
            if isinstance(anc, cst.With) and anc not in self.plan:
                items = [i for i in anc.items if isinstance(i.item, cst.Call)
                         and self.is_qualified(i.item.func, patterns.NO_GRAD)]
                if items and len(anc.items) == 1:
                    self._with(anc, items[0], condition)
                    return
            if isinstance(anc, cst.FunctionDef):
                decorators = [d for d in anc.decorators if self._no_grad(d.decorator)]
                if decorators and anc not in self.plan:
                    self._function(anc, decorators[0], condition)
                    return
                break
        before = self._forward_block_before(call)
        if before is not None:
            self._with(*before, None)

    def _forward_block_before(self, call: cst.Call) -> tuple[cst.With, cst.WithItem] | None:
        """The nearest ``with torch.no_grad():`` statement before the ``backward()`` call's
        statement in the same block, that assigns a name a later statement of the block
        (up to the ``backward()`` one) reads: the forward whose output the loss is made
        from, run without a graph."""
        stmt = next((a for a in (call, *self.program.ancestors(call))
                     if isinstance(a, (cst.SimpleStatementLine, cst.BaseCompoundStatement))),
                    None)
        parent = self.program.parent(stmt) if stmt is not None else None
        body = list(parent.body) if isinstance(parent, (cst.IndentedBlock, cst.Module)) \
            else []
        if stmt not in body:
            return None
        at = body.index(stmt)
        for i in range(at - 1, -1, -1):
            block = body[i]
            if not isinstance(block, cst.With) or len(block.items) != 1 \
                    or not isinstance(block.items[0].item, cst.Call) \
                    or not self.is_qualified(block.items[0].item.func, patterns.NO_GRAD):
                continue
            assigned = {t.value for a in m.findall(block, m.AssignTarget(target=m.Name()))
                        if isinstance(a, cst.AssignTarget) and isinstance(t := a.target,
                                                                          cst.Name)}
            read = {n.value for later in body[i + 1:at + 1] for n in m.findall(later, m.Name())
                    if isinstance(n, cst.Name)}
            return (block, block.items[0]) if assigned & read else None
        return None

    def _no_grad(self, node: cst.BaseExpression) -> bool:
        func = node.func if isinstance(node, cst.Call) else node
        return self.is_qualified(func, patterns.NO_GRAD)

    def _grad_enabled(self, like: cst.BaseExpression, condition: cst.BaseExpression
                      ) -> cst.Call:
        func = like.func if isinstance(like, cst.Call) else like
        if isinstance(func, cst.Attribute):
            name: cst.BaseExpression = func.with_changes(attr=cst.Name("set_grad_enabled"))
        else:
            AddImportsVisitor.add_needed_import(self.context, "torch", "set_grad_enabled")
            name = cst.Name("set_grad_enabled")
        return cst.Call(func=name, args=[cst.Arg(condition)])

    def _function(self, func: cst.FunctionDef, decorator: cst.Decorator,
                  condition: cst.BaseExpression | None) -> None:
        enabled = self._grad_enabled(decorator.decorator, condition) \
            if condition is not None else None

        def edit(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, cst.FunctionDef)
            kept = [d for d in node.decorators
                    if code(d.decorator) != code(decorator.decorator)]
            node = node.with_changes(decorators=kept)
            if enabled is None or not isinstance(node.body, cst.IndentedBlock):
                return node
            body = list(node.body.body)
            doc = body[:1] if node.get_docstring() is not None else []
            block = cst.With(items=[cst.WithItem(enabled)],
                             body=cst.IndentedBlock(body=cast(
                                 Sequence[cst.BaseStatement], body[len(doc):])))
            return node.with_changes(body=node.body.with_changes(body=[*doc, block]))

        what = f"with {code(enabled)}: around its body" if enabled is not None else \
            "gradients on"
        self.plan_edit(func, edit, f"{func.name.value}() without @{code(decorator.decorator)} "
                                   f"({what}), so backward() has a graph")

    def _with(self, block: cst.With, item: cst.WithItem,
              condition: cst.BaseExpression | None) -> None:
        if condition is not None:
            enabled = self._grad_enabled(item.item, condition)

            def switch(node: cst.CSTNode) -> cst.CSTNode:
                assert isinstance(node, cst.With)
                return node.with_changes(items=[node.items[0].with_changes(item=enabled)])

            self.plan_edit(block, switch, f"with {code(enabled)}: instead of "
                                          f"{code(item.item)}, so backward() has a graph")
            return

        def unwrap(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, cst.With) and isinstance(node.body, cst.IndentedBlock)
            return cast(cst.CSTNode, cst.FlattenSentinel(list(node.body.body)))

        if isinstance(block.body, cst.IndentedBlock):
            self.plan_edit(block, unwrap, f"the training step out of {code(item.item)}, so "
                                          "backward() has a graph")
