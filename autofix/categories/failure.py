"""The failure a category is matched against: the exception, where it was raised, the
facts of the objects in its frames (:attr:`autofix.types.ExceptionInfo.facts`) and the
run's probe report, with readers for the facts categories check.

A fact is a summary the child made of a local value (``autofix/run/child/facts.py``): a
tensor's dtype, shape and label statistics, a mapping's keys, a dataset's columns. A
category's ``check`` reads them through :class:`Failure` and answers ``True`` (the facts
show this fault), ``False`` (they show another: the category must not fire) or ``None``
(the facts that would tell are not there).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from autofix.categories.sites import SITES, all_frames, frame_keys, raised_site
from autofix.types import ExceptionInfo, FrameFacts, ProbeReport

Value = Mapping[str, Any]
_SITE_PATTERNS = {name: re.compile(pattern) for name, pattern in SITES}


@dataclass(frozen=True)
class Failure:
    """One failed run as the categories see it: ``exc`` (the exception, its chain
    included), ``site`` (where it was raised, :func:`autofix.categories.sites.raised_site`),
    ``frames`` (``"file:function: text"`` of every frame of the chain) and ``probe`` (the
    facts the probe reported over the run)."""

    exc: ExceptionInfo
    site: str = ""
    frames: tuple[str, ...] = ()
    probe: ProbeReport = field(default_factory=ProbeReport)

    def frame_facts(self) -> Iterator[FrameFacts]:
        """The facts of every frame the child described, innermost first, the
        exception's own before those of the exceptions it was chained from."""
        for candidate in (self.exc, *self.exc.chain):
            yield from candidate.facts

    @property
    def has_facts(self) -> bool:
        """True when the child described the failing frames (a run under the probe)."""
        return any(True for _ in self.frame_facts())

    def at(self, site: str) -> Iterator[FrameFacts]:
        """The described frames that belong to ``site`` (a name of
        :data:`~autofix.categories.sites.SITES`), innermost first."""
        pattern = _SITE_PATTERNS[site]
        for frame in self.frame_facts():
            if pattern.search(f"{frame.file.replace(chr(92), '/')}:{frame.function}: "):
                yield frame

    def value(self, *names: str, site: str = "", user: bool | None = None) -> Value | None:
        """The summary of the innermost local named one of ``names`` (in that order of
        preference within a frame), in a frame of ``site`` when given, in the user's or
        the libraries' frames when ``user`` is given; ``None`` when no frame has it."""
        frames = self.at(site) if site else self.frame_facts()
        for frame in frames:
            if user is not None and frame.user is not user:
                continue
            for name in names:
                if name in frame.values:
                    return frame.values[name]
        return None

    def user_frames(self) -> list[FrameFacts]:
        """The described frames in the user's own files, innermost first."""
        return [f for f in self.frame_facts() if f.user]


def shape(value: Value | None) -> tuple[int, ...] | None:
    """The shape of a tensor or array summary (``None`` for anything else)."""
    if value is None or value.get("kind") not in ("tensor", "array"):
        return None
    return tuple(int(s) for s in value.get("shape", ()))


def is_integer(value: Value | None) -> bool:
    """A tensor or array of an integer dtype."""
    dtype = str((value or {}).get("dtype", ""))
    return bool(re.search(r"int|long", dtype)) and "uint8" not in dtype or dtype == "torch.uint8"


def is_float(value: Value | None) -> bool:
    """A tensor or array of a floating dtype."""
    return bool(re.search(r"float|double|half|bfloat", str((value or {}).get("dtype", ""))))


def dtype(value: Value | None) -> str:
    """The dtype of a tensor or array summary without its module (``float64``)."""
    return str((value or {}).get("dtype", "")).removeprefix("torch.")


@dataclass(frozen=True)
class LabelsAtLoss:
    """Labels against the head where a classification loss raised: the targets'
    summary, the logits' summary, the number of outputs (the logits' last dimension) and
    the loss function's frame name (``cross_entropy``, ``binary_cross_entropy_with_logits``,
    ``nll_loss``)."""

    target: Value
    logits: Value
    width: int
    loss: str

    @property
    def negatives(self) -> int:
        return int(self.target.get("negatives", 0) or 0)

    @property
    def min(self) -> float | None:
        value = self.target.get("min")
        return None if value is None else float(value)

    @property
    def max(self) -> float | None:
        value = self.target.get("max")
        return None if value is None else float(value)


def labels_at_loss(failure: Failure) -> LabelsAtLoss | None:
    """The targets and logits of the innermost loss frame (torch's functional losses name
    them ``target`` and ``input``), or ``None`` when the facts are not there."""
    for frame in failure.at("loss"):
        target, logits = frame.values.get("target"), frame.values.get("input")
        dims = shape(logits)
        if target is not None and dims:
            return LabelsAtLoss(target, logits, dims[-1], frame.function)  # type: ignore[arg-type]
    return None


def failure_of(probe: ProbeReport) -> Failure | None:
    """The run's exception as a :class:`Failure` (its site and frames worked out), for a
    category's ``advice``, which is given the probe report; ``None`` when the run raised
    nothing the probe saw."""
    exc = probe.exception
    if exc is None:
        return None
    frames = tuple(key for candidate in (exc, *exc.chain)
                   for key in frame_keys(all_frames(candidate)))
    return Failure(exc, raised_site(exc), frames, probe)


def library_frames(failure: Failure, limit: int = 0) -> list[FrameFacts]:
    """The described frames outside the user's files, innermost first (the first
    ``limit`` of them when given: the boundary that raised and its callers)."""
    frames = [f for f in failure.frame_facts() if not f.user]
    return frames[:limit] if limit else frames


def number_in(text: str) -> float | None:
    """The number a string spells (``"5e-5"``, ``" 16 "``), or ``None``."""
    try:
        value = float(text.strip())
    except (TypeError, ValueError):
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) else None


def kind(value: Value | None) -> str:
    """The summary's kind (``tensor``, ``mapping``, ``dataset``...; "" for no value)."""
    return str((value or {}).get("kind", ""))


def type_name(value: Value | None) -> str:
    """The qualified class name of the summarised value ("" when not recorded)."""
    return str((value or {}).get("type", ""))


def is_model_output(value: Value | None) -> bool:
    """A transformers ``ModelOutput`` (``SequenceClassifierOutput``...): summarised as a
    mapping of its set fields."""
    return kind(value) == "mapping" and type_name(value).startswith("transformers.") \
        and type_name(value).endswith("Output")


def user_values(failure: Failure, name: str) -> list[Value]:
    """The summaries of the local ``name`` in the user's frames, innermost first."""
    return [f.values[name] for f in failure.user_frames() if name in f.values]
