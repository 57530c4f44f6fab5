"""seq2seq-metrics-without-generate: ``Seq2SeqTrainer`` evaluates without generating.

With ``predict_with_generate=False`` (the default) ``Seq2SeqTrainer`` gives
``compute_metrics`` the logits, a (batch, length, vocabulary) float array (in a tuple with
the encoder's last hidden state), and a ``compute_metrics`` that decodes token ids fails
("'list' object cannot be interpreted as an integer"). The facts at the failure show the
float logits reaching ``compute_metrics`` of a sequence-to-sequence model. Fix:
``predict_with_generate=True`` in ``Seq2SeqTrainingArguments`` (also in a ``dict(...)``
given as ``**hp``), so evaluation generates token ids, as the library's summarization and
translation examples do.
"""

from __future__ import annotations

from autofix.categories.catalogue.data import logits_decoded
from autofix.categories.failure import Failure
from autofix.toolkit import Example, patterns
from autofix.toolkit.facts import example_failure
from autofix.types import ExceptionInfo, TrainerFacts

from .._training_args import SetFlag


def _failure(dims: list[int]) -> ExceptionInfo:
    logits = {"kind": "array", "dtype": "float32", "shape": dims}
    return example_failure(
        "TypeError", "'list' object cannot be interpreted as an integer",
        user={"eval_pred": {"kind": "eval-prediction", "predictions": {
            "kind": "tuple", "len": 2, "items": [logits, logits]}}},
        user_function="compute_metrics")


_TRAINERS = (TrainerFacts("Seq2SeqTrainer", "T5ForConditionalGeneration", 2, ()),)


class PredictWithGenerate(SetFlag):
    id = "predict-with-generate"
    category = "seq2seq-metrics-without-generate"
    flag, value = "predict_with_generate", True
    because = "so compute_metrics gets generated token ids, not logits"
    no_facts = "the facts at the failure show no logits decoded in compute_metrics"
    args_pattern = patterns.SEQ2SEQ_TRAINING_ARGS
    title = "generate at evaluation (predict_with_generate=True) for compute_metrics"
    requires_words = (("Seq2SeqTrainingArguments",),)
    nothing_to_do = "no Seq2SeqTrainingArguments(...) without predict_with_generate=True"

    examples = (
        Example(
            before="from transformers import Seq2SeqTrainingArguments\n"
                   "args = Seq2SeqTrainingArguments('out', eval_strategy='steps')\n",
            after="from transformers import Seq2SeqTrainingArguments\n"
                  "args = Seq2SeqTrainingArguments(\n"
                  "    'out',\n    eval_strategy='steps',\n    predict_with_generate=True,\n)\n",
            failure=_failure([32, 18, 30522]), trainers=_TRAINERS,
        ),
        Example(  # the predictions are token ids already: another fault
            before="from transformers import Seq2SeqTrainingArguments\n"
                   "args = Seq2SeqTrainingArguments('out', eval_strategy='steps')\n",
            failure=_failure([32, 18]), trainers=_TRAINERS,
        ),
    )

    def shows(self, failure: Failure) -> bool | None:
        return logits_decoded(failure)
