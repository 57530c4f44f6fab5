"""non-scalar-backward: a Hugging Face model given no labels, its logits backwarded.

A hand loop that calls ``model(**batch)`` without ``labels`` and takes ``outputs[0]`` (or
``outputs.loss``) as the loss gets the logits instead: ``backward()`` on them raises
"grad can be implicitly created only for scalar outputs". The facts at the failure show
it: a local of the user's frame is a transformers model output holding ``logits`` and
no ``loss``, and the tensor ``backward()`` got has the logits' shape.

Fix: the model call that made that output (the output variable's assignment seen from
the failing line) gets ``labels=``: the batch's own label column when the batch the call
reads (given as ``**batch``, or indexed: ``batch["input_ids"]``) holds one
(``batch["label"]``), else a local of the frame named like labels
(``labels``, ``label``, ``targets``, ``y``) whose facts show integer ids shaped like the
logits less their class axis: as it is when it is a tensor, through
``torch.tensor(...)`` when it is a list or tuple of ints.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import libcst as cst
import libcst.matchers as m

from autofix.categories.catalogue.contracts import output_without_loss
from autofix.categories.failure import Failure, backward_tensor, is_int_list, is_integer, shape
from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.facts import example_failure
from autofix.toolkit.scope import PlannedEdits, append_kw
from autofix.toolkit.values import Values
from autofix.types import ExceptionInfo

from ._backward import failing_line, the_backward, the_failure, user_fact

#: Names a script gives its labels, in order of preference.
LABEL_NAMES = ("labels", "label", "targets", "target", "y", "label_ids")
#: Keys of a batch that hold the class ids (datasets' ``label`` column).
LABEL_KEYS = ("label", "labels", "label_ids")


def _failure(line: int, labels: Mapping[str, Any] | None = None,
             batch_keys: tuple[str, ...] = ("input_ids", "attention_mask")) -> ExceptionInfo:
    logits = {"kind": "tensor", "dtype": "torch.float32", "shape": [16, 2],
              "requires_grad": True}
    user: dict[str, Mapping[str, Any]] = {
        "outputs": {"kind": "mapping", "keys": ["logits"], "values": {"logits": logits},
                    "type": "transformers.modeling_outputs.SequenceClassifierOutput"},
        "batch": {"kind": "mapping", "type": "transformers.tokenization_utils_base."
                  "BatchEncoding", "keys": list(batch_keys)},
        "loss": logits}
    if labels is not None:
        user["labels"] = labels
    return example_failure(
        "RuntimeError", "grad can be implicitly created only for scalar outputs", user=user,
        library={"self": logits}, library_file="torch/_tensor.py",
        library_function="backward", user_line=line)


_IDS: dict[str, Any] = {"kind": "tuple", "len": 16,
                        "items": [{"kind": "number", "type": "int", "value": 1}]}
_TENSOR: dict[str, Any] = {"kind": "tensor", "dtype": "torch.int64", "shape": [16]}
_LOOP = ("import torch\nfor texts, labels in loader:\n"
         "    batch = tokenizer(texts, return_tensors='pt')\n")


class ModelLabels(PlannedEdits):
    id = "model-labels"
    category = "non-scalar-backward"
    title = "pass the labels to the model so its first output is the loss"
    requires_imports = ("torch",)
    subject_from_change = True
    nothing_to_do = "no model call made the output without a loss"

    examples: ClassVar[tuple[Example, ...]] = (
        Example(  # labels kept as a tuple of ints: a tensor made of them
            before=_LOOP + "    outputs = model(**batch)\n    loss = outputs[0]\n"
                           "    loss.backward()\n",
            after=_LOOP + "    outputs = model(**batch, labels=torch.tensor(labels))\n"
                          "    loss = outputs[0]\n    loss.backward()\n",
            failure=_failure(6, _IDS),
        ),
        Example(  # a tensor of labels, the loss read as .loss
            before=_LOOP + "    outputs = model(**batch)\n    outputs.loss.backward()\n",
            after=_LOOP + "    outputs = model(**batch, labels=labels)\n"
                          "    outputs.loss.backward()\n",
            failure=_failure(5, _TENSOR),
        ),
        Example(  # the batch holds the label column
            before=("import torch\nfor batch in loader:\n    outputs = model(**batch)\n"
                    "    outputs[0].backward()\n"),
            after=("import torch\nfor batch in loader:\n"
                   "    outputs = model(**batch, labels=batch[\"label\"])\n"
                   "    outputs[0].backward()\n"),
            failure=_failure(4, None, ("input_ids", "label")),
        ),
        Example(  # the batch indexed for the inputs holds the labels
            before=("import torch\nfor batch in loader:\n"
                    "    outputs = model(input_ids=batch['input_ids'])\n"
                    "    outputs[0].backward()\n"),
            after=("import torch\nfor batch in loader:\n"
                   "    outputs = model(input_ids=batch['input_ids'], labels=batch['labels'])\n"
                   "    outputs[0].backward()\n"),
            failure=_failure(4, None, ("input_ids", "labels")),
        ),
        Example(  # the logits backwarded on purpose: not the loss slot
            before=_LOOP + "    outputs = model(**batch)\n    outputs.logits.backward()\n",
            failure=_failure(5, _TENSOR),
        ),
        Example(  # nothing holds the labels
            before=("import torch\nfor batch in loader:\n    outputs = model(**batch)\n"
                    "    outputs[0].backward()\n"),
            failure=_failure(4),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        failure = the_failure(self)
        name = output_without_loss(failure)
        if not name:
            raise NotApplicable("no local of the failing frame is a model output without "
                                "a loss")
        call, receiver = the_backward(self, failing_line(self, failure))
        if not self._loss_slot(receiver, name):
            raise NotApplicable(f"{code(receiver)} is not the loss slot of {name} "
                                f"({name}[0], {name}.loss)")
        made = [v for _, v in self.values.assignments(name, call)
                if isinstance(v, cst.Call)]
        if len(made) != 1:
            raise NotApplicable(f"{len(made)} model calls assign {name}: which one made it "
                                "is not clear")
        model = made[0]
        if any(a.keyword is not None and a.keyword.value == "labels" for a in model.args):
            raise NotApplicable(f"{code(model.func)}(...) is given labels already")
        labels = self._labels(failure, model, self.label_shape(failure, name))
        self.plan_edit(model, append_kw("labels", labels),
                       f"labels={code(labels)} passed to {code(model.func)}(...), so its "
                       f"first output is the loss, not the logits")

    def label_shape(self, failure: Failure, output: str) -> tuple[int, ...]:
        """The shape of the labels the call needs: the logits' less their class axis, the
        logits being the tensor ``backward()`` got as the loss (``()``: not known)."""
        return (shape(backward_tensor(failure)) or (0,))[:-1]

    def _loss_slot(self, receiver: cst.BaseExpression, name: str) -> bool:
        """``receiver`` is ``name[0]``, ``name.loss``, ``name["loss"]``, or a local
        assigned one of those."""
        slot = (m.Subscript(value=m.Name(name), slice=[m.SubscriptElement(
            slice=m.Index(value=m.Integer("0") | m.SimpleString()))])
            | m.Attribute(value=m.Name(name), attr=m.Name("loss")))
        if m.matches(receiver, slot):
            return True
        return isinstance(receiver, cst.Name) and any(
            m.matches(v, slot) for _, v in self.values.assignments(receiver.value,
                                                                       receiver))

    def _quote(self) -> str:
        """The quote the script's strings use (its first string's), ``"`` without one."""
        first = next(iter(m.findall(self.program.tree, m.SimpleString())), None)
        text = first.value if isinstance(first, cst.SimpleString) else '"'
        return "'" if text.lstrip("rbuRBU")[:1] == "'" else '"'

    def _labels(self, failure: Failure, model: cst.Call, dims: tuple[int, ...]
                ) -> cst.BaseExpression:
        batches = [a.value.value for a in model.args
                   if a.star == "**" and isinstance(a.value, cst.Name)]
        batches += [n.value.value for n in m.findall(model, m.Subscript(value=m.Name()))
                    if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name)]
        for batch in dict.fromkeys(batches):  # the batch the call reads: given or indexed
            keys = (user_fact(failure, batch) or {}).get("keys") or ()
            key = next((k for k in LABEL_KEYS if k in keys), None)
            if key is not None:
                return cst.parse_expression(f"{batch}[{self._quote()}{key}{self._quote()}]")
        for name in LABEL_NAMES:
            fact = user_fact(failure, name)
            if fact is None or not self.program.resolves(name, model):
                continue
            if fact.get("kind") == "tensor" and is_integer(fact) and dims and \
                    shape(fact) == dims:
                return cst.Name(name)
            if len(dims) == 1 and is_int_list(fact, dims[0]) \
                    and self.program.resolves("torch", model):
                return cst.parse_expression(f"torch.tensor({name})")
        raise NotApplicable(f"no local holds labels of shape {list(dims)} for "
                            f"{code(model.func)}(...)")
