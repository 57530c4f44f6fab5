"""loss-is-none: a Hugging Face model called without labels in a hand loop, its
``.loss`` (``None``) backwarded.

A hand loop that calls ``model(input_ids=..., attention_mask=...)`` and then
``outputs.loss.backward()`` raises "'NoneType' object has no attribute 'backward'": the
model computes its loss only from a ``labels`` argument. The facts at the failure show
it: a local of the user's frame is a transformers model output holding ``logits`` and no
``loss``, and the failing line backwards its loss slot.

Fix: the same as ``model-labels`` (``recipes/contracts/model_labels.py``): the model call
that made that output gets ``labels=``, the batch's own label column or a local named like
labels whose facts show integer class ids shaped like the output's logits less their
class axis. Without such
a local the recipe declines, and the advice names the output and the candidates.
"""

from __future__ import annotations

from typing import Any, ClassVar

from autofix.categories.failure import Failure, shape
from autofix.toolkit import Example
from autofix.toolkit.facts import example_failure
from autofix.types import ExceptionInfo

from ..contracts.model_labels import ModelLabels


def _failure(line: int, labels: dict[str, Any] | None) -> ExceptionInfo:
    logits = {"kind": "tensor", "dtype": "torch.float32", "shape": [16, 3],
              "requires_grad": True}
    user: dict[str, Any] = {
        "out": {"kind": "mapping", "keys": ["logits"], "values": {"logits": logits},
                "type": "transformers.modeling_outputs.SequenceClassifierOutput"},
        "enc": {"kind": "mapping", "keys": ["input_ids", "attention_mask"],
                "type": "transformers.tokenization_utils_base.BatchEncoding"}}
    if labels is not None:
        user["targets"] = labels
    return example_failure("AttributeError", "'NoneType' object has no attribute 'backward'",
                           user=user, user_line=line)


_LOOP = ("import torch\nfor texts, y in loader:\n"
         "    enc = tokenizer(texts, return_tensors='pt')\n"
         "    targets = torch.tensor(y)\n")
_IDS: dict[str, Any] = {"kind": "tensor", "dtype": "torch.int64", "shape": [16]}


class LossLabels(ModelLabels):
    id = "loss-labels"
    category = "loss-is-none"
    title = "pass the labels to the model so it computes its loss"

    examples: ClassVar[tuple[Example, ...]] = (
        Example(
            before=_LOOP + "    out = model(input_ids=enc['input_ids'])\n"
                           "    out.loss.backward()\n",
            after=_LOOP + "    out = model(input_ids=enc['input_ids'], labels=targets)\n"
                          "    out.loss.backward()\n",
            failure=_failure(6, _IDS),
        ),
        Example(  # one id per token is not one per row of the logits
            before=_LOOP + "    out = model(**enc)\n    out.loss.backward()\n",
            failure=_failure(6, {**_IDS, "shape": [16, 30]}),
        ),
        Example(  # no local holds the labels: the advice names the output
            before=_LOOP + "    out = model(**enc)\n    out.loss.backward()\n",
            failure=_failure(6, None),
        ),
    )

    def label_shape(self, failure: Failure, output: str) -> tuple[int, ...]:
        """The shape of the labels the call needs: the output's logits less their class
        axis (``()``: not known)."""
        held = failure.value(output, user=True) or {}
        logits = (held.get("values") or {}).get("logits")
        dims = shape(logits) if isinstance(logits, dict) else None
        return dims[:-1] if dims else ()
