"""Discovers the in-tree recipes and those of plugins (entry-point group ``autofix.recipes``).

The in-tree recipes live in the repository's ``recipes/`` folder (one module, one ``Recipe``
class) and are installed as the ``autofix_recipes`` package (pyproject's ``package-dir``), a
name that neither a user's ``recipes.py`` next to the script nor another distribution's
``recipes`` package can shadow."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import cache

import autofix_recipes
from autofix.toolkit.plugins import Plugins, load_plugins
from autofix.toolkit.recipe import Recipe


@cache
def all_recipes() -> tuple[type[Recipe], ...]:
    """Every recipe: the in-tree ones (sorted by module name), then the plugins' ones."""
    return in_tree_recipes() + plugins().recipes()


def plugins() -> Plugins:
    """The plugins registered under ``autofix.recipes`` (loaded once; broken ones are
    listed in ``problems``, never raised)."""
    return load_plugins(frozenset(r.id for r in in_tree_recipes()))


def origin(recipe: type[Recipe]) -> str:
    """Where ``recipe`` comes from: ``"autofix"`` (in-tree) or the plugin's distribution."""
    return plugins().origin(recipe) or "autofix"


@cache
def in_tree_recipes() -> tuple[type[Recipe], ...]:
    """Every recipe class defined in a module of ``recipes/``, sorted by module name."""
    found: list[type[Recipe]] = []
    for info in sorted(pkgutil.iter_modules(autofix_recipes.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"autofix_recipes.{info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, Recipe) and obj is not Recipe and obj.__module__ == module.__name__:
                found.append(obj)
    return tuple(found)


def recipes_for(category: str) -> tuple[type[Recipe], ...]:
    """The recipes that fix ``category``: its own first, then those whose root cause shows
    with the same face (``also_fixes``); empty when there is none."""
    own = tuple(r for r in all_recipes() if r.category == category)
    return own + tuple(r for r in all_recipes() if category in r.also_fixes)
