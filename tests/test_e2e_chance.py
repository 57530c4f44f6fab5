"""The chance level by task through the real stack: a causal LM is judged against the
entropy of its scored tokens, not ln 2 (its config's ``num_labels``).

One session: the LLM family's healthy SFT sample (``sample_scripts/llm/sft_instructions.py``:
TRL's SFTTrainer, completion-only loss, the tiny Llama of ``scripts/make_tiny_llm.py``, 30
steps) under the real ``autofix`` CLI in a throwaway repo. Its loss falls from about 4.1
(above H) to about 2.6: judged against ln 2 = 0.693 it looked "learning slowly"; against
H = 3.02 (the unigram entropy of the 516 answer tokens an epoch scores) and its own start it
is learning: exit 0, status clean, no finding.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from .conftest import ROOT, SAMPLES, run_autofix, snapshot

Repo = Callable[[dict[str, str | Path]], git.Repo]
pytestmark = [pytest.mark.e2e]

LLM = SAMPLES / "llm"


def test_a_healthy_sft_run_is_judged_against_its_token_entropy(
        scratch_repo: Repo, tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_tiny_llm import build  # the model is built here: it reads the project's data

    tiny = build(tmp_path / "tiny-llm")
    repo = scratch_repo({"llm/sft_instructions.py": LLM / "sft_instructions.py",
                         "llm/data": LLM / "data"})
    root = Path(str(repo.working_tree_dir))
    before = snapshot(repo)
    done = run_autofix(["llm/sft_instructions.py", "--branch", "fixes",
                        "--report", "../report.json"], root,
                       env={"AUTOFIX_TINY_LLM": str(tiny), "OMP_NUM_THREADS": "1"})
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    report = json.loads((root.parent / "report.json").read_text())
    assert report["status"] == "clean" and report["fixes"] == [], out
    assert report["findings"] == [], report["findings"]
    assert snapshot(repo) == before
    (run,) = report["runs"]
    assert run["chance_label"] == "H"
    assert 2.8 < run["chance_loss"] < 3.3  # measured 3.022; ln 2 = 0.693, ln V = 6.844
    losses = [s["loss"] for s in run["steps"]]
    assert len(losses) == 30
    first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    assert first > run["chance_loss"] > last  # starts above H and falls under it
