"""The input contracts of torch's classification losses (``cross_entropy``/``nll_loss``,
``binary_cross_entropy(_with_logits)``), read on the arguments of their functional form,
where every ``nn.*Loss`` module and every transformers model's loss ends up.

torch 2.13's rules (``torch/nn/functional.py`` and its C++ checks, measured):

- class-index targets of ``cross_entropy``: the input's shape without its class axis (an
  input ``(N, C)`` takes a target ``(N,)``; ``(N, C, d1...)`` takes ``(N, d1...)``), int64
  (``uint8`` accepted), values in ``[0, C)`` or the ``ignore_index``; a float target of the
  input's own shape is a row of class probabilities, which is allowed;
- ``binary_cross_entropy(_with_logits)``: a float target of the input's shape.
"""

from __future__ import annotations

from typing import Any

from .model import Breach, Call, Confirmed, Contract, Example, dtype_text, shape_text

_CE_SITES = (("torch/nn/functional.py", "cross_entropy"),
             ("torch/nn/functional.py", "nll_loss"))
_BCE_SITES = (("torch/nn/functional.py", "binary_cross_entropy_with_logits"),
              ("torch/nn/functional.py", "binary_cross_entropy"))
#: Keyword arguments of ``cross_entropy``/``nll_loss`` a trial passes on as they were.
_CE_KEYWORDS = ("weight", "ignore_index", "reduction", "label_smoothing")


def _class_shape(scores: Any) -> tuple[int, ...]:
    """The shape class-index targets of ``scores`` have: its own without the class axis
    (axis 1; a 1-D input is one example's scores and takes a 0-d target)."""
    dims = tuple(int(d) for d in scores.shape)
    return () if len(dims) == 1 else (dims[0], *dims[2:])


def _loss_pair(call: Call) -> tuple[Any, Any] | None:
    scores, target = call.get("input"), call.get("target")
    if not (call.is_tensor(scores) and call.is_tensor(target)) or scores.dim() == 0:
        return None
    return scores, target


def _is_probabilities(scores: Any, target: Any) -> bool:
    return bool(target.is_floating_point()) and tuple(target.shape) == tuple(scores.shape)


def _target_shape(call: Call) -> Breach | None:
    pair = _loss_pair(call)
    if pair is None or _is_probabilities(*pair):
        return None
    scores, target = pair
    expected = _class_shape(scores)
    dims = tuple(int(d) for d in target.shape)
    if dims == expected:
        return None
    column = bool(dims) and dims[-1] == 1 and dims[:-1] == expected
    token_level = scores.dim() == 3 and dims == tuple(scores.shape[:2])
    return Breach("shape", f"class ids of shape {shape_text(target)}",
                  f"shape {expected if len(expected) != 1 else f'({expected[0]},)'}: the "
                  f"input's {shape_text(scores)} without its class axis", target,
                  {"input_shape": list(scores.shape), "target_shape": list(target.shape)},
                  # scores and targets of two batches: no shape of either names the cause
                  category=None if column or token_level else "")


def _kwargs(call: Call) -> dict[str, Any]:
    return {k: call.get(k) for k in _CE_KEYWORDS if k in call.locals}


def _target_shape_trial(call: Call, breach: Breach) -> Confirmed | None:
    """The target's trailing axis of 1 dropped, or a token-level loss flattened."""
    pair = _loss_pair(call)
    if pair is None or call.torch is None:
        return None
    scores, target = pair
    fn = call.torch.nn.functional.cross_entropy
    kwargs = _kwargs(call)
    if target.dim() >= 1 and target.shape[-1] == 1 \
            and tuple(target.shape[:-1]) == _class_shape(scores) \
            and call.passes(lambda: fn(scores, target.squeeze(-1), **kwargs)):
        return Confirmed("drop-trailing-axis", "target.squeeze(-1)")
    if scores.dim() == 3 and tuple(target.shape) == tuple(scores.shape[:2]) and call.passes(
            lambda: fn(scores.reshape(-1, scores.shape[-1]), target.reshape(-1), **kwargs)):
        return Confirmed("flatten-token-loss",
                         "input.view(-1, input.size(-1)), target.view(-1)")
    return None


def _target_dtype(call: Call) -> Breach | None:
    """Class-index targets of another dtype than int64: whole numbers stored as floats (a
    float target that is not a row of probabilities) or another integer type."""
    pair = _loss_pair(call)
    if pair is None or _is_probabilities(*pair):
        return None
    scores, target = pair
    if tuple(target.shape) != _class_shape(scores) or str(target.dtype) in (
            "torch.int64", "torch.uint8") or str(target.dtype) == "torch.bool":
        return None
    if target.is_floating_point():
        if not target.numel() or not bool((target == target.round()).all()):
            return None  # fractions: a regression target, not class ids (another fault)
    return Breach("dtype", f"class ids as {dtype_text(target)}",
                  "int64 class ids (torch.long)", target, {"dtype": dtype_text(target)})


def _target_dtype_trial(call: Call, breach: Breach) -> Confirmed | None:
    pair = _loss_pair(call)
    if pair is None or call.torch is None:
        return None
    scores, target = pair
    fn = call.torch.nn.functional.cross_entropy
    kwargs = _kwargs(call)
    if call.passes(lambda: fn(scores, target.long(), **kwargs)):
        return Confirmed("cast-int64", "target.long()")
    return None


def _target_range(call: Call) -> Breach | None:
    pair = _loss_pair(call)
    if pair is None or _is_probabilities(*pair):
        return None
    scores, target = pair
    if target.is_floating_point() or not target.numel() or scores.dim() < 2:
        return None
    classes = int(scores.shape[1])
    ignore = call.get("ignore_index")
    kept = target[target != ignore] if isinstance(ignore, int) else target.reshape(-1)
    if not kept.numel():
        return None
    low, high = int(kept.min()), int(kept.max())
    if 0 <= low and high < classes:
        return None
    return Breach("range", f"class ids from {low} to {high}",
                  f"class ids in [0, {classes}) ({classes} outputs) or the ignore index "
                  f"{ignore}", target, {"classes": classes, "min": low, "max": high})


def _binary_shape(call: Call) -> Breach | None:
    pair = _loss_pair(call)
    if pair is None:
        return None
    scores, target = pair
    if tuple(target.shape) == tuple(scores.shape):
        return None
    return Breach("shape", f"targets of shape {shape_text(target)}",
                  f"the input's shape {shape_text(scores)}", target,
                  {"input_shape": list(scores.shape), "target_shape": list(target.shape)})


def _binary_dtype(call: Call) -> Breach | None:
    """Binary/multi-label targets that are not floats (class ids or multi-hot rows kept
    as int64)."""
    pair = _loss_pair(call)
    if pair is None:
        return None
    scores, target = pair
    if target.is_floating_point() or tuple(target.shape) != tuple(scores.shape):
        return None
    return Breach("dtype", f"targets as {dtype_text(target)}",
                  f"float targets ({dtype_text(scores)}, the input's dtype)", target,
                  {"dtype": dtype_text(target)})


def _binary_dtype_trial(call: Call, breach: Breach) -> Confirmed | None:
    pair = _loss_pair(call)
    if pair is None or call.torch is None:
        return None
    scores, target = pair
    fn = call.torch.nn.functional.binary_cross_entropy_with_logits
    if str(scores.dtype) == "torch.float32" and call.passes(lambda: fn(scores, target.float())):
        return Confirmed("cast-float32", "target.float()")
    return None


_HEAD = '''import torch
import torch.nn.functional as F
scores = torch.randn(8, 3)
'''

LOSSES: tuple[Contract, ...] = (
    Contract(
        id="class-target-shape",
        category="loss-target-shape",
        api="torch.nn.functional.cross_entropy",
        sites=_CE_SITES,
        argument="target",
        says="class ids shaped like the scores without their class axis",
        check=_target_shape,
        trial=_target_shape_trial,
        repairs=("drop-trailing-axis", "flatten-token-loss"),
        examples=(
            Example(_HEAD + "F.cross_entropy(scores, torch.randint(0, 3, (8, 1)))\n"),
            Example(_HEAD + "torch.nn.CrossEntropyLoss()(scores.view(2, 4, 3), "
                            "torch.randint(0, 3, (2, 4)))\n"),
            Example(_HEAD + "F.cross_entropy(scores, torch.randint(0, 3, (8,)))\n",
                    breaks=False),
            Example(_HEAD + "F.cross_entropy(scores, torch.softmax(scores, -1))\n",
                    breaks=False),
        ),
    ),
    Contract(
        id="class-target-dtype",
        category="class-ids-as-floats",
        api="torch.nn.functional.cross_entropy",
        sites=_CE_SITES,
        argument="target",
        says="class ids as int64",
        check=_target_dtype,
        trial=_target_dtype_trial,
        repairs=("cast-int64",),
        examples=(
            Example(_HEAD + "F.cross_entropy(scores, torch.tensor([0., 1, 2, 0, 1, 2, 0, 1]))\n"),
            Example(_HEAD + "F.cross_entropy(scores, torch.tensor([0, 1, 2, 0, 1, 2, 0, 1], "
                            "dtype=torch.int32))\n"),
            Example(_HEAD + "F.cross_entropy(scores, torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]))\n",
                    breaks=False),
        ),
    ),
    Contract(
        id="class-target-range",
        category="label-out-of-range",
        api="torch.nn.functional.cross_entropy",
        sites=_CE_SITES,
        argument="target",
        says="class ids in [0, number of classes) or the ignore index",
        check=_target_range,
        examples=(
            Example(_HEAD + "F.cross_entropy(scores, torch.tensor([0, 1, 2, 3, 1, 2, 0, 1]))\n"),
            Example(_HEAD + "F.cross_entropy(scores, torch.tensor([0, 1, 2, -100, 1, 2, 0, 1]))\n",
                    breaks=False),
        ),
    ),
    Contract(
        id="binary-target-shape",
        category="loss-target-shape",
        api="torch.nn.functional.binary_cross_entropy_with_logits",
        sites=_BCE_SITES,
        argument="target",
        says="targets of the input's shape",
        check=_binary_shape,
        examples=(
            Example("import torch\nimport torch.nn.functional as F\n"
                    "F.binary_cross_entropy_with_logits(torch.randn(8, 1), torch.rand(8, 2))\n"),
            Example("import torch\nimport torch.nn.functional as F\n"
                    "F.binary_cross_entropy_with_logits(torch.randn(8, 1), torch.rand(8, 1))\n",
                    breaks=False),
        ),
    ),
    Contract(
        id="binary-target-dtype",
        category="int-labels-on-multi-label-head",
        api="torch.nn.functional.binary_cross_entropy_with_logits",
        sites=_BCE_SITES,
        argument="target",
        says="float targets",
        check=_binary_dtype,
        trial=_binary_dtype_trial,
        repairs=("cast-float32",),
        examples=(
            Example("import torch\n"
                    "torch.nn.BCEWithLogitsLoss()(torch.randn(8, 1), torch.ones(8, 1).long())\n"),
            Example("import torch\n"
                    "torch.nn.BCEWithLogitsLoss()(torch.randn(8, 4), torch.ones(8, 4))\n",
                    breaks=False),
        ),
    ),
)
