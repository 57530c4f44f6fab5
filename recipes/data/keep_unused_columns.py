"""unused-columns-removed: the script's own code reads a column ``Trainer`` removed.

``Trainer`` drops every dataset column the model's ``forward`` does not take
(``remove_unused_columns=True``, the default) before batches reach the collator, so a
custom collator that tokenizes raw text, or an overriding ``compute_loss`` that pops a
per-example weight, finds its column gone (``KeyError: 'premise'``). The facts at the
failure show it: the key is a column of the dataset given to ``Trainer`` and the rows or
the batch the user's code holds lack it. Fix: ``remove_unused_columns=False`` in
``TrainingArguments`` (also in a ``dict(...)`` given as ``TrainingArguments(**hp)``), as
the library documents for such collators.
"""

from __future__ import annotations

from autofix.categories.catalogue.data import removed_column_read
from autofix.categories.failure import Failure
from autofix.toolkit import Example
from autofix.toolkit.facts import example_failure
from autofix.types import DatasetFacts, ExceptionInfo, TrainerFacts

from .._training_args import SetFlag


def _failure(key: str = "premise") -> ExceptionInfo:
    return example_failure("KeyError", repr(key), user={"examples": {
        "kind": "list", "len": 8, "items": [{"kind": "mapping", "keys": ["label"]}]}})


def _trainer(*columns: str) -> tuple[TrainerFacts, ...]:
    return (TrainerFacts("Trainer", "BertForSequenceClassification", 3, (
        DatasetFacts("train", columns, 8, "label", "int"),)),)


class KeepUnusedColumns(SetFlag):
    id = "keep-unused-columns"
    category = "unused-columns-removed"
    flag, value = "remove_unused_columns", False
    because = "so the columns the collator or compute_loss reads reach it"
    no_facts = "the facts at the failure show no removed column read"
    title = "keep the dataset columns the script's own code reads (remove_unused_columns)"
    requires_imports = ("transformers",)
    nothing_to_do = "no TrainingArguments(...) that removes unused columns"

    examples = (
        Example(
            before="from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', max_steps=30)\n",
            after="from transformers import TrainingArguments\n"
                  "args = TrainingArguments('out', max_steps=30, remove_unused_columns=False)\n",
            failure=_failure(), trainers=_trainer("premise", "hypothesis", "label"),
        ),
        Example(  # the key is no column of the training set: another fault
            before="from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', max_steps=30)\n",
            failure=_failure("text"), trainers=_trainer("premise", "hypothesis", "label"),
        ),
        Example(  # the arguments come from a dict given as **hp: the entry is added there
            before="from transformers import TrainingArguments\n"
                   "hp = dict(output_dir='out', max_steps=30)\n"
                   "args = TrainingArguments(**hp)\n",
            after="from transformers import TrainingArguments\n"
                  "hp = dict(output_dir='out', max_steps=30, remove_unused_columns=False)\n"
                  "args = TrainingArguments(**hp)\n",
            failure=_failure(), trainers=_trainer("premise", "hypothesis", "label"),
        ),
        Example(  # set through a constant: changed where it is defined
            before="from transformers import TrainingArguments\n"
                   "KEEP = True\n"
                   "args = TrainingArguments('out', remove_unused_columns=KEEP)\n",
            after="from transformers import TrainingArguments\n"
                  "KEEP = False\n"
                  "args = TrainingArguments('out', remove_unused_columns=KEEP)\n",
            failure=_failure(), trainers=_trainer("premise", "hypothesis", "label"),
        ),
        Example(  # columns are kept already
            before="from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', remove_unused_columns=False)\n",
            failure=_failure(), trainers=_trainer("premise", "hypothesis", "label"),
        ),
    )

    def shows(self, failure: Failure) -> bool | None:
        return removed_column_read(failure)
