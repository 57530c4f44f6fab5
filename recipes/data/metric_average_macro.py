"""metric-average-binary: a scikit-learn metric left at ``average='binary'`` on more than two
classes.

``f1_score``, ``precision_score``, ``recall_score`` (and ``fbeta_score``,
``jaccard_score``, ``precision_recall_fscore_support``) average ``'binary'`` by default,
which scikit-learn refuses for multi-class labels: "Target is multiclass but
average='binary'. Please choose another average setting". The facts at the failure show
the labels (more than two classes) and the average. Fix, as scikit-learn asks: each such
call in the function that failed (``compute_metrics``) without an ``average=`` (or with
``'binary'``) gets ``average="macro"``: every class counts the same, the usual choice for
a classifier's evaluation.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.categories.catalogue.data import binary_average_on_classes
from autofix.toolkit import Example, NotApplicable, keyword, patterns
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.scope import PlannedEdits, append_kw, replace_kw, string_value
from autofix.types import ExceptionInfo


def _failure(classes: int = 3) -> ExceptionInfo:
    labels = {"kind": "array", "dtype": "int64", "shape": [32], "n_distinct": classes}
    return example_failure(
        "ValueError", "Target is multiclass but average='binary'.",
        user={"labels": labels}, user_function="compute_metrics",
        library={"y_true": labels, "average": {"kind": "str", "value": "binary"}},
        library_file="sklearn/metrics/_classification.py",
        library_function="_check_set_wise_labels")


_HEAD = ("import numpy as np\n"
         "from sklearn.metrics import accuracy_score, f1_score, recall_score\n"
         "def compute_metrics(eval_pred):\n"
         "    logits, labels = eval_pred\n"
         "    preds = np.argmax(logits, axis=-1)\n")


class MacroAverage(PlannedEdits):
    id = "metric-average-macro"
    category = "metric-average-binary"
    title = "average the multi-class metric over the classes (average=\"macro\")"
    requires_imports = ("sklearn",)
    nothing_to_do = "no scikit-learn f1/precision/recall call left at average='binary'"

    examples = (
        Example(
            before=_HEAD + "    return {'accuracy': accuracy_score(labels, preds),\n"
                           "            'f1': f1_score(labels, preds),\n"
                           "            'recall': recall_score(labels, preds, "
                           "average='binary')}\n",
            after=_HEAD + "    return {'accuracy': accuracy_score(labels, preds),\n"
                          "            'f1': f1_score(labels, preds, average=\"macro\"),\n"
                          "            'recall': recall_score(labels, preds, "
                          "average=\"macro\")}\n",
            failure=_failure(),
        ),
        Example(  # two classes: binary is right
            before=_HEAD + "    return {'f1': f1_score(labels, preds)}\n",
            failure=_failure(2),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = failure_of(self.rc)
        if failure is None or binary_average_on_classes(failure) is not True:
            raise NotApplicable("the facts at the failure show no binary average on more "
                                "than two classes")
        frame = next(iter(failure.user_frames()), None)
        name = frame.function if frame is not None else "<module>"
        scopes: list[cst.CSTNode] = [f for f in m.findall(tree, m.FunctionDef(
            name=m.Name(name)))] if name != "<module>" else [tree]
        for scope in scopes:
            for node in m.findall(scope, m.Call()):
                assert isinstance(node, cst.Call)
                if not self.is_qualified(node.func, patterns.SKLEARN_AVERAGED_METRIC):
                    continue
                arg = keyword(node, "average")
                macro = cst.SimpleString('"macro"')
                if arg is None:
                    self.plan_edit(node, append_kw("average", macro), 'average="macro" for '
                                   "the multi-class labels")
                elif string_value(arg.value) == "binary":
                    self.plan_edit(node, replace_kw("average", macro), 'average="macro" '
                                   "instead of 'binary' for the multi-class labels")
