"""The readers of the user's failing line that advice takes its words from."""

from __future__ import annotations

import pytest

from autofix.categories.script_terms import (
    argument_on,
    attribute_owner,
    called_names,
    column_reads,
    subscript_keys,
)

pytestmark = pytest.mark.fast


def test_argument_on_reads_keywords_positions_and_methods() -> None:
    assert argument_on("trainer = Trainer(model, train_dataset=splits['train'])",
                       "train_dataset") == "splits['train']"
    assert argument_on("loss = criterion(logits, y.float())", position=1) == "y.float()"
    assert argument_on("out = trainer.predict(test_ds)", position=0, method="predict") \
        == "test_ds"
    assert argument_on("out = predict(test_ds)", position=0, method="predict") == ""
    assert argument_on("not python (", "x") == ""


def test_a_wrapped_calls_first_line_is_read() -> None:
    line = 'enc = tok(list(chunk["premise"]), list(chunk["hypothesis"]), padding=True,'
    assert subscript_keys(line) == (("chunk", "premise"), ("chunk", "hypothesis"))
    assert called_names(line) == ("tok", "list", "list")


def test_attribute_owner_finds_the_object_read() -> None:
    assert attribute_owner("out.loss.backward()", "loss") == "out"
    assert attribute_owner('outputs["loss"].backward()', "loss") == "outputs"
    assert attribute_owner("self.model(x).loss.backward()", "loss") == "self.model(x)"
    assert attribute_owner("loss.backward()", "loss") == ""


def test_column_reads_take_subscripts_then_attributes() -> None:
    assert column_reads('enc = tok(df.text.tolist(), df["title"].tolist())') == (
        ("df", "title"), ("df", "text"))
