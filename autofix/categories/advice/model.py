"""What the advice parser yields: :class:`Advice` (one typed edit a message advises), the
kinds it may have (:data:`KINDS`), and the readers of a message's names and values
(:func:`parse_value`, :func:`normalise_target`). Standard library only.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

KINDS = ("set", "either", "specify", "rename", "requires", "pass", "remove", "install", "call")
PLACEHOLDER = "{}"


class _NoneLiteral:
    """A value the message names as ``None`` (distinct from "no value named")."""

    def __repr__(self) -> str:
        return "None"


NONE = _NoneLiteral()


@dataclass(frozen=True)
class Advice:
    """One edit a message advises."""

    kind: str
    target: str | None = None
    value: Any = None
    alternatives: tuple[Advice, ...] = ()
    owner: str | None = None
    text: str = ""
    when: str | None = None
    constraint: str | None = None
    has_value: bool = False
    form: str = field(default="", compare=False)

    def __str__(self) -> str:  # compact, for listings
        if self.kind == "either":
            return "either(" + " | ".join(str(a) for a in self.alternatives) + ")"
        parts = [self.kind, self.target or "?"]
        if self.has_value:
            parts.append(f"={self.value!r}")
        if self.constraint:
            parts.append(f"[{self.constraint}]")
        if self.owner:
            parts.append(f"@{self.owner}")
        if self.when:
            parts.append(f"when {self.when}")
        return " ".join(parts)


ARGS_PREFIX = re.compile(r"^(?:self\.)?(?:trainer\.)?(?:training_)?args\.")


def normalise_ws(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def parse_value(text: str) -> Any:
    """A value as Python: ``"`no`"`` -> ``"no"``, ``"1"`` -> 1, ``"True"`` -> True.

    ``{}`` (a template placeholder) stays the string ``"{}"``; ``...`` gives None.
    """
    value = pv(text)
    return None if value is NONE else value


def pv(text: str) -> Any:
    """:func:`parse_value`, with a named ``None`` as :data:`NONE`."""
    raw = text.strip().strip("`").strip()
    if re.fullmatch(r".*[^.]\.|.*[,;:]", raw) and not re.fullmatch(r"-?\d+\.", raw):
        raw = raw[:-1]
    if raw in {PLACEHOLDER, "'{}'", '"{}"'}:
        return PLACEHOLDER
    if raw in {"...", ""}:
        return None
    low = raw.lower()
    if low in {"true", "false", "none", "null"}:
        return {"true": True, "false": False, "none": NONE, "null": NONE}[low]
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return raw.rstrip(".,;:")
    if value is None:
        return NONE
    return None if value is Ellipsis else value


def normalise_target(text: str) -> tuple[str, str | None]:
    """``"`args.eval_strategy`"`` -> ``("eval_strategy", "TrainingArguments")``.

    Strips backticks, quotes and leading ``--``; ``args.``/``self.args.`` give the
    owner ``TrainingArguments``; ``model.config.x`` gives ``("x", "model.config")``;
    ``cfg['key']`` gives ``("key", "cfg")``; a trailing ``()`` is dropped.
    """
    t = text.strip().strip("`").strip().strip("'\"").strip()
    t = re.sub(r"^--?", "", t)
    t = re.sub(r"\s*(?:argument|parameter|flag|option)s?$", "", t)
    if t.endswith("()") and "." not in t:
        t = t[:-2]
    owner: str | None = None
    if ARGS_PREFIX.match(t):
        t, owner = ARGS_PREFIX.sub("", t), "TrainingArguments"
    m = re.match(r"^([A-Za-z_][\w.]*)\[['\"]?([\w\-.]+)['\"]?\]$", t)
    if m:
        return m.group(2), m.group(1)
    m = re.match(
        r"^((?:self\.)?model\.config|model\.generation_config|config|parallelism_config|"
        r"[a-z_]+_config)\.([A-Za-z_]\w*)$",
        t,
    )
    if m:
        return m.group(2), m.group(1).removeprefix("self.")
    if re.match(r"^[A-Z][a-z]+_[a-z_]+$", t):  # "Pad_token_id" at a sentence start
        t = t[0].lower() + t[1:]
    return t, owner


