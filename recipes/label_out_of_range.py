"""label-out-of-range: the classification head has fewer outputs than there are classes.

Course (chapter 8): labels range over 0..2 but ``from_pretrained`` built a head with the
default ``num_labels=2``; fix "by adding num_labels=3 when we create the model".
N is measured from the data the probe saw given to ``Trainer`` (or converted with
``to_tf_dataset``, for Keras): the ``ClassLabel``
feature's ``num_classes``, else max label + 1 over the whole training split. Labels that
start at 1 need shifting, not a bigger head, so the recipe declines them.
"""

from __future__ import annotations

import libcst as cst

from autofix.recipe import Example, NotApplicable, Recipe, append_keyword, keyword, replace_keyword
from autofix.types import DatasetFacts, RecipeContext, TrainerFacts

_MODEL_CALL = r"transformers(\.[\w.]*)?\.(TF|Flax)?\w*ForSequenceClassification\.from_pretrained"


def _facts(label_max: float, classes: int | None = None, num_labels: int = 2) -> TrainerFacts:
    return TrainerFacts("Trainer", "BertForSequenceClassification", num_labels, (
        DatasetFacts("train", ("premise", "label"), 600, "label", "int", classes, 0, label_max),
    ))


def measured_num_labels(rc: RecipeContext) -> int:
    """The number of classes in the training data, from the probe's facts.

    Raises :class:`NotApplicable` when no training split was seen, when its labels are not
    integer class ids, or when they start at 1 (shift them instead).
    """
    candidates = [t.dataset("train") for t in reversed(rc.trainers)]
    candidates += [d for d in rc.datasets if d.role in ("to_tf_dataset", "dataloader")]
    for train in candidates:
        if train is None or not train.label_column:
            continue
        if train.label_classes:
            return train.label_classes
        if train.label_kind != "int" or train.label_max is None or train.label_min is None:
            raise NotApplicable(f"labels in column {train.label_column!r} are not class ids "
                                f"({train.label_kind or 'unknown kind'})")
        if train.label_min >= 1:
            raise NotApplicable(f"labels run from {train.label_min:g} to {train.label_max:g}: "
                                "they start at 1 and need shifting to 0, not a bigger head")
        if train.label_min < 0:
            raise NotApplicable(f"negative label {train.label_min:g} in the training data")
        return int(train.label_max) + 1
    raise NotApplicable("the probe saw no training dataset with a label column to count "
                        "classes (Trainer's train_dataset, a DataLoader's or to_tf_dataset's "
                        "source)")


class SetNumLabels(Recipe):
    id = "label-out-of-range"
    category = "label-out-of-range"
    title = "set num_labels to the number of classes in the data"
    nothing_to_do = "no *ForSequenceClassification.from_pretrained(...) call found"

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(checkpoint)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(checkpoint,"
                " num_labels=3)\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a wrong existing value, an alias, ClassLabel count wins
            before=(
                "import transformers as t\n"
                "net = t.BertForSequenceClassification.from_pretrained(\n"
                "    ckpt, num_labels=2  # head\n"
                ")\n"
            ),
            after=(
                "import transformers as t\n"
                "net = t.BertForSequenceClassification.from_pretrained(\n"
                "    ckpt, num_labels=5  # head\n"
                ")\n"
            ),
            trainers=(_facts(3, classes=5),),
        ),
        Example(  # labels 1..3: shifting is the fix, not num_labels
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "model = M.from_pretrained(checkpoint)\n"
            ),
            trainers=(TrainerFacts("Trainer", "X", 2, (
                DatasetFacts("train", ("label",), 9, "label", "int", None, 1, 3),)),),
        ),
        Example(  # no facts about the data: nothing measured, nothing changed
            before=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(checkpoint)\n"
            ),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self.num_labels = measured_num_labels(self.rc)
        return super().transform_module_impl(tree)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, _MODEL_CALL):
            return updated_node
        value = cst.Integer(str(self.num_labels))
        existing = keyword(updated_node, "num_labels")
        if existing is None:
            self.changed(original_node, f"num_labels={self.num_labels}")
            return append_keyword(updated_node, "num_labels", value)
        if isinstance(existing.value, cst.Integer) and existing.value.evaluated_value == \
                self.num_labels:
            self.reason = f"num_labels is already {self.num_labels}"
            return updated_node
        old = cst.Module([]).code_for_node(existing.value)
        self.changed(original_node, f"num_labels={old} -> {self.num_labels}")
        return replace_keyword(updated_node, "num_labels", value)

    def summary(self) -> str:
        return f"set num_labels={self.num_labels}, the number of classes in the training data"
