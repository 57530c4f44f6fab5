"""The rules that take a setting out or hand one over: ``remove / unset / drop / omit T (in
O)``, ``remove V from T``, ``do not set T(=V)``, ``enable / disable T``, ``pass (in) a T (to
O)`` / ``pass T through a model_init function`` / ``pass A, or B``. Standard library only.
"""

from __future__ import annotations

import re

from autofix.categories.advice.parser import Built, Example, Parser, Rule, owner_of
from autofix.categories.advice.text import (
    FILL,
    OWNER_NAMES,
    OWNER_RX,
    STOP,
    TOK_RX,
    T,
    imperative_at,
    phrase_target,
)


def _remove(p: Parser, s: str, m: re.Match[str]) -> Built:
    if not imperative_at(s, m.start()) and not m["verb"].lower().startswith(
        ("do not", "don't", "never")
    ):
        return None
    pre_owner, span, container = m["pre_owner"], m["name"], m["container"]
    prep = (m["prep"] or "").lower()
    if p.t.token(span) or re.fullmatch(T, span):
        target, owner, value = p.tgt(span)
    else:
        target, owner, value = phrase_target(span), None, None
    if pre_owner and OWNER_RX.match(owner_of(p, pre_owner) or ""):
        owner = owner_of(p, pre_owner)
    tok = p.t.token(span)
    if container and prep == "from":
        ctarget, cowner, _ = p.tgt(container)
        if ctarget and (
            tok
            and tok[0] == "quote"
            or (tok and ctarget.endswith(("modules", "columns", "list", "kwargs")))
        ):
            value, target, owner = (tok[1].strip("'\"") if tok else target), ctarget, cowner
        else:
            owner = owner or owner_of(p, container)
    elif container:
        owner = owner or owner_of(p, container)
    if span.lower() in {"it", "this", "them"}:
        target = p.antecedent(s, m.start())
    if not target or target.lower() in STOP:
        return None
    return p.mk("remove", m.group(0), target, value, owner or p.owner_near("", target),
                form="remove")


def _enable(p: Parser, s: str, m: re.Match[str]) -> Built:
    target, owner, _ = p.tgt(m["name"])
    if not target or target.lower() in STOP or target.lower() in {"context", "it", "both"}:
        return None
    value = m["verb"].lower() in {"enable", "turn on", "activate"}
    owner = owner or owner_of(p, m["owner"])
    return p.mk("set", m.group(0), target, value, owner or p.owner_near("", target),
                form="enable")


def _pass(p: Parser, s: str, m: re.Match[str]) -> Built:
    span = m.group(1) or m.group(2)
    if p.t.token(span) or re.fullmatch(T, span):
        target, owner, value = p.tgt(span)
    else:
        target, owner, value = phrase_target(span), None, None
    tail = s[m.end() :]
    mt = re.match(rf"\s+through\s+(?:an?\s+|the\s+)?({T})", tail)
    if mt:
        target = p.tgt(mt.group(1))[0] or target
    if not target or target.lower() in STOP:
        return None
    kind = "set" if value is not None else "pass"
    owner = owner or p.owner_near(tail, target) or p.owner_near("", target)
    adv = p.mk(kind, s[m.start() : m.end()], target, value, owner, form="pass")
    mo = re.match(rf"\s*,?\s*or\s+(?:an?\s+|the\s+)?({TOK_RX})", tail)
    if mo:
        t2, o2, v2 = p.tgt(mo.group(1))
        if t2:
            alt = p.mk("set" if v2 is not None else "pass", mo.group(0), t2, v2, o2 or owner,
                       form="pass")
            end = m.end() + mo.end()
            return [p.either(s[m.start() : end], (adv, alt), "pass", m.start(), end)]
    return adv


REMOVE = (
    Rule(
        "remove",
        re.compile(
            rf"\b(?P<verb>remove|unset|drop|omit|delete|get rid of"
            rf"|(?:do not|don't|never)\s+(?:set|pass|use|specify))\s+{FILL}"
            rf"(?:(?P<pre_owner>{TOK_RX})\s+(?={TOK_RX}))?"
            rf"(?P<name>{T}|[a-z]+(?:\s+[a-z]+)??)"
            rf"(?:\s+(?:prefix|suffix|argument|parameter|option|flag|entry|field|key))?"
            rf"(?=\s+(?:from|in|of)\b|\s*[.,;:]|\s*$|\s+(?:and|or|to|if|when|before|after)\b)"
            rf"(?:\s+(?P<prep>from|in|of)\s+(?:the\s+|your\s+)?(?P<container>{T}|{OWNER_NAMES}))?",
            re.IGNORECASE,
        ),
        _remove,
        examples=(
            Example(
                '`model` and `ref_model` cannot be the same object. In most cases you should omit '
                "`ref_model` and we'll initialize it to a copy of `model` for you.",
                'remove ref_model',
            ),
            Example(
                'nobody/bert-bin does not appear to have a file named model.safetensors or '
                'model.safetensors.index.json and thus cannot be loaded with `safetensors`. '
                'Please do not set `use_safetensors=True`.',
                'remove use_safetensors =True',
            ),
        ),
    ),
    Rule(
        "enable",
        re.compile(
            rf"\b(?P<verb>enable|disable|turn off|turn on|deactivate|activate)\s+{FILL}"
            rf"(?P<name>{T}|[a-z]+)"
            rf"(?:\s+(?:in|of)\s+(?:the\s+)?(?P<owner>{TOK_RX}|{OWNER_NAMES}))?",
            re.IGNORECASE,
        ),
        _enable,
        imperative=True,
        examples=(
            Example(
                'log_completions_hub_repo is set, but log_completions is False. Enable '
                'log_completions to upload completions to the Hub, or unset '
                'log_completions_hub_repo.',
                'set log_completions =True',
            ),
            Example(
                'When `padding_free=True` without packing, `max_length` is not enforced. Either '
                "enable packing (e.g., `packing=True, packing_strategy='bfd'`), provide already "
                'truncated inputs, or set `max_length=None`.',
                'set packing =True',
            ),
        ),
    ),
)

PASS = (
    Rule(
        "pass",
        re.compile(
            rf"\b(?:pass(?:ing)?|supply|give|feed|send)\s+(?:in\s+)?(?:(?:it|them)\s+(?:as|in|to"
            rf"|via)\s+)?"
            rf"(?:(?:an?|the|your|its|both|a single|one)\s+)*(?:[a-z\-]+\s+){{0,2}}?({TOK_RX})"
            rf"|\b(?:pass(?:ing)?|supply)\s+(?:in\s+)?(?:(?:an?|the|your|its)\s+)?({T}"
            rf"|[a-z]+(?:\s+[a-z]+){{0,2}}?)"
            rf"(?=\s+(?:through|via|as|to|into|in|when|instead|together|if|that|for|with|argument"
            rf"|object|instance)\b"
            rf"|\s*[.,;]|\s*$)",
            re.IGNORECASE,
        ),
        _pass,
        imperative=True,
        examples=(
            Example(
                'Bare does not define `config_class`; pass an explicit config to '
                '`from_pretrained`.',
                'pass config @from_pretrained',
            ),
            Example(
                'To use hyperparameter search, you need to pass your model through a model_init '
                'function.',
                'pass model_init',
            ),
        ),
    ),
)

