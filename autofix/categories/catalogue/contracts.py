"""The contracts of torch's modules and tensors in plain PyTorch scripts: a layer built for
another input size than the one it gets.

Each category is recognised from the real objects at the failure (the child's facts,
``autofix/run/child/facts.py`` and ``layers.py``): the layer whose ``forward`` raised, its
sizes, the shape of its input, its name in the model and the model's pretrained encoders
with their ``config.hidden_size``. The message only names the family; every ``check``
answers ``None`` without the facts (``needs_facts``). Measured on torch 2.13 /
transformers 5.24 CPU.
"""

from __future__ import annotations

from autofix.categories.failure import Failure, LayerAtFailure, failure_of, layer_at_failure
from autofix.categories.model import Category
from autofix.types import ProbeReport


def linear_mismatch(layer: LayerAtFailure | None) -> tuple[int, int] | None:
    """``(in_features, features the input has)`` of an ``nn.Linear``-like layer (one
    with ``in_features``) whose input's last dimension is another size; ``None`` when the
    facts do not show such a layer and input, or the sizes agree."""
    if layer is None or layer.input_shape is None or not layer.input_shape:
        return None
    size = layer.size("in_features")
    if size is None or layer.input_shape[-1] == size:
        return None
    return size, layer.input_shape[-1]


def _layer_size_mismatch(failure: Failure) -> bool | None:
    """The layer that raised is a linear one whose input has another last dimension than
    its ``in_features``."""
    layer = layer_at_failure(failure)
    if layer is None or layer.input_shape is None or layer.size("in_features") is None:
        return None
    return linear_mismatch(layer) is not None


def _layer_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    layer = layer_at_failure(failure) if failure is not None else None
    sizes = linear_mismatch(layer)
    if layer is None or sizes is None:
        return ""
    built, given = sizes
    name = layer.path or "the layer"
    out = layer.size("out_features")
    shown = f"{layer.short_type}({built}, {out})" if out is not None else layer.short_type
    text = (f"{name} ({shown}) gets inputs of {given} features, not {built}: build it "
            f"with in_features={given}")
    encoder = layer.encoder_of(given)
    if encoder is not None:
        where = f" {encoder.path}" if encoder.path else ""
        text += (f"; {given} is the config.hidden_size of the model's "
                 f"{encoder.type.rsplit('.', 1)[-1]}{where}: size the layer from it, so "
                 "it follows the checkpoint")
    return text


CONTRACTS: tuple[Category, ...] = (
    Category(
        id="layer-size-mismatch",
        title="a layer built for another input size than the one it gets (a head sized "
              "for a 768-wide encoder on a 384-wide one)",
        types=("RuntimeError",),
        patterns=(r"mat1 and mat2 shapes cannot be multiplied",),
        check=_layer_size_mismatch,
        needs_facts=True,
        advice=_layer_advice,
        hint="build the layer with the input size it really gets: nn.Linear("
             "encoder.config.hidden_size, ...) on a pretrained encoder, the previous "
             "layer's out_features otherwise",
    ),
)
