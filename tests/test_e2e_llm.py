"""The language-model family through the real CLI and stack (TRL, PEFT, the tiny Llama of
``scripts/make_tiny_llm.py``): one session on the LoRA sample with two faults seeded (TRL's
bf16 default on a CPU, GPT-2's ``c_attn`` as LoRA target), fixed in two commits, and its
last run, 30 healthy steps, judged as a language model's with no finding. The samples
and faults of ``sample_scripts/llm`` run in the benchmark (too long for the suite)."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import git
import pytest

from .conftest import SAMPLES, make_repo, run_autofix, trailers

pytestmark = pytest.mark.e2e

LLM = SAMPLES / "llm"
HEALTHY_TARGETS = 'target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]'
BF16 = "    bf16=False,  # SFTConfig defaults to bf16=True, which fails on a machine without " \
       "a GPU\n"


@pytest.fixture(scope="module")
def lora_session(tiny_llm: Path, tmp_path_factory: pytest.TempPathFactory
                 ) -> tuple[git.Repo, subprocess.CompletedProcess[str], dict[str, Any]]:
    source = (LLM / "sft_lora.py").read_text(encoding="utf-8")
    assert HEALTHY_TARGETS in source and BF16 in source
    faulty = source.replace(HEALTHY_TARGETS, 'target_modules=["c_attn"]').replace(BF16, "")
    path = tmp_path_factory.mktemp("llm") / "repo"
    repo = make_repo(path, {"sft_lora.py": faulty, "data": LLM / "data"})
    out = run_autofix(["sft_lora.py", "--branch", "fixes", "--max-steps", "30", "--timeout",
                       "300", "--report", "report.json"], cwd=path,
                      env={"AUTOFIX_TINY_LLM": str(tiny_llm), "OMP_NUM_THREADS": "1"})
    report = json.loads((path / "report.json").read_text(encoding="utf-8"))
    return repo, out, report


def test_both_faults_fixed_each_from_its_facts(
        lora_session: tuple[git.Repo, subprocess.CompletedProcess[str], dict[str, Any]]
) -> None:
    repo, out, _ = lora_session
    assert out.returncode == 0, out.stdout + out.stderr
    assert trailers(repo, "fixes", "main") == ["training-args-conflict",
                                               "lora-target-modules-not-found"]
    fixed = repo.git.show("fixes:sft_lora.py")
    assert HEALTHY_TARGETS in fixed  # the model's own attention projections
    assert "bf16=False" in fixed  # TRL's default bf16=True, off where no bf16 GPU is


def test_the_healthy_run_is_judged_as_a_language_model(
        lora_session: tuple[git.Repo, subprocess.CompletedProcess[str], dict[str, Any]]
) -> None:
    _, _, report = lora_session
    assert report["status"] == "fixed"
    last = report["runs"][-1]
    assert last["chance_loss"] > 2 * math.log(2)  # a language model's level, not ln 2
    assert len(last["steps"]) == 30
    assert report["findings"] == []  # no "learning slowly" for a healthy LoRA run
