"""view-on-non-contiguous: ``view()`` on a tensor whose memory a transpose or permute
reordered (``view size is not compatible with input tensor's size and stride (at least one
dimension spans across two contiguous subspaces). Use .reshape(...) instead.``).

The child read the failing call on the user's line, found its receiver not contiguous, and
confirmed the contract on the real tensor: the same shape passes with ``.reshape(...)``,
torch's own advice. The recipe makes that call a ``reshape`` where the script writes it
(``reshape`` copies only when it must, so the values are those ``view`` would have given a
contiguous tensor).
"""

from __future__ import annotations

import libcst as cst

from autofix.categories.breaches import CallBreach
from autofix.toolkit import Example
from autofix.toolkit.provenance import Provenance
from autofix.toolkit.scope import Option

from ._breach import BreachRecipe, breach_failure


def _breach(line: int, column: int, end: int) -> dict[str, object]:
    return {"contract": "view-contiguous", "category": "view-on-non-contiguous",
            "api": "Tensor.view", "argument": "self",
            "says": "a tensor whose strides the new shape can view", "property": "contiguity",
            "observed": "a non-contiguous tensor", "expected": "a contiguous one",
            "trial": {"operator": "view-to-reshape", "change": ".reshape(...)"},
            "at": {"file": "script.py", "call_line": line, "call_column": column,
                   "call_end_line": line, "call_end_column": end}}


_HEADS = (
    "import torch\n"
    "def merge(h, b, n):\n"
    "    h = h.transpose(1, 2)\n"
    "    return h.view(b, -1, n)\n"
)


class ViewToReshape(BreachRecipe):
    id = "view-to-reshape"
    category = "view-on-non-contiguous"
    title = "reshape the tensor a transpose reordered, as torch advises, instead of view()"
    requires_imports = ("torch",)
    operators = ("view-to-reshape",)
    subject_from_change = True
    restores = ("view-on-non-contiguous",)
    nothing_to_do = "the failing view() call was not found in the script"

    examples = (
        Example(before=_HEADS, after=_HEADS.replace("h.view(", "h.reshape("),
                failure=breach_failure("view size is not compatible", _breach(4, 11, 27), 4)),
        Example(  # the call the child named is not a view() (the source changed since)
            before=_HEADS.replace("h.view(", "h.reshape("),
            failure=breach_failure("view size is not compatible", _breach(4, 11, 30), 4)),
    )

    def candidates(self, breach: CallBreach, provenance: Provenance) -> list[Option]:
        call = self.written(breach, "call_")
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) \
                or call.func.attr.value != "view":
            return []
        func = call.func

        def plan() -> None:
            self.plan_edit(func, lambda node: node.with_changes(attr=cst.Name("reshape"))
                           if isinstance(node, cst.Attribute) else node,
                           f"{provenance.line(call) and ''}.reshape(...) in place of "
                           ".view(...): the tensor is not contiguous")

        return [Option(f".reshape(...) (line {provenance.line(call)})", plan)]
