"""Numeric evidence for a loss that diverges: the scale of the inputs and the gradient norm.

Two facts a non-finite or exploding loss is repaired from (``nan-loss``'s root causes):

* the inputs' scale: the float tensors given positionally to the first module call of the
  run (the model's first forward), per tensor: its shape, dtype, the largest absolute
  value, and per feature column (dimension 0 is the sample dimension) the largest mean,
  standard deviation and absolute value, with the name the tensor has in the user's
  frame that made the call (its locals, then its globals: ``model(X)`` names ``X``), that
  frame's file and line. The global forward pre-hook is removed after that first call, so
  it costs nothing afterwards;
* the gradient norm of each optimizer step of a hand-written loop (``Trainer`` logs its
  own and clips by default): the 2-norm over every parameter's gradient, taken by a
  global optimizer step pre-hook before the update, from the tensors' own methods and
  kept as tensors (no device synchronisation per step); read once, at the end.

Both are sent in one ``numeric`` event when the script ends (:func:`report`). Standard
library only: torch and numpy are used only through the objects the hooks are handed.
"""

from __future__ import annotations

import math
import os
import sys
import types
from typing import Any

from .contract import Event
from .events import State, emit

#: Gradient norms kept (the first steps of the run: the step budget is 60 to 120).
MAX_NORMS = 1000
#: Feature columns summarised per input tensor.
MAX_COLUMNS = 32


class Seen:
    inputs: list[dict[str, Any]] = []
    handle: Any = None  # the global forward pre-hook, removed after its first call
    norms: list[Any] = []  # one 0-d tensor (or float) per hand-loop optimizer step


def _number(value: float) -> Any:
    return value if math.isfinite(value) else str(value)


def is_user_file(name: str) -> bool:
    """Whether a code object's file ``name`` is the user's: a real file that is not a
    library's (``site-packages``, the standard library) nor this package's."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.abspath(name)
    return not name.startswith("<") and not path.startswith(here) \
        and "site-packages" not in path and "dist-packages" not in path \
        and not path.startswith(os.path.abspath(sys.base_prefix) + os.sep) \
        and os.path.isfile(path)


def _user_frame() -> Any:
    """The innermost frame in a file that is not a library's nor this package's."""
    frame = sys._getframe(2)
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            return frame
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _name_in(frame: Any, value: Any) -> str:
    """The name ``value`` is bound to in ``frame`` (its locals, then its globals), or ""."""
    for scope in (frame.f_locals, frame.f_globals):
        for name, bound in list(scope.items()):
            if bound is value and not name.startswith("_"):
                return str(name)
    return ""


def describe_input(value: Any) -> dict[str, Any]:
    """The scale of one float tensor or array (duck-typed: ``shape``, ``dtype``, ``abs``):
    ``abs_max`` over all values and, per feature column of a 1-D or 2-D value (rows are
    samples), the largest ``|mean|``, ``std`` and ``abs_max`` of a column."""
    data = value.detach() if hasattr(value, "detach") else value
    data = data.float() if hasattr(data, "float") and callable(data.float) else data
    out: dict[str, Any] = {"kind": "tensor" if hasattr(value, "detach") else "array",
                           "dtype": str(value.dtype), "shape": [int(s) for s in value.shape]}
    out["abs_max"] = _number(float(abs(data).max()))
    if len(out["shape"]) in (1, 2) and out["shape"][0] > 1:
        columns = data.reshape(out["shape"][0], -1)[:, :MAX_COLUMNS]
        axis = {"dim": 0} if out["kind"] == "tensor" else {"axis": 0}
        out["column_mean"] = _number(float(abs(columns.mean(**axis)).max()))
        out["column_std"] = _number(float(columns.std(**axis).max()))
    return out


def _is_float_data(value: Any) -> bool:
    dtype = str(getattr(value, "dtype", ""))
    return bool(getattr(value, "shape", None)) and ("float" in dtype or "double" in dtype) \
        and not getattr(value, "requires_grad", False) and hasattr(value, "max")


def _first_forward(module: Any, args: Any) -> None:
    """The global forward pre-hook: record the float inputs of the first module call."""
    if Seen.handle is not None:
        Seen.handle.remove()
        Seen.handle = None
    if State.stop:
        return
    try:
        frame = _user_frame()
        for position, value in enumerate(args or ()):
            if not _is_float_data(value):
                continue
            fact = describe_input(value)
            fact.update(position=position, module=type(module).__name__,
                        name=_name_in(frame, value) if frame is not None else "",
                        file=frame.f_code.co_filename if frame is not None else "",
                        line=frame.f_lineno if frame is not None else 0)
            Seen.inputs.append(fact)
    except Exception as exc:  # noqa: BLE001 - the probe must never break the script
        emit("probe_error", where="numeric.inputs", message=repr(exc))


def patch_modules(module: types.ModuleType) -> None:
    """``torch.nn.modules.module``: the first forward's float inputs (:func:`_first_forward`)."""
    Seen.handle = module.register_module_forward_pre_hook(_first_forward)


def _before_step(optimizer: Any, args: Any, kwargs: Any) -> None:
    """The global optimizer step pre-hook: the gradient norm of a hand loop's step."""
    if State.in_trainer or State.stop or len(Seen.norms) >= MAX_NORMS:
        return
    try:
        total: Any = 0.0
        for group in optimizer.param_groups:
            for param in group["params"]:
                grad = getattr(param, "grad", None)
                if grad is not None:
                    total = total + grad.detach().float().norm() ** 2
        Seen.norms.append(total)
    except Exception as exc:  # noqa: BLE001
        emit("probe_error", where="numeric.grad_norm", message=repr(exc))


def patch_optimizers(module: types.ModuleType) -> None:
    """``torch.optim.optimizer``: each hand-loop step's gradient norm (:func:`_before_step`)."""
    module.register_optimizer_step_pre_hook(_before_step)


def report() -> None:
    """Emit the ``numeric`` event (the inputs' scale, the gradient norms), once per run."""
    if not Seen.inputs and not Seen.norms:
        return
    try:
        norms = [_number(math.sqrt(float(n))) if float(n) >= 0 else "nan" for n in Seen.norms]
    except Exception:  # noqa: BLE001
        norms = []
    emit(Event.NUMERIC, inputs=Seen.inputs, grad_norms=norms)
    Seen.inputs, Seen.norms = [], []
