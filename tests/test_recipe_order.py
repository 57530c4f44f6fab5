"""The order in which a category's recipes are tried is declared by the category
(``Category.recipes``), not left to the alphabetical order of their module names:
``recipes_for`` follows the declaration, and every category fixed by several recipes
declares them all."""

from __future__ import annotations

import dataclasses

import pytest

from autofix.categories import all_categories, get_category
from autofix.toolkit import discovery
from autofix.toolkit.discovery import all_recipes, recipes_for


def fixing(category_id: str) -> set[str]:
    """The ids of the in-tree and plugin recipes that fix ``category_id``: its own, and
    those that fix it as well (``also_fixes``)."""
    return {r.id for r in all_recipes()
            if r.category == category_id or category_id in r.also_fixes}


def test_every_category_with_several_recipes_declares_their_order() -> None:
    undeclared = [f"{c.id}: declare recipes=({', '.join(map(repr, sorted(fixing(c.id))))}) "
                  "in the order they are to be tried"
                  for c in all_categories()
                  if len(fixing(c.id)) > 1 and set(c.recipes) != fixing(c.id)]
    assert undeclared == []


def test_a_declaration_names_each_recipe_of_its_category_once() -> None:
    for category in all_categories():
        assert len(set(category.recipes)) == len(category.recipes), category.id
        assert set(category.recipes) <= fixing(category.id), category.id


def test_recipes_are_tried_in_the_declared_order() -> None:
    declared = [c for c in all_categories() if len(c.recipes) > 1]
    assert len(declared) >= 14
    for category in declared:
        assert tuple(r.id for r in recipes_for(category.id)) == category.recipes
    assert [r.id for r in recipes_for("raw-dataset")] == ["raw-dataset", "map-returns-nothing"]


def test_the_declaration_decides_the_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """A category that declares its recipes in reverse gets them in reverse; one that
    names only the last gets it first and the others after it, in their usual order."""
    ragged = get_category("ragged-batch")
    usual = [r.id for r in recipes_for("ragged-batch")]
    backwards = dataclasses.replace(ragged, recipes=tuple(reversed(ragged.recipes)))
    monkeypatch.setattr(discovery, "get_category", lambda _: backwards)
    assert [r.id for r in recipes_for("ragged-batch")] == usual[::-1]
    last_first = dataclasses.replace(ragged, recipes=(usual[-1],))
    monkeypatch.setattr(discovery, "get_category", lambda _: last_first)
    assert [r.id for r in recipes_for("ragged-batch")] == [usual[-1], *usual[:-1]]


def test_an_unknown_category_has_no_recipes() -> None:
    assert recipes_for("no-such-category") == ()
