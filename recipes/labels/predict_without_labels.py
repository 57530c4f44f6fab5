"""placeholder-labels: a split with no gold labels (every label -1) given to
``trainer.predict``.

GLUE-style test splits carry a placeholder label, -1, on every row (huggingface/datasets
#5624). ``Trainer.predict`` computes the loss whenever the batches hold labels, and
cross-entropy raises ``IndexError: Target -1 is out of bounds`` (torch 2.13, measured).
The predictions never depend on the labels: the split is predicted without its label
column, ``trainer.predict(ds["test"].remove_columns("label"))``, and no loss is computed.

The recipe changes only a ``predict`` call of a ``Trainer`` on the failing line, and only
when the traceback passes through ``Trainer.predict`` (for training or evaluation, which
rows have no gold label and whether to drop them is the data's: the category's advice
names the change). The column is the label column the probe read off the script's
datasets (``label`` when none was read: the ``datasets`` convention the collators use).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from autofix.toolkit import Example, NotApplicable, Recipe, code
from autofix.types import ExceptionInfo, Frame


def _predict_failure() -> ExceptionInfo:
    return ExceptionInfo("builtins.IndexError", "Target -1 is out of bounds.", frames=(
        Frame("train.py", 4, "<module>", "preds = trainer.predict(ds['test'])"),
        Frame("transformers/trainer.py", 1, "predict", "output = eval_loop("),
        Frame("torch/nn/functional.py", 1, "cross_entropy", "return torch._C")))


def _train_failure() -> ExceptionInfo:
    return ExceptionInfo("builtins.IndexError", "Target -1 is out of bounds.", frames=(
        Frame("train.py", 4, "<module>", "trainer.train()"),
        Frame("transformers/trainer.py", 1, "train", "return inner_training_loop("),
        Frame("torch/nn/functional.py", 1, "cross_entropy", "return torch._C")))


_HEAD = ("from transformers import Trainer\n"
         "trainer = Trainer(model=model, train_dataset=ds['train'])\n"
         "trainer.train()\n")


class PredictWithoutLabels(Recipe):
    id = "predict-without-labels"
    category = "placeholder-labels"
    requires_words = (("predict",),)
    title = "predict the unlabelled split without its placeholder label column"
    nothing_to_do = "no trainer.predict(...) call on the failing line, or the failure was " \
                    "not raised by Trainer.predict"

    examples = (
        Example(before=_HEAD + "preds = trainer.predict(ds['test'])\n",
                after=_HEAD + "preds = trainer.predict(ds['test'].remove_columns(\"label\"))\n",
                line=4, failure=_predict_failure()),
        Example(  # raised in training: the rows to drop are the data's, advice only
            before=_HEAD + "preds = trainer.predict(ds['test'])\n",
            line=3, failure=_train_failure()),
        Example(  # already predicted without the column
            before=_HEAD + "preds = trainer.predict(ds['test'].remove_columns('label'))\n",
            line=4, failure=_predict_failure()),
    )

    def visit_Module(self, node: cst.Module) -> bool:
        exc = self.rc.diagnosis.failure
        frames = exc.frames if exc is not None else ()
        if not any(f.function == "predict" and f.file.replace("\\", "/").endswith(
                "transformers/trainer.py") for f in frames):
            raise NotApplicable("the placeholder labels did not reach the loss through "
                                "Trainer.predict: which rows to drop is the data's")
        columns = [d.label_column for d in self.rc.datasets if d.label_column] + \
            [d.label_column for t in self.rc.trainers for d in t.datasets if d.label_column]
        self.column = columns[0] if columns else "label"
        return True

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        func = original_node.func
        line = self.get_metadata(PositionProvider, original_node).start.line
        if not isinstance(func, cst.Attribute) or func.attr.value != "predict" or \
                line != self.rc.diagnosis.line or not original_node.args or \
                original_node.args[0].keyword is not None:
            return updated_node
        split = updated_node.args[0].value
        if isinstance(split, cst.Call) and isinstance(split.func, cst.Attribute) and \
                split.func.attr.value == "remove_columns":
            return updated_node  # already without a column: not this fault's shape
        new = cst.Call(func=cst.Attribute(value=split, attr=cst.Name("remove_columns")),
                       args=[cst.Arg(cst.SimpleString(f'"{self.column}"'))])
        self.changed(original_node, f"line {line}: {code(split)} -> {code(new)}")
        return updated_node.with_changes(
            args=[updated_node.args[0].with_changes(value=new), *updated_node.args[1:]])

    def summary(self) -> str:
        return "predict without the placeholder labels (" + "; ".join(self.edits) + ")"
