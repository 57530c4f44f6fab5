"""training-args-conflict: ``metric_for_best_model`` names a metric that evaluation does
not produce.

``Trainer._determine_best_metric`` (transformers 5.24 and 4.57.6) raises ``KeyError: The
`metric_for_best_model` training argument is set to 'eval_acc', which is not found in the
evaluation metrics. The available evaluation metrics are: ['eval_loss',
'eval_accuracy', ...]. Consider changing the `metric_for_best_model` via the
TrainingArguments.`` The recipe follows that advice: the metric becomes the available one
whose name is closest (``difflib``, ratio >= 0.5), else the only metric ``compute_metrics``
returns. The names come from the message and from the string keys of the dict literal
``compute_metrics`` returns; the timing entries (``runtime``, ``*_per_second``,
``epoch``) are never chosen.
"""

from __future__ import annotations

import ast
import difflib
import re

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, Recipe, find, keyword, replace_keyword

from ._training_args import TRAINING_ARGS_PATTERN, splatted_dicts

_TIMING = re.compile(r"runtime|per_second|^epoch$|^step$")
_AVAILABLE = re.compile(r"available evaluation metrics are: (\[[^\]]*\])")

_METRICS = (
    "from transformers import Trainer, TrainingArguments\n"
    "def compute_metrics(p):\n"
    "    return {'accuracy': 0.5, 'f1': 0.4}\n"
)


class NameAvailableMetric(Recipe):
    id = "training-args-best-metric"
    category = "training-args-conflict"
    title = "choose the best model by a metric that evaluation reports"
    nothing_to_do = "no literal metric_for_best_model= to correct"

    examples = (
        Example(
            before=_METRICS + "args = TrainingArguments('out', metric_for_best_model='acc')\n"
                              "Trainer(m, args, compute_metrics=compute_metrics)\n",
            after=_METRICS + "args = TrainingArguments('out', metric_for_best_model='accuracy')\n"
                             "Trainer(m, args, compute_metrics=compute_metrics)\n",
            evidence="KeyError: \"The `metric_for_best_model` training argument is set to "
                     "'eval_acc', which is not found in the evaluation metrics.",
        ),
        Example(  # the arguments in a dict(...) given as **settings
            before=_METRICS + "settings = dict(output_dir='out', metric_for_best_model='acc')\n"
                              "Trainer(m, TrainingArguments(**settings), "
                              "compute_metrics=compute_metrics)\n",
            after=_METRICS + "settings = dict(output_dir='out', metric_for_best_model='accuracy')\n"
                             "Trainer(m, TrainingArguments(**settings), "
                             "compute_metrics=compute_metrics)\n",
            evidence="KeyError: \"The `metric_for_best_model` training argument is set to "
                     "'eval_acc', which is not found in the evaluation metrics.",
        ),
        Example(  # names from the message only; the user's eval_ prefix is kept
            before="from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', metric_for_best_model=\"eval_f1_score\")\n",
            after="from transformers import TrainingArguments\n"
                  "args = TrainingArguments('out', metric_for_best_model=\"eval_f1\")\n",
            evidence="KeyError: \"The `metric_for_best_model` training argument is set to "
                     "'eval_f1_score', which is not found in the evaluation metrics. The "
                     "available evaluation metrics are: ['eval_loss', 'eval_f1', "
                     "'eval_runtime', 'eval_samples_per_second', 'epoch']. Consider",
        ),
        Example(  # nothing close and several candidates: no guess
            before="from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', metric_for_best_model='bleu')\n",
            evidence="KeyError: \"The `metric_for_best_model` training argument is set to "
                     "'eval_bleu', which is not found in the evaluation metrics. The "
                     "available evaluation metrics are: ['eval_loss', 'eval_rouge1', "
                     "'eval_rouge2', 'eval_runtime']. Consider",
        ),
        Example(  # already available
            before="from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', metric_for_best_model='f1')\n",
            evidence="KeyError: \"The `metric_for_best_model` training argument is set to "
                     "'eval_f1', which is not found in the evaluation metrics. The "
                     "available evaluation metrics are: ['eval_loss', 'eval_f1']. Consider",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if "metric_for_best_model" not in self.rc.diagnosis.evidence:
            raise NotApplicable("the error is not about metric_for_best_model")
        names: set[str] = set()
        found = _AVAILABLE.search(self.rc.diagnosis.evidence)
        if found:
            try:
                names |= {str(n).removeprefix("eval_") for n in ast.literal_eval(found[1])}
            except (ValueError, SyntaxError):
                pass
        functions = {cst.ensure_type(a, cst.Arg).value.value  # type: ignore[attr-defined]
                     for a in find(tree, m.Arg(keyword=m.Name("compute_metrics"),
                                                    value=m.Name()))}
        for fn in find(tree, m.FunctionDef()):
            if cst.ensure_type(fn, cst.FunctionDef).name.value in functions:
                for d in m.findall(fn, m.Return(value=m.Dict())):
                    for element in cst.ensure_type(cst.ensure_type(d, cst.Return).value,
                                                   cst.Dict).elements:
                        if isinstance(element, cst.DictElement) \
                                and isinstance(element.key, cst.SimpleString):
                            names.add(str(element.key.evaluated_value))
        self.available = sorted(n for n in names if not _TIMING.search(n))
        if not self.available:
            raise NotApplicable("no metric names known (from the message or compute_metrics)")
        return super().transform_module_impl(tree)

    def visit_Module(self, node: cst.Module) -> None:
        self.dicts = splatted_dicts(self, node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not (self.is_qualified(original_node.func, TRAINING_ARGS_PATTERN)
                or original_node in self.dicts):
            return updated_node
        arg = keyword(updated_node, "metric_for_best_model")
        if arg is None or not isinstance(arg.value, cst.SimpleString):
            return updated_node
        current = str(arg.value.evaluated_value)
        prefix = "eval_" if current.startswith("eval_") else ""
        bare = current.removeprefix("eval_")
        if bare in self.available:
            self.reason = f"{current!r} is among the metrics {self.available}"
            return updated_node
        close = difflib.get_close_matches(bare, self.available, n=1, cutoff=0.5)
        others = [n for n in self.available if n != "loss"]
        choice = close[0] if close else others[0] if len(others) == 1 else ""
        if not choice:
            self.reason = (f"no metric like {current!r} among {self.available}; choose one "
                           "or return it from compute_metrics")
            return updated_node
        quote = arg.value.quote
        self.changed(original_node, f"metric_for_best_model={prefix + choice!r}, a metric "
                                    "evaluation reports")
        return replace_keyword(updated_node, "metric_for_best_model",
                               cst.SimpleString(f"{quote}{prefix}{choice}{quote}"))
