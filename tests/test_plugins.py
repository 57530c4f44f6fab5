"""Recipes from outside: a plugin package registered under the ``autofix.recipes``
entry-point group (``tests/plugins/autofix_demo_plugin``), installed for the test as a
real distribution (its ``.dist-info`` on ``sys.path``; ``importlib.metadata`` finds it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib

from autofix.categories.tracebacks import parse_traceback
from autofix.loop.diagnosis import classify
from autofix.toolkit import discovery as registry
from autofix.toolkit import plugins as plugins_module

from .conftest import ROOT
from .test_recipes import test_example as run_example

PLUGIN = Path(__file__).parent / "plugins" / "autofix_demo_plugin"


def install(site: Path) -> Path:
    """Install the demo plugin into ``site`` the way pip lays it out: the package and a
    ``.dist-info`` with METADATA and entry_points.txt (from its pyproject.toml)."""
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    shutil.copytree(PLUGIN / "autofix_demo_plugin", site / "autofix_demo_plugin")
    info = site / f"autofix_demo_plugin-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\n"
                                   f"Version: {project['version']}\n")
    groups = project["entry-points"]
    lines = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
             for group, eps in groups.items()]
    (info / "entry_points.txt").write_text("\n".join(lines))
    return site


def _clear() -> None:
    plugins_module.load_plugins.cache_clear()
    registry.all_recipes.cache_clear()


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = install(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    _clear()
    yield site
    _clear()


def test_plugin_recipes_and_categories_are_registered(installed: Path) -> None:
    found = registry.plugins()
    assert [p.name for p in found.loaded] == ["demo"]
    assert found.loaded[0].origin == "autofix-demo-plugin 0.1.0"
    ids = [r.id for r in registry.all_recipes()]
    assert "demo-report-to-none" in ids and "raw-dataset" in ids
    assert "demo-incomplete" not in ids
    recipe = next(r for r in registry.all_recipes() if r.id == "demo-report-to-none")
    assert registry.origin(recipe) == "autofix-demo-plugin 0.1.0 (demo)"
    assert registry.recipes_for("demo-wandb-login") == (recipe,)
    for example in recipe.examples:  # the same generic test as the in-tree recipes
        run_example(recipe, example)


def test_broken_plugins_are_reported_and_skipped(installed: Path) -> None:
    problems = registry.plugins().problems
    assert len(problems) == 2
    assert problems[0].startswith("plugin 'broken' (autofix_demo_plugin.broken) skipped: "
                                  "ModuleNotFoundError")
    assert "plugin 'incomplete'" in problems[1] and "must leave unchanged" in problems[1]


def test_plugin_category_classifies_tracebacks(installed: Path) -> None:
    text = ('Traceback (most recent call last):\n  File "/u/t.py", line 3, in <module>\n'
            "    trainer.train()\nwandb.errors.errors.UsageError: api_key not configured "
            "(no-tty). call wandb.login(key=[your_api_key])\n")
    exc = parse_traceback(text)
    assert exc is not None
    assert classify(exc).id == "demo-wandb-login"


@pytest.mark.process
def test_recipes_command_lists_the_origin_and_warns(tmp_path: Path) -> None:
    site = install(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
           "COLUMNS": "250"}
    # a user's own recipes.py next to the script (first on sys.path under ``python -m``)
    # must not shadow autofix's recipes, which are installed as ``autofix_recipes``
    (tmp_path / "recipes.py").write_text("raise SystemExit('the user recipes.py was imported')\n")
    out = subprocess.run([sys.executable, "-m", "autofix", "recipes"], cwd=tmp_path,
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if "demo-report-to-none" in line)
    assert "autofix-demo-plugin 0.1.0 (demo)" in row
    assert "raw-dataset" in out.stdout
    assert "plugin 'broken'" in out.stderr and "skipped" in out.stderr


def test_no_plugins_installed_means_in_tree_only() -> None:
    _clear()
    assert registry.plugins().problems == ()
    assert all(registry.origin(r) == "autofix" for r in registry.all_recipes())
