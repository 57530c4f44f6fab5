"""logits-to-loss: a loss that applies log_softmax or sigmoid itself is given probabilities.

``nn.CrossEntropyLoss`` / ``F.cross_entropy`` apply ``log_softmax`` to their input and
``nn.BCEWithLogitsLoss`` a ``sigmoid``; ``nn.NLLLoss`` expects log-probabilities (PyTorch's
documentation of each loss). Given softmax or sigmoid outputs, they train on silently,
slowly and worse (the ``probabilities-to-logit-loss`` finding, read on the loss's real
input by ``autofix/run/child/loss_inputs.py``, with the user's line of the loss call and,
when the user's code applied the layer itself, the line of the layer).

The probability layer leaves the loss's path, where a reviewer expects it; predictions
made by ``argmax`` are unchanged (the argmax of the logits is the argmax of their softmax):

- the layer written inside the loss call (``criterion(F.softmax(out, dim=1), y)``):
  ``criterion(out, y)``;
- a name bound to the layer and given to the loss (``probs = F.softmax(logits, dim=1)``):
  the loss gets the layer's input (``logits``), named first when it is an expression
  (``logits = model(x)``), and ``probs`` stays for whatever else reads it;
- the layer in a model's ``forward`` (``return F.softmax(self.fc(x), dim=-1)``, in this
  file or one of the user's modules) or as the last layer of an ``nn.Sequential`` the loss
  is given: the layer removed; for ``NLLLoss`` it becomes ``log_softmax`` /
  ``nn.LogSoftmax`` instead.

A sigmoid inside the model is kept (predictions compare its probabilities with 0.5, which
logits would break): the loss becomes the one that takes probabilities,
``BCEWithLogitsLoss`` -> ``BCELoss`` (``binary_cross_entropy_with_logits`` ->
``binary_cross_entropy``), unless it has a ``pos_weight`` (advice then).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, argument, code, find, keyword
from autofix.toolkit.insert import enclosing_statement
from autofix.toolkit.operators import insert_statement
from autofix.toolkit.patterns import (
    LOGIT_LOSS_CLASS,
    LOGIT_LOSS_FUNCTION,
    SEQUENTIAL,
    SIGMOID,
    SIGMOID_LAYER,
    SOFTMAX,
    SOFTMAX_LAYER,
)
from autofix.toolkit.scope import PlannedEdits, fresh_name, replace_with

from ._sites import calls_at, in_file, is_method, sites

KIND = "probabilities-to-logit-loss"
#: Methods that keep the values (a tensor's shape or dtype): followed back through.
SHAPE_METHODS = frozenset({"view", "reshape", "squeeze", "unsqueeze", "float", "double",
                           "to", "contiguous", "flatten", "permute", "transpose", "clone"})

_HEAD = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"


def _facts(loss: str, layer: str, line: int, at: int = 0, file: str = "script.py"
           ) -> dict[str, Any]:
    place = {"file": file, "line": at, "text": ""} if at else {}
    return {"invariants": [{"kind": KIND, "file": "script.py", "line": line,
                            "facts": {"loss": loss, "layer": layer, "layer_at": place}}]}


class LogitsToLoss(PlannedEdits):
    id = "logits-to-loss"
    category = KIND
    title = "give the loss the logits, not probabilities (the softmax/sigmoid off the " \
            "loss's path)"
    requires_words = (("softmax", "sigmoid", "Softmax", "Sigmoid"),)
    nothing_to_do = "no softmax or sigmoid on the loss's path at the line the run reported"

    examples = (
        Example(  # the layer inside the loss call
            before=_HEAD + "criterion = nn.CrossEntropyLoss()\n"
                           "loss = criterion(F.softmax(model(x), dim=1), y)\n",
            after=_HEAD + "criterion = nn.CrossEntropyLoss()\n"
                          "loss = criterion(model(x), y)\n",
            run_facts=_facts("cross_entropy", "softmax", 5, 5),
        ),
        Example(  # a name given to the loss; predictions keep reading the probabilities
            before=_HEAD + "logits = model(x)\nprobs = torch.softmax(logits, dim=-1)\n"
                           "loss = F.cross_entropy(probs, y)\npreds = probs.argmax(-1)\n",
            after=_HEAD + "logits = model(x)\nprobs = torch.softmax(logits, dim=-1)\n"
                          "loss = F.cross_entropy(logits, y)\npreds = probs.argmax(-1)\n",
            run_facts=_facts("cross_entropy", "softmax", 6, 5),
        ),
        Example(  # the layer's input is an expression: named first
            before=_HEAD + "for x, y in loader:\n"
                           "    probs = model(x).softmax(dim=1)\n"
                           "    loss = criterion(probs, y)\n"
                           "    correct += (probs.argmax(1) == y).sum()\n",
            after=_HEAD + "for x, y in loader:\n"
                          "    logits = model(x)\n"
                          "    probs = logits.softmax(dim=1)\n"
                          "    loss = criterion(logits, y)\n"
                          "    correct += (probs.argmax(1) == y).sum()\n",
            run_facts=_facts("cross_entropy", "softmax", 6, 5),
        ),
        Example(  # a name only the loss reads: it holds the logits now, named so
            before=_HEAD + "def step(model, x, y):\n"
                           "    probs = F.softmax(model(x), dim=1)\n"
                           "    return criterion(probs, y)\n",
            after=_HEAD + "def step(model, x, y):\n"
                          "    logits = model(x)\n"
                          "    return criterion(logits, y)\n",
            run_facts=_facts("cross_entropy", "softmax", 6, 5),
        ),
        Example(  # a model's forward (the loss is in another file)
            before=_HEAD + "class Net(nn.Module):\n"
                           "    def forward(self, x):\n"
                           "        return F.softmax(self.fc(x), dim=-1)\n",
            after=_HEAD + "class Net(nn.Module):\n"
                          "    def forward(self, x):\n"
                          "        return self.fc(x)\n",
            run_facts={"invariants": [{"kind": KIND, "file": "train.py", "line": 9, "facts": {
                "loss": "cross_entropy", "layer": "softmax",
                "layer_at": {"file": "script.py", "line": 6}}}]},
        ),
        Example(  # nn.Sequential ending in nn.Softmax; NLLLoss wants log-probabilities
            before=_HEAD + "model = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1))\n"
                           "criterion = nn.NLLLoss()\nloss = criterion(model(x), y)\n",
            after=_HEAD + "model = nn.Sequential(nn.Linear(4, 3), nn.LogSoftmax(dim=1))\n"
                          "criterion = nn.NLLLoss()\nloss = criterion(model(x), y)\n",
            run_facts=_facts("nll_loss", "softmax", 6),
        ),
        Example(  # nn.Sequential ending in nn.Softmax given to CrossEntropyLoss
            before=_HEAD + "model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Softmax(1))\n"
                           "loss = nn.CrossEntropyLoss()(model(x), y)\n",
            after=_HEAD + "model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())\n"
                          "loss = nn.CrossEntropyLoss()(model(x), y)\n",
            run_facts=_facts("cross_entropy", "softmax", 5),
        ),
        Example(  # a sigmoid predictions also read: they keep it, the loss gets logits
            before=_HEAD + "criterion = nn.BCEWithLogitsLoss()\nprobs = torch.sigmoid(model(x))\n"
                           "loss = criterion(probs, y)\npreds = probs > 0.5\n",
            after=_HEAD + "criterion = nn.BCEWithLogitsLoss()\nlogits = model(x)\n"
                          "probs = torch.sigmoid(logits)\nloss = criterion(logits, y)\n"
                          "preds = probs > 0.5\n",
            run_facts=_facts("binary_cross_entropy_with_logits", "sigmoid", 6, 5),
        ),
        Example(  # a model ending in nn.Sigmoid: the loss that takes probabilities
            before=_HEAD + "model = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())\n"
                           "criterion = nn.BCEWithLogitsLoss()\n"
                           "loss = criterion(model(x).squeeze(1), y)\n",
            after=_HEAD + "model = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())\n"
                          "criterion = nn.BCELoss()\n"
                          "loss = criterion(model(x).squeeze(1), y)\n",
            run_facts=_facts("binary_cross_entropy_with_logits", "sigmoid", 6),
        ),
        Example(  # the softmax is the predictions', not on the loss's path
            before=_HEAD + "logits = model(x)\nloss = F.cross_entropy(logits, y)\n"
                           "probs = F.softmax(logits, dim=1)\n",
            run_facts=_facts("cross_entropy", "softmax", 5),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        for site in sites(self, KIND):
            facts = site.get("facts") or {}
            if not isinstance(facts, Mapping):
                continue
            loss, layer = str(facts.get("loss", "")), str(facts.get("layer", ""))
            layer_at = facts.get("layer_at") or {}
            loss_here = in_file(self, site)
            done = False
            if isinstance(layer_at, Mapping) and in_file(self, layer_at):
                op = self._op_at(int(layer_at.get("line", 0) or 0), layer)
                if op is not None:
                    done = self._remove(op, loss, layer,
                                        self._loss_call(site) if loss_here else None)
            if not done and loss_here:
                done = self._from_loss(site, loss, layer)
        if not self.edits:
            raise NotApplicable(self.reason or self.nothing_to_do)

    # -- finding the layer -----------------------------------------------------------

    def _is_op(self, call: cst.Call, layer: str) -> bool:
        """``call`` applies ``layer`` ("softmax"/"sigmoid") as a function or a method."""
        func = call.func
        if self.is_qualified(func, SOFTMAX if layer == "softmax" else SIGMOID):
            return True
        return is_method(self, func, layer)

    def _op_input(self, call: cst.Call) -> cst.BaseExpression | None:
        if isinstance(call.func, cst.Attribute) and is_method(self, call.func,
                                                              call.func.attr.value):
            return call.func.value  # x.softmax(dim=1)
        return argument(call, "input", 0)

    def _op_at(self, line: int, layer: str) -> cst.Call | None:
        return next((c for c in calls_at(self, line) if self._is_op(c, layer)), None)

    def _loss_call(self, site: Mapping[str, Any]) -> cst.Call | None:
        """The loss call of the statement at the site's line: a loss function of
        ``torch.nn.functional``, or a call of an ``nn`` loss object."""
        for call in calls_at(self, int(site.get("line", 0) or 0)):
            func = call.func
            if self.is_qualified(func, LOGIT_LOSS_FUNCTION):
                return call
            values = [func] if isinstance(func, cst.Call) else self.program.values(func)
            if any(isinstance(v, cst.Call) and self.is_qualified(v.func, LOGIT_LOSS_CLASS)
                   for v in values):
                return call
        # the run saw the loss here: a call of a loss object the file does not build
        return next((c for c in calls_at(self, int(site.get("line", 0) or 0))
                     if len([a for a in c.args if a.keyword is None]) >= 2
                     and not any(q.startswith("torch.") for q in self.qualified(c.func))),
                    None)

    def _trace(self, expr: cst.BaseExpression, layer: str, depth: int = 0
               ) -> cst.CSTNode | None:
        """The layer ``expr`` (a loss's input) is made by, through names, shape methods, a
        model call (an ``nn.Sequential``'s last layer, a module class's ``forward``)."""
        if depth > 6:
            return None
        if isinstance(expr, cst.Call):
            if self._is_op(expr, layer):
                return expr
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in SHAPE_METHODS:
                return self._trace(func.value, layer, depth + 1)
            for value in self.program.values(func):
                found = self._model_layer(value, layer, depth)
                if found is not None:
                    return found
            return None
        if isinstance(expr, cst.Name):
            values = self.program.values(expr)
            if len(values) == 1 and isinstance(values[0], cst.BaseExpression) \
                    and values[0] is not expr:
                return self._trace(values[0], layer, depth + 1)
        return None

    def _model_layer(self, model: cst.CSTNode, layer: str, depth: int) -> cst.CSTNode | None:
        """The last layer of ``nn.Sequential(...)`` when it is ``layer``; the layer a
        module class's ``forward`` returns."""
        if not isinstance(model, cst.Call):
            return None
        if self.is_qualified(model.func, SEQUENTIAL):
            last = model.args[-1].value if model.args else None
            pattern = SOFTMAX_LAYER if layer == "softmax" else SIGMOID_LAYER
            if isinstance(last, cst.Call) and self.is_qualified(last.func, pattern):
                return last
            return None
        cls = self.program.class_called(model)
        forward = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef)
                        and s.name.value == "forward"), None) if cls is not None else None
        if forward is None:
            return None
        for value in self.program.returns(forward):
            found = self._trace(value, layer, depth + 1)
            if found is not None:
                return found
        return None

    # -- the edits -------------------------------------------------------------------

    def _from_loss(self, site: Mapping[str, Any], loss: str, layer: str) -> bool:
        call = self._loss_call(site)
        given = argument(call, "input", 0) if call is not None else None
        if call is None or given is None:
            self.reason = self.reason or f"no {loss} call at line {site.get('line')}"
            return False
        found = self._trace(given, layer)
        if isinstance(found, cst.Call) and self._is_op(found, layer):
            return self._remove(found, loss, layer, call)
        if isinstance(found, cst.Call):  # the last layer of an nn.Sequential
            return self._drop_layer(found, loss, layer, call)
        self.reason = self.reason or (f"the input of the loss at line {site.get('line')} "
                                      f"is not traced to a {layer} in this file")
        return False

    def _inside(self, node: cst.CSTNode, call: cst.Call | None) -> bool:
        return call is not None and any(a is call for a in self.program.ancestors(node))

    def _remove(self, op: cst.Call, loss: str, layer: str, loss_call: cst.Call | None
                ) -> bool:
        """Take the layer ``op`` off the loss's path (module docstring)."""
        source = self._op_input(op)
        if source is None:
            return False
        if self._inside(op, loss_call):  # written inside the loss call
            return self._unwrap(op, source, loss)
        parent = self.program.parent(op)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
                and isinstance(parent.targets[0].target, cst.Name) and loss_call is not None:
            return self._loss_gets_input(op, source, parent.targets[0].target, loss_call)
        if layer == "sigmoid":
            return self._swap_loss(loss_call) if loss_call is not None else self._decline(
                "a sigmoid made outside the loss's file: its probabilities may be "
                "thresholded elsewhere; use BCELoss there")
        return self._unwrap(op, source, loss)

    def _decline(self, why: str) -> bool:
        self.reason = self.reason or why
        return False

    def _unwrap(self, op: cst.Call, source: cst.BaseExpression, loss: str) -> bool:
        if loss == "nll_loss":
            func = op.func
            if not isinstance(func, cst.Attribute) or func.attr.value != "softmax":
                return self._decline("NLLLoss given a layer that has no log_ form here")
            self.plan_edit(func.attr, replace_with(cst.Name("log_softmax")),
                           "softmax -> log_softmax: NLLLoss takes log-probabilities")
            return True
        self.plan_edit(op, replace_with(source),
                       f"{code(op)} -> {code(source)}: the loss applies the layer itself")
        return True

    def _loss_gets_input(self, op: cst.Call, source: cst.BaseExpression, name: cst.Name,
                         loss_call: cst.Call) -> bool:
        """``probs = layer(source)`` given to ``loss_call``: the loss gets ``source``."""
        given = argument(loss_call, "input", 0)
        if not (isinstance(given, cst.Name) and given.value == name.value):
            return self._decline(f"the loss is not given {name.value} directly")
        if not self._read_elsewhere(name, given):  # only the loss reads it: name it logits
            new = fresh_name("logits", self.program.visible_names(op))
            self.plan_edit(name, replace_with(cst.Name(new)), f"{name.value} -> {new}")
            self.plan_edit(op, replace_with(source), f"{code(op)} -> {code(source)}: the "
                                                     "loss applies the layer itself")
            self.plan_edit(given, replace_with(cst.Name(new)), f"the loss gets {new}")
            return True
        if isinstance(source, cst.Name) and self.program.resolve(source.value, given) == \
                self.program.resolve(source.value, op):
            self.plan_edit(given, replace_with(source),
                           f"the loss gets {source.value}, not {name.value}")
            return True
        statement = enclosing_statement(self, op)
        new = fresh_name("logits", self.program.visible_names(op))
        try:
            insert_statement(self, statement, f"{new} = {code(source)}",
                             f"{code(source)} named {new}")
        except ValueError:
            return self._decline("the layer's statement is not in a block")
        self.plan_edit(source, replace_with(cst.Name(new)), f"the layer reads {new}")
        self.plan_edit(given, replace_with(cst.Name(new)),
                       f"the loss gets {new}, not {name.value}")
        return True

    def _read_elsewhere(self, target: cst.Name, given: cst.Name) -> bool:
        """``target``'s binding is read somewhere other than ``given`` (the loss's input)."""
        holder = self.program.function_of(target) or self.program.tree
        for node in find(holder, m.Name(target.value)):
            if node is target or node is given:
                continue
            if target in self.program.resolve(target.value, node):
                return True
        return False

    def _swap_loss(self, loss_call: cst.Call) -> bool:
        """``BCEWithLogitsLoss`` -> ``BCELoss`` where the loss object is built (or the
        function renamed), without ``pos_weight``."""
        func = loss_call.func
        if self.is_qualified(func, LOGIT_LOSS_FUNCTION) and isinstance(func, cst.Attribute) \
                and func.attr.value == "binary_cross_entropy_with_logits" \
                and keyword(loss_call, "pos_weight") is None:
            self.plan_edit(func.attr, replace_with(cst.Name("binary_cross_entropy")),
                           "the loss takes the sigmoid's probabilities")
            return True
        for value in [func] if isinstance(func, cst.Call) else self.program.values(func):
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value == "BCEWithLogitsLoss" \
                    and keyword(value, "pos_weight") is None:
                self.plan_edit(value.func.attr, replace_with(cst.Name("BCELoss")),
                               "BCEWithLogitsLoss -> BCELoss: the loss takes the "
                               "sigmoid's probabilities, which predictions also read")
                return True
        return self._decline("the sigmoid's probabilities are read elsewhere and the loss "
                             "has a pos_weight (or is built where autofix cannot swap it)")

    def _drop_layer(self, last: cst.Call, loss: str, layer: str, loss_call: cst.Call
                    ) -> bool:
        """The last layer of an ``nn.Sequential``: removed (``nn.LogSoftmax`` for NLLLoss;
        a sigmoid keeps it and swaps the loss)."""
        if layer == "sigmoid":
            return self._swap_loss(loss_call)
        if loss == "nll_loss":
            func = last.func
            if not isinstance(func, cst.Attribute):
                return self._decline("nn.Softmax imported by name: change it to LogSoftmax")
            self.plan_edit(func.attr, replace_with(cst.Name("LogSoftmax")),
                           "nn.Softmax -> nn.LogSoftmax: NLLLoss takes log-probabilities")
            return True
        sequential = self.program.parent(self.program.parent(last) or last)
        if not isinstance(sequential, cst.Call) or len(sequential.args) < 2:
            return self._decline("the Softmax is the Sequential's only layer")

        def drop(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, cst.Call)
            args = list(node.args[:-1])
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return node.with_changes(args=args)

        self.plan_edit(sequential, drop, f"{code(last)} removed: the loss applies "
                                         "log_softmax itself")
        return True
