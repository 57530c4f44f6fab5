"""Recipes and categories from outside: packages registered under the entry-point group
``autofix.recipes``.

A plugin distribution declares, in its ``pyproject.toml``::

    [project.entry-points."autofix.recipes"]
    teacher = "teacher_recipes"          # a module

The module's :class:`~autofix.toolkit.recipe.Recipe` subclasses (defined in it, names not starting
with ``_``) become recipes, each with its own examples (run by the same generic test as
the in-tree ones), and its module-level ``CATEGORIES`` (a tuple of
:class:`~autofix.categories.Category`) new fault categories. A plugin that fails to
import, or whose recipe breaks the contract (no id, an id or category id already taken,
an unknown category, no fix example and no leave-alone example), is skipped whole and
reported in :attr:`Plugins.problems`; loading never raises.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points

from autofix.categories import (
    Category,
    all_categories,
    drop_plugin_categories,
    register_category,
)
from autofix.categories.registry import valid_id
from autofix.toolkit.recipe import Recipe

GROUP = "autofix.recipes"


@dataclass(frozen=True)
class Plugin:
    """One loaded entry point: its name, ``dist version`` origin, recipes and categories."""

    name: str
    origin: str
    recipes: tuple[type[Recipe], ...]
    categories: tuple[Category, ...]


@dataclass(frozen=True)
class Plugins:
    """Every plugin that loaded, and one line per plugin that was skipped (and why)."""

    loaded: tuple[Plugin, ...] = ()
    problems: tuple[str, ...] = ()

    def recipes(self) -> tuple[type[Recipe], ...]:
        return tuple(r for p in self.loaded for r in p.recipes)

    def categories(self) -> tuple[Category, ...]:
        return tuple(c for p in self.loaded for c in p.categories)

    def origin(self, recipe: type[Recipe]) -> str:
        """``"dist 1.0 (entry point name)"`` for a plugin recipe, ``""`` otherwise."""
        return next((f"{p.origin} ({p.name})" for p in self.loaded if recipe in p.recipes), "")


def _origin(ep: EntryPoint) -> str:
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist is not None else ep.value


def _load_one(ep: EntryPoint, taken_recipes: set[str], taken_categories: set[str]) -> Plugin:
    """Load ``ep``; raises ``ValueError`` (or whatever the import raises) when broken."""
    module = ep.load()
    recipes = tuple(
        obj for name, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, Recipe) and obj is not Recipe and not name.startswith("_")
        and obj.__module__ == getattr(module, "__name__", None))
    categories = tuple(getattr(module, "CATEGORIES", ()))
    if not recipes and not categories:
        raise ValueError("defines no Recipe subclass and no CATEGORIES")
    for i, category in enumerate(categories):
        if not isinstance(category, Category):
            raise ValueError(f"CATEGORIES holds {category!r}, not a Category")
        if not valid_id(category.id):
            raise ValueError(f"category id {category.id!r} must be lower-case words joined "
                             "by '-'")
        if category.id in taken_categories or category.id in {c.id for c in categories[:i]}:
            raise ValueError(f"category id {category.id!r} is already taken")
    known = taken_categories | {c.id for c in categories}
    for recipe in recipes:
        if not recipe.id or not recipe.category:
            raise ValueError(f"recipe class {recipe.__name__} has no id or category")
        if recipe.id in taken_recipes:
            raise ValueError(f"recipe id {recipe.id!r} is already taken")
        if recipe.category not in known:
            raise ValueError(f"recipe {recipe.id!r}: unknown category {recipe.category!r}")
        if not any(e.after is not None for e in recipe.examples) \
                or not any(e.after is None for e in recipe.examples):
            raise ValueError(f"recipe {recipe.id!r} needs a fix example and a leave-alone "
                             "example")
    return Plugin(ep.name, _origin(ep), recipes, categories)


@cache
def load_plugins(in_tree_recipe_ids: frozenset[str] = frozenset()) -> Plugins:
    """Load every ``autofix.recipes`` entry point once (in name order); never raises.

    ``in_tree_recipe_ids`` are the ids a plugin may not reuse.
    """
    loaded: list[Plugin] = []
    problems: list[str] = []
    drop_plugin_categories()  # loaded again: the registry holds the built-in ones only
    taken_recipes = set(in_tree_recipe_ids)
    taken_categories = {c.id for c in all_categories()}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.name, e.value)):
        try:
            plugin = _load_one(ep, taken_recipes, taken_categories)
        except Exception as exc:  # a broken plugin never stops autofix
            problems.append(f"plugin {ep.name!r} ({ep.value}) skipped: "
                            f"{type(exc).__name__}: {exc}")
            continue
        loaded.append(plugin)
        for category in plugin.categories:  # one registry for built-in and plugin categories
            register_category(category, origin=plugin.origin)
        taken_recipes |= {r.id for r in plugin.recipes}
        taken_categories |= {c.id for c in plugin.categories}
    return Plugins(tuple(loaded), tuple(problems))
