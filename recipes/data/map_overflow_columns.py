"""map-changes-row-count: a batched map returns more rows than it gets and keeps the input
columns.

A tokenizer called with ``return_overflowing_tokens=True`` cuts each long document into
several windows, so the batched map function returns more rows than its batch had; the
map keeps the input columns (no ``remove_columns``), which still hold one row per
document, and Arrow refuses the table ("Column 4 named input_ids expected length 1000 but
got length 2903"). The facts at the failure show the map keeping its columns. Fix, as the
course does for question answering (chapter 7): in the map function, the tokenizer's
``overflow_to_sample_mapping`` says which document each window comes from, and every input
column the tokenizer did not produce is carried through it, so each window keeps its
document's label::

    encoded = tokenizer(batch["text"], ..., return_overflowing_tokens=True)
    sample_map = encoded.pop("overflow_to_sample_mapping")
    for key, values in batch.items():
        if key not in encoded:
            encoded[key] = [values[i] for i in sample_map]
    return encoded
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.categories.catalogue.data import map_kept_columns
from autofix.toolkit import Example, NotApplicable, Recipe, find, keyword
from autofix.toolkit.facts import failure_of
from autofix.types import ExceptionInfo, FrameFacts

from .._mapfn import map_function_names

_CARRY = ('{sample} = {enc}.pop("overflow_to_sample_mapping")\n'
          "for key, values in {batch}.items():\n"
          "    if key not in {enc}:\n"
          "        {enc}[key] = [values[i] for i in {sample}]\n")


def _failure(removed: bool = False) -> ExceptionInfo:
    value = {"kind": "list"} if removed else {"kind": "none", "value": None}
    return ExceptionInfo("ArrowInvalid", "Column 4 named input_ids expected length 1000 but "
                         "got length 2903", (), (), (FrameFacts(
                             "datasets/arrow_dataset.py", 1, "_map_single", False,
                             {"remove_columns": value}),))


_BEFORE = ("def chunk(batch):\n"
           "    return tokenizer(batch['text'], truncation=True, max_length=32, stride=8,\n"
           "                     return_overflowing_tokens=True)\n\n\n"
           "train = docs.map(chunk, batched=True)\n")


def _overflows(call: cst.BaseExpression | None) -> bool:
    arg = keyword(call, "return_overflowing_tokens") if isinstance(call, cst.Call) else None
    return arg is not None and m.matches(arg.value, m.Name("True"))


class CarryColumnsThroughWindows(Recipe):
    id = "map-overflow-columns"
    category = "map-changes-row-count"
    title = "carry the input columns through overflow_to_sample_mapping in the map function"
    requires_words = (("return_overflowing_tokens",),)
    nothing_to_do = "no map function returning a tokenizer call with " \
                    "return_overflowing_tokens=True"

    examples = (
        Example(
            before=_BEFORE,
            after="def chunk(batch):\n"
                  "    encoded = tokenizer(batch['text'], truncation=True, max_length=32, "
                  "stride=8,\n"
                  "                        return_overflowing_tokens=True)\n"
                  '    sample_map = encoded.pop("overflow_to_sample_mapping")\n'
                  "    for key, values in batch.items():\n"
                  "        if key not in encoded:\n"
                  "            encoded[key] = [values[i] for i in sample_map]\n"
                  "    return encoded\n\n\n"
                  "train = docs.map(chunk, batched=True)\n",
            failure=_failure(),
        ),
        Example(  # the map removes its columns: another fault
            before=_BEFORE, failure=_failure(removed=True),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        failure = failure_of(self.rc)
        if failure is None or map_kept_columns(failure) is not True:
            raise NotApplicable("the facts at the failure show no map keeping its columns")
        self.targets = map_function_names(tree)
        if "sample_map" in {cst.ensure_type(n, cst.Name).value for n in find(tree, m.Name())}:
            raise NotApplicable("the module already names a sample_map")
        return super().transform_module_impl(tree)

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        params = updated_node.params.params
        if original_node.name.value not in self.targets or not params \
                or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        batch = params[0].name.value
        body = list(updated_node.body.body)
        last = body[-1] if body else None
        stmt = last.body[0] if isinstance(last, cst.SimpleStatementLine) \
            and len(last.body) == 1 else None
        if not isinstance(stmt, cst.Return) or not _overflows(stmt.value):
            return updated_node
        assert stmt.value is not None
        assign = cst.SimpleStatementLine([cst.Assign(
            [cst.AssignTarget(cst.Name("encoded"))], stmt.value)])
        carried = cst.parse_module(_CARRY.format(sample="sample_map", enc="encoded",
                                                 batch=batch)).body
        ret = cst.parse_statement("return encoded\n")
        self.changed(original_node, f"the columns of {batch} carried to each window through "
                                    "overflow_to_sample_mapping")
        return updated_node.with_changes(body=updated_node.body.with_changes(
            body=[*body[:-1], assign, *carried, ret]))
