"""The error boundary (exit codes 2/3/130, saved traceback) and the recipe contract."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autofix.errors import EXIT_CRASH, EXIT_INTERRUPTED, EXIT_USAGE, GitError, classify_error
from autofix.toolkit import Example, Recipe, RecipeContractError

from .conftest import ROOT, TEST_SCRIPTS, make_repo, run_autofix


@pytest.mark.process
def test_unexpected_error_exits_3_with_a_saved_traceback(tmp_path: Path) -> None:
    """A corrupt object store (the script's tree object overwritten) is nothing autofix
    expects: exit 3, the message and the path of the saved traceback on stderr."""
    repo = make_repo(tmp_path / "repo", {"clean.py": TEST_SCRIPTS / "clean.py"})
    tree = repo.head.commit.tree.hexsha
    obj = Path(repo.git_dir) / "objects" / tree[:2] / tree[2:]
    obj.chmod(0o644)
    obj.write_bytes(b"garbage")
    logs = tmp_path / "logs"
    done = run_autofix(["clean.py", "--report", "../r.json"], tmp_path / "repo",
                       env={"AUTOFIX_LOG_DIR": str(logs)})
    assert done.returncode == EXIT_CRASH, done.stdout + done.stderr
    err = " ".join(done.stderr.split())
    assert "autofix crashed (a bug in autofix)" in err
    found = re.search(r"the traceback is saved in (\S+\.log)", err)
    assert found is not None, err
    log = Path(found.group(1))
    assert log.parent == logs and "Traceback (most recent call last)" in log.read_text()
    assert (tmp_path / "r.json").read_text().count('"status": "error"') == 1


def test_classify_error_maps_each_kind() -> None:
    assert classify_error(GitError("git failed: x")).code == EXIT_USAGE
    assert classify_error(KeyboardInterrupt()).code == EXIT_INTERRUPTED


def test_only_the_vcs_package_imports_git() -> None:
    for path in sorted((ROOT / "autofix").rglob("*.py")):
        if path.parent.name == "vcs":
            continue
        source = path.read_text()
        assert not re.search(r"^\s*(import git\b|from git(db)?\b)", source, re.M), path


def test_contract_rejects_a_bad_recipe_at_class_creation() -> None:
    with pytest.raises(RecipeContractError) as info:
        class Sloppy(Recipe):  # noqa: F841 - never created
            id = "Sloppy_Recipe"
            category = "no-such-category"
            examples = (Example("x = 1\n"),)
    message = str(info.value)
    assert "id 'Sloppy_Recipe' must be lower-case words" in message
    assert "category 'no-such-category' is not registered" in message
    assert "no title" in message and "no before/after example" in message


def test_contract_wants_the_id_to_name_the_module() -> None:
    namespace = {"__module__": "autofix_recipes.pad_things", "id": "ragged-batch-other",
                 "category": "ragged-batch", "title": "t",
                 "examples": (Example("a\n", "b\n"), Example("c\n"))}
    with pytest.raises(RecipeContractError, match="must equal its module's name"):
        type("Other", (Recipe,), namespace)
    namespace["id"] = "pad-things"
    assert type("PadThings", (Recipe,), namespace).id == "pad-things"


def test_every_registered_recipe_keeps_the_contract() -> None:
    from autofix.toolkit import contract_problems
    from autofix.toolkit.discovery import all_recipes

    assert {r.id: contract_problems(r) for r in all_recipes()} == \
        {r.id: [] for r in all_recipes()}
