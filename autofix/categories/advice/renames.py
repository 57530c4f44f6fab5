"""The rules of renamed and replaced names: ``X has been renamed to Y``, ``use Y instead
(of X)``, after "X is deprecated" ``use Y``, ``did you mean Y``. Standard library only.
"""

from __future__ import annotations

import re

from autofix.categories.advice.parser import Built, Example, Parser, Rule
from autofix.categories.advice.text import TOK_RX, T, imperative_at


def _renamed(p: Parser, s: str, m: re.Match[str]) -> Built:
    old, new = p.tgt(m["old"])[0], p.tgt(m["new"])[0]
    return p.mk("rename", m.group(0), old, new, form="renamed")


def _use_instead(p: Parser, s: str, m: re.Match[str]) -> Built:
    if not (
        imperative_at(s, m.start())
        or re.search(r"\b(?:consider|try)\s+$", s[: m.start()], re.IGNORECASE)
    ):
        return None
    new, _, value = p.tgt(m["new"])
    old_span = m["old"] or m["old2"]
    old = p.tgt(old_span)[0] if old_span else p.unsupported
    if value is not None:
        owner = p.owner_near(s[m.end() :], new) or p.owner_near("", new)
        return p.mk("set", m.group(0), new, value, owner, form="use-instead")
    if new:
        return p.mk("rename", m.group(0), old, new, form="use-instead")
    return None


def _deprecated_use(p: Parser, s: str, m: re.Match[str]) -> Built:
    if not p.unsupported:
        return None
    new, _, value = p.tgt(m.group(1))
    if value is not None:
        owner = p.owner_near(s[m.end() :], new)
        return p.mk("set", m.group(0), new, value, owner, form="deprecated-use")
    if new and new != p.unsupported:
        return p.mk("rename", m.group(0), p.unsupported, new, form="deprecated-use")
    return None


def _did_you_mean(p: Parser, s: str, m: re.Match[str]) -> Built:
    new = p.tgt(m.group(1))[0]
    old = None
    mo = re.search(
        rf"(?:argument|keyword|attribute|key|column|name|option)\s+({TOK_RX})", p.t.text
    )
    if mo:
        old = p.tgt(mo.group(1))[0]
    return p.mk("rename", m.group(0), old, new, form="did-you-mean")


RENAMED = (
    Rule(
        "renamed",
        re.compile(
            rf"(?P<old>{T})\s+(?:\w+\s+){{0,2}}?(?:has been|was|is)\s+renamed\s+to\s+(?P<new>{T})"
        ),
        _renamed,
        each=False,
        examples=(
            Example(
                'The `bfd-requeue` packing strategy has been renamed to `bfd_split`. Please '
                'update your configuration accordingly. The `bfd-requeue` strategy is deprecated '
                'and will be removed in v2.0.0.',
                "rename bfd-requeue ='bfd_split'",
            ),
        ),
    ),
)

REPLACED = (
    Rule(
        "use-instead",
        re.compile(
            rf"\b(?:use|using|call|override|define|migrate to|switch to"
            rf"|prefer)\s+(?:the\s+|a\s+|an\s+)?(?P<new>{T})(?:[^.]{{0,80}}?)"
            rf"\s+(?:instead(?:\s+of\s+(?:the\s+)?(?P<old>{T}))?|over\s+(?:the\s+)?(?P<old2>{T}))",
            re.IGNORECASE,
        ),
        _use_instead,
        examples=(
            Example(
                '`torch_dtype` is deprecated! Use `dtype` instead!',
                "rename torch_dtype ='dtype'",
            ),
            Example(
                '`{}` is deprecated and will be removed in v6. Use `{}` instead.',
                "rename {} ='{}'",
            ),
        ),
    ),
    Rule(
        "deprecated-use",
        re.compile(
            rf"\b(?:use|migrate to|switch to|define|override)\s+(?:the\s+)?({TOK_RX})(?!\s+(?:to"
            rf"|for|if|when)\b)",
            re.IGNORECASE,
        ),
        _deprecated_use,
        imperative=True,
        examples=(
            Example(
                '`inject_adapter_in_model` does not support {} yet. Please use `get_peft_model`.',
                "rename {} ='get_peft_model'",
            ),
        ),
    ),
    Rule(
        "did-you-mean",
        re.compile(rf"\bdid you mean:?\s+({T}|[A-Za-z_]\w*)", re.IGNORECASE),
        _did_you_mean,
        each=False,
        examples=(
            Example(
                "'TrainingArguments' object has no attribute 'generation_config'. Did you mean: "
                "'accelerator_config'?",
                "rename generation_config ='accelerator_config'",
            ),
            Example(
                "AttributeError: module 'datasets' has no attribute 'load_datset'. Did you mean: "
                "'load_dataset'?",
                "rename load_datset ='load_dataset'",
            ),
        ),
    ),
)

