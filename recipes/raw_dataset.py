"""raw-dataset: ``Trainer`` is given the raw split instead of the tokenized one.

Course (chapter 8, "Debugging the training pipeline"): the script maps a tokenize
function over ``raw_datasets`` but passes ``raw_datasets["train"]`` to ``Trainer``; the
text columns are dropped as unused and the model gets no ``input_ids``.
Fix: the raw dataset variable in ``train_dataset=``/``eval_dataset=`` becomes the variable
that holds its ``.map(...)`` result, same split.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.recipe import TRAINER_PATTERN, Example, NotApplicable, Recipe

#: Trainer's positional parameters: model, args, data_collator, train_dataset, eval_dataset.
_POSITIONS = {3: "train_dataset", 4: "eval_dataset"}
_DATASET_ARGS = ("train_dataset", "eval_dataset")


class RawDatasetToTokenized(Recipe):
    id = "raw-dataset"
    category = "raw-dataset"
    title = "pass the tokenized datasets to Trainer"
    nothing_to_do = "no Trainer dataset argument has a tokenized counterpart"

    examples = (
        Example(
            before=(
                "from transformers import Trainer\n"
                "tokenized = raw.map(tok, batched=True)\n"
                "trainer = Trainer(model, args, train_dataset=raw['train'],"
                " eval_dataset=raw['test'])  # keep\n"
            ),
            after=(
                "from transformers import Trainer\n"
                "tokenized = raw.map(tok, batched=True)\n"
                "trainer = Trainer(\n"
                "    model,\n"
                "    args,\n"
                "    train_dataset=tokenized['train'],\n"
                "    eval_dataset=tokenized['test'],\n"
                ")  # keep\n"
            ),
        ),
        Example(  # alias, plain variables, positional datasets
            before=(
                "import transformers as tr\n"
                "train_tok = train_raw.map(fn)\n"
                "t = tr.Trainer(m, a, None, train_raw)\n"
            ),
            after=(
                "import transformers as tr\n"
                "train_tok = train_raw.map(fn)\n"
                "t = tr.Trainer(m, a, None, train_tok)\n"
            ),
        ),
        Example(  # already tokenized
            before=(
                "from transformers import Trainer\n"
                "tokenized = raw.map(tok, batched=True)\n"
                "Trainer(model, args, train_dataset=tokenized['train'])\n"
            ),
        ),
        Example(  # not transformers' Trainer
            before=(
                "from mylib import Trainer\n"
                "tokenized = raw.map(tok, batched=True)\n"
                "Trainer(model, args, train_dataset=raw['train'])\n"
            ),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self.mapped: dict[str, str] = {}
        for assign in m.findall(tree, m.Assign(
            targets=[m.AssignTarget(target=m.Name())],
            value=m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("map"))),
        )):
            assert isinstance(assign, cst.Assign)
            target = assign.targets[0].target
            call = assign.value
            assert isinstance(target, cst.Name) and isinstance(call, cst.Call)
            assert isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
            if call.func.value.value != target.value:
                self.mapped[call.func.value.value] = target.value
        if not self.mapped:
            raise NotApplicable("no variable holds a .map(...) result of another dataset")
        return super().transform_module_impl(tree)

    def _swap(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        base = expr.value if isinstance(expr, cst.Subscript) else expr
        if not isinstance(base, cst.Name) or base.value not in self.mapped:
            return None
        new_base = base.with_changes(value=self.mapped[base.value])
        return expr.with_changes(value=new_base) if isinstance(expr, cst.Subscript) else new_base

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, TRAINER_PATTERN):
            return updated_node
        args = list(updated_node.args)
        for i, arg in enumerate(args):
            name = arg.keyword.value if arg.keyword is not None else _POSITIONS.get(i)
            if name not in _DATASET_ARGS or arg.star:
                continue
            swapped = self._swap(arg.value)
            if swapped is not None:
                args[i] = arg.with_changes(value=swapped)
                code = cst.Module([]).code_for_node
                self.changed(original_node, f"{name}={code(arg.value)} -> {code(swapped)}")
        return updated_node.with_changes(args=args)

    def summary(self) -> str:
        return f"{self.title} ({', '.join(self.edits)})"
