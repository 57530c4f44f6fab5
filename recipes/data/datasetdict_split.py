"""datasetdict-not-split: a ``DatasetDict`` (all splits) where one split is needed.

``load_dataset`` returns a ``DatasetDict`` (one key per split, ``"train"`` even for a
single file), so ``dataset.train_test_split(...)``, ``Trainer(train_dataset=tokenized)``
or ``model.prepare_tf_dataset(dataset)`` get all the splits where a ``Dataset`` is needed
(datasets' own advice: "Please first select a split"). The facts at the failure say which
variables are ``DatasetDict`` s and their splits (or the probe saw ``Trainer`` given one).
Fix: select the split there, ``dataset["train"]``: at the failing statement, the
variable used as a ``Dataset`` (a method called on it, an argument); at ``Trainer``,
``train_dataset`` gets ``"train"`` (or the only split) and ``eval_dataset`` the
validation split. With no split to choose (no ``"train"``, several splits) the recipe
declines.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from autofix.categories.failure import kind
from autofix.toolkit import Example, NotApplicable, code, keyword
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.scope import PlannedEdits, replace_with
from autofix.types import DatasetFacts, ExceptionInfo, TrainerFacts

#: Names of an evaluation split, in order of preference.
EVAL_SPLITS = ("validation", "eval", "valid", "dev", "test")


def _failure(message: str, name: str, *splits: str) -> ExceptionInfo:
    return example_failure("AttributeError", message, user={
        name: {"kind": "datasetdict", "splits": {s: ["text", "label"] for s in splits}}})


def _trainer(*splits: str) -> tuple[TrainerFacts, ...]:
    return (TrainerFacts("Trainer", "BertForSequenceClassification", 3, tuple(
        DatasetFacts(f"train:{s}", ("text", "label"), 8) for s in splits)),)


def choose(splits: list[str], role: str) -> str:
    """The split a ``role`` (``train``, ``eval``) takes from ``splits`` ("" when none)."""
    if role == "train":
        return "train" if "train" in splits else splits[0] if len(splits) == 1 else ""
    return next((s for s in EVAL_SPLITS if s in splits), "")


class SelectSplit(PlannedEdits):
    id = "datasetdict-split"
    category = "datasetdict-not-split"
    title = "select the split of the DatasetDict where a Dataset is needed"
    nothing_to_do = "no DatasetDict variable used where a Dataset is needed"

    examples = (
        Example(
            before="from datasets import load_dataset\n"
                   "dataset = load_dataset('json', data_files='data.jsonl')\n"
                   "dataset = dataset.train_test_split(test_size=0.1)\n",
            after="from datasets import load_dataset\n"
                  "dataset = load_dataset('json', data_files='data.jsonl')\n"
                  'dataset = dataset["train"].train_test_split(test_size=0.1)\n',
            failure=_failure("'DatasetDict' object has no attribute 'train_test_split'",
                             "dataset", "train"), line=3,
        ),
        Example(  # the whole DatasetDict given to Trainer
            before="from transformers import Trainer\n"
                   "tokenized = raw.map(encode, batched=True)\n"
                   "trainer = Trainer(model=model, train_dataset=tokenized)\n",
            after="from transformers import Trainer\n"
                  "tokenized = raw.map(encode, batched=True)\n"
                  'trainer = Trainer(model=model, train_dataset=tokenized["train"])\n',
            failure=_failure("Invalid key: 0. Please first select a split.", "tokenized",
                             "train", "validation"),
            trainers=_trainer("train", "validation"),
        ),
        Example(  # an argument of the failing call
            before="tf_ds = model.prepare_tf_dataset(dataset, batch_size=16)\n",
            after='tf_ds = model.prepare_tf_dataset(dataset["train"], batch_size=16)\n',
            failure=_failure("Dataset argument should be a datasets.Dataset!", "dataset",
                             "train"), line=1,
        ),
        Example(  # several splits and none is "train": which one is the user's to say
            before="dataset = dataset.train_test_split(test_size=0.1)\n",
            failure=_failure("'DatasetDict' object has no attribute 'train_test_split'",
                             "dataset", "a", "b"), line=1,
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = failure_of(self.rc)
        if failure is None:
            raise NotApplicable("the facts at the failure are missing")
        self.dicts: dict[str, list[str]] = {}
        for frame in failure.user_frames():
            for name, value in frame.values.items():
                if kind(value) == "datasetdict":
                    self.dicts.setdefault(name, list(value.get("splits") or {}))
        if not self.dicts:
            raise NotApplicable("the facts at the failure show no DatasetDict variable")
        line = self.rc.diagnosis.line
        here = not self.rc.diagnosis.file or Path(self.rc.diagnosis.file) == self.rc.script
        for call in self.program.calls:
            if self.program.is_trainer_call(call):
                for role, name in (("train", "train_dataset"), ("eval", "eval_dataset")):
                    arg = keyword(call, name)
                    if arg is not None:
                        self._select(arg.value, role)
            elif here and line and self.program.line(call) == line:
                if isinstance(call.func, cst.Attribute):
                    self._select(call.func.value, "train")
                for arg in call.args:
                    self._select(arg.value, "train")

    def _select(self, node: cst.BaseExpression, role: str) -> None:
        if not isinstance(node, cst.Name) or node.value not in self.dicts or node in self.plan:
            return
        splits = self.dicts[node.value]
        split = choose(splits, role)
        if not split:
            self.reason = (f"{node.value} is a DatasetDict with the splits {splits}: which "
                           "one to use is the user's choice")
            return
        selected = cst.Subscript(value=node, slice=[cst.SubscriptElement(
            cst.Index(cst.SimpleString(f'"{split}"')))])
        self.plan_edit(node, replace_with(selected),
                       f"{code(selected)}: the {split!r} split of the DatasetDict "
                       f"{node.value} (splits {splits})")
