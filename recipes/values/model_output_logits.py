"""model-output-not-tensor: the model's output object given to a torch loss.

Hugging Face models return a ``ModelOutput`` (``SequenceClassifierOutput``), so
``criterion(outputs, labels)`` gives ``nn.CrossEntropyLoss`` an object where it needs the
logits tensor ("cross_entropy_loss(): argument 'input' (position 1) must be Tensor, not
SequenceClassifierOutput"). The facts at the failure name the variable: a local of the
failing user frame that is a ``ModelOutput`` holding ``logits``. Fix: that variable's
``.logits`` as the loss's input, at each torch loss call (a loss module built in the
module, or ``torch.nn.functional``'s) that gets it first.
"""

from __future__ import annotations

import libcst as cst

from autofix.categories.failure import is_model_output
from autofix.toolkit import Example, NotApplicable, code, patterns
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.scope import PlannedEdits, replace_with
from autofix.toolkit.values import Values
from autofix.types import ExceptionInfo


def _failure(name: str = "outputs") -> ExceptionInfo:
    output = {"kind": "mapping", "type": "transformers.modeling_outputs.SequenceClassifierOutput",
              "keys": ["loss", "logits"]}
    return example_failure(
        "TypeError", "cross_entropy_loss(): argument 'input' (position 1) must be Tensor, not "
        "SequenceClassifierOutput", user={name: output, "labels": {"kind": "tensor"}},
        library={"input": output}, library_file="torch/nn/modules/loss.py",
        library_function="forward")


class PassLogits(PlannedEdits):
    id = "model-output-logits"
    category = "model-output-not-tensor"
    title = "give the loss the model output's logits, not the output object"
    requires_imports = ("torch",)
    nothing_to_do = "no torch loss call given the model's output object first"

    examples = (
        Example(
            before="from torch import nn\ncriterion = nn.CrossEntropyLoss()\n"
                   "for batch in loader:\n"
                   "    labels = batch.pop('labels')\n"
                   "    outputs = model(**batch)\n"
                   "    loss = criterion(outputs, labels)\n",
            after="from torch import nn\ncriterion = nn.CrossEntropyLoss()\n"
                  "for batch in loader:\n"
                  "    labels = batch.pop('labels')\n"
                  "    outputs = model(**batch)\n"
                  "    loss = criterion(outputs.logits, labels)\n",
            failure=_failure(),
        ),
        Example(  # the functional loss, another name
            before="import torch.nn.functional as F\n"
                   "out = model(input_ids)\nloss = F.cross_entropy(out, y)\n",
            after="import torch.nn.functional as F\n"
                  "out = model(input_ids)\nloss = F.cross_entropy(out.logits, y)\n",
            failure=_failure("out"),
        ),
        Example(  # not a torch loss
            before="import torch\nout = model(input_ids)\nloss = my_loss(out, y)\n",
            failure=_failure("out"),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        failure = failure_of(self.rc)
        frame = next(iter(failure.user_frames()), None) if failure is not None else None
        if frame is None:
            raise NotApplicable("the facts at the failure show no user frame")
        names = {n for n, v in frame.values.items()
                 if is_model_output(v) and "logits" in (v.get("keys") or ())}
        if not names:
            raise NotApplicable("no local of the failing frame is a model output with logits")
        for call in self.program.calls:
            if not call.args or call.args[0].keyword is not None or not self._is_loss(call):
                continue
            first = call.args[0].value
            if isinstance(first, cst.Name) and first.value in names:
                logits = cst.Attribute(value=first, attr=cst.Name("logits"))
                self.plan_edit(first, replace_with(logits),
                               f"{code(logits)} as the loss's input, not the output object")

    def _is_loss(self, call: cst.Call) -> bool:
        if self.is_qualified(call.func, patterns.LOSS_FUNCTION):
            return True
        return isinstance(call.func, cst.Name) and any(
            isinstance(v, cst.Call) and self.is_qualified(v.func, patterns.LOSS_MODULE)
            for v in self.values.origins(call.func))
