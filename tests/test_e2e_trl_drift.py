"""TRL API drift through the real CLI and stack, before any run: ``tests/scripts/trl_drift``
gives ``SFTTrainer`` the keywords TRL moved into ``SFTConfig`` (``dataset_text_field=``,
``max_seq_length=``, now ``max_length``) and ``DPOTrainer`` plain ``TrainingArguments``
(it reads ``DPOConfig``'s fields). The API check finds all three from the installed
signatures and dataclass fields; ``drift-keyword`` moves the keywords into the
configuration the trainer gets, ``drift-args-class`` builds the arguments with DPOConfig,
keeping TrainingArguments' defaults where DPOConfig's differ. The one counted run trains.

Cost: one session (the API check's import of TRL, one run of 3 steps on the tiny Llama of
``scripts/make_tiny_llm.py``).
"""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path
from typing import Any

import git
import pytest

from .conftest import make_repo, run_autofix, snapshot, trailers

pytestmark = pytest.mark.e2e
SCRIPT = Path(__file__).parent / "scripts" / "trl_drift" / "train.py"
Session = tuple[git.Repo, subprocess.CompletedProcess[str], dict[str, object], dict[str, Any]]


@pytest.fixture(scope="module")
def session(tiny_llm: Path, tmp_path_factory: pytest.TempPathFactory) -> Session:
    root = tmp_path_factory.mktemp("trl-drift") / "repo"
    repo = make_repo(root, {"train.py": SCRIPT})
    before = snapshot(repo)
    out = run_autofix(["train.py", "--branch", "fixes", "--max-steps", "3", "--timeout", "300",
                       "--report", "../report.json"], cwd=root,
                      env={"AUTOFIX_TINY_LLM": str(tiny_llm), "OMP_NUM_THREADS": "1"})
    report = json.loads((root.parent / "report.json").read_text())
    return repo, out, before, report


def _call(source: str, name: str) -> ast.Call:
    """The one call of ``name`` in ``source``."""
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == name]
    assert len(calls) == 1, (name, len(calls))
    return calls[0]


def _keywords(call: ast.Call) -> dict[str, str]:
    return {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg}


def test_keywords_move_into_the_config_and_the_args_get_their_class(session: Session) -> None:
    repo, out, before, report = session
    assert out.returncode == 0, out.stdout + out.stderr
    assert report["status"] == "fixed"
    assert trailers(repo, "fixes", "main") == ["api-drift", "api-drift",
                                               "args-class-mismatch"]
    fixed = repo.git.show("fixes:train.py")
    sft_config = _keywords(_call(fixed, "SFTConfig"))
    assert sft_config["dataset_text_field"] == "'note'" and sft_config["max_length"] == "32"
    assert "max_seq_length" not in sft_config
    assert not {"dataset_text_field", "max_seq_length"} & set(_keywords(_call(fixed,
                                                                              "SFTTrainer")))
    dpo = _keywords(_call(fixed, "DPOConfig"))  # the user's values, TrainingArguments' bf16
    assert dpo["learning_rate"] == "0.001" and dpo["max_steps"] == "3"
    assert dpo["bf16"] == "False"
    assert "dpo_args = DPOConfig(output_dir=tempfile.mkdtemp(), max_steps=3,\n" \
           "                     per_device_train_batch_size=8," in fixed  # realigned
    # the unused import went with the call
    assert "from transformers import AutoModelForCausalLM, AutoTokenizer\n" in fixed
    assert "from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer" in fixed
    assert snapshot(repo) == before


def test_found_before_any_run_and_the_run_trains(session: Session) -> None:
    repo, _, _, report = session
    messages = [str(c.message) for c in repo.iter_commits("main..fixes")]
    assert all("Before the first run" in m for m in messages)
    assert any("SFTTrainer.__init__() got an unexpected keyword argument 'max_seq_length'"
               in m for m in messages)
    runs = report["runs"]
    assert len(runs) == 1 and runs[0]["outcome"] == "budget" and not runs[0]["category"]
    assert [s["step"] for s in runs[0]["steps"]] == [1, 2, 3]
