"""argmax-last-axis: predictions that are not one class id per row.

``logits.argmax()`` without a dimension returns one flat index into the whole
``(rows, classes)`` matrix, and ``argmax(dim=0)`` one row index per class; compared with
the labels they broadcast, and the accuracy means nothing (the ``metric-on-flat-argmax``
finding: ``autofix/run/child/metric_inputs.py`` saw the argmax's real input at the user's
line, or ``compute_metrics`` scoring predictions that are right on every row below 1).
The HF course and PyTorch's tutorials take the class over the last axis:
``predictions = np.argmax(logits, axis=-1)``, ``outputs.argmax(dim=-1)``.

The argmax at the line the run reported gets the last axis: ``dim=-1`` for a tensor's
method or ``torch.argmax``, ``axis=-1`` for ``np.argmax`` (an axis of 0 becomes -1, a
missing one is added); for ``compute_metrics`` every argmax in the function the run named
whose axis is missing or 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, code, find, keyword, patterns
from autofix.toolkit.scope import PlannedEdits, append_kw, replace_with

from ._sites import calls_at, in_file, is_method, sites

KIND = "metric-on-flat-argmax"


def _facts(line: int, form: str, dim: Any = None) -> dict[str, Any]:
    return {"invariants": [{"kind": KIND, "file": "script.py", "line": line,
                            "facts": {"form": form, "dim": dim}}]}


class ArgmaxLastAxis(PlannedEdits):
    id = "argmax-last-axis"
    category = KIND
    title = "take the argmax over the class axis (one class id per row)"
    requires_words = (("argmax",),)
    nothing_to_do = "no argmax without a class axis at the line the run reported"

    examples = (
        Example(  # a tensor's method in a hand loop's evaluation
            before="import torch\nwith torch.no_grad():\n    pred = model(x).argmax()\n"
                   "    acc = (pred == y).float().mean()\n",
            after="import torch\nwith torch.no_grad():\n    pred = model(x).argmax(dim=-1)\n"
                  "    acc = (pred == y).float().mean()\n",
            run_facts=_facts(3, "tensor"),
        ),
        Example(  # over the batch axis
            before="import torch\ncorrect += (torch.argmax(logits, 0) == labels).sum()\n",
            after="import torch\ncorrect += (torch.argmax(logits, -1) == labels).sum()\n",
            run_facts=_facts(2, "torch", 0),
        ),
        Example(  # compute_metrics: every argmax in it without the class axis
            before="import numpy as np\nfrom transformers import Trainer\n\n\n"
                   "def compute_metrics(eval_pred):\n    logits, labels = eval_pred\n"
                   "    predictions = np.argmax(logits)\n"
                   "    return {\"accuracy\": (predictions == labels).mean()}\n",
            after="import numpy as np\nfrom transformers import Trainer\n\n\n"
                  "def compute_metrics(eval_pred):\n    logits, labels = eval_pred\n"
                  "    predictions = np.argmax(logits, axis=-1)\n"
                  "    return {\"accuracy\": (predictions == labels).mean()}\n",
            run_facts=_facts(5, "compute_metrics"),
        ),
        Example(  # compute_metrics with the array's own method over axis 0
            before="def compute_metrics(p):\n"
                   "    preds = p.predictions.argmax(axis=0)\n"
                   "    return {\"f1\": f1_score(p.label_ids, preds, average=\"macro\")}\n",
            after="def compute_metrics(p):\n"
                  "    preds = p.predictions.argmax(axis=-1)\n"
                  "    return {\"f1\": f1_score(p.label_ids, preds, average=\"macro\")}\n",
            run_facts=_facts(1, "compute_metrics"),
        ),
        Example(  # already over the class axis: nothing to change
            before="import torch\npred = model(x).argmax(dim=1)\n",
            run_facts=_facts(2, "tensor"),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        for site in sites(self, KIND):
            facts = site.get("facts") or {}
            if not in_file(self, site) or not isinstance(facts, Mapping):
                continue
            line = int(site.get("line", 0) or 0)
            if facts.get("form") == "compute_metrics":
                function = next((f for f in find(tree, m.FunctionDef())
                                 if isinstance(f, cst.FunctionDef)
                                 and self.program.line(f) == line), None)
                calls = [c for c in self.program.calls if function is not None
                         and self.program.function_of(c) is function]
            else:
                calls = calls_at(self, line)
            numpy = facts.get("form") in ("compute_metrics", "numpy")
            for call in calls:
                if self._is_argmax(call):
                    self._last_axis(call, numpy)
        if not self.edits:
            raise NotApplicable(self.nothing_to_do)

    def _is_argmax(self, call: cst.Call) -> bool:
        func = call.func
        return self.is_qualified(func, patterns.NUMPY_ARGMAX) or \
            self.is_qualified(func, patterns.TORCH_ARGMAX) \
            or is_method(self, func, "argmax")

    def _last_axis(self, call: cst.Call, numpy: bool) -> None:
        """The call's dimension set to -1 when it is missing or 0 (named ``axis`` on
        numpy arrays: ``numpy``)."""
        function = not is_method(self, call.func, "argmax")
        numpy = numpy or self.is_qualified(call.func, patterns.NUMPY_ARGMAX)
        named = keyword(call, "axis") or keyword(call, "dim")
        position = 1 if function else 0
        given = [a for a in call.args if a.keyword is None]
        if named is not None:
            value = named.value
        elif len(given) > position:
            value = given[position].value
        else:
            name = "axis" if numpy else "dim"
            self.plan_edit(call, append_kw(name, cst.UnaryOperation(
                cst.Minus(), cst.Integer("1"))), f"{code(call)}: argmax over the last axis")
            return
        if m.matches(value, m.Integer("0")):
            self.plan_edit(value, replace_with(cst.UnaryOperation(cst.Minus(), cst.Integer("1"))),
                           f"{code(call)}: argmax over the last axis, not the batch axis")
