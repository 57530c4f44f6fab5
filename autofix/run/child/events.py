"""The probe's event stream and step bookkeeping, shared by every training probe.

Events are JSON lines appended to ``AUTOFIX_PROBE_FILE``: ``{"event": NAME, **payload}``,
with the names and payload fields of the contract (:mod:`contract`). It runs inside the
user's interpreter, so it is standard library only. ``record_step`` is called once per
optimizer step by whichever probe sees the training (Trainer, Keras, a hand-written
PyTorch loop); it feeds the symptom monitor and decides when training must stop.
"""

from __future__ import annotations

import json
import math
import traceback
from collections import deque
from collections.abc import Mapping
from typing import Any

from .call_contracts import breach_at
from .contract import Env, Event
from .evidence import EvidenceMonitor
from .facts import frame_facts
from .symptoms import Chance, LossMonitor, extended_budget

#: The run's switches, set by the bootstrap from the environment the parent gave
#: (:func:`configure`); nothing is read at import.
PROBE_FILE = ""
REPO_ROOT = ""  # the user's repository (frames in its files are the user's)
MAX_STEPS = 0
#: The process's rank under torchrun / accelerate launch (None: a single process).
RANK: int | None = None


#: A stall verdict is recorded (``would_stop`` event) but training goes on, so the
#: whole curve is seen (benchmarks replay it; autofix itself never sets this).
RECORD_ONLY = False


def configure(environ: Mapping[str, str]) -> None:
    """Set the probe file, step budget, rank and record-only switch from ``environ`` (the
    variable names of :class:`Env`); the bootstrap calls this before the script runs."""
    global PROBE_FILE, MAX_STEPS, RANK, RECORD_ONLY, REPO_ROOT
    PROBE_FILE = environ.get(Env.PROBE_FILE, "")
    REPO_ROOT = environ.get(Env.REPO_ROOT, "")
    MAX_STEPS = int(environ.get(Env.MAX_STEPS, "0") or 0)
    RANK = int(environ["RANK"]) if environ.get("RANK", "").isdigit() \
        and int(environ.get("WORLD_SIZE", "1") or 1) > 1 else None
    RECORD_ONLY = environ.get(Env.RECORD_ONLY, "") == "1"
    State.limit = MAX_STEPS


#: Training forwards whose argmax predictions and labels are kept for the
#: ``constant-prediction`` finding (the stall rule's window: the last 10 steps).
RECENT_BATCHES = 10


class AutofixStop(BaseException):
    """Raised into a hand-written loop to end the run cleanly (budget reached or symptom
    confirmed); the bootstrap turns it into exit code 0."""


class State:
    steps = 0
    stop = ""  # "", "budget" or "symptom"
    limit = 0  # the step budget (configure), raised once when the verdict is unclear
    stall_seen = False  # record-only mode: a stall verdict was already recorded
    in_trainer = 0  # >0 while Trainer.train runs: its own probe records the steps
    total = 0  # the script's own length in steps, 0 when unknown (plan.py)
    evaluated = False  # the early evaluation ran (once per run)
    preflighted = False  # the preflight checks ran (once per run, at the first train())
    pending_loss: float | None = None  # last scalar given to Tensor.backward
    last_batch: Any = None  # (labels, logits, num_labels) of the last HF forward with labels
    monitor = LossMonitor()
    evidence = EvidenceMonitor()  # what each optimizer step showed (step_probe.py)
    backward_calls = 0  # Tensor.backward on a scalar outside Trainer (hand loops)
    zero_grad_calls = 0  # optimizer.zero_grad / model.zero_grad outside Trainer
    model_facts: dict[str, Any] = {}  # parameter counts and dtype, taken once
    #: the last outermost forward of a model (a module with parameters, not a loss module)
    #: from the user's code (modes.py): ``grad``
    #: (gradients on), ``graph`` (an output requires grad), ``training`` (the mode)
    last_forward: dict[str, bool] = {}
    #: (argmax predictions, labels) of the last training forwards of a classifier
    recent: deque[tuple[list[int], list[int]]] = deque(maxlen=RECENT_BATCHES)


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
    """Tell the monitor a classifier's number of classes when no chance level is known yet
    (Keras: the Hugging Face model's ``num_labels``; PyTorch measures it at the loss,
    :mod:`chance`)."""
    if State.monitor.level is None and isinstance(num_classes, int) and num_classes > 1:
        set_chance(Chance.of_classes(num_classes))


#: Relative change of the chance level (a token entropy still being counted) that is
#: worth a new ``chance`` event; the last value is always sent when the script ends
#: (:func:`closing.train_facts`).
CHANCE_TOLERANCE = 0.005


class _Sent:
    chance: Chance | None = None  # the last chance level emitted


def set_chance(level: Chance) -> None:
    """Judge the run against ``level`` from now on (event ``chance``; ``num_classes`` too
    for a classifier, which the reports name)."""
    old = State.monitor.level
    State.monitor.set_level(level)
    if old is None or old.kind != level.kind or old.classes != level.classes:
        if level.classes and level.kind == "classes":
            emit(Event.NUM_CLASSES, value=level.classes)
    emit_chance()


def emit_chance(force: bool = False) -> None:
    """Emit the monitor's chance level (event ``chance``) when it moved by more than
    :data:`CHANCE_TOLERANCE` since the last one sent, or, with ``force``, whenever it differs
    from that one."""
    level, sent = State.monitor.level, _Sent.chance
    if level is None:
        return
    if force or sent is None or sent.kind != level.kind \
            or abs(level.value - sent.value) > CHANCE_TOLERANCE * sent.value:
        if sent == level:
            return
        _Sent.chance = level
        emit(Event.CHANCE, **level.to_json())


def _json_number(value: float | None) -> Any:
    return value if value is None or math.isfinite(value) else str(value)


def record_step(loss: float | None, lr: float | None) -> bool:
    """Record one optimizer step; True when training must stop now (budget or symptom).

    At the step budget an unclear run (the loss not clearly under chance, nothing
    confirmed) is extended once by ``EXTENSION`` x the budget (event ``budget_extended``);
    at the end of the budget the monitor's final verdict is a ``symptom`` or a ``finding``
    (``learning-slowly``, not a failure).
    """
    State.steps += 1
    step = State.steps
    emit(Event.STEP, step=step, loss=_json_number(loss), lr=lr, total=State.total)
    if loss is not None:
        symptom = State.monitor.add(loss, lr) or _step_verdict()
        if symptom is not None and confirm(symptom):
            return True
    if MAX_STEPS and step >= State.limit:
        if State.limit == MAX_STEPS and State.monitor.should_extend():
            State.limit = extended_budget(MAX_STEPS)
            emit("budget_extended", step=step, limit=State.limit,
                 window_mean=_json_number(State.monitor.window_mean()),
                 reason="the loss is not clearly under the chance level yet and no stall "
                        "is proven: training goes on before the verdict")
            return False
        final = State.monitor.final()
        if final is not None and final.kind == "learning-slowly":
            emit("finding", kind=final.kind, step=final.step, evidence=final.evidence)
        elif final is not None and confirm(final):
            return True
        emit(Event.BUDGET_REACHED, step=step)
        State.stop = "budget"
        return True
    return False


def _step_verdict() -> Any:
    """The execution evidence's verdict (:mod:`evidence`), once: its symptom, with the
    ``step_evidence`` event naming the cause; ``None`` when the evidence shows nothing."""
    if State.stall_seen or State.stop:
        return None
    verdict = State.evidence.judge(State.monitor)
    if verdict is None:
        return None
    emit(Event.STEP_EVIDENCE, cause=verdict.cause, step=verdict.symptom.step,
         evidence=verdict.symptom.evidence, **State.evidence.summary(State.monitor))
    return verdict.symptom


def confirm(symptom: Any) -> bool:
    """Emit a confirmed symptom (a :class:`symptoms.Symptom`: event ``symptom``, or
    ``would_stop`` once in record-only mode); True when training must stop for it."""
    if RECORD_ONLY and symptom.kind != "nan-loss":
        if not State.stall_seen:
            State.stall_seen = True
            emit("would_stop", kind=symptom.kind, step=symptom.step, evidence=symptom.evidence)
        return False
    analysis = batch_analysis() if symptom.kind == "nan-loss" else {}
    emit("symptom", kind=symptom.kind, step=symptom.step, evidence=symptom.evidence,
         num_classes=State.monitor.num_classes, **analysis)
    State.stop = "symptom"
    return True


def note_predictions(labels: Any, logits: Any) -> None:
    """Keep the argmax predictions and labels of one training forward of a classifier
    (``logits`` [batch, C >= 2], integer ``labels`` [batch]; rows labelled -100 left out)
    for the ``constant-prediction`` finding. Anything else (token classification,
    regression, float targets) is ignored. Costs one argmax over the logits."""
    if State.stop:
        return
    try:
        if logits.dim() != 2 or logits.shape[-1] < 2 or labels.dim() != 1 \
                or labels.is_floating_point() or labels.shape[0] != logits.shape[0]:
            return
        preds = logits.argmax(-1).tolist()
        ys = labels.tolist()
        kept = [(p, y) for p, y in zip(preds, ys, strict=False) if y >= 0]
        State.recent.append(([p for p, _ in kept], [y for _, y in kept]))
    except Exception:  # noqa: BLE001 - the probe must never break the script
        pass


def note_model(model: Any) -> None:
    """Take the model's trainable/total parameter counts and first dtype (once a run)."""
    if State.model_facts or model is None:
        return
    try:
        params = list(model.parameters())
        State.model_facts = {
            "params_total": sum(p.numel() for p in params),
            "params_trainable": sum(p.numel() for p in params if p.requires_grad),
            "param_dtype": str(params[0].dtype) if params else "",
        }
    except Exception as exc:  # noqa: BLE001
        State.model_facts = {"model_facts_error": repr(exc)}


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


def trimmed_traceback(exc: BaseException, skip: str = "") -> Any:
    """``exc``'s traceback without the frames of the file ``skip`` at its root."""
    tb = exc.__traceback__
    while tb is not None and skip and tb.tb_frame.f_code.co_filename == skip:
        tb = tb.tb_next
    return tb


def describe_exception(exc: BaseException, depth: int = 0, *, skip: str = "",
                       **extra: Any) -> dict[str, Any]:
    """``exc`` as an ``exception``/``preflight`` event's fields: ``type`` (qualified class
    name), ``message``, ``frames`` (file, line, function, text; innermost last; a
    ``SyntaxError`` adds the line it points at), ``chain`` (the cause or context, at most 5
    deep) and ``facts`` (what the objects in the frames that matter were:
    :func:`facts.frame_facts`), plus ``extra`` (e.g. ``check=`` for a preflight finding) at
    every level. Frames of the file ``skip`` at the traceback's root (the probe's own) are
    left out."""
    frames = [{"file": f.filename, "line": f.lineno or 0, "function": f.name,
               "text": f.line or ""} for f in traceback.extract_tb(trimmed_traceback(exc, skip))]
    if isinstance(exc, SyntaxError) and exc.filename:
        frames.append({"file": exc.filename, "line": exc.lineno or 0, "function": "<module>",
                       "text": (exc.text or "").rstrip("\n")})
    inner = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    chain = [describe_exception(inner, depth + 1, skip=skip, **extra)] \
        if inner is not None and depth < 5 else []
    kind = type(exc)
    return {**extra, "type": f"{kind.__module__}.{kind.__qualname__}", "message": str(exc),
            "frames": frames, "chain": chain,
            "facts": frame_facts(exc.__traceback__, REPO_ROOT, skip),
            "contract": breach_at(exc.__traceback__, REPO_ROOT),
            "forward": dict(State.last_forward)}
