"""The rules of alternatives: ``T must be one of A, B or C``, ``requires either A or B``,
``specify A or B, but not both``, ``at least one of A or B must be set``, ``Both A and B
were provided``. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from autofix.categories.advice.model import Advice, pv
from autofix.categories.advice.parser import Built, Example, Parser, Rule, subject_before
from autofix.categories.advice.text import OWNER_RX, STOP, TOK_RX, T

_ART = r"(?:an?\s+|the\s+)?"
_NOUN_ART = r"(?:an?\s+|the\s+|a\s+non-zero\s+|non-zero\s+|positive\s+)?"


def _one_of(p: Parser, s: str, m: re.Match[str]) -> Built:
    subj = m.group(1)
    if subj and subj.lower() in STOP | {"must", "should", "mode", "loss", "type"}:
        subj = None
    target, owner, _ = p.tgt(subj) if subj else (p.subject or p.last_target, None, None)
    values = [p.t.token(t) for t in re.findall(TOK_RX, m.group(2))]
    if any(v and v[0] == "code" and re.match(r"[A-Z]\w+$", v[1]) for v in values):
        return None  # a list of classes: a type constraint, not values
    vals = [pv(v[1]) for v in values if v]
    if len(vals) < 2:
        return None
    owner = owner or p.owner_near(s[m.end() :], target)
    alts = tuple(p.mk("set", m.group(0), target, v, owner, form="one-of") for v in vals)
    return Advice(
        "either", target, None, alts, owner, p.t.expand(m.group(0)).strip(), form="one-of"
    )


def _nouns_kind(verb: str, not_both: bool) -> str:
    if not_both:
        return "remove"
    if verb.startswith("require"):
        return "requires"
    if verb in {"specify", "provide", "define", "must specify"}:
        return "specify"
    return "rename" if verb == "use" else "pass"


def _either_nouns(p: Parser, s: str, m: re.Match[str]) -> Built:
    alts: Sequence[Advice]
    groups = m.groupdict()
    verb = (groups["verb"] or groups.get("verb2") or "").lower()
    a_span, b_span, not_both = groups["a"], groups["b"], bool(groups["not_both"])
    kind = _nouns_kind(verb, not_both)
    alts = []
    for span in (a_span, b_span):
        target, owner, value = p.tgt(span)
        k = "set" if value is not None and kind != "remove" else kind
        if k == "rename":
            alts.append(p.mk("rename", m.group(0), p.unsupported, target, form="either-nouns"))
            continue
        cons = re.search(rf"\b(non-zero|positive)\s+{re.escape(span)}", m.group(0))
        owner = owner or p.owner_near(s[m.end() :], target)
        alts.append(p.mk(k, m.group(0), target, value, owner,
                         constraint=cons.group(1) if cons else None, form="either-nouns"))
    if kind == "requires":
        when = subject_before(p, s, m.start())
        if when and OWNER_RX.match(when.split("=")[0].split(":")[0]):
            alts = [replace(a, kind="pass", owner=when.split(":")[0]) for a in alts]
        elif when:
            alts = [replace(a, when=when) for a in alts]
    return [p.either(m.group(0), alts, "either-nouns", m.start(), m.end())]


def _one_of_names(p: Parser, s: str, m: re.Match[str]) -> Built:
    lead, how = m["lead"].lower(), (m["how"] or "").lower()
    names = [p.tgt(g)[0] for g in (m["a"], m["b"])]
    if not all(names):
        return None
    if lead == "at least":
        alts = tuple(p.mk("specify", m.group(0), n, form="one-of-names") for n in names)
    elif how == "true":
        alts = tuple(p.mk("set", m.group(0), n, False, form="one-of-names") for n in names)
    else:
        alts = tuple(p.mk("remove", m.group(0), n, form="one-of-names") for n in names)
    return [p.either(m.group(0), alts, "one-of-names", m.start(), m.end())]


_ONE_ONLY = re.compile(
    r"\b(?:just one|only one|one of them|not both|in only one place|cannot|can't|can not|"
    r"incompatible|at the same time|not allowed)\b",
    re.IGNORECASE,
)


def _not_both(p: Parser, s: str, m: re.Match[str]) -> Built:
    if not _ONE_ONLY.search(p.t.text):
        return None
    a, b = (m["a"], m["b"]) if m["a"] else (m["a2"], m["b2"])
    alts = tuple(p.mk("remove", m.group(0), p.tgt(g)[0], form="not-both") for g in (a, b))
    if not all(x.target for x in alts):
        return None
    return [p.either(m.group(0), alts, "not-both", m.start(), m.end())]


_EITHER_NOUNS = re.compile(
    rf"\b(?:(?P<verb>requires?|specify|pass(?: in)?|provide|use|set|define"
    rf"|must (?:contain|be passed|specify)|needs?)\s+(?:in\s+)?either"
    rf"|either\s+(?P<verb2>pass(?: in)?|specify|provide|use|set|define))"
    rf"\s+{_NOUN_ART}(?P<a>{T}|'\w+')(?:\s+(?:argument|parameter|for [\w\s]+?))?"
    rf"\s+or\s+{_NOUN_ART}(?P<b>{T}|'\w+')(?:\s+(?:argument|parameter|arguments))?"
    rf"(?P<not_both>,?\s*(?:but\s+)?not both)?",
    re.IGNORECASE,
)
_NOT_BOTH = re.compile(
    rf"\b(?P<verb>specify|pass|use|provide|set)\s+(?P<a>{T})\s+or\s+(?P<b>{T})"
    rf"(?P<not_both>,?\s*(?:but\s+)?not both)",
    re.IGNORECASE,
)

ONE_OF = (
    Rule(
        "one-of",
        re.compile(
            rf"(?:({T}|[a-z]\w*)\s+)?(?:(?:must|should|can|has to|needs to)\s+(?:only\s+)?(?:be"
            rf"|equal)"
            rf"|expected(?: value)?"
            rf"|expected to be|possible values are|supported values are|valid values are"
            rf"|valid options are|choose between"
            rf"|choose from|(?:the )?only possible arguments are|to be)\s+(?:set to\s+)?(?:(?:one"
            rf"|any) of|either)?\s*:?\s*"
            rf"[(\[{{]?\s*({_ART}(?:{TOK_RX})(?:\s*(?:,|or|and|,\s*or"
            rf"|,\s*and)\s*{_ART}(?:{TOK_RX}))+)\s*[)\]}}]?",
            re.IGNORECASE,
        ),
        _one_of,
        examples=(
            Example(
                "padding_side must be 'left' or 'right'",
                "either(set padding_side ='left' | set padding_side ='right')",
            ),
            Example(
                "Expected 'attention_mask' or 'position_ids' in inputs.",
                "either(set ? ='attention_mask' | set ? ='position_ids')",
            ),
        ),
    ),
)

NAMES = (
    Rule(
        "either-nouns",
        _EITHER_NOUNS,
        _either_nouns,
        examples=(
            Example(
                'You have to specify either input_ids or inputs_embeds',
                'either(specify input_ids | specify inputs_embeds)',
            ),
            Example(
                '`Trainer` requires either a `model` or `model_init` argument',
                'either(pass model @Trainer | pass model_init @Trainer)',
            ),
        ),
    ),
    Rule("either-nouns-not-both", _NOT_BOTH, _either_nouns),
    Rule(
        "one-of-names",
        re.compile(
            rf"\b(?P<lead>at least|exactly|only|at most)\s+"
            rf"(?:pass\s+|specify\s+|set\s+|use\s+)?one of\s+(?:the\s+)?"
            rf"(?P<a>{T}|[a-z]\w*)\s*(?:,|or|and)\s*(?P<b>{T}|[a-z]\w*)"
            rf"(?:\s+(?:must|should|has to|needs to|can) be "
            rf"(?P<how>set|specified|provided|passed|given|true))?",
            re.IGNORECASE,
        ),
        _one_of_names,
        examples=(
            Example(
                'At most one of fp16 and bf16 can be True, but not both',
                'either(set fp16 =False | set bf16 =False)',
            ),
            Example(
                'You must specify exactly one of input_ids or inputs_embeds',
                'either(remove input_ids | remove inputs_embeds)',
            ),
        ),
    ),
    Rule(
        "not-both",
        re.compile(
            rf"(?:\bboth\s+(?P<a>{T})\s+and\s+(?P<b>{T})"
            rf"|(?P<a2>{T})(?:\s+\([^)]*\))?\s+and\s+(?:the\s+)?(?P<b2>{T})"
            rf"(?:\s+[\w ]{0, 20}?argument)"
            rf"?\s+(?:can ?not|can't|cannot)\s+(?:both\s+)?be\s+"
            rf"(?:both\s+)?(?:set|configured|used|passed|specified|true))",
            re.IGNORECASE,
        ),
        _not_both,
        examples=(
            Example(
                'Both `seed` and `generator` were provided. Please specify just one of them.',
                'either(remove seed | remove generator)',
            ),
            Example(
                'You cannot pass in both `dynamo_plugin` and `dynamo_backend`, please only pass '
                'in one.',
                'either(remove dynamo_plugin | remove dynamo_backend)',
            ),
        ),
    ),
)
