"""The call contract a failure broke, as the child measured it on the real arguments
(``autofix/run/child/call_contracts/``), read into typed facts for categories, advice and
recipes: which call, which argument, the property broken (observed against expected), the
repair operator a trial on the real arguments confirmed, and the runtime provenance of the
offending value (the user's names that held it, the data loaders of the user's frames).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autofix.types import ExceptionInfo


@dataclass(frozen=True)
class Holder:
    """A user's name that held the offending value at the failure: ``name`` in
    ``function`` of ``file`` at ``line``; ``key`` the container's key or index when the
    name holds a batch that holds the value (``batch["labels"]``: ``"labels"``)."""

    file: str
    line: int
    function: str
    name: str
    key: str = ""
    #: Not the value itself: a tensor it may be rows of (a copy made by indexing)
    rows: bool = False

    def is_in(self, path: Path | str | None) -> bool:
        """True when this holder's frame is in the file ``path``."""
        if path is None or not self.file:
            return False
        try:
            return Path(self.file).resolve() == Path(path).resolve()
        except OSError:
            return False


@dataclass(frozen=True)
class Loader:
    """A ``DataLoader`` (or a ``Trainer``) a user's frame held at the failure (``name``:
    ``train_dl``, ``self.train_loader``, ``trainer``), with its batch size, dataset
    length (``rows``, ``None`` for an iterable dataset), ``drop_last``, the rows of its
    last batch, and where the user's ``__getitem__``/``collate_fn`` are (``"file:line"``,
    "" when the library's)."""

    file: str
    line: int
    function: str
    name: str
    batch_size: int | None
    rows: int | None
    drop_last: bool
    last_batch: int | None
    dataset: str = ""
    getitem: str = ""
    collate: str = ""
    #: ``"loader"`` (a ``DataLoader``) or ``"trainer"`` (a ``Trainer``, which builds its
    #: training loader from its arguments)
    kind: str = "loader"

    def holder(self) -> Holder:
        """The loader's name as a :class:`Holder` (where the frame held it)."""
        return Holder(self.file, self.line, self.function, self.name)


@dataclass(frozen=True)
class CallBreach:
    """One broken input contract (see the module docstring). ``operator`` and ``change``:
    what the child's trial confirmed ("" when nothing was tried or nothing passed)."""

    contract: str
    category: str
    api: str
    argument: str
    says: str
    property: str
    observed: str
    expected: str
    facts: Mapping[str, Any]
    operator: str
    change: str
    repairs: tuple[str, ...]
    holders: tuple[Holder, ...]
    loaders: tuple[Loader, ...]
    #: Where the user's code writes the offending argument and the call, for an operation
    #: read at the user's failing line (``{"file", "line", "column", "end_line",
    #: "end_column", "call_line", "call_column", "call_end_line", "call_end_column"}``);
    #: empty for a contract read in a library frame.
    at: Mapping[str, Any] = field(default_factory=dict)

    def sentence(self) -> str:
        """The breach in words: ``torch.nn.functional.cross_entropy's target: class ids
        shaped like the scores without their class axis; it got class ids of shape (16, 1),
        where it expects shape (16,) ...``."""
        text = (f"{self.api}'s {self.argument} must be {self.says}: it got {self.observed}, "
                f"where it expects {self.expected}")
        if self.change:
            text += f" (the same call passes with {self.change})"
        return text

    def advice(self, lead: str = "") -> str:
        """The breach as advice in the script's terms: the failing line (``lead``), the
        contract, the change the child confirmed and the user's name that held the value."""
        text = lead + self.sentence()
        named = next((h for h in self.holders if h.name), None)
        if named is not None:
            shown = f"{named.name}[{named.key!r}]" if named.key and not named.key.isdigit() \
                else f"{named.name}[{named.key}]" if named.key else named.name
            text += (f"; make `{shown}` so where the script makes it ({Path(named.file).name}, "
                     f"line {named.line} holds it)")
        return text

    def holder_in(self, path: Path | str | None) -> Holder | None:
        """The innermost holder whose frame is in ``path`` (``None`` when none is)."""
        return next((h for h in self.holders if h.is_in(path)), None)


#: Arguments of the failing call shown, at most.
MAX_ARGUMENTS = 6


def _value_text(value: Mapping[str, Any]) -> str:
    kind = str(value.get("kind", ""))
    if kind in ("tensor", "array"):
        text = f"{kind} {value.get('dtype', '?')} {tuple(value.get('shape', ()))}"
        if "min" in value and "max" in value:
            text += f" in [{value['min']}, {value['max']}]"
        return text
    if kind in ("number", "str", "bool", "none"):
        return f"{kind} {value.get('value')!r}"
    return str(value.get("type", kind)).rsplit(".", 1)[-1] or kind


def failing_call(exc: ExceptionInfo) -> str:
    """The call that raised, with the facts of its arguments as the child measured them
    (``torch/nn/functional.py:cross_entropy(input: tensor torch.float32 (16, 3), target:
    tensor torch.int64 (16, 1) in [0, 2])``): the innermost library frame the child
    described, "" when it described none (a failure parsed from text)."""
    for candidate in (exc, *exc.chain):
        for frame in candidate.facts:
            if frame.user:
                continue
            parts = [f"{name}: {_value_text(value)}"
                     for name, value in list(frame.values.items())[:MAX_ARGUMENTS]
                     if name != "self"]
            owner = frame.values.get("self")
            where = frame.file.replace("\\", "/")
            for marker in ("site-packages/", "dist-packages/"):
                where = where.split(marker, 1)[-1]
            head = f"{where}:{frame.function}"
            if owner is not None:
                head += f" of {_value_text(owner)}"
            return f"{head}({', '.join(parts)})"
    return ""


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def breach_of(exc: ExceptionInfo | None) -> CallBreach | None:
    """The contract ``exc`` (or an exception it was chained from) broke, ``None`` when the
    child found none (or ``exc`` was parsed from text)."""
    if exc is None:
        return None
    for candidate in (exc, *exc.chain):
        data = candidate.contract
        if data and data.get("contract"):
            return _from_json(data)
    return None


def _from_json(data: Mapping[str, Any]) -> CallBreach:
    trial = data.get("trial") if isinstance(data.get("trial"), Mapping) else {}
    holders = tuple(Holder(str(h.get("file", "")), int(h.get("line", 0) or 0),
                           str(h.get("function", "")), str(h.get("name", "")),
                           str(h.get("key", "") or ""), bool(h.get("rows", False)))
                    for h in data.get("holders") or () if isinstance(h, Mapping))
    loaders = tuple(Loader(str(d.get("file", "")), int(d.get("line", 0) or 0),
                           str(d.get("function", "")), str(d.get("name", "")),
                           _int(d.get("batch_size")), _int(d.get("rows")),
                           bool(d.get("drop_last", False)), _int(d.get("last_batch")),
                           str(d.get("dataset", "")), str(d.get("getitem", "")),
                           str(d.get("collate", "")), str(d.get("kind", "loader")))
                    for d in data.get("loaders") or () if isinstance(d, Mapping))
    return CallBreach(
        contract=str(data.get("contract", "")), category=str(data.get("category", "")),
        api=str(data.get("api", "")), argument=str(data.get("argument", "")),
        says=str(data.get("says", "")), property=str(data.get("property", "")),
        observed=str(data.get("observed", "")), expected=str(data.get("expected", "")),
        facts=facts if isinstance(facts := data.get("facts"), Mapping) else {},
        operator=str((trial or {}).get("operator", "")),
        change=str((trial or {}).get("change", "")),
        repairs=tuple(str(r) for r in data.get("repairs") or ()),
        holders=holders, loaders=loaders,
        at=at if isinstance(at := data.get("at"), Mapping) else {})
