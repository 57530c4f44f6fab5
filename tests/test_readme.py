"""The documentation's generated and executable parts stay current: the recipe table, the
test command CI runs, and the worked example of adding a category and its recipe."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

from autofix.cli.listing import recipes_markdown

from .conftest import ROOT

RECIPES_PAGE = ROOT / "docs" / "recipes.md"


def test_recipe_table_matches_the_recipe_classes() -> None:
    page = RECIPES_PAGE.read_text()
    block = re.search(r"<!-- recipes:start -->\n(.*?)<!-- recipes:end -->", page, re.S)
    assert block is not None
    assert block.group(1) == recipes_markdown(), "run: autofix recipes --markdown"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "```bash\nscripts/test.sh\n```" in readme
    assert "exec scripts/test.sh" in ci


def test_readme_is_a_page_for_users() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 350
    for diary in ("this session", "earlier session", "load average"):
        for path in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))):
            assert diary not in path.read_text().lower(), (diary, path.name)


def _example(marker: str) -> str:
    found = re.search(rf"<!-- example:{marker} -->\n```python\n(.*?)```", RECIPES_PAGE.read_text(),
                      re.S)
    assert found is not None, marker
    return found.group(1)


def test_the_worked_example_adds_a_category_and_a_recipe(tmp_path: Path) -> None:
    """The two code blocks of docs/recipes.md, run as a newcomer would: the category
    registered, the recipe module imported (its contract checked at class creation), every
    example applied as the engine applies recipes, twice (idempotent), and a saved
    traceback of the new category classified. In a subprocess: the new category must not
    stay in this process's registry."""
    (tmp_path / "docs_category.py").write_text(_example("category"))
    (tmp_path / "docs_recipe.py").write_text(_example("recipe"))
    check = textwrap.dedent("""
        import sys, inspect
        sys.path.insert(0, sys.argv[1])
        import docs_category  # registers the category before the recipe class is made
        import docs_recipe
        from autofix.toolkit import Recipe, apply_recipe
        from autofix.categories import get_category
        from autofix.types import Applied
        recipes = [c for _, c in inspect.getmembers(docs_recipe, inspect.isclass)
                   if issubclass(c, Recipe) and c.__module__ == "docs_recipe"]
        assert len(recipes) == 1, recipes
        recipe = recipes[0]
        category = get_category(recipe.category)
        ran = 0
        for example in recipe.examples:
            out = apply_recipe(recipe, example.before, example.context(recipe.category))
            if example.after is None:
                assert not isinstance(out, Applied), example.before
            else:
                assert isinstance(out, Applied) and out.source == example.after, out
                again = apply_recipe(recipe, out.source, example.context(recipe.category))
                assert not isinstance(again, Applied), "not idempotent"
            ran += 1
        print("examples", ran, "category", category.id, "recipe", recipe.id)
    """)
    out = subprocess.run([sys.executable, "-c", check, str(tmp_path)], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    ran = int(re.search(r"examples (\d+)", out.stdout).group(1))  # type: ignore[union-attr]
    assert ran >= 2 and "category " in out.stdout
