"""loss-target-shape: a token-level loss given ``(batch, time, classes)`` scores.

A language model's logits are ``(batch, time, vocab)`` and its targets ``(batch, time)``;
``cross_entropy`` reads a 3-D input as ``(batch, classes, time)`` and raises "Expected
target size [16, 27], got [16, 32]" (or, with the scores flattened and the targets not,
"Expected input batch_size (512) to match target batch_size (16)"). The facts at the
failure give both shapes at the loss (``autofix.categories.failure.loss_shapes``).

Fix, at the loss call on the failing line (a ``torch.nn.functional`` loss, or a local the
facts show is a torch loss module): flattened as the library's models do,
``loss(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))``; an input that is no
plain name (``model(x)``) is flattened with ``.flatten(0, -2)`` so it is computed once.
``reshape`` rather than ``view``: targets sliced out of a longer tensor
(``ids[:, 1:]``) are not contiguous, and ``view`` refuses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import libcst as cst
import libcst.matchers as m

from autofix.categories.failure import loss_shapes
from autofix.toolkit import Example, NotApplicable, code, patterns
from autofix.toolkit.facts import example_failure
from autofix.toolkit.scope import PlannedEdits, replace_with
from autofix.types import ExceptionInfo

from ._backward import calls_at, failing_line, the_failure, user_fact


def _failure(scores: list[int], target: list[int], line: int,
             user: Mapping[str, Mapping[str, Any]] | None = None) -> ExceptionInfo:
    return example_failure(
        "RuntimeError", f"Expected target size [{scores[0]}, {scores[-1]}], got {target}",
        user=user or {},
        library={"input": {"kind": "tensor", "dtype": "torch.float32", "shape": scores},
                 "target": {"kind": "tensor", "dtype": "torch.int64", "shape": target}},
        library_file="torch/nn/functional.py", library_function="cross_entropy",
        user_line=line)


_CRITERION = {"criterion": {"kind": "model", "type": "torch.nn.modules.loss.CrossEntropyLoss"}}


class FlattenTokenLoss(PlannedEdits):
    id = "flatten-token-loss"
    category = "loss-target-shape"
    title = "flatten the token scores and targets before the loss"
    requires_imports = ("torch",)
    subject_from_change = True
    nothing_to_do = "no torch loss call on the failing line"

    examples = (
        Example(  # a loss module, plain names
            before="import torch\nlogits = model(x)\nloss = criterion(logits, y)\n",
            after="import torch\nlogits = model(x)\n"
                  "loss = criterion(logits.reshape(-1, logits.size(-1)), y.reshape(-1))\n",
            failure=_failure([8, 12, 10], [8, 12], 3, _CRITERION),
        ),
        Example(  # the functional loss on a call's result
            before="import torch\nimport torch.nn.functional as F\n"
                   "loss = F.cross_entropy(model(x), y)\n",
            after="import torch\nimport torch.nn.functional as F\n"
                  "loss = F.cross_entropy(model(x).flatten(0, -2), y.reshape(-1))\n",
            failure=_failure([16, 32, 27], [16, 32], 3),
        ),
        Example(  # the scores flattened already, the targets not
            before="import torch\nfrom torch import nn\n"
                   "loss = nn.functional.cross_entropy(logits.view(-1, 27), y)\n",
            after="import torch\nfrom torch import nn\n"
                  "loss = nn.functional.cross_entropy(logits.view(-1, 27), y.reshape(-1))\n",
            failure=_failure([512, 27], [16, 32], 3),
        ),
        Example(  # a sequence classifier's batch mismatch: not token-level
            before="import torch\nloss = criterion(logits, y)\n",
            failure=_failure([16, 3], [8], 2, _CRITERION),
        ),
        Example(  # not a torch loss
            before="import torch\nloss = my_loss(logits, y)\n",
            failure=_failure([8, 12, 10], [8, 12], 2),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = the_failure(self)
        shapes = loss_shapes(failure)
        if shapes is None or not shapes.token_level:
            raise NotApplicable("the loss's input and target shapes are not those of "
                                "unflattened token scores and targets")
        calls = [c for c in calls_at(self, failing_line(self, failure))
                 if self._is_loss(c) and len(c.args) >= 2
                 and all(a.keyword is None and not a.star for a in c.args[:2])]
        if len(calls) != 1:
            raise NotApplicable(self.nothing_to_do if not calls else
                                f"{len(calls)} loss calls on the failing line")
        scores, target = calls[0].args[0].value, calls[0].args[1].value
        if m.matches(target, m.Call(func=m.Attribute(attr=m.Name("reshape") | m.Name("view")
                                                     | m.Name("flatten")))):
            raise NotApplicable(f"{code(target)} is flattened already")
        if shapes.token_level == "both":
            flat = (cst.parse_expression(f"{scores.value}.reshape(-1, {scores.value}"
                                         ".size(-1))") if isinstance(scores, cst.Name)
                    else cst.Call(func=cst.Attribute(value=scores, attr=cst.Name("flatten")),
                                  args=[cst.Arg(cst.Integer("0")),
                                        cst.Arg(cst.UnaryOperation(cst.Minus(),
                                                                   cst.Integer("2")))]))
            self.plan_edit(scores, replace_with(flat),
                           f"{code(flat)}: scores {list(shapes.input)} flattened to "
                           "(batch*time, classes)")
        labels = cst.Call(func=cst.Attribute(value=target, attr=cst.Name("reshape")),
                          args=[cst.Arg(cst.UnaryOperation(cst.Minus(), cst.Integer("1")))])
        self.plan_edit(target, replace_with(labels),
                       f"{code(labels)}: targets {list(shapes.target)} flattened to "
                       "(batch*time,)")

    def _is_loss(self, call: cst.Call) -> bool:
        if self.is_qualified(call.func, patterns.CLASS_ID_LOSS_FUNCTION):
            return True
        if not isinstance(call.func, cst.Name):
            return False
        fact = user_fact(the_failure(self), call.func.value) or {}
        return str(fact.get("type", "")).startswith("torch.nn.modules.loss.")
