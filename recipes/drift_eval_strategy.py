"""api-drift: ``evaluation_strategy`` <-> ``eval_strategy`` in ``TrainingArguments``.

transformers 4.41.0 renamed ``evaluation_strategy`` to ``eval_strategy`` (the old name was
deprecated and later removed: "unexpected keyword argument 'evaluation_strategy'" on
today's releases); installs older than 4.41 know only ``evaluation_strategy``. The name is
chosen by the target environment's version, so the rename also runs backwards.
"""

from __future__ import annotations

from autofix.toolkit import Example
from autofix.toolkit.patterns import TRAINING_ARGS

from ._drift import KeywordRename

#: transformers 4.41.0 introduced ``eval_strategy``.
EVAL_STRATEGY_SINCE = "4.41.0"


class RenameEvalStrategy(KeywordRename):
    id = "drift-eval-strategy"
    category = "api-drift"
    requires_words = (("TrainingArguments", "Seq2SeqTrainingArguments"),)
    requires_imports = ("transformers",)
    title = "use the evaluation-strategy argument name of the installed transformers"
    CALL = TRAINING_ARGS
    OLD, NEW, SINCE = "evaluation_strategy", "eval_strategy", EVAL_STRATEGY_SINCE

    examples = (
        Example(
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', evaluation_strategy='epoch')\n"),
            after=("from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', eval_strategy='epoch')\n"),
            evidence="TypeError: TrainingArguments.__init__() got an unexpected keyword "
                     "argument 'evaluation_strategy'",
        ),
        Example(  # an old install wants the old name
            before=("import transformers\n"
                    "args = transformers.TrainingArguments('out', eval_strategy='steps')\n"),
            after=("import transformers\n"
                   "args = transformers.TrainingArguments('out', evaluation_strategy='steps')\n"),
            versions={"transformers": "4.38.2"},
            evidence="TypeError: __init__() got an unexpected keyword argument 'eval_strategy'",
        ),
        Example(  # the error is about something else
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', evaluation_strategy='epoch')\n"),
            evidence="TypeError: __init__() got an unexpected keyword argument 'tokenizer'",
        ),
    )
