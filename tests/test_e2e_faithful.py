"""The probe never changes the failure (issue 23, item 6), through the real CLI and stack.

Two healthy scripts whose code fails only where autofix's own checks would run it early:
``early_eval_state.py`` (a callback formatting ``state.epoch``, ``None`` before training,
and a ROC AUC over an evaluation set sorted by label, whose first 32 rows hold one class)
and ``gradient_penalty.py`` (a ``compute_loss`` that needs the graph, which the preflight
forward check runs with gradients off). Both must end clean, no branch written, and the
first one's evaluation must have run as the script's own: at the step where the budget
stopped training, over the whole evaluation set, with the script's callback (it logs the
epoch it saw).

Cost: two sessions of one run each, side by side (``OMP_NUM_THREADS=1``), ``--max-steps 5``.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, TEST_SCRIPTS, make_repo, run_autofix

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SCRIPTS = ("early_eval_state.py", "gradient_penalty.py")


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, tuple[git.Repo, subprocess.CompletedProcess[str]]]:
    tmp = tmp_path_factory.mktemp("faithful")

    def one(script: str) -> tuple[git.Repo, subprocess.CompletedProcess[str]]:
        repo = make_repo(tmp / Path(script).stem, {
            script: TEST_SCRIPTS / "faithful" / script, "data": SAMPLES / "data"})
        out = run_autofix([script, "--branch", "fixes", "--max-steps", "5", "--timeout", "300"],
                          cwd=Path(str(repo.working_tree_dir)),
                          env={"OMP_NUM_THREADS": "1"})
        return repo, out

    with ThreadPoolExecutor(2) as pool:
        return dict(zip(SCRIPTS, pool.map(one, SCRIPTS), strict=True))


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_check_that_fails_for_a_reason_of_its_own_changes_nothing(
        sessions: dict[str, tuple[git.Repo, subprocess.CompletedProcess[str]]],
        script: str) -> None:
    repo, out = sessions[script]
    assert out.returncode == 0, out.stdout + out.stderr
    assert "clean: the script ran without a fault" in out.stdout
    assert "fixes" not in [h.name for h in repo.heads]


def test_the_evaluation_ran_as_the_scripts_own_at_the_budget(
        sessions: dict[str, tuple[git.Repo, subprocess.CompletedProcess[str]]]) -> None:
    repo, _ = sessions["early_eval_state.py"]
    log = (Path(str(repo.working_tree_dir)) / "evaluations.log").read_text().splitlines()
    assert log, "the script's callback never saw an evaluation"
    epoch = float(log[0].split("epoch ")[1].split(":")[0])
    auc = float(log[0].rsplit(" ", 1)[1])
    assert 0 < epoch <= 0.1  # at step 5 of 75 per epoch, not before training (epoch None)
    assert 0.0 <= auc <= 1.0  # over the whole evaluation set: every class present
