"""Every recipe's own examples, run generically (Fixit style), plus parse/idempotence checks."""

from __future__ import annotations

import libcst as cst
import pytest

from autofix.toolkit import Example, Recipe, apply_recipe, iter_examples
from autofix.toolkit.discovery import all_recipes, recipes_for
from autofix.types import RecipeStatus

CASES = list(iter_examples(all_recipes()))
EXPECTED_RECIPES = {"raw-dataset", "ragged-batch", "label-out-of-range", "ragged-batch-tf",
                    "label-column-name"}


def test_every_declared_example_is_collected() -> None:
    declared = sum(len(r.examples) for r in all_recipes())
    assert len(CASES) == declared
    assert declared >= 3 * len(all_recipes())


def test_required_recipes_are_registered_once() -> None:
    ids = [r.id for r in all_recipes()]
    assert EXPECTED_RECIPES <= set(ids)
    assert len(ids) == len(set(ids))
    assert [r.id for r in recipes_for("ragged-batch")] == [
        "ragged-batch", "ragged-batch-loader", "ragged-batch-set-collator", "ragged-batch-tf"]
    assert [r.id for r in recipes_for("raw-dataset")] == ["raw-dataset", "map-returns-nothing"]


def test_each_recipe_has_fix_and_leave_alone_examples() -> None:
    for recipe in all_recipes():
        assert any(e.after is not None for e in recipe.examples), recipe.id
        assert any(e.after is None for e in recipe.examples), recipe.id


@pytest.mark.parametrize(("recipe", "example"), CASES,
                         ids=[f"{r.id}-{i}" for i, (r, _) in enumerate(CASES)])
def test_example(recipe: type[Recipe], example: Example) -> None:
    outcome = apply_recipe(recipe, example.before, example.context(recipe.category))
    if example.after is None:
        assert outcome.status is RecipeStatus.NOT_APPLICABLE, outcome.source
        assert outcome.reason
        return
    assert outcome.status is RecipeStatus.APPLIED, outcome.reason
    assert outcome.source == example.after
    cst.parse_module(outcome.source)  # the output parses
    assert outcome.summary
    again = apply_recipe(recipe, outcome.source, example.context(recipe.category))
    assert again.status is RecipeStatus.NOT_APPLICABLE, f"not idempotent:\n{again.source}"


def test_unparsable_source_is_reported_not_raised() -> None:
    recipe = recipes_for("raw-dataset")[0]
    outcome = apply_recipe(recipe, "def f(:\n", Example("").context("raw-dataset"))
    assert outcome.status is RecipeStatus.NOT_APPLICABLE
    assert "does not parse" in outcome.reason
