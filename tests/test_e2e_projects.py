"""A project split over modules (``sample_scripts/projects/nli_classifier``: ``train.py``
plus ``data.py`` and ``model.py``, a fault in each module) through the real CLI and stack:
each fix lands in the module where the fault is, the evidence shows the module's frames,
the verifying run imports the branch's modules, and the user's checkout is untouched."""

from __future__ import annotations

import subprocess
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, make_repo, run_autofix, snapshot, trailers

pytestmark = pytest.mark.e2e
PROJECT = SAMPLES / "projects" / "nli_classifier"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[git.Repo, subprocess.CompletedProcess[str], dict[str, object]]:
    files: dict[str, str | Path] = {p.name: p for p in PROJECT.glob("*.py")}
    repo = make_repo(tmp_path_factory.mktemp("project") / "nli", {
        **files, "data": SAMPLES / "data"})
    before = snapshot(repo)
    out = run_autofix(["train.py", "--branch", "fixes", "--max-steps", "5", "--timeout", "300"],
                      cwd=Path(str(repo.working_tree_dir)))
    return repo, out, before


def test_each_fix_lands_in_the_module_that_holds_the_fault(session: tuple[
        git.Repo, subprocess.CompletedProcess[str], dict[str, object]]) -> None:
    repo, out, before = session
    assert out.returncode == 0, out.stdout + out.stderr
    assert trailers(repo, "fixes", "main") == ["map-return-tensors", "label-out-of-range"]
    touched = [sorted(c.stats.files) for c in reversed(list(repo.iter_commits("main..fixes")))]
    assert touched == [["data.py"], ["model.py"]]
    data = repo.git.show("fixes:data.py")
    assert "return_tensors" not in data and 'truncation=True)' in data
    assert "num_labels=" in repo.git.show("fixes:model.py").split("def build_model")[1]
    assert repo.git.show("fixes:train.py") == (PROJECT / "train.py").read_text().rstrip("\n")
    assert snapshot(repo) == before  # working tree, index, HEAD and branch untouched


def test_the_evidence_names_the_module_frames(session: tuple[
        git.Repo, subprocess.CompletedProcess[str], dict[str, object]]) -> None:
    repo, _, _ = session
    first = str(list(repo.iter_commits("main..fixes"))[-1].message)
    assert "at data.py:" in first
    assert "data.py:" in first.split("Key traceback lines:")[1].split("Change:")[0]
    assert "in tokenize:" in first and "train.py:" in first
