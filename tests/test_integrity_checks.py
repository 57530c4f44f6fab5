"""The child's checks of data and evaluation invariants (``autofix/run/child/{loss_inputs,
metric_inputs, label_maps, split_rows, label_masks}.py``) on real torch, numpy, pandas and
transformers objects, in this process: each check's verdict on the faulty value and on
its correct twin, and the ``invariant`` event it sends (no process, no training)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autofix.run.child import (
    events,
    invariants,
    label_maps,
    label_masks,
    loss_inputs,
    metric_inputs,
    split_rows,
)
from autofix.run.probe_events import read_probe

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
F = torch.nn.functional


@pytest.fixture
def sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The probe file the checks write to, with the checks' per-run state fresh."""
    probe = tmp_path / "probe.jsonl"
    monkeypatch.setattr(events, "PROBE_FILE", str(probe))
    monkeypatch.setattr(invariants.Sent, "keys", set())
    monkeypatch.setattr(loss_inputs.Seen, "calls", {})
    monkeypatch.setattr(loss_inputs.Seen, "layers", {})
    monkeypatch.setattr(label_maps.Seen, "maps", [])
    monkeypatch.setattr(label_maps.Seen, "pairs", set())
    monkeypatch.setattr(split_rows.Seen, "compared", set())
    monkeypatch.setattr(metric_inputs.Seen, "metrics_checked", False)
    yield probe


def invariant_events(probe: Path) -> list[dict[str, Any]]:
    if not probe.exists():
        return []
    return [e for e in map(json.loads, probe.read_text().splitlines())
            if e["event"] == "invariant"]


# -- a loss given probabilities ----------------------------------------------------------

def test_the_loss_input_is_traced_to_its_probability_layer() -> None:
    logits = torch.randn(8, 3, requires_grad=True)
    assert type(loss_inputs.origin(F.softmax(logits, dim=1).view(8, 3))).__name__ \
        == "SoftmaxBackward0"
    assert type(loss_inputs.origin(torch.sigmoid(logits).squeeze())).__name__ \
        == "SigmoidBackward0"
    assert type(loss_inputs.origin(F.log_softmax(logits, 1))).__name__ == "LogSoftmaxBackward0"
    assert loss_inputs.origin(logits.detach()) is None
    with torch.no_grad():
        assert loss_inputs.probability_rows(F.softmax(logits, 1), 1)
        assert not loss_inputs.probability_rows(logits, 1)
        assert not loss_inputs.probability_rows(torch.sigmoid(logits), 1)  # rows sum != 1


def test_cross_entropy_on_softmax_is_reported_once_with_the_layers_line(sent: Path) -> None:
    cross_entropy = loss_inputs._wrapped("cross_entropy", F.cross_entropy)
    softmax = loss_inputs._layer(torch.softmax)
    logits = torch.randn(8, 3, requires_grad=True)
    labels = torch.randint(0, 3, (8,))
    for _ in range(2):
        probs = softmax(logits, dim=-1)  # the layer, made on this line of the user's code
        cross_entropy(probs, labels)
    cross_entropy(F.log_softmax(logits, 1), labels)  # no fault: log_softmax is idempotent
    cross_entropy(logits, labels)
    found = invariant_events(sent)
    assert [e["kind"] for e in found] == ["probabilities-to-logit-loss"]
    event = found[0]
    assert event["file"] == __file__ and event["text"] == "cross_entropy(probs, labels)"
    assert event["facts"]["loss"] == "cross_entropy" and event["facts"]["layer"] == "softmax"
    assert event["facts"]["layer_at"]["text"].startswith("probs = softmax(logits, dim=-1)")
    report = read_probe(sent)  # the parent's reading: a finding, and the facts for recipes
    assert [f.kind for f in report.findings] == ["probabilities-to-logit-loss"]
    assert report.facts["invariants"][0]["line"] == event["line"]


def test_binary_cross_entropy_with_logits_on_sigmoid_outputs(sent: Path) -> None:
    bce = loss_inputs._wrapped("binary_cross_entropy_with_logits",
                               F.binary_cross_entropy_with_logits)
    scores = torch.randn(16, requires_grad=True)
    targets = torch.randint(0, 2, (16,)).float()
    bce(scores, targets)
    assert invariant_events(sent) == []
    bce(torch.sigmoid(scores), targets)
    assert [e["facts"]["layer"] for e in invariant_events(sent)] == ["sigmoid"]


# -- metric inputs -------------------------------------------------------------------------

def test_an_argmax_that_gives_no_class_id_per_row(monkeypatch: pytest.MonkeyPatch) -> None:
    logits = torch.randn(32, 3)
    what = metric_inputs._flat_or_batch_axis
    assert what(logits, None) == "flat"
    assert what(logits, -1) == what(logits, 1) == ""
    monkeypatch.setattr(metric_inputs.chance.Task, "width", 3)  # the loss saw 3 classes
    assert what(logits, 0) == "batch axis"
    assert what(logits.T, 0) == ""  # (classes, rows): axis 0 is the class axis
    assert what(torch.randn(1, 3), None) == ""  # one row: a flat index is that row's class
    assert what(np.zeros((4, 3)), None) == "flat"


def test_perfect_predictions_for_each_kind_of_labels() -> None:
    single = metric_inputs.perfect_predictions(np.zeros((4, 3), np.float32), np.array([2, 0, 1, 2]))
    assert single is not None and list(single.argmax(-1)) == [2, 0, 1, 2]
    tokens = np.array([[1, -100], [0, 2]])
    per_token = metric_inputs.perfect_predictions(np.zeros((2, 2, 3), np.float32), tokens)
    assert per_token is not None and per_token.argmax(-1)[1].tolist() == [0, 2]
    multi = metric_inputs.perfect_predictions(np.zeros((2, 3), np.float32),
                                              np.array([[1, 0, 1], [0, 0, 1]], np.float32))
    assert multi is not None and ((multi > 0) == np.array([[1, 0, 1], [0, 0, 1]])).all()
    assert metric_inputs.perfect_predictions(np.zeros((4, 1), np.float32),
                                             np.array([0.5, 1.5, 2.0, 3.0])) is None


class _EvalPrediction:
    """transformers' ``EvalPrediction`` as ``compute_metrics`` reads it."""

    def __init__(self, predictions: Any, label_ids: Any, **_: Any) -> None:
        self.predictions, self.label_ids = predictions, label_ids

    def __iter__(self) -> Iterator[Any]:
        return iter((self.predictions, self.label_ids))


def _flat_accuracy(prediction: Any) -> dict[str, float]:
    logits, labels = prediction
    return {"accuracy": float((np.argmax(logits) == labels).mean())}


def _accuracy(prediction: Any) -> dict[str, float]:
    logits, labels = prediction
    return {"accuracy": float((np.argmax(logits, axis=-1) == labels).mean())}


def test_compute_metrics_must_score_perfect_predictions_1(sent: Path) -> None:
    rng = np.random.default_rng(0)
    given = _EvalPrediction(rng.normal(size=(40, 3)).astype(np.float32),
                            rng.integers(0, 3, 40))
    metric_inputs.check_metrics(_accuracy, given, _accuracy(given))
    assert invariant_events(sent) == []
    metric_inputs.check_metrics(_flat_accuracy, given, _flat_accuracy(given))
    found = invariant_events(sent)
    assert [e["kind"] for e in found] == ["metric-on-flat-argmax"]
    assert found[0]["facts"]["form"] == "compute_metrics"
    assert found[0]["function"] == "_flat_accuracy" and found[0]["text"].startswith("def ")
    assert found[0]["facts"]["metrics"]["accuracy"][1] < 0.999


# -- label mappings -------------------------------------------------------------------------

def test_two_label_maps_disagree_only_on_shared_nested_labels() -> None:
    conflict = label_maps._conflict
    train = {"billing": 0, "shipping": 1, "technical": 2}
    assert conflict(train, {"billing": 0, "technical": 1}) == ["technical"]  # a class missing
    assert conflict(train, {"technical": 0, "billing": 1, "shipping": 2}) == [
        "billing", "shipping", "technical"]  # order of appearance
    assert conflict(train, dict(train)) == []
    assert conflict({"S": 0, "M": 1, "L": 2}, {"L": 0, "M": 1, "H": 2}) == []  # not nested
    assert label_maps.is_label_map(train)
    assert not label_maps.is_label_map({"a": 1, "b": 2})  # not 0..n-1
    assert not label_maps.is_label_map({0: "a", 1: "b"})  # an id2label


def test_factorize_per_split_is_reported_with_both_mappings(sent: Path) -> None:
    pd = pytest.importorskip("pandas")
    train = pd.Series(["billing", "shipping", "technical", "billing"])
    val = pd.Series(["technical", "billing", "shipping"])
    place = {"file": __file__, "line": 1, "function": "f", "text": ""}
    label_maps.record("pandas.factorize", "y_train", label_maps._mapping(
        pd.factorize(train)[1]), place, 1)
    label_maps.record("pandas.factorize", "y_val", label_maps._mapping(
        pd.factorize(val)[1]), {**place, "line": 2}, 2)
    found = invariant_events(sent)
    assert [e["kind"] for e in found] == ["label-encoding-mismatch"]
    facts = found[0]["facts"]
    assert facts["first"]["name"] == "y_train" and facts["second"]["name"] == "y_val"
    assert facts["labels"] == ["billing", "shipping", "technical"]


# -- rows shared by training and evaluation --------------------------------------------------

def test_evaluation_rows_found_in_the_training_rows() -> None:
    data = torch.utils.data
    x = torch.randn(100, 4)
    train = data.TensorDataset(x[:80], torch.zeros(80))
    held_out = data.TensorDataset(x[80:], torch.zeros(20))
    assert split_rows.overlap(train, held_out) is None
    cut = data.TensorDataset(x[:30], torch.zeros(30))  # evaluation cut from the training rows
    assert split_rows.overlap(train, cut) == {"shared": 30, "eval_rows": 30, "train_rows": 80,
                                              "by": "rows"}
    whole = data.TensorDataset(x, torch.zeros(100))
    first = data.Subset(whole, range(0, 70))
    second = data.Subset(whole, range(40, 100))  # a split made twice
    assert split_rows.overlap(first, second)["by"] == "indices"
    templated = data.TensorDataset(torch.zeros(80, 4), torch.zeros(80))  # rows repeat
    assert split_rows.overlap(templated, data.TensorDataset(torch.zeros(30, 4),
                                                            torch.zeros(30))) is None


# -- labels masked beyond padding -------------------------------------------------------------

def test_end_of_text_labels_cut_out_of_scored_text() -> None:
    eos = 2
    ids = torch.tensor([[5, 6, eos, eos], [5, eos, eos, eos]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]])
    by_id = torch.where(ids == eos, -100, ids)  # masked by the end-of-text (pad) id
    assert label_masks.cut_facts(ids, by_id, mask, eos) == {
        "eos_in_inputs": 2, "eos_in_labels": 0, "eos_cut": 2}
    by_mask = torch.where(mask == 1, ids, -100)  # masked where the inputs are padding
    assert label_masks.cut_facts(ids, by_mask, mask, eos)["eos_in_labels"] == 2


def test_a_scaler_fitted_on_both_parts_it_transforms(sent: Path) -> None:
    preprocessing = pytest.importorskip("sklearn.preprocessing")
    scaler_cls = preprocessing.StandardScaler
    fit = split_rows._scaler_method("fit", scaler_cls.fit)
    transform = split_rows._scaler_method("transform", scaler_cls.transform)
    rows = np.random.default_rng(0).normal(size=(100, 4))
    healthy = scaler_cls()
    fit(healthy, rows[:80])  # fitted on the training part only
    transform(healthy, rows[:80])
    transform(healthy, rows[80:])
    assert invariant_events(sent) == []
    leaky = scaler_cls()
    fit(leaky, rows)  # fitted on every row
    transform(leaky, rows[:80])
    transform(leaky, rows[80:])
    found = invariant_events(sent)
    assert [e["kind"] for e in found] == ["stats-before-split"]
    assert found[0]["facts"] == {"fitted_rows": 100, "parts": [80, 20]}
