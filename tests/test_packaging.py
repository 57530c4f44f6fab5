"""The wheel holds every package: pyproject's explicit list matches the source folders, the
recipes' family folders (``recipes/<family>/``, installed as ``autofix_recipes.<family>``) too."""

from __future__ import annotations

import tomllib

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.fast


def test_every_package_of_autofix_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    folders = {".".join(p.parent.relative_to(ROOT).parts)
               for p in (ROOT / "autofix").rglob("__init__.py")}
    assert folders - listed == set(), "add these to [tool.setuptools] packages"
    assert config["package-dir"]["autofix_recipes"] == "recipes"
    recipes = {".".join(("autofix_recipes", *p.parent.relative_to(ROOT / "recipes").parts))
               for p in (ROOT / "recipes").rglob("__init__.py")}
    assert recipes - listed == set(), "add these recipe folders to [tool.setuptools] packages"
    assert listed - folders - recipes == set(), "pyproject lists packages that do not exist"
    assert len(recipes) > 1  # the family folders, under autofix_recipes itself
