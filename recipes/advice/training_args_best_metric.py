"""training-args-conflict: ``metric_for_best_model`` names a metric that evaluation does
not produce.

``Trainer._determine_best_metric`` (transformers 5.24 and 4.57.6) raises ``KeyError: The
`metric_for_best_model` training argument is set to 'eval_acc', which is not found in the
evaluation metrics. The available evaluation metrics are: ['eval_loss',
'eval_accuracy', ...]. Consider changing the `metric_for_best_model` via the
TrainingArguments.`` The recipe follows that advice with a metric the library lists (or
``compute_metrics``' dict literal returns) that means the same: every word of the asked
name begins a word of the listed one, or the other way round (``acc`` -> ``accuracy``,
``f1`` -> ``macro_f1``, ``f1_score`` -> ``f1``), else the one ``difflib`` finds close
(ratio >= 0.5). When no listed metric means the same, or two do (``f1`` with
``macro_f1`` and ``micro_f1``), the best model is chosen by the evaluation ``loss``, which
evaluation always reports, with ``greater_is_better=False``. The timing entries
(``runtime``, ``*_per_second``, ``epoch``) are never chosen. The value is changed where it
is defined (a constant, a config field, a dict entry given as ``**hp``).
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from autofix.categories.advice import Advice
from autofix.toolkit import Example, NotApplicable, find

from ._advice import AdviceRecipe

_TIMING = re.compile(r"runtime|per_second|^epoch$|^step$")
_AVAILABLE = re.compile(r"available evaluation metrics are: (\[[^\]]*\])")

_METRICS = (
    "from transformers import Trainer, TrainingArguments\n"
    "def compute_metrics(p):\n"
    "    return {'accuracy': 0.5, 'f1': 0.4}\n"
)


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[_\W]+", name.lower()) if w]


def same_meaning(asked: str, listed: str) -> bool:
    """Every word of one name begins a word of the other (``acc`` / ``accuracy``, ``f1`` /
    ``macro_f1``, ``f1_score`` / ``f1``)."""
    a, b = _words(asked), _words(listed)

    def within(small: list[str], large: list[str]) -> bool:
        return bool(small) and all(any(w.startswith(s) for w in large) for s in small)

    return within(a, b) or within(b, a)


def choose(asked: str, available: Sequence[str]) -> str:
    """The listed metric that means what ``asked`` means, else ``"loss"``."""
    others = [n for n in available if n != "loss"]
    meant = [n for n in others if same_meaning(asked, n)]
    if len(meant) == 1:
        return meant[0]
    if not meant:
        close = difflib.get_close_matches(asked, others, n=2, cutoff=0.5)
        if len(close) == 1 or len(close) == 2 and \
                difflib.SequenceMatcher(None, asked, close[0]).ratio() > \
                difflib.SequenceMatcher(None, asked, close[1]).ratio():
            return close[0]
    return "loss"


class NameAvailableMetric(AdviceRecipe):
    id = "training-args-best-metric"
    category = "training-args-conflict"
    title = "choose the best model by a metric that evaluation reports"
    requires_words = (("metric_for_best_model",),)
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
            after=_METRICS + "settings = dict(output_dir='out', "
                             "metric_for_best_model='accuracy')\n"
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
        Example(  # f1 asked, macro_f1 listed: the same meaning; at its source, a constant
            before="from transformers import TrainingArguments\n"
                   "BEST = 'eval_f1'\n"
                   "args = TrainingArguments('out', metric_for_best_model=BEST)\n",
            after="from transformers import TrainingArguments\n"
                  "BEST = 'eval_macro_f1'\n"
                  "args = TrainingArguments('out', metric_for_best_model=BEST)\n",
            evidence="KeyError: \"The `metric_for_best_model` training argument is set to "
                     "'eval_f1', which is not found in the evaluation metrics. The "
                     "available evaluation metrics are: ['eval_loss', 'eval_macro_f1', "
                     "'eval_accuracy', 'eval_runtime', 'epoch']. Consider",
        ),
        Example(  # nothing means the same: the evaluation loss, lower is better
            before="from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', metric_for_best_model='bleu',\n"
                   "                         greater_is_better=True)\n",
            after="from transformers import TrainingArguments\n"
                  "args = TrainingArguments('out', metric_for_best_model='loss',\n"
                  "                         greater_is_better=False)\n",
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

    @classmethod
    def handles(cls, advice: Sequence[Advice], message: str) -> bool:
        return "`metric_for_best_model` training argument is set to" in message

    def make(self, tree: cst.Module) -> None:
        names: set[str] = set()
        found = _AVAILABLE.search(self.message)
        if found:
            try:
                names |= {str(n).removeprefix("eval_") for n in ast.literal_eval(found[1])}
            except (ValueError, SyntaxError):
                pass
        names |= self.returned_metrics(tree)
        available = sorted(n for n in names if not _TIMING.search(n))
        if not available:
            raise NotApplicable("no metric names known (from the message or compute_metrics)")
        args = self.the_args()
        current = args.value("metric_for_best_model")
        if not isinstance(current, str):
            raise NotApplicable("metric_for_best_model is not a string autofix can read")
        prefix = "eval_" if current.startswith("eval_") else ""
        bare = current.removeprefix("eval_")
        if bare in available:
            self.reason = f"{current!r} is among the metrics {available}"
            return
        choice = choose(bare, available)
        meaning = "a metric evaluation reports" if choice != "loss" else \
            f"no reported metric means {bare!r}: the evaluation loss, lower is better"
        args.set("metric_for_best_model", prefix + choice, meaning)
        if choice == "loss" and args.value("greater_is_better") is True:
            args.set("greater_is_better", False, "a loss is better lower")

    def returned_metrics(self, tree: cst.Module) -> set[str]:
        """The string keys of the dict literals the script's ``compute_metrics`` returns."""
        functions = {cst.ensure_type(a, cst.Arg).value.value  # type: ignore[attr-defined]
                     for a in find(tree, m.Arg(keyword=m.Name("compute_metrics"),
                                               value=m.Name()))}
        names: set[str] = set()
        for fn in find(tree, m.FunctionDef()):
            if cst.ensure_type(fn, cst.FunctionDef).name.value in functions:
                for d in m.findall(fn, m.Return(value=m.Dict())):
                    for element in cst.ensure_type(cst.ensure_type(d, cst.Return).value,
                                                   cst.Dict).elements:
                        if isinstance(element, cst.DictElement) \
                                and isinstance(element.key, cst.SimpleString):
                            names.add(str(element.key.evaluated_value))
        return names
