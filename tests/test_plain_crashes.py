"""The crashes of a hand-written PyTorch loop (``autofix/categories/catalogue/contracts.py``)
diagnosed on the real stack: each fault is made to fail in this process as a script makes
it fail, the child describes the exception as in a run (the tensor ``backward()`` got,
the shapes at the loss, the value ``json`` refused), and the parent classifies it. The
same messages from other causes must not be given these categories. No training: a few
tensors on CPU."""

from __future__ import annotations

import io
import json

import numpy as np
import torch
from torch import nn

from autofix.categories.failure import (
    Failure,
    backward_tensor,
    json_refusal,
    loss_shapes,
)
from autofix.loop.diagnosis import classify

from .conftest import failed

# -- non-scalar-backward ------------------------------------------------------------------

def test_backward_on_a_per_sample_loss_is_non_scalar_backward() -> None:
    def step() -> None:
        criterion = nn.CrossEntropyLoss(reduction="none")
        per_sample = criterion(nn.Linear(4, 3)(torch.randn(8, 4)), torch.randint(0, 3, (8,)))
        per_sample.backward()

    exc = failed(step)
    tensor = backward_tensor(Failure(exc))
    assert tensor is not None and tensor["shape"] == [8] and tensor["requires_grad"]
    assert classify(exc).id == "non-scalar-backward"


def test_the_same_message_from_autograd_grad_is_not_a_backward_fault() -> None:
    """``torch.autograd.grad`` on a vector raises the same words; no ``backward()`` was
    called, so no loss is reduced."""
    x = torch.randn(3, requires_grad=True)
    exc = failed(lambda: torch.autograd.grad(x * 2, x))
    assert "only for scalar outputs" in exc.message
    assert backward_tensor(Failure(exc)) is None
    assert classify(exc).id != "non-scalar-backward"


# -- graph-reused -------------------------------------------------------------------------

def test_a_running_total_backwarded_twice_is_graph_reused() -> None:
    def loop() -> None:
        model = nn.Linear(4, 2)
        total = torch.zeros(())
        for _ in range(2):
            total = total + model(torch.randn(8, 4)).pow(2).mean()
            total.backward()

    exc = failed(loop)
    assert "backward through the graph a second time" in exc.message
    assert classify(exc).id == "graph-reused"


def test_a_saved_tensor_read_by_the_users_code_is_not_graph_reused() -> None:
    """Reading a freed saved tensor raises the same words outside any ``backward()``."""
    def read() -> None:
        x = torch.randn(3, requires_grad=True)
        y = x.exp()
        y.sum().backward()
        _ = y.grad_fn._saved_result  # type: ignore[union-attr]

    exc = failed(read)
    assert "second time" in exc.message
    assert classify(exc).id != "graph-reused"


# -- loss-target-shape --------------------------------------------------------------------

def test_unflattened_token_scores_are_a_loss_target_shape_fault() -> None:
    logits, targets = torch.randn(4, 6, 11), torch.randint(0, 11, (4, 6))
    exc = failed(lambda: nn.functional.cross_entropy(logits, targets))
    assert "Expected target size [4, 11], got [4, 6]" in exc.message
    shapes = loss_shapes(Failure(exc))
    assert shapes is not None and shapes.token_level == "both"
    assert classify(exc).id == "loss-target-shape"


def test_flattened_scores_against_unflattened_targets_too() -> None:
    logits, targets = torch.randn(24, 11), torch.randint(0, 11, (4, 6))
    exc = failed(lambda: nn.functional.cross_entropy(logits, targets))
    shapes = loss_shapes(Failure(exc))
    assert shapes is not None and shapes.token_level == "target"
    assert classify(exc).id == "loss-target-shape"


def test_a_batch_size_mismatch_of_a_classifier_is_not_token_level() -> None:
    """Scores of 4 rows against 8 targets: a batch fault, no flattening helps."""
    exc = failed(lambda: nn.functional.cross_entropy(torch.randn(4, 3),
                                                     torch.randint(0, 3, (8,))))
    assert "Expected input batch_size (4) to match target batch_size (8)" in exc.message
    assert classify(exc).id != "loss-target-shape"


# -- numpy-scalar-json --------------------------------------------------------------------

def test_a_numpy_value_json_refuses_is_named_with_its_dtype() -> None:
    metrics = {"best_epoch": np.argmax([0.1, 0.9]), "acc": 0.9}
    exc = failed(lambda: json.dump(metrics, io.StringIO(), indent=2))
    refused = json_refusal(Failure(exc))
    assert refused is not None and refused.part == "value" and refused.python_type == "int"
    assert classify(exc).id == "numpy-scalar-json"


def test_numpy_keys_and_the_c_encoder_are_numpy_scalar_json() -> None:
    keys = failed(lambda: json.dump({np.int64(0): "red"}, io.StringIO(), indent=2))
    refused = json_refusal(Failure(keys))
    assert refused is not None and refused.part == "key"
    assert classify(keys).id == "numpy-scalar-json"
    fast = failed(lambda: json.dumps({"x": np.float32(0.5)}))  # C encoder: no frame
    refused = json_refusal(Failure(fast))
    assert refused is not None and refused.python_type == "float"
    assert classify(fast).id == "numpy-scalar-json"


def test_another_object_json_refuses_is_not_a_numpy_fault() -> None:
    exc = failed(lambda: json.dumps({"model": object()}))
    assert "Object of type object is not JSON serializable" in exc.message
    assert json_refusal(Failure(exc)) is None
    assert classify(exc).id != "numpy-scalar-json"
