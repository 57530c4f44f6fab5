"""Parse the advice that library error and warning messages carry into typed edits.

``parse_advice(message)`` reads a message such as::

    You have set `args.eval_strategy` to steps but you didn't pass an `eval_dataset` to
    `Trainer`. Either set `args.eval_strategy` to `no` or pass an `eval_dataset`.

and returns the edits it advises::

    (Advice(kind="either", alternatives=(
        Advice(kind="set", target="eval_strategy", value="no", owner="TrainingArguments"),
        Advice(kind="pass", target="eval_dataset", owner="Trainer"))),)

It works on real messages and on the inventory's templates (where ``{}`` stands for a
value filled in at run time: such a target or value comes back as the string ``"{}"``).
Only sentences that *advise* are read: descriptions of what the user did ("You have set
X to steps") or of what the library did by itself ("Setting num_proc to 1") give nothing.

Forms understood (``T`` a target: a backticked name, ``--flag``, ``args.x``,
``cfg['key']`` or a snake_case word; ``V`` a value: a literal, a backticked literal, a
bare word; ``T=V`` an assignment, backticked or bare, or ``'T':V``). Each has a real
message in ``tests/test_advice_parse.py``:

=========================================  ==========  ========================================
form (example)                             kind        result
=========================================  ==========  ========================================
set T to V / set T=V / set both A and B    set         target T, value V (one per name)
use / pass / load the model with T=V       set         target T, value V
T should / must be (set to) V              set         target T, value V
T must be > 0 / positive / divisible by    set         constraint "> 0", "positive"...
set T to a positive / non-zero value       set         constraint "a positive value"
Expected value T >= 0; T cannot be V       set         constraint ">= 0"; "!= V"
increase / reduce / lower / change T       set         constraint "increase" / "decrease"
enable / disable T; enable both            set         value True / False
set it / this to V                         set         target: the name just before
Ensure that the `T` exists in the vocab..  set         constraint "a token in the vocabulary"
T must be one of A, B / either A or B      either      set T=A | set T=B
Supported / possible values are A and B    either      same, T from "Invalid/Unknown T"
The available ... are: [A, B] + change T   either      set T=A | set T=B (the real values)
Expected either A or a <kind>              either      set T=A | set T [a <kind>]
Either <advice>, <advice>, or <advice>     either      the parsed advices
<advice>, or <advice>                      either      same, without "either"
requires either A or B                     either      requires A | requires B
A or B, but not both / only one of them    either      remove A | remove B
At most one of A and B can be True         either      set A=False | set B=False
at least one of A or B must be set         either      specify A | specify B
A is incompatible with (providing) B       either      remove A | remove B
A cannot be passed together with B ...     either      remove A | remove B (with "use one of")
Adjust any of the aforementioned params    either      set each named T [change]
T has to / must (also) be specified        specify     target T
please specify / provide T; T is required  specify     target T
Set T first                                specify     target T
X is deprecated ... use Y (instead)        rename      target X, value Y (Y=V: kind set)
X has been renamed to Y; migrate to A/B    rename      target X, value Y (pairwise for A/B)
Did you mean: Y                            rename      target: the unknown name, value Y
use Y instead (of X) / prefer Y over X     rename      target X (or the unsupported name)
X requires T(=V) / T to be defined         requires    target T, value V, when X
X requires the a and b NOUN to match       requires    target a_NOUN, constraint "== b_NOUN"
X can only be set / used when T(=V)        requires    target T, value V, when X
Trainer: training requires a T             pass        target T, owner Trainer
pass (in) (a|an|the) T / pass A, or B      pass        target T (owner from "to O")
pass T through a model_init function       pass        target model_init
must pass a A and a B together to O        pass        one per name, owner O
remove / unset / drop / omit T (in O)      remove      target T, owner O
remove V from T                            remove      target T, value V
do not set T(=V) / don't pass T            remove      target T, value V
set it in only one place, preferably as P  remove      target T, owner: the other place
You can only pass one X in `T`             remove      target T, value X [keep one]
run / call `x.f()` (first); merge and ..   call        target f / merge_and_unload
make sure T returns X / T must return X    set         target T, constraint "return X"
X requires that T be V                     requires    target T, constraint V, when X
X requires every T (that ...) to be V      requires    target T, constraint V, when X
avoid using T                              remove      target T
provide a T selected in: [A, B]            either      set T=A | set T=B
Expected A, got B instead                  rename      target B, value A
pip install P / upgrade P / ensure P is..  install     target P (never a script edit)
=========================================  ==========  ========================================

``owner`` is taken when the message names it: "in `TrainingArguments`", "to `Trainer`",
"in the `SFTConfig`", "via the TrainingArguments", ``GRPOConfig(max_steps=...)``,
``args.x`` (TrainingArguments), ``model.config.x``, ``fsdp_config['x']``, "to
`from_pretrained`", "in DeepSpeed config" (``deepspeed_config``), or, failing that, where
the message names the same target elsewhere ("pass an `eval_dataset` to `Trainer`").

Besides the kinds that name a change (``set``, ``either``, ``specify``, ``rename``,
``requires``, ``pass``) there are ``remove`` (take an argument out), ``call`` (call a method
first) and ``install`` (an environment change, never a script edit). Besides ``target``,
``value``, ``alternatives`` and ``owner``, an :class:`Advice` has ``when`` (the setting the
advice is conditional on: "--load_best_model_at_end requires ..." gives
``when="load_best_model_at_end"``), ``constraint`` (a requirement that is not a literal
value: ``"> 0"``, ``"a positive value"``, ``"divisible by 4"``), ``has_value`` (True when
the message names the value, so that a named ``None`` differs from no value), ``text`` (the
words of the message it was read from) and ``form`` (the rule that matched, for statistics;
not compared).

Pure standard library (``re``, ``ast``): the messages are text, no library is imported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Advice", "parse_advice", "normalise_target", "parse_value", "KINDS"]

KINDS = ("set", "either", "specify", "rename", "requires", "pass", "remove", "install", "call")
PLACEHOLDER = "{}"


class _NoneLiteral:
    """A value the message names as ``None`` (distinct from "no value named")."""

    def __repr__(self) -> str:
        return "None"


NONE = _NoneLiteral()


@dataclass(frozen=True)
class Advice:
    """One edit a message advises."""

    kind: str
    target: str | None = None
    value: Any = None
    alternatives: tuple[Advice, ...] = ()
    owner: str | None = None
    text: str = ""
    when: str | None = None
    constraint: str | None = None
    has_value: bool = False
    form: str = field(default="", compare=False)

    def __str__(self) -> str:  # compact, for listings
        if self.kind == "either":
            return "either(" + " | ".join(str(a) for a in self.alternatives) + ")"
        parts = [self.kind, self.target or "?"]
        if self.has_value:
            parts.append(f"={self.value!r}")
        if self.constraint:
            parts.append(f"[{self.constraint}]")
        if self.owner:
            parts.append(f"@{self.owner}")
        if self.when:
            parts.append(f"when {self.when}")
        return " ".join(parts)


# --------------------------------------------------------------------------- tokens

_TOK = "\x01{}\x02"
_TOK_RX = r"\x01\d+\x02"
_TOK_FIND = re.compile(r"\x01(\d+)\x02")

_OWNER_NAMES = (
    r"(?:Seq2Seq)?TrainingArguments|(?:Seq2Seq)?Trainer|SFTConfig|DPOConfig|GRPOConfig|RewardConfig"
    r"|KTOConfig"
    r"|SFTTrainer|DPOTrainer|GRPOTrainer|RewardTrainer|LoraConfig|PeftConfig|PrefixTuningConfig"
    r"|AcceleratorConfig"
    r"|Accelerator|DistributedConfig|DataCollator\w*|from_pretrained|get_peft_model|save_pretrained"
    r"|accelerate\.prepare\(\)|Accelerator\.prepare\(\)|DeepSpeed config(?: file)?"
    r"|deepspeed config(?: file)?"
    r"|the configuration of the model|model config|generation config|model\.config"
    r"|PeftModel\.from_pretrained"
    r"|Dataset\.\w+|DatasetDict|load_dataset|TrainingArguments|gradient_checkpointing_kwargs"
    r"|model_init_kwargs"
    r"|accelerator_config|fsdp_config|parallelism_config|peft_config|dataset_kwargs"
)
_OWNER_RX = re.compile(rf"^(?:{_OWNER_NAMES})$")
_OWNER_ALIASES = {
    "the configuration of the model": "model.config",
    "model config": "model.config",
    "generation config": "model.generation_config",
    "deepspeed config": "deepspeed_config",
    "deepspeed config file": "deepspeed_config",
}
_ARGS_PREFIX = re.compile(r"^(?:self\.)?(?:trainer\.)?(?:training_)?args\.")


def _normalise_ws(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def parse_value(text: str) -> Any:
    """A value as Python: ``"`no`"`` -> ``"no"``, ``"1"`` -> 1, ``"True"`` -> True.

    ``{}`` (a template placeholder) stays the string ``"{}"``; ``...`` gives None.
    """
    value = _pv(text)
    return None if value is NONE else value


def _pv(text: str) -> Any:
    """:func:`parse_value`, with a named ``None`` as :data:`NONE`."""
    raw = text.strip().strip("`").strip()
    if re.fullmatch(r".*[^.]\.|.*[,;:]", raw) and not re.fullmatch(r"-?\d+\.", raw):
        raw = raw[:-1]
    if raw in {PLACEHOLDER, "'{}'", '"{}"'}:
        return PLACEHOLDER
    if raw in {"...", ""}:
        return None
    low = raw.lower()
    if low in {"true", "false", "none", "null"}:
        return {"true": True, "false": False, "none": NONE, "null": NONE}[low]
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return raw.rstrip(".,;:")
    if value is None:
        return NONE
    return None if value is Ellipsis else value


def normalise_target(text: str) -> tuple[str, str | None]:
    """``"`args.eval_strategy`"`` -> ``("eval_strategy", "TrainingArguments")``.

    Strips backticks, quotes and leading ``--``; ``args.``/``self.args.`` give the
    owner ``TrainingArguments``; ``model.config.x`` gives ``("x", "model.config")``;
    ``cfg['key']`` gives ``("key", "cfg")``; a trailing ``()`` is dropped.
    """
    t = text.strip().strip("`").strip().strip("'\"").strip()
    t = re.sub(r"^--?", "", t)
    t = re.sub(r"\s*(?:argument|parameter|flag|option)s?$", "", t)
    if t.endswith("()") and "." not in t:
        t = t[:-2]
    owner: str | None = None
    if _ARGS_PREFIX.match(t):
        t, owner = _ARGS_PREFIX.sub("", t), "TrainingArguments"
    m = re.match(r"^([A-Za-z_][\w.]*)\[['\"]?([\w\-.]+)['\"]?\]$", t)
    if m:
        return m.group(2), m.group(1)
    m = re.match(
        r"^((?:self\.)?model\.config|model\.generation_config|config|parallelism_config|"
        r"[a-z_]+_config)\.([A-Za-z_]\w*)$",
        t,
    )
    if m:
        return m.group(2), m.group(1).removeprefix("self.")
    if re.match(r"^[A-Z][a-z]+_[a-z_]+$", t):  # "Pad_token_id" at a sentence start
        t = t[0].lower() + t[1:]
    return t, owner


# --------------------------------------------------------------------------- protecting


class _Text:
    """A message with code spans, assignments, quotes and placeholders protected as tokens."""

    _BACKTICK = re.compile(r"`([^`]+)`")
    _ASSIGN = re.compile(
        r"(?<![\w.\-`'\"\x01\x02])(--?)?([A-Za-z_][\w.]*(?:\[['\"]?[\w\-]+['\"]?\])*)\s?(?<![<>!=])"
        r"=(?!=)\s?"
        r"('[^']*'|\"[^\"]*\"|\{[^{}]*\}|\[[^\]]*\]|\x01\d+\x02|\.\.\.|[\w+\-]+(?:\.\d+)*(?:\.[a-z_"
        r"]\w*)*)"
    )
    _QUOTE = re.compile(r"(?<![\w])'([^'\n]{1,80}?)'(?![\w])|\"([^\"\n]{1,80}?)\"")
    _HOLE = re.compile(r"\{\}")

    def __init__(self, message: str) -> None:
        self.raw = _normalise_ws(message)
        self.tokens: list[tuple[str, str]] = []  # (kind, text): code | assign | quote | hole
        text = self.raw
        text = self._BACKTICK.sub(lambda m: self._add("code", m.group(1)), text)
        text = self._ASSIGN.sub(lambda m: self._add("assign", m.group(0)), text)
        text = self._QUOTE.sub(lambda m: self._add("quote", m.group(0)), text)
        text = self._HOLE.sub(lambda m: self._add("hole", PLACEHOLDER), text)
        self.text = text

    def _add(self, kind: str, text: str) -> str:
        self.tokens.append((kind, text))
        return _TOK.format(len(self.tokens) - 1)

    def expand(self, text: str) -> str:
        """Protected text back to the original characters."""

        def back(m: re.Match[str]) -> str:
            kind, tok = self.tokens[int(m.group(1))]
            if kind == "code":
                return "`" + self.expand(tok) + "`"
            return self.expand(tok) if _TOK_FIND.search(tok) else tok

        return _TOK_FIND.sub(back, text)

    def token(self, text: str) -> tuple[str, str] | None:
        """(kind, inner text) when ``text`` is exactly one token."""
        m = re.fullmatch(r"\s*\x01(\d+)\x02\s*", text)
        if not m:
            return None
        kind, tok = self.tokens[int(m.group(1))]
        return kind, self.expand(tok)


# --------------------------------------------------------------------------- grammar

#: A target: a protected token, a ``--flag``, a snake_case or dotted name.
_T = (
    rf"(?:{_TOK_RX}|(?<![\w\-])--?[A-Za-z_][\w\-.]*(?<!\.)|[A-Za-z_]\w*_\w+(?:\.\w+)*"
    r"|[a-z]\w*\.[a-z_]\w*)"
)
_W = rf"(?:{_T}|[A-Za-z]\w*)"  # a target or any single word
_V = (
    rf"(?:{_TOK_RX}|-?\d+(?:\.\d+)?(?:e-?\d+)?|True|False|None|true|false|none|an? (?:positive"
    rf"|non-zero|"
    rf"nonzero|non-negative|valid|integer|different|smaller|larger|lower|higher"
    rf"|non-empty)(?: integer)? value"
    rf"|a value (?:greater|larger|smaller|lower"
    rf"|higher) than \S+|a multiple of \S+|[A-Za-z_][\w\-]*)"
)
_FILL = (
    r"(?:(?:both|the|your|its|an?|this|that|these|each|every|only|also|argument|parameter"
    r"|option|flag|environment variable)\s+)*"
)
_LEAD = (
    r"(?:^|(?<=[.:;!?(,])\s*|\b(?:please|either|or|and|then|should|must|can|could|may|need to"
    r"|needs to|have to|want to|in order to|only|"
    r"try|consider|you may want to|make sure to|recommended to|instead|first|by|simply|just|"
    r"fix,?|fix this,?|solve this,?|resolve this,?|e\.g\.,?|explicitly|alternatively,?|manually|"
    r"you should|you can|you must|you need to|you have to|you'll need to|we recommend you"
    r"|it is recommended to|"
    r"it's recommended to|you might want to|otherwise,?|if so,?|in that case,?)\s+)"
)
_CONSTRAINT = (
    r"an?\s+(?:positive|non-zero|nonzero|non-negative|strictly positive)\s+(?:integer\s+)?(?:value"
    r"|integer|number)"
    r"|an?\s+\x01\d+\x02(?:\s*,?\s*or\s+an?\s+\x01\d+\x02)+|(?:>=|<=|>|<|==)\s*\S+|(?:greater"
    r"|larger|bigger|smaller|less|lower|higher)(?: than| or equal to)?"
    r"\s+\S+|(?:positive|non-negative|nonnegative|non-zero|nonzero|negative)(?: integer| number"
    r"| value| float)?"
    r"|an? (?:integer|positive integer|float|string|boolean|list|dict)(?: [^.,;]{0,40})?"
    r"|divisible by\s+\S+"
    r"|a multiple of\s+\S+|between\s+\S+\s+and\s+\S+|in \[[^\]]*[\])]|in \([^)]*\)|at least\s+\S+"
    r"|at most\s+\S+|equal to\s+\S+|the same (?:as|length as)\s+\S+"
)


_GERUND_LEAD = re.compile(
    r"\b(?:try|consider|by|recommend|recommended|suggest|or|avoid|prefer)\s+$", re.IGNORECASE
)


def _imperative_at(text: str, start: int) -> bool:
    """True when the verb at ``start`` is advice (a command), not a description.

    A gerund ("Setting X ...", "Passing X ...") describes, unless led by "try", "consider",
    "by", "or"...: "Setting num_proc to 1" is what the library did, "try setting" is advice.
    """
    before = text[:start]
    if re.match(r"[A-Za-z]+ing\b", text[start:]):
        return bool(_GERUND_LEAD.search(before))
    if re.search(_LEAD + r"$", before, re.IGNORECASE) or not before.strip():
        return not re.search(
            r"\b(?:you|we|i|has|have|had|was|were|is|are|be|been|being|it|they|which|that)\s+$",
            before,
            re.IGNORECASE,
        ) or bool(
            re.search(
                r"\b(?:you (?:should|can|must|need to|have to|may want to|might want to)"
                r"|please)\s+$",
                before,
                re.IGNORECASE,
            )
        )
    return False


class _Parser:
    def __init__(self, message: str) -> None:
        self.t = _Text(message)
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
                    return target, owner, _pv(val)
            m = re.fullmatch(
                r"['\"]?([A-Za-z_]\w*)['\"]?\s*:\s*(\S.*)", inner
            )  # 'use_configured_state':True
            if kind == "code" and m and not inner.startswith(("http", "{")):
                return m.group(1), None, _pv(m.group(2))
            if kind == "hole":
                return PLACEHOLDER, None, None
            m = re.fullmatch(r"([A-Z]\w*)\((\w+)=(.*)\)", inner)  # GRPOConfig(max_steps=...)
            if m:
                return m.group(2), m.group(1), _pv(m.group(3))
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
        if re.fullmatch(_T + r"|[A-Za-z]\w*", text):
            target, owner = normalise_target(text)
            return target, owner, None
        return None, None, None

    def antecedent(self, s: str, pos: int) -> str | None:
        """What "it" / "this" at ``pos`` refers to: the last name before it in the sentence."""
        for tok in reversed(re.findall(_TOK_RX, s[:pos])):
            kind_text = self.t.token(tok)
            if kind_text and kind_text[0] in {"code", "assign"}:
                target = self.tgt(tok)[0]
                if target and not _OWNER_RX.match(target) and not re.match(r"[A-Z]", target):
                    return target
        return self.last_target

    def val(self, text: str) -> tuple[Any, str | None]:
        """(value, constraint) from a value-ish span."""
        text = text.strip()
        tok = self.t.token(text)
        if tok is not None:
            return _pv(tok[1]), None
        if re.match(r"an? |a value|a multiple", text):
            return None, text
        return _pv(text), None

    def owner_near(self, clause: str, target: str | None) -> str | None:
        """The owner named right after an advice ("... in the `SFTConfig`"), else where the
        message names the same target elsewhere."""
        m = re.match(
            rf"\s*(?:[\w']+\s+){{0,3}}?(?:in|to|of|on|for|via|inside|into|when calling"
            rf"|passed to)\s+"
            rf"(?:the\s+|your\s+|a\s+)?({_TOK_RX}|{_OWNER_NAMES})",
            clause,
        )
        if m:
            cand = self.t.token(m.group(1))
            name = cand[1] if cand else m.group(1)
            name = re.sub(r"\(.*\)$", "", name) if not name.endswith("prepare()") else name
            if _OWNER_RX.match(name) or re.match(
                r"^[A-Z]\w*(?:Config|Arguments|Trainer|Plugin|Collator\w*)$", name
            ):
                return name
        if target and target in self.owners:
            return self.owners[target]
        return None

    def _scan_owners(self) -> None:
        rx = re.compile(
            rf"({_T})(?:\s+\w+){{0,3}}?\s+(?:to|in|of)\s+(?:the\s+|your\s+)?({_TOK_RX}"
            rf"|{_OWNER_NAMES})"
        )
        for m in rx.finditer(self.t.text):
            target, _, _ = self.tgt(m.group(1))
            tok = self.t.token(m.group(2))
            owner = tok[1] if tok else m.group(2)
            if target and (
                _OWNER_RX.match(owner) or re.match(r"^[A-Z]\w*(?:Config|Arguments|Trainer)$", owner)
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
        owner = _OWNER_ALIASES.get(owner.lower(), owner) if owner else owner
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
        return tuple(_dedupe(out))

    def _context(self, sent: str) -> None:
        """Remember what the message is about, for forms that do not repeat it."""
        m = re.search(
            rf"\b(?:invalid|unknown|unsupported|unrecognized)\s+(?:value\s+(?:for"
            rf"|of)\s+)?(?:the\s+)?"
            rf"({_T}|[a-z]+(?:\s+[a-z]+){{0,2}}?(?=\s*:))",
            sent,
            re.IGNORECASE,
        )
        if m:
            span = m.group(1)
            self.subject = (
                self.tgt(span)[0]
                if self.t.token(span) or re.fullmatch(_T, span)
                else span.replace(" ", "_")
            ) or self.subject
        m = re.search(
            rf"(?:^|\W)({_T})\s+(?:{_TOK_RX}\s+)?(?:is|was)\s+(?:an?\s+)?(?:invalid|not a valid"
            rf"|unsupported|not supported)",
            sent,
        )
        if m:
            self.subject = self.tgt(m.group(1))[0] or self.subject
        m = re.search(
            rf"({_T}),?\s+(?:which\s+)?(?:is|are|was)\s+(?:now\s+)?deprecated|(?:does not|doesn't"
            rf"|do not|don't|"
            rf"cannot|can't)\s+(?:yet\s+)?(?:support|use|be used with)\s+(?:the\s+)?({_T}"
            rf"|[A-Z][A-Z0-9]+\b)",
            sent,
        )
        if m:
            span = m.group(1) or m.group(2)
            self.unsupported = (
                self.tgt(span)[0] if self.t.token(span) or re.fullmatch(_T, span) else span
            )
        m = re.search(rf"\bonly defines\s+({_TOK_RX}),?\s+which\s+is\s+deprecated", sent)
        if m:
            self.unsupported = self.tgt(m.group(1))[0]

    def sentence(self, sent: str) -> list[Advice]:
        found: list[tuple[int, int, Advice]] = []
        for rule in _RULES:
            for start, end, adv in rule(self, sent):
                if any(s < end and start < e for s, e, _ in found):
                    continue
                found.append((start, end, adv))
        found.sort(key=lambda f: f[0])
        return _combine_or(self, sent, found)


def _key(a: Advice) -> tuple[Any, ...]:
    return (a.kind, a.target, repr(a.value), a.owner, tuple(_key(x) for x in a.alternatives))


def _dedupe(items: list[Advice]) -> list[Advice]:
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
        if any(_key(a) == _key(b) for b in out):
            continue
        out.append(a)
    return out


_OR_GAP = re.compile(
    r"[\s,]*(?:\(?\s*)?(?:or|or else|or alternatively,?|alternatively,?|or,? if [^,]{1,60},)"
    r"(?:\s+(?:you\s+)?(?:can|could|should|may|just|simply|instead|please))?\s*",
    re.IGNORECASE,
)
_PURPOSE = re.compile(
    r"\s*(?:(?:to|so that|in order to|and)\s[^,;]{0,70}?|\([^)]{0,80}\))?(?=[\s,]*\bor\b)",
    re.IGNORECASE,
)


def _combine_or(p: _Parser, sent: str, found: list[tuple[int, int, Advice]]) -> list[Advice]:
    """Advices joined by "or" (or listed after "Either", commas then "or") become one ``either``."""
    out: list[tuple[int, int, Advice]] = []
    for start, end, adv in found:
        if out:
            pstart, pend, prev = out[-1]
            gap = sent[pend:start]
            purpose = _PURPOSE.match(gap)
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
            if _OR_GAP.fullmatch(rest) or either_list:
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


# --------------------------------------------------------------------------- rules
# Each rule: (parser, protected sentence) -> list of (start, end, Advice); earlier rules win a span.

_Rule = Callable[["_Parser", str], "list[tuple[int, int, Advice]]"]
_STOP = {
    "it",
    "this",
    "that",
    "them",
    "which",
    "there",
    "one",
    "both",
    "the",
    "a",
    "an",
    "some",
    "any",
    "more",
    "already",
    "just",
    "value",
    "values",
    "you",
    "we",
    "every",
    "each",
    "its",
    "their",
    "these",
    "those",
    "in",
    "of",
}
_PREP = (
    r"(?:for|in|of|to|with|from|on|at|by|per|as|when|if|and|or|that|which|before|after|so"
    r"|because|but)"
)
_PHRASE_NOUNS = {
    "token",
    "tokens",
    "name",
    "column",
    "columns",
    "config",
    "dataset",
    "model",
    "function",
    "key",
    "value",
    "strategy",
    "collator",
    "tokenizer",
    "optimizer",
    "scheduler",
    "dataloader",
    "steps",
    "size",
    "id",
    "path",
    "directory",
    "template",
    "mask",
    "type",
    "mode",
    "length",
    "head",
}


def _phrase_target(phrase: str) -> str | None:
    """``"a mask token"`` -> ``"mask_token"``; ``"an eval strategy"`` -> ``"eval_strategy"``;
    else None."""
    words = [
        w
        for w in phrase.split()
        if w.lower()
        not in {
            "the",
            "a",
            "an",
            "your",
            "its",
            "explicit",
            "correct",
            "valid",
            "single",
            "custom",
            "new",
            "proper",
        }
    ]
    if not words or any(w.lower() in _STOP for w in words):
        return None
    if len(words) == 1:
        return words[0] if re.fullmatch(r"[a-z][a-z0-9]+", words[0]) else None
    if (
        len(words) <= 3
        and words[-1].lower() in _PHRASE_NOUNS
        and all(re.fullmatch(r"[a-z][a-z0-9]*", w) for w in words)
    ):
        return "_".join(words)
    return None


def _owner_of(p: _Parser, span: str | None) -> str | None:
    if not span:
        return None
    tok = p.t.token(span)
    name = tok[1] if tok else span
    return re.sub(r"\(.*\)$", "", name) if not name.endswith("prepare()") else name


def _r_either_list(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``T must be one of A, B or C`` / ``T should be either A or B`` / ``Supported values
    are A and B``."""
    res = []
    art = r"(?:an?\s+|the\s+)?"
    rx = re.compile(
        rf"(?:({_T}|[a-z]\w*)\s+)?(?:(?:must|should|can|has to|needs to)\s+(?:only\s+)?(?:be|equal)"
        rf"|expected(?: value)?"
        rf"|expected to be|possible values are|supported values are|valid values are"
        rf"|valid options are|choose between"
        rf"|choose from|(?:the )?only possible arguments are|to be)\s+(?:set to\s+)?(?:(?:one"
        rf"|any) of|either)?\s*:?\s*"
        rf"[(\[{{]?\s*({art}(?:{_TOK_RX})(?:\s*(?:,|or|and|,\s*or"
        rf"|,\s*and)\s*{art}(?:{_TOK_RX}))+)\s*[)\]}}]?",
        re.IGNORECASE,
    )
    for m in rx.finditer(s):
        subj = m.group(1)
        if subj and subj.lower() in _STOP | {"must", "should", "mode", "loss", "type"}:
            subj = None
        target, owner, _ = p.tgt(subj) if subj else (p.subject or p.last_target, None, None)
        values = [p.t.token(t) for t in re.findall(_TOK_RX, m.group(2))]
        if any(v and v[0] == "code" and re.match(r"[A-Z]\w+$", v[1]) for v in values):
            continue  # a list of classes: a type constraint, not values
        vals = [_pv(v[1]) for v in values if v]
        if len(vals) < 2:
            continue
        owner = owner or p.owner_near(s[m.end() :], target)
        alts = tuple(p.mk("set", m.group(0), target, v, owner, form="one-of") for v in vals)
        res.append(
            (
                m.start(),
                m.end(),
                Advice(
                    "either",
                    target,
                    None,
                    alts,
                    owner,
                    p.t.expand(m.group(0)).strip(),
                    form="one-of",
                ),
            )
        )
    return res


def _r_either_nouns(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``requires either A or B`` / ``either pass A or B`` / ``specify A or B, but not both``
    / ``not both A and B``."""
    alts: Sequence[Advice]
    res = []
    art = r"(?:an?\s+|the\s+|a\s+non-zero\s+|non-zero\s+|positive\s+)?"
    rx = re.compile(
        rf"\b(?:(requires?|specify|pass(?: in)?|provide|use|set|define|must (?:contain|be passed"
        rf"|specify)|needs?)\s+(?:in\s+)?"
        rf"either|either\s+(pass(?: in)?|specify|provide|use|set|define))\s+{art}({_T}|'\w+')"
        rf"(?:\s+(?:argument|parameter|for [\w\s]+?))?\s+or\s+{art}({_T}|'\w+')(?:\s+(?:argument"
        rf"|parameter|arguments))?"
        rf"(,?\s*(?:but\s+)?not both)?",
        re.IGNORECASE,
    )
    rx_nb = re.compile(
        rf"\b(specify|pass|use|provide|set)\s+({_T})\s+or\s+({_T})(,?\s*(?:but\s+)?not both)",
        re.IGNORECASE,
    )
    for m in list(rx.finditer(s)) + list(rx_nb.finditer(s)):
        if m.re is rx_nb:
            verb, a_span, b_span, not_both = m.group(1).lower(), m.group(2), m.group(3), True
        else:
            verb = (m.group(1) or m.group(2)).lower()
            a_span, b_span, not_both = m.group(3), m.group(4), bool(m.group(5))
        kind = (
            "remove"
            if not_both
            else "requires"
            if verb.startswith("require")
            else "specify"
            if verb in {"specify", "provide", "define", "must specify"}
            else "rename"
            if verb == "use"
            else "pass"
        )
        alts = []
        for span in (a_span, b_span):
            target, owner, value = p.tgt(span)
            k = "set" if value is not None and kind != "remove" else kind
            if k == "rename":
                alts.append(p.mk("rename", m.group(0), p.unsupported, target, form="either-nouns"))
                continue
            cons = re.search(rf"\b(non-zero|positive)\s+{re.escape(span)}", m.group(0))
            alts.append(
                p.mk(
                    k,
                    m.group(0),
                    target,
                    value,
                    owner or p.owner_near(s[m.end() :], target),
                    constraint=cons.group(1) if cons else None,
                    form="either-nouns",
                )
            )
        if kind == "requires":
            when = _subject_before(p, s, m.start())
            if when and _OWNER_RX.match(when.split("=")[0].split(":")[0]):
                alts = [replace(a, kind="pass", owner=when.split(":")[0]) for a in alts]
            elif when:
                alts = [replace(a, when=when) for a in alts]
        res.append(
            (
                m.start(),
                m.end(),
                Advice(
                    "either",
                    alternatives=tuple(alts),
                    text=p.t.expand(m.group(0)),
                    form="either-nouns",
                ),
            )
        )
    # "At least one of A or B must be set" / "At most one of fp16 and bf16 can be True"
    rx2 = re.compile(
        rf"\b(at least|exactly|only|at most)\s+(?:pass\s+|specify\s+|set\s+|use\s+)?one of\s+(?:the"
        rf"\s+)?({_T}|[a-z]\w*)\s*(?:,|or|and)\s*({_T}|[a-z]\w*)"
        rf"(?:\s+(?:must|should|has to|needs to|can) be (set|specified|provided|passed|given"
        rf"|true))?",
        re.IGNORECASE,
    )
    for m in rx2.finditer(s):
        lead, how = m.group(1).lower(), (m.group(4) or "").lower()
        names = [p.tgt(g)[0] for g in (m.group(2), m.group(3))]
        if not all(names):
            continue
        if lead == "at least":
            alts = tuple(p.mk("specify", m.group(0), n, form="one-of-names") for n in names)
        elif how == "true":
            alts = tuple(p.mk("set", m.group(0), n, False, form="one-of-names") for n in names)
        else:
            alts = tuple(p.mk("remove", m.group(0), n, form="one-of-names") for n in names)
        res.append(
            (
                m.start(),
                m.end(),
                Advice(
                    "either",
                    alternatives=tuple(alts),
                    text=p.t.expand(m.group(0)),
                    form="one-of-names",
                ),
            )
        )
    # "You cannot pass in both A and B" / "A and B can not be both configured" / "Both A and
    # B were provided."
    one_only = re.search(
        r"\b(?:just one|only one|one of them|not both|in only one place|cannot|can't|can not|"
        r"incompatible|at the same time|not allowed)\b",
        p.t.text,
        re.IGNORECASE,
    )
    rx3 = re.compile(
        rf"(?:\bboth\s+({_T})\s+and\s+({_T})"
        rf"|({_T})(?:\s+\([^)]*\))?\s+and\s+(?:the\s+)?({_T})(?:\s+[\w ]{0, 20}?argument)"
        rf"?\s+(?:can ?not|can't|cannot)\s+(?:both\s+)?be\s+"
        rf"(?:both\s+)?(?:set|configured|used|passed|specified|true))",
        re.IGNORECASE,
    )
    for m in rx3.finditer(s):
        if not one_only:
            continue
        a, b = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        alts = tuple(p.mk("remove", m.group(0), p.tgt(g)[0], form="not-both") for g in (a, b))
        if all(x.target for x in alts):
            res.append(
                (
                    m.start(),
                    m.end(),
                    Advice(
                        "either",
                        alternatives=tuple(alts),
                        text=p.t.expand(m.group(0)),
                        form="not-both",
                    ),
                )
            )
    return res


def _subject_before(p: _Parser, s: str, pos: int) -> str | None:
    """The name that a ``requires`` depends on: the last target before ``pos`` (with its value)."""
    head = s[:pos].rstrip()
    m = re.search(
        rf"({_T})(?:\s+({_TOK_RX}|[a-z_]+))?\s*(?:argument|option)?\s*:?\s*(?:\w+\s*)?$", head
    )
    if m and (p.t.token(m.group(1)) or re.fullmatch(_T, m.group(1))):
        tok = p.t.token(m.group(1))
        name = tok[1] if tok else m.group(1)
        target, _ = normalise_target(name.split("=")[0])
        extra = m.group(2)
        if extra and extra not in {"argument", "option", "training", "evaluation"}:
            return f"{target}={p.t.expand(extra).strip('` ')}"
        return target
    words = p.t.expand(head).strip().rstrip(":").split()
    return " ".join(words[-3:]) if words else None


def _r_deprecated(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``X has been renamed to Y``."""
    res = []
    m = re.search(rf"({_T})\s+(?:\w+\s+){{0,2}}?(?:has been|was|is)\s+renamed\s+to\s+({_T})", s)
    if m:
        old, new = p.tgt(m.group(1))[0], p.tgt(m.group(2))[0]
        res.append((m.start(), m.end(), p.mk("rename", m.group(0), old, new, form="renamed")))
    return res


_BAD_VALUES = {
    "use",
    "be",
    "the",
    "a",
    "an",
    "make",
    "load",
    "avoid",
    "match",
    "true.",
    "train",
    "enable",
    "disable",
    "get",
    "suppress",
    "prevent",
    "allow",
    "fix",
    "save",
    "reproduce",
    "do",
    "have",
    "ensure",
    "keep",
}


def _r_set(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``set T to V`` / ``set T=V`` / ``set both A=1 and B=2`` / ``set it to None`` / ``Set it
    via O(T=V)``."""
    res = []
    verb = r"\b(?:set(?:ting)?|chang(?:e|ing)|assign|configur(?:e|ing)|re-?set)\b"
    for m in re.finditer(verb, s, re.IGNORECASE):
        word = m.group(0).lower()
        ok = _imperative_at(s, m.start()) or bool(
            re.search(
                r"(?:\bwith|\btry|recommended|consider|\band|\bor|then)\s+$",
                s[: m.start()],
                re.IGNORECASE,
            )
        )
        if (
            not ok
            and word == "setting"
            and re.search(
                r"\b(?:will fix|fixes|can improve|to fix|is recommended|should fix|"
                r"to resolve)\b",
                s[m.end() :].split(",")[0],
                re.IGNORECASE,
            )
        ):
            ok = True
        if not ok:
            continue
        rest = s[m.end() :]
        # set T=V (and U=W) / set it via TOKEN
        m3 = re.match(
            rf"\s+(?:it\s+|this\s+)?(?:via\s+|in\s+|with\s+|using\s+)?{_FILL}((?:{_TOK_RX})"
            rf"(?:\s*(?:,|and|,\s*and)\s*"
            rf"(?:{_TOK_RX}))*)",
            rest,
        )
        advs = []
        if m3:
            for tok_text in re.findall(_TOK_RX, m3.group(1)):
                kind_tok = p.t.token(tok_text)
                target, owner, value = p.tgt(tok_text)
                if (
                    kind_tok
                    and target
                    and (value is not None or re.search(r"=\s*\.\.\.|\(\w+=", kind_tok[1]))
                ):
                    advs.append((target, owner, value))
        if advs:
            assert m3 is not None
            end = m.end() + m3.end()
            for target, owner, value in advs:
                own = owner or p.owner_near(s[end:], target) or p.owner_near("", target)
                res.append(
                    (
                        m.start(),
                        end,
                        p.mk("set", s[m.start() : end], target, value, own, form="set-eq"),
                    )
                )
            continue
        # set T to V / set T as V / set T in O to V
        m2 = re.match(
            rf"\s+{_FILL}({_T}|it|this|them|[a-z]+)(?:\s+(?:argument|parameter|option|flag))?"
            rf"(?:\s+(?:in|of|on)\s+(?:the\s+)?({_TOK_RX}|{_OWNER_NAMES}))?\s+(?:to|as|equal to"
            rf"|=)\s+({_V})",
            rest,
        )
        if m2:
            target, owner, _ = p.tgt(m2.group(1))
            if m2.group(1).lower() in {"it", "this", "them"}:
                target = p.antecedent(s, m.start())
            value, cons = p.val(m2.group(3))
            if (
                target
                and target.lower() not in {"the", "a", "an", "up", "in", "of", "environment"}
                and not (isinstance(value, str) and value.lower() in _BAD_VALUES)
            ):
                owner = owner or _owner_of(p, m2.group(2))
                end = m.end() + m2.end()
                owner = owner or p.owner_near(s[end:], target) or p.owner_near("", target)
                res.append(
                    (
                        m.start(),
                        end,
                        p.mk(
                            "set",
                            s[m.start() : end],
                            target,
                            value,
                            owner,
                            constraint=cons,
                            form="set-to",
                        ),
                    )
                )
                continue
        # set T > 1 / set an integer value in T
        m5 = re.match(rf"\s+{_FILL}({_TOK_RX})\s*((?:>=|<=|>|<)\s*[\w.]+)", rest) or re.match(
            rf"\s+(an? (?:integer|positive|non-zero|valid)(?: integer)? value)\s+(?:in"
            rf"|for)\s+({_TOK_RX})",
            rest,
        )
        if m5:
            first_is_value = not p.t.token(m5.group(1))
            target, owner, _ = p.tgt(m5.group(2) if first_is_value else m5.group(1))
            cons = m5.group(1) if first_is_value else m5.group(2)
            if target:
                end = m.end() + m5.end()
                owner = owner or p.owner_near(s[end:], target) or p.owner_near("", target)
                res.append(
                    (
                        m.start(),
                        end,
                        p.mk(
                            "set",
                            s[m.start() : end],
                            target,
                            None,
                            owner,
                            constraint=cons,
                            form="set-constraint",
                        ),
                    )
                )
                continue
        # set T (first / directly / explicitly): name it
        m4 = re.match(
            rf"\s+{_FILL}({_TOK_RX})(?=\s+(?:first|directly|explicitly|yourself|manually)\b|\s*[.;]"
            rf"|\s*$)",
            rest,
        )
        if m4 and word.startswith("set"):
            target, owner, value = p.tgt(m4.group(1))
            if target:
                end = m.end() + m4.end()
                res.append(
                    (
                        m.start(),
                        end,
                        p.mk("specify", s[m.start() : end], target, None, owner, form="set-name"),
                    )
                )
    return _split_same_span(res)


def _split_same_span(res: list[tuple[int, int, Advice]]) -> list[tuple[int, int, Advice]]:
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


def _r_value_verbs(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``use / pass / load the model with / try / specify T=V`` (assignment tokens)."""
    res = []
    rx = re.compile(
        rf"\b(use|using|pass(?:ing)?(?: in)?|load(?:ing)? (?:the|your) model with|with|try"
        rf"|specify(?:ing)?|"
        rf"provide|add|instantiate your model with|call \S+ with|launch(?:ing)? with|rerun \S+ with"
        rf"|restart it with)\s+"
        rf"(?:the\s+default\s+|only\s+)?((?:{_TOK_RX})(?:\s*(?:,|and|or|,\s*and"
        rf"|,\s*or)\s*(?:{_TOK_RX}))*)",
        re.IGNORECASE,
    )
    for m in rx.finditer(s):
        verb = m.group(1).lower()
        before = s[: m.start()]
        if verb == "with":
            if not re.search(
                r"\b(?:instead|try|use|load|loaded|set)\b[^.]{0,40}$", before, re.IGNORECASE
            ):
                continue
        elif not (_imperative_at(s, m.start()) or re.search(r"\b(?:or|and|by)\s+$", before)):
            continue
        toks = re.findall(_TOK_RX, m.group(2))
        seps = re.findall(r"(?<=\x02)\s*(,\s*or|,\s*and|or|and|,)\s*(?=\x01)", m.group(2))
        advs = []
        for tok_text in toks:
            kind_tok = p.t.token(tok_text)
            if not kind_tok or "=" not in kind_tok[1] and ":" not in kind_tok[1]:
                continue
            target, owner, value = p.tgt(tok_text)
            if target and value is not None:
                advs.append(
                    p.mk(
                        "set",
                        m.group(0),
                        target,
                        value,
                        owner or p.owner_near(s[m.end() :], target) or p.owner_near("", target),
                        form="use-assign",
                    )
                )
        if not advs:
            continue
        if len(advs) > 1 and any("or" in x for x in seps):
            res.append(
                (
                    m.start(),
                    m.end(),
                    Advice(
                        "either",
                        alternatives=tuple(advs),
                        text=p.t.expand(m.group(0)),
                        form="use-assign",
                    ),
                )
            )
        else:
            res.extend((m.start(), m.end(), a) for a in advs)
    return _split_same_span(res)


def _r_must_be(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``T should be V`` / ``T must be set to V`` / ``T must be > 0`` / ``Must be positive`` /
    ``can only be V``."""
    res = []
    rx = re.compile(
        rf"(?:({_T}|[a-z][a-z0-9]*(?:_[a-z0-9]+)*"
        rf"|[A-Z][a-z]+_\w+)\s+(?:\([^)]*\)\s+)?(?:(?:parameter|argument|option)\s+)?)?(?:must"
        rf"|should|has to|needs to|can)\s+"
        rf"(?:always\s+|only\s+|also\s+)?(?:be|equal"
        rf"|lie)\s+(?:set\s+to\s+|equal\s+to\s+)?(?:either\s+)?"
        rf"(?:(?P<v>{_TOK_RX}|True|False|None|-?\d+(?:\.\d+)?\b(?!\s*(?:or|and)\b))(?!\s*(?:or"
        rf"|,)\s*\x01)"
        rf"|(?P<c>{_CONSTRAINT}))",
        re.IGNORECASE,
    )
    for m in rx.finditer(s):
        subj = m.group(1)
        if subj and subj.lower() in _STOP | {
            "batch",
            "size",
            "sum",
            "loss",
            "model",
            "dataset",
            "function",
            "name",
        }:
            subj = None
        if m.group(0).lower().lstrip().startswith("can") and not m.group("v"):
            continue
        target, owner, _ = p.tgt(subj) if subj else (p.subject, None, None)
        if not target:
            continue
        if m.group("v"):
            value, cons = p.val(m.group("v"))
            if isinstance(value, str) and value.lower() in {"a", "an", "the"}:
                continue
        else:
            value, cons = None, p.t.expand(m.group("c")).strip()
        owner = owner or p.owner_near(s[m.end() :], target) or p.owner_near("", target)
        res.append(
            (
                m.start(),
                m.end(),
                p.mk("set", m.group(0), target, value, owner, constraint=cons, form="must-be"),
            )
        )
    # "Expected value warmup_steps >= 0" / "must be one of {}" / "Choose between {}"
    rx2 = re.compile(rf"\bexpected(?: value)?\s+({_T})\s*(>=|<=|>|<|==)\s*(\S+)", re.IGNORECASE)
    for m in rx2.finditer(s):
        target = p.tgt(m.group(1))[0]
        if target:
            res.append(
                (
                    m.start(),
                    m.end(),
                    p.mk(
                        "set",
                        m.group(0),
                        target,
                        None,
                        p.owner_near("", target),
                        constraint=f"{m.group(2)} {p.t.expand(m.group(3))}",
                        form="expected",
                    ),
                )
            )
    rx3 = re.compile(
        rf"(?:({_T})\s+)?(?:must|should)\s+be\s+one\s+of:?\s*({_TOK_RX}"
        rf"|\[[^\]]*\]|\([^)]*\))|\b(?:choose between|"
        rf"choose from|possible values are|supported values are|expected one of)\s*:?\s*({_TOK_RX}"
        rf"|\[[^\]]*\])",
        re.IGNORECASE,
    )
    for m in rx3.finditer(s):
        target = p.tgt(m.group(1))[0] if m.group(1) else p.subject
        if target:
            cons = "one of " + p.t.expand(m.group(2) or m.group(3))
            res.append(
                (
                    m.start(),
                    m.end(),
                    p.mk(
                        "set",
                        m.group(0),
                        target,
                        None,
                        p.owner_near("", target),
                        constraint=cons,
                        form="one-of-list",
                    ),
                )
            )
    return res


def _r_specify(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``T has to be specified`` / ``please specify T`` / ``T is required`` / ``T must be
    passed``."""
    res = []
    rx = re.compile(
        rf"(?:^|(?<=\s))({_T}|^[A-Za-z]\w*)\s+(?:\([^)]*\)\s+)?(?:has|have|needs?|must"
        rf"|should)\s+(?:to\s+)?(?:also\s+)?be\s+"
        rf"(?:specified|provided|passed|given|defined|set|supplied)\b(?!\s+(?:to|as)\b)"
    )
    for m in rx.finditer(s):
        target, owner, _ = p.tgt(m.group(1))
        if not target or target.lower() in _STOP:
            continue
        owner = owner or p.owner_near(s[m.end() :], target) or p.owner_near("", target)
        res.append(
            (m.start(), m.end(), p.mk("specify", m.group(0), target, None, owner, form="specified"))
        )
    rx2 = re.compile(
        rf"\b(?:specify|provide|define|supply|set up|give|add"
        rf"|assign)\s+{_FILL}(?:[a-z\-]+\s+){{0,2}}?({_TOK_RX})"
        rf"|\b(?:specify|provide|define|supply|add|assign)\s+({_T}"
        rf"|(?:an?\s+|the\s+)?[a-z]+(?:\s+[a-z]+){{0,2}}?)"
        rf"(?=\s+{_PREP}\b|\s*[.,;:]|\s*$)",
        re.IGNORECASE,
    )
    for m in rx2.finditer(s):
        if not _imperative_at(s, m.start()):
            continue
        span = m.group(1) or m.group(2)
        target, owner, value = (
            p.tgt(span)
            if (p.t.token(span) or re.fullmatch(_T, span))
            else (_phrase_target(span), None, None)
        )
        if not target or target.lower() in _STOP:
            continue
        kind = "set" if value is not None else "specify"
        owner = owner or p.owner_near(s[m.end() :], target) or p.owner_near("", target)
        res.append(
            (
                m.start(),
                m.end(),
                p.mk(kind, m.group(0), target, value, owner, form="please-specify"),
            )
        )
    rx3 = re.compile(rf"({_T})\s+(?:is|are)\s+(?:also\s+)?required\b(?!\s+(?:for|when|to)\b)")
    for m in rx3.finditer(s):
        target, owner, _ = p.tgt(m.group(1))
        if target:
            res.append(
                (
                    m.start(),
                    m.end(),
                    p.mk(
                        "specify",
                        m.group(0),
                        target,
                        None,
                        owner or p.owner_near("", target),
                        form="is-required",
                    ),
                )
            )
    return res


def _r_requires(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``X requires T(=V)`` / ``X requires T to be defined|V`` / ``X can only be set when T``."""
    res = []
    m = re.search(
        r"\brequires the (\w+) and (\w+) (strategy|steps|size|type|mode) to (?:match|be (?:the same"
        r"|equal))",
        s,
    )
    if m:
        a, b, noun = m.group(1), m.group(2), m.group(3)
        res.append(
            (
                m.start(),
                m.end(),
                p.mk(
                    "requires",
                    m.group(0),
                    f"{a}_{noun}",
                    None,
                    None,
                    when=_subject_before(p, s, m.start()),
                    constraint=f"== {b}_{noun}",
                    form="requires-match",
                ),
            )
        )
    rx = re.compile(
        rf"\brequires?\s+(?:that\s+)?(?:you\s+to\s+\w+\s+)?(?:setting\s+)?"
        rf"(?:an?\s+|the\s+|at least one\s+)?"
        rf"(?:(?P<cons>{_CONSTRAINT}|non-zero|positive|valid|integer)\s+(?:value\s+)?(?:for\s+)?)?"
        rf"(?:[a-z\-]+\s+){{0,2}}?(?P<t>{_TOK_RX})"
        rf"|\brequires?\s+(?:an?\s+|the\s+)?(?P<cons2>non-zero|positive)?\s*"
        rf"(?P<t2>{_T}|[a-z]+(?:\s+[a-z]+){{0,2}}?)(?=\s+(?:to be|{_PREP})\b|\s*[.,;:)]|\s*$)",
        re.IGNORECASE,
    )
    for m in rx.finditer(s):
        span = m.group("t") or m.group("t2")
        if p.t.token(span) or re.fullmatch(_T, span):
            target, owner, value = p.tgt(span)
        else:
            target, owner, value = _phrase_target(span), None, None
        if not target or target.lower() in _STOP:
            continue
        span_tok = p.t.token(span)
        if ENV_NAMES.match(target) or (span_tok and ENV_NAMES.match(span_tok[1])):
            res.append(
                (
                    m.start(),
                    m.end(),
                    p.mk(
                        "install",
                        m.group(0),
                        span_tok[1] if span_tok else target,
                        form="requires-package",
                    ),
                )
            )
            continue
        cons = m.group("cons") or m.group("cons2")
        end = m.end()
        mt = re.match(
            rf"\s+to\s+be\s+(?:set\s+to\s+|equal\s+to\s+)?(?:(?P<v>{_TOK_RX}|True|False|None"
            rf"|-?\d+\b)(?!\s*(?:or|,))"
            rf"|(?P<c>either\s+[^.]+|{_CONSTRAINT}|[a-z]+))",
            s[end:],
        )
        if mt:
            if mt.group("v"):
                value, _ = p.val(mt.group("v"))
            else:
                c = mt.group("c")
                vals = [_pv(t[1]) for t in (p.t.token(x) for x in re.findall(_TOK_RX, c)) if t]
                if c.startswith("either") and len(vals) >= 2:
                    when = _subject_before(p, s, m.start())
                    alts = tuple(
                        p.mk("requires", m.group(0), target, v, owner, when=when, form="requires")
                        for v in vals
                    )
                    end += mt.end()
                    res.append(
                        (
                            m.start(),
                            end,
                            Advice(
                                "either",
                                alternatives=tuple(alts),
                                text=p.t.expand(s[m.start() : end]),
                                form="requires",
                            ),
                        )
                    )
                    continue
                cons = cons or p.t.expand(c)
            end += mt.end()
        when = _subject_before(p, s, m.start())
        owner = owner or p.owner_near(s[end:], target)
        kind = "requires"
        if (
            when
            and re.match(r"[A-Z]", when)
            and _OWNER_RX.match(when.split(":")[0].split("=")[0].strip())
        ):
            kind, owner, when = "pass", owner or when.split(":")[0].strip(), None
        res.append(
            (
                m.start(),
                end,
                p.mk(
                    kind,
                    s[m.start() : end],
                    target,
                    value,
                    owner,
                    when=when,
                    constraint=cons,
                    form="requires",
                ),
            )
        )
    rx2 = re.compile(
        rf"({_T}|can only (?:use|specify|pass|set)\s+{_TOK_RX}(?:\s+in the code)?)\s*(?:can only be"
        rf"|is only|is useful only|only works|is only supported|"
        rf"can only be used)?\s*(?:set|used|supported|true|available|useful)?\s*(?:when|with"
        rf"|if)\s+(?:[^;]*?\bwhen\s+)?"
        rf"(?:using\s+)?({_T})(?:\s+(?:is\s+set\s+to|is|=|==)\s+({_V}))?(?:\s*(?P<c>(?:>=|<=|>"
        rf"|<)\s*\S+))?",
        re.IGNORECASE,
    )
    for m in rx2.finditer(s):
        head = m.group(1)
        if not re.search(r"\bonly\b", m.group(0), re.IGNORECASE):
            continue
        when = p.tgt(
            re.sub(
                r"^can only (?:use|specify|pass|set)\s+|\s+in the code$",
                "",
                head,
                flags=re.IGNORECASE,
            )
        )[0]
        target, owner, value = p.tgt(m.group(2))
        if m.group(3):
            value, _ = p.val(m.group(3))
        if target and when:
            res.append(
                (
                    m.start(),
                    m.end(),
                    p.mk(
                        "requires",
                        m.group(0),
                        target,
                        value,
                        owner,
                        when=when,
                        constraint=m.group("c"),
                        form="only-when",
                    ),
                )
            )
    return res


def _r_pass(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``pass (in) an T (to O)`` / ``pass T through ...`` / ``pass it as T`` / ``pass A, or B``."""
    res = []
    rx = re.compile(
        rf"\b(?:pass(?:ing)?|supply|give|feed|send)\s+(?:in\s+)?(?:(?:it|them)\s+(?:as|in|to"
        rf"|via)\s+)?"
        rf"(?:(?:an?|the|your|its|both|a single|one)\s+)*(?:[a-z\-]+\s+){{0,2}}?({_TOK_RX})"
        rf"|\b(?:pass(?:ing)?|supply)\s+(?:in\s+)?(?:(?:an?|the|your|its)\s+)?({_T}"
        rf"|[a-z]+(?:\s+[a-z]+){{0,2}}?)"
        rf"(?=\s+(?:through|via|as|to|into|in|when|instead|together|if|that|for|with|argument"
        rf"|object|instance)\b"
        rf"|\s*[.,;]|\s*$)",
        re.IGNORECASE,
    )
    for m in rx.finditer(s):
        if not _imperative_at(s, m.start()):
            continue
        span = m.group(1) or m.group(2)
        if p.t.token(span) or re.fullmatch(_T, span):
            target, owner, value = p.tgt(span)
        else:
            target, owner, value = _phrase_target(span), None, None
        tail = s[m.end() :]
        mt = re.match(rf"\s+through\s+(?:an?\s+|the\s+)?({_T})", tail)
        if mt:
            target = p.tgt(mt.group(1))[0] or target
        if not target or target.lower() in _STOP:
            continue
        kind = "set" if value is not None else "pass"
        owner = owner or p.owner_near(tail, target) or p.owner_near("", target)
        adv = p.mk(kind, s[m.start() : m.end()], target, value, owner, form="pass")
        mo = re.match(rf"\s*,?\s*or\s+(?:an?\s+|the\s+)?({_TOK_RX})", tail)
        if mo:
            t2, o2, v2 = p.tgt(mo.group(1))
            if t2:
                alt = p.mk(
                    "set" if v2 is not None else "pass",
                    mo.group(0),
                    t2,
                    v2,
                    o2 or owner,
                    form="pass",
                )
                res.append(
                    (
                        m.start(),
                        m.end() + mo.end(),
                        Advice(
                            "either",
                            alternatives=(adv, alt),
                            text=p.t.expand(s[m.start() : m.end() + mo.end()]),
                            form="pass",
                        ),
                    )
                )
                continue
        res.append((m.start(), m.end(), adv))
    return res


def _r_remove(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``remove/unset/drop/omit T (in O)`` / ``remove V from T`` / ``do not set T=V`` /
    ``enable / disable T``."""
    res = []
    rx = re.compile(
        rf"\b(remove|unset|drop|omit|delete|get rid of|(?:do not|don't|never)\s+(?:set|pass|use"
        rf"|specify))\s+"
        rf"{_FILL}(?:({_TOK_RX})\s+(?={_TOK_RX}))?({_T}|[a-z]+(?:\s+[a-z]+)??)(?:\s+(?:prefix"
        rf"|suffix|argument|parameter|option|flag|entry|field|key))?(?=\s+(?:from|in"
        rf"|of)\b|\s*[.,;:]|\s*$|\s+(?:and|or|to|if|when|before|after)\b)(?:\s+(from|in"
        rf"|of)\s+(?:the\s+|your\s+)?"
        rf"({_T}|{_OWNER_NAMES}))?",
        re.IGNORECASE,
    )
    for m in rx.finditer(s):
        if not _imperative_at(s, m.start()) and not m.group(1).lower().startswith(
            ("do not", "don't", "never")
        ):
            continue
        pre_owner, span, prep, container = (
            m.group(2),
            m.group(3),
            (m.group(4) or "").lower(),
            m.group(5),
        )
        if p.t.token(span) or re.fullmatch(_T, span):
            target, owner, value = p.tgt(span)
        else:
            target, owner, value = _phrase_target(span), None, None
        if pre_owner and _OWNER_RX.match(_owner_of(p, pre_owner) or ""):
            owner = _owner_of(p, pre_owner)
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
                owner = owner or _owner_of(p, container)
        elif container:
            owner = owner or _owner_of(p, container)
        if span.lower() in {"it", "this", "them"}:
            target = p.antecedent(s, m.start())
        if not target or target.lower() in _STOP:
            continue
        res.append(
            (
                m.start(),
                m.end(),
                p.mk(
                    "remove",
                    m.group(0),
                    target,
                    value,
                    owner or p.owner_near("", target),
                    form="remove",
                ),
            )
        )
    rx2 = re.compile(
        rf"\b(enable|disable|turn off|turn on|deactivate|activate)\s+{_FILL}({_T}|[a-z]+)"
        rf"(?:\s+(?:in|of)\s+(?:the\s+)?({_TOK_RX}|{_OWNER_NAMES}))?",
        re.IGNORECASE,
    )
    for m in rx2.finditer(s):
        if not _imperative_at(s, m.start()):
            continue
        target, owner, _ = p.tgt(m.group(2))
        if not target or target.lower() in _STOP or target.lower() in {"context", "it", "both"}:
            continue
        value = m.group(1).lower() in {"enable", "turn on", "activate"}
        owner = owner or _owner_of(p, m.group(3))
        res.append(
            (
                m.start(),
                m.end(),
                p.mk(
                    "set",
                    m.group(0),
                    target,
                    value,
                    owner or p.owner_near("", target),
                    form="enable",
                ),
            )
        )
    return res


def _r_use_instead(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``use Y instead (of X)`` / after "X is deprecated": ``Use Y`` / ``did you mean Y``."""
    m: re.Match[str] | None
    res = []
    rx = re.compile(
        rf"\b(?:use|using|call|override|define|migrate to|switch to"
        rf"|prefer)\s+(?:the\s+|a\s+|an\s+)?({_T})"
        rf"(?:[^.]{{0,80}}?)\s+(?:instead(?:\s+of\s+(?:the\s+)?({_T}))?|over\s+(?:the\s+)?({_T}))",
        re.IGNORECASE,
    )
    for m in rx.finditer(s):
        if not (
            _imperative_at(s, m.start())
            or re.search(r"\b(?:consider|try)\s+$", s[: m.start()], re.IGNORECASE)
        ):
            continue
        new, _, value = p.tgt(m.group(1))
        old_span = m.group(2) or m.group(3)
        old = p.tgt(old_span)[0] if old_span else p.unsupported
        if value is not None:
            res.append(
                (
                    m.start(),
                    m.end(),
                    p.mk(
                        "set",
                        m.group(0),
                        new,
                        value,
                        p.owner_near(s[m.end() :], new) or p.owner_near("", new),
                        form="use-instead",
                    ),
                )
            )
        elif new:
            res.append(
                (m.start(), m.end(), p.mk("rename", m.group(0), old, new, form="use-instead"))
            )
    if p.unsupported:
        rx2 = re.compile(
            rf"\b(?:use|migrate to|switch to|define|override)\s+(?:the\s+)?({_TOK_RX})(?!\s+(?:to"
            rf"|for|if|when)\b)",
            re.IGNORECASE,
        )
        for m in rx2.finditer(s):
            if not _imperative_at(s, m.start()):
                continue
            new, _, value = p.tgt(m.group(1))
            if value is not None:
                res.append(
                    (
                        m.start(),
                        m.end(),
                        p.mk(
                            "set",
                            m.group(0),
                            new,
                            value,
                            p.owner_near(s[m.end() :], new),
                            form="deprecated-use",
                        ),
                    )
                )
            elif new and new != p.unsupported:
                res.append(
                    (
                        m.start(),
                        m.end(),
                        p.mk("rename", m.group(0), p.unsupported, new, form="deprecated-use"),
                    )
                )
    m = re.search(rf"\bdid you mean:?\s+({_T}|[A-Za-z_]\w*)", s, re.IGNORECASE)
    if m:
        new = p.tgt(m.group(1))[0]
        old = None
        mo = re.search(
            rf"(?:argument|keyword|attribute|key|column|name|option)\s+({_TOK_RX})", p.t.text
        )
        if mo:
            old = p.tgt(mo.group(1))[0]
        res.append((m.start(), m.end(), p.mk("rename", m.group(0), old, new, form="did-you-mean")))
    return res


def _r_adjust(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``increase / reduce / lower T`` / ``consider changing T`` (with the available values
    when listed)."""
    res = []
    rx = re.compile(
        rf"\b(increase|increasing|raise|reduce|reducing|decrease|lower|lowering|chang(?:e|ing)"
        rf"|adjust(?:ing)?)\s+"
        rf"(?:the\s+|your\s+)?({_T})(?:\s+(?:and/or|and|or)\s+({_T}))?",
        re.IGNORECASE,
    )
    for m in rx.finditer(s):
        if not (
            _imperative_at(s, m.start())
            or re.search(r"\b(?:consider|try)\s+$", s[: m.start()], re.IGNORECASE)
        ):
            continue
        verb = m.group(1).lower()
        cons = (
            "increase"
            if verb.startswith(("incr", "rais"))
            else "change"
            if verb.startswith(("chang", "adjust"))
            else "decrease"
        )
        advs = []
        for span in (m.group(2), m.group(3)):
            if span:
                target, owner, _ = p.tgt(span)
                if target:
                    owner = owner or p.owner_near(s[m.end() :], target) or p.owner_near("", target)
                    advs.append(
                        p.mk("set", m.group(0), target, None, owner, constraint=cons, form="adjust")
                    )
        if cons == "change" and len(advs) == 1:
            avail = re.search(
                rf"\bavailable\s+[\w\s]*?(?:are|is)\s*:?\s*\[((?:\s*{_TOK_RX}\s*,?)+)\]", p.t.text
            )
            if avail:
                vals = [
                    _pv(t[1])
                    for t in (p.t.token(x) for x in re.findall(_TOK_RX, avail.group(1)))
                    if t
                ]
                alts = tuple(
                    replace(advs[0], value=v, has_value=True, constraint=None) for v in vals
                )
                res.append(
                    (
                        m.start(),
                        m.end(),
                        Advice(
                            "either",
                            advs[0].target,
                            None,
                            alts,
                            advs[0].owner,
                            p.t.expand(m.group(0)),
                            form="adjust-available",
                        ),
                    )
                )
                continue
        if len(advs) == 2:
            res.append(
                (
                    m.start(),
                    m.end(),
                    Advice(
                        "either",
                        alternatives=tuple(advs),
                        text=p.t.expand(m.group(0)),
                        form="adjust",
                    ),
                )
            )
        elif advs:
            res.append((m.start(), m.end(), advs[0]))
    return res


def _r_misc(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """Smaller forms: ``without T=V`` (a warning's implied fix), ``override T (and U) in O``,
    ``enable both``, ``deactivate one of those flags``, ``pass a model and an optimizer``,
    ``migrate to A/B`` after ``X/Y ... deprecated``, ``increase the batch size to at least N``."""
    m: re.Match[str] | None
    alts: Sequence[Advice]
    res: list[tuple[int, int, Advice]] = []
    for m in re.finditer(rf"\bwithout\s+({_TOK_RX})", s):
        target, owner, value = p.tgt(m.group(1))
        if target and value is not None and re.match(r"\s*using\b|^Using\b", s):
            res.append(
                (m.start(), m.end(), p.mk("set", m.group(0), target, value, owner, form="without"))
            )
    for m in re.finditer(
        rf"\boverride\s+((?:{_TOK_RX})(?:\s*(?:,|and)\s*(?:{_TOK_RX}))*)(?:\s+in\s+({_TOK_RX}"
        rf"|{_OWNER_NAMES}))?",
        s,
        re.IGNORECASE,
    ):
        if not _imperative_at(s, m.start()):
            continue
        owner = _owner_of(p, m.group(2))
        for tok in re.findall(_TOK_RX, m.group(1)):
            target, own, value = p.tgt(tok)
            if target and not target.startswith(("create_", "compute_")):
                res.append(
                    (
                        m.start(),
                        m.end(),
                        p.mk(
                            "set",
                            m.group(0),
                            target,
                            value,
                            own or owner,
                            constraint=None if value is not None else "change",
                            form="override",
                        ),
                    )
                )
    names = [p.tgt(t)[0] for t in re.findall(_TOK_RX, p.t.text)]
    flags = re.findall(r"(?<![\w-])--([a-z][\w-]*)", p.t.expand(p.t.text))
    m = re.search(r"\b(?:recommended to |you should |please )?enable both\b", s, re.IGNORECASE)
    if m and len([n for n in names if n]) >= 2:
        alts = [p.mk("set", m.group(0), n, True, form="enable-both") for n in names[:2] if n]
        res.extend((m.start() + i, m.start() + i + 1, a) for i, a in enumerate(alts))
    m = re.search(
        r"\b(?:deactivate|disable|remove|drop) one of (?:those|these|the) (?:flags|arguments"
        r"|options)\b",
        s,
        re.IGNORECASE,
    )
    if m:
        cands = [f for f in flags] or [n for n in names if n]
        if len(cands) >= 2:
            alts = tuple(
                p.mk("remove", m.group(0), normalise_target(c)[0], form="one-of-flags")
                for c in cands[:2]
            )
            res.append(
                (
                    m.start(),
                    m.end(),
                    Advice(
                        "either",
                        alternatives=tuple(alts),
                        text=p.t.expand(m.group(0)),
                        form="one-of-flags",
                    ),
                )
            )
    m = re.search(
        rf"\b(?:must|should|need to)\s+pass\s+(?:an?\s+)?([a-z]+)\s+and\s+(?:an?\s+)?([a-z]+)\s+tog"
        rf"ether(?:\s+to\s+({_TOK_RX}))?",
        s,
    )
    if m:
        owner = _owner_of(p, m.group(3))
        res.extend(
            (
                m.start() + i,
                m.start() + i + 1,
                p.mk("pass", m.group(0), t, None, owner, form="pass-together"),
            )
            for i, t in enumerate((m.group(1), m.group(2)))
        )
    m = re.search(rf"\bmigrate to\s+({_TOK_RX})\s*/\s*({_TOK_RX})", s)
    if m:
        old = re.search(rf"({_TOK_RX})\s*/\s*({_TOK_RX})[^.]*?\bdeprecated", p.t.text)
        if old:
            for i in (1, 2):
                res.append(
                    (
                        m.start() + i - 1,
                        m.start() + i,
                        p.mk(
                            "rename",
                            m.group(0),
                            p.tgt(old.group(i))[0],
                            p.tgt(m.group(i))[0],
                            form="migrate-pair",
                        ),
                    )
                )
    m = re.search(
        r"\b(?:consider\s+)?(increas|reduc|lower|decreas)(?:e"
        r"|ing)\s+the\s+([a-z]+\s+[a-z]+)\s+to\s+(at least|at most)?\s*(\d+)",
        s,
        re.IGNORECASE,
    )
    if m and _phrase_target(m.group(2)):
        bound = (m.group(3) or "")
        op = ">=" if bound.startswith("at least") else "<=" if bound else "=="
        cons = f"{op} {m.group(4)}"
        res.append(
            (
                m.start(),
                m.end(),
                p.mk(
                    "set",
                    m.group(0),
                    _phrase_target(m.group(2)),
                    None,
                    None,
                    constraint=cons,
                    form="adjust-phrase",
                ),
            )
        )
    return res


def _r_conflict(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """Two settings that exclude each other, when the message says to keep one:
    ``A is incompatible with (providing) B`` / ``A cannot be passed together with B. Use one
    of ...`` / ``Please set it in only one place, preferably as a trainer argument`` / ``You
    can only pass one X in `Y` ``."""
    res: list[tuple[int, int, Advice]] = []
    m = re.search(
        rf"(?:passing\s+(?:an?\s+|the\s+)?)?({_TOK_RX})(?:\s+argument)?\s+(?:is"
        rf"|are)\s+incompatible\s+with\s+"
        rf"(?:providing|passing|using|setting)?\s*(?:an?\s+|the\s+)?({_TOK_RX})",
        s,
        re.IGNORECASE,
    )
    if m:
        alts = tuple(
            p.mk("remove", m.group(0), p.tgt(g)[0], form="incompatible")
            for g in (m.group(1), m.group(2))
        )
        res.append(
            (
                m.start(),
                m.end(),
                Advice(
                    "either",
                    alternatives=tuple(alts),
                    text=p.t.expand(m.group(0)),
                    form="incompatible",
                ),
            )
        )
    m = re.search(
        rf"({_TOK_RX})\s+(?:cannot|can't|can not)\s+be\s+(?:passed|used|set"
        rf"|specified)\s+(?:together\s+)?with\s+"
        rf"(?:[^.]*?\bor\s+)?(?:an?\s+|the\s+)?({_TOK_RX})",
        s,
    )
    if m and re.search(r"\b(?:use|pass|choose|pick) (?:only )?one of\b", p.t.text, re.IGNORECASE):
        alts = tuple(
            p.mk("remove", m.group(0), p.tgt(g)[0], form="incompatible")
            for g in (m.group(1), m.group(2))
        )
        res.append(
            (
                m.start(),
                m.end(),
                Advice(
                    "either",
                    alternatives=tuple(alts),
                    text=p.t.expand(m.group(0)),
                    form="incompatible",
                ),
            )
        )
    m = re.search(
        r"\b(?:set|pass) it in only one place,?\s+preferably\s+(?:as"
        r"|in)\s+(?:an?\s+|the\s+)?([\w ]+?)\s*(?:[.,;]|$)",
        s,
        re.IGNORECASE,
    )
    if m:
        both = re.search(
            rf"({_TOK_RX})\s+both\s+(?:as|in)\s+(?:an?\s+|the\s+)?([\w ]+?)\s+and\s+(?:as|in)\s+"
            rf"(?:an?\s+|the\s+)?({_TOK_RX}|[\w ]+?)(?:[.,;]|$)",
            p.t.text,
        )
        if both:
            target = p.tgt(both.group(1))[0]
            places = [both.group(2).strip(), _owner_of(p, both.group(3)) or both.group(3)]
            keep = m.group(1).strip()
            drop = next((pl for pl in places if pl != keep and keep not in pl), places[-1])
            drop = normalise_target(drop)[0] if drop else drop
            res.append(
                (
                    m.start(),
                    m.end(),
                    p.mk("remove", m.group(0), target, None, drop, form="only-one-place"),
                )
            )
    m = re.search(
        rf"\bcan only pass one\s+({_TOK_RX}|<class \x01\d+\x02>|\S+)\s+in\s+({_TOK_RX})", s
    )
    if m:
        value = p.t.token(m.group(1)) or (
            "",
            re.sub(r"^<class |>$", "", p.t.expand(m.group(1))).strip("'\"").split(".")[-1],
        )
        res.append(
            (
                m.start(),
                m.end(),
                p.mk(
                    "remove",
                    m.group(0),
                    p.tgt(m.group(2))[0],
                    value[1] if value else None,
                    constraint="keep one",
                    form="only-one",
                ),
            )
        )
    m = re.search(
        r"\badjust any of the (?:aforementioned|above|following) (?:parameters|arguments|values)\b",
        s,
        re.IGNORECASE,
    )
    if m:
        names = [
            p.tgt(t)[0]
            for t in re.findall(_TOK_RX, p.t.text)
            if (p.t.token(t) or ("", ""))[0] == "assign"
        ]
        names = [n for n in names if n and n not in {"n_samples"}]
        if names:
            alts = tuple(
                p.mk("set", m.group(0), n, None, constraint="change", form="adjust-any")
                for n in names
            )
            res.append(
                (
                    m.start(),
                    m.end(),
                    Advice(
                        "either",
                        alternatives=tuple(alts),
                        text=p.t.expand(m.group(0)),
                        form="adjust-any",
                    ),
                )
            )
    m = re.search(
        rf"\bensure that (?:the\s+)?({_TOK_RX})\s+exists in the vocabulary\b", s, re.IGNORECASE
    )
    if m:
        res.append(
            (
                m.start(),
                m.end(),
                p.mk(
                    "set",
                    m.group(0),
                    p.tgt(m.group(1))[0],
                    None,
                    None,
                    constraint="a token in the vocabulary",
                    form="in-vocabulary",
                ),
            )
        )
    m = re.search(
        r"\bexpected either\s+(\x01\d+\x02)\s+or\s+(an?\s+[^,.]+?(?:\([^)]*\))?)(?:,|\.|$)",
        s,
        re.IGNORECASE,
    )
    if m and p.subject:
        first = p.t.token(m.group(1))
        alts = (
            p.mk(
                "set",
                m.group(0),
                p.subject,
                _pv(first[1]) if first else None,
                form="expected-either",
            ),
            p.mk(
                "set",
                m.group(0),
                p.subject,
                None,
                constraint=p.t.expand(m.group(2)).split(" (")[0],
                form="expected-either",
            ),
        )
        res.append(
            (
                m.start(),
                m.end(),
                Advice(
                    "either",
                    alternatives=tuple(alts),
                    text=p.t.expand(m.group(0)),
                    form="expected-either",
                ),
            )
        )
    return res


def _r_call(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``call / run `X()` (first)`` / ``remove ... using `ds.drop_index` `` / ``T cannot be V``."""
    m: re.Match[str] | None
    res: list[tuple[int, int, Advice]] = []
    for m in re.finditer(
        rf"\b(?:call|run|first run|invoke)\s+(?:the\s+)?({_TOK_RX})", s, re.IGNORECASE
    ):
        if not _imperative_at(s, m.start()) and not re.search(
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
            res.append(
                (m.start(), m.end(), p.mk("call", m.group(0), target, None, None, form="call"))
            )
    for m in re.finditer(r"\b(?:first run|run|call)\s+`\.?([A-Za-z_]\w*)\(\)", s):
        if not any(a_s <= m.start() < a_e for a_s, a_e, _ in res):
            res.append((m.start(), m.end(), p.mk("call", m.group(0), m.group(1), form="call")))
    for m in re.finditer(r"\b(?:with|using|via)\s+`?[\w.]+\.([A-Za-z_]\w*)\(", s):
        if re.search(
            r"\b(?:you should|please|you can|you need to)\b", s[: m.start()], re.IGNORECASE
        ) and not any(a_s <= m.start() < a_e for a_s, a_e, _ in res):
            res.append((m.start(), m.end(), p.mk("call", m.group(0), m.group(1), form="call")))
    m = re.search(r"\b(?:please\s+)?(?:first\s+)?merge and unload\b", s, re.IGNORECASE)
    if m and _imperative_at(s, m.start()):
        res.append((m.start(), m.end(), p.mk("call", m.group(0), "merge_and_unload", form="call")))
    for m in re.finditer(rf"\busing\s+({_TOK_RX})", s):
        tok = p.t.token(m.group(1))
        if (
            tok
            and re.fullmatch(
                r"[\w.]+\.(drop_index|unload|merge_and_unload|with_format|reset_format)\(?\)?",
                tok[1],
            )
            and re.search(r"\b(?:please|you can|you should)\b", s[: m.start()], re.IGNORECASE)
        ):
            res.append(
                (
                    m.start(),
                    m.end(),
                    p.mk("call", m.group(0), tok[1].split(".")[-1].rstrip("()"), form="call"),
                )
            )
    for m in re.finditer(
        rf"({_T})\s+(?:cannot|can't|must not|should not|may not)\s+be\s+({_TOK_RX}|-?\d+\b|None"
        rf"|True|False)(?!\s+\w+ed\b)",
        s,
    ):
        target = p.tgt(m.group(1))[0]
        value, _ = p.val(m.group(2))
        if target:
            res.append(
                (
                    m.start(),
                    m.end(),
                    p.mk(
                        "set",
                        m.group(0),
                        target,
                        None,
                        p.owner_near("", target),
                        constraint=f"!= {value!r}" if value is not NONE else "!= None",
                        form="cannot-be",
                    ),
                )
            )
    return res


def _noun_target(p: _Parser, span: str) -> str | None:
    """A target from a token, a snake_case name or a short noun phrase whose last noun may be
    plural (``"sequence lengths"`` -> ``sequence_length``, ``"the reward function"`` ->
    ``reward_function``)."""
    span = re.sub(r"^(?:provided|given|your|the|each|every|all)\s+", "", span.strip())
    if p.t.token(span) or re.fullmatch(_T, span):
        return p.tgt(span)[0]
    words = span.split()
    if words and words[-1].endswith("s") and words[-1][:-1].lower() in _PHRASE_NOUNS:
        words[-1] = words[-1][:-1]
    return _phrase_target(" ".join(words))


def _r_contract(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """What a value the user hands over must be or give back, when the message says so:
    ``make sure (provided) T returns X`` / ``T must return X`` (a function's contract: set T,
    constraint "return X"), ``X requires that T be V`` / ``X requires every T ... to be V``
    (requires T, constraint V), ``avoid using T`` (remove T), ``provide a T selected in:
    [A, B]`` (either set T=A | set T=B), ``Expected A, got B instead`` (use A instead of B)."""
    res: list[tuple[int, int, Advice]] = []
    phrase = rf"(?:(?:provided|given|your|the)\s+)?(?:{_T}|[a-z]+(?:\s+[a-z]+){{0,2}}?)"
    for m in re.finditer(
        rf"\b(?:make sure|ensure)\s+(?:that\s+)?(?P<t>{phrase})\s+returns\s+(?P<x>[^.;]+)"
        rf"|(?P<t2>{_T})\s+(?:must|should|has to|needs to)\s+return\s+(?P<x2>[^.;]+)",
        s,
        re.IGNORECASE,
    ):
        target = _noun_target(p, m.group("t") or m.group("t2"))
        if not target or target.lower() in _STOP:
            continue
        what = p.t.expand(m.group("x") or m.group("x2")).strip()
        res.append((m.start(), m.end(), p.mk("set", m.group(0), target, None, None,
                                             constraint=f"return {what}", form="returns")))
    for m in re.finditer(
        rf"\brequires?\s+(?:that\s+(?P<t>{phrase})\s+(?:be|are)|(?:every|each|all)\s+"
        rf"(?P<t2>[a-z]+)(?:\s+that\s+[^.;]*?)?\s+to\s+be)\s+(?P<c>{_CONSTRAINT}|[a-z][\w\-]*)",
        s,
        re.IGNORECASE,
    ):
        target = _noun_target(p, m.group("t") or m.group("t2"))
        if not target or target.lower() in _STOP:
            continue
        lead = re.match(rf"\s*({_T})\s", s)  # "interleave_datasets with ... requires"
        when = p.tgt(lead.group(1))[0] if lead else _subject_before(p, s, m.start())
        res.append((m.start(), m.end(), p.mk(
            "requires", m.group(0), target, None, None, when=when,
            constraint=p.t.expand(m.group("c")), form="requires-that")))
    for m in re.finditer(rf"\bavoid\s+(?:using|passing|setting)\s+(?:the\s+)?({_TOK_RX})", s,
                         re.IGNORECASE):
        target, owner, value = p.tgt(m.group(1))
        if target:
            res.append((m.start(), m.end(), p.mk("remove", m.group(0), target, value, owner,
                                                 form="avoid")))
    for m in re.finditer(rf"\bexpected\s+({_TOK_RX})\s*,\s*got\s+(.+?)\s+instead\b", s,
                         re.IGNORECASE):
        expected, _ = p.val(m.group(1))
        got = re.search(r"(\w+)['\"]?>?['\"]?\s*$", p.t.expand(m.group(2)))
        if isinstance(expected, str) and got:
            res.append((m.start(), m.end(), p.mk("rename", m.group(0), got.group(1), expected,
                                                 None, form="expected-got")))
    sel = re.search(
        r"\b(?:provide|use|choose|select|pass)\s+(?:an?\s+|the\s+)?([a-z]+(?:\s+[a-z]+)?)\s+"
        rf"(?:selected|chosen|taken)\s+(?:in|from|among)\s*:?\s*\[((?:\s*{_TOK_RX}\s*,?)+)\]",
        s,
        re.IGNORECASE,
    )
    if sel and _imperative_at(s, sel.start()):
        target = _noun_target(p, sel.group(1))
        values = [p.val(tok)[0] for tok in re.findall(_TOK_RX, sel.group(2))]
        if target and values:
            alternatives = tuple(p.mk("set", sel.group(0), target, v, None, form="selected-in")
                                 for v in values)
            res.append((sel.start(), sel.end(), Advice("either", alternatives=alternatives,
                                                       text=p.t.expand(sel.group(0)),
                                                       form="selected-in")))
    return res


ENV_NAMES = re.compile(
    r"^(?:torch|pytorch|accelerate|peft|transformers|deepspeed|torch_xla|trl|vllm|datasets|jmespath"
    r"|"
    r"optuna|wandb|ray|scipy|bitsandbytes|flash_attn|rich|liger[\w\-]*|kernels|torchao|"
    r"transformer_engine)(?:\s*[<>=!~].*|\[.*)?$",
    re.IGNORECASE,
)


def _r_install(p: _Parser, s: str) -> list[tuple[int, int, Advice]]:
    """``pip install P`` / ``upgrade P`` / ``ensure that P is installed``."""
    res = []
    full = p.t.expand(s)
    for m in re.finditer(r"pip install\s+(?:-U\s+|--upgrade\s+)?([^\s,;`]+)", full):
        res.append(
            Advice(
                "install",
                m.group(1).strip("'\"`.").rstrip(")"),
                None,
                text=m.group(0),
                form="pip-install",
            )
        )
    for m in re.finditer(
        r"\b(?:upgrade|update)\s+(?:your\s+|the\s+)?`?((?:torch|pytorch|accelerate|peft"
        r"|transformers|"
        r"deepspeed|trl|datasets)\b[^\s`,]*)",
        full,
        re.IGNORECASE,
    ):
        res.append(
            Advice(
                "install", m.group(1), None, text=m.group(0), constraint="upgrade", form="upgrade"
            )
        )
    for m in re.finditer(r"\bensure that `([\w\-]+(?:\s*[<>=]=?\s*[\d.]+)?)` is installed", full):
        res.append(Advice("install", m.group(1), None, text=m.group(0), form="ensure-installed"))
    # zero-width spans after the sentence: never block another rule
    return [(len(s) + i, len(s) + i, a) for i, a in enumerate(res)]


_RULES: tuple[_Rule, ...] = (
    _r_deprecated,
    _r_either_list,
    _r_either_nouns,
    _r_set,
    _r_value_verbs,
    _r_use_instead,
    _r_remove,
    _r_specify,
    _r_must_be,
    _r_requires,
    _r_adjust,
    _r_misc,
    _r_conflict,
    _r_call,
    _r_pass,
    _r_contract,
    _r_install,
)


def parse_advice(message: str) -> tuple[Advice, ...]:
    """The advice a library message gives, as typed edits (empty when it gives none)."""
    if not message or not message.strip():
        return ()
    return _Parser(message).parse()


if __name__ == "__main__":  # pragma: no cover - manual check
    import sys

    for line in sys.argv[1:] or [sys.stdin.read()]:
        for advice in parse_advice(line):
            print(advice)
