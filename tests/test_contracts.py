"""The contracts of torch's modules in plain PyTorch (``autofix/categories/catalogue/
contracts.py``), on the real stack: a layer is made to fail in this process as a script
makes it fail, the child describes the exception as in a run (its sizes, its name in the
model, the model's encoders: ``autofix/run/child/layers.py``), and the parent classifies
it. No training: one forward of a 1-layer BERT of hidden size 32, built from a config."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from transformers import BertConfig, BertModel

from autofix.categories.catalogue.contracts import linear_mismatch
from autofix.categories.failure import Failure, layer_at_failure
from autofix.loop.diagnosis import classify
from autofix.types import ExceptionInfo

from .conftest import failed


class Classifier(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.encoder = BertModel(BertConfig(vocab_size=50, hidden_size=32,
                                            num_hidden_layers=1, num_attention_heads=2,
                                            intermediate_size=37))
        self.head = nn.Sequential(nn.Dropout(0.1), nn.Linear(width, 3))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.head(self.encoder(input_ids=ids).last_hidden_state[:, 0])
        return out


@pytest.fixture(scope="module")
def head_sized_64() -> ExceptionInfo:
    torch.manual_seed(0)

    def train() -> torch.Tensor:  # a script's frame: it names the model and its encoder
        model = Classifier(64)
        encoder = model.encoder  # noqa: F841 - the name the facts report for the encoder
        return model(torch.randint(0, 50, (4, 7)))

    return failed(train)


def test_the_failing_layer_is_named_with_its_sizes_and_the_encoders(
        head_sized_64: ExceptionInfo) -> None:
    layer = layer_at_failure(Failure(head_sized_64))
    assert layer is not None
    assert layer.type == "torch.nn.modules.linear.Linear"
    assert dict(layer.sizes) == {"in_features": 64, "out_features": 3}
    assert layer.input_shape == (4, 32)
    assert layer.path == "head.1"
    assert layer.owner == "torch.nn.modules.container.Sequential"
    assert layer.root.endswith(".Classifier")
    assert [(e.path, e.hidden_size) for e in layer.encoders] == [("encoder", 32)]
    encoder = layer.encoder_of(32)
    assert encoder is not None and "encoder" in encoder.names
    assert linear_mismatch(layer) == (64, 32)


def test_a_head_sized_for_another_encoder_is_a_layer_size_mismatch(
        head_sized_64: ExceptionInfo) -> None:
    assert "mat1 and mat2 shapes cannot be multiplied (4x32 and 64x3)" in head_sized_64.message
    diagnosis = classify(head_sized_64)
    assert diagnosis.id == "layer-size-mismatch"


def test_the_same_message_from_a_matmul_of_the_users_is_not_a_layer_fault() -> None:
    """torch.mm in the user's own code raises the same words: no layer refused its input,
    so no layer is resized."""
    exc = failed(lambda: torch.randn(4, 32) @ torch.randn(64, 3))
    assert "mat1 and mat2 shapes cannot be multiplied" in exc.message
    assert layer_at_failure(Failure(exc)) is None
    assert classify(exc).id != "layer-size-mismatch"


def test_a_layer_sized_right_that_fails_otherwise_is_not_resized() -> None:
    """A Linear given float64 inputs raises in its forward, with sizes that agree."""
    layer = nn.Linear(8, 2)
    exc = failed(lambda: layer(torch.randn(3, 8, dtype=torch.float64)))
    found = layer_at_failure(Failure(exc))
    assert found is not None and found.input_shape == (3, 8)
    assert linear_mismatch(found) is None
    assert classify(exc).id != "layer-size-mismatch"
