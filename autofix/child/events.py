"""The probe's event stream and step bookkeeping, shared by every training probe.

Events are JSON lines appended to ``AUTOFIX_PROBE_FILE``: ``{"event": NAME, **payload}``.
This module is the contract of that stream: the event names (:class:`Event`) and each
payload's fields (:data:`EVENTS`) are defined here once; the child emits them and
``autofix/probe.py`` reads them from these definitions (a test checks both sides). It
runs inside the user's interpreter, so it is standard library only. ``record_step`` is called once
per optimizer step by whichever probe sees the training (Trainer, Keras, a hand-written
PyTorch loop); it feeds the symptom monitor and decides when training must stop.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from .symptoms import LossMonitor

PROBE_FILE = os.environ.get("AUTOFIX_PROBE_FILE", "")
MAX_STEPS = int(os.environ.get("AUTOFIX_MAX_STEPS", "0") or 0)
#: The process's rank under torchrun / accelerate launch (None: a single process).
RANK = int(os.environ["RANK"]) if os.environ.get("RANK", "").isdigit() \
    and int(os.environ.get("WORLD_SIZE", "1") or 1) > 1 else None


class Event:
    """The event names (``emit(Event.STEP, ...)``)."""

    VERSIONS = "versions"
    EXCEPTION = "exception"
    TRAINER = "trainer"
    DATASET = "dataset"
    KERAS = "keras"
    STEP = "step"
    SYMPTOM = "symptom"
    NUM_CLASSES = "num_classes"
    BUDGET_REACHED = "budget_reached"
    EARLY_EVAL = "early_eval"
    PROBE_ERROR = "probe_error"
    EXIT = "exit"
    FINDING = "finding"
    SAMPLED = "sampled"


#: Fields of a ``dataset`` event and of each entry of a ``trainer`` event's ``datasets``:
#: role, column names, rows, the label column, its kind ("int"/"str"/"float"), the
#: ClassLabel's number of classes, or the label range over the whole split.
DATASET_FIELDS = ("role", "columns", "num_rows", "label_column", "label_kind",
                  "label_classes", "label_min", "label_max")

#: Every event and the payload fields it may carry (all optional to the reader).
EVENTS: dict[str, tuple[str, ...]] = {
    Event.VERSIONS: ("versions",),  # {distribution: version}
    # type (qualified), message, frames [{file, line, function, text}], chain [exception]
    Event.EXCEPTION: ("type", "message", "frames", "chain"),
    Event.TRAINER: ("trainer_class", "model_class", "num_labels", "datasets"),
    Event.DATASET: (*DATASET_FIELDS, "requested"),
    Event.KERAS: ("keras", "model_class", "hf_model", "num_labels", "optimizer", "lr", "loss",
                  "from_logits"),
    Event.STEP: ("step", "loss", "lr"),  # loss: number, or "nan"/"inf" as a string
    # samples: [{index, label, loss}] of the first non-finite batch (nan-loss)
    Event.SYMPTOM: ("kind", "step", "evidence", "num_classes", "num_labels", "samples",
                    "analysis_error"),
    Event.NUM_CLASSES: ("value",),
    Event.BUDGET_REACHED: ("step",),
    Event.EARLY_EVAL: ("rows",),
    Event.PROBE_ERROR: ("where", "message"),  # a probe failed; the script ran on
    Event.EXIT: ("code", "stopped"),
    # a preflight check that failed (issue 10): the check's name and the exception the
    # run would raise (as ``exception``)
    Event.FINDING: ("check", "type", "message", "frames", "chain"),
    # a dataset split cut for a diagnosis run (--sample-rows), with the whole split's
    # label range
    Event.SAMPLED: ("origin", "split", "rows", "kept", "label_column", "label_min",
                    "label_max"),
}


class AutofixStop(BaseException):
    """Raised into a hand-written loop to end the run cleanly (budget reached or symptom
    confirmed); the bootstrap turns it into exit code 0."""


class State:
    steps = 0
    stop = ""  # "", "budget" or "symptom"
    in_trainer = 0  # >0 while Trainer.train runs: its own probe records the steps
    evaluated = False  # the early evaluation ran (once per run)
    preflighted = False  # the preflight checks ran (once per run, at the first train())
    pending_loss: float | None = None  # last scalar given to Tensor.backward
    last_batch: Any = None  # (labels, logits, num_labels) of the last HF forward with labels
    monitor = LossMonitor()


def emit(event: str, **data: Any) -> None:
    """Append one event (a name of :class:`Event`, the fields of :data:`EVENTS`) to the
    probe file; never raises into the user's script."""
    if not PROBE_FILE:
        return
    try:
        with open(PROBE_FILE, "a", encoding="utf-8") as fh:
            ranked = {"rank": RANK} if RANK is not None else {}
            fh.write(json.dumps({"event": event, **ranked, **data}, default=repr) + "\n")
    except Exception:  # noqa: BLE001 - the probe must never break the script
        pass


def set_num_classes(num_classes: Any) -> None:
    """Tell the monitor the model's number of classes (first one seen wins)."""
    if State.monitor.num_classes is None and isinstance(num_classes, int) and num_classes > 1:
        State.monitor.num_classes = num_classes
        emit(Event.NUM_CLASSES, value=num_classes)


def _json_number(value: float | None) -> Any:
    return value if value is None or math.isfinite(value) else str(value)


def record_step(loss: float | None, lr: float | None) -> bool:
    """Record one optimizer step; True when training must stop now (budget or symptom)."""
    State.steps += 1
    step = State.steps
    emit(Event.STEP, step=step, loss=_json_number(loss), lr=lr)
    if loss is not None:
        symptom = State.monitor.add(loss)
        if symptom is not None:
            analysis = batch_analysis() if symptom.kind == "nan-loss" else {}
            emit(Event.SYMPTOM, kind=symptom.kind, step=symptom.step, evidence=symptom.evidence,
                 num_classes=State.monitor.num_classes, **analysis)
            State.stop = "symptom"
            return True
    if MAX_STEPS and step >= MAX_STEPS:
        emit(Event.BUDGET_REACHED, step=step)
        State.stop = "budget"
        return True
    return False


def batch_analysis() -> dict[str, Any]:
    """The course's NaN method: per-sample losses of the offending batch against its labels
    and the model's ``num_labels``. Empty when no batch was captured."""
    if State.last_batch is None:
        return {}
    try:
        import torch

        labels, logits, num_labels = State.last_batch
        flat = labels.reshape(-1).tolist()
        logits2 = logits.float().reshape(len(flat), -1)
        width = logits2.shape[-1]
        safe = labels.reshape(-1).clamp(0, width - 1)
        per = torch.nn.functional.cross_entropy(logits2, safe, reduction="none").tolist()
        samples = []
        for i, label in enumerate(flat):
            valid = 0 <= label < width
            samples.append({"index": i, "label": label,
                            "loss": _json_number(per[i]) if valid else None})
        return {"samples": samples, "num_labels": num_labels}
    except Exception as exc:  # noqa: BLE001
        return {"analysis_error": repr(exc)}
