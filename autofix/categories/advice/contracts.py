"""The rules of what a value the user hands over must be or give back: ``make sure T
returns X`` / ``T must return X``, ``X requires that T be V`` / ``X requires every T ... to be
V``, ``avoid using T``, ``provide a T selected in: [A, B]``, ``Expected A, got B instead``.
Standard library only.
"""

from __future__ import annotations

import re

from autofix.categories.advice.parser import (
    Built,
    Example,
    Parser,
    Rule,
    noun_target,
    subject_before,
)
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
    expected, _ = p.val(m["expected"])
    got = re.search(r"(\w+)['\"]?>?['\"]?\s*$", p.t.expand(m["got"]))
    if isinstance(expected, str) and got:
        return p.mk("rename", m.group(0), got.group(1), expected, None, form="expected-got")
    return None


def _selected_in(p: Parser, s: str, m: re.Match[str]) -> Built:
    target = noun_target(p, m["name"])
    values = [p.val(tok)[0] for tok in re.findall(TOK_RX, m["values"])]
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
        examples=(
            Example(
                "rollout_func must return keys ['completion_ids', 'logprobs'] in its output dict.",
                "set rollout_func [return keys ['completion_ids', 'logprobs'] in its output dict]",
            ),
            Example(
                "The reward function 'short' returned 1 rewards, but 2 were expected (one per "
                'prompt-completion pair). Make sure the reward function returns exactly one '
                'reward per completion.',
                'set reward_function [return exactly one reward per completion]',
            ),
        ),
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
        examples=(
            Example(
                'This collator requires that sequence lengths be even to create a leakage-free '
                'perm_mask. Please see relevant comments in source code for details.',
                'requires sequence_length [even] when This collator',
            ),
            Example(
                'interleave_datasets with probabilities requires every dataset that can be '
                'sampled (probability > 0) to be non-empty; datasets at indices [1] are empty.',
                'requires dataset [non-empty] when interleave_datasets',
            ),
        ),
    ),
    Rule(
        "avoid",
        re.compile(rf"\bavoid\s+(?:using|passing|setting)\s+(?:the\s+)?({TOK_RX})",
                   re.IGNORECASE),
        _avoid,
        examples=(
            Example(
                'Number of custom checkpoints in folder <tmp>/acc_state does not match the number '
                'of registered objects:\n\tFound checkpoints: 1\n\tRegistered objects: 0\nPlease '
                'make sure to only load checkpoints from folders that were created with the same '
                'set of registered objects,or avoid using `custom_checkpoint` in the filename for '
                'files in that same directory and load them in manually.',
                'remove custom_checkpoint',
            ),
        ),
    ),
    Rule(
        "expected-got",
        re.compile(
            rf"\bexpected\s+(?P<expected>{TOK_RX})\s*,\s*got\s+(?P<got>.+?)\s+instead\b",
            re.IGNORECASE,
        ),
        _expected_got,
        examples=(
            Example(
                "Expected 'XLoraConfig', got '<class 'peft.tuners.lora.config.LoraConfig'>' "
                'instead.',
                "rename LoraConfig ='XLoraConfig'",
            ),
        ),
    ),
    Rule(
        "selected-in",
        re.compile(
            r"\b(?:provide|use|choose|select|pass)\s+(?:an?\s+|the\s+)?"
            r"(?P<name>[a-z]+(?:\s+[a-z]+)?)\s+(?:selected|chosen|taken)\s+(?:in|from|among)"
            rf"\s*:?\s*\[(?P<values>(?:\s*{TOK_RX}\s*,?)+)\]",
            re.IGNORECASE,
        ),
        _selected_in,
        each=False,
        imperative=True,
        examples=(
            Example(
                "Column 'nope' not found in the dataset. Please provide a column selected in: "
                "['text', 'label']",
                "either(set column ='text' | set column ='label')",
            ),
        ),
    ),
)
