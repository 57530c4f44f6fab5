"""The execution evidence of each optimizer step, read for :mod:`evidence` (stdlib at import).

PyTorch (Trainer and hand loops alike: the optimizer's global step hooks): before
``optimizer.step()`` a sample of the trained model's trainable tensors is copied
(:data:`evidence.SAMPLE_PARAMS` tensors, a strided slice of about
:data:`evidence.SAMPLE_VALUES` values each; weight matrices first, embeddings last) with
the state of their gradients (missing, all zero, or not); after it the same slices are
read again: whether anything changed, and the update-to-weight ratio of each matrix. The
trained model is the Hugging Face model last called in training mode (the Trainer's own,
or a hand loop's); with none, the optimizer's own trainable parameters are sampled. The
learning rate is the largest over the parameter groups, and ``scheduler.step()`` is
followed through ``last_epoch`` of the optimizer's scheduler. Keras ``fit``: the same slices
of ``model.trainable_variables`` around each batch (gradients are not seen there).

Cost per step: a sum over up to 8 gradients and two copies of 8 small slices (about 2,000
numbers), whatever the model's size. Torch and TensorFlow are used only through the
objects handed to the hooks. A failing read never breaks the script: the step just has
no evidence.
"""

from __future__ import annotations

import math
import types
from typing import Any

from . import chance, modes, schedules
from .contract import Event
from .events import State, emit
from .evidence import (
    GRADS_NONE,
    GRADS_SOME,
    GRADS_UNKNOWN,
    GRADS_ZERO,
    SAMPLE_PARAMS,
    SAMPLE_VALUES,
    WINDOW,
    EvidenceMonitor,
    ModelFacts,
    StepEvidence,
    median,
    update_ratio,
)
from .symptoms import LossMonitor

#: A first dimension this large is a vocabulary (an embedding, an LM head): its rows are
#: mostly untouched by a batch, so it is sampled last and never enters the ratio.
VOCAB_ROWS = 10_000


class _Step:
    """What the pre-step read left for the post-step read (one optimizer at a time)."""

    optimizer: int = 0  # id of the optimizer being stepped
    sample: list[tuple[Any, bool, list[float]]] = []  # (tensor, matrix, values before)
    grads = GRADS_UNKNOWN
    in_optimizer: int | None = None
    backward = 0  # State.backward_calls at the previous step
    zero_grad = 0
    schedulers: dict[int, Any] = {}  # id(optimizer) -> its lr scheduler
    facts_at = -WINDOW  # the step the model facts were last taken at
    #: the parameter sets (ids of the tensors) of the optimizers stepped so far, in order;
    #: the last is the current training phase's
    phases: list[frozenset[int]] = []
    current: frozenset[int] = frozenset()  # the parameters of the optimizer stepped last
    offset = 0  # the optimizer steps before the current phase began
    interleaved = False  # optimizers over different parameters take turns (a GAN)


def _strided(tensor: Any) -> Any:
    """A strided slice of ``tensor`` with about :data:`SAMPLE_VALUES` values (a view)."""
    shape = tuple(tensor.shape)
    if len(shape) == 2:
        side = int(math.sqrt(SAMPLE_VALUES))
        return tensor[::max(1, -(-shape[0] // side)), ::max(1, -(-shape[1] // side))]
    flat = tensor.reshape(-1) if len(shape) != 1 else tensor
    return flat[::max(1, -(-int(flat.shape[0]) // SAMPLE_VALUES))]


def _values(tensor: Any) -> list[float]:
    """The sampled values of a torch tensor, as Python floats (a copy)."""
    return [float(x) for x in _strided(tensor.detach()).float().reshape(-1).tolist()]


def _matrix(name: str, shape: tuple[int, ...]) -> bool:
    """A weight matrix that enters the update ratio (not an embedding or a vocabulary)."""
    return len(shape) == 2 and shape[0] < VOCAB_ROWS and "embed" not in name.lower()


def choose(named: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Up to :data:`SAMPLE_PARAMS` of ``named`` (name, tensor): weight matrices first,
    spread evenly over the list (the first and the last layers included), then other
    tensors when there are too few matrices."""
    matrices = [(n, t) for n, t in named if _matrix(n, tuple(t.shape))]
    rest = [(n, t) for n, t in named if not _matrix(n, tuple(t.shape))]
    out: list[tuple[str, Any]] = []
    for pool in (matrices, rest):
        room = SAMPLE_PARAMS - len(out)
        if room <= 0 or not pool:
            continue
        if len(pool) <= room:
            out.extend(pool)
        else:
            out.extend(pool[round(i * (len(pool) - 1) / (room - 1))] if room > 1 else pool[0]
                       for i in range(room))
    return out


def _trained_model() -> Any:
    """The Hugging Face model last called in training mode, else the model of the user's
    last outermost forward in training mode that recorded a graph (:mod:`modes`: a plain
    ``nn.Module`` of a hand loop), else ``None``."""
    model = chance.Task.last_model
    if model is not None and getattr(model, "training", False):
        return model
    model = modes.Modes.last_trained
    return model if model is not None and getattr(model, "training", False) else None


def _lr(groups: list[dict[str, Any]]) -> float | None:
    rates = []
    for group in groups:
        try:
            rates.append(float(group.get("lr")))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
    return max(rates) if rates else None


def _model_facts(model: Any, optimizer_name: str, params: list[tuple[str, Any]]) -> ModelFacts:
    total = trainable = 0
    adapter = hasattr(model, "peft_config")
    source = model.named_parameters() if model is not None else params
    for name, tensor in source:
        count = int(tensor.numel())
        total += count
        if getattr(tensor, "requires_grad", True):
            trainable += count
            adapter = adapter or "lora_" in name
    config = getattr(model, "config", None)
    pretrained = bool(getattr(config, "_name_or_path", "") or getattr(model, "name_or_path", ""))
    return ModelFacts(trainable, total, pretrained, adapter,
                      "adam" in optimizer_name.lower(), optimizer_name)


def before_step(optimizer: Any, args: Any, kwargs: Any) -> None:
    """Optimizer step pre-hook: copy the sample and read its gradients."""
    _Step.sample = []
    if State.stop:
        return
    try:
        _Step.optimizer = id(optimizer)
        groups = optimizer.param_groups
        held = frozenset(id(p) for group in groups for p in group["params"])
        new_phase(held)
        model = _trained_model()
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad] \
            if model is not None else []
        if not named:  # a frozen pretrained encoder inside the user's own model: not the
            model = None  # trained model, whose parameters the optimizer holds
        if model is not None:
            inside = [(n, p) for n, p in named if id(p) in held]
            _Step.in_optimizer = len(inside)
            pool = inside or named
        else:
            _Step.in_optimizer = None
            pool = [(f"param{i}", p) for i, p in
                    enumerate(p for group in groups for p in group["params"]) if p.requires_grad]
        if State.steps + 1 - _Step.facts_at >= WINDOW:
            _Step.facts_at = State.steps + 1
            State.evidence.model = _model_facts(model, type(optimizer).__name__, pool)
        sample = choose(pool)
        # the gradients the optimizer steps on: the sample's, or when it holds none of the
        # model's tensors, its own (another model trained on purpose has them: a student)
        stepped = sample if _Step.in_optimizer != 0 else choose(
            [(f"param{i}", p) for i, p in
             enumerate(p for group in groups for p in group["params"]) if p.requires_grad])
        present, total = 0, 0.0
        for _, tensor in stepped:
            grad = tensor.grad
            if grad is not None:
                present += 1
                total += float(grad.detach().abs().sum())
        _Step.grads = GRADS_NONE if not present else \
            GRADS_ZERO if total == 0.0 else GRADS_SOME  # NaN/inf count as "some"
        _Step.sample = [(t, _matrix(n, tuple(t.shape)), _values(t)) for n, t in sample]
    except Exception as exc:  # noqa: BLE001 - the probe must never break the script
        _Step.sample = []
        emit(Event.PROBE_ERROR, where="step_probe.before_step", message=repr(exc))


def new_phase(held: frozenset[int]) -> None:
    """Follow the training phases by the parameters each stepped optimizer holds.

    An optimizer over the same parameters as the last one (one made again each epoch)
    continues the phase. One over other parameters starts a new phase (a head fitted after
    pretraining, a second stage): the step evidence and the loss monitor start again, its
    chance level kept until the loss shows another (:mod:`chance`). Parameters of an
    earlier phase stepped again mean optimizers taking turns (a GAN's generator and
    discriminator): the evidence of one step no longer describes the training, and none is
    recorded from then on."""
    if _Step.current == held:
        return
    if held in _Step.phases:
        _Step.interleaved = True
    else:
        if _Step.phases and not _Step.interleaved:
            State.evidence = EvidenceMonitor()
            State.monitor = LossMonitor(level=State.monitor.level)
            _Step.offset = State.steps
            _Step.facts_at = State.steps + 1 - WINDOW
        _Step.phases.append(held)
    _Step.current = held


def compare(sample: list[tuple[Any, bool, list[float]]], read: Any
            ) -> tuple[bool, float | None]:
    """Read each sampled tensor again (``read``): whether any value changed, and the
    median update-to-weight ratio of the matrices (``None``: none sampled)."""
    changed, ratios = False, []
    for tensor, matrix, before in sample:
        after = read(tensor)
        changed = changed or after != before
        ratio = update_ratio(before, after) if matrix else None
        if ratio is not None:
            ratios.append(ratio)
    return changed, median(ratios) if ratios else None


def after_step(optimizer: Any, args: Any, kwargs: Any) -> None:
    """Optimizer step post-hook: compare the sample, record the step's evidence."""
    if not _Step.sample or id(optimizer) != _Step.optimizer or State.stop:
        return
    try:
        changed, ratio = compare(_Step.sample, _values)
        scheduler = _Step.schedulers.get(id(optimizer))
        epoch = getattr(scheduler, "last_epoch", None)
        backward, zero_grad = State.backward_calls, State.zero_grad_calls
        record = StepEvidence(
            step=_Step.offset + len(State.evidence.records) + 1, sampled=len(_Step.sample),
            changed=changed,
            grads=_Step.grads, lr=_lr(optimizer.param_groups),
            ratio=ratio,
            in_optimizer=_Step.in_optimizer, backward=backward > _Step.backward,
            zero_grad=zero_grad > _Step.zero_grad,
            scheduler_steps=epoch if isinstance(epoch, int) else None)
        _Step.backward, _Step.zero_grad = backward, zero_grad
        if not _Step.interleaved:  # one optimizer at a time: the evidence is the training's
            State.evidence.add(record)
    except Exception as exc:  # noqa: BLE001 - the probe must never break the script
        emit(Event.PROBE_ERROR, where="step_probe.after_step", message=repr(exc))
    finally:
        _Step.sample = []


def patch_optimizer(module: types.ModuleType) -> None:
    """Register the global step hooks (before the step-recording probe's post-hook, so a
    hand loop's step is judged with its own evidence)."""
    module.register_optimizer_step_pre_hook(before_step)
    module.register_optimizer_step_post_hook(after_step)


def patch_scheduler(module: types.ModuleType) -> None:
    """Remember each optimizer's lr scheduler (``LRScheduler.step`` records it), and each
    call the user's code makes (:func:`schedules.note_call`)."""
    base = getattr(module, "LRScheduler", None) or getattr(module, "_LRScheduler", None)
    if base is None or getattr(base.step, "_autofix", False):
        return
    original = base.step

    def step(self: Any, *args: Any, **kwargs: Any) -> Any:
        optimizer = getattr(self, "optimizer", None)
        if optimizer is not None:
            _Step.schedulers[id(optimizer)] = self
        try:
            schedules.note_call(self, State.steps)
        except Exception as exc:  # noqa: BLE001 - the probe must never break the script
            emit(Event.PROBE_ERROR, where="step_probe.scheduler", message=repr(exc))
        return original(self, *args, **kwargs)

    step._autofix = True  # type: ignore[attr-defined]
    base.step = step


# --- Keras ------------------------------------------------------------------------------


class _Keras:
    sample: list[tuple[Any, bool, list[float]]] = []
    chosen: list[tuple[str, Any]] = []
    model: int = 0


def _tf_values(variable: Any) -> list[float]:
    return [float(x) for x in _strided(variable).numpy().reshape(-1).tolist()]


def keras_before(model: Any) -> None:
    """Before a Keras training batch: copy the sample of ``model.trainable_variables``."""
    _Keras.sample = []
    if State.stop:
        return
    try:
        if _Keras.model != id(model) or not _Keras.chosen:
            _Keras.model = id(model)
            variables = [(getattr(v, "path", None) or v.name, v)
                         for v in model.trainable_variables if len(v.shape) in (1, 2)]
            _Keras.chosen = choose(variables)
            trainable = sum(_count(v) for v in model.trainable_variables)
            frozen = sum(_count(v) for v in getattr(model, "non_trainable_variables", []))
            config = getattr(model, "config", None)
            optimizer = getattr(model, "optimizer", None)
            name = type(getattr(optimizer, "inner_optimizer", optimizer)).__name__
            State.evidence.model = ModelFacts(
                trainable, trainable + frozen, bool(getattr(config, "_name_or_path", "")),
                False, "adam" in name.lower(), name)
        _Keras.sample = [(v, _matrix(n, tuple(v.shape)), _tf_values(v))
                         for n, v in _Keras.chosen]
    except Exception as exc:  # noqa: BLE001 - the probe must never break the script
        _Keras.sample = []
        emit(Event.PROBE_ERROR, where="step_probe.keras_before", message=repr(exc))


def _count(variable: Any) -> int:
    count = 1
    for dim in variable.shape:
        count *= int(dim)
    return count


def keras_after(lr: float | None) -> None:
    """After the batch: compare the sample and record the step (``lr``: the optimizer's)."""
    if not _Keras.sample or State.stop:
        return
    try:
        changed, ratio = compare(_Keras.sample, _tf_values)
        State.evidence.add(StepEvidence(
            step=len(State.evidence.records) + 1, sampled=len(_Keras.sample), changed=changed,
            lr=lr, ratio=ratio))
    except Exception as exc:  # noqa: BLE001 - the probe must never break the script
        emit(Event.PROBE_ERROR, where="step_probe.keras_after", message=repr(exc))
    finally:
        _Keras.sample = []
