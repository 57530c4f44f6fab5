"""The rules that call a method or change the environment: ``call / run `x.f()` (first)``,
``merge and unload``, ``remove ... using `ds.drop_index` ``, ``T cannot be V``, ``pip
install P`` / ``upgrade P`` / ``ensure that P is installed``. Standard library only.
"""

from __future__ import annotations

import re

from autofix.categories.advice.model import NONE, Advice
from autofix.categories.advice.parser import Built, Example, Found, Parser, Rule
from autofix.categories.advice.text import TOK_RX, T, imperative_at

_CALL = re.compile(rf"\b(?:call|run|first run|invoke)\s+(?:the\s+)?({TOK_RX})", re.IGNORECASE)
_CALL_CODE = re.compile(r"\b(?:first run|run|call)\s+`\.?([A-Za-z_]\w*)\(\)")
_CALL_WITH = re.compile(r"\b(?:with|using|via)\s+`?[\w.]+\.([A-Za-z_]\w*)\(")


def _calls(p: Parser, s: str) -> list[Found]:
    """``call / run `x.f()` `` (a code token, then plain backticks), ``with `x.f(` ``
    after "you should": one scan, a later form never reading inside an earlier one."""
    res: list[Found] = []
    for m in _CALL.finditer(s):
        if not imperative_at(s, m.start()) and not re.search(
            r"\b(?:first|to)\s+$", s[: m.start()]
        ):
            continue
        tok = p.t.token(m.group(1))
        if not tok or tok[0] != "code":
            continue
        name = tok[1].split("=")[-1].strip() if "=" in tok[1] else tok[1]
        fm = re.search(r"\.?([A-Za-z_][\w.]*)\s*\(", name) or re.fullmatch(
            r"\.?([A-Za-z_][\w.]*)", name
        )
        if fm:
            target = fm.group(1).split(".")[-1]
            res.append((m.start(), m.end(), p.mk("call", m.group(0), target, None, None,
                                                 form="call")))
    for m in _CALL_CODE.finditer(s):
        if not any(a_s <= m.start() < a_e for a_s, a_e, _ in res):
            res.append((m.start(), m.end(), p.mk("call", m.group(0), m.group(1), form="call")))
    for m in _CALL_WITH.finditer(s):
        if re.search(
            r"\b(?:you should|please|you can|you need to)\b", s[: m.start()], re.IGNORECASE
        ) and not any(a_s <= m.start() < a_e for a_s, a_e, _ in res):
            res.append((m.start(), m.end(), p.mk("call", m.group(0), m.group(1), form="call")))
    return res


def _merge_unload(p: Parser, s: str, m: re.Match[str]) -> Built:
    return p.mk("call", m.group(0), "merge_and_unload", form="call")


def _using_call(p: Parser, s: str, m: re.Match[str]) -> Built:
    tok = p.t.token(m.group(1))
    if (
        tok
        and re.fullmatch(
            r"[\w.]+\.(drop_index|unload|merge_and_unload|with_format|reset_format)\(?\)?",
            tok[1],
        )
        and re.search(r"\b(?:please|you can|you should)\b", s[: m.start()], re.IGNORECASE)
    ):
        return p.mk("call", m.group(0), tok[1].split(".")[-1].rstrip("()"), form="call")
    return None


def _cannot_be(p: Parser, s: str, m: re.Match[str]) -> Built:
    target = p.tgt(m["name"])[0]
    value, _ = p.val(m["value"])
    if not target:
        return None
    return p.mk("set", m.group(0), target, None, p.owner_near("", target),
                constraint=f"!= {value!r}" if value is not NONE else "!= None",
                form="cannot-be")


def _install(p: Parser, s: str) -> list[Found]:
    """``pip install P`` / ``upgrade P`` / ``ensure that P is installed``, read on the
    sentence's own words; zero-width spans after the sentence, so that they never block
    another rule."""
    res = []
    full = p.t.expand(s)
    for m in re.finditer(r"pip install\s+(?:-U\s+|--upgrade\s+)?([^\s,;`]+)", full):
        res.append(Advice("install", m.group(1).strip("'\"`.").rstrip(")"), None,
                          text=m.group(0), form="pip-install"))
    for m in re.finditer(
        r"\b(?:upgrade|update)\s+(?:your\s+|the\s+)?`?((?:torch|pytorch|accelerate|peft"
        r"|transformers|"
        r"deepspeed|trl|datasets)\b[^\s`,]*)",
        full,
        re.IGNORECASE,
    ):
        res.append(Advice("install", m.group(1), None, text=m.group(0), constraint="upgrade",
                          form="upgrade"))
    for m in re.finditer(r"\bensure that `([\w\-]+(?:\s*[<>=]=?\s*[\d.]+)?)` is installed", full):
        res.append(Advice("install", m.group(1), None, text=m.group(0), form="ensure-installed"))
    return [(len(s) + i, len(s) + i, a) for i, a in enumerate(res)]


CALL = (
    Rule(
        "call",
        None,
        scan=_calls,
        examples=(
            Example(
                'Using `.sort` on a dataset with attached indexes is not allowed. You can first '
                'run `.drop_index() to remove your index and then re-add it.',
                'call drop_index',
            ),
            Example(
                'Using `.select` on a dataset with attached indexes is not allowed. You can first '
                'run `.drop_index() to remove your index and then re-add it.',
                'call drop_index',
            ),
        ),
    ),
    Rule(
        "merge-unload",
        re.compile(r"\b(?:please\s+)?(?:first\s+)?merge and unload\b", re.IGNORECASE),
        _merge_unload,
        each=False,
        imperative=True,
        examples=(
            Example(
                'You passed a `PeftModel` instance together with a `peft_config` to the trainer. '
                'Please first merge and unload the existing adapter, save the resulting base '
                'model, and then pass that base model along with the new `peft_config` to the '
                'trainer.',
                'call merge_and_unload', form='call',
            ),
        ),
    ),
    Rule(
        "using-call",
        re.compile(rf"\busing\s+({TOK_RX})"),
        _using_call,
        examples=(
            Example(
                'please remove all the indexes using `dataset.drop_index` before saving a dataset',
                'call drop_index', form='call',
            ),
        ),
    ),
    Rule(
        "cannot-be",
        re.compile(
            rf"(?P<name>{T})\s+(?:cannot|can't|must not|should not|may not)\s+be\s+"
            rf"(?P<value>{TOK_RX}|-?\d+\b|None|True|False)(?!\s+\w+ed\b)"
        ),
        _cannot_be,
        examples=(
            Example(
                "`config_name` cannot be 'data'. Please, choose another name for configuration.",
                "set config_name [!= 'data']",
            ),
            Example(
                "When packing is enabled, `max_length` can't be `None`.",
                'set max_length [!= None]',
            ),
        ),
    ),
)

INSTALL = (Rule(
        "install",
        None,
        scan=_install,
        examples=(
            Example(
                'Prefix tuning requires `peft>=0.18.0` when the model is loaded with a device '
                'map. Upgrade peft, or load the model with `device_map=None`.',
                'install peft [upgrade]', form='upgrade',
            ),
            Example(
                'This function needs wandb installed: `pip install wandb`',
                'install wandb', form='pip-install',
            ),
        ),
    ),)
