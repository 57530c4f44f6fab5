"""label-column-name: a label column asked for under the wrong name (``label``/``labels``).

Course (chapter 8, TensorFlow): ``to_tf_dataset(columns=["input_ids", "labels"])`` on a
dataset whose column is ``label`` fails with "Column labels not found in dataset!". Fix:
rename the dataset column right after the statement that last assigns the dataset, so
every later use (both splits) sees the name the script asks for; HF models also expect
``labels``. The existing column name comes from the probe (``to_tf_dataset``'s dataset).
"""

from __future__ import annotations

import re

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, Recipe, find, insert
from autofix.types import DatasetFacts, RecipeContext

_MISSING = re.compile(r"Column (\w+) not found in dataset")
#: The names people mix up, missing -> the one the data usually has.
_ALIASES = {"labels": ("label", "label_ids"), "label": ("labels",)}


def _facts(*columns: str) -> tuple[DatasetFacts, ...]:
    return (DatasetFacts("to_tf_dataset", columns, 8, "label", "int", None, 0, 2),)


def missing_and_existing(rc: RecipeContext) -> tuple[str, str]:
    """(column asked for, column the data has), from the error and the probe's facts.

    Raises :class:`NotApplicable` when the error names no column or no alias exists.
    """
    found = _MISSING.search(rc.diagnosis.evidence)
    if not found:
        raise NotApplicable("the error does not name a missing column")
    missing = found.group(1)
    columns = {c for d in rc.datasets for c in d.columns}
    for alias in _ALIASES.get(missing, ()):
        if alias in columns:
            return missing, alias
    raise NotApplicable(f"no column to rename to {missing!r} (columns seen: "
                        f"{', '.join(sorted(columns)) or 'none'})")


class RenameLabelColumn(Recipe):
    id = "label-column-name"
    category = "label-column-name"
    title = "rename the dataset's label column to the name the script asks for"

    examples = (
        Example(
            before=(
                "tokenized = raw.map(fn, batched=True)\n"
                "train = tokenized['train'].to_tf_dataset(columns=['input_ids', 'labels'])\n"
            ),
            after=(
                "tokenized = raw.map(fn, batched=True)\n"
                'tokenized = tokenized.rename_column("label", "labels")\n'
                "train = tokenized['train'].to_tf_dataset(columns=['input_ids', 'labels'])\n"
            ),
            datasets=_facts("premise", "label", "input_ids"),
            evidence="ValueError: Column labels not found in dataset!",
        ),
        Example(  # the column is really missing: nothing to rename
            before="train = ds.to_tf_dataset(columns=['input_ids', 'labels'])\n",
            datasets=_facts("premise", "input_ids"),
            evidence="ValueError: Column labels not found in dataset!",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        missing, existing = missing_and_existing(self.rc)
        calls = find(tree, m.Call(
            func=m.Attribute(attr=m.Name("to_tf_dataset")),
            args=[m.ZeroOrMore(), m.Arg(value=m.List(elements=[
                m.ZeroOrMore(), m.Element(m.SimpleString(f'"{missing}"')
                                          | m.SimpleString(f"'{missing}'")), m.ZeroOrMore()])),
                  m.ZeroOrMore()]))
        if not calls:
            raise NotApplicable(f"no to_tf_dataset(...) call asks for column {missing!r}")
        call = calls[0]
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
        base = call.func.value
        while isinstance(base, cst.Subscript):
            base = base.value
        if not isinstance(base, cst.Name):
            raise NotApplicable("to_tf_dataset is not called on a dataset variable")
        name = base.value
        rename = m.Call(func=m.Attribute(value=m.Name(name), attr=m.Name("rename_column")))
        if any(m.findall(stmt, rename) for stmt in insert.assignment_statements(self, base, name)):
            raise NotApplicable(f"{name} is already renamed before its use")
        self.summary_text = f'{name}.rename_column("{existing}", "{missing}")'
        try:
            new, self.first_line = insert.insert_after_last_assignment(
                self, tree, base, name, [insert.parse_statement(f"{name} = {self.summary_text}")])
        except insert.NoPlace as exc:
            raise NotApplicable(str(exc)) from None
        self.edits.append(self.summary_text)
        return new

    def summary(self) -> str:
        return f"rename the label column: {self.summary_text}"
