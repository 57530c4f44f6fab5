"""The wheel holds every package: pyproject's explicit list matches the source folders."""

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
    assert listed - folders == {"autofix_recipes"}
    assert config["package-dir"]["autofix_recipes"] == "recipes"
