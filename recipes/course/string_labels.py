"""string-labels: the label column holds strings, not class ids.

Batching string labels fails the way unpadded batches do ("Unable to create tensor"),
so the diagnosis looks at the label column the probe measured first (faults.md). Fix:
``ds = ds.class_encode_column("label")`` after the dataset given to ``Trainer`` (or to a
``DataLoader``) was last assigned in the scope of that call (``autofix.toolkit.insert``): the
strings become a ``ClassLabel`` with sorted names, ids 0..C-1.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, Recipe, insert
from autofix.types import DatasetFacts, TrainerFacts

from .._trained_dataset import trained_dataset


def _facts(kind: str) -> tuple[TrainerFacts, ...]:
    return (TrainerFacts("Trainer", "BertForSequenceClassification", 3, (
        DatasetFacts("train", ("label", "input_ids"), 8, "label", kind),)),)


class ClassEncodeLabels(Recipe):
    id = "string-labels"
    category = "string-labels"
    title = "class-encode the string label column"

    examples = (
        Example(
            before=(
                "from transformers import Trainer\n"
                "tokenized = raw.map(tok, batched=True)\n"
                "trainer = Trainer(model, args, train_dataset=tokenized['train'])\n"
            ),
            after=(
                "from transformers import Trainer\n"
                "tokenized = raw.map(tok, batched=True)\n"
                'tokenized = tokenized.class_encode_column("label")\n'
                "trainer = Trainer(model, args, train_dataset=tokenized['train'])\n"
            ),
            trainers=_facts("str"),
        ),
        Example(  # the dataset is main()'s local: the statement goes into main()
            before=(
                "from transformers import Trainer\n"
                "ds = None\n"
                "def main():\n"
                "    ds = load()\n"
                "    if small:\n"
                "        ds = ds.select(range(8))\n"
                "    Trainer(model, args, train_dataset=ds)\n"
            ),
            after=(
                "from transformers import Trainer\n"
                "ds = None\n"
                "def main():\n"
                "    ds = load()\n"
                "    if small:\n"
                "        ds = ds.select(range(8))\n"
                '    ds = ds.class_encode_column("label")\n'
                "    Trainer(model, args, train_dataset=ds)\n"
            ),
            trainers=_facts("str"),
        ),
        Example(  # the dataset is a parameter: encoded where the function starts
            before=(
                "from transformers import Trainer\n"
                "def build(model, train_ds):\n"
                '    """The trainer."""\n'
                "    return Trainer(model=model, train_dataset=train_ds)\n"
            ),
            after=(
                "from transformers import Trainer\n"
                "def build(model, train_ds):\n"
                '    """The trainer."""\n'
                '    train_ds = train_ds.class_encode_column("label")\n'
                "    return Trainer(model=model, train_dataset=train_ds)\n"
            ),
            trainers=_facts("str"),
        ),
        Example(  # labels are already ids
            before=(
                "from transformers import Trainer\n"
                "tokenized = raw.map(tok, batched=True)\n"
                "trainer = Trainer(model, args, train_dataset=tokenized['train'])\n"
            ),
            trainers=_facts("int"),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        seen = [d for t in self.rc.trainers for d in t.datasets] + list(self.rc.datasets)
        column = next((d.label_column for d in seen if d.label_kind == "str"), "")
        if not column:
            raise NotApplicable("the probe saw no string label column")
        use = trained_dataset(self, tree)
        if use is None:
            raise NotApplicable("no Trainer(train_dataset=...) or DataLoader(<dataset>) found")
        return self._insert(tree, use, column)

    def _insert(self, tree: cst.Module, use: cst.Name, column: str) -> cst.Module:
        """``name = name.class_encode_column(column)`` after the last assignment of the
        dataset the call sees (its own scope: a function's local, or the module's)."""
        name = use.value
        encoded = m.Call(func=m.Attribute(value=m.Name(name), attr=m.Name("class_encode_column")))
        if any(m.findall(s, encoded) for s in insert.assignment_statements(self, use, name)):
            raise NotApplicable(f"{name} is already class-encoded")
        text = f'{name} = {name}.class_encode_column("{column}")'
        try:
            new, self.first_line = insert.insert_after_last_assignment(
                self, tree, use, name, [insert.parse_statement(text)])
        except insert.NoPlace as exc:
            raise NotApplicable(str(exc)) from None
        self.edits.append(text)
        return new
