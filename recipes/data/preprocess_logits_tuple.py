"""predictions-tuple: ``compute_metrics`` gets a tuple (logits and hidden states).

A model that returns more than its logits (``output_hidden_states=True``, attentions, a
custom head's extra outputs) makes ``Trainer`` gather every output, so
``EvalPrediction.predictions`` is a tuple with the logits first, and the usual
``np.argmax(predictions, axis=-1)`` fails ("setting an array element with a sequence").
The facts at the failure show the tuple ``compute_metrics`` got. Fix, on the ``Trainer``
given that ``compute_metrics``: ``preprocess_logits_for_metrics=logits_only``, a function
defined right before the statement that builds the ``Trainer`` that returns
``logits[0] if isinstance(logits, tuple) else logits``, so only the logits are gathered
(the library's own hook for this, as its ``run_clm.py`` example uses it; the hidden states
of every evaluation row are no longer kept in memory).
"""

from __future__ import annotations

from functools import partial
from typing import cast

import libcst as cst

from autofix.categories.catalogue.data import predictions_tuple
from autofix.toolkit import Example, NotApplicable, insert, keyword
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.scope import PlannedEdits, append_kw, fresh_name
from autofix.types import ExceptionInfo

#: The function given as ``preprocess_logits_for_metrics`` (``{name}``: a free name).
HOOK = ('def {name}(logits, labels):\n'
        '    """The logits of the model\'s outputs, for compute_metrics."""\n'
        "    return logits[0] if isinstance(logits, tuple) else logits\n")


def _failure(kind: str = "tuple") -> ExceptionInfo:
    logits = {"kind": "array", "dtype": "float32", "shape": [32, 3]}
    predictions = {"kind": "tuple", "len": 2, "items": [logits, {"kind": "tuple"}]} \
        if kind == "tuple" else logits
    return example_failure(
        "ValueError", "setting an array element with a sequence.",
        user={"eval_pred": {"kind": "eval-prediction", "predictions": predictions}},
        user_function="compute_metrics")


class PreprocessLogitsTuple(PlannedEdits):
    id = "preprocess-logits-tuple"
    category = "predictions-tuple"
    title = "keep only the logits for compute_metrics (preprocess_logits_for_metrics)"
    requires_imports = ("transformers",)
    requires_words = (("compute_metrics",),)
    nothing_to_do = "no Trainer(...) given compute_metrics= without a " \
                    "preprocess_logits_for_metrics="

    examples = (
        Example(
            before="from transformers import Trainer\n"
                   "trainer = Trainer(\n    model=model,\n"
                   "    compute_metrics=compute_metrics,\n)\n",
            after="from transformers import Trainer\n" + HOOK.format(name="logits_only")
            + "trainer = Trainer(\n    model=model,\n    compute_metrics=compute_metrics,\n"
              "    preprocess_logits_for_metrics=logits_only,\n)\n",
            failure=_failure(),
        ),
        Example(  # the predictions are one array: another fault
            before="from transformers import Trainer\n"
                   "trainer = Trainer(model=model, compute_metrics=compute_metrics)\n",
            failure=_failure("array"),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = failure_of(self.rc)
        if failure is None or predictions_tuple(failure) is not True:
            raise NotApplicable("the facts at the failure show no tuple of predictions")
        for call in self.program.calls:
            if not self.program.is_trainer_call(call) or keyword(call, "compute_metrics") is None:
                continue
            if keyword(call, "preprocess_logits_for_metrics") is not None:
                self.reason = "the Trainer has a preprocess_logits_for_metrics already"
                continue
            name = fresh_name("logits_only", self.program.visible_names(call))
            statement = insert.enclosing_statement(self, call)
            function = cst.parse_statement(HOOK.format(name=name))
            self.plan_edit(statement, partial(_before, new=function),
                           f"{name}(), the logits of the model's outputs")
            self.plan_edit(call, append_kw("preprocess_logits_for_metrics", cst.Name(name)),
                           f"preprocess_logits_for_metrics={name}, so compute_metrics gets "
                           "the logits only")


def _before(node: cst.CSTNode, new: cst.BaseStatement) -> cst.CSTNode:
    nodes = list(node.nodes) if isinstance(node, cst.FlattenSentinel) else [node]
    return cast(cst.CSTNode, cst.FlattenSentinel([new, *nodes]))
