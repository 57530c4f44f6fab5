"""label-out-of-range: class ids that start at 1 (ratings 1..N) on an N-output head.

A head with ``num_labels=N`` reads class ids 0..N-1; labels 1..N (star ratings, 1-based
exports) put the last class out of range (``IndexError: Target 3 is out of bounds.``) and
leave output 0 unused. When the training labels run exactly from 1 to ``num_labels`` (the
probe's whole-split range against the head), the fix shifts them to start at 0, right after
the dataset given to ``Trainer`` (or a ``DataLoader``) is last assigned in the scope of that
call (``autofix.toolkit.insert``): ``ds = ds.map(lambda ex: {"label": ex["label"] - 1})``.
A bigger head would keep a class that never occurs.
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, NotApplicable, Recipe, insert
from autofix.types import DatasetFacts, TrainerFacts

from .._trained_dataset import trained_dataset


def _facts(low: float, high: float, num_labels: int = 3) -> tuple[TrainerFacts, ...]:
    return (TrainerFacts("Trainer", "BertForSequenceClassification", num_labels, (
        DatasetFacts("train", ("label", "input_ids"), 8, "label", "int", None, low, high),)),)


class LabelsFromZero(Recipe):
    id = "labels-from-zero"
    category = "label-out-of-range"
    requires_imports = ("transformers",)
    title = "shift 1-based class ids to start at 0"
    restores = ("label-out-of-range",)

    examples = (
        Example(
            before=(
                "from transformers import Trainer\n"
                "train = raw['train'].map(encode, batched=True)\n"
                "trainer = Trainer(model=model, train_dataset=train)\n"
            ),
            after=(
                "from transformers import Trainer\n"
                "train = raw['train'].map(encode, batched=True)\n"
                "train = train.map(lambda example: {\"label\": example[\"label\"] - 1})\n"
                "trainer = Trainer(model=model, train_dataset=train)\n"
            ),
            trainers=_facts(1, 3),
        ),
        Example(  # labels from 0: another fault
            before=(
                "from transformers import Trainer\n"
                "trainer = Trainer(model=model, train_dataset=train)\n"
            ),
            trainers=_facts(0, 3),
        ),
        Example(  # labels 1..4 on 3 outputs: shifting would not fit them either
            before=(
                "from transformers import Trainer\n"
                "trainer = Trainer(model=model, train_dataset=train)\n"
            ),
            trainers=_facts(1, 4),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        column = self._column()
        use = trained_dataset(self, tree)
        if use is None:
            raise NotApplicable("no Trainer(train_dataset=<name>) or DataLoader(<name>) found")
        return self._insert(tree, use, column)

    def _column(self) -> str:
        for trainer in self.rc.trainers:
            train = trainer.dataset("train")
            if train is None or trainer.num_labels is None or train.label_kind != "int" \
                    or train.label_classes:
                continue
            if train.label_min == 1 and train.label_max == trainer.num_labels:
                return train.label_column
        raise NotApplicable("the training labels do not run from 1 to num_labels")

    def _insert(self, tree: cst.Module, use: cst.Name, column: str) -> cst.Module:
        name = use.value
        shifted = f'["{column}"] - 1'
        if any(shifted in cst.Module([]).code_for_node(s).replace("'", '"')
               for s in insert.assignment_statements(self, use, name)):
            raise NotApplicable(f"{name} is already shifted to start at 0")
        text = (f'{name} = {name}.map(lambda example: {{"{column}": example["{column}"] '
                '- 1})')
        try:
            new, self.first_line = insert.insert_after_last_assignment(
                self, tree, use, name, [insert.parse_statement(text)])
        except insert.NoPlace as exc:
            raise NotApplicable(str(exc)) from None
        self.edits.append(text)
        return new

    def summary(self) -> str:
        return "shift the class ids to start at 0 (the labels ran from 1 to num_labels)"
