"""add-eval-mode: a model with dropout or batch norm evaluated while in training mode.

``nn.Module.eval()`` switches dropout off and makes batch norm use its running statistics;
``torch.no_grad()`` / ``torch.inference_mode()`` only stop the gradients (PyTorch's
"Autograd mechanics: locally disabling gradient computation" notes they are not the same).
The probe checks the invariant "every forward whose output is not backpropagated runs in
eval mode" on the real run (autofix/run/child/modes.py): a forward of the user's model in
training mode, under no_grad or with an output no ``backward()`` ever reached, of a model
with dropout or batch norm, keeps the line of that model call (``train_mode_evals``: file,
line, the model's class): the run's finding is ``eval-without-eval-mode``.

The fix, at each such line of this file, where a reviewer expects it: the model is the
receiver that line calls (a name or ``self.x``, never an imported function); the
evaluation is the largest statement around the call that does not train (no
``backward()`` or ``step()``, itself or through the module's functions): a ``with
torch.no_grad():`` block, the loop over the validation data, a prediction line.
``<model>.eval()`` goes right before it, or first in the function when the whole function
evaluates (an ``evaluate()`` or ``predict()`` helper, a method, a function decorated with
``no_grad``); ``<model>.train()`` goes right after the statement of the training loop that
holds the evaluation (the innermost enclosing loop that trains), unless that loop already
calls ``<model>.train()`` before it. An evaluation function with no training loop around
it gets ``<model>.train()`` at each call site of the function that sits in a training loop
(the argument given for the model's parameter). An evaluation already preceded by
``<model>.eval()`` is left as it is. Declines (``NotApplicable``) when the line calls no
single model.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import libcst.matchers as m
from libcst.metadata import QualifiedNameProvider, QualifiedNameSource

from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.insert import Statement
from autofix.toolkit.operators import insert_statement
from autofix.toolkit.scope import PlannedEdits

from ._training import in_file, trains


def _facts(line: int, model: str = "Sequential", no_grad: bool = True) -> dict[str, Any]:
    return {"no_grad_train_calls": 8 if no_grad else 0, "no_grad_eval_calls": 0,
            "train_mode_evals": [
                {"file": "script.py", "line": line, "function": "<module>", "model": model,
                 "layer": "Dropout", "calls": 8, "backpropagated": 0, "no_grad": no_grad}]}


_LOOP = (
    "for epoch in range(3):\n"
    "    for x, y in loader:\n"
    "        loss_fn(model(x), y).backward()\n"
    "        optimizer.step()\n"
)


def _method_call(stmt: cst.CSTNode, method: str) -> str | None:
    """The receiver's code of a statement ``RECEIVER.method()`` alone on its line."""
    if not m.matches(stmt, m.SimpleStatementLine(body=[m.Expr(m.Call(
            func=m.Attribute(attr=m.Name(method)), args=[]))])):
        return None
    assert isinstance(stmt, cst.SimpleStatementLine)
    expr = stmt.body[0]
    assert isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call)
    func = expr.value.func
    assert isinstance(func, cst.Attribute)
    return code(func.value)


class AddEvalMode(PlannedEdits):
    id = "add-eval-mode"
    category = "eval-without-eval-mode"
    title = "switch the model to eval mode for its evaluation (model.eval(), then model.train())"
    nothing_to_do = "no evaluation statement around the model call the run evaluated in " \
                    "training mode"

    examples = (
        Example(  # evaluated every epoch: eval before the block, train back after it
            before=_LOOP + "    with torch.no_grad():\n"
                           "        acc = (model(xt).argmax(1) == yt).float().mean()\n",
            after=_LOOP + "    model.eval()\n    with torch.no_grad():\n"
                          "        acc = (model(xt).argmax(1) == yt).float().mean()\n"
                          "    model.train()\n",
            run_facts=_facts(6),
        ),
        Example(  # evaluated once after training: nothing trains after it
            before=_LOOP + "with torch.inference_mode():\n    out = model(xt)\n",
            after=_LOOP + "model.eval()\nwith torch.inference_mode():\n    out = model(xt)\n",
            run_facts=_facts(6),
        ),
        Example(  # an evaluate() helper; its call site's loop puts train mode back itself
            before="def evaluate(net, x, y):\n    with torch.no_grad():\n"
                   "        return F.cross_entropy(net(x), y).item()\n\n\n"
                   "for epoch in range(3):\n    model.train()\n"
                   "    loss_fn(model(x), y).backward()\n    optimizer.step()\n"
                   "    print(evaluate(model, xv, yv))\n",
            after="def evaluate(net, x, y):\n    net.eval()\n    with torch.no_grad():\n"
                  "        return F.cross_entropy(net(x), y).item()\n\n\n"
                  "for epoch in range(3):\n    model.train()\n"
                  "    loss_fn(model(x), y).backward()\n    optimizer.step()\n"
                  "    print(evaluate(model, xv, yv))\n",
            run_facts=_facts(3, "Classifier"),
        ),
        Example(  # a decorated evaluate() called in the training loop: train back there
            before="@torch.no_grad()\ndef evaluate(net, x):\n    return net(x)\n\n\n"
                   + _LOOP + "    score = evaluate(model, xv)\n",
            after="@torch.no_grad()\ndef evaluate(net, x):\n    net.eval()\n"
                  "    return net(x)\n\n\n"
                  + _LOOP + "    score = evaluate(model, xv)\n    model.train()\n",
            run_facts=_facts(3, "Classifier"),
        ),
        Example(  # a module-level evaluation loop after training, gradients on
            before=_LOOP + "correct = 0\nfor x, y in val_loader:\n"
                           "    correct += (model(x).argmax(1) == y).sum().item()\n"
                           "print(correct)\n",
            after=_LOOP + "correct = 0\nmodel.eval()\nfor x, y in val_loader:\n"
                          "    correct += (model(x).argmax(1) == y).sum().item()\n"
                          "print(correct)\n",
            run_facts=_facts(7, no_grad=False),
        ),
        Example(  # a class-based project: the predict method, the model an attribute
            before="class Runner:\n    def fit(self, loader):\n        for x, y in loader:\n"
                   "            self.loss(self.model(x), y).backward()\n"
                   "            self.optimizer.step()\n\n"
                   "    def predict(self, x):\n        logits = self.model(x)\n"
                   "        return logits.argmax(-1)\n",
            after="class Runner:\n    def fit(self, loader):\n        for x, y in loader:\n"
                  "            self.loss(self.model(x), y).backward()\n"
                  "            self.optimizer.step()\n\n"
                  "    def predict(self, x):\n        self.model.eval()\n"
                  "        logits = self.model(x)\n        return logits.argmax(-1)\n",
            run_facts=_facts(8, "Classifier", no_grad=False),
        ),
        Example(  # an epoch loop that trains through a helper and evaluates inline
            before="def train_epoch(model, loader, optimizer):\n    for x, y in loader:\n"
                   "        loss_fn(model(x), y).backward()\n        optimizer.step()\n\n\n"
                   "def main(model, loader, optimizer, xv, yv):\n    for epoch in range(3):\n"
                   "        train_epoch(model, loader, optimizer)\n"
                   "        val_loss = loss_fn(model(xv), yv).item()\n",
            after="def train_epoch(model, loader, optimizer):\n    for x, y in loader:\n"
                  "        loss_fn(model(x), y).backward()\n        optimizer.step()\n\n\n"
                  "def main(model, loader, optimizer, xv, yv):\n    for epoch in range(3):\n"
                  "        train_epoch(model, loader, optimizer)\n        model.eval()\n"
                  "        val_loss = loss_fn(model(xv), yv).item()\n        model.train()\n",
            run_facts=_facts(10, "Classifier", no_grad=False),
        ),
        Example(  # the run evaluated in eval mode: not this recipe's fault
            before=_LOOP + "    model.eval()\n    with torch.no_grad():\n"
                           "        out = model(xt)\n    model.train()\n",
            run_facts={**_facts(7), "no_grad_train_calls": 0, "train_mode_evals": []},
        ),
        Example(  # the line the run named calls no model of the script (F.softmax only)
            before=_LOOP + "with torch.no_grad():\n    p = F.softmax(logits, -1)\n",
            run_facts=_facts(6),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        sites = [s for s in self.rc.facts.get("train_mode_evals") or [] if isinstance(s, dict)]
        if not sites:
            raise NotApplicable("the run evaluated no dropout or batch norm in training mode")
        lines = sorted({int(s["line"]) for s in sites
                        if in_file(self, s) and isinstance(s.get("line"), int)})
        if not lines:
            raise NotApplicable("the evaluation in training mode is in another file")
        done: set[cst.CSTNode] = set()
        for line in lines:
            model = self._model_call(line)
            if model is None:
                continue
            self._fix(model, done)

    def _model_call(self, line: int) -> cst.Call | None:
        """The one call of a module object the script made at ``line``: its function a
        name or attribute chain of the script (not imported, not a builtin), not a method
        of a call's result."""
        found: dict[str, cst.Call] = {}
        for call in self.program.calls:
            if self.program.line(call) != line or not m.matches(
                    call.func, m.Name() | m.Attribute(value=m.Name() | m.Attribute())):
                continue
            names = self.get_metadata(QualifiedNameProvider, call.func, set())
            if any(n.source in (QualifiedNameSource.IMPORT, QualifiedNameSource.BUILTIN)
                   for n in names) or m.matches(call.func, m.Attribute(value=m.Call())):
                continue
            if isinstance(call.func, cst.Attribute) and \
                    not m.matches(call.func.value, m.Name("self")):
                continue  # x.method(...): a method of an object, not a module's forward
            if self.program.function_called(call) is not None \
                    or self.program.class_called(call) is not None:
                continue  # a function or class of the script
            found.setdefault(code(call.func), call)
        if len(found) > 1:  # criterion(model(x), y): the forward is the innermost call
            calls = list(found.values())
            found = {k: c for k, c in found.items()
                     if not any(o is not c and any(n is o for n in m.findall(c, m.Call()))
                                for o in calls)}
        return next(iter(found.values())) if len(found) == 1 else None

    def _fix(self, call: cst.Call, done: set[cst.CSTNode]) -> None:
        model = code(call.func)
        where = self._evaluation(call)
        if where is None or where in done:
            return
        done.add(where)
        if isinstance(where, cst.FunctionDef):
            assert isinstance(where.body, cst.IndentedBlock)
            stmts = list(where.body.body)
            docstring = m.matches(stmts[0], m.SimpleStatementLine(
                body=[m.Expr(m.SimpleString() | m.ConcatenatedString())]))
            first = stmts[1] if docstring and len(stmts) > 1 else stmts[0]
            assert isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
            if _method_call(first, "eval") != model:
                insert_statement(self, first, f"{model}.eval()",
                                 f"{model}.eval() first in {where.name.value}(), which "
                                 "evaluates the model: it ran in training mode (dropout on, "
                                 "batch norm on the batch's statistics)")
            if self._training_loop(where) is None:
                self._train_back_at_calls(where, model)
            return
        holder = self.program.parent(where)
        if not isinstance(where, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) or \
                not isinstance(holder, (cst.IndentedBlock, cst.Module)):
            return
        body = list(holder.body)
        at = body.index(where)
        if at == 0 or _method_call(body[at - 1], "eval") != model:
            insert_statement(self, where, f"{model}.eval()",
                             f"{model}.eval() before the evaluation: the model was evaluated "
                             "in training mode (dropout on, batch norm on the batch's "
                             "statistics)")
        self._train_back(where, model)
        func = self.program.function_of(where)
        if func is not None and self._training_loop(where, func) is None \
                and not trains(self.program, func.body):
            self._train_back_at_calls(func, model)

    def _evaluation(self, call: cst.Call) -> cst.CSTNode | None:
        """Where the evaluation around ``call`` starts: the largest statement holding it
        that does not train (inside its function, or at module level), or the function
        itself when none of its body trains; ``None`` when the call's own statement
        trains (a forward used for a loss)."""
        best: cst.CSTNode | None = None
        for anc in self.program.ancestors(call):
            if isinstance(anc, cst.FunctionDef):
                return anc if best is not None and not trains(self.program, anc.body) \
                    else best
            if isinstance(anc, (cst.Lambda, cst.ClassDef)):
                return best
            if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and \
                    isinstance(self.program.parent(anc), (cst.IndentedBlock, cst.Module)):
                if trains(self.program, anc):
                    return best
                best = anc
        return best

    def _training_loop(self, node: cst.CSTNode, stop: cst.CSTNode | None = None
                       ) -> tuple[cst.CSTNode, Statement] | None:
        """The innermost loop around ``node`` (inside ``stop``) that trains, and the
        statement of its body that holds ``node``."""
        child: cst.CSTNode = node
        for anc in self.program.ancestors(node):
            if anc is stop:
                return None
            if isinstance(anc, (cst.For, cst.While)) and trains(self.program, anc.body):
                body = anc.body
                if isinstance(body, cst.IndentedBlock) and child in body.body:
                    assert isinstance(child, (cst.SimpleStatementLine,
                                              cst.BaseCompoundStatement))
                    return anc, child
                return None
            if isinstance(anc, cst.FunctionDef):
                return None
            if not isinstance(anc, cst.IndentedBlock):
                child = anc
        return None

    def _train_back(self, node: cst.CSTNode, model: str) -> None:
        """``<model>.train()`` after the statement of the training loop that holds ``node``,
        unless the loop switches to training mode before it or right after it."""
        found = self._training_loop(node)
        if found is None:
            return
        loop, stmt = found
        assert isinstance(loop, (cst.For, cst.While)) and isinstance(loop.body,
                                                                    cst.IndentedBlock)
        body = list(loop.body.body)
        at = body.index(stmt)
        if any(_method_call(s, "train") == model for s in body[:at]) or \
                (at + 1 < len(body) and _method_call(body[at + 1], "train") == model):
            return
        insert_statement(self, stmt, f"{model}.train()",
                         f"{model}.train() after the evaluation: training resumes in the loop",
                         before=False)

    def _train_back_at_calls(self, func: cst.FunctionDef, model: str) -> None:
        """``<argument>.train()`` after each call of ``func`` in a training loop, the
        argument being what the call gives ``func``'s parameter ``model`` (the same name
        when ``model`` is no parameter)."""
        params = {p.name.value for p in (*func.params.posonly_params, *func.params.params,
                                         *func.params.kwonly_params)}
        for site in self.program.call_sites(func):
            given: cst.BaseExpression | None = cst.parse_expression(model) \
                if model not in params \
                else self.program.bound(func, site, model)
            if given is None or not m.matches(given, m.Name() | m.Attribute()):
                continue
            self._train_back(site, code(given))
