"""The one matcher: a message read sentence by sentence (:class:`Parser`), every declared
:class:`Rule` run on each sentence in the table's order (a span taken by an earlier rule is
not read again), advices joined by "or" made one ``either``, repeats dropped. A rule is a
pattern, the function that builds the typed :class:`Advice` from a match, and the real
messages it must parse (:class:`Example`). Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from autofix.categories.advice.model import NONE, PLACEHOLDER, Advice, normalise_target, pv
from autofix.categories.advice.text import (
    OWNER_ALIASES,
    OWNER_NAMES,
    OWNER_RX,
    PHRASE_NOUNS,
    TOK_RX,
    T,
    Text,
    imperative_at,
    phrase_target,
)

#: What a rule found: the span of the sentence it read, and the advice.
Found = tuple[int, int, Advice]
#: What a rule's builder gives for one match: an advice (the match's span), found advices
#: with their own spans, or nothing.
Built = Advice | Iterable[Found] | None


@dataclass(frozen=True)
class Example:
    """A real library message a rule must parse (a saved example's, or the library's source
    text with ``{}`` for what it fills in), ``str()`` of one advice it gives, and that
    advice's ``form`` where it is not the rule's name."""

    message: str
    gives: str
    form: str = ""


@dataclass(frozen=True)
class Rule:
    """One message form: its ``pattern`` (run on each protected sentence), ``build`` (the
    advice from one match, or nothing when the match is no advice), the real messages it
    must parse, and how it is matched: every match or the first (``each``), only where the
    verb at the match advises (``imperative``), several advices of one span given sub-spans
    so that all are kept (``split``). A rule that is no single pattern gives ``scan``
    instead (the whole sentence to found advices)."""

    form: str
    pattern: re.Pattern[str] | None
    build: Callable[[Parser, str, re.Match[str]], Built] | None = None
    examples: tuple[Example, ...] = ()
    each: bool = True
    imperative: bool = False
    split: bool = False
    scan: Callable[[Parser, str], list[Found]] | None = None

    def find(self, p: Parser, s: str) -> list[Found]:
        """The advices this rule reads in sentence ``s``."""
        if self.scan is not None:
            return self.scan(p, s)
        assert self.pattern is not None and self.build is not None
        if self.each:
            matches: Iterable[re.Match[str]] = self.pattern.finditer(s)
        else:
            first = self.pattern.search(s)
            matches = [first] if first else []
        res: list[Found] = []
        for m in matches:
            if self.imperative and not imperative_at(s, m.start()):
                continue
            got = self.build(p, s, m)
            if isinstance(got, Advice):
                res.append((m.start(), m.end(), got))
            elif got is not None:
                res.extend(got)
        return split_same_span(res) if self.split else res


class Parser:
    """One message being read: its protected text, what it is about, the rules to run."""

    def __init__(self, message: str, rules: Sequence[Rule]) -> None:
        self.rules = rules
        self.t = Text(message)
        self.last_target: str | None = None
        self.subject: str | None = None  # the name the message is about ("Invalid value for X")
        self.unsupported: str | None = None  # "X is deprecated" / "does not support X"
        self.owners: dict[str, str] = {}  # target -> owner named elsewhere in the message
        self._scan_owners()

    # -- helpers
    def tgt(self, text: str) -> tuple[str | None, str | None, Any]:
        """(target, owner, value) from a target-ish span; value when it is an assignment."""
        text = text.strip()
        tok = self.t.token(text)
        if tok is not None:
            kind, inner = tok
            if (
                kind in {"assign", "code"}
                and "=" in inner
                and not re.search(r"[<>!=]=|=[=]", inner)
            ):
                name, _, val = inner.partition("=")
                name, val = name.strip(), val.strip()
                if re.fullmatch(r"(?:--?)?[A-Za-z_][\w.]*(?:\[['\"]?[\w\-]+['\"]?\])*", name):
                    target, owner = normalise_target(name)
                    return target, owner, pv(val)
            m = re.fullmatch(
                r"['\"]?([A-Za-z_]\w*)['\"]?\s*:\s*(\S.*)", inner
            )  # 'use_configured_state':True
            if kind == "code" and m and not inner.startswith(("http", "{")):
                return m.group(1), None, pv(m.group(2))
            if kind == "hole":
                return PLACEHOLDER, None, None
            m = re.fullmatch(r"([A-Z]\w*)\((\w+)=(.*)\)", inner)  # GRPOConfig(max_steps=...)
            if m:
                return m.group(2), m.group(1), pv(m.group(3))
            target, owner = normalise_target(inner)
            return target, owner, None
        if text.lower() in {
            "it",
            "this",
            "them",
            "that",
            "this value",
            "this argument",
            "it explicitly",
        }:
            return self.last_target, None, None
        if re.fullmatch(T + r"|[A-Za-z]\w*", text):
            target, owner = normalise_target(text)
            return target, owner, None
        return None, None, None

    def antecedent(self, s: str, pos: int) -> str | None:
        """What "it" / "this" at ``pos`` refers to: the last name before it in the sentence."""
        for tok in reversed(re.findall(TOK_RX, s[:pos])):
            kind_text = self.t.token(tok)
            if kind_text and kind_text[0] in {"code", "assign"}:
                target = self.tgt(tok)[0]
                if target and not OWNER_RX.match(target) and not re.match(r"[A-Z]", target):
                    return target
        return self.last_target

    def val(self, text: str) -> tuple[Any, str | None]:
        """(value, constraint) from a value-ish span."""
        text = text.strip()
        tok = self.t.token(text)
        if tok is not None:
            return pv(tok[1]), None
        if re.match(r"an? |a value|a multiple", text):
            return None, text
        return pv(text), None

    def owner_near(self, clause: str, target: str | None) -> str | None:
        """The owner named right after an advice ("... in the `SFTConfig`"), else where the
        message names the same target elsewhere."""
        m = re.match(
            rf"\s*(?:[\w']+\s+){{0,3}}?(?:in|to|of|on|for|via|inside|into|when calling"
            rf"|passed to)\s+"
            rf"(?:the\s+|your\s+|a\s+)?({TOK_RX}|{OWNER_NAMES})",
            clause,
        )
        if m:
            cand = self.t.token(m.group(1))
            name = cand[1] if cand else m.group(1)
            name = re.sub(r"\(.*\)$", "", name) if not name.endswith("prepare()") else name
            if OWNER_RX.match(name) or re.match(
                r"^[A-Z]\w*(?:Config|Arguments|Trainer|Plugin|Collator\w*)$", name
            ):
                return name
        if target and target in self.owners:
            return self.owners[target]
        return None

    def _scan_owners(self) -> None:
        rx = re.compile(
            rf"({T})(?:\s+\w+){{0,3}}?\s+(?:to|in|of)\s+(?:the\s+|your\s+)?({TOK_RX}"
            rf"|{OWNER_NAMES})"
        )
        for m in rx.finditer(self.t.text):
            target, _, _ = self.tgt(m.group(1))
            tok = self.t.token(m.group(2))
            owner = tok[1] if tok else m.group(2)
            if target and (
                OWNER_RX.match(owner) or re.match(r"^[A-Z]\w*(?:Config|Arguments|Trainer)$", owner)
            ):
                self.owners.setdefault(target, owner)

    def mk(
        self,
        kind: str,
        span: str,
        target: str | None = None,
        value: Any = None,
        owner: str | None = None,
        form: str = "",
        **kw: Any,
    ) -> Advice:
        if target and target not in {PLACEHOLDER}:
            self.last_target = target
        has_value = value is not None
        if value is NONE:
            value = None
        if isinstance(kw.get("constraint"), str):
            cons = re.split(r"\s+(?:if|when|but|got|which|for|to)\b|:", kw["constraint"])[0]
            kw["constraint"] = cons.strip().rstrip(".,;:") or None
        owner = OWNER_ALIASES.get(owner.lower(), owner) if owner else owner
        return Advice(
            kind=kind,
            target=target,
            value=value,
            owner=owner,
            text=self.t.expand(span).strip(),
            has_value=has_value,
            form=form,
            **kw,
        )

    def either(self, span: str, alternatives: Sequence[Advice], form: str, start: int,
               end: int, **kw: Any) -> Found:
        """One ``either`` of ``alternatives``, read from ``span`` (at ``start:end``)."""
        return (start, end, Advice("either", alternatives=tuple(alternatives),
                                   text=self.t.expand(span), form=form, **kw))

    # -- sentences
    def sentences(self) -> list[str]:
        text = re.sub(
            r"\b(e\.g|i\.e|etc|vs)\.",
            lambda m: m.group(1).replace(".", "\x03") + "\x03",
            self.t.text,
        )
        parts = re.split(
            r"(?<=[.!?])\s+(?=\S)|(?<=[a-z\x02][.!?])(?=[A-Z])|\s+-\s+(?=[A-Z])|;\s+", text
        )
        return [p.replace("\x03", ".").strip() for p in parts if p.strip()]

    def parse(self) -> tuple[Advice, ...]:
        out: list[Advice] = []
        for sent in self.sentences():
            self._context(sent)
            out.extend(self.sentence(sent))
        return tuple(dedupe(out))

    def _context(self, sent: str) -> None:
        """Remember what the message is about, for forms that do not repeat it."""
        m = re.search(
            rf"\b(?:invalid|unknown|unsupported|unrecognized)\s+(?:value\s+(?:for"
            rf"|of)\s+)?(?:the\s+)?"
            rf"({T}|[a-z]+(?:\s+[a-z]+){{0,2}}?(?=\s*:))",
            sent,
            re.IGNORECASE,
        )
        if m:
            span = m.group(1)
            self.subject = (
                self.tgt(span)[0]
                if self.t.token(span) or re.fullmatch(T, span)
                else span.replace(" ", "_")
            ) or self.subject
        m = re.search(
            rf"(?:^|\W)({T})\s+(?:{TOK_RX}\s+)?(?:is|was)\s+(?:an?\s+)?(?:invalid|not a valid"
            rf"|unsupported|not supported)",
            sent,
        )
        if m:
            self.subject = self.tgt(m.group(1))[0] or self.subject
        m = re.search(
            rf"({T}),?\s+(?:which\s+)?(?:is|are|was)\s+(?:now\s+)?deprecated|(?:does not|doesn't"
            rf"|do not|don't|"
            rf"cannot|can't)\s+(?:yet\s+)?(?:support|use|be used with)\s+(?:the\s+)?({T}"
            rf"|[A-Z][A-Z0-9]+\b)",
            sent,
        )
        if m:
            span = m.group(1) or m.group(2)
            self.unsupported = (
                self.tgt(span)[0] if self.t.token(span) or re.fullmatch(T, span) else span
            )
        m = re.search(rf"\bonly defines\s+({TOK_RX}),?\s+which\s+is\s+deprecated", sent)
        if m:
            self.unsupported = self.tgt(m.group(1))[0]

    def sentence(self, sent: str) -> list[Advice]:
        found: list[Found] = []
        for rule in self.rules:
            for start, end, adv in rule.find(self, sent):
                if any(s < end and start < e for s, e, _ in found):
                    continue
                found.append((start, end, adv))
        found.sort(key=lambda f: f[0])
        return combine_or(self, sent, found)


def key(a: Advice) -> tuple[Any, ...]:
    return (a.kind, a.target, repr(a.value), a.owner, tuple(key(x) for x in a.alternatives))


def dedupe(items: list[Advice]) -> list[Advice]:
    """Drop repeats (same kind, target, value, owner); a repeat may add the owner it lacked."""
    out: list[Advice] = []
    for a in items:
        same = [
            i
            for i, b in enumerate(out)
            if (b.kind, b.target, repr(b.value)) == (a.kind, a.target, repr(a.value))
            and not a.alternatives
            and not b.alternatives
        ]
        if same:
            i = same[0]
            if out[i].owner is None and a.owner is not None:
                out[i] = replace(out[i], owner=a.owner)
            continue
        if any(key(a) == key(b) for b in out):
            continue
        out.append(a)
    return out


OR_GAP = re.compile(
    r"[\s,]*(?:\(?\s*)?(?:or|or else|or alternatively,?|alternatively,?|or,? if [^,]{1,60},)"
    r"(?:\s+(?:you\s+)?(?:can|could|should|may|just|simply|instead|please))?\s*",
    re.IGNORECASE,
)
PURPOSE = re.compile(
    r"\s*(?:(?:to|so that|in order to|and)\s[^,;]{0,70}?|\([^)]{0,80}\))?(?=[\s,]*\bor\b)",
    re.IGNORECASE,
)


def combine_or(p: Parser, sent: str, found: list[Found]) -> list[Advice]:
    """Advices joined by "or" (or listed after "Either", commas then "or") become one ``either``."""
    out: list[Found] = []
    for start, end, adv in found:
        if out:
            pstart, pend, prev = out[-1]
            gap = sent[pend:start]
            purpose = PURPOSE.match(gap)
            rest = gap[purpose.end() :] if purpose else gap
            either_list = (
                re.search(r"\beither\b", sent[: pstart + 1], re.IGNORECASE)
                and len(gap) < 120
                and (
                    re.search(r"\bor\s*$", gap)
                    or re.fullmatch(r"\s*,\s*", gap)
                    and re.search(r"\bor\b", sent[end:], re.IGNORECASE)
                )
            )
            if OR_GAP.fullmatch(rest) or either_list:
                alts = (
                    prev.alternatives if prev.kind == "either" and prev.form == "or" else (prev,)
                ) + (adv,)
                merged = Advice(
                    "either",
                    alternatives=tuple(alts),
                    text=p.t.expand(sent[pstart:end]).strip(),
                    form="or",
                )
                out[-1] = (pstart, end, merged)
                continue
        out.append((start, end, adv))
    return [a for _, _, a in out]



def split_same_span(res: list[Found]) -> list[Found]:
    """Several advices from one span get sub-spans, so that all of them are kept."""
    out = []
    groups: dict[tuple[int, int], list[Advice]] = {}
    for start, end, adv in res:
        groups.setdefault((start, end), []).append(adv)
    for (start, end), advs in groups.items():
        if len(advs) == 1:
            out.append((start, end, advs[0]))
        else:
            width = max(1, (end - start) // len(advs))
            for i, adv in enumerate(advs):
                out.append(
                    (start + i * width, start + (i + 1) * width if i < len(advs) - 1 else end, adv)
                )
    return out


def owner_of(p: Parser, span: str | None) -> str | None:
    if not span:
        return None
    tok = p.t.token(span)
    name = tok[1] if tok else span
    return re.sub(r"\(.*\)$", "", name) if not name.endswith("prepare()") else name


def subject_before(p: Parser, s: str, pos: int) -> str | None:
    """The name that a ``requires`` depends on: the last target before ``pos`` (with its value)."""
    head = s[:pos].rstrip()
    m = re.search(
        rf"({T})(?:\s+({TOK_RX}|[a-z_]+))?\s*(?:argument|option)?\s*:?\s*(?:\w+\s*)?$", head
    )
    if m and (p.t.token(m.group(1)) or re.fullmatch(T, m.group(1))):
        tok = p.t.token(m.group(1))
        name = tok[1] if tok else m.group(1)
        target, _ = normalise_target(name.split("=")[0])
        extra = m.group(2)
        if extra and extra not in {"argument", "option", "training", "evaluation"}:
            return f"{target}={p.t.expand(extra).strip('` ')}"
        return target
    words = p.t.expand(head).strip().rstrip(":").split()
    return " ".join(words[-3:]) if words else None


def noun_target(p: Parser, span: str) -> str | None:
    """A target from a token, a snake_case name or a short noun phrase whose last noun may be
    plural (``"sequence lengths"`` -> ``sequence_length``, ``"the reward function"`` ->
    ``reward_function``)."""
    span = re.sub(r"^(?:provided|given|your|the|each|every|all)\s+", "", span.strip())
    if p.t.token(span) or re.fullmatch(T, span):
        return p.tgt(span)[0]
    words = span.split()
    if words and words[-1].endswith("s") and words[-1][:-1].lower() in PHRASE_NOUNS:
        words[-1] = words[-1][:-1]
    return phrase_target(" ".join(words))


