"""metric-on-logits, hand-written evaluation face: a metric called with logits.

In a hand-written evaluation loop the logits reach the metric directly
(``accuracy_score(references, predictions)`` where ``predictions`` holds
``outputs.logits``), or through ``evaluate``'s accumulation idiom: ``metric.add_batch(
predictions=predictions, ...)`` in the loop, then ``metric.compute()`` fails after it (the
official ``run_glue_no_trainer.py``, the course's chapter 3 loop).

Fix, at the place the logits enter the predictions: the predictions given to the failing
call (or to ``add_batch`` of the metric whose ``compute()`` failed) are followed back to
their assignment from a model output's ``.logits`` (``predictions = outputs.logits``,
``predictions = logits`` after ``logits = outputs.logits``, or the branch of
``outputs.logits if not is_regression else outputs.logits.squeeze()`` that is not the
regression one), which gets ``.argmax(dim=-1)`` as the official loops write it. Without
such an assignment, the predictions argument of the failing call (named
``pred...``/``logit...``, or ``predictions=``/``y_pred=``) becomes
``np.argmax(predictions, axis=-1)``.
"""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, argument, code
from autofix.toolkit.patterns import SKLEARN_LABEL_METRIC
from autofix.toolkit.scope import PlannedEdits, branches, replace_with
from autofix.toolkit.values import Values

_PREDICTIONS = re.compile(r"pred|logit", re.IGNORECASE)
_ACCUMULATE = ("add_batch", "add")
_BEFORE = (
    "from sklearn.metrics import accuracy_score\n"
    "predictions = np.concatenate(all_predictions)\n"
    "print('accuracy:', accuracy_score(references, predictions))\n"
)
_LOOP = (
    "import evaluate\n"
    "metric = evaluate.load('accuracy')\n"
    "for batch in eval_dataloader:\n"
    "    outputs = model(**batch)\n"
    "    predictions = {logits}\n"
    "    metric.add_batch(predictions=predictions, references=batch['labels'])\n"
    "print(metric.compute())\n"
)


def _regression_holds(test: str) -> bool:
    """``test`` (a branch's condition, :func:`branches`) says the task is a regression
    (``is_regression``, not ``not is_regression``)."""
    negations = 0
    while test.startswith("not "):
        test, negations = test[4:].lstrip(), negations + 1
    return "regress" in test.lower() and negations % 2 == 0


class ArgmaxAtMetricCall(PlannedEdits):
    id = "metric-on-logits-call"
    category = "metric-on-logits"
    title = "take the argmax of the logits where the metric is called"
    nothing_to_do = "no metric call with a predictions argument on the failing line"

    examples = (
        Example(
            before=_BEFORE,
            after=(
                "import numpy as np\n"
                "from sklearn.metrics import accuracy_score\n"
                "\n"
                "predictions = np.concatenate(all_predictions)\n"
                "print('accuracy:', accuracy_score(references, np.argmax(predictions, "
                "axis=-1)))\n"
            ),
            line=3,
        ),
        Example(  # evaluate's add_batch idiom: the logits branch of the assignment
            before=_LOOP.format(logits="outputs.logits if not reg else outputs.logits[:, 0]"),
            after=_LOOP.format(logits="outputs.logits.argmax(dim=-1) if not reg else "
                                      "outputs.logits[:, 0]"),
            line=7,
        ),
        Example(  # an alias of the logits, as the course's loop names them
            before=_LOOP.replace("    predictions = {logits}\n", "    logits = outputs.logits\n"
                                 "    predictions = logits\n"),
            after=_LOOP.replace("    predictions = {logits}\n", "    logits = outputs.logits\n"
                                "    predictions = logits.argmax(dim=-1)\n"),
            line=8,
        ),
        Example(  # a scikit-learn metric's y_pred, however the script writes it
            before=(
                "import torch\n"
                "from sklearn.metrics import f1_score\n"
                "print(f1_score(torch.cat(gold).numpy(), torch.cat(scores).numpy(),"
                " average='macro'))\n"
            ),
            after=(
                "import numpy as np\n"
                "import torch\n"
                "from sklearn.metrics import f1_score\n"
                "\n"
                "print(\n"
                "    f1_score(torch.cat(gold).numpy(), np.argmax(torch.cat(scores).numpy(), "
                "axis=-1), average='macro'),\n"
                ")\n"
            ),
            line=3,
        ),
        Example(  # the failing line passes no predictions, no metric is accumulated
            before=_BEFORE + "print(len(references))\n",
            line=4,
        ),
        Example(  # the predictions are class ids already
            before=_LOOP.format(logits="outputs.logits.argmax(dim=-1)"),
            line=7,
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        program = self.program
        line = self._line_here()
        calls = sorted((c for c in program.calls if line and self._spans(c, line)),
                       key=lambda c: len(code(c)))  # the innermost call on the line first
        # the failure raised elsewhere (in the metric's own module, or inside a method):
        # the metrics this file accumulates and computes
        computed = [c for c in program.calls if isinstance(c.func, cst.Attribute)
                    and c.func.attr.value == "compute" and c not in calls]
        for call in (*calls, *computed):
            for given in self._predictions(call):
                if self._at_source(given):
                    return
        arg = next((a for a in map(self._argument, calls) if a is not None), None)
        if arg is not None:
            AddImportsVisitor.add_needed_import(self.context, "numpy", asname="np")
            new = cst.parse_expression(f"np.argmax({code(arg)}, axis=-1)")
            self.plan_edit(arg, replace_with(new), f"np.argmax({code(arg)}, axis=-1) at line "
                                                   f"{line}")

    def _line_here(self) -> int:
        """The failing line when it is in this file (0 when the failure was raised in
        another of the user's files, such as the module defining the metric)."""
        diag = self.rc.diagnosis
        if diag.file and Path(diag.file).name != self.rc.script.name:
            return 0
        return diag.line

    def _spans(self, call: cst.Call, line: int) -> bool:
        from libcst.metadata import PositionProvider

        pos = self.get_metadata(PositionProvider, call, None)
        return pos is not None and pos.start.line <= line <= pos.end.line

    def _argument(self, call: cst.Call) -> cst.BaseExpression | None:
        """The predictions argument of ``call`` (not already an argmax): a scikit-learn
        label metric's ``y_pred`` (second positional, whatever it is named), else an
        argument named ``pred...``/``logit...``."""
        if self.is_qualified(call.func, SKLEARN_LABEL_METRIC):
            given = argument(call, "y_pred", 1)
            if given is not None and "argmax" not in code(given):
                return given
        for arg in call.args:
            name = arg.keyword.value if arg.keyword is not None else ""
            value = code(arg.value)
            if "argmax" in value:
                continue
            if _PREDICTIONS.search(name) or (not name and isinstance(arg.value, cst.Name)
                                             and _PREDICTIONS.search(value)):
                return arg.value
        return None

    def _predictions(self, call: cst.Call) -> list[cst.BaseExpression]:
        """The predictions that reach the failing metric call: its own predictions
        argument, or for ``metric.compute()`` those given to ``metric.add_batch(...)``
        (the same ``metric`` binding)."""
        own = self._argument(call)
        if own is not None:
            return [own]
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "compute"
                and isinstance(func.value, cst.Name)):
            return []
        metric = func.value.value
        bound = set(self.program.resolve(metric, call))
        found = []
        for other in self.program.calls:
            f = other.func
            if isinstance(f, cst.Attribute) and f.attr.value in _ACCUMULATE \
                    and m.matches(f.value, m.Name(metric)) \
                    and set(self.program.resolve(metric, other)) == bound:
                arg = self._argument(other)
                if arg is not None:
                    found.append(arg)
        return found

    def _at_source(self, given: cst.BaseExpression) -> bool:
        """Plan the argmax where ``given`` (a name) last takes the logits before it is
        used; False when no such assignment is found."""
        if not isinstance(given, cst.Name):
            return False
        program = self.program
        used = program.line(given)
        best: tuple[int, cst.BaseExpression] | None = None
        assignments = sorted(self.values.assignments(given.value, given),
                             key=lambda tv: program.line(tv[0]))
        for target, value in assignments:
            where = program.line(target)
            if where > used or program.function_of(target) is not program.function_of(given):
                continue
            options = list(branches(value))
            logits = [b for b, guards in options if self._is_logits(b)
                      and not any(_regression_holds(g) for g in guards)]
            if len(logits) == 1 and (best is None or where > best[0]):
                best = (where, logits[0])
            elif best is not None and where > best[0] and not logits \
                    and not m.matches(value, m.Name(given.value)) \
                    and not self._carries(value, given.value):
                best = None  # reassigned from something else after the logits
        if best is None:
            return False
        where, node = best
        new = cst.parse_expression(f"{code(node)}.argmax(dim=-1)")
        self.plan_edit(node, replace_with(new), f"{code(node)}.argmax(dim=-1) at line {where}"
                                                f" (the predictions given to the metric)")
        return True

    def _is_logits(self, expr: cst.BaseExpression) -> bool:
        """``outputs.logits``, or a name assigned from one."""
        if m.matches(expr, m.Attribute(attr=m.Name("logits"))):
            return True
        if isinstance(expr, cst.Name):
            return any(m.matches(v, m.Attribute(attr=m.Name("logits")))
                       for _, v in self.values.assignments(expr.value, expr))
        return False

    @staticmethod
    def _carries(value: cst.BaseExpression, name: str) -> bool:
        """``value`` still holds what ``name`` held (``p = p[:n]``, ``p, r = gather((p,
        r))``): a slice or a call over the name itself."""
        return bool(m.findall(value, m.Name(name)))
