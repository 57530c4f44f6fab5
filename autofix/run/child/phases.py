"""What the run reached: training, each evaluation, saving, reloading, prediction.

A verdict on a budgeted run covers only what that run executed: a clean run that stopped
after 60 steps of training and never reached the script's evaluation says nothing about
it. Each phase is sent as a ``phase`` event when it happens (``kind``, the optimizer step
it came at, ``what`` ran it), so the report can name what the verdict covers:

* ``evaluate``: ``Trainer.evaluate`` and the evaluations during training (the probe's own
  early evaluation left out: ``early.quiet``), Keras ``evaluate``, and a hand loop's
  forwards of the user's model that were not trained on (the model in eval mode, or
  gradients off), grouped into one evaluation per optimizer step; an evaluation of a
  Hugging Face model given labels gets the held-out loss and accuracy measured on those
  forwards (``held_out_loss``: the mean of the outputs' ``loss`` over rows,
  ``held_out_accuracy``: argmax of the logits against the labels, ``held_out_rows``);
* ``save``: ``Trainer.save_model``, ``save_pretrained``, ``torch.save``, Keras ``save``;
* ``reload``: ``from_pretrained`` and ``torch.load`` after the first optimizer step;
* ``predict``: ``Trainer.predict``, Keras ``predict``.

A library call made inside another one that is noted (``torch.save`` inside
``save_pretrained``) is not noted again. At most :data:`MAX_EVENTS` events a run.
Standard library only.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from .contract import Event
from .events import State, emit

#: Most ``phase`` events one run sends (a script saving every step says so 100 times).
MAX_EVENTS = 100
#: Phase kinds.
EVALUATE, SAVE, RELOAD, PREDICT = "evaluate", "save", "reload", "predict"


class Phases:
    sent = 0
    depth = 0  # > 0 inside a noted library call
    #: the hand loop's evaluation being gathered: step, what, forwards, rows, loss, correct
    open: dict[str, Any] | None = None


def note(kind: str, what: str, step: int | None = None, **extra: Any) -> None:
    """Send one ``phase`` event (``step``: the optimizer steps so far, unless given);
    a hand loop's evaluation still open is sent first."""
    if Phases.sent >= MAX_EVENTS:
        return
    close()
    Phases.sent += 1
    emit(Event.PHASE, kind=kind, step=State.steps if step is None else step, what=what,
         **extra)


def wrap(kind: str, what: str, original: Callable[..., Any],
         after_training: bool = False) -> Callable[..., Any]:
    """``original`` that notes a phase ``kind`` each time it is called from outside another
    noted call (``after_training``: only once an optimizer step was taken)."""
    @functools.wraps(original)
    def noted(*args: Any, **kwargs: Any) -> Any:
        if Phases.depth == 0 and not State.in_trainer and (State.steps or not after_training):
            try:
                note(kind, what)
            except Exception:  # noqa: BLE001, S110 - the probe must never break the script
                pass
        Phases.depth += 1
        try:
            return original(*args, **kwargs)
        finally:
            Phases.depth -= 1

    noted._autofix = True  # type: ignore[attr-defined]
    return noted


def patch(owner: Any, name: str, kind: str, what: str, after_training: bool = False) -> None:
    """Replace ``owner.name`` (a function or a classmethod) by its :func:`wrap`."""
    raw = owner.__dict__.get(name) if hasattr(owner, "__dict__") else None
    current = getattr(owner, name, None)
    if current is None or getattr(current, "_autofix", False):
        return
    if isinstance(raw, classmethod):
        setattr(owner, name, classmethod(wrap(kind, what, raw.__func__, after_training)))
    else:
        setattr(owner, name, wrap(kind, what, current, after_training))


def eval_forward(model: Any, kwargs: dict[str, Any], output: Any) -> None:
    """One forward of the user's model that is not trained on (eval mode or no gradients),
    called from the user's code outside ``Trainer``: part of the hand loop's evaluation at
    this optimizer step, with its rows, and loss and correct predictions when the model was
    given ``labels`` and returned ``loss``/``logits``."""
    current = Phases.open
    if current is None or current["step"] != State.steps:
        close()
        current = Phases.open = {"step": State.steps, "what": f"{type(model).__name__} "
                                                              "forwards not trained on",
                                 "forwards": 0, "rows": 0, "scored": 0, "loss": 0.0,
                                 "correct": 0, "labelled": 0}
    current["forwards"] += 1
    labels = kwargs.get("labels")
    rows = _rows(labels) or _rows(next(iter(kwargs.values()), None))
    current["rows"] += rows
    if labels is None:
        return
    loss = getattr(output, "loss", None)
    try:
        value = float(loss.detach().float().item()) if loss is not None and \
            loss.numel() == 1 else None
    except Exception:  # noqa: BLE001 - not a tensor
        value = None
    if value is not None and math.isfinite(value) and rows:
        current["scored"] += rows
        current["loss"] += value * rows
    logits = getattr(output, "logits", None)
    try:
        if logits is not None and logits.dim() == 2 and labels.dim() == 1 \
                and labels.shape[0] == logits.shape[0] and not labels.is_floating_point():
            kept = labels >= 0
            current["correct"] += int((logits.argmax(-1)[kept] == labels[kept]).sum())
            current["labelled"] += int(kept.sum())
    except Exception:  # noqa: BLE001, S110 - the probe must never break the script
        pass


def _rows(value: Any) -> int:
    shape = getattr(value, "shape", None)
    try:
        return int(shape[0]) if shape is not None and len(shape) else 0
    except (TypeError, ValueError):
        return 0


def close() -> None:
    """Send the hand loop's evaluation gathered so far (one ``evaluate`` event)."""
    current, Phases.open = Phases.open, None
    if current is None or Phases.sent >= MAX_EVENTS:
        return
    metrics: dict[str, float] = {}
    if current["scored"]:
        metrics["held_out_loss"] = current["loss"] / current["scored"]
    if current["labelled"]:
        metrics["held_out_accuracy"] = current["correct"] / current["labelled"]
        metrics["held_out_rows"] = float(current["labelled"])
    Phases.sent += 1
    emit(Event.PHASE, kind=EVALUATE, step=current["step"], what=current["what"],
         forwards=current["forwards"], rows=current["rows"], metrics=metrics)


# --- the libraries' calls ------------------------------------------------------------


def patch_trainer(module: Any) -> None:
    """``transformers.trainer``: ``Trainer.predict`` and ``Trainer.save_model`` (the
    evaluations come from the probe's ``on_evaluate`` callback: :func:`trainer_evaluated`)."""
    cls = getattr(module, "Trainer", None)
    if cls is not None:
        patch(cls, "predict", PREDICT, "Trainer.predict")
        patch(cls, "save_model", SAVE, "Trainer.save_model")


def trainer_evaluated(step: int) -> None:
    """One of the script's ``Trainer`` evaluations (its ``on_evaluate`` callback)."""
    note(EVALUATE, "Trainer.evaluate", step=step)


def patch_modeling(module: Any) -> None:
    """``transformers.modeling_utils``: ``save_pretrained``, and ``from_pretrained`` once
    training has started (a reload of what was trained)."""
    cls = getattr(module, "PreTrainedModel", None)
    if cls is not None:
        patch(cls, "save_pretrained", SAVE, "save_pretrained")
        patch(cls, "from_pretrained", RELOAD, "from_pretrained", after_training=True)


def patch_torch(module: Any) -> None:
    """``torch.serialization``: ``torch.save``, and ``torch.load`` once training started."""
    for name, kind, after in (("save", SAVE, False), ("load", RELOAD, True)):
        original = getattr(module, name, None)
        if original is None or getattr(original, "_autofix", False):
            continue
        noted = wrap(kind, f"torch.{name}", original, after)
        setattr(module, name, noted)
        torch = __import__("sys").modules.get("torch")
        if torch is not None and getattr(torch, name, None) is original:
            setattr(torch, name, noted)


def patch_keras(module: Any) -> None:
    """Keras ``Model.evaluate``, ``predict`` and ``save`` (``tf_keras`` or ``keras``)."""
    cls = getattr(module, "Model", None)
    if cls is None:
        return
    for name, kind in (("evaluate", EVALUATE), ("predict", PREDICT), ("save", SAVE)):
        patch(cls, name, kind, f"Keras {name}")
