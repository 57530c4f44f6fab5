"""A test split whose labels are all -1 (a placeholder) given to ``trainer.predict`` after a
healthy training (the kind of huggingface/datasets#5624), through the real CLI: the split
on the failing line is predicted without its label column, the branch's run trains and
predicts. A tiny BERT built from a config (hidden 32, 2 layers, MiniLM's tokenizer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import TEST_SCRIPTS, make_repo, run_autofix, trailers

pytestmark = pytest.mark.e2e


def test_the_predicted_split_drops_its_placeholder_labels(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo",
                     {"train.py": TEST_SCRIPTS / "placeholder_predict.py"})
    done = run_autofix(["train.py", "--branch", "fixes", "--max-steps", "5"],
                       tmp_path / "repo", timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "placeholder-labels" in out and "Target -1 is out of bounds" in out
    assert trailers(repo, "fixes", "HEAD") == ["placeholder-labels"]
    diff = [ln for ln in repo.git.diff("HEAD", "fixes").splitlines()
            if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert diff == ['-preds = trainer.predict(ds["test"]).predictions.argmax(-1)',
                    '+preds = trainer.predict(ds["test"].remove_columns("label"))'
                    '.predictions.argmax(-1)'], diff
