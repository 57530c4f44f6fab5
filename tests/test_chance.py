"""The chance level by task: measured at the training loss (``autofix/run/child/chance.py``)
and judged by the stall rule (``Chance`` in ``autofix/run/child/symptoms.py``)."""

from __future__ import annotations

import json
import math
import random
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autofix.categories.proofs import chance_of, monitor_of
from autofix.run.child.symptoms import Chance, LossMonitor
from autofix.types import ChanceLevel, ProbeReport


@pytest.fixture
def child(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    """The child's chance module with fresh state, its events written to a probe file; the
    wrapped ``torch.nn.functional`` losses and model ``__call__`` are put back afterwards."""
    import torch
    import transformers

    from autofix.run.child import chance, events

    probe = tmp_path / "probe.jsonl"
    monkeypatch.setattr(events, "PROBE_FILE", str(probe))
    monkeypatch.setattr(events.State, "stop", "")
    monkeypatch.setattr(events.State, "monitor", LossMonitor())
    monkeypatch.setattr(events._Sent, "chance", None)
    for name in ("kind", "width", "counts", "tokens", "last_model"):
        monkeypatch.setattr(chance.Task, name, getattr(chance.Task, name))
    chance.Task.kind, chance.Task.width, chance.Task.counts = "", 0, None
    chance.Task.tokens, chance.Task.last_model = 0, None
    monkeypatch.setattr(chance.Task, "active", [])
    monkeypatch.setattr(torch.nn.functional, "cross_entropy", torch.nn.functional.cross_entropy)
    monkeypatch.setattr(torch.nn.functional, "nll_loss", torch.nn.functional.nll_loss)
    monkeypatch.setattr(transformers.PreTrainedModel, "__call__",
                        transformers.PreTrainedModel.__call__)
    chance.patch_functional(torch.nn.functional)
    chance.patch_models(transformers.modeling_utils)
    yield types.SimpleNamespace(chance=chance, events=events, probe=probe)


def events_of(probe: Path, name: str) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, probe.read_text().splitlines()) if e["event"] == name]


def tiny_llama() -> Any:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    return LlamaForCausalLM(config).train()


def test_a_causal_lm_is_judged_against_the_entropy_of_its_scored_tokens(child: Any) -> None:
    """GPT-2 / Llama configs say num_labels=2: the level must not be ln 2. The scored
    tokens are the shifted labels that are not -100: here ids 7 and 9, equally often."""
    import torch

    model = tiny_llama()
    assert model.config.num_labels == 2
    labels = torch.tensor([[-100, 7, 9, 7, 9], [-100, -100, 9, 7, -100]])
    model(input_ids=torch.zeros_like(labels).clamp(min=0), labels=labels)
    level = child.events.State.monitor.level
    assert level is not None and level.kind == "tokens" and level.tokens == 6
    assert level.value == pytest.approx(math.log(2))
    sent = events_of(child.probe, "chance")
    assert sent[-1]["kind"] == "tokens" and sent[-1]["label"] == "H"


def test_no_level_from_evaluation_or_forwards_without_gradients(child: Any) -> None:
    import torch

    model = tiny_llama()
    labels = torch.tensor([[1, 2, 3, 4]])
    with torch.no_grad():
        model(input_ids=labels, labels=labels)
    model.eval()
    model(input_ids=labels, labels=labels)
    assert child.events.State.monitor.level is None


def test_a_classifier_is_ln_of_its_logits_width_at_the_loss(child: Any) -> None:
    """A hand loop's own loss: the logits' width is C, whatever the config says."""
    import torch

    logits = torch.randn(4, 3, requires_grad=True)
    torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1, 2, 1]))
    level = child.events.State.monitor.level
    assert level is not None and level.kind == "classes" and level.classes == 3
    assert child.events.State.monitor.num_classes == 3
    assert events_of(child.probe, "num_classes")[-1]["value"] == 3


def test_a_hand_loop_lm_loss_counts_its_targets(child: Any) -> None:
    """``cross_entropy(logits.view(-1, V), labels.view(-1))`` after a model call without
    labels: the width is the vocabulary of the model called, so it is language modelling."""
    import torch

    model = tiny_llama()
    ids = torch.tensor([[3, 4, 3, 4, 5]])
    logits = model(input_ids=ids).logits
    torch.nn.functional.cross_entropy(logits.view(-1, 50), torch.tensor([3, 4, 3, 4, -100]))
    level = child.events.State.monitor.level
    assert level is not None and level.kind == "tokens" and level.tokens == 4


def test_a_regression_has_no_level(child: Any) -> None:
    import torch

    torch.nn.functional.mse_loss(torch.randn(4, 1, requires_grad=True), torch.randn(4, 1))
    assert child.events.State.monitor.level is None


def test_a_sequence_classifier_given_labels_is_ln_c(child: Any) -> None:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    model = BertForSequenceClassification(BertConfig(
        vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, num_labels=4)).train()
    model(input_ids=torch.tensor([[1, 2, 3]] * 2), labels=torch.tensor([0, 3]))
    level = child.events.State.monitor.level
    assert level is not None and (level.kind, level.classes) == ("classes", 4)


# --- the rule with a language model's level -----------------------------------------------


def noisy(values: list[float], sd: float, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [v + rng.gauss(0, sd) for v in values]


def lm_monitor(entropy: float = 3.023) -> LossMonitor:
    return LossMonitor(level=Chance(entropy, "tokens", "H", None, 516))


def test_a_language_model_starting_above_chance_and_falling_is_learning() -> None:
    """Measured on the tiny Llama (SFT, completion-only, lr 2e-3): 10-step means 3.520 and
    2.651 over 30 steps, H = 3.023: 0.88 x H at the end, so "at chance" by the classifier's
    rule, but clearly under its own start."""
    losses = noisy([4.14 - 0.05 * i for i in range(30)], 0.15)
    monitor = lm_monitor()
    assert [m for m in (monitor.add(x) for x in losses) if m] == []
    assert monitor.clearly_learning()
    assert monitor.final() is None


def test_a_slow_language_model_fall_is_no_finding() -> None:
    """lr 1e-4 on the same sample: 4.332 -> 4.016 in 30 steps (still 1.33 x H)."""
    losses = noisy([4.40 - 0.012 * i for i in range(30)], 0.06)
    monitor = lm_monitor()
    for x in losses:
        monitor.add(x)
    assert not monitor.clearly_learning()
    assert monitor.final() is None


def test_a_frozen_language_model_is_still_flat() -> None:
    """No trainable parameter: flat at 4.5-4.8, 1.5 x H, for 60 steps (llm findings)."""
    monitor = lm_monitor()
    for x in noisy([4.65] * 60, 0.12, 3):
        monitor.add(x)
    found = monitor.final()
    assert found is not None and found.kind == "stalled-loss" and "x H" in found.evidence


def test_a_preference_loss_falling_slowly_from_ln_2_is_learning() -> None:
    """DPO at beta 0.1 on the tiny Llama: 0.670 (steps 1-10) -> 0.607 (steps 21-30)."""
    losses = noisy([0.693 - 0.003 * i for i in range(30)], 0.02, 1)
    monitor = LossMonitor(level=Chance.pairs())
    for x in losses:
        monitor.add(x)
    assert monitor.final() is None


def test_a_classifier_falling_slowly_is_still_learning_slowly() -> None:
    """The classifier's rule is unchanged: a significant fall that is not yet clearly
    under ln C is the finding "learning slowly"."""
    monitor = LossMonitor(3)
    for x in noisy([1.10 - 0.001 * i for i in range(60)], 0.01):
        monitor.add(x)
    found = monitor.final()
    assert found is not None and found.kind == "learning-slowly"


def test_the_parent_judges_against_the_level_the_child_measured() -> None:
    report = ProbeReport(num_classes=None, chance=ChanceLevel(3.023, "tokens", "H", None, 516))
    level = chance_of(report)
    assert level is not None and level.kind == "tokens" and level.value == 3.023
    assert monitor_of(report, [4.1] * 10 + [2.4] * 20).clearly_learning()
    legacy = chance_of(ProbeReport(num_classes=3))
    assert legacy is not None and legacy.label == "ln 3"
    assert chance_of(ProbeReport()) is None


def test_chance_round_trips_through_its_event() -> None:
    level = Chance(3.023, "tokens", "H", None, 516)
    assert Chance.from_json(level.to_json()) == level
    assert Chance.from_json({"value": 0}) is None
    assert Chance.of_tokens({1: 5, 2: 5}) == Chance(math.log(2), "tokens", "H", None, 10)
    assert Chance.of_tokens([10]) is None
