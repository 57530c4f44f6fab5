"""Evaluation forwards made in training mode: dropout and batch norm left on under no_grad.

A model evaluated under ``torch.no_grad()`` / ``torch.inference_mode()`` without
``model.eval()`` keeps dropping units (its accuracy lower than the model's, changing from
one evaluation to the next) and normalises with each test batch's own statistics while
updating the running ones from the test data (PyTorch's ``nn.Module.eval`` docs: "This has
an effect only on certain modules ... e.g. Dropout, BatchNorm").

The ``forward`` of the layers that behave differently in training (``Dropout`` with
``p > 0`` and its variants, ``BatchNorm`` that tracks running statistics) is wrapped: a
call made while gradients are disabled is counted in training mode or in eval mode, and
only when the outermost module of that call (the model) was called from the user's own
code, outside ``Trainer`` (a library's or the probe's own no-grad forwards are theirs).
For the first :data:`MAX_SITES` lines that made such a forward in training mode the line
is kept (file relative to the repository, line, the model's class, the layer's class).
The counts and sites go into the ``train_facts`` event (:func:`facts`). A wrapped call
costs one grad-mode check unless gradients are off; a counted one walks the stack once.

Standard library only; torch is patched when it is imported (``probes.HOOKS``).
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

from . import events
from .events import State
from .numeric import is_user_file

#: Lines kept that made a no-grad forward in training mode (the first ones of the run).
MAX_SITES = 5

#: The classes whose ``forward`` is wrapped, by the torch module that defines them.
LAYERS = {
    "torch.nn.modules.dropout": ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
                                 "AlphaDropout", "FeatureAlphaDropout"),
    "torch.nn.modules.batchnorm": ("_BatchNorm", "SyncBatchNorm"),
}

_MODULE_FILE = os.path.join("torch", "nn", "modules", "module.py")


class Modes:
    train_calls = 0  # layer calls under no_grad in training mode, from the user's model call
    eval_calls = 0  # the same in eval mode
    sites: dict[tuple[str, int], dict[str, Any]] = {}


def _varies(layer: Any) -> bool:
    """Whether ``layer`` acts differently in training mode (a dropout with ``p > 0``, a
    batch norm that keeps running statistics)."""
    p = getattr(layer, "p", None)
    if p is not None:
        return bool(p > 0)
    return bool(getattr(layer, "track_running_stats", True))


def _root_call() -> tuple[Any, Any] | None:
    """The outermost module called on the stack and the frame that called it, or ``None``
    when no module call is on the stack (the layer was called directly)."""
    frame: Any = sys._getframe(2)
    root, caller = None, None
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_call_impl" and code.co_filename.endswith(_MODULE_FILE):
            root = frame.f_locals.get("self")
            caller = frame.f_back
            while caller is not None and caller.f_code.co_name == "_wrapped_call_impl":
                caller = caller.f_back
        frame = frame.f_back
    return (root, caller) if root is not None and caller is not None else None


def _relative(path: str) -> str:
    root = os.path.abspath(events.REPO_ROOT) if events.REPO_ROOT else ""
    full = os.path.abspath(path)
    return os.path.relpath(full, root) if root and full.startswith(root + os.sep) else full


def _note(layer: Any) -> None:
    """Count one no-grad call of ``layer`` made from the user's model call."""
    if State.in_trainer or State.stop or not _varies(layer):
        return
    found = _root_call()
    if found is None or not is_user_file(found[1].f_code.co_filename):
        return
    root, caller = found
    if not layer.training:
        Modes.eval_calls += 1
        return
    Modes.train_calls += 1
    key = (caller.f_code.co_filename, caller.f_lineno)
    site = Modes.sites.get(key)
    if site is None and len(Modes.sites) < MAX_SITES:
        site = Modes.sites[key] = {
            "file": _relative(key[0]), "line": key[1], "function": caller.f_code.co_name,
            "model": type(root).__name__, "layer": type(layer).__name__, "calls": 0}
    if site is not None:
        site["calls"] += 1


def patch_layers(module: types.ModuleType) -> None:
    """Wrap the ``forward`` of the :data:`LAYERS` classes ``module`` defines."""
    grad_enabled = sys.modules["torch._C"].is_grad_enabled  # torch's own, loaded first
    for name in LAYERS.get(module.__name__, ()):
        cls = getattr(module, name, None)
        original = cls.__dict__.get("forward") if cls is not None else None
        if cls is None or original is None or getattr(original, "_autofix", False):
            continue

        def forward(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            if not grad_enabled():
                try:
                    _note(self)
                except Exception:  # noqa: BLE001, S110 - the probe must never break the script
                    pass
            return _original(self, *args, **kwargs)

        forward._autofix = True  # type: ignore[attr-defined]
        cls.forward = forward


def facts() -> dict[str, Any]:
    """The ``train_facts`` fields: ``no_grad_train_calls`` / ``no_grad_eval_calls`` (layer
    calls under no_grad in training / eval mode) and ``train_mode_evals`` (the sites)."""
    return {"no_grad_train_calls": Modes.train_calls, "no_grad_eval_calls": Modes.eval_calls,
            "train_mode_evals": list(Modes.sites.values())}
