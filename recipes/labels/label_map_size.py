"""label-map-size-mismatch: ``id2label`` lists fewer classes than the data has.

Report: huggingface/transformers#16709. ``from_pretrained(ckpt, num_labels=3,
id2label={0: ..., 1: ...})`` builds a 2-output head without a warning (transformers 5.24
takes the head's size from ``id2label``, measured), and label 2 is out of range. The fix
gives the map one entry per class in the data (the count of ``recipes/_num_labels.py``):
missing ids get transformers' own default names (``LABEL_2``), a ``label2id`` dict literal
gets their inverse entries (one built from ``id2label`` follows by itself), and a literal
``num_labels`` below the count is raised. Only dict literals with integer keys are extended
(a map built from a list of names is the user's to complete).
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, NotApplicable, code, keyword, patterns
from autofix.toolkit.scope import PlannedEdits, replace_kw, replace_with, string_value
from autofix.toolkit.values import Values
from autofix.types import DatasetFacts, TrainerFacts

from ._num_labels import measured_num_labels

_FACTS = (TrainerFacts("Trainer", "BertForSequenceClassification", 2, (
    DatasetFacts("train", ("label",), 9, "label", "int", None, 0, 2),)),)


def _keys(node: cst.Dict) -> list[int] | None:
    keys = []
    for element in node.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.Integer):
            return None
        keys.append(int(element.key.evaluated_value))
    return keys


def _extended(node: cst.Dict, new: list[cst.DictElement]) -> cst.Dict:
    elements = list(node.elements)
    if elements:
        last = elements[-1]
        comma = last.comma if isinstance(last.comma, cst.Comma) else cst.Comma(
            whitespace_after=cst.SimpleWhitespace(" "))
        elements[-1] = last.with_changes(comma=comma)
    for i, element in enumerate(new):
        last_one = i == len(new) - 1
        elements.append(element.with_changes(comma=cst.MaybeSentinel.DEFAULT if last_one else
                                             cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
    return node.with_changes(elements=elements)


class LabelMapSize(PlannedEdits):
    id = "label-map-size"
    category = "label-map-size-mismatch"
    requires_words = (("id2label",),)
    requires_imports = ("transformers",)
    title = "give id2label (and label2id) one entry per class in the data"
    nothing_to_do = "no id2label dict literal shorter than the classes found"
    restores = ("label-map-size-mismatch",)

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "id2label = {0: 'entailment', 1: 'not_entailment'}\n"
                "label2id = {v: k for k, v in id2label.items()}\n"
                "model = M.from_pretrained(ckpt, num_labels=3, id2label=id2label,\n"
                "                          label2id=label2id)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "id2label = {0: 'entailment', 1: 'not_entailment', 2: \"LABEL_2\"}\n"
                "label2id = {v: k for k, v in id2label.items()}\n"
                "model = M.from_pretrained(ckpt, num_labels=3, id2label=id2label,\n"
                "                          label2id=label2id)\n"
            ),
            trainers=_FACTS,
        ),
        Example(  # a map built from a list of names: the user's to complete
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "model = M.from_pretrained(ckpt, id2label=dict(enumerate(names)))\n"
            ),
            trainers=_FACTS,
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        count = measured_num_labels(self.rc)
        self.count = count
        for call in self.program.calls:
            if not self.is_qualified(call.func, patterns.CLASSIFIER) and \
                    not self.is_qualified(call.func, patterns.MODEL_CONFIG):
                continue
            mapping = keyword(call, "id2label")
            if mapping is None:
                continue
            self._extend_id2label(mapping.value, count)
            inverse = keyword(call, "label2id")
            if inverse is not None:
                self._extend_label2id(inverse.value, count)
            given = keyword(call, "num_labels")
            if given is not None and isinstance(given.value, cst.Integer) and \
                    int(given.value.evaluated_value) < count:
                self.plan_edit(call, replace_kw("num_labels", cst.Integer(str(count))),
                               f"num_labels={count}")
        if not self.edits:
            raise NotApplicable(self.reason or self.nothing_to_do)

    def _literal(self, expr: cst.BaseExpression) -> cst.Dict | None:
        values = self.values.origins(expr)
        dicts = [v for v in values if isinstance(v, cst.Dict)]
        return dicts[0] if len(dicts) == 1 and len(values) == 1 else None

    def _extend_id2label(self, expr: cst.BaseExpression, count: int) -> None:
        node = self._literal(expr)
        keys = _keys(node) if node is not None else None
        if node is None or keys is None:
            self.reason = f"id2label={code(expr)[:60]} is not a dict literal with integer keys"
            return
        missing = [i for i in range(count) if i not in keys]
        if not missing:
            self.reason = f"id2label already has {count} entries"
            return
        new = [cst.DictElement(cst.Integer(str(i)), cst.SimpleString(f'"LABEL_{i}"'))
               for i in missing]
        self.plan_edit(node, replace_with(_extended(node, new)),
                       f"id2label: + {', '.join(f'{i}: LABEL_{i}' for i in missing)}")

    def _extend_label2id(self, expr: cst.BaseExpression, count: int) -> None:
        node = self._literal(expr)
        if node is None:
            return  # built from id2label (a comprehension): follows by itself
        names = {string_value(e.key) for e in node.elements if isinstance(e, cst.DictElement)}
        ids = [e.value for e in node.elements if isinstance(e, cst.DictElement)]
        if not all(isinstance(v, cst.Integer) for v in ids):
            return
        have = {int(v.evaluated_value) for v in ids if isinstance(v, cst.Integer)}
        new = [cst.DictElement(cst.SimpleString(f'"LABEL_{i}"'), cst.Integer(str(i)))
               for i in range(count) if i not in have and f"LABEL_{i}" not in names]
        if new:
            self.plan_edit(node, replace_with(_extended(node, new)), "label2id: inverse entries")

    def summary(self) -> str:
        return (f"give id2label one entry per class ({self.count}; the head takes its size "
                "from it)")
