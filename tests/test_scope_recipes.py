"""Scope-aware recipes beyond their examples: a value given on the command line is reported
rather than patched; the advice text built from the probe's facts."""

from __future__ import annotations

from autofix.categories import get_category
from autofix.toolkit import apply_recipe
from autofix.types import (
    DatasetFacts,
    Diagnosis,
    ProbeReport,
    RecipeContext,
    RecipeStatus,
    TrainerFacts,
)
from autofix_recipes.labels.label_out_of_range import SetNumLabels

TRAIN = DatasetFacts("train", ("text", "label"), 240, "label", "int", None, 0, 2)
FACTS = (TrainerFacts("Trainer", "BertForSequenceClassification", 2, (TRAIN,)),)
ARGPARSE = (
    "import argparse\n"
    "from transformers import AutoModelForSequenceClassification as M\n"
    "p = argparse.ArgumentParser()\n"
    "p.add_argument('--num-labels', type=int, default=2)\n"
    "args = p.parse_args()\n"
    "M.from_pretrained(ckpt, num_labels=args.num_labels)\n"
)


def advice_for(diagnosis: Diagnosis, probe: ProbeReport) -> str:
    """The category's advice from the probe's facts ("" when it has none)."""
    category = get_category(diagnosis.category)
    return category.advice(probe) if category.advice else ""


def _context(args: tuple[str, ...]) -> RecipeContext:
    return RecipeContext(Diagnosis("label-out-of-range", "IndexError"), {"transformers": "5"},
                         FACTS, args=args)


def test_value_from_the_command_line_is_reported_with_the_argument_to_use() -> None:
    for args in (("--num-labels", "2"), ("--num-labels=2",)):
        outcome = apply_recipe(SetNumLabels, ARGPARSE, _context(args))
        assert outcome.status is RecipeStatus.NOT_APPLICABLE
        assert "command line (--num-labels 2)" in outcome.reason
        assert "run the script with --num-labels 3" in outcome.reason


def test_argparse_default_is_changed_when_the_command_line_does_not_set_it() -> None:
    outcome = apply_recipe(SetNumLabels, ARGPARSE, _context(("--epochs", "1")))
    assert outcome.status is RecipeStatus.APPLIED
    assert "default=3)" in outcome.source and "num_labels=args.num_labels" in outcome.source
    assert "the default of --num-labels" in outcome.summary


def test_advice_names_the_columns_trainer_received() -> None:
    raw = DatasetFacts("train", ("label", "text"), 240, "label", "int", None, 0, 2)
    probe = ProbeReport(trainers=[TrainerFacts("Trainer", "X", 3, (raw,))])
    text = advice_for(Diagnosis("raw-dataset", "ValueError"), probe)
    assert text.startswith("Trainer received columns [label, text] and no input_ids")
    assert "pass the tokenized dataset" in text


def test_advice_on_labels_counts_classes_and_spots_labels_from_one() -> None:
    probe = ProbeReport(trainers=list(FACTS))
    assert "num_labels=3" in advice_for(Diagnosis("label-out-of-range", "x"), probe)
    shifted = DatasetFacts("train", ("label",), 9, "label", "int", None, 1, 3)
    probe = ProbeReport(trainers=[TrainerFacts("Trainer", "X", 3, (shifted,))])
    assert "shift them to start at 0" in advice_for(Diagnosis("label-out-of-range", "x"), probe)
    assert advice_for(Diagnosis("unknown", "x"), ProbeReport()) == ""
