"""api-drift: ``from datasets import load_metric`` (removed in datasets 3.0) -> ``evaluate``.

Metrics moved to the ``evaluate`` library: ``load_metric("glue", "mrpc")`` becomes
``evaluate.load("glue", "mrpc")``. Note: ``evaluate.load`` downloads the metric's code
from the Hugging Face Hub at run time (offline, it needs a local copy); the commit says so.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, OtherError, Recipe, drop_import

NOTE = "evaluate.load downloads the metric from the Hugging Face Hub at run time"


class LoadMetricFromEvaluate(Recipe):
    id = "drift-load-metric"
    category = "api-drift"
    requires_words = (("load_metric",),)
    title = "load metrics with evaluate.load (datasets removed load_metric)"

    examples = (
        Example(
            before=("from datasets import load_dataset, load_metric\n"
                    "metric = load_metric('glue', 'mrpc')\n"),
            after=("import evaluate\n"
                   "from datasets import load_dataset\n"
                   "\n"
                   "metric = evaluate.load('glue', 'mrpc')\n"),
            evidence="ImportError: cannot import name 'load_metric' from 'datasets'",
        ),
        Example(  # already on evaluate
            before="import evaluate\nmetric = evaluate.load('accuracy')\n",
            evidence="ImportError: cannot import name 'load_metric' from 'datasets'",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if "load_metric" not in self.rc.diagnosis.evidence:
            raise OtherError("the error is not about datasets.load_metric")
        self.reason = "no `from datasets import load_metric` in the code"
        return super().transform_module_impl(tree)

    def leave_ImportFrom(self, original_node: cst.ImportFrom,
                         updated_node: cst.ImportFrom
                         ) -> cst.ImportFrom | cst.RemovalSentinel:
        dropped = drop_import(updated_node, "datasets", "load_metric")
        if dropped is None:
            return updated_node
        self.changed(original_node, "datasets.load_metric -> evaluate.load")
        AddImportsVisitor.add_needed_import(self.context, "evaluate")
        return dropped

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        func = updated_node.func
        if isinstance(func, cst.Name) and func.value == "load_metric":
            return updated_node.with_changes(func=cst.parse_expression("evaluate.load"))
        return updated_node

    def summary(self) -> str:
        return f"datasets.load_metric -> evaluate.load (note: {NOTE})"
