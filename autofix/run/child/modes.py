"""Forwards whose output is not trained on, made in training mode: dropout and batch norm
left on for an evaluation.

The invariant (TrainCheck's idea, OSDI '25: checked on the run's real objects): every
forward of the user's model whose output is not backpropagated runs in eval mode. A model
evaluated without ``model.eval()`` keeps dropping units (its accuracy lower than the
model's, changing from one evaluation to the next) and normalises with each test batch's
own statistics while updating the running ones from the test data (PyTorch's
``nn.Module.eval`` docs: "This has an effect only on certain modules ... e.g. Dropout,
BatchNorm"). Whether ``torch.no_grad()`` is on does not matter: a module-level evaluation
after the loop, an ``evaluate()`` helper or a predict step that forgets ``model.eval()``
are the same fault.

Each outermost module call (the model) made from the user's own code outside ``Trainer``
is watched (global forward hooks; :func:`patch_module`), for a model that holds a layer
acting differently in training (``Dropout`` with ``p > 0`` and its variants, a
``BatchNorm`` keeping running statistics: :func:`varies`; a model without one is the same
in both modes, so it gives no finding):

* in training mode with gradients off: an evaluation in training mode (``no_grad``);
* in training mode with gradients on and an output that requires grad: the output's
  tensors get a gradient hook, which fires when a ``backward()`` reaches them. A call line
  (the user's innermost frames) none of whose forwards was ever backpropagated by the end
  of the run is an evaluation in training mode; one that was, even once, trains (gradient
  accumulation, a loss computed later, a frozen part inside the model are all
  backpropagated). An output that requires no grad (a frozen model) is never judged.

Forwards not trained on (eval mode, or gradients off) of a model that forwards were trained
on (not a teacher's) are the hand loop's evaluations for :mod:`phases`. The counts and the
sites (file relative to the repository, line, the function, the model's class, its first
varying layer, forwards, ``no_grad``) go into the ``train_facts`` event (:func:`facts`).
A watched call costs a depth counter per module call and one stack walk per outermost
call.

Standard library only; torch is patched when it is imported (``probes.HOOKS``).
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

from . import events, phases
from .events import State
from .numeric import is_user_file

#: Lines kept that made forwards in training mode that were not trained on.
MAX_SITES = 5
#: Call sites of training-mode forwards followed (training and evaluation alike).
MAX_WATCHED = 50
#: Output tensors hooked per forward.
MAX_OUTPUTS = 4
#: The user's innermost frames that name a call site (a helper called from training and
#: from evaluation is two sites).
SITE_DEPTH = 3

#: Layer classes that act differently in training (by class name, torch.nn's).
DROPOUTS = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
            "FeatureAlphaDropout")
BATCH_NORMS = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm",
               "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d")

_TORCH_NN = os.path.join("torch", "nn", "modules")
#: The probe's own folder: its wrappers of a model call (``probes.patch_modeling``) sit
#: between the user's call and torch's.
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep


class Modes:
    depth = 0  # module calls in progress
    root: dict[str, Any] | None = None  # the outermost call being watched
    train_calls = 0  # outermost forwards under no_grad in training mode (varying models)
    eval_calls = 0  # outermost forwards under no_grad in eval mode
    #: site key -> {file, line, function, model, layer, forwards, backpropagated, no_grad}
    watched: dict[tuple[Any, ...], dict[str, Any]] = {}
    varying: dict[int, str] = {}  # id(model) -> its first varying layer's class ("": none)
    trained: set[int] = set()  # ids of the models a forward was trained on (not a teacher)
    #: the model of the last outermost forward in training mode with gradients on whose
    #: output requires grad (the model a hand loop trains; read by the step evidence)
    last_trained: Any = None


def relative(path: str) -> str:
    """``path`` relative to the user's repository when it lies inside it, else absolute."""
    root = os.path.abspath(events.REPO_ROOT) if events.REPO_ROOT else ""
    full = os.path.abspath(path)
    return os.path.relpath(full, root) if root and full.startswith(root + os.sep) else full


def varies(model: Any) -> str:
    """The class name of the first layer of ``model`` that acts differently in training
    mode (a dropout with ``p > 0``, a batch norm that keeps running statistics), ``""``
    when it has none (cached per model)."""
    key = id(model)
    found = Modes.varying.get(key)
    if found is None:
        found = ""
        for layer in model.modules():
            name = type(layer).__name__
            if (name in DROPOUTS and float(getattr(layer, "p", 0) or 0) > 0) or \
                    (name in BATCH_NORMS and getattr(layer, "track_running_stats", True)):
                found = name
                break
        Modes.varying[key] = found
    return found


def _caller() -> Any:
    """The frame that made the outermost module call in progress (the first frame outside
    torch's module machinery and the probe's own wrappers)."""
    frame: Any = sys._getframe(2)
    while frame is not None and (frame.f_code.co_filename.startswith(_HERE)
                                 or _TORCH_NN in frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _site(frame: Any) -> tuple[Any, ...]:
    """The call site: the user's innermost :data:`SITE_DEPTH` frames (file, line)."""
    key: list[Any] = []
    while frame is not None and len(key) < 2 * SITE_DEPTH:
        if is_user_file(frame.f_code.co_filename):
            key += [frame.f_code.co_filename, frame.f_lineno]
        frame = frame.f_back
    return tuple(key)


def before_forward(module: Any, args: Any) -> None:
    """Global forward pre-hook: at an outermost call from the user's code (outside
    ``Trainer``), note the model, its mode and whether gradients are on."""
    Modes.depth += 1
    if Modes.depth != 1:
        return
    Modes.root = None
    if State.in_trainer or State.stop:
        return
    try:
        caller = _caller()
        if caller is None or not is_user_file(caller.f_code.co_filename):
            return
        Modes.root = {"model": module, "training": bool(module.training),
                      "grad": _grad_enabled(), "caller": caller}
    except Exception:  # noqa: BLE001, S110 - the probe must never break the script
        pass


def after_forward(module: Any, args: Any, *rest: Any) -> None:
    """Global forward hook (always called): at the end of the watched outermost call,
    judge it (:func:`_judge`). ``rest`` is ``(kwargs, output)``, or ``(None,)`` when the
    forward raised (torch then calls the hook without the keyword arguments)."""
    Modes.depth = max(0, Modes.depth - 1)
    kwargs, output = rest if len(rest) == 2 else ({}, None)
    root = Modes.root
    if Modes.depth or root is None or root["model"] is not module:
        return
    Modes.root = None
    if output is None:
        return
    try:
        _judge(root, kwargs or {}, output)
    except Exception as exc:  # noqa: BLE001 - the probe must never break the script
        events.emit("probe_error", where="modes.after_forward", message=repr(exc))


def _judge(root: dict[str, Any], kwargs: dict[str, Any], output: Any) -> None:
    model, caller = root["model"], root["caller"]
    if next(iter(model.parameters()), None) is not None:  # a model, not a loss module
        State.last_forward = {
            "grad": bool(root["grad"]), "training": bool(root["training"]),
            "graph": any(getattr(t, "requires_grad", False) for t in _tensors(output))}
    if root["training"] and root["grad"]:
        tensors = [t for t in _tensors(output) if getattr(t, "requires_grad", False)]
        if not tensors:
            return  # a frozen model: its output cannot be trained on
        Modes.trained.add(id(model))
        Modes.last_trained = model
        layer = varies(model)
        site = _watch(_site(caller), caller, model, layer, no_grad=False) if layer else None
        if site is None or site["backpropagated"]:
            return

        def backpropagated(grad: Any, _site: dict[str, Any] = site) -> None:
            _site["backpropagated"] += 1

        for tensor in tensors[:MAX_OUTPUTS]:
            tensor.register_hook(backpropagated)
        return
    if id(model) in Modes.trained:  # the trained model, not a teacher: an evaluation
        phases.eval_forward(model, kwargs, output)
    if not root["training"]:
        if not root["grad"]:
            Modes.eval_calls += 1
        return
    layer = varies(model)
    if layer:
        Modes.train_calls += 1
        _watch((caller.f_code.co_filename, caller.f_lineno, "no_grad"), caller, model,
               layer, no_grad=True)


def _watch(key: tuple[Any, ...], caller: Any, model: Any, layer: str, no_grad: bool
           ) -> dict[str, Any] | None:
    site = Modes.watched.get(key)
    if site is None:
        if len(Modes.watched) >= MAX_WATCHED:
            return None
        site = Modes.watched[key] = {
            "file": relative(caller.f_code.co_filename), "line": caller.f_lineno,
            "function": caller.f_code.co_name, "model": type(model).__name__,
            "layer": layer, "calls": 0, "backpropagated": 0, "no_grad": no_grad,
            "after_step": State.steps}
    site["calls"] += 1
    return site


def _tensors(output: Any) -> list[Any]:
    """The tensors of a module's output: itself, the items of a tuple or list, the values
    of a mapping (a ``ModelOutput``), one level deep."""
    if hasattr(output, "register_hook"):
        return [output]
    values = output.values() if hasattr(output, "values") and callable(output.values) \
        else output if isinstance(output, (tuple, list)) else ()
    return [v for v in values if hasattr(v, "register_hook")]


def _grad_enabled() -> bool:
    torch_c = sys.modules.get("torch._C")
    return bool(torch_c.is_grad_enabled()) if torch_c is not None else True


def patch_module(module: types.ModuleType) -> None:
    """``torch.nn.modules.module``: the global forward hooks (:func:`before_forward`,
    :func:`after_forward`, the latter always called, so the depth stays right when a
    forward raises)."""
    module.register_module_forward_pre_hook(before_forward)
    module.register_module_forward_hook(after_forward, with_kwargs=True, always_call=True)


def facts() -> dict[str, Any]:
    """The ``train_facts`` fields: ``no_grad_train_calls`` / ``no_grad_eval_calls``
    (outermost forwards under no_grad in training / eval mode) and ``train_mode_evals``:
    the first :data:`MAX_SITES` call sites whose forwards ran in training mode and were
    never trained on (``no_grad``, or never reached by a ``backward()``)."""
    sites = [dict(s) for s in Modes.watched.values()
             if s["no_grad"] or not s["backpropagated"]][:MAX_SITES]
    for site in sites:  # an evaluation too, for what the run covered
        if not site["no_grad"]:
            phases.note(phases.EVALUATE, f"{site['model']} forwards in training mode not "
                                         "trained on", step=site["after_step"])
    return {"no_grad_train_calls": Modes.train_calls, "no_grad_eval_calls": Modes.eval_calls,
            "train_mode_evals": sites}
