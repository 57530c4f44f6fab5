"""metric-on-logits: ``compute_metrics`` compares logits with class ids.

``Trainer`` gives ``compute_metrics`` an ``EvalPrediction`` whose predictions are the
model's logits (shape ``(n, num_labels)``); accuracy needs class ids. HF course (chapter 3,
"Evaluation"): ``preds = np.argmax(predictions.predictions, axis=-1)``. Fix: right after
the predictions are unpacked, ``predictions = np.argmax(predictions, axis=-1)``.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, NotApplicable, Recipe, find, insert, keyword, patterns


class ArgmaxPredictions(Recipe):
    id = "metric-on-logits"
    category = "metric-on-logits"
    requires_words = (("compute_metrics",),)
    requires_imports = ("transformers",)
    title = "take the argmax of the logits before computing the metric"
    nothing_to_do = "compute_metrics does not unpack (predictions, labels) from its argument"

    examples = (
        Example(
            before=(
                "from transformers import Trainer\n"
                "\n"
                "def compute_metrics(eval_pred):\n"
                "    logits, labels = eval_pred  # unpack\n"
                "    return {'accuracy': (logits == labels).mean()}\n"
                "\n"
                "trainer = Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
            after=(
                "from transformers import Trainer\n"
                "import numpy as np\n"
                "\n"
                "def compute_metrics(eval_pred):\n"
                "    logits, labels = eval_pred  # unpack\n"
                "    logits = np.argmax(logits, axis=-1)\n"
                "    return {'accuracy': (logits == labels).mean()}\n"
                "\n"
                "trainer = Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
        ),
        Example(  # already takes the argmax
            before=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "def metrics(p):\n"
                "    preds, labels = p\n"
                "    preds = np.argmax(preds, axis=-1)\n"
                "    return {'accuracy': (preds == labels).mean()}\n"
                "Trainer(model, args, compute_metrics=metrics)\n"
            ),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self.functions: set[str] = set()
        for call in find(tree, m.Call()):
            assert isinstance(call, cst.Call)
            if self.is_qualified(call.func, patterns.TRAINER):
                arg = keyword(call, "compute_metrics")
                if arg is not None and isinstance(arg.value, cst.Name):
                    self.functions.add(arg.value.value)
        if not self.functions:
            raise NotApplicable("no Trainer(compute_metrics=<function>) found")
        unpack = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(
            target=m.Tuple(elements=[m.Element(m.Name()), m.Element(m.Name())]))])])
        for func in find(tree, m.FunctionDef()):
            assert isinstance(func, cst.FunctionDef)
            if func.name.value not in self.functions:
                continue
            if m.findall(func, m.Call(func=m.Attribute(attr=m.Name("argmax")))):
                self.reason = f"{func.name.value} already takes an argmax"
                continue
            stmt = next((s for s in func.body.body if m.matches(s, unpack)), None)
            if stmt is None:
                continue
            assign = cst.ensure_type(cst.ensure_type(stmt, cst.SimpleStatementLine).body[0],
                                     cst.Assign)
            target = cst.ensure_type(assign.targets[0].target, cst.Tuple)
            name = cst.ensure_type(target.elements[0].value, cst.Name).value
            AddImportsVisitor.add_needed_import(self.context, "numpy", asname="np")
            self.changed(func, f"{name} = np.argmax({name}, axis=-1) in {func.name.value}")
            return insert.insert_statements(tree, cst.ensure_type(stmt, cst.SimpleStatementLine), [
                insert.parse_statement(f"{name} = np.argmax({name}, axis=-1)")])
        raise NotApplicable(self.reason or self.nothing_to_do)
