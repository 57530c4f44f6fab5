"""The advice parser's text: a message with its code spans, assignments, quotes and
placeholders protected as tokens (:class:`Text`), the grammar's pieces every rule is written
with (``T`` a target, ``V`` a value, ``FILL`` filler words, ``LEAD`` what leads advice,
``CONSTRAINT`` a requirement that is no literal), the owners a message may name, and
:func:`imperative_at` (a verb that advises, not one that describes). Standard library only.
"""

from __future__ import annotations

import re

from autofix.categories.advice.model import PLACEHOLDER, normalise_ws

# --------------------------------------------------------------------------- tokens

TOK = "\x01{}\x02"
TOK_RX = r"\x01\d+\x02"
TOK_FIND = re.compile(r"\x01(\d+)\x02")

OWNER_NAMES = (
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
OWNER_RX = re.compile(rf"^(?:{OWNER_NAMES})$")
OWNER_ALIASES = {
    "the configuration of the model": "model.config",
    "model config": "model.config",
    "generation config": "model.generation_config",
    "deepspeed config": "deepspeed_config",
    "deepspeed config file": "deepspeed_config",
}


# --------------------------------------------------------------------------- protecting


class Text:
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
        self.raw = normalise_ws(message)
        self.tokens: list[tuple[str, str]] = []  # (kind, text): code | assign | quote | hole
        text = self.raw
        text = self._BACKTICK.sub(lambda m: self._add("code", m.group(1)), text)
        text = self._ASSIGN.sub(lambda m: self._add("assign", m.group(0)), text)
        text = self._QUOTE.sub(lambda m: self._add("quote", m.group(0)), text)
        text = self._HOLE.sub(lambda m: self._add("hole", PLACEHOLDER), text)
        self.text = text

    def _add(self, kind: str, text: str) -> str:
        self.tokens.append((kind, text))
        return TOK.format(len(self.tokens) - 1)

    def expand(self, text: str) -> str:
        """Protected text back to the original characters."""

        def back(m: re.Match[str]) -> str:
            kind, tok = self.tokens[int(m.group(1))]
            if kind == "code":
                return "`" + self.expand(tok) + "`"
            return self.expand(tok) if TOK_FIND.search(tok) else tok

        return TOK_FIND.sub(back, text)

    def token(self, text: str) -> tuple[str, str] | None:
        """(kind, inner text) when ``text`` is exactly one token."""
        m = re.fullmatch(r"\s*\x01(\d+)\x02\s*", text)
        if not m:
            return None
        kind, tok = self.tokens[int(m.group(1))]
        return kind, self.expand(tok)


# --------------------------------------------------------------------------- grammar

#: A target: a protected token, a ``--flag``, a snake_case or dotted name.
T = (
    rf"(?:{TOK_RX}|(?<![\w\-])--?[A-Za-z_][\w\-.]*(?<!\.)|[A-Za-z_]\w*_\w+(?:\.\w+)*"
    r"|[a-z]\w*\.[a-z_]\w*)"
)
W = rf"(?:{T}|[A-Za-z]\w*)"  # a target or any single word
V = (
    rf"(?:{TOK_RX}|-?\d+(?:\.\d+)?(?:e-?\d+)?|True|False|None|true|false|none|an? (?:positive"
    rf"|non-zero|"
    rf"nonzero|non-negative|valid|integer|different|smaller|larger|lower|higher"
    rf"|non-empty)(?: integer)? value"
    rf"|a value (?:greater|larger|smaller|lower"
    rf"|higher) than \S+|a multiple of \S+|[A-Za-z_][\w\-]*)"
)
FILL = (
    r"(?:(?:both|the|your|its|an?|this|that|these|each|every|only|also|argument|parameter"
    r"|option|flag|environment variable)\s+)*"
)
LEAD = (
    r"(?:^|(?<=[.:;!?(,])\s*|\b(?:please|either|or|and|then|should|must|can|could|may|need to"
    r"|needs to|have to|want to|in order to|only|"
    r"try|consider|you may want to|make sure to|recommended to|instead|first|by|simply|just|"
    r"fix,?|fix this,?|solve this,?|resolve this,?|e\.g\.,?|explicitly|alternatively,?|manually|"
    r"you should|you can|you must|you need to|you have to|you'll need to|we recommend you"
    r"|it is recommended to|"
    r"it's recommended to|you might want to|otherwise,?|if so,?|in that case,?)\s+)"
)
CONSTRAINT = (
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


GERUND_LEAD = re.compile(
    r"\b(?:try|consider|by|recommend|recommended|suggest|or|avoid|prefer)\s+$", re.IGNORECASE
)


def imperative_at(text: str, start: int) -> bool:
    """True when the verb at ``start`` is advice (a command), not a description.

    A gerund ("Setting X ...", "Passing X ...") describes, unless led by "try", "consider",
    "by", "or"...: "Setting num_proc to 1" is what the library did, "try setting" is advice.
    """
    before = text[:start]
    if re.match(r"[A-Za-z]+ing\b", text[start:]):
        return bool(GERUND_LEAD.search(before))
    if re.search(LEAD + r"$", before, re.IGNORECASE) or not before.strip():
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

STOP = {
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
PREP = (
    r"(?:for|in|of|to|with|from|on|at|by|per|as|when|if|and|or|that|which|before|after|so"
    r"|because|but)"
)
PHRASE_NOUNS = {
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


def phrase_target(phrase: str) -> str | None:
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
    if not words or any(w.lower() in STOP for w in words):
        return None
    if len(words) == 1:
        return words[0] if re.fullmatch(r"[a-z][a-z0-9]+", words[0]) else None
    if (
        len(words) <= 3
        and words[-1].lower() in PHRASE_NOUNS
        and all(re.fullmatch(r"[a-z][a-z0-9]*", w) for w in words)
    ):
        return "_".join(words)
    return None


#: The packages an environment change names ("pip install P", "requires P>=1").
ENV_NAMES = re.compile(
    r"^(?:torch|pytorch|accelerate|peft|transformers|deepspeed|torch_xla|trl|vllm|datasets|jmespath"
    r"|"
    r"optuna|wandb|ray|scipy|bitsandbytes|flash_attn|rich|liger[\w\-]*|kernels|torchao|"
    r"transformer_engine)(?:\s*[<>=!~].*|\[.*)?$",
    re.IGNORECASE,
)

