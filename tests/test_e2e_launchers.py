"""Scripts started with torchrun / accelerate launch on 2 CPU processes (gloo).

The probe runs in every rank; the diagnosis uses the first rank that failed (not the
launcher's ChildFailedError summary) and the fix commit names it; the step budget stops
every rank at the same step.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from autofix.run.runner import RunSpec, run_script, teardown_failure
from autofix.settings import Settings
from autofix.types import ProbeReport, RunOutcome

from .conftest import TEST_SCRIPTS, run_autofix, snapshot, trailers

Repo = Callable[[dict[str, str | Path]], git.Repo]
pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # 2 gloo ranks each, about 40 s a test
DDP = TEST_SCRIPTS / "ddp"
ENV = {"OMP_NUM_THREADS": "1"}


def test_torchrun_ddp_loop_label_on_one_rank(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": DDP / "ddp_loop_labels.py"})
    root = Path(str(repo.working_tree_dir))
    before = snapshot(repo)
    done = run_autofix(["train.py", "--launcher", "torchrun", "--nproc-per-node", "2",
                        "--max-steps", "3", "--timeout", "400", "--report", "../r.json"],
                       root, timeout=1200, env=ENV)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-3000:]
    assert snapshot(repo) == before
    report = json.loads((root.parent / "r.json").read_text())
    assert [r["category"] for r in report["runs"]] == ["label-out-of-range", ""]
    assert report["runs"][0]["seconds"] < 300  # rank 0 in its collective was killed
    assert report["runs"][-1]["outcome"] == "budget"
    assert trailers(repo, "autofix/train", "main") == ["label-out-of-range"]
    message = str(repo.commit("autofix/train").message)
    assert "Autofix-Rank: 1 of 2" in message  # only rank 1's shard has class 2
    assert "Target 2 is out of bounds" in message and "ChildFailedError" not in message
    source = (repo.commit("autofix/train").tree / "train.py").data_stream.read().decode()
    assert "num_labels=3" in source


def test_accelerate_ddp_trainer_raw_dataset(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": DDP / "ddp_trainer_raw.py"})
    root = Path(str(repo.working_tree_dir))
    done = run_autofix(["train.py", "--launcher", "accelerate", "--nproc-per-node", "2",
                        "--max-steps", "3", "--timeout", "400", "--report", "../r.json"],
                       root, timeout=1200, env=ENV)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-3000:]
    report = json.loads((root.parent / "r.json").read_text())
    assert [r["category"] for r in report["runs"]] == ["raw-dataset", ""]
    assert report["runs"][-1]["outcome"] == "budget"
    assert "3 steps" in report["runs"][-1]["evidence"]  # rank 0's steps, not 2 x 3
    assert trailers(repo, "autofix/train", "main") == ["raw-dataset"]
    message = str(repo.commit("autofix/train").message)
    assert "Autofix-Rank: " in message and " of 2" in message
    source = (repo.commit("autofix/train").tree / "train.py").data_stream.read().decode()
    assert 'train_dataset=tokenized_datasets["train"]' in source


def test_unknown_launcher_is_a_usage_error(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": TEST_SCRIPTS / "clean.py"})
    done = run_autofix(["train.py", "--launcher", "mpirun"], Path(str(repo.working_tree_dir)))
    assert done.returncode == 2 and "'mpirun' is not one of 'torchrun', 'accelerate'" in done.stderr


def test_a_failure_after_every_rank_ended_is_set_aside(tmp_path: Path) -> None:
    """Both ranks' scripts end cleanly, then rank 1's process exits 134 at teardown: the
    launcher fails, the run is not the script's failure, and the run says why."""
    script = tmp_path / "train.py"
    script.write_text((DDP / "ddp_exit_after_end.py").read_text())
    settings = Settings(python=sys.executable, cwd=tmp_path, launcher="torchrun",
                        nproc_per_node=2, timeout=300, env=ENV)
    done = run_script(RunSpec(script, settings), script.read_text())
    assert done.returncode != 0, done.output_tail[-2000:]
    assert "sum 2" in done.output_tail
    assert done.probe.exits == {0: 0, 1: 0} and done.probe.exception is None
    assert done.outcome is RunOutcome.OK
    assert "after the script had ended cleanly in all 2 ranks" in done.teardown
    # a rank whose script did not end, or ended non-zero, is a failure as before
    assert teardown_failure(settings, 1, ProbeReport(exits={0: 0})) == ""
    assert teardown_failure(settings, 1, ProbeReport(exits={0: 0, 1: 1})) == ""
    assert teardown_failure(settings, 0, ProbeReport(exits={0: 0, 1: 0})) == ""
    assert teardown_failure(Settings(), 1, ProbeReport(exits={0: 0})) == ""
