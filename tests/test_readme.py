"""The README's generated parts stay current."""

from __future__ import annotations

import re

from autofix.cli.listing import recipes_markdown

from .conftest import ROOT


def test_recipe_table_matches_the_recipe_classes() -> None:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- recipes:start -->\n(.*?)<!-- recipes:end -->", readme, re.S)
    assert block is not None
    assert block.group(1) == recipes_markdown(), "run: autofix recipes --markdown"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "```bash\nscripts/test.sh\n```" in readme
    assert "exec scripts/test.sh" in ci
