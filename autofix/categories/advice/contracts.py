"""The rules of what a value the user hands over must be or give back: ``make sure T
returns X`` / ``T must return X``, ``X requires that T be V`` / ``X requires every T ... to be
V``, ``avoid using T``, ``provide a T selected in: [A, B]``, ``Expected A, got B instead``.
Standard library only.
"""

from __future__ import annotations

import re

from autofix.categories.advice.parser import Built, Parser, Rule, noun_target, subject_before
from autofix.categories.advice.text import CONSTRAINT, STOP, TOK_RX, T

_PHRASE = rf"(?:(?:provided|given|your|the)\s+)?(?:{T}|[a-z]+(?:\s+[a-z]+){{0,2}}?)"


def _returns(p: Parser, s: str, m: re.Match[str]) -> Built:
    target = noun_target(p, m.group("t") or m.group("t2"))
    if not target or target.lower() in STOP:
        return None
    what = p.t.expand(m.group("x") or m.group("x2")).strip()
    return p.mk("set", m.group(0), target, None, None, constraint=f"return {what}",
                form="returns")


def _requires_that(p: Parser, s: str, m: re.Match[str]) -> Built:
    target = noun_target(p, m.group("t") or m.group("t2"))
    if not target or target.lower() in STOP:
        return None
    lead = re.match(rf"\s*({T})\s", s)  # "interleave_datasets with ... requires"
    when = p.tgt(lead.group(1))[0] if lead else subject_before(p, s, m.start())
    return p.mk("requires", m.group(0), target, None, None, when=when,
                constraint=p.t.expand(m.group("c")), form="requires-that")


def _avoid(p: Parser, s: str, m: re.Match[str]) -> Built:
    target, owner, value = p.tgt(m.group(1))
    return p.mk("remove", m.group(0), target, value, owner, form="avoid") if target else None


def _expected_got(p: Parser, s: str, m: re.Match[str]) -> Built:
    expected, _ = p.val(m.group(1))
    got = re.search(r"(\w+)['\"]?>?['\"]?\s*$", p.t.expand(m.group(2)))
    if isinstance(expected, str) and got:
        return p.mk("rename", m.group(0), got.group(1), expected, None, form="expected-got")
    return None


def _selected_in(p: Parser, s: str, m: re.Match[str]) -> Built:
    target = noun_target(p, m.group(1))
    values = [p.val(tok)[0] for tok in re.findall(TOK_RX, m.group(2))]
    if not (target and values):
        return None
    alts = tuple(p.mk("set", m.group(0), target, v, None, form="selected-in") for v in values)
    return [p.either(m.group(0), alts, "selected-in", m.start(), m.end())]


CONTRACT = (
    Rule(
        "returns",
        re.compile(
            rf"\b(?:make sure|ensure)\s+(?:that\s+)?(?P<t>{_PHRASE})\s+returns\s+(?P<x>[^.;]+)"
            rf"|(?P<t2>{T})\s+(?:must|should|has to|needs to)\s+return\s+(?P<x2>[^.;]+)",
            re.IGNORECASE,
        ),
        _returns,
    ),
    Rule(
        "requires-that",
        re.compile(
            rf"\brequires?\s+(?:that\s+(?P<t>{_PHRASE})\s+(?:be|are)|(?:every|each|all)\s+"
            rf"(?P<t2>[a-z]+)(?:\s+that\s+[^.;]*?)?\s+to\s+be)\s+(?P<c>{CONSTRAINT}"
            rf"|[a-z][\w\-]*)",
            re.IGNORECASE,
        ),
        _requires_that,
    ),
    Rule(
        "avoid",
        re.compile(rf"\bavoid\s+(?:using|passing|setting)\s+(?:the\s+)?({TOK_RX})",
                   re.IGNORECASE),
        _avoid,
    ),
    Rule(
        "expected-got",
        re.compile(rf"\bexpected\s+({TOK_RX})\s*,\s*got\s+(.+?)\s+instead\b", re.IGNORECASE),
        _expected_got,
    ),
    Rule(
        "selected-in",
        re.compile(
            r"\b(?:provide|use|choose|select|pass)\s+(?:an?\s+|the\s+)?([a-z]+(?:\s+[a-z]+)?)\s+"
            rf"(?:selected|chosen|taken)\s+(?:in|from|among)\s*:?\s*\[((?:\s*{TOK_RX}\s*,?)+)\]",
            re.IGNORECASE,
        ),
        _selected_in,
        each=False,
        imperative=True,
    ),
)
