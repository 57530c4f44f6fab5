"""float-token-ids: token ids built as a float tensor in the user's own code reach the
embedding lookup.

``torch.nn.functional.embedding`` looks ids up as int64 ("Expected tensor for argument #1
'indices' to have one of the following scalar types: Long, Int; but got
torch.FloatTensor", torch 2.13, measured); the facts at the lookup show whole numbers
stored as floats. In a hand loop the float comes from one token of the script:
``torch.Tensor(ids)`` and ``torch.FloatTensor(ids)`` (float32 both),
``torch.tensor(ids, dtype=torch.float)``, ``ids.float()``. The recipe follows the
``input_ids=`` (or first positional) argument of the model call on the failing line back
through the script to that token, the way ``class-ids-long`` follows a loss's target
(``recipes/labels/class_ids_long.py``), and makes it int64 there. Ids a collator builds
for ``Trainer`` are not on the failing line: the advice names the collator instead.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst
import libcst.matchers as m

from autofix.categories.failure import Failure, is_float
from autofix.toolkit import Example, NotApplicable
from autofix.types import ExceptionInfo, FrameFacts

from ..labels.class_ids_long import ClassIdsLong


def _failure() -> ExceptionInfo:
    ids = {"kind": "tensor", "dtype": "torch.float32", "shape": [8, 12], "min": 0.0,
           "max": 2051.0, "integral": True}
    weight = {"kind": "tensor", "dtype": "torch.float32", "shape": [30522, 32]}
    return ExceptionInfo(
        "builtins.RuntimeError", "Expected tensor for argument #1 'indices' to have one of "
        "the following scalar types: Long, Int; but got torch.FloatTensor instead",
        facts=(FrameFacts("torch/nn/functional.py", 1, "embedding", False,
                          {"input": ids, "weight": weight}),))


_LOOP = ("import torch\n"
         "for texts, y in loader:\n"
         "    enc = tokenizer(texts, padding='max_length', max_length=12)\n"
         "    ids = torch.Tensor(enc['input_ids'])\n"
         "    out = model(input_ids=ids, labels=y)\n")


class IdsLong(ClassIdsLong):
    id = "ids-long"
    category = "float-token-ids"
    title = "build the token ids as int64 where the script makes them floats"
    nothing_to_do = ("the model's input ids at the failing line do not come from a float "
                     "tensor the script builds (torch.Tensor, FloatTensor, .float())")
    restores = ("float-token-ids",)

    examples: ClassVar[tuple[Example, ...]] = (
        Example(before=_LOOP, after=_LOOP.replace("torch.Tensor(", "torch.LongTensor("),
                line=5, failure=_failure()),
        Example(  # the positional ids of a model call, made floats by .float()
            before=_LOOP.replace("torch.Tensor(enc['input_ids'])",
                                 "torch.tensor(enc['input_ids']).float()")
                        .replace("model(input_ids=ids,", "model(ids,"),
            after=_LOOP.replace("torch.Tensor(enc['input_ids'])",
                                "torch.tensor(enc['input_ids']).long()")
                       .replace("model(input_ids=ids,", "model(ids,"),
            line=5, failure=_failure()),
        Example(  # ids from a function's return: not followed, the advice names them
            before=_LOOP.replace("torch.Tensor(enc['input_ids'])", "encode(texts)"),
            line=5, failure=_failure()),
    )

    def require_facts(self) -> None:
        exc = self.rc.diagnosis.failure
        ids = Failure(exc).value("input", site="embedding") if exc is not None else None
        if ids is None or not is_float(ids) or not ids.get("integral"):
            raise NotApplicable("the facts at the embedding show no whole-number float ids")

    def _loss_names(self, node: cst.Module) -> set[str]:
        return set()

    def _target(self, line: int) -> cst.BaseExpression | None:
        """The ``input_ids=`` (else the first positional) argument of a call on ``line``."""
        for call in m.findall(self.tree, m.Call()):
            assert isinstance(call, cst.Call)
            if not line or self._line(call) != line:
                continue
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "input_ids":
                    return arg.value
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            if positional and any(a.keyword is not None and a.keyword.value in
                                  ("attention_mask", "labels") for a in call.args):
                return positional[0]
        return None

    def summary(self) -> str:
        return "build the token ids as int64 (" + "; ".join(self.edits) + ")"
