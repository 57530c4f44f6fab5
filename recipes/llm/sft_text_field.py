"""sft-text-field: SFTConfig's dataset_text_field names a column the rows do not have.

TRL's ``SFTTrainer`` tokenizes language-modeling rows from the column named by
``SFTConfig(dataset_text_field=...)`` (default ``"text"``); a name the rows lack fails
inside TRL's ``tokenize_fn`` as a bare ``KeyError: 'content'``. The facts at the failure
(``tokenize_fn``'s locals: the row and the field it read; the features of the dataset being
mapped) show the field missing and the columns there are. When exactly one column holds
strings, it is the only text SFTTrainer can train on: ``dataset_text_field`` is set to it
where the script writes the name (the keyword's string literal, or the constant it names).
Rows with several text columns, or none, are left to the advice (which column holds the
training text is the script's choice).
"""

from __future__ import annotations

import libcst as cst

from autofix.categories.catalogue.llm import string_columns, text_field
from autofix.toolkit import Example, NotApplicable, code, keyword, patterns
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.scope import PlannedEdits, replace_with, string_value
from autofix.toolkit.values import Values
from autofix.types import ExceptionInfo

FIELD = "dataset_text_field"


def _failure(field: str = "content", **features: str) -> ExceptionInfo:
    features = features or {"text": "Value('string')"}
    return example_failure(
        "KeyError", repr(field),
        user={"dataset": {"kind": "dataset", "columns": list(features), "num_rows": 200,
                          "features": features}},
        library={"example": {"kind": "mapping", "keys": list(features)},
                 FIELD: {"kind": "str", "value": field}},
        library_file="site-packages/trl/trainer/sft_trainer.py",
        library_function="tokenize_fn")


class SftTextField(PlannedEdits):
    id = "sft-text-field"
    category = "dataset-text-field-missing"
    title = "set SFTConfig's dataset_text_field to the rows' only text column"
    requires_words = ((FIELD,),)
    requires_imports = ("trl",)
    nothing_to_do = "no SFTConfig(dataset_text_field=...) string to change"

    examples = (
        Example(
            before=(
                "from trl import SFTConfig\n"
                "args = SFTConfig(output_dir='out', dataset_text_field='content')\n"
            ),
            after=(
                "from trl import SFTConfig\n"
                "args = SFTConfig(output_dir='out', dataset_text_field='text')\n"
            ),
            failure=_failure(),
        ),
        Example(  # a constant: changed where it is defined
            before=(
                "import trl\n"
                "FIELD = \"content\"\n"
                "args = trl.SFTConfig(output_dir='out', dataset_text_field=FIELD)\n"
            ),
            after=(
                "import trl\n"
                "FIELD = \"sentence\"\n"
                "args = trl.SFTConfig(output_dir='out', dataset_text_field=FIELD)\n"
            ),
            failure=_failure(sentence="Value('string')", label="Value('int64')"),
        ),
        Example(  # two text columns: which one trains is the script's choice (advice)
            before=(
                "from trl import SFTConfig\n"
                "args = SFTConfig(output_dir='out', dataset_text_field='content')\n"
            ),
            failure=_failure(question="Value('string')", answer="Value('string')"),
        ),
        Example(  # no facts: nothing guessed
            before=(
                "from trl import SFTConfig\n"
                "args = SFTConfig(output_dir='out', dataset_text_field='content')\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        failure = failure_of(self.rc)
        found = text_field(failure) if failure is not None else None
        if found is None:
            raise NotApplicable("the facts at the failure show no dataset_text_field read")
        name, keys, features = found
        texts = string_columns(features, keys)
        if name in keys or len(texts) != 1:
            raise NotApplicable(f"the rows have {len(texts)} text columns "
                                f"({', '.join(texts) or 'none'}): which one trains is the "
                                "script's choice")
        column = texts[0]
        for call in self.program.calls:
            if not self.is_qualified(call.func, patterns.TRL_CONFIG):
                continue
            arg = keyword(call, FIELD)
            if arg is None:
                continue
            sources = self.values.origins(arg.value)
            literal = sources[0] if len(sources) == 1 else None
            if not isinstance(literal, cst.SimpleString) or string_value(literal) != name:
                self.reason = f"{FIELD}={code(arg.value)} is not the string {name!r}"
                continue
            quote = literal.quote
            new = cst.SimpleString(f"{literal.prefix}{quote}{column}{quote}")
            self.plan_edit(literal, replace_with(new),
                           f"{FIELD}={column!r} (the rows' only text column; they have no "
                           f"{name!r})")
