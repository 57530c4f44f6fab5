"""Override drift through the real CLI and stack: ``sample_scripts/projects/weighted_trainer``
keeps its ``Trainer`` subclass and callback in ``trainers.py``, written for an older
transformers (``compute_loss`` without ``num_items_in_batch``, ``on_log`` without
``**kwargs``). The API check finds both before any run, from the installed library's own
calls, and the fixes land in ``trainers.py``; the one counted run trains on the fixed code.

Cost: two sessions, cold and warm (the API check's import of the libraries, one run of 5
steps each).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, make_repo, run_autofix, snapshot, trailers

pytestmark = pytest.mark.e2e
PROJECT = SAMPLES / "projects" / "weighted_trainer"
Session = tuple[git.Repo, subprocess.CompletedProcess[str], dict[str, object], dict[str, object],
                str]


@pytest.fixture(scope="module", params=["--cold", "--warm"])
def session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Session:
    """One session per mode: ``--warm`` runs the API check as a fork of the warm
    interpreter, before run 1 (on the libraries unpatched by the probe)."""
    files: dict[str, str | Path] = {p.name: p for p in PROJECT.glob("*.py")}
    repo = make_repo(tmp_path_factory.mktemp("drift") / "weighted", {
        **files, "data": SAMPLES / "data"})
    before = snapshot(repo)
    root = Path(str(repo.working_tree_dir))
    out = run_autofix(["train.py", "--branch", "fixes", "--max-steps", "5", "--timeout", "300",
                       "--report", "../report.json", request.param], cwd=root)
    report = json.loads((root.parent / "report.json").read_text())
    return repo, out, before, report, request.param


def test_overrides_get_the_arguments_the_library_passes(session: Session) -> None:
    repo, out, before, report, _ = session
    assert out.returncode == 0, out.stdout + out.stderr
    assert trailers(repo, "fixes", "main") == ["override-signature", "override-signature"]
    touched = {f for c in repo.iter_commits("main..fixes") for f in c.stats.files}
    assert touched == {"trainers.py"}
    fixed = repo.git.show("fixes:trainers.py")
    assert "def compute_loss(self, model, inputs, return_outputs=False, " \
           "num_items_in_batch=None):" in fixed
    assert "def on_log(self, args, state, control, logs=None, **kwargs):" in fixed
    assert repo.git.show("fixes:train.py") == (PROJECT / "train.py").read_text().rstrip("\n")
    assert snapshot(repo) == before


def test_found_before_any_run(session: Session) -> None:
    repo, _, _, report, mode = session
    messages = [str(c.message) for c in repo.iter_commits("main..fixes")]
    assert all("Before the first run" in m for m in messages)
    assert any("compute_loss() got an unexpected keyword argument 'num_items_in_batch'" in m
               for m in messages)
    assert report["status"] == "fixed"
    runs = report["runs"]
    assert isinstance(runs, list) and len(runs) == 1
    # warm: the check answered before run 1 started; cold: run 1 was stopped and restarted
    assert runs[0]["note"] == ("the API check found drift, 2 fixes committed before the "
                               "first run" if mode == "--warm" else
                               "restarted: the API check found drift, 2 fixes committed "
                               "before the first run"), runs[0]
