"""Labels against the head on the real stack: an ``accelerate`` loop over a torch
``Dataset`` subclass whose head is sized by a module constant ``NUM_CLASSES = 2`` for 4
classes (corpus d66). No dataset facts reach the probe (a hand-read data frame); the class
count comes from the facts at the failure (the loss's target and the frame's integer
column), and the value is set where it is defined: the constant, not a literal at the
call. And the course's full training loop with a 1-output head on the class ids 0/1 (corpus
d93): nothing raises, the contract at the DataLoader's first iteration names it. One session
per script (a tiny BertConfig model, --max-steps 3)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, make_repo, run_autofix, trailers

SCRIPT = "d66_v_accelerate_num_classes_too_small.py"

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[git.Repo, subprocess.CompletedProcess[str]]:
    repo = make_repo(tmp_path_factory.mktemp("labels") / "d66",
                     {SCRIPT: SAMPLES / "corpus" / SCRIPT, "data": SAMPLES / "data"})
    out = run_autofix([SCRIPT, "--branch", "fixes", "--max-steps", "3", "--timeout", "300"],
                      cwd=Path(str(repo.working_tree_dir)))
    return repo, out


def test_the_constant_is_set_to_the_class_count_where_it_is_defined(
        session: tuple[git.Repo, subprocess.CompletedProcess[str]]) -> None:
    repo, out = session
    assert out.returncode == 0, out.stdout + out.stderr
    assert trailers(repo, "fixes", "main") == ["label-out-of-range"]
    fixed = repo.git.show(f"fixes:{SCRIPT}")
    assert "\nNUM_CLASSES = 4\n" in fixed
    assert "num_labels=NUM_CLASSES))" in fixed and "num_labels=4" not in fixed


BINARY = "d93_v_hand_loop_binary_one_output.py"


def test_a_hand_loop_regressing_class_ids_gets_a_two_output_head(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    repo = make_repo(tmp_path_factory.mktemp("labels") / "d93",
                     {BINARY: SAMPLES / "corpus" / BINARY, "data": SAMPLES / "data"})
    out = run_autofix([BINARY, "--branch", "fixes", "--max-steps", "3", "--timeout", "300"],
                      cwd=Path(str(repo.working_tree_dir)))
    assert out.returncode == 0, out.stdout + out.stderr
    assert trailers(repo, "fixes", "main") == ["binary-single-output-head"]
    fixed = repo.git.show(f"fixes:{BINARY}")
    assert "intermediate_size=64, num_labels=2)" in fixed and "num_labels=1)" not in fixed
    assert "labels 'labels'" not in out.stdout and "class ids 0" in out.stdout


def test_a_regression_the_script_asks_for_after_building_is_left_alone(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The same loop with ``model.config.problem_type = "regression"`` set after the model
    is built: MSE on 0/1 is what the script asks for, so no verdict and no commit."""
    folder = tmp_path_factory.mktemp("labels")
    script = folder / "src" / BINARY
    script.parent.mkdir()
    source = (SAMPLES / "corpus" / BINARY).read_text()
    built = "model = BertForSequenceClassification(config)\n"
    assert built in source
    script.write_text(source.replace(built, built + 'model.config.problem_type = "regression"\n'))
    repo = make_repo(folder / "d93-regression", {BINARY: script, "data": SAMPLES / "data"})
    out = run_autofix([BINARY, "--branch", "fixes", "--max-steps", "3", "--timeout", "300"],
                      cwd=Path(str(repo.working_tree_dir)))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "binary-single-output-head" not in out.stdout and "clean" in out.stdout
    assert "fixes" not in [h.name for h in repo.heads] or \
        trailers(repo, "fixes", "main") == []
