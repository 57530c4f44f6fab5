"""extra-batch-dimension: dataset items that already have a batch dimension.

A ``torch.utils.data.Dataset`` whose ``__getitem__`` tokenizes its one example with
``return_tensors="pt"`` returns tensors of shape (1, length); the ``DataLoader`` stacks them
to (batch, 1, length) and the model's embeddings fail ("too many values to unpack
(expected 2)"). The facts at the failure show it: the model got ``input_ids`` of three
dimensions, the second of size 1. Fix, in ``__getitem__``, right after the tokenizer's
result is assigned: ``encoding = {k: v.squeeze(0) for k, v in encoding.items()}`` (a
returned call is squeezed the same way), so each item is one row.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.categories.catalogue.values import extra_batch_dimension
from autofix.toolkit import Example, NotApplicable, Recipe, code, find, insert, keyword
from autofix.toolkit.facts import example_failure, failure_of
from autofix.types import ExceptionInfo


def _failure(dims: list[int]) -> ExceptionInfo:
    return example_failure(
        "ValueError", "too many values to unpack (expected 2)", user={},
        library={"input_ids": {"kind": "tensor", "dtype": "torch.int64", "shape": dims}},
        library_file="transformers/models/bert/modeling_bert.py", library_function="forward")


_CLASS = ("from torch.utils.data import Dataset\n"
          "class Pairs(Dataset):\n"
          "    def __getitem__(self, i):\n")


def _pt(call: cst.Call) -> bool:
    arg = keyword(call, "return_tensors")
    return arg is not None and isinstance(arg.value, cst.SimpleString) \
        and arg.value.evaluated_value == "pt"


def _squeezed(name: str) -> str:
    return f"{{k: v.squeeze(0) for k, v in {name}.items()}}"


class SqueezeItemTensors(Recipe):
    id = "squeeze-item-tensors"
    category = "extra-batch-dimension"
    title = "squeeze the batch dimension of each dataset item's tensors"
    requires_words = (("__getitem__",), ("return_tensors",))
    nothing_to_do = "no __getitem__ that tokenizes with return_tensors=\"pt\""

    examples = (
        Example(
            before=_CLASS + "        enc = self.tok(self.a[i], padding='max_length', "
                            "return_tensors='pt')\n"
                            "        item = {k: v for k, v in enc.items()}\n"
                            "        return item\n",
            after=_CLASS + "        enc = self.tok(self.a[i], padding='max_length', "
                           "return_tensors='pt')\n"
                           "        enc = {k: v.squeeze(0) for k, v in enc.items()}\n"
                           "        item = {k: v for k, v in enc.items()}\n"
                           "        return item\n",
            failure=_failure([16, 1, 64]),
        ),
        Example(  # the tokenizer's result returned as it is
            before=_CLASS + "        return self.tok(i, return_tensors='pt')\n",
            after=_CLASS + "        return {k: v.squeeze(0) for k, v in "
                           "self.tok(i, return_tensors='pt').items()}\n",
            failure=_failure([8, 1, 32]),
        ),
        Example(  # the model got 2-D ids: another fault
            before=_CLASS + "        return self.tok(self.a[i], return_tensors='pt')\n",
            failure=_failure([8, 32]),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        failure = failure_of(self.rc)
        if failure is None or extra_batch_dimension(failure) is not True:
            raise NotApplicable("the facts at the failure show no (batch, 1, length) inputs")
        self.anchors: list[tuple[cst.SimpleStatementLine, str]] = []
        self.returns: set[cst.Return] = set()
        for func in find(tree, m.FunctionDef(name=m.Name("__getitem__"))):
            for line in m.findall(func, m.SimpleStatementLine()):
                assert isinstance(line, cst.SimpleStatementLine)
                stmt = line.body[0] if len(line.body) == 1 else None
                if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 \
                        and isinstance(stmt.targets[0].target, cst.Name) \
                        and isinstance(stmt.value, cst.Call) and _pt(stmt.value):
                    self.anchors.append((line, stmt.targets[0].target.value))
                elif isinstance(stmt, cst.Return) and isinstance(stmt.value, cst.Call) \
                        and _pt(stmt.value):
                    self.returns.add(stmt)
        for line, name in self.anchors:
            text = f"{name} = {_squeezed(name)}"
            if text in code(tree):
                continue
            tree = insert.insert_statements(tree, line, [insert.parse_statement(text)])
            self.edits.append(f"{text} after the tokenizer call in __getitem__ (items "
                              "of one row, not (1, length))")
        if self.returns:
            tree = tree.visit(_SqueezeReturns(self.returns, self.edits))
        if not self.edits:
            raise NotApplicable(self.nothing_to_do)
        return tree


class _SqueezeReturns(cst.CSTTransformer):
    def __init__(self, returns: set[cst.Return], edits: list[str]) -> None:
        super().__init__()
        self.returns = returns
        self.edits = edits

    def leave_Return(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        if original_node not in self.returns or updated_node.value is None:
            return updated_node
        self.edits.append("each returned tensor squeezed to one row (squeeze(0))")
        value = cst.parse_expression(_squeezed("_"))
        assert isinstance(value, cst.DictComp)
        items = cst.Call(func=cst.Attribute(value=updated_node.value, attr=cst.Name("items")))
        for_in = value.for_in.with_changes(iter=items)
        return updated_node.with_changes(value=value.with_changes(for_in=for_in))
