"""Probabilities given to a loss that applies ``log_softmax`` or ``sigmoid`` itself
(``probabilities-to-logit-loss``).

``cross_entropy`` (``nn.CrossEntropyLoss``) computes ``log_softmax`` of its input, and
``binary_cross_entropy_with_logits`` (``nn.BCEWithLogitsLoss``) a ``sigmoid``: given
probabilities, they squash them a second time. Nothing raises, the loss still falls a
little, but its gradient vanishes as the model grows confident (softmax of values in
[0, 1] is nearly uniform), so the model trains slowly and worse (PyTorch's documentation of
``CrossEntropyLoss``: "The input is expected to contain the unnormalized logits for each
class"). ``nll_loss`` (``nn.NLLLoss``) expects log-probabilities: given probabilities its
loss is ``-p`` of the true class, unbounded below 0 and not a likelihood at all.

Checked on the real input of each loss call (the first :data:`CHECKS` calls from each
place of the user's code), by where the tensor came from: its autograd node, through
shape-only operations (``view``, ``squeeze``, ``float``...), is ``SoftmaxBackward0`` or
``SigmoidBackward0``. An input without a graph (a loss under ``torch.no_grad()``) is judged
by its values: every row non-negative and summing to 1 (within :data:`SUM_TOLERANCE`) along
the class axis. ``log_softmax`` given to ``cross_entropy`` is no fault (log_softmax is
idempotent).

Where the probabilities were made is recorded too: each ``softmax``/``sigmoid`` the user's
code calls directly (``torch.softmax``, ``F.softmax``, ``Tensor.softmax``, and the sigmoid
forms) on a tensor that requires grad notes its autograd node with the user's line (the
last :data:`LAYER_SITES`), so the loss's input is traced to that line even in another
module (a model's ``forward``). The invariant event names the loss, the probability layer,
the user's line of the loss call and that of the layer when known; the recipe
``logits-to-loss`` edits the source there.
"""

from __future__ import annotations

import types
from typing import Any

from .invariants import caller_is_user, report, user_frame, where

KIND = "probabilities-to-logit-loss"
#: Loss calls checked per place of the user's code (the first ones show the fault).
CHECKS = 3
#: Rows of a probability input must sum to 1 within this (float32 softmax: ~1e-6).
SUM_TOLERANCE = 1e-3
#: Rows read for the value test (a bound on its cost for a language model's logits).
ROWS = 256
#: Autograd nodes that keep the values (shape and dtype changes), walked through.
SHAPE_NODES = frozenset({
    "ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0", "SqueezeBackward0",
    "SqueezeBackward1", "SqueezeBackward2", "SqueezeBackward3", "UnsqueezeBackward0",
    "PermuteBackward0", "TransposeBackward0", "TransposeBackward1", "TBackward0",
    "CloneBackward0", "ToCopyBackward0", "ExpandBackward0", "AliasBackward0",
    "SliceBackward0", "SelectBackward0", "IndexBackward0", "ContiguousBackward0"})
#: What each loss applies to its input, and the layers whose output it must not get.
LOSSES = {
    "cross_entropy": ("log_softmax", ("SoftmaxBackward0",)),
    "nll_loss": ("nothing (it expects log-probabilities)", ("SoftmaxBackward0",
                                                            "SigmoidBackward0")),
    "binary_cross_entropy_with_logits": ("sigmoid", ("SigmoidBackward0",)),
}
LAYERS = {"SoftmaxBackward0": "softmax", "SigmoidBackward0": "sigmoid"}
#: Probability layers remembered with their user's line (autograd nodes cannot be weakly
#: referenced: ids of recent nodes, looked up while their graph is alive).
LAYER_SITES = 256


class Seen:
    """Loss calls checked per place: (loss, file, line) -> count, and the user's lines
    of recent probability layers by autograd node id (reset per process)."""

    calls: dict[tuple[str, str, int], int] = {}
    layers: dict[int, dict[str, Any]] = {}


def origin(tensor: Any) -> Any:
    """The autograd node ``tensor`` was computed by, through :data:`SHAPE_NODES`
    (``None`` without a graph)."""
    node = getattr(tensor, "grad_fn", None)
    for _ in range(16):
        if node is None:
            return None
        if type(node).__name__ not in SHAPE_NODES:
            return node
        nexts = [n for n, _ in getattr(node, "next_functions", ()) if n is not None]
        node = nexts[0] if len(nexts) == 1 else None
    return None


def note_layer(out: Any, frame: Any) -> None:
    """Remember the user's line that made ``out`` (a softmax/sigmoid output with a
    graph)."""
    node = getattr(out, "grad_fn", None)
    if node is None:
        return
    if len(Seen.layers) >= LAYER_SITES:
        Seen.layers.pop(next(iter(Seen.layers)))
    Seen.layers[id(node)] = where(frame)


def probability_rows(tensor: Any, class_dim: int) -> bool:
    """Every value of the first :data:`ROWS` rows of ``tensor`` is in [0, 1] and each
    row sums to 1 along ``class_dim`` (a float tensor with at least 2 classes)."""
    data = tensor.detach()
    if not data.is_floating_point() or data.dim() < 1 or data.shape[class_dim] < 2:
        return False
    data = data.movedim(class_dim, -1).reshape(-1, data.shape[class_dim])[:ROWS].float()
    if data.numel() == 0 or bool(data.min() < 0) or bool(data.max() > 1):
        return False
    return bool(((data.sum(-1) - 1).abs() <= SUM_TOLERANCE).all())


def check(loss: str, tensor: Any) -> None:
    """Check the input ``tensor`` of ``loss`` (a name of :data:`LOSSES`) from the user's
    place that called it; report the fault once per place."""
    frame = user_frame(3)
    if frame is None:
        return
    place = where(frame)
    key = (loss, place["file"], place["line"])
    count = Seen.calls.get(key, 0)
    if count >= CHECKS:
        return
    Seen.calls[key] = count + 1
    applies, wrong = LOSSES[loss]
    found = origin(tensor)
    node = type(found).__name__ if found is not None else ""
    shape = [int(s) for s in getattr(tensor, "shape", ())]
    layer_at: dict[str, Any] = {}
    if node:
        if node not in wrong:
            return
        layer, how = LAYERS[node], f"its autograd node is {node}"
        layer_at = Seen.layers.get(id(found), {})
    elif loss != "binary_cross_entropy_with_logits" and getattr(tensor, "dim", lambda: 0)() \
            and probability_rows(tensor, 1 if tensor.dim() > 1 else 0):
        layer, how = "softmax", "every row is non-negative and sums to 1"
    else:
        return
    expects = "log-probabilities (log_softmax)" if loss == "nll_loss" else "logits"
    made = f", made at {_short(layer_at)}" if layer_at else ""
    report(KIND, f"{loss} at {_short(place)} gets probabilities ({layer} outputs{made}, "
                 f"shape {shape}: {how}) where it expects {expects}; it applies {applies} "
                 "itself, so the probabilities are squashed twice and the gradient fades as "
                 "the model grows confident (it trains slowly and worse, nothing raises)",
           place, {"loss": loss, "layer": layer, "node": node, "shape": shape,
                   "layer_at": layer_at})


def _short(place: dict[str, Any]) -> str:
    text = place.get("text") or ""
    name = str(place.get("file", "")).rsplit("/", 1)[-1]
    return f"{name}:{place.get('line')}" + (f" (`{text}`)" if text else "")


def _wrapped(name: str, original: Any) -> Any:
    def loss(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        try:
            check(name, input)
        except Exception:  # noqa: BLE001 - the probe must never break the script
            pass
        return original(input, *args, **kwargs)

    loss._autofix_loss_input = True  # type: ignore[attr-defined]
    loss.__wrapped__ = original  # type: ignore[attr-defined]
    loss.__name__ = getattr(original, "__name__", name)
    loss.__doc__ = getattr(original, "__doc__", None)
    return loss


def patch_functional(module: types.ModuleType) -> None:
    """Wrap the losses of :data:`LOSSES` in ``torch.nn.functional`` (looked up at call
    time by ``nn.CrossEntropyLoss``, ``nn.NLLLoss``, ``nn.BCEWithLogitsLoss`` and
    transformers' loss functions)."""
    for name in LOSSES:
        original = getattr(module, name, None)
        if original is None or getattr(original, "_autofix_loss_input", False):
            continue
        setattr(module, name, _wrapped(name, original))


def _layer(original: Any) -> Any:
    def layer(value: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(value, *args, **kwargs)
        frame = caller_is_user()
        if frame is not None:
            try:
                note_layer(out, frame)
            except Exception:  # noqa: BLE001 - the probe must never break the script
                pass
        return out

    layer._autofix_layer = True  # type: ignore[attr-defined]
    layer.__wrapped__ = original  # type: ignore[attr-defined]
    layer.__name__ = getattr(original, "__name__", "layer")
    layer.__doc__ = getattr(original, "__doc__", None)
    return layer


def _wrap_layers(owner: Any, names: tuple[str, ...]) -> None:
    for name in names:
        original = getattr(owner, name, None)
        if original is not None and not getattr(original, "_autofix_layer", False):
            setattr(owner, name, _layer(original))


def patch_layers(module: types.ModuleType) -> None:
    """``torch``: ``torch.softmax``/``torch.sigmoid`` and the ``Tensor`` methods record
    the user's line of a probability layer (:func:`note_layer`)."""
    _wrap_layers(module, ("softmax", "sigmoid"))
    _wrap_layers(getattr(module, "Tensor", None), ("softmax", "sigmoid"))


def patch_functional_layers(module: types.ModuleType) -> None:
    """``torch.nn.functional``: ``F.softmax``/``F.sigmoid`` likewise."""
    _wrap_layers(module, ("softmax", "sigmoid"))
