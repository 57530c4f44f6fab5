"""map-changes-row-count: a batched map that regroups rows and keeps the input columns.

``group_texts`` (the language-modelling examples' chunking: concatenate a batch's token
lists, cut them into blocks of ``block_size``) returns another number of rows than its
batch had; a map that keeps the input columns (no ``remove_columns``) still holds one row
per input in each of them, and Arrow refuses the table (``Column 1 named input_ids
expected length 64 but got length 88``, datasets 5.2). The facts at the failure show the
map keeping its columns. Fix, as the datasets docs say for a map that changes the row
count ("you need to remove the old columns"): ``remove_columns=<dataset>.column_names`` on
that map, so the table holds what the function returns. A function that cuts windows with
``return_overflowing_tokens`` is :mod:`recipes.map_overflow_columns`' (it carries each input
column to its windows); a ``DatasetDict`` receiver, whose ``column_names`` is a dict per
split, is left to the advice.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import libcst.matchers as m

from autofix.categories.catalogue.data import map_kept_columns
from autofix.toolkit import Example, NotApplicable, code, keyword
from autofix.toolkit.facts import failure_of
from autofix.toolkit.scope import PlannedEdits, append_kw
from autofix.toolkit.values import Values
from autofix.types import ExceptionInfo, Frame, FrameFacts


def _failure() -> ExceptionInfo:
    return ExceptionInfo("ArrowInvalid", "Column 1 named input_ids expected length 64 but "
                         "got length 88", (), (), (FrameFacts(
                             "datasets/arrow_dataset.py", 1, "_map_single", False,
                             {"remove_columns": {"kind": "none", "value": None}}),))


_GROUP = ("from datasets import Dataset\n"
          "raw = Dataset.from_dict({'text': texts})\n"
          "tokenized = raw.map(lambda b: tok(b['text']), batched=True)\n"
          "def group_texts(examples):\n"
          "    joined = {k: sum(examples[k], []) for k in examples if k != 'text'}\n"
          "    return {k: [t[i:i + 8] for i in range(0, len(t), 8)] for k, t in joined.items()}\n")

#: Calls whose result is a ``DatasetDict`` (one entry per split).
_DICT_CALLS = ("load_dataset", "DatasetDict", "train_test_split", "load_from_disk")


class RemoveColumnsOfRegroupingMap(PlannedEdits):
    id = "map-remove-columns"
    category = "map-changes-row-count"
    requires_words = (("map",),)
    requires_imports = ("datasets",)
    title = "remove the input columns of a map that changes the row count"
    nothing_to_do = "no batched map on the failing line to give remove_columns"

    examples = (
        Example(
            before=_GROUP + "lm = tokenized.map(group_texts, batched=True)\n",
            after=_GROUP + "lm = tokenized.map(group_texts, batched=True, "
                           "remove_columns=tokenized.column_names)\n",
            failure=_failure(), line=7,
        ),
        Example(  # a DatasetDict: its column_names is a dict per split, left to advice
            before=("from datasets import load_dataset\n"
                    "raw = load_dataset('json', data_files='x.json')\n"
                    "lm = raw.map(group_texts, batched=True)\n"),
            failure=_failure(), line=3,
        ),
        Example(  # windows cut by the tokenizer: recipes.map_overflow_columns carries them
            before=("from datasets import Dataset\n"
                    "def chunk(b):\n"
                    "    return tok(b['text'], return_overflowing_tokens=True)\n"
                    "docs = Dataset.from_dict(d)\n"
                    "train = docs.map(chunk, batched=True)\n"),
            failure=_failure(), line=5,
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        failure = failure_of(self.rc)
        if failure is None or map_kept_columns(failure) is not True:
            raise NotApplicable("the facts at the failure show no map keeping its columns")
        if "return_overflowing_tokens" in tree.code:
            raise NotApplicable("the map cuts windows with return_overflowing_tokens (the "
                                "map-overflow-columns recipe's)")
        lines = self._failing_lines(failure.exc.frames)
        for call in self.program.calls:
            func = call.func
            line = self.program.line(call)
            if not (isinstance(func, cst.Attribute) and func.attr.value == "map"
                    and line in lines) or keyword(call, "remove_columns"):
                continue
            receiver = func.value
            if not m.matches(receiver, m.Name() | m.Attribute(value=m.Name())):
                self.reason = f"{code(receiver)} is not a name to read column_names from"
                continue
            if self._is_dataset_dict(receiver, 0):
                self.reason = (f"{code(receiver)} is a DatasetDict: its column_names is a dict "
                               "per split")
                continue
            value = cst.parse_expression(f"{code(receiver)}.column_names")
            self.plan_edit(call, append_kw("remove_columns", value),
                           f"remove_columns={code(value)} on the map at line {line}")
            return

    def _failing_lines(self, frames: tuple[Frame, ...]) -> set[int]:
        """The lines of this file the traceback passes through (the diagnosis' line, and
        every frame of a file named like the script: the map call is an outer frame when
        the map function raised nothing itself)."""
        name = Path(str(self.rc.script)).name if self.rc.script else ""
        return {self.rc.diagnosis.line} | {f.line for f in frames
                                           if name and Path(f.file).name == name}

    def _is_dataset_dict(self, expr: cst.BaseExpression, depth: int) -> bool:
        """Some value of ``expr`` is a ``DatasetDict``: ``load_dataset(...)`` without
        ``split=`` (and the other :data:`_DICT_CALLS`), followed through ``.map`` and the
        other methods that return the same kind."""
        if depth > 6:
            return False
        for value in self.values.origins(expr):
            if not isinstance(value, cst.Call):
                continue
            func = value.func
            name = func.attr.value if isinstance(func, cst.Attribute) else \
                func.value if isinstance(func, cst.Name) else ""
            if name in _DICT_CALLS and keyword(value, "split") is None:
                return True
            if isinstance(func, cst.Attribute) and name in (
                    "map", "filter", "shuffle", "rename_column", "remove_columns",
                    "cast_column", "with_format") \
                    and self._is_dataset_dict(func.value, depth + 1):
                return True
        return False
