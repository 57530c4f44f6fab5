"""The learning-rate schedule of a hand loop against the loop that steps it (stdlib at import).

A schedule counts the ``scheduler.step()`` calls it gets; the script decides what one call
is: a batch (an optimizer step) or an epoch. ``StepLR(step_size=1, gamma=0.1)`` written for
epochs and stepped after every batch drives the rate to 1e-20 within the first epoch and
the model stays at chance; ``get_linear_schedule_with_warmup`` sized in optimizer steps and
stepped once per epoch keeps the rate at its warmup's 0 for the whole first epoch. Both
train to the end without an error.

Here the real objects decide (:func:`judge`): the scheduler's class and parameters give its
rate multiplier after ``n`` calls (:func:`multiplier`: the closed forms of PyTorch's
``torch.optim.lr_scheduler`` docs for ``StepLR``, ``MultiStepLR``, ``ExponentialLR``,
``CosineAnnealingLR``, ``LinearLR``, ``PolynomialLR``, ``ConstantLR``; a ``LambdaLR``'s own
functions evaluated), the loop gives the optimizer steps per epoch and the epochs
(:mod:`plan`), and the calls say how the script steps it (:func:`note_call`: after every
optimizer step, or less often). The verdict (``sized``):

* ``"epochs"``: stepped after every optimizer step, the rate falls under :data:`DROP` of
  its peak within the first epoch and before half of training, while stepped once per
  epoch it would stay above :data:`DROP` until the last epoch. Never for a schedule built
  by transformers (``get_*_schedule*``: sized in steps by its ``num_training_steps``), nor
  ``OneCycleLR``/``CyclicLR`` (per batch by design).
* ``"steps"``: not stepped after every optimizer step, its first epoch runs at a rate
  under :data:`DROP` of the peak (a warmup from 0 counted in optimizer steps), and stepped
  after every optimizer step it rises within the first epoch and does not fall under
  :data:`DROP` before 90 % of training.

Sent in ``train_facts`` as ``schedule`` (:func:`facts`). A failing read never breaks the
script: the schedule is then simply not judged.
"""

from __future__ import annotations

import functools
import math
import sys
from typing import Any

from .modes import relative
from .numeric import is_user_file

#: A rate under this fraction of the schedule's peak so far counts as collapsed: an update
#: a hundredth of the rate the script chose moves a fine-tuned model by nothing measurable
#: within a run (the update-to-weight ratio scales with the rate: ``evidence.RATIO_HIGH``).
DROP = 0.01
#: Most calls of the multiplier evaluated per curve (a long run is sampled evenly).
MAX_POINTS = 2000
#: Schedules stepped once per optimizer step by design: never judged ``"epochs"``.
PER_STEP_CLASSES = ("OneCycleLR", "CyclicLR")


class Schedules:
    """What the script did with its schedulers (one run)."""

    #: id(scheduler) -> {"scheduler": obj, "calls": int, "at": [optimizer steps at each
    #: call], "site": {file, line, function}}
    seen: dict[int, dict[str, Any]] = {}
    per_epoch = 0  # optimizer steps per epoch of the hand loop (0: unknown)
    epochs = 0  # epochs of the hand loop (0: unknown)


def note_shape(per_epoch: int, epochs: int) -> None:
    """The hand loop's optimizer steps per epoch and its epochs (:func:`plan.hand_loop_shape`),
    read at its first optimizer step."""
    Schedules.per_epoch, Schedules.epochs = per_epoch, epochs


def note_call(scheduler: Any, optimizer_steps: int) -> None:
    """One ``scheduler.step()`` call (PyTorch's ``LRScheduler.step``): the scheduler is
    remembered (its constructor makes the first call), and a call the user's code made (not
    a ``Trainer``'s) is counted with the optimizer steps taken so far and the first line
    that made it; other calls are counted as the library's (``library``)."""
    entry = Schedules.seen.setdefault(id(scheduler), {"scheduler": scheduler, "calls": 0,
                                                      "at": [], "site": None, "library": 0})
    frame: Any = sys._getframe(2)  # the caller of the patched LRScheduler.step
    if frame is None or not is_user_file(frame.f_code.co_filename):
        entry["library"] += 1  # its constructor's first step, or a Trainer, a SequentialLR
        return
    entry["calls"] += 1
    if len(entry["at"]) < MAX_POINTS:
        entry["at"].append(optimizer_steps)
    if entry["site"] is None:
        entry["site"] = {"file": relative(frame.f_code.co_filename), "line": frame.f_lineno,
                         "function": frame.f_code.co_name}


def _gamma_power(gamma: Any, count: int) -> float:
    return float(gamma) ** count


def multiplier(scheduler: Any, n: int) -> float | None:
    """The factor on the base rate after ``n`` calls of ``scheduler.step()`` (the first
    parameter group), from its class's closed form (PyTorch's docs), or its ``LambdaLR``
    functions; ``None`` for a class not known here or a function that fails."""
    kind = type(scheduler).__name__
    try:
        if kind == "StepLR":
            return _gamma_power(scheduler.gamma, n // max(1, int(scheduler.step_size)))
        if kind == "MultiStepLR":
            passed = sum(count for m, count in dict(scheduler.milestones).items() if m <= n)
            return _gamma_power(scheduler.gamma, passed)
        if kind == "ExponentialLR":
            return _gamma_power(scheduler.gamma, n)
        if kind == "CosineAnnealingLR":
            base = float(scheduler.base_lrs[0])
            low = float(scheduler.eta_min)
            if not base:
                return None
            cos = (1 + math.cos(math.pi * n / max(1, int(scheduler.T_max)))) / 2
            return (low + (base - low) * cos) / base
        if kind == "LinearLR":
            total = max(1, int(scheduler.total_iters))
            start, end = float(scheduler.start_factor), float(scheduler.end_factor)
            return start + (end - start) * min(n, total) / total
        if kind == "PolynomialLR":
            total = max(1, int(scheduler.total_iters))
            return float((1 - min(n, total) / total) ** float(scheduler.power))
        if kind == "ConstantLR":
            return float(scheduler.factor) if n < int(scheduler.total_iters) else 1.0
        if kind == "LambdaLR":
            return float(scheduler.lr_lambdas[0](n))
    except Exception:  # noqa: BLE001 - an attribute another version lacks, a failing lambda
        return None
    return None


def from_transformers(scheduler: Any) -> bool:
    """A ``LambdaLR`` whose function transformers built (``get_linear_schedule_with_warmup``
    and its kin: a ``functools.partial`` of a transformers function), sized in steps."""
    for fn in getattr(scheduler, "lr_lambdas", ()) or ():
        inner = fn.func if isinstance(fn, functools.partial) else fn
        if str(getattr(inner, "__module__", "")).startswith("transformers"):
            return True
    return False


def _points(total: int) -> list[int]:
    if total <= MAX_POINTS:
        return list(range(total))
    return sorted({round(i * (total - 1) / (MAX_POINTS - 1)) for i in range(MAX_POINTS)})


def curve(scheduler: Any, points: list[int]) -> list[tuple[int, float]] | None:
    """``(n, multiplier(n))`` at ``points`` (``None`` when one is unknown or not finite)."""
    out = []
    for n in points:
        value = multiplier(scheduler, n)
        if value is None or not math.isfinite(value):
            return None
        out.append((n, value))
    return out


def collapse(values: list[tuple[int, float]]) -> int | None:
    """The first ``n`` whose multiplier is under :data:`DROP` of the highest one before it
    (a warmup's 0 before any peak does not count), else ``None``."""
    peak = 0.0
    for n, value in values:
        if peak > 0 and value < DROP * peak:
            return n
        peak = max(peak, value)
    return None


def stepped(entry: dict[str, Any], optimizer_steps: int) -> str:
    """``"batch"`` when the user's calls followed the optimizer steps one by one (at least
    2 calls, 80 % of them with exactly one optimizer step since the previous call, and as
    many calls as 80 % of the steps taken), ``"epoch"`` when the script called it and never
    right after a single step, else ``""`` (never called, or a mix)."""
    at: list[int] = entry["at"]
    if not at:
        return ""
    gaps = [b - a for a, b in zip([0, *at], at, strict=False)]
    single = sum(1 for g in gaps if g == 1)
    if single >= 2 and single >= 0.8 * len(gaps) and len(at) >= 0.8 * optimizer_steps - 1:
        return "batch"
    return "epoch" if single == 0 else ""


def judge(scheduler: Any, how: str, per_epoch: int, epochs: int) -> dict[str, Any]:
    """The verdict on one scheduler stepped ``how`` (:func:`stepped`) in a loop of
    ``per_epoch`` optimizer steps x ``epochs``: ``sized`` (``"epochs"``, ``"steps"`` or
    ``""``, see the module's docstring) with the measurements behind it: ``collapse_step``
    (the call at which the rate collapses when stepped per batch), ``first_epoch`` (the
    multiplier of the first epoch stepped per epoch, i.e. the first), ``per_epoch_collapse``
    (the epoch at which it collapses stepped per epoch)."""
    out: dict[str, Any] = {"sized": ""}
    if per_epoch < 2 or epochs < 1:
        return out
    total = per_epoch * epochs
    per_step = curve(scheduler, _points(total))
    per_epoch_curve = curve(scheduler, list(range(epochs)))
    if per_step is None or per_epoch_curve is None:
        return out
    at = collapse(per_step)
    by_epoch = collapse(per_epoch_curve)
    peak = max(v for _, v in per_step)
    out.update(collapse_step=at, per_epoch_collapse=by_epoch,
               first_epoch=per_epoch_curve[0][1], peak=peak)
    kind = type(scheduler).__name__
    if how == "batch" and at is not None and at < per_epoch and at <= total / 2 \
            and by_epoch is None and kind not in PER_STEP_CLASSES \
            and not from_transformers(scheduler):
        out["sized"] = "epochs"
    elif how != "batch" and peak > 0 and per_epoch_curve[0][1] < DROP * peak \
            and (at is None or at >= 0.9 * total) \
            and any(v >= DROP * peak for n, v in per_step if 0 < n < per_epoch):
        out["sized"] = "steps"
    return out


#: The scheduler parameters sent with the verdict (those of the classes known here).
PARAMS = ("step_size", "gamma", "milestones", "T_max", "eta_min", "total_iters",
          "start_factor", "end_factor", "factor", "power", "total_steps")


def _params(scheduler: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in PARAMS:
        value = getattr(scheduler, name, None)
        if name == "milestones" and value is not None:
            value = sorted(dict(value))
        if isinstance(value, (int, float)) or (isinstance(value, list) and len(value) < 20):
            out[name] = value
    for fn in getattr(scheduler, "lr_lambdas", ()) or ():
        if isinstance(fn, functools.partial):
            out.update({k: v for k, v in fn.keywords.items() if isinstance(v, (int, float))})
        break
    return out


def facts(optimizer_steps: int) -> list[dict[str, Any]]:
    """The ``train_facts`` field ``schedule``: one entry per scheduler the script built or
    stepped (at most 4): its class, parameters, user calls, how it was stepped, the loop's
    shape and the verdict (:func:`judge`; none for a scheduler a library steps after its
    constructor); ``[]`` when there is none."""
    out = []
    for entry in list(Schedules.seen.values())[:4]:
        try:
            scheduler = entry["scheduler"]
            how = stepped(entry, optimizer_steps)
            # stepped by a library after its constructor (a Trainer, a SequentialLR's
            # parent): not the script's loop to judge
            verdict = judge(scheduler, how, Schedules.per_epoch, Schedules.epochs) \
                if entry["library"] <= 1 else {"sized": ""}
            out.append({"class": type(scheduler).__name__, "params": _params(scheduler),
                        "calls": entry["calls"], "stepped": how, "site": entry["site"],
                        "per_epoch": Schedules.per_epoch, "epochs": Schedules.epochs,
                        "optimizer_steps": optimizer_steps, **verdict})
        except Exception:  # noqa: BLE001, S112 - the probe must never break the script
            continue
    return out
