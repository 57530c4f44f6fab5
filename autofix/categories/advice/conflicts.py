"""The rules of settings that exclude each other and the smaller forms: ``A is incompatible
with B``, ``A cannot be passed together with B. Use one of ...``, ``set it in only one place,
preferably as P``, ``You can only pass one X in `T` ``, ``Adjust any of the aforementioned
params``, ``Expected either A or a <kind>``, ``without T=V``, ``override T in O``, ``enable
both``, ``deactivate one of those flags``, ``must pass a A and a B together``, ``migrate to
A/B``, ``increase the batch size to at least N``. Standard library only.
"""

from __future__ import annotations

import re

from autofix.categories.advice.model import normalise_target, pv
from autofix.categories.advice.parser import Built, Example, Parser, Rule, owner_of
from autofix.categories.advice.text import OWNER_NAMES, TOK_RX, phrase_target


def _remove_either(p: Parser, s: str, m: re.Match[str]) -> Built:
    """Either of the two names of the match taken out."""
    alts = tuple(
        p.mk("remove", m.group(0), p.tgt(g)[0], form="incompatible")
        for g in (m["a"], m["b"])
    )
    return [p.either(m.group(0), alts, "incompatible", m.start(), m.end())]


def _cannot_together(p: Parser, s: str, m: re.Match[str]) -> Built:
    if not re.search(r"\b(?:use|pass|choose|pick) (?:only )?one of\b", p.t.text, re.IGNORECASE):
        return None
    return _remove_either(p, s, m)


_BOTH_PLACES = re.compile(
    rf"({TOK_RX})\s+both\s+(?:as|in)\s+(?:an?\s+|the\s+)?([\w ]+?)\s+and\s+(?:as|in)\s+"
    rf"(?:an?\s+|the\s+)?({TOK_RX}|[\w ]+?)(?:[.,;]|$)"
)


def _only_one_place(p: Parser, s: str, m: re.Match[str]) -> Built:
    both = _BOTH_PLACES.search(p.t.text)
    if not both:
        return None
    target = p.tgt(both.group(1))[0]
    places = [both.group(2).strip(), owner_of(p, both.group(3)) or both.group(3)]
    keep = m["place"].strip()
    drop = next((pl for pl in places if pl != keep and keep not in pl), places[-1])
    drop = normalise_target(drop)[0] if drop else drop
    return p.mk("remove", m.group(0), target, None, drop, form="only-one-place")


def _only_one(p: Parser, s: str, m: re.Match[str]) -> Built:
    value = p.t.token(m["what"]) or (
        "",
        re.sub(r"^<class |>$", "", p.t.expand(m["what"])).strip("'\"").split(".")[-1],
    )
    return p.mk("remove", m.group(0), p.tgt(m["name"])[0], value[1] if value else None,
                constraint="keep one", form="only-one")


def _adjust_any(p: Parser, s: str, m: re.Match[str]) -> Built:
    names = [
        p.tgt(t)[0]
        for t in re.findall(TOK_RX, p.t.text)
        if (p.t.token(t) or ("", ""))[0] == "assign"
    ]
    names = [n for n in names if n and n not in {"n_samples"}]
    if not names:
        return None
    alts = tuple(
        p.mk("set", m.group(0), n, None, constraint="change", form="adjust-any") for n in names
    )
    return [p.either(m.group(0), alts, "adjust-any", m.start(), m.end())]


def _in_vocabulary(p: Parser, s: str, m: re.Match[str]) -> Built:
    return p.mk("set", m.group(0), p.tgt(m.group(1))[0], None, None,
                constraint="a token in the vocabulary", form="in-vocabulary")


def _expected_either(p: Parser, s: str, m: re.Match[str]) -> Built:
    if not p.subject:
        return None
    first = p.t.token(m["value"])
    alts = (
        p.mk("set", m.group(0), p.subject, pv(first[1]) if first else None,
             form="expected-either"),
        p.mk("set", m.group(0), p.subject, None,
             constraint=p.t.expand(m["kind"]).split(" (")[0], form="expected-either"),
    )
    return [p.either(m.group(0), alts, "expected-either", m.start(), m.end())]


def _without(p: Parser, s: str, m: re.Match[str]) -> Built:
    target, owner, value = p.tgt(m.group(1))
    if target and value is not None and re.match(r"\s*using\b|^Using\b", s):
        return p.mk("set", m.group(0), target, value, owner, form="without")
    return None


def _override(p: Parser, s: str, m: re.Match[str]) -> Built:
    owner = owner_of(p, m["owner"])
    res = []
    for tok in re.findall(TOK_RX, m["tokens"]):
        target, own, value = p.tgt(tok)
        if target and not target.startswith(("create_", "compute_")):
            res.append((m.start(), m.end(), p.mk(
                "set", m.group(0), target, value, own or owner,
                constraint=None if value is not None else "change", form="override")))
    return res


def _names(p: Parser) -> list[str | None]:
    return [p.tgt(t)[0] for t in re.findall(TOK_RX, p.t.text)]


def _enable_both(p: Parser, s: str, m: re.Match[str]) -> Built:
    names = _names(p)
    if len([n for n in names if n]) < 2:
        return None
    alts = [p.mk("set", m.group(0), n, True, form="enable-both") for n in names[:2] if n]
    return [(m.start() + i, m.start() + i + 1, a) for i, a in enumerate(alts)]


def _one_of_flags(p: Parser, s: str, m: re.Match[str]) -> Built:
    names = _names(p)
    flags = re.findall(r"(?<![\w-])--([a-z][\w-]*)", p.t.expand(p.t.text))
    cands = [f for f in flags] or [n for n in names if n]
    if len(cands) < 2:
        return None
    alts = tuple(
        p.mk("remove", m.group(0), normalise_target(c)[0], form="one-of-flags")
        for c in cands[:2]
    )
    return [p.either(m.group(0), alts, "one-of-flags", m.start(), m.end())]


def _pass_together(p: Parser, s: str, m: re.Match[str]) -> Built:
    owner = owner_of(p, m["owner"])
    return [
        (m.start() + i, m.start() + i + 1,
         p.mk("pass", m.group(0), t, None, owner, form="pass-together"))
        for i, t in enumerate((m["a"], m["b"]))
    ]


def _migrate_pair(p: Parser, s: str, m: re.Match[str]) -> Built:
    old = re.search(rf"({TOK_RX})\s*/\s*({TOK_RX})[^.]*?\bdeprecated", p.t.text)
    if not old:
        return None
    return [
        (m.start() + i - 1, m.start() + i, p.mk(
            "rename", m.group(0), p.tgt(old.group(i))[0], p.tgt(m.group(i))[0],
            form="migrate-pair"))
        for i in (1, 2)
    ]


def _adjust_phrase(p: Parser, s: str, m: re.Match[str]) -> Built:
    if not phrase_target(m["phrase"]):
        return None
    bound = (m["bound"] or "")
    op = ">=" if bound.startswith("at least") else "<=" if bound else "=="
    return p.mk("set", m.group(0), phrase_target(m["phrase"]), None, None,
                constraint=f"{op} {m['n']}", form="adjust-phrase")


MISC = (
    Rule(
        "without",
        re.compile(rf"\bwithout\s+({TOK_RX})"),
        _without,
        examples=(
            Example(
                'Using EarlyStoppingCallback without load_best_model_at_end=True. Once training '
                'is finished, the best model will not be loaded automatically.',
                'set load_best_model_at_end =True',
            ),
        ),
    ),
    Rule(
        "override",
        re.compile(
            rf"\boverride\s+(?P<tokens>(?:{TOK_RX})(?:\s*(?:,|and)\s*(?:{TOK_RX}))*)"
            rf"(?:\s+in\s+(?P<owner>{TOK_RX}|{OWNER_NAMES}))?",
            re.IGNORECASE,
        ),
        _override,
        imperative=True,
        examples=(
            Example(
                'Checkpoint directory <tmp>/acc_proj/checkpoints/checkpoint_0 (0) already exists. '
                'Please manually override `self.save_iteration` with what iteration to start '
                'with.',
                'set self.save_iteration [change]',
            ),
            Example(
                'Checkpoint directory {} ({}) already exists. Please manually override '
                '`self.save_iteration` with what iteration to start with.',
                'set self.save_iteration [change]',
            ),
        ),
    ),
    Rule(
        "enable-both",
        re.compile(r"\b(?:recommended to |you should |please )?enable both\b", re.IGNORECASE),
        _enable_both,
        each=False,
        examples=(
            Example(
                '`non_blocking` is enabled but `dataloader_pin_memory` is not. For the best '
                "performance, it's recommended to enable both.",
                'set non_blocking =True',
            ),
        ),
    ),
    Rule(
        "one-of-flags",
        re.compile(
            r"\b(?:deactivate|disable|remove|drop) one of (?:those|these|the) (?:flags|arguments"
            r"|options)\b",
            re.IGNORECASE,
        ),
        _one_of_flags,
        each=False,
        examples=(
            Example(
                'Using --fsdp xxx together with --deepspeed is not possible, deactivate one of '
                'those flags.',
                'either(remove fsdp | remove deepspeed)',
            ),
        ),
    ),
    Rule(
        "pass-together",
        re.compile(
            rf"\b(?:must|should|need to)\s+pass\s+(?:an?\s+)?(?P<a>[a-z]+)"
            rf"\s+and\s+(?:an?\s+)?(?P<b>[a-z]+)\s+together(?:\s+to\s+(?P<owner>{TOK_RX}))?"
        ),
        _pass_together,
        each=False,
        examples=(
            Example(
                'You must pass a model and an optimizer together to `accelerate.prepare()` when '
                'using MS-AMP.',
                'pass model @accelerate.prepare()',
            ),
            Example(
                'You must pass a model and an optimizer together to `accelerate.prepare()` when '
                'using TransformerEngine.',
                'pass model @accelerate.prepare()',
            ),
        ),
    ),
    Rule(
        "migrate-pair",
        re.compile(rf"\bmigrate to\s+({TOK_RX})\s*/\s*({TOK_RX})"),
        _migrate_pair,
        each=False,
        examples=(
            Example(
                'Detected legacy dataset columns `chosen_input_ids`/`rejected_input_ids`; they '
                'are deprecated and will not be supported in v1. Please migrate to '
                '`chosen_ids`/`rejected_ids`.',
                "rename chosen_input_ids ='chosen_ids'",
            ),
        ),
    ),
    Rule(
        "adjust-phrase",
        re.compile(
            r"\b(?:consider\s+)?(?P<verb>increas|reduc|lower|decreas)(?:e|ing)"
            r"\s+the\s+(?P<phrase>[a-z]+\s+[a-z]+)\s+to"
            r"\s+(?P<bound>at least|at most)?\s*(?P<n>\d+)",
            re.IGNORECASE,
        ),
        _adjust_phrase,
        each=False,
        examples=(
            Example(
                'You are using a per_device_train_batch_size of 1 with padding-free training. '
                'Using a batch size of 1 annihilate the benefits of padding-free training. Please '
                'consider increasing the batch size to at least 2.',
                'set batch_size [>= 2]',
            ),
        ),
    ),
)

CONFLICT = (
    Rule(
        "incompatible",
        re.compile(
            rf"(?:passing\s+(?:an?\s+|the\s+)?)?(?P<a>{TOK_RX})(?:\s+argument)?"
            rf"\s+(?:is|are)\s+incompatible\s+with\s+"
            rf"(?:providing|passing|using|setting)?\s*(?:an?\s+|the\s+)?(?P<b>{TOK_RX})",
            re.IGNORECASE,
        ),
        _remove_either,
        each=False,
        examples=(
            Example(
                'Passing a `model_init` is incompatible with providing the `optimizers` argument. '
                'You should subclass `Trainer` and override the `create_optimizer_and_scheduler` '
                'method.',
                'either(remove model_init | remove optimizers)',
            ),
        ),
    ),
    Rule(
        "cannot-together",
        re.compile(
            rf"(?P<a>{TOK_RX})\s+(?:cannot|can't|can not)\s+be\s+"
            rf"(?:passed|used|set|specified)\s+(?:together\s+)?with\s+"
            rf"(?:[^.]*?\bor\s+)?(?:an?\s+|the\s+)?(?P<b>{TOK_RX})"
        ),
        _cannot_together,
        each=False,
        examples=(
            Example(
                '`state_dict` cannot be passed together with a model name or a `gguf_file`. Use '
                'one of the two loading strategies.',
                'either(remove state_dict | remove gguf_file)', form="incompatible",
            ),
        ),
    ),
    Rule(
        "only-one-place",
        re.compile(
            r"\b(?:set|pass) it in only one place,?\s+preferably\s+(?:as"
            r"|in)\s+(?:an?\s+|the\s+)?(?P<place>[\w ]+?)\s*(?:[.,;]|$)",
            re.IGNORECASE,
        ),
        _only_one_place,
        each=False,
        examples=(
            Example(
                'You set `quantization_config` both as a trainer argument and in '
                '`args.model_init_kwargs`. Please set it in only one place, preferably as a '
                'trainer argument.',
                'remove quantization_config @model_init_kwargs',
            ),
        ),
    ),
    Rule(
        "only-one",
        re.compile(
            rf"\bcan only pass one\s+(?P<what>{TOK_RX}|<class \x01\d+\x02>|\S+)"
            rf"\s+in\s+(?P<name>{TOK_RX})"
        ),
        _only_one,
        each=False,
        examples=(
            Example(
                'You can only pass one <class '
                "'accelerate.utils.dataclasses.DistributedDataParallelKwargs'> in "
                '`kwargs_handlers`.',
                "remove kwargs_handlers ='DistributedDataParallelKwargs' [keep one]",
            ),
            Example(
                'You can only pass one {} in `kwargs_handlers`.',
                "remove kwargs_handlers ='{}' [keep one]",
            ),
        ),
    ),
    Rule(
        "adjust-any",
        re.compile(
            r"\badjust any of the (?:aforementioned|above|following) (?:parameters|arguments"
            r"|values)\b",
            re.IGNORECASE,
        ),
        _adjust_any,
        each=False,
        examples=(
            Example(
                'With n_samples=2, test_size=0.9 and train_size=None, the resulting train set '
                'will be empty. Adjust any of the aforementioned parameters.',
                'either(set test_size [change] | set train_size [change])',
            ),
            Example(
                'With n_samples={}, test_size={} and train_size={}, the resulting train set will '
                'be empty. Adjust any of the aforementioned parameters.',
                'either(set test_size [change] | set train_size [change])',
            ),
        ),
    ),
    Rule(
        "in-vocabulary",
        re.compile(
            rf"\bensure that (?:the\s+)?({TOK_RX})\s+exists in the vocabulary\b", re.IGNORECASE
        ),
        _in_vocabulary,
        each=False,
        examples=(
            Example(
                "The specified `eos_token` ('<|nope|>') is not found in the vocabulary of the "
                'given `processing_class` (BertTokenizer). Ensure that the `eos_token` exists in '
                'the vocabulary before using it as an EOS token.',
                'set eos_token [a token in the vocabulary]',
            ),
            Example(
                "The specified `pad_token` ('<|nope|>') is not found in the vocabulary of the "
                'given `processing_class` (BertTokenizer). Ensure that the `pad_token` exists in '
                'the vocabulary before using it as a padding token.',
                'set pad_token [a token in the vocabulary]',
            ),
        ),
    ),
    Rule(
        "expected-either",
        re.compile(
            r"\bexpected either\s+(?P<value>\x01\d+\x02)"
            r"\s+or\s+(?P<kind>an?\s+[^,.]+?(?:\([^)]*\))?)(?:,|\.|$)",
            re.IGNORECASE,
        ),
        _expected_either,
        each=False,
        examples=(
            Example(
                "Invalid `dtype` passed to the config. Expected either 'auto' or a string "
                "representing a valid `torch.dtype` (e.g., 'float32'), but got float77.",
                "either(set dtype ='auto' | set dtype [a string representing a valid "
                "`torch.dtype`])",
            ),
        ),
    ),
)
