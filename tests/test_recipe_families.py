"""The in-tree recipes sit in the family folder of their category: a recipe whose category is
defined in ``autofix/categories/catalogue/labels.py`` is ``recipes/labels/<module>.py``.
Discovery finds a recipe module anywhere under ``recipes/`` (one added at the top level
still runs); this test says where it belongs."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import sys
from pathlib import Path

import autofix.categories.catalogue as catalogue
import autofix_recipes
from autofix.categories.model import Category
from autofix.toolkit.discovery import in_tree_modules, in_tree_recipes

from .conftest import ROOT


def family_of_categories() -> dict[str, str]:
    """Each built-in category id -> the catalogue module (family) that defines it."""
    found: dict[str, str] = {}
    for info in pkgutil.iter_modules(catalogue.__path__):
        module = importlib.import_module(f"{catalogue.__name__}.{info.name}")
        for value in vars(module).values():
            for category in value if isinstance(value, tuple) else (value,):
                if isinstance(category, Category):
                    assert found.setdefault(category.id, info.name) == info.name, category.id
    return found


def test_every_built_in_category_has_one_family() -> None:
    assert set(family_of_categories()) == {c.id for c in catalogue.BUILT_IN}


def test_each_recipe_sits_in_its_categorys_family_folder() -> None:
    families = family_of_categories()
    misplaced = []
    for recipe in in_tree_recipes():
        path = Path(sys.modules[recipe.__module__].__file__ or "").relative_to(ROOT)
        want = Path("recipes", families[recipe.category], path.name)
        if path != want:
            misplaced.append(f"git mv {path} {want}  # {recipe.id}: category "
                             f"{recipe.category!r} is defined in catalogue/"
                             f"{families[recipe.category]}.py")
    assert misplaced == [], "move each recipe into its family folder:\n" + "\n".join(misplaced)


def test_each_family_folder_is_a_catalogue_family() -> None:
    folders = {info.name for info in pkgutil.iter_modules(autofix_recipes.__path__)
               if info.ispkg and not info.name.startswith("_")}
    assert folders <= set(family_of_categories().values())
    assert len(folders) > 1


def test_discovery_walks_the_family_folders_in_file_name_order() -> None:
    modules = in_tree_modules()
    assert "autofix_recipes.labels.label_out_of_range" in modules
    assert not any(m.rpartition(".")[2].startswith("_") for m in modules)  # helpers skipped
    names = [r.__module__.rpartition(".")[2] for r in in_tree_recipes()]
    assert names == sorted(names) and len(names) == len(set(names))
    assert len(in_tree_recipes()) == len(modules)  # one recipe per module


def family_imports() -> dict[str, set[str]]:
    """Each family folder -> the other family folders its modules import (relative
    ``from ..llm.lm_collator import`` or absolute ``autofix_recipes.llm...``)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "recipes").glob("*/*.py")):
        family = path.parent.name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            parts = (node.module or "").split(".")
            if node.level == 2:
                other = parts[0]
            elif node.level == 0 and parts[0] == "autofix_recipes" and len(parts) > 2:
                other = parts[1]
            else:
                continue
            if (ROOT / "recipes" / other / "__init__.py").exists() and other != family:
                found.setdefault(family, set()).add(other)
    return found


def test_no_family_folders_import_in_a_circle() -> None:
    """One family may take another's helpers (``reported`` takes ``llm``'s collator
    helpers), never back: a helper both need moves to the top of ``recipes/``."""
    graph = family_imports()
    assert graph.get("reported", set()) >= {"llm"}  # the reader sees real imports
    circles = []
    for start in sorted(graph):
        seen, todo = set(), list(graph[start])
        while todo:
            family = todo.pop()
            if family == start:
                circles.append(start)
                break
            if family not in seen:
                seen.add(family)
                todo += graph.get(family, ())
    assert circles == []
