"""label-column-unnamed: the class ids are in a column ``Trainer`` does not pass as labels.

``Trainer`` hands the model only the columns its ``forward`` takes; a model computes its
loss from ``labels``, so class ids kept under another name (``category``, as exported from
a spreadsheet) are dropped and the model returns no loss ("The model did not return a loss
from the inputs, only the following keys: logits"). The facts at the failure show the
dataset given to ``Trainer``: no ``label``/``labels`` column and exactly one integer column
that is neither a model input nor a row id and whose values are class ids of the head
(0 .. num_labels - 1, measured over the split), so the renamed column is the labels the
head was built for. Fix: ``ds = ds.rename_column(name,
"labels")`` after the last assignment of each dataset given to ``Trainer`` that holds it;
where the script's own ``rename_column`` gave the class ids that name, that rename names
them ``labels`` instead.
"""

from __future__ import annotations

from typing import cast

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

from autofix.categories.catalogue.data import label_candidates
from autofix.toolkit import Example, NotApplicable, Recipe, find, insert, keyword
from autofix.toolkit.edits import argument
from autofix.toolkit.facts import example_failure, failure_of
from autofix.types import DatasetFacts, ExceptionInfo, TrainerFacts

_COLUMNS = ("category", "input_ids", "attention_mask")


def _failure(feature: str = "Value('int64')", high: int = 2) -> ExceptionInfo:
    return example_failure(
        "ValueError", "The model did not return a loss from the inputs, only the following "
        "keys: logits.", user={"train": {
            "kind": "dataset", "columns": list(_COLUMNS),
            "features": {"category": feature, "input_ids": "List(Value('int32'))",
                         "attention_mask": "List(Value('int8'))"},
            "ranges": {"category": {"min": 0, "max": high, "n_distinct": high + 1}}}})


_TRAINERS = (TrainerFacts("Trainer", "BertForSequenceClassification", 3, (
    DatasetFacts("train", _COLUMNS, 8),)),)


class RenameLabelColumn(Recipe):
    id = "rename-label-column"
    category = "label-column-unnamed"
    title = "rename the class-id column to labels, the name the model's loss reads"
    requires_imports = ("transformers",)
    nothing_to_do = "no dataset variable given to Trainer"

    examples = (
        Example(
            before="from transformers import Trainer\n"
                   "train = raw['train'].map(encode, batched=True)\n"
                   "trainer = Trainer(model=model, args=args, train_dataset=train)\n",
            after="from transformers import Trainer\n"
                  "train = raw['train'].map(encode, batched=True)\n"
                  'train = train.rename_column("category", "labels")\n'
                  "trainer = Trainer(model=model, args=args, train_dataset=train)\n",
            failure=_failure(), trainers=_TRAINERS,
        ),
        Example(  # the script's own rename named the class ids: it names them labels
            before="from transformers import Trainer\n"
                   "train = raw['train'].rename_column('label', 'category')\n"
                   "train = train.rename_column('premise', 'text')\n"
                   "trainer = Trainer(model=model, args=args, train_dataset=train)\n",
            after="from transformers import Trainer\n"
                  "train = raw['train'].rename_column('label', 'labels')\n"
                  "train = train.rename_column('premise', 'text')\n"
                  "trainer = Trainer(model=model, args=args, train_dataset=train)\n",
            failure=_failure(), trainers=_TRAINERS,
        ),
        Example(  # a string column holds no class ids
            before="from transformers import Trainer\n"
                   "trainer = Trainer(model=model, args=args, train_dataset=train)\n",
            failure=_failure("Value('string')"), trainers=_TRAINERS,
        ),
        Example(  # values beyond the head's 3 outputs: not its class ids
            before="from transformers import Trainer\n"
                   "trainer = Trainer(model=model, args=args, train_dataset=train)\n",
            failure=_failure(high=41), trainers=_TRAINERS,
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        failure = failure_of(self.rc)
        found = label_candidates(failure) if failure is not None else []
        if len(found) != 1:
            raise NotApplicable("the facts at the failure show no single class-id column")
        column = found[0]
        eval_columns = {c for t in self.rc.trainers for d in t.datasets
                        if d.role == "eval" for c in d.columns}
        done: set[str] = set()
        for call in find(tree, m.Call()):
            assert isinstance(call, cst.Call)
            for role in ("train_dataset", "eval_dataset"):
                arg = keyword(call, role)
                if arg is None or role == "eval_dataset" and column not in eval_columns:
                    continue
                base = arg.value
                while isinstance(base, cst.Subscript):
                    base = base.value
                if isinstance(base, cst.Name) and base.value not in done:
                    done.add(base.value)
                    tree = self._rename(tree, base, column)
        if not self.edits:
            raise NotApplicable(self.reason or self.nothing_to_do)
        return tree

    def _rename(self, tree: cst.Module, use: cst.Name, column: str) -> cst.Module:
        name = use.value
        renamed = m.Call(func=m.Attribute(attr=m.Name("rename_column")))
        statements = insert.assignment_statements(self, use, name)
        for statement in reversed(statements):
            for call in m.findall(statement, renamed):
                assert isinstance(call, cst.Call)
                source = argument(call, "original_column_name", 0)
                if isinstance(source, cst.SimpleString) and source.evaluated_value == column:
                    self.reason = f"{name} has {column!r} renamed already"
                    return tree
                target = argument(call, "new_column_name", 1)
                if isinstance(target, cst.SimpleString) and target.evaluated_value == "labels":
                    self.reason = f"{name} has a column renamed to 'labels' already"
                    return tree
                if isinstance(target, cst.SimpleString) and target.evaluated_value == column:
                    return self._retarget(tree, target, column)
        text = f'{name} = {name}.rename_column("{column}", "labels")'
        try:
            new, line = insert.insert_after_last_assignment(
                self, tree, use, name, [insert.parse_statement(text)])
        except insert.NoPlace as exc:
            self.reason = str(exc)
            return tree
        self.first_line = self.first_line or line
        self.edits.append(f"{text}: the class ids under the name the model's loss reads")
        return new

    def _retarget(self, tree: cst.Module, target: cst.SimpleString, column: str) -> cst.Module:
        """The script's own rename names the class ids ``column``: it names them
        ``labels`` instead (the value the fix must change, at its source)."""
        quote = target.value[-1]
        self.first_line = self.first_line or \
            self.get_metadata(PositionProvider, target).start.line
        self.edits.append(f"rename_column(..., {column!r}) now names the class ids "
                          "\"labels\", the name the model's loss reads")
        return cast(cst.Module, tree.deep_replace(
            target, target.with_changes(value=f"{quote}labels{quote}")))
