"""model-output-not-dict: a model returning a bare tensor loses one row per eval batch.

``Trainer.prediction_step`` reads the outputs of ``compute_loss(..., return_outputs=True)``
as a dict or ``ModelOutput`` when they are one, else as a tuple whose first element is
the loss, and keeps ``outputs[1:]``. A hand-built model whose ``forward`` returns the
logits tensor itself, with an overriding ``compute_loss`` returning ``(loss, logits)``,
has its first logits row dropped in every evaluation batch: ``compute_metrics`` gets 145
rows for 150 labels ("operands could not be broadcast together"). The facts at the failure
show it: one row fewer per evaluation batch, and a model that is not a transformers one.
Fix, in the overriding ``compute_loss``: ``(loss, {"logits": logits})``, the outputs as a
dict, which ``prediction_step`` reads by key.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.categories.catalogue.data import rows_lost_per_batch
from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.scope import PlannedEdits, replace_with
from autofix.types import ExceptionInfo, FrameFacts


def _failure(preds: int = 145, model: str = "__main__.PairClassifier") -> ExceptionInfo:
    exc = example_failure("ValueError", "operands could not be broadcast together with shapes "
                          f"({preds},) (150,)", user={}, user_function="compute_metrics")
    loop = FrameFacts("transformers/trainer.py", 1, "evaluation_loop", False, {
        "all_preds": {"kind": "array", "shape": [preds, 3]},
        "all_labels": {"kind": "array", "shape": [150]},
        "batch_size": {"kind": "number", "value": 32}, "model": {"kind": "model", "type": model}})
    return ExceptionInfo(exc.type, exc.message, exc.frames, (), (*exc.facts, loop))


_TRAINER = ("from transformers import Trainer\n"
            "class PairTrainer(Trainer):\n"
            "    def compute_loss(self, model, inputs, return_outputs=False, **kw):\n"
            "        labels = inputs.pop('labels')\n"
            "        logits = model(**inputs)\n"
            "        loss = loss_fn(logits, labels)\n")


class ComputeLossOutputDict(PlannedEdits):
    id = "compute-loss-output-dict"
    category = "model-output-not-dict"
    title = "return the model's outputs from compute_loss as a dict of logits"
    requires_words = (("compute_loss",),)
    nothing_to_do = "no compute_loss returning (loss, <tensor>)"

    examples = (
        Example(
            before=_TRAINER + "        return (loss, logits) if return_outputs else loss\n",
            after=_TRAINER + '        return (loss, {"logits": logits}) if return_outputs '
                             "else loss\n",
            failure=_failure(),
        ),
        Example(  # every row is there: another fault
            before=_TRAINER + "        return (loss, logits) if return_outputs else loss\n",
            failure=_failure(150),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = failure_of(self.rc)
        if failure is None or rows_lost_per_batch(failure) is not True:
            raise NotApplicable("the facts at the failure show no row lost per eval batch")
        for func in m.findall(tree, m.FunctionDef(name=m.Name("compute_loss"))):
            assert isinstance(func, cst.FunctionDef)
            for ret in m.findall(func, m.Return()):
                assert isinstance(ret, cst.Return)
                value = ret.value.body if isinstance(ret.value, cst.IfExp) else ret.value
                if isinstance(value, cst.Tuple) and len(value.elements) == 2 \
                        and isinstance(value.elements[1].value, cst.Name):
                    outputs = value.elements[1].value
                    wrapped = cst.Dict([cst.DictElement(cst.SimpleString('"logits"'),
                                                        outputs)])
                    self.plan_edit(outputs, replace_with(wrapped),
                                   f"compute_loss returns {code(wrapped)}: Trainer reads a "
                                   "dict by key, a bare tensor as a tuple")
