"""The language-model samples of ``sample_scripts/llm`` with a fault each, through the real
CLI and stack (TRL, transformers, the tiny Llama of ``scripts/make_tiny_llm.py``): each
session ends exit 0 with the fix on its branch, and the branch's last run trains. The LoRA
sample is ``test_e2e_llm.py``'s, the SFT instructions sample ``test_e2e_chance.py``'s (healthy)
and the pad-equals-eos loop ``test_e2e_llm_silent.py``'s; every seeded fault of the family
runs in ``benchmarks/bench_llm_samples.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import SAMPLES, make_repo, run_autofix, trailers

pytestmark = pytest.mark.e2e

LLM = SAMPLES / "llm"
SFT_CHAT_CALL = "    train_dataset=dataset,\n)\ntrainer.train()"


def _sft_chat_old_keywords() -> str:
    """sft_chat.py with TRL < 0.13's keywords on SFTTrainer: ``packing=False`` (now an
    SFTConfig field) and ``max_seq_length=128`` (now SFTConfig's ``max_length``, which the
    sample already sets to 128)."""
    source = (LLM / "sft_chat.py").read_text(encoding="utf-8")
    assert SFT_CHAT_CALL in source and "    max_length=128,\n" in source
    return source.replace(SFT_CHAT_CALL, "    train_dataset=dataset,\n    packing=False,\n"
                                         "    max_seq_length=128,\n)\ntrainer.train()")


CASES = {
    "sft_chat-old-keywords": (_sft_chat_old_keywords, ["api-drift", "api-drift"]),
    "clm_loop-padding-collator": (
        lambda: (LLM / "faults" / "padding-collator-no-labels.py").read_text(encoding="utf-8"),
        ["causal-lm-without-labels"]),
    "clm_loop-prompt-masked-labels": (
        lambda: (LLM / "faults" / "prompt-masked-labels-lm-collator.py").read_text(
            encoding="utf-8"),
        ["token-labels-not-padded"]),
    "dpo-beta-to-trainer": (
        lambda: (LLM / "faults" / "dpo-beta-to-trainer.py").read_text(encoding="utf-8"),
        ["api-drift", "api-drift"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_faulty_sample_is_fixed_and_its_branch_trains(
        case: str, tiny_llm: Path, tmp_path: Path) -> None:
    make, categories = CASES[case]
    repo = make_repo(tmp_path / "repo", {"train.py": make(), "data": LLM / "data"})
    out = run_autofix(["train.py", "--branch", "fixes", "--max-steps", "5", "--timeout",
                       "300", "--report", "report.json"], cwd=tmp_path / "repo",
                      env={"AUTOFIX_TINY_LLM": str(tiny_llm), "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads((tmp_path / "repo" / "report.json").read_text(encoding="utf-8"))
    assert report["status"] == "fixed" and report["trained"] is True
    assert trailers(repo, "fixes", "main") == categories
    last = report["runs"][-1]
    assert last["category"] == "" and len(last["steps"]) == 5
    assert all(s["loss"] is not None and s["loss"] > 0 for s in last["steps"])
    fixed = repo.git.show("fixes:train.py")
    if case == "sft_chat-old-keywords":
        trainer_call = fixed[fixed.index("SFTTrainer("):]
        assert "packing" not in trainer_call and "max_seq_length" not in trainer_call
        config_call = fixed[fixed.index("SFTConfig("):fixed.index("SFTTrainer(")]
        assert "packing=False" in config_call and "max_length=128" in config_call
    elif case == "dpo-beta-to-trainer":
        assert "processing_class=tokenizer" in fixed and "tokenizer=tokenizer" not in fixed
        config_call = fixed[fixed.index("DPOConfig("):fixed.index("DPOTrainer(")]
        assert "beta=0.1" in config_call
    elif case == "clm_loop-prompt-masked-labels":  # the prompt's -100 labels kept, padded
        assert "collator = DataCollatorForSeq2Seq(tokenizer)" in fixed
        assert "collator = DataCollatorForLanguageModeling(" not in fixed
    else:
        assert "DataCollatorForLanguageModeling(" in fixed and "mlm=False" in fixed
