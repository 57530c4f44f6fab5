"""The progress lines through the real CLI (issue 41): every number agrees with the others
and with the script. The script's length is the probe's reading of the real objects (the
training DataLoader's length x the epoch loop's range; Trainer's ``max_steps``), never a
progress bar the script prints (a pass over 103 rows, an evaluation of 10 batches)."""

from __future__ import annotations

import re
import subprocess

import pytest

from .conftest import TEST_SCRIPTS, make_repo, run_autofix

pytestmark = pytest.mark.e2e

SCRIPTS = TEST_SCRIPTS / "progress"


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, subprocess.CompletedProcess[str]]:
    """One dry run of each script (off a terminal: a line every 10 steps)."""
    root = tmp_path_factory.mktemp("progress") / "repo"
    make_repo(root, {p.name: p for p in SCRIPTS.glob("*.py")})
    return {name: run_autofix([name, "--dry-run"], root)
            for name in ("hand_loop.py", "trainer_epochs.py")}


def step_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [ln for ln in done.stdout.splitlines() if re.match(r"run 1: step \d+, ", ln)]


def test_a_hand_loop_of_3_epochs_of_30_batches_is_90_steps(
        sessions: dict[str, subprocess.CompletedProcess[str]]) -> None:
    done = sessions["hand_loop.py"]
    assert done.returncode == 0, done.stdout + done.stderr
    lines = step_lines(done)
    assert [int(ln.split()[3].rstrip(",")) for ln in lines] == [10, 20, 30, 40, 50, 60]
    for line in lines:
        assert line.endswith(", stopping at step 60 of the script's 90"), line
    assert "run 1: hand_loop.py: running the script, stopping at step 60" in done.stdout
    assert "103" not in "\n".join(lines) and "script's end" not in done.stdout
    assert "run 1  trains  60 steps" in done.stdout


def test_a_trainer_of_2_epochs_of_20_batches_ends_at_step_40(
        sessions: dict[str, subprocess.CompletedProcess[str]]) -> None:
    done = sessions["trainer_epochs.py"]
    assert done.returncode == 0, done.stdout + done.stderr
    lines = step_lines(done)
    assert [int(ln.split()[3].rstrip(",")) for ln in lines] == [10, 20, 30, 40]
    for line in lines:
        assert line.endswith(", to the script's end at step 40 (budget 60)"), line
    assert "of the script's" not in done.stdout and "at step 10 (" not in done.stdout
    assert "run 1  trained  40 steps" in done.stdout  # ran to its end, training

