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

import libcst as cst

from autofix.categories.catalogue.data import removed_column_read
from autofix.toolkit import Example, NotApplicable, Recipe, keyword
from autofix.toolkit.facts import example_failure, failure_of
from autofix.types import DatasetFacts, ExceptionInfo, TrainerFacts

from ._training_args import TRAINING_ARGS_PATTERN, set_keyword, splatted_dicts


def _failure(key: str = "premise") -> ExceptionInfo:
    return example_failure("KeyError", repr(key), user={"examples": {
        "kind": "list", "len": 8, "items": [{"kind": "mapping", "keys": ["label"]}]}})


def _trainer(*columns: str) -> tuple[TrainerFacts, ...]:
    return (TrainerFacts("Trainer", "BertForSequenceClassification", 3, (
        DatasetFacts("train", columns, 8, "label", "int"),)),)


class KeepUnusedColumns(Recipe):
    id = "keep-unused-columns"
    category = "unused-columns-removed"
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
        Example(  # columns are kept already
            before="from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', remove_unused_columns=False)\n",
            failure=_failure(), trainers=_trainer("premise", "hypothesis", "label"),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        failure = failure_of(self.rc)
        if failure is None or removed_column_read(failure) is not True:
            raise NotApplicable("the facts at the failure show no removed column read")
        return super().transform_module_impl(tree)

    def visit_Module(self, node: cst.Module) -> None:
        self.dicts = splatted_dicts(self, node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not (self.is_qualified(original_node.func, TRAINING_ARGS_PATTERN)
                or original_node in self.dicts):
            return updated_node
        if any(a.star == "**" for a in original_node.args):
            return updated_node  # the dict given as **hp is edited instead
        arg = keyword(updated_node, "remove_unused_columns")
        if arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "False":
            self.reason = "remove_unused_columns=False is set already"
            return updated_node
        self.changed(original_node, "remove_unused_columns=False, so the columns the "
                                    "collator or compute_loss reads reach it")
        return set_keyword(updated_node, "remove_unused_columns", cst.Name("False"))
