"""dataset-column-object: a datasets ``Column`` where a list of values is needed.

On datasets >= 4, ``dataset["text"]`` is a lazy ``Column`` object, not a ``list[str]``;
the course's ``tokenizer(dataset["sentence1"], dataset["sentence2"])`` then fails with
"text input must be of type `str` ...". The facts at the failure show the ``Column`` the
tokenizer got. Fix: ``list(dataset["text"])`` for each column of a dataset given to a
tokenizer call (the failing one, and every call to a tokenizer the module builds).
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from autofix.categories.failure import kind
from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.scope import PlannedEdits, replace_with, string_value
from autofix.types import ExceptionInfo


def _failure(name: str = "raw", columns: tuple[str, ...] = ("premise", "hypothesis")
             ) -> ExceptionInfo:
    column = {"kind": "object", "type": "datasets.arrow_dataset.Column"}
    return example_failure(
        "ValueError", "text input must be of type `str` (single example), `list[str]`",
        user={name: {"kind": "dataset", "columns": list(columns)}},
        library={"text": column, "text_pair": column},
        library_file="transformers/tokenization_utils_base.py", library_function="__call__")


_TOK = ("from transformers import AutoTokenizer\n"
        "tok = AutoTokenizer.from_pretrained(ckpt)\n")


class ColumnToList(PlannedEdits):
    id = "column-to-list"
    category = "dataset-column-object"
    title = "give the tokenizer list(dataset[column]), not the lazy Column"
    nothing_to_do = "no dataset column given to a tokenizer"

    examples = (
        Example(
            before=_TOK + "enc = tok(raw['premise'], raw['hypothesis'], truncation=True)\n",
            after=_TOK + "enc = tok(list(raw['premise']), list(raw['hypothesis']), "
                         "truncation=True)\n",
            failure=_failure(), line=3,
        ),
        Example(  # not a column of the dataset the facts name
            before=_TOK + "enc = tok(batch['premise'], truncation=True)\n",
            failure=_failure(), line=3,
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = failure_of(self.rc)
        if failure is None:
            raise NotApplicable("the facts at the failure are missing")
        self.columns = {name: set(value.get("columns") or ())
                        for frame in failure.user_frames()
                        for name, value in frame.values.items() if kind(value) == "dataset"}
        if not self.columns:
            raise NotApplicable("the facts at the failure show no dataset variable")
        line = self.rc.diagnosis.line
        here = not self.rc.diagnosis.file or Path(self.rc.diagnosis.file) == self.rc.script
        for call in self.program.calls:
            if isinstance(call.func, cst.Name) and call.func.value in ("list", "tuple"):
                continue  # already listed
            failing = here and line and self.program.line(call) == line
            if failing or self.program.is_tokenizer(call.func):
                for arg in call.args:
                    self._listed(arg.value)

    def _listed(self, node: cst.BaseExpression) -> None:
        if not isinstance(node, cst.Subscript) or not isinstance(node.value, cst.Name) \
                or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index) \
                or node in self.plan:
            return
        column = string_value(node.slice[0].slice.value)
        if column is None or column not in self.columns.get(node.value.value, set()):
            return
        listed = cst.Call(func=cst.Name("list"), args=[cst.Arg(node)])
        self.plan_edit(node, replace_with(listed),
                       f"{code(listed)}: the column's values, not the lazy Column")
