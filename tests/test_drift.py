"""API drift, each rename run for real against the transformers version that wants it:
5.24 (this environment) wants the new names, 4.40 (``.venv-old``) the old ones."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from .conftest import run_autofix, trailers

Repo = Callable[[dict[str, str | Path]], git.Repo]
#: Real transformers runs; the 4.40 cases need ``.venv-old`` (marker ``old``).
pytestmark = pytest.mark.e2e

ARGS = ("import tempfile\n"
        "from transformers import TrainingArguments\n"
        "args = TrainingArguments(tempfile.mkdtemp(), {name}='epoch', report_to='none')\n"
        "print('arguments ok')\n")
TRAINER = ("import tempfile\n"
           "from transformers import BertConfig, BertForSequenceClassification, Trainer, "
           "TrainingArguments\n"
           "config = BertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1,\n"
           "                    num_attention_heads=2, intermediate_size=32)\n"
           "model = BertForSequenceClassification(config)\n"
           "args = TrainingArguments(tempfile.mkdtemp(), report_to='none')\n"
           "trainer = Trainer(model=model, args=args, {name}=None)\n"
           "print('trainer ok')\n")


def fix(scratch_repo: Repo, source: str, python: str) -> tuple[git.Repo, str, dict[str, object]]:
    repo = scratch_repo({"train.py": source})
    root = Path(str(repo.working_tree_dir))
    done = run_autofix(["train.py", "--branch", "fixes", "--python", python,
                        "--report", "../r.json"], root)
    report = json.loads((root.parent / "r.json").read_text())
    assert done.returncode == 0, done.stdout + done.stderr
    fixed = (repo.commit("fixes").tree / "train.py").data_stream.read().decode()
    return repo, fixed, report


@pytest.mark.parametrize(("old", "new", "env"), [
    ("evaluation_strategy", "eval_strategy", "v5"),
    pytest.param("eval_strategy", "evaluation_strategy", "old", marks=pytest.mark.old),
])
def test_eval_strategy_rename(scratch_repo: Repo, request: pytest.FixtureRequest, old: str,
                              new: str,
                              env: str) -> None:
    python = sys.executable if env == "v5" else request.getfixturevalue("old_python")
    repo, fixed, report = fix(scratch_repo, ARGS.format(name=old), python)
    assert f"{new}='epoch'" in fixed and f"{old}=" not in fixed
    assert trailers(repo, "fixes", "main") == ["api-drift"]
    # found before the first run (issue 10): the installed signature, no training run
    message = str(repo.commit("fixes").message)
    assert f"unexpected keyword argument '{old}'" in message
    assert "Before the first run" in message
    assert [r["outcome"] for r in report["runs"]] == ["ok"]


@pytest.mark.parametrize(("old", "new", "env"), [
    ("tokenizer", "processing_class", "v5"),
    pytest.param("processing_class", "tokenizer", "old", marks=pytest.mark.old),
])
def test_trainer_tokenizer_rename(scratch_repo: Repo, request: pytest.FixtureRequest, old: str,
                                  new: str,
                                  env: str) -> None:
    python = sys.executable if env == "v5" else request.getfixturevalue("old_python")
    repo, fixed, _ = fix(scratch_repo, TRAINER.format(name=old), python)
    assert f"{new}=None" in fixed and f"{old}=None" not in fixed
    assert trailers(repo, "fixes", "main") == ["api-drift"]


def test_adamw_import_moves_to_torch(scratch_repo: Repo) -> None:
    source = ("import torch\n"
              "from transformers import AdamW\n"
              "model = torch.nn.Linear(2, 2)\n"
              "optimizer = AdamW(model.parameters(), lr=5e-5, correct_bias=True)\n"
              "print('optimizer ok')\n")
    repo, fixed, report = fix(scratch_repo, source, sys.executable)
    assert "from torch.optim import AdamW" in fixed and "correct_bias" not in fixed
    message = str(repo.commit("fixes").message)
    assert "cannot import name 'AdamW' from 'transformers'" in message
    assert [r["outcome"] for r in report["runs"]] == ["ok"]


def test_load_metric_fix_that_cannot_import_evaluate_is_dropped(scratch_repo: Repo) -> None:
    """datasets 5 removed load_metric; the recipe moves it to evaluate.load, but this
    environment has no evaluate package: the next run fails on the very import the fix
    added, so the fix is taken back (issue 7) and no branch is left to merge."""
    repo = scratch_repo({"train.py": "from datasets import load_metric\n"
                                     "metric = load_metric('accuracy')\n"})
    root = Path(str(repo.working_tree_dir))
    done = run_autofix(["train.py", "--branch", "fixes", "--report", "../r.json"], root)
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((root.parent / "r.json").read_text())
    assert report["status"] == "gave_up" and report["fixes"] == []
    assert [d["recipe"] for d in report["dropped"]] == ["drift-load-metric"]
    assert "No module named 'evaluate'" in report["dropped"][0]["reason"]
    assert "fixes" not in repo.heads
    assert "merge:" not in done.stdout
