"""The contracts of torch's modules and tensors in plain PyTorch scripts: a layer built for
another input size than the one it gets, ``backward()`` on a tensor that is not a scalar
loss, a graph backpropagated a second time, a token-level loss given unflattened scores,
a numpy scalar where JSON needs a Python one.

Each category is recognised from the real objects at the failure (the child's facts,
``autofix/run/child/facts.py`` and ``layers.py``): the layer whose ``forward`` raised, its
sizes, the shape of its input, its name in the model and the model's pretrained encoders
with their ``config.hidden_size``; the tensor ``backward()`` was called on; the shapes a
loss got; the value ``json``'s encoder refused. The message only names the family; every
``check`` answers ``None`` without the facts (``needs_facts``). Measured on torch 2.13 /
transformers 5.24 CPU.
"""

from __future__ import annotations

from collections.abc import Callable

from autofix.categories.breaches import breach_of
from autofix.categories.failure import (
    Failure,
    LayerAtFailure,
    backward_tensor,
    failure_of,
    is_model_output,
    json_refusal,
    layer_at_failure,
    loss_shapes,
    numel,
    shape,
    user_values_of_kind,
)
from autofix.categories.model import Category
from autofix.run.child.call_contracts import CONTRACTS as CALL_CONTRACTS
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


def _non_scalar_backward(failure: Failure) -> bool | None:
    """``backward()`` was called on a tensor of more than one element."""
    tensor = shape(backward_tensor(failure))
    return None if tensor is None else numel(tensor) > 1


def output_without_loss(failure: Failure) -> str:
    """The name of a user local holding a transformers model output with logits and no
    ``loss`` (the model was given no labels), "" when none."""
    for name, value in user_values_of_kind(failure, "mapping"):
        keys = value.get("keys") or ()
        if is_model_output(value) and "logits" in keys and "loss" not in keys:
            return name
    return ""


def _backward_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    dims = shape(backward_tensor(failure)) if failure is not None else None
    if failure is None or dims is None:
        return ""
    output = output_without_loss(failure)
    if output:
        return (f"backward() got a tensor of shape {list(dims)}: `{output}` holds the model's "
                "logits and no loss, the model was given no labels; pass labels=... to the "
                "model so its first output is the loss")
    return (f"backward() got a tensor of shape {list(dims)}, one loss per element: reduce "
            "it to one number (.mean()) before backward()")


def _graph_reused(failure: Failure) -> bool | None:
    """The second backward through a freed graph was a ``backward()`` call (not a saved
    tensor read by the user's own code)."""
    return None if backward_tensor(failure) is None else True


def _loss_target_shape(failure: Failure) -> bool | None:
    """A loss got ``(batch, time, classes)`` scores against ``(batch, time)`` targets, or
    flattened scores against unflattened targets."""
    shapes = loss_shapes(failure)
    return None if shapes is None else bool(shapes.token_level)


def _loss_shape_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    shapes = loss_shapes(failure) if failure is not None else None
    if shapes is None or not shapes.token_level:
        return ""
    return (f"{shapes.loss} got scores of shape {list(shapes.input)} and targets of shape "
            f"{list(shapes.target)}: flatten them as the library's language models do, "
            "loss(logits.view(-1, logits.size(-1)), labels.view(-1))")


def _numpy_json(failure: Failure) -> bool | None:
    return json_refusal(failure) is not None


def _json_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    refused = json_refusal(failure) if failure is not None else None
    if refused is None:
        return ""
    kind = str(refused.scalar.get("dtype", "numpy"))
    return (f"json refused a numpy {kind} as a {refused.part}: convert it with "
            f"{refused.python_type}(...) where the value is produced")


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
    Category(
        id="non-scalar-backward",
        recipes=("model-labels", "reduce-loss-mean"),
        title="backward() called on a tensor that is not one loss (the model's logits, a "
              "per-sample loss)",
        types=("RuntimeError",),
        patterns=(r"grad can be implicitly created only for scalar outputs",),
        check=_non_scalar_backward,
        needs_facts=True,
        advice=_backward_advice,
        hint="call backward() on one number: pass the labels to a Hugging Face model so "
             "its first output is the loss, or reduce a per-sample loss with .mean()",
    ),
    Category(
        id="graph-reused",
        recipes=("detach-carried-state", "features-inside-loop", "running-loss-item"),
        title="backward through a graph a previous step already freed (a running loss "
              "total kept as a tensor, a hidden state carried without detach)",
        types=("RuntimeError",),
        patterns=(r"Trying to backward through the graph a second time",),
        check=_graph_reused,
        needs_facts=True,
        hint="let each step backpropagate only its own graph: keep running totals with "
             "loss.item(), detach a state carried across steps, compute features inside "
             "the step",
    ),
    Category(
        id="loss-target-shape",
        recipes=("drop-trailing-axis", "flatten-token-loss"),
        title="a loss's targets of another shape than its scores take (a token-level loss "
              "not flattened, class ids made a (batch, 1) column)",
        types=("RuntimeError", "ValueError"),
        patterns=(r"Expected target size \[", r"Expected input batch_size \(\d+\) to "
                  r"match target batch_size \(\d+\)"),
        check=_loss_target_shape,
        needs_facts=True,
        advice=_loss_shape_advice,
        hint="give the loss class ids shaped like its scores without their class axis: "
             "flatten token scores to (batch*time, classes) and their targets to "
             "(batch*time,), and make class ids one axis where the script makes them",
    ),
    Category(
        id="numpy-scalar-json",
        title="a numpy scalar (np.int64) where JSON needs a Python number",
        types=("TypeError",),
        patterns=(r"keys must be str, int, float, bool or None, not \w+",
                  r"Object of type \w+ is not JSON serializable"),
        check=_numpy_json,
        needs_facts=True,
        advice=_json_advice,
        hint="convert numpy scalars with int(...) / float(...) where the value is produced",
    ),
)


def _shown_by(category: str) -> Callable[[Failure], bool | None]:
    """The check of a category a call contract declares: its breach at the failure."""

    def check(failure: Failure) -> bool | None:
        found = breach_of(failure.exc)
        return None if found is None else found.category == category
    return check


def _declared() -> tuple[Category, ...]:
    """The categories the call contracts declare themselves
    (``autofix/run/child/call_contracts/``: a contract whose fault no category here
    covers carries its category's title and hint), each shown only by its breach."""
    found: dict[str, Category] = {}
    for contract in CALL_CONTRACTS:
        if contract.title and contract.category not in found:
            found[contract.category] = Category(
                id=contract.category, title=contract.title, hint=contract.hint,
                check=_shown_by(contract.category), needs_facts=True,
                no_recipe="no repair operator reached where the script makes the value")
    return tuple(found.values())


#: The categories the call contracts declare (one declaration in the child's contract
#: table holds the check, the trial, the repair operators, the examples and the category).
DECLARED: tuple[Category, ...] = _declared()
