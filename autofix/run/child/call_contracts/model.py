"""What a contract is: the call it belongs to, the check on the real arguments, the trial
that confirms it, the repair operators, the examples (see the package docstring).

Standard library only; torch is reached through ``sys.modules``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Breach:
    """A contract broken by a real argument: the ``property`` (``"shape"``, ``"dtype"``,
    ``"rows"``, ``"range"``, ``"size"``), what the argument was (``observed``) and what the
    call expects (``expected``), both in words; ``value`` the offending object (never
    serialised), ``facts`` extra JSON facts (the rows of a batch, a layer's sizes)."""

    property: str
    observed: str
    expected: str
    value: Any = None
    facts: Mapping[str, Any] = field(default_factory=dict)
    #: The category this breach shows when it is not the contract's own ("": none; the
    #: breach is reported, the message's category decides), ``None`` for the contract's.
    category: str | None = None


@dataclass(frozen=True)
class Example:
    """A script that breaks the contract (``breaks=True``: running it raises, and the
    contract's breach is found at the failure) or keeps it (it runs without the breach)."""

    script: str
    breaks: bool = True


class Call:
    """The arguments of one call as a frame holds them (``locals``), with torch when the
    script imported it."""

    def __init__(self, frame_locals: Mapping[str, Any]) -> None:
        self.locals = frame_locals
        self.torch = sys.modules.get("torch")

    def get(self, name: str) -> Any:
        """The local ``name`` (``None`` when absent)."""
        return self.locals.get(name)

    def is_tensor(self, value: Any) -> bool:
        """``value`` is a torch tensor."""
        return self.torch is not None and isinstance(value, self.torch.Tensor)

    def passes(self, call: Callable[[], Any]) -> bool:
        """True when ``call()`` returns without raising, run without recording gradients
        (a trial never changes the script's state: no graph, no parameter touched)."""
        if self.torch is None:
            return False
        try:
            with self.torch.no_grad():
                call()
            return True
        except Exception:  # noqa: BLE001 - the trial failing is an answer, not an error
            return False


Check = Callable[[Call], Breach | None]


@dataclass(frozen=True)
class Confirmed:
    """What a trial confirmed: the repair ``operator`` whose transformation made the call
    pass (``"drop-trailing-axis"``) and that ``change`` in the call's terms
    (``"target.squeeze(-1)"``)."""

    operator: str
    change: str


#: A trial: the argument changed as the property says and the call made again; what it
#: confirmed when the call then passes, ``None`` when it still fails.
Trial = Callable[[Call, Breach], Confirmed | None]


@dataclass(frozen=True)
class Contract:
    """One input contract of one call (see the module docstring). ``id`` and ``category``
    are kebab-case; ``category`` is the fault a breach is diagnosed as (a category of the
    catalogue, or one this contract declares with ``title``/``hint``); ``repairs`` are
    the ids of the shared repair operators, best first."""

    id: str
    category: str
    api: str
    sites: tuple[tuple[str, str], ...]
    argument: str
    says: str
    check: Check
    trial: Trial | None = None
    repairs: tuple[str, ...] = ()
    examples: tuple[Example, ...] = ()
    #: For a category this contract declares (one the catalogue does not have): its title
    #: and hint; "" when the category is declared elsewhere.
    title: str = ""
    hint: str = ""

    def at(self, filename: str, function: str) -> bool:
        """True when a frame of ``function`` in ``filename`` is one of this contract's
        sites (the file matched by its path's ending, ``/`` separated)."""
        path = filename.replace(os.sep, "/")
        return any(function == name and path.endswith(suffix) for suffix, name in self.sites)


def shape_text(value: Any) -> str:
    """``(16, 1)``: a tensor's or array's shape as Python writes a tuple ("?" unknown)."""
    try:
        dims = tuple(int(d) for d in value.shape)
    except Exception:  # noqa: BLE001
        return "?"
    return f"({dims[0]},)" if len(dims) == 1 else str(dims)


def dtype_text(value: Any) -> str:
    """``torch.float64`` / ``float64``: a tensor's or array's element type ("?" unknown)."""
    return str(getattr(value, "dtype", "?"))
