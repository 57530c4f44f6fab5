"""The Keras loss-on-logits preflight check (issue 8, "trains, but wrongly"; issue 10).

The check's pieces are unit-tested here on stand-ins for the Keras objects (numpy outputs);
the real TF model goes through it in ``test_e2e_tf.py`` (``.venv-v4``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from autofix.loop.verdicts import judge
from autofix.run.child import preflight
from autofix.run.probe_events import read_probe
from autofix.types import (
    Diagnosis,
    Healthy,
    KerasFacts,
    PreflightFault,
    ProbeReport,
    RunOutcome,
    RunResult,
)


class _Loss:
    """A Keras loss object: its class name and ``get_config()``."""

    def __init__(self, name: str, from_logits: bool) -> None:
        self.__class__ = type(name, (_Loss,), {})
        self.config = {"from_logits": from_logits, "name": name}

    def get_config(self) -> dict[str, Any]:
        return self.config


def sparse_categorical_crossentropy() -> None:  # a Keras loss given as a function
    """Stands for ``losses.sparse_categorical_crossentropy`` (its ``__name__`` counts)."""


@pytest.mark.parametrize(("loss", "spelled"), [
    ("sparse_categorical_crossentropy", "'sparse_categorical_crossentropy'"),
    ("categorical_crossentropy", "'categorical_crossentropy'"),
    ("mse", ""),
    (None, ""),
    (_Loss("SparseCategoricalCrossentropy", False), "SparseCategoricalCrossentropy"
                                                    "(from_logits=False)"),
    (_Loss("SparseCategoricalCrossentropy", True), ""),
    (_Loss("MeanSquaredError", False), ""),
    (sparse_categorical_crossentropy, "losses.sparse_categorical_crossentropy"),
])
def test_which_losses_read_probabilities(loss: object, spelled: str) -> None:
    assert preflight._reads_probabilities(loss) == spelled


class _Output:
    def __init__(self, logits: np.ndarray) -> None:
        self.logits = _Tensor(logits)


class _Tensor:
    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def numpy(self) -> np.ndarray:
        return self.values


class _Model:
    """A model with ``loss``, ``dummy_inputs`` and a forward returning ``logits``."""

    def __init__(self, loss: object, logits: list[list[float]]) -> None:
        self.loss = loss
        self.dummy_inputs = {"input_ids": [[1, 2]]}
        self.logits = np.array(logits, dtype="float32")
        self.calls: list[bool] = []

    def __call__(self, inputs: object, training: bool) -> _Output:
        self.calls.append(training)
        return _Output(self.logits)


def test_a_string_loss_on_logits_is_a_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[dict[str, Any]] = []
    monkeypatch.setattr(preflight, "emit", lambda name, **e: events.append({"event": name, **e}))
    model = _Model("sparse_categorical_crossentropy", [[0.12, -0.30, 0.05], [0.2, 0.1, 0.0]])
    evidence = preflight.loss_on_logits(model)
    assert model.calls == [False]  # one forward, in inference mode
    assert "compile(loss='sparse_categorical_crossentropy') reads the model's outputs as " \
           "probabilities" in evidence
    assert "[0.120, -0.300, 0.050] (sum -0.130)" in evidence
    assert events == [{"event": "preflight_fault", "check": "keras-loss",
                       "category": "keras-string-loss", "evidence": evidence}]


@pytest.mark.parametrize(("loss", "logits"), [
    ("sparse_categorical_crossentropy", [[0.2, 0.5, 0.3], [0.9, 0.05, 0.05]]),  # softmax out
    (_Loss("SparseCategoricalCrossentropy", True), [[0.12, -0.30, 0.05]]),  # from_logits
    (None, [[0.12, -0.30, 0.05]]),  # the model's internal loss
])
def test_no_fault_when_the_loss_fits_the_outputs(monkeypatch: pytest.MonkeyPatch,
                                                 loss: object, logits: list[list[float]]) -> None:
    events: list[object] = []
    monkeypatch.setattr(preflight, "emit", lambda *a, **e: events.append(e))
    assert preflight.loss_on_logits(_Model(loss, logits)) == ""
    assert events == []


def test_a_fault_read_from_the_probe_file_becomes_the_diagnosis(tmp_path: Any) -> None:
    probe = tmp_path / "probe.jsonl"
    probe.write_text('{"event": "preflight_fault", "check": "keras-loss", '
                     '"category": "keras-string-loss", "evidence": "compile(loss=...) ..."}\n'
                     '{"event": "exit", "code": 0, "stopped": "preflight"}\n')
    report = read_probe(probe)
    assert report.faults == [PreflightFault("keras-loss", "keras-string-loss",
                                            "compile(loss=...) ...")]
    run = RunResult(RunOutcome.OK, 0, 1.0, "", 0, report)
    verdict = judge(run, tmp_path / "train.py")
    assert isinstance(verdict, Diagnosis)
    assert verdict.category == "keras-string-loss"
    assert verdict.details[-1] == "found by the preflight check 'keras-loss' before the " \
                                  "first training step"
    assert "from_logits=True" in verdict.hint
    # without the fault the same run is healthy
    assert isinstance(judge(RunResult(RunOutcome.OK, 0, 1.0, "", 0, ProbeReport()),
                            tmp_path / "train.py"), Healthy)


def dummy_loss() -> None:
    """Stands for Hugging Face's ``dummy_loss`` (``compile`` without ``loss``)."""


@pytest.mark.parametrize(("loss", "reported"), [
    ("sparse_categorical_crossentropy", {"loss": "sparse_categorical_crossentropy",
                                         "from_logits": None}),
    (_Loss("SparseCategoricalCrossentropy", True), {"loss": "SparseCategoricalCrossentropy",
                                                    "from_logits": True}),
    (sparse_categorical_crossentropy, {"loss": "sparse_categorical_crossentropy",
                                       "from_logits": None}),
    (dummy_loss, {"loss": "dummy_loss", "from_logits": None}),
])
def test_the_keras_event_names_the_compiled_loss(loss: object,
                                                 reported: dict[str, object]) -> None:
    from autofix.run.child.probes import _keras_loss
    assert _keras_loss(loss) == reported


@pytest.mark.parametrize(("loss", "from_logits", "found"), [
    ("sparse_categorical_crossentropy", None, True),
    ("SparseCategoricalCrossentropy", False, True),
    ("SparseCategoricalCrossentropy", True, False),  # before: any object name was "a string"
    ("dummy_loss", None, False),  # the model's internal loss, after the recipe dropped loss=
    (None, None, False),
])
def test_the_stall_root_cause_needs_a_loss_that_reads_probabilities(
        loss: str | None, from_logits: bool | None, found: bool) -> None:
    from autofix.categories import get_category
    keras = KerasFacts("tf_keras", "TFBertForSequenceClassification", True, 3, "Adam", 5e-5,
                       loss, from_logits)
    rule = next(r for r in get_category("stalled-loss").root_causes
                if r.category == "keras-string-loss")
    assert rule.found(ProbeReport(keras=[keras])) is found
