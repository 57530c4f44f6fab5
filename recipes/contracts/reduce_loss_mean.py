"""non-scalar-backward: ``backward()`` on a per-element loss.

A loss built with ``reduction="none"`` (kept per sample for logging) or written by hand
as ``(pred - target) ** 2`` is a tensor of one loss per element, and ``backward()`` on it
raises "grad can be implicitly created only for scalar outputs". The facts at the
failure give the tensor ``backward()`` got (``Tensor.backward``'s ``self``: its shape,
floating, more than one element). Fix: the receiver of the failing line's
``X.backward()`` reduced first, ``X.mean().backward()``: the mean the default
``reduction`` of torch's losses takes, so the step size stays that of the usual loss.

Not applied when the tensor is a model's output rather than a loss (the receiver comes
from a call of one of the user's models that is not a torch loss module, or a model
output without ``loss``: ``model-labels`` passes the labels instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import libcst as cst
import libcst.matchers as m

from autofix.categories.catalogue.contracts import output_without_loss
from autofix.categories.failure import backward_tensor, is_float, numel, shape
from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.facts import example_failure
from autofix.toolkit.scope import PlannedEdits, replace_with
from autofix.toolkit.values import Values
from autofix.types import ExceptionInfo

from ._backward import failing_line, the_backward, the_failure, user_fact


def _failure(dims: list[int], line: int, user: Mapping[str, Mapping[str, Any]] | None = None,
             dtype: str = "torch.float32") -> ExceptionInfo:
    tensor = {"kind": "tensor", "dtype": dtype, "shape": dims, "requires_grad": True}
    return example_failure(
        "RuntimeError", "grad can be implicitly created only for scalar outputs",
        user=user or {}, library={"self": tensor}, library_file="torch/_tensor.py",
        library_function="backward", user_line=line)


_LOSS: dict[str, Any] = {"kind": "model", "type": "torch.nn.modules.loss.CrossEntropyLoss"}
_MODEL: dict[str, Any] = {"kind": "model", "type": "torch.nn.modules.container.Sequential"}


class ReduceLossMean(PlannedEdits):
    id = "reduce-loss-mean"
    category = "non-scalar-backward"
    title = "reduce the per-element loss with .mean() before backward()"
    requires_imports = ("torch",)
    subject_from_change = True
    nothing_to_do = "no .backward() call on the failing line"

    examples = (
        Example(  # reduction="none" kept per sample
            before=("import torch\ncriterion = torch.nn.CrossEntropyLoss(reduction='none')\n"
                    "per_sample = criterion(model(x), y)\nper_sample.backward()\n"),
            after=("import torch\ncriterion = torch.nn.CrossEntropyLoss(reduction='none')\n"
                   "per_sample = criterion(model(x), y)\nper_sample.mean().backward()\n"),
            failure=_failure([32], 4, {"criterion": _LOSS, "model": _MODEL}),
        ),
        Example(  # a squared error written by hand, inside a function
            before=("import torch\ndef step(model, x, y):\n"
                    "    loss = (model(x) - y) ** 2\n    loss.backward()\n"),
            after=("import torch\ndef step(model, x, y):\n"
                   "    loss = (model(x) - y) ** 2\n    loss.mean().backward()\n"),
            failure=_failure([200, 1], 4),
        ),
        Example(  # the model's output itself: not a loss to average
            before="import torch\nout = model(x)\nout.backward()\n",
            failure=_failure([16, 2], 3, {"model": _MODEL}),
        ),
        Example(  # a scalar: another fault
            before="import torch\nloss = f(x)\nloss.backward()\n",
            failure=_failure([], 3),
        ),
        Example(  # integer values: not a loss
            before="import torch\nloss = f(x)\nloss.backward()\n",
            failure=_failure([4], 3, dtype="torch.int64"),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        failure = the_failure(self)
        tensor = backward_tensor(failure)
        dims = shape(tensor)
        if dims is None or not dims or numel(dims) == 1 or not is_float(tensor):
            raise NotApplicable("backward() was not given a floating tensor of several "
                                "elements")
        if output_without_loss(failure):
            raise NotApplicable("the tensor is a model output without a loss: the model "
                                "needs the labels, not a mean")
        _, receiver = the_backward(self, failing_line(self, failure))
        if m.matches(receiver, m.Call(func=m.Attribute(attr=m.Name("mean") | m.Name("sum")))):
            raise NotApplicable(f"{code(receiver)} is reduced already")
        model = self._model_output(receiver)
        if model:
            raise NotApplicable(f"{code(receiver)} is the output of the model {model}, not "
                                "a loss")
        mean = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("mean")))
        self.plan_edit(receiver, replace_with(mean),
                       f"{code(mean)}.backward(): backward() got {list(dims)}, one loss "
                       "per element")

    def _model_output(self, receiver: cst.BaseExpression) -> str:
        """The name of the user's model (a module that is not a torch loss) whose call
        gives ``receiver`` its value, "" when none."""
        failure = the_failure(self)
        for value in [receiver, *self.values.origins(receiver)]:
            while isinstance(value, (cst.Subscript, cst.Attribute)):
                value = value.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                fact = user_fact(failure, value.func.value)
                if fact is not None and fact.get("kind") == "model" and \
                        not str(fact.get("type", "")).endswith("Loss"):
                    return value.func.value
        return ""
