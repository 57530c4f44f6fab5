"""Every rule of the advice parser carries the real messages it must parse (Fixit style, as
recipes carry theirs): each example, read by the whole parser, gives the advice the rule
says, built by that rule (its ``form``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from autofix.categories.advice import RULES, Advice, Example, Rule, parse_advice

#: Rules no real message reaches yet (the libraries installed word these forms otherwise).
WITHOUT_EXAMPLE = {"either-nouns-not-both"}

CASES = [
    pytest.param(rule, example, id=f"{rule.form}-{i}")
    for rule in RULES
    for i, example in enumerate(rule.examples)
]


def _all(advice: tuple[Advice, ...]) -> Iterator[Advice]:
    for a in advice:
        yield a
        yield from _all(a.alternatives)


@pytest.mark.parametrize(("rule", "example"), CASES)
def test_each_rule_parses_its_examples(rule: Rule, example: Example) -> None:
    found = list(_all(parse_advice(example.message)))
    assert example.gives in [str(a) for a in found], found
    forms = {a.form for a in found if str(a) == example.gives}
    assert (example.form or rule.form) in forms


def test_each_rule_has_an_example() -> None:
    assert {r.form for r in RULES if not r.examples} == WITHOUT_EXAMPLE


def test_every_rule_is_named_once() -> None:
    names = [r.form for r in RULES]
    assert len(names) == len(set(names))
