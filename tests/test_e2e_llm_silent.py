"""Language-model faults that raise nothing, through the real CLI and stack (torch,
transformers, TRL, the tiny Llama of ``scripts/make_tiny_llm.py``): a hand loop whose
``DataCollatorForLanguageModeling`` masks every end-of-text token because the pad token is
the end-of-text token (fixed: the tokenizer pads with its unknown token, and the end-of-text
tokens are scored again). The other silent faults (empty completions, completion_only_loss
on text rows) and their advice are unit-tested in ``test_llm_silent.py`` and run through
the CLI by ``benchmarks/bench_llm_samples.py``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import git
import pytest

from .conftest import SAMPLES, make_repo, run_autofix, trailers

pytestmark = pytest.mark.e2e

LLM = SAMPLES / "llm"
Session = tuple[git.Repo, subprocess.CompletedProcess[str], dict[str, Any]]


@pytest.fixture(scope="module")
def pad_eos(tiny_llm: Path, tmp_path_factory: pytest.TempPathFactory) -> Session:
    script = "pad-equals-eos-masks-eos.py"
    path = tmp_path_factory.mktemp("llm") / "repo"
    repo = make_repo(path, {script: LLM / "faults" / script, "data": LLM / "data"})
    out = run_autofix([script, "--branch", "fixes", "--max-steps", "5", "--timeout", "300",
                       "--report", "report.json"], cwd=path,
                      env={"AUTOFIX_TINY_LLM": str(tiny_llm), "OMP_NUM_THREADS": "1"})
    return repo, out, json.loads((path / "report.json").read_text(encoding="utf-8"))


def test_pad_equal_to_eos_is_found_before_training_and_fixed(pad_eos: Session) -> None:
    repo, out, report = pad_eos
    assert out.returncode == 0, out.stdout + out.stderr
    assert trailers(repo, "fixes", "main") == ["pad-token-is-eos"]
    first = report["runs"][0]
    assert first["category"] == "pad-token-is-eos" and not first["steps"]  # before step 1
    assert "16 real end-of-text tokens in input_ids and 0 in labels" in first["evidence"]
    fixed = repo.git.show("fixes:pad-equals-eos-masks-eos.py")
    assert "tokenizer.pad_token = tokenizer.unk_token\n" in fixed
    assert "tokenizer.eos_token\n" not in fixed.split("def tokenize")[0]
    assert report["status"] == "fixed" and len(report["runs"][-1]["steps"]) == 5
    assert report["findings"] == []

