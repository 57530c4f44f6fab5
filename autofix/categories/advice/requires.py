"""The rules that name a setting to give or a condition: ``T has to be specified``,
``please specify T``, ``T is required``, ``X requires T(=V)`` / ``T to be defined``, ``X
requires the a and b NOUN to match``, ``X can only be set when T(=V)``. Standard library
only.
"""

from __future__ import annotations

import re

from autofix.categories.advice.model import pv
from autofix.categories.advice.parser import Built, Example, Parser, Rule, subject_before
from autofix.categories.advice.text import (
    CONSTRAINT,
    ENV_NAMES,
    FILL,
    OWNER_RX,
    PREP,
    STOP,
    TOK_RX,
    T,
    V,
    phrase_target,
)


def _specified(p: Parser, s: str, m: re.Match[str]) -> Built:
    target, owner, _ = p.tgt(m["name"])
    if not target or target.lower() in STOP:
        return None
    owner = owner or p.owner_near(s[m.end() :], target) or p.owner_near("", target)
    return p.mk("specify", m.group(0), target, None, owner, form="specified")


def _please_specify(p: Parser, s: str, m: re.Match[str]) -> Built:
    span = m["token"] or m["phrase"]
    target, owner, value = (
        p.tgt(span)
        if (p.t.token(span) or re.fullmatch(T, span))
        else (phrase_target(span), None, None)
    )
    if not target or target.lower() in STOP:
        return None
    kind = "set" if value is not None else "specify"
    owner = owner or p.owner_near(s[m.end() :], target) or p.owner_near("", target)
    return p.mk(kind, m.group(0), target, value, owner, form="please-specify")


def _is_required(p: Parser, s: str, m: re.Match[str]) -> Built:
    target, owner, _ = p.tgt(m["name"])
    if not target:
        return None
    return p.mk("specify", m.group(0), target, None, owner or p.owner_near("", target),
                form="is-required")


def _requires_match(p: Parser, s: str, m: re.Match[str]) -> Built:
    a, b, noun = m["a"], m["b"], m["noun"]
    return p.mk("requires", m.group(0), f"{a}_{noun}", None, None,
                when=subject_before(p, s, m.start()), constraint=f"== {b}_{noun}",
                form="requires-match")


_TO_BE = re.compile(
    rf"\s+to\s+be\s+(?:set\s+to\s+|equal\s+to\s+)?(?:(?P<v>{TOK_RX}|True|False|None"
    rf"|-?\d+\b)(?!\s*(?:or|,))"
    rf"|(?P<c>either\s+[^.]+|{CONSTRAINT}|[a-z]+))"
)


def _requires(p: Parser, s: str, m: re.Match[str]) -> Built:
    span = m.group("t") or m.group("t2")
    if p.t.token(span) or re.fullmatch(T, span):
        target, owner, value = p.tgt(span)
    else:
        target, owner, value = phrase_target(span), None, None
    if not target or target.lower() in STOP:
        return None
    span_tok = p.t.token(span)
    if ENV_NAMES.match(target) or (span_tok and ENV_NAMES.match(span_tok[1])):
        return p.mk("install", m.group(0), span_tok[1] if span_tok else target,
                    form="requires-package")
    cons = m.group("cons") or m.group("cons2")
    end = m.end()
    mt = _TO_BE.match(s[end:])
    if mt:
        if mt.group("v"):
            value, _ = p.val(mt.group("v"))
        else:
            c = mt.group("c")
            vals = [pv(t[1]) for t in (p.t.token(x) for x in re.findall(TOK_RX, c)) if t]
            if c.startswith("either") and len(vals) >= 2:
                when = subject_before(p, s, m.start())
                alts = tuple(
                    p.mk("requires", m.group(0), target, v, owner, when=when, form="requires")
                    for v in vals
                )
                end += mt.end()
                return [p.either(s[m.start() : end], alts, "requires", m.start(), end)]
            cons = cons or p.t.expand(c)
        end += mt.end()
    when = subject_before(p, s, m.start())
    owner = owner or p.owner_near(s[end:], target)
    kind = "requires"
    if (
        when
        and re.match(r"[A-Z]", when)
        and OWNER_RX.match(when.split(":")[0].split("=")[0].strip())
    ):
        kind, owner, when = "pass", owner or when.split(":")[0].strip(), None
    return [(m.start(), end, p.mk(kind, s[m.start() : end], target, value, owner, when=when,
                                  constraint=cons, form="requires"))]


def _only_when(p: Parser, s: str, m: re.Match[str]) -> Built:
    head = m["head"]
    if not re.search(r"\bonly\b", m.group(0), re.IGNORECASE):
        return None
    when = p.tgt(
        re.sub(
            r"^can only (?:use|specify|pass|set)\s+|\s+in the code$",
            "",
            head,
            flags=re.IGNORECASE,
        )
    )[0]
    target, owner, value = p.tgt(m["name"])
    if m["value"]:
        value, _ = p.val(m["value"])
    if not (target and when):
        return None
    return p.mk("requires", m.group(0), target, value, owner, when=when,
                constraint=m.group("c"), form="only-when")


SPECIFY = (
    Rule(
        "specified",
        re.compile(
            rf"(?:^|(?<=\s))(?P<name>{T}|^[A-Za-z]\w*)\s+(?:\([^)]*\)\s+)?"
            rf"(?:has|have|needs?|must|should)\s+(?:to\s+)?(?:also\s+)?be\s+"
            rf"(?:specified|provided|passed|given|defined|set|supplied)\b(?!\s+(?:to|as)\b)"
        ),
        _specified,
        examples=(
            Example(
                'input_ids must be provided for Peft model generation',
                'specify input_ids',
            ),
            Example(
                "`loftq_config` must be specified when `init_lora_weights` is 'loftq'.",
                'specify loftq_config',
            ),
        ),
    ),
    Rule(
        "please-specify",
        re.compile(
            rf"\b(?:specify|provide|define|supply|set up|give|add"
            rf"|assign)\s+{FILL}(?:[a-z\-]+\s+){{0,2}}?(?P<token>{TOK_RX})"
            rf"|\b(?:specify|provide|define|supply|add|assign)\s+"
            rf"(?P<phrase>{T}|(?:an?\s+|the\s+)?[a-z]+(?:\s+[a-z]+){{0,2}}?)"
            rf"(?=\s+{PREP}\b|\s*[.,;:]|\s*$)",
            re.IGNORECASE,
        ),
        _please_specify,
        imperative=True,
        examples=(
            Example(
                'Please specify `target_modules` in `peft_config`',
                'specify target_modules @peft_config',
            ),
            Example(
                "Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to "
                'train the model on CPU.',
                'specify use_cpu',
            ),
        ),
    ),
    Rule(
        "is-required",
        re.compile(
            rf"(?P<name>{T})\s+(?:is|are)\s+(?:also\s+)?required\b(?!\s+(?:for|when|to)\b)"
        ),
        _is_required,
        examples=(
            Example(
                '`train_dataset` is required',
                'specify train_dataset',
            ),
            Example(
                '`train_dataset` is required unless an `environment_factory` is provided.',
                'specify train_dataset',
            ),
        ),
    ),
)

REQUIRES = (
    Rule(
        "requires-match",
        re.compile(
            r"\brequires the (?P<a>\w+) and (?P<b>\w+) (?P<noun>strategy|steps|size|type|mode)"
            r" to (?:match|be (?:the same|equal))"
        ),
        _requires_match,
        each=False,
        examples=(
            Example(
                '--load_best_model_at_end requires the save and eval strategy to match, but '
                'found\n- Evaluation strategy: IntervalStrategy.EPOCH\n- Save strategy: '
                'SaveStrategy.STEPS',
                'requires save_strategy [== eval_strategy] when load_best_model_at_end',
            ),
            Example(
                '--load_best_model_at_end requires the save and eval strategy to match, except '
                'when --save_strategy="best", but found\n- Evaluation strategy: '
                'IntervalStrategy.NO\n- Save strategy: SaveStrategy.STEPS',
                'requires save_strategy [== eval_strategy] when load_best_model_at_end',
            ),
        ),
    ),
    Rule(
        "requires",
        re.compile(
            rf"\brequires?\s+(?:that\s+)?(?:you\s+to\s+\w+\s+)?(?:setting\s+)?"
            rf"(?:an?\s+|the\s+|at least one\s+)?"
            rf"(?:(?P<cons>{CONSTRAINT}|non-zero|positive|valid|integer)\s+(?:value\s+)?"
            rf"(?:for\s+)?)?"
            rf"(?:[a-z\-]+\s+){{0,2}}?(?P<t>{TOK_RX})"
            rf"|\brequires?\s+(?:an?\s+|the\s+)?(?P<cons2>non-zero|positive)?\s*"
            rf"(?P<t2>{T}|[a-z]+(?:\s+[a-z]+){{0,2}}?)(?=\s+(?:to be|{PREP})\b|\s*[.,;:)]|\s*$)",
            re.IGNORECASE,
        ),
        _requires,
        examples=(
            Example(
                'Trainer: training requires a train_dataset.',
                'pass train_dataset @Trainer',
            ),
            Example(
                'Trainer: evaluation requires an eval_dataset.',
                'pass eval_dataset @Trainer',
            ),
        ),
    ),
    Rule(
        "only-when",
        re.compile(
            rf"(?P<head>{T}|can only (?:use|specify|pass|set)\s+{TOK_RX}(?:\s+in the code)?)"
            rf"\s*(?:can only be|is only|is useful only|only works|is only supported"
            rf"|can only be used)?\s*(?:set|used|supported|true|available|useful)?"
            rf"\s*(?:when|with|if)\s+(?:[^;]*?\bwhen\s+)?(?:using\s+)?(?P<name>{T})"
            rf"(?:\s+(?:is\s+set\s+to|is|=|==)\s+(?P<value>{V}))?"
            rf"(?:\s*(?P<c>(?:>=|<=|>|<)\s*\S+))?",
            re.IGNORECASE,
        ),
        _only_when,
        examples=(
            Example(
                'The argument lora_bias=True is only supported with init_lora_weights=True or '
                'False, got init_lora_weights=pissa instead.',
                'requires init_lora_weights =True when lora_bias',
            ),
            Example(
                '--dataloader_prefetch_factor can only be set when data is loaded in a different '
                'process, i.e. when --dataloader_num_workers > 0.',
                'requires dataloader_num_workers [> 0] when dataloader_prefetch_factor',
            ),
        ),
    ),
)

