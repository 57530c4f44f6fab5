"""The label-vs-head contracts checked before training (``run/child/label_contracts.py``)
and a fix group failed by the contract its recipe claims to restore (``Recipe.restores``).
No process and no training: the child's checks read stand-ins with the attributes
``Trainer``, a transformers model and a datasets ``Dataset`` have."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from autofix.loop.fixgroups import FixGroup
from autofix.run.child import label_contracts
from autofix.types import Diagnosis, ProbeReport, RunOutcome, RunResult


class Rows:
    """A datasets ``Dataset`` as the contracts read it: ``column_names``, ``unique``,
    ``select``, ``len`` and a column by name."""

    def __init__(self, **columns: list[Any]) -> None:
        self.columns = columns
        self.column_names = list(columns)

    def __len__(self) -> int:
        return len(next(iter(self.columns.values())))

    def __getitem__(self, name: str) -> list[Any]:
        return self.columns[name]

    def unique(self, name: str) -> list[Any]:
        return list(dict.fromkeys(self.columns[name]))

    def select(self, indices: range) -> Rows:
        return Rows(**{k: [v[i] for i in indices] for k, v in self.columns.items()})


def trainer(model_class: str, dataset: Rows, **config: Any) -> SimpleNamespace:
    model = type(model_class, (), {"config": SimpleNamespace(**config)})()
    return SimpleNamespace(model=model, train_dataset=dataset)


def test_binary_labels_on_a_one_output_head_break_the_contract() -> None:
    found = label_contracts.binary_on_one_output(trainer(
        "BertForSequenceClassification", Rows(label=[0, 1, 1, 0]), num_labels=1,
        problem_type=None))
    assert "num_labels=1" in found and "num_labels=2" in found


def test_a_regression_head_or_scores_or_two_outputs_keep_it() -> None:
    cases = [
        trainer("BertForSequenceClassification", Rows(label=[0, 1]), num_labels=1,
                problem_type="regression"),
        trainer("BertForSequenceClassification", Rows(label=[0.2, 0.9]), num_labels=1,
                problem_type=None),
        trainer("BertForSequenceClassification", Rows(label=[0, 1]), num_labels=2,
                problem_type=None),
        trainer("BertForTokenClassification", Rows(label=[0, 1]), num_labels=1,
                problem_type=None),
    ]
    assert [label_contracts.binary_on_one_output(t) for t in cases] == ["", "", "", ""]


def test_a_hand_loop_is_held_to_the_binary_head_contract(monkeypatch: Any) -> None:
    """A hand loop has no Trainer: its model and the DataLoader's dataset are checked (the
    course's chapter 3 section 4 loop with num_labels=1 trained silently as a regression)."""
    events: list[dict[str, Any]] = []
    monkeypatch.setattr(label_contracts, "emit", lambda kind, **f: events.append(f))
    head = trainer("BertForSequenceClassification", Rows(labels=[1, 0, 0, 1]), num_labels=1,
                   problem_type=None)
    assert label_contracts.check_loop(head.model, head.train_dataset) == 1
    assert events[0]["category"] == "binary-single-output-head"
    assert "column 'labels'" in events[0]["evidence"]
    scores = trainer("BertForSequenceClassification", Rows(labels=[0.0, 0.5, 1.0]),
                     num_labels=1, problem_type=None)
    assert label_contracts.check_loop(scores.model, scores.train_dataset) == 0
    assert label_contracts.check_loop(None, object()) == 0
    assert len(events) == 1
    # a forward on an inspected batch already set problem_type: the one it was built with
    head.model.config.problem_type = "regression"
    assert label_contracts.check_loop(head.model, head.train_dataset) == 0
    assert label_contracts.check_loop(head.model, head.train_dataset, None) == 1
    assert label_contracts.check_loop(head.model, head.train_dataset, "regression") == 0


def test_word_tags_shorter_than_their_tokens_are_misaligned() -> None:
    rows = Rows(input_ids=[[101, 7, 8, 9, 102], [101, 5, 102]], labels=[[0, 1, 0], [2]])
    found = label_contracts.misaligned_token_labels(trainer("BertForTokenClassification", rows))
    assert "2 of the first 2 training rows" in found and "3 labels for 5 tokens" in found


def test_aligned_token_labels_and_sequence_heads_are_not() -> None:
    aligned = Rows(input_ids=[[101, 7, 102], [101, 102]], labels=[[-100, 1, -100], [-100, -100]])
    assert label_contracts.misaligned_token_labels(
        trainer("BertForTokenClassification", aligned)) == ""
    short = Rows(input_ids=[[101, 7, 102]], labels=[[1]])
    assert label_contracts.misaligned_token_labels(
        trainer("BertForSequenceClassification", short)) == ""


def test_check_counts_what_fails_and_never_raises() -> None:
    assert label_contracts.check(SimpleNamespace(model=None, train_dataset=None)) == 0
    broken = trainer("BertForSequenceClassification", Rows(label=[0, 1]), num_labels=1,
                     problem_type=None)
    assert label_contracts.check(broken) == 1


def failed_run() -> RunResult:
    return RunResult(RunOutcome.FAILED, 1, 0.5, "", 0, ProbeReport())


def diagnosis(category: str, line: int) -> Diagnosis:
    return Diagnosis(category=category, evidence=f"{category} at {line}", file="train.py",
                     line=line, line_text=f"line {line}", error_type="ValueError")


def test_a_fix_group_fails_when_the_contract_it_restores_is_broken_after_it() -> None:
    group = FixGroup(diagnosis("token-labels-not-padded", 30), failed_run(), 1, [], {}, {},
                     contracts=frozenset({"token-labels-misaligned"}))
    why = group.failed_by(failed_run(), diagnosis("token-labels-misaligned", 0))
    assert why.startswith("recipe") and "did not restore what it claims" in why
    assert group.failed_by(failed_run(), diagnosis("label-out-of-range", 12)) == ""
