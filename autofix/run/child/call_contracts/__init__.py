"""The input contracts of the calls a training script makes, checked on the real arguments
at a failure.

A :class:`Contract` is data: the call it belongs to (``api``), the frames in which that
call's arguments are locals (``sites``: a file of a library and a function), what it
requires of one argument in words (``says``), the check that reads the real objects
(``check``: a :class:`Breach` naming the broken property, what was observed and what the
call expects, or ``None``), the transformation that confirms it (``trial``: the argument
changed the way the property says, the call made again; the call passing confirms the
contract and names the operator a repair needs), the repair operators that establish the
property where the script makes the value (``repairs``, ranked), the fault category a
breach is diagnosed as, and the example scripts that break and keep it (run as tests).

At a failure the child walks the traceback's frames, innermost first, and evaluates the
contracts whose site a frame is, on that frame's locals (:func:`breach_at`); the first
breach is reported with the failing call's facts and the runtime provenance of the
offending value (:mod:`.holders`: the user's names that hold it, the data loaders that
made the batch, with the places they were built). The message's wording plays no part:
``0D or 1D target tensor expected`` and ``Expected more than 1 value per channel`` are two
messages of two contracts, each read from the objects.

Standard library only (it runs in the user's interpreter); torch is reached through
``sys.modules`` once the script imported it. Every check is bounded and never raises.
The parent reads the declarations (``autofix/categories/catalogue/declared.py``).

Imports: nothing of autofix (the standard library, and this folder relatively).
"""

from __future__ import annotations

from typing import Any

from .holders import provenance, user_frames
from .layers import LAYERS
from .losses import LOSSES
from .model import Breach, Call, Confirmed, Contract, Example
from .ops import OPS, op_breach
from .optim import OPTIM

#: Every contract: those read in a library frame, in the order a frame's contracts are
#: evaluated, then those of tensor operations read at the user's failing call (:mod:`.ops`).
CONTRACTS: tuple[Contract, ...] = (*LOSSES, *LAYERS, *OPTIM, *OPS)
#: Frames walked from the innermost when looking for a contract's site.
MAX_FRAMES = 40

__all__ = ["CONTRACTS", "Breach", "Call", "Confirmed", "Contract", "Example", "breach_at"]


def _frames(tb: Any) -> list[Any]:
    out = []
    while tb is not None:
        out.append(tb.tb_frame)
        tb = tb.tb_next
    return out


def _callers(tb: Any) -> list[Any]:
    """The frames still running above the traceback's outermost frame, outermost first
    (a check that caught the failure inside ``trainer.train()``: the user's frame that
    called ``train()`` is above it, not in the traceback)."""
    out: list[Any] = []
    frame = tb.tb_frame.f_back if tb is not None else None
    while frame is not None and len(out) < MAX_FRAMES:
        out.append(frame)
        frame = frame.f_back
    return out[::-1]


def breach_at(tb: Any, root: str = "") -> dict[str, Any]:
    """The first contract broken at the failure whose traceback is ``tb``: the frames
    walked innermost first, each contract whose site the frame is evaluated on its locals.
    Returns the breach as JSON (``{"contract", "category", "api", "argument", "says",
    "property", "observed", "expected", "facts", "trial", "repairs", "holders",
    "loaders"}``; ``trial`` is ``{"operator", "change"}`` of the transformation that made
    the call pass, ``{}`` when none did or there is no trial; ``holders`` and ``loaders``:
    :func:`.holders.provenance`), ``{}`` when no contract is broken or none applies.
    Never raises."""
    try:
        frames = _frames(tb)
        for frame in list(reversed(frames))[:MAX_FRAMES]:
            filename, function = frame.f_code.co_filename, frame.f_code.co_name
            for contract in CONTRACTS:
                if not contract.at(filename, function):
                    continue
                call = Call(frame.f_locals)
                try:
                    breach = contract.check(call)
                except Exception:  # noqa: BLE001 - a check on odd objects tells nothing
                    breach = None
                if breach is None:
                    continue
                return {**_reported(contract, breach, call),
                        **provenance(breach.value, [*_callers(tb), *frames], root)}
        return _op_breach(tb, frames, root)
    except Exception:  # noqa: BLE001 - the breach is a bonus; the failure is reported anyway
        return {}


def _reported(contract: Contract, breach: Breach, call: Call) -> dict[str, Any]:
    """A breach as :func:`breach_at` reports it, without its provenance: the contract's
    fields, what was broken, and the operator the contract's trial confirmed (``{}``: no
    trial, or it did not make the call pass)."""
    trial: dict[str, str] = {}
    if contract.trial is not None:
        try:
            confirmed = contract.trial(call, breach)
        except Exception:  # noqa: BLE001 - a trial failing is an answer, not an error
            confirmed = None
        if confirmed is not None:
            trial = {"operator": confirmed.operator, "change": confirmed.change}
    category = contract.category if breach.category is None else breach.category
    return {"contract": contract.id, "category": category, "api": contract.api,
            "argument": contract.argument, "says": contract.says,
            "property": breach.property, "observed": breach.observed,
            "expected": breach.expected, "facts": dict(breach.facts), "trial": trial,
            "repairs": list(contract.repairs)}


def _op_breach(tb: Any, frames: list[Any], root: str) -> dict[str, Any]:
    """The contract of a tensor operation (:mod:`.ops`) the innermost user frame's failing
    instruction broke, as :func:`breach_at` reports it, with ``at``: where the offending
    argument and the call are written (``{"file", "line", "column", "end_line",
    "end_column", "call_line", ...}``); ``{}`` when none."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    mine = {id(f) for f in user_frames(frames, root)}
    entry = next((e for e in reversed(entries) if id(e.tb_frame) in mine), None)
    if entry is None:
        return {}
    found = op_breach(entry.tb_frame, entry.tb_lasti)
    if found is None:
        return {}
    contract, breach, where = found
    call = where.pop("call")
    return {**_reported(contract, breach, call),
            "at": {"file": entry.tb_frame.f_code.co_filename, **where},
            **provenance(breach.value, frames, root)}
