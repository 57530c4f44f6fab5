"""The rules that set a value: ``set T to V`` / ``set T=V`` / ``set it to None``, ``use /
pass / load the model with T=V``, ``T should / must be (set to) V``, ``T must be > 0``,
``Expected value T >= 0``, ``increase / reduce / change T``. Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import replace

from autofix.categories.advice.model import Advice, pv
from autofix.categories.advice.parser import Built, Example, Found, Parser, Rule, owner_of
from autofix.categories.advice.text import (
    CONSTRAINT,
    FILL,
    OWNER_NAMES,
    STOP,
    TOK_RX,
    T,
    V,
    imperative_at,
)

#: Words after "set X to" that are no value ("set it to use ...").
BAD_VALUES = {
    "use", "be", "the", "a", "an", "make", "load", "avoid", "match", "true.", "train", "enable",
    "disable", "get", "suppress", "prevent", "allow", "fix", "save", "reproduce", "do", "have",
    "ensure", "keep",
}


def _set_advises(s: str, m: re.Match[str]) -> bool:
    """The verb at ``m`` advises (an imperative, or "setting X will fix ...")."""
    ok = imperative_at(s, m.start()) or bool(
        re.search(
            r"(?:\bwith|\btry|recommended|consider|\band|\bor|then)\s+$",
            s[: m.start()],
            re.IGNORECASE,
        )
    )
    if not ok and m.group(0).lower() == "setting":
        ok = bool(re.search(
            r"\b(?:will fix|fixes|can improve|to fix|is recommended|should fix|"
            r"to resolve)\b",
            s[m.end() :].split(",")[0],
            re.IGNORECASE,
        ))
    return ok


_SET_EQ = re.compile(
    rf"\s+(?:it\s+|this\s+)?(?:via\s+|in\s+|with\s+|using\s+)?{FILL}"
    rf"(?P<tokens>(?:{TOK_RX})(?:\s*(?:,|and|,\s*and)\s*(?:{TOK_RX}))*)"
)
_SET_TO = re.compile(
    rf"\s+{FILL}(?P<name>{T}|it|this|them|[a-z]+)(?:\s+(?:argument|parameter|option|flag))?"
    rf"(?:\s+(?:in|of|on)\s+(?:the\s+)?(?P<owner>{TOK_RX}|{OWNER_NAMES}))?"
    rf"\s+(?:to|as|equal to|=)\s+(?P<value>{V})"
)
_SET_CONSTRAINT = (
    re.compile(rf"\s+{FILL}({TOK_RX})\s*((?:>=|<=|>|<)\s*[\w.]+)"),
    re.compile(
        rf"\s+(an? (?:integer|positive|non-zero|valid)(?: integer)? value)\s+(?:in"
        rf"|for)\s+({TOK_RX})"
    ),
)
_SET_NAME = re.compile(
    rf"\s+{FILL}(?P<name>{TOK_RX})"
    rf"(?=\s+(?:first|directly|explicitly|yourself|manually)\b|\s*[.;]|\s*$)"
)


def _set_eq(p: Parser, s: str, m: re.Match[str]) -> list[Found]:
    """``set T=V (and U=W)`` / ``set it via O(T=V)``."""
    m3 = _SET_EQ.match(s[m.end() :])
    if not m3:
        return []
    advs = []
    for tok_text in re.findall(TOK_RX, m3["tokens"]):
        kind_tok = p.t.token(tok_text)
        target, owner, value = p.tgt(tok_text)
        if (
            kind_tok
            and target
            and (value is not None or re.search(r"=\s*\.\.\.|\(\w+=", kind_tok[1]))
        ):
            advs.append((target, owner, value))
    end = m.end() + m3.end()
    res = []
    for target, owner, value in advs:
        own = owner or p.owner_near(s[end:], target) or p.owner_near("", target)
        res.append((m.start(), end, p.mk("set", s[m.start() : end], target, value, own,
                                         form="set-eq")))
    return res


def _set_to(p: Parser, s: str, m: re.Match[str]) -> list[Found]:
    """``set T to V`` / ``set T as V`` / ``set T in O to V``."""
    m2 = _SET_TO.match(s[m.end() :])
    if not m2:
        return []
    target, owner, _ = p.tgt(m2["name"])
    if m2["name"].lower() in {"it", "this", "them"}:
        target = p.antecedent(s, m.start())
    value, cons = p.val(m2["value"])
    if (
        not target
        or target.lower() in {"the", "a", "an", "up", "in", "of", "environment"}
        or isinstance(value, str) and value.lower() in BAD_VALUES
    ):
        return []
    owner = owner or owner_of(p, m2["owner"])
    end = m.end() + m2.end()
    owner = owner or p.owner_near(s[end:], target) or p.owner_near("", target)
    return [(m.start(), end, p.mk("set", s[m.start() : end], target, value, owner,
                                  constraint=cons, form="set-to"))]


def _set_constraint(p: Parser, s: str, m: re.Match[str]) -> list[Found]:
    """``set T > 1`` / ``set an integer value in T``."""
    rest = s[m.end() :]
    m5 = _SET_CONSTRAINT[0].match(rest) or _SET_CONSTRAINT[1].match(rest)
    if not m5:
        return []
    first_is_value = not p.t.token(m5.group(1))
    target, owner, _ = p.tgt(m5.group(2) if first_is_value else m5.group(1))
    cons = m5.group(1) if first_is_value else m5.group(2)
    if not target:
        return []
    end = m.end() + m5.end()
    owner = owner or p.owner_near(s[end:], target) or p.owner_near("", target)
    return [(m.start(), end, p.mk("set", s[m.start() : end], target, None, owner,
                                  constraint=cons, form="set-constraint"))]


def _set_name(p: Parser, s: str, m: re.Match[str]) -> list[Found]:
    """``set T (first / directly / explicitly)``: name it."""
    m4 = _SET_NAME.match(s[m.end() :])
    if not m4 or not m.group(0).lower().startswith("set"):
        return []
    target, owner, value = p.tgt(m4["name"])
    if not target:
        return []
    end = m.end() + m4.end()
    return [(m.start(), end, p.mk("specify", s[m.start() : end], target, None, owner,
                                  form="set-name"))]


def _set(p: Parser, s: str, m: re.Match[str]) -> Built:
    """The first of the set forms that reads the words after the verb."""
    if not _set_advises(s, m):
        return None
    for form in (_set_eq, _set_to, _set_constraint, _set_name):
        found = form(p, s, m)
        if found:
            return found
    return None


def _value_verbs(p: Parser, s: str, m: re.Match[str]) -> Built:
    verb = m["verb"].lower()
    before = s[: m.start()]
    if verb == "with":
        if not re.search(
            r"\b(?:instead|try|use|load|loaded|set)\b[^.]{0,40}$", before, re.IGNORECASE
        ):
            return None
    elif not (imperative_at(s, m.start()) or re.search(r"\b(?:or|and|by)\s+$", before)):
        return None
    toks = re.findall(TOK_RX, m["tokens"])
    seps = re.findall(r"(?<=\x02)\s*(,\s*or|,\s*and|or|and|,)\s*(?=\x01)", m["tokens"])
    advs = []
    for tok_text in toks:
        kind_tok = p.t.token(tok_text)
        if not kind_tok or "=" not in kind_tok[1] and ":" not in kind_tok[1]:
            continue
        target, owner, value = p.tgt(tok_text)
        if target and value is not None:
            owner = owner or p.owner_near(s[m.end() :], target) or p.owner_near("", target)
            advs.append(p.mk("set", m.group(0), target, value, owner, form="use-assign"))
    if len(advs) > 1 and any("or" in x for x in seps):
        return [p.either(m.group(0), advs, "use-assign", m.start(), m.end())]
    return [(m.start(), m.end(), a) for a in advs]


_MUST_BE_STOP = STOP | {"batch", "size", "sum", "loss", "model", "dataset", "function", "name"}


def _must_be(p: Parser, s: str, m: re.Match[str]) -> Built:
    subj = m["subject"]
    if subj and subj.lower() in _MUST_BE_STOP:
        subj = None
    if m.group(0).lower().lstrip().startswith("can") and not m.group("v"):
        return None
    target, owner, _ = p.tgt(subj) if subj else (p.subject, None, None)
    if not target:
        return None
    if m.group("v"):
        value, cons = p.val(m.group("v"))
        if isinstance(value, str) and value.lower() in {"a", "an", "the"}:
            return None
    else:
        value, cons = None, p.t.expand(m.group("c")).strip()
    owner = owner or p.owner_near(s[m.end() :], target) or p.owner_near("", target)
    return p.mk("set", m.group(0), target, value, owner, constraint=cons, form="must-be")


def _expected(p: Parser, s: str, m: re.Match[str]) -> Built:
    target = p.tgt(m["name"])[0]
    if not target:
        return None
    cons = f"{m['op']} {p.t.expand(m['bound'])}"
    return p.mk("set", m.group(0), target, None, p.owner_near("", target), constraint=cons,
                form="expected")


def _one_of_list(p: Parser, s: str, m: re.Match[str]) -> Built:
    target = p.tgt(m["name"])[0] if m["name"] else p.subject
    if not target:
        return None
    cons = "one of " + p.t.expand(m["values"] or m["values2"])
    return p.mk("set", m.group(0), target, None, p.owner_near("", target), constraint=cons,
                form="one-of-list")


def _adjust(p: Parser, s: str, m: re.Match[str]) -> Built:
    if not (
        imperative_at(s, m.start())
        or re.search(r"\b(?:consider|try)\s+$", s[: m.start()], re.IGNORECASE)
    ):
        return None
    verb = m["verb"].lower()
    cons = (
        "increase"
        if verb.startswith(("incr", "rais"))
        else "change"
        if verb.startswith(("chang", "adjust"))
        else "decrease"
    )
    advs = []
    for span in (m["a"], m["b"]):
        if span:
            target, owner, _ = p.tgt(span)
            if target:
                owner = owner or p.owner_near(s[m.end() :], target) or p.owner_near("", target)
                advs.append(
                    p.mk("set", m.group(0), target, None, owner, constraint=cons, form="adjust")
                )
    if cons == "change" and len(advs) == 1:
        avail = re.search(
            rf"\bavailable\s+[\w\s]*?(?:are|is)\s*:?\s*\[((?:\s*{TOK_RX}\s*,?)+)\]", p.t.text
        )
        if avail:
            vals = [
                pv(t[1]) for t in (p.t.token(x) for x in re.findall(TOK_RX, avail.group(1))) if t
            ]
            alts = tuple(replace(advs[0], value=v, has_value=True, constraint=None) for v in vals)
            return Advice("either", advs[0].target, None, alts, advs[0].owner,
                          p.t.expand(m.group(0)), form="adjust-available")
    if len(advs) == 2:
        return [p.either(m.group(0), advs, "adjust", m.start(), m.end())]
    return advs[0] if advs else None


SET = (
    Rule(
        "set",
        re.compile(
            r"\b(?:set(?:ting)?|chang(?:e|ing)|assign|configur(?:e|ing)|re-?set)\b", re.IGNORECASE
        ),
        _set,
        split=True,
        examples=(
            Example(
                'DoRA does not support megatron_core, please set `use_dora=False`.',
                'set use_dora =False', form='set-eq',
            ),
            Example(
                'Data parallelism is not configured. Set `parallelism_config` first.',
                'specify parallelism_config', form='set-name',
            ),
        ),
    ),
    Rule(
        "use-assign",
        re.compile(
            rf"\b(?P<verb>use|using|pass(?:ing)?(?: in)?|load(?:ing)? (?:the|your) model with"
            rf"|with|try|specify(?:ing)?|provide|add|instantiate your model with|call \S+ with"
            rf"|launch(?:ing)? with|rerun \S+ with|restart it with)\s+"
            rf"(?:the\s+default\s+|only\s+)?"
            rf"(?P<tokens>(?:{TOK_RX})(?:\s*(?:,|and|or|,\s*and|,\s*or)\s*(?:{TOK_RX}))*)",
            re.IGNORECASE,
        ),
        _value_verbs,
        split=True,
        examples=(
            Example(
                'The argument lora_bias=True is not supported for DoRA, please pass '
                'use_dora=False',
                'set use_dora =False',
            ),
            Example(
                'This tokenizer does not have a mask token which is necessary for masked language '
                'modeling. You should pass `mlm=False` to train on causal language modeling '
                'instead.',
                'set mlm =False',
            ),
        ),
    ),
)

MUST_BE = (
    Rule(
        "must-be",
        re.compile(
            rf"(?:(?P<subject>{T}|[a-z][a-z0-9]*(?:_[a-z0-9]+)*"
            rf"|[A-Z][a-z]+_\w+)\s+(?:\([^)]*\)\s+)?(?:(?:parameter|argument|option)\s+)?)?(?:must"
            rf"|should|has to|needs to|can)\s+"
            rf"(?:always\s+|only\s+|also\s+)?(?:be|equal"
            rf"|lie)\s+(?:set\s+to\s+|equal\s+to\s+)?(?:either\s+)?"
            rf"(?:(?P<v>{TOK_RX}|True|False|None|-?\d+(?:\.\d+)?\b(?!\s*(?:or|and)\b))(?!\s*(?:or"
            rf"|,)\s*\x01)"
            rf"|(?P<c>{CONSTRAINT}))",
            re.IGNORECASE,
        ),
        _must_be,
        examples=(
            Example(
                '`rho` must be >= 1.0',
                'set rho [>= 1.0]',
            ),
            Example(
                'temperature must be positive',
                'set temperature [positive]',
            ),
        ),
    ),
    Rule(
        "expected",
        re.compile(
            rf"\bexpected(?: value)?\s+(?P<name>{T})\s*(?P<op>>=|<=|>|<|==)\s*(?P<bound>\S+)",
            re.IGNORECASE,
        ),
        _expected,
        examples=(
            Example(
                'Got warmup_steps = -1, Expected value warmup_steps >= 0',
                'set warmup_steps [>= 0]',
            ),
            Example(
                'Got warmup_steps = {}, Expected value warmup_steps >= 0',
                'set warmup_steps [>= 0]',
            ),
        ),
    ),
    Rule(
        "one-of-list",
        re.compile(
            rf"(?:(?P<name>{T})\s+)?(?:must|should)\s+be\s+one\s+of:?\s*"
            rf"(?P<values>{TOK_RX}|\[[^\]]*\]|\([^)]*\))"
            rf"|\b(?:choose between|choose from|possible values are|supported values are"
            rf"|expected one of)\s*:?\s*(?P<values2>{TOK_RX}|\[[^\]]*\])",
            re.IGNORECASE,
        ),
        _one_of_list,
        examples=(
            Example(
                '`auto_wrap_policy` must be one of {}, got {}.',
                'set auto_wrap_policy [one of {}]',
            ),
            Example(
                'Unknown mixed_precision mode: {}. Choose between {}',
                'set mixed_precision [one of {}]',
            ),
        ),
    ),
)

ADJUST = (
    Rule(
        "adjust",
        re.compile(
            rf"\b(?P<verb>increase|increasing|raise|reduce|reducing|decrease|lower|lowering"
            rf"|chang(?:e|ing)|adjust(?:ing)?)\s+"
            rf"(?:the\s+|your\s+)?(?P<a>{T})(?:\s+(?:and/or|and|or)\s+(?P<b>{T}))?",
            re.IGNORECASE,
        ),
        _adjust,
        examples=(
            Example(
                'The sum of test_size and train_size = 1.2, should be in the (0, 1) range. Reduce '
                'test_size and/or train_size.',
                'either(set test_size [decrease] | set train_size [decrease])',
            ),
            Example(
                'The sum of train_size and test_size = 6.0, should be smaller than the number of '
                'samples 4. Reduce test_size and/or train_size.',
                'either(set test_size [decrease] | set train_size [decrease])',
            ),
        ),
    ),
)
