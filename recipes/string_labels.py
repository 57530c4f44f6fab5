"""string-labels: the label column holds strings, not class ids.

Batching string labels fails the way unpadded batches do ("Unable to create tensor"),
so the diagnosis looks at the label column the probe measured first (faults.md). Fix:
``ds = ds.class_encode_column("label")`` after the dataset given to ``Trainer`` (or to a
``DataLoader``) was last assigned: the strings become a ``ClassLabel`` with sorted names,
ids 0..C-1.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

from autofix.patterns import DATALOADER, TRAINER
from autofix.recipe import Example, NotApplicable, Recipe, keyword
from autofix.types import DatasetFacts, TrainerFacts

Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement


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
        body = list(tree.body)
        for index, stmt in enumerate(body):
            for call in m.findall(stmt, m.Call()):
                assert isinstance(call, cst.Call)
                if self.is_qualified(call.func, TRAINER):
                    arg = keyword(call, "train_dataset")
                elif self.is_qualified(call.func, DATALOADER):
                    arg = call.args[0] if call.args else None
                else:
                    continue
                base = arg.value if arg is not None else None
                while isinstance(base, cst.Subscript):
                    base = base.value
                if isinstance(base, cst.Name):
                    return self._insert(tree, body, index, base.value, column)
        raise NotApplicable("no Trainer(train_dataset=...) or DataLoader(<dataset>) found")

    def _insert(self, tree: cst.Module, body: list[Statement], use: int, name: str,
                column: str) -> cst.Module:
        if any(m.findall(s, m.Call(func=m.Attribute(value=m.Name(name),
                                                    attr=m.Name("class_encode_column"))))
               for s in body[:use]):
            raise NotApplicable(f"{name} is already class-encoded")
        assigned = [i for i, s in enumerate(body[:use])
                    if m.findall(s, m.Assign(targets=[m.AssignTarget(target=m.Name(name))]))]
        if not assigned:
            raise NotApplicable(f"no assignment of {name} before Trainer")
        self.first_line = self.get_metadata(PositionProvider, body[assigned[-1]]).end.line + 1
        self.edits.append(f'{name} = {name}.class_encode_column("{column}")')
        body.insert(assigned[-1] + 1, cst.parse_statement(
            f'{name} = {name}.class_encode_column("{column}")\n'))
        return tree.with_changes(body=body)
