"""Discovers the in-tree recipes and those of plugins (entry-point group ``autofix.recipes``).

The in-tree recipes live in the repository's ``recipes/`` folder (one module, one ``Recipe``
class), grouped in one subpackage per category family (``recipes/labels/`` holds the recipes
of the categories of ``autofix/categories/catalogue/labels.py``), and are installed as the
``autofix_recipes`` package (pyproject's ``package-dir``), a name that neither a user's
``recipes.py`` next to the script nor another distribution's ``recipes`` package can
shadow."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from functools import cache

import autofix_recipes
from autofix.categories import get_category, is_category
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
    """Every recipe class defined in a module of ``recipes/`` or of its family folders (a
    module at the top level is found too), sorted by the module's own name (its file name,
    whichever folder holds it; the dotted name breaks a tie). Modules and folders whose name
    starts with ``_`` hold shared helpers and are skipped."""
    found: list[type[Recipe]] = []
    for name in sorted(in_tree_modules(), key=lambda n: (n.rpartition(".")[2], n)):
        module = importlib.import_module(name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, Recipe) and obj is not Recipe and obj.__module__ == module.__name__:
                found.append(obj)
    return tuple(found)


def in_tree_modules() -> list[str]:
    """The dotted names of the recipe modules of ``autofix_recipes`` (its subpackages walked,
    the packages themselves and every ``_*`` module or package left out). A family folder
    that fails to import raises (``walk_packages`` alone would skip its recipes silently)."""
    prefix = autofix_recipes.__name__ + "."
    walked = pkgutil.walk_packages(autofix_recipes.__path__, prefix, onerror=_reraise)
    return [info.name for info in walked
            if not info.ispkg
            and not any(part.startswith("_") for part in info.name[len(prefix):].split("."))]


def _reraise(name: str) -> None:
    """``walk_packages``' error hook: the package ``name`` failed to import; raise why."""
    raise ImportError(f"recipe package {name} failed to import") from sys.exc_info()[1]


def recipes_for(category: str) -> tuple[type[Recipe], ...]:
    """The recipes that fix ``category``, in the order they are tried: the order the
    category declares (:attr:`Category.recipes <autofix.categories.Category.recipes>`),
    then any it does not name (its own, then those whose root cause shows with the same
    face, ``also_fixes``, each in :func:`all_recipes` order); empty when there is none."""
    own = tuple(r for r in all_recipes() if r.category == category)
    fixing = own + tuple(r for r in all_recipes() if category in r.also_fixes)
    declared = get_category(category).recipes if is_category(category) else ()
    rank = {recipe_id: i for i, recipe_id in enumerate(declared)}
    return tuple(sorted(fixing, key=lambda r: rank.get(r.id, len(rank))))
