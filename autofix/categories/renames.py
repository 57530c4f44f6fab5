"""Keywords the libraries renamed, the one table of them: the API check and the
``api-drift`` recipes read it, and the ``api-drift`` category reads ``HfArgumentParser``'s
refusals with it (a refused option or key that is a renamed field is drift; a typo is not).

Which of the two names a call must use is never read from this table or from a version
number: the API check asks the installed callable (``inspect.signature`` in the target
interpreter) which of the pair it takes, and a traceback names the one it rejected. The
table only says the two names are one setting.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rename:
    """Keyword ``old`` became ``new`` in ``library`` (``note``: where, since when) for the
    callables of ``owner`` (``"training-args"``: ``TrainingArguments`` and its subclasses;
    ``"trainer"``: ``Trainer`` and TRL's trainers; ``"trl-config"``: TRL's configuration
    classes). A rename made from a traceback, without the API check's facts, touches only
    those calls (``DataCollatorWithPadding(tokenizer=)`` is no ``Trainer(tokenizer=)``):
    :data:`autofix.toolkit.drift.OWNER_CALLS` maps each owner to its qualified names."""

    old: str
    new: str
    library: str
    note: str
    owner: str

    def partner(self, name: str) -> str:
        """The other name of the pair ("" when ``name`` is neither)."""
        return self.new if name == self.old else self.old if name == self.new else ""

    @property
    def is_field(self) -> bool:
        """A field of a configuration dataclass (``TrainingArguments``, TRL's configs): one
        that ``HfArgumentParser`` also reads from a command line, a dict or a file."""
        return self.owner in ("training-args", "trl-config")


KEYWORD_RENAMES: tuple[Rename, ...] = (
    Rename("evaluation_strategy", "eval_strategy", "transformers",
           "TrainingArguments and its subclasses (TRL's configs too), transformers 4.41",
           "training-args"),
    Rename("tokenizer", "processing_class", "transformers",
           "Trainer and its subclasses, transformers 4.46; TRL's trainers, TRL 0.12",
           "trainer"),
    Rename("max_seq_length", "max_length", "trl", "SFTConfig, TRL 0.20", "trl-config"),
)


def rename_of(name: str) -> Rename | None:
    """The rename keyword ``name`` is one side of (None when it is none)."""
    return next((r for r in KEYWORD_RENAMES if r.partner(name)), None)


#: ``HfArgumentParser``'s refusal of what it could not place in its dataclasses: options
#: of a command line (``parse_args_into_dataclasses``, the list as argparse left it) or keys
#: of a dict, JSON or YAML file (``parse_dict``, sorted), transformers' ``hf_argparser.py``.
UNUSED_BY_PARSER = re.compile(
    r"Some (?P<what>specified arguments|keys) are not used by the HfArgumentParser: "
    r"(?P<items>\[.*?\])")


@dataclass(frozen=True)
class RenamedOption:
    """One item the parser refused that is a renamed field: ``given`` as it was passed
    (``--evaluation_strategy``, ``--evaluation-strategy=steps``, or the key
    ``evaluation_strategy``), ``name`` its field name, ``rename`` the pair it belongs to,
    ``option`` whether it came as a command-line option (else a dict or file key)."""

    given: str
    name: str
    rename: Rename
    option: bool

    @property
    def replacement(self) -> str:
        """``given`` with the field's other name, spelt the same way (``--eval_strategy``,
        ``--eval-strategy=steps``, ``eval_strategy``)."""
        head, sep, value = self.given.partition("=")
        dashes = head[:len(head) - len(head.lstrip("-"))]
        new = self.rename.partner(self.name)
        if "-" in head.lstrip("-"):
            new = new.replace("_", "-")
        return f"{dashes}{new}{sep}{value}"


def refused_items(message: str) -> tuple[list[str], bool]:
    """What ``HfArgumentParser`` refused in ``message`` (:data:`UNUSED_BY_PARSER`), and
    whether they were command-line arguments (else dict or file keys); ``([], False)`` for
    any other message."""
    found = UNUSED_BY_PARSER.search(message)
    if found is None:
        return [], False
    try:
        items = ast.literal_eval(found.group("items"))
    except (ValueError, SyntaxError):
        return [], False
    return ([str(i) for i in items] if isinstance(items, list) else [],
            found.group("what") == "specified arguments")


def renamed_in_parser_refusal(message: str) -> list[RenamedOption]:
    """The renamed configuration fields (:attr:`Rename.is_field`) among what
    ``HfArgumentParser`` refused in ``message`` (:data:`UNUSED_BY_PARSER`); empty when the
    message is no such refusal or names none. The parser refuses the name the installed
    transformers does not take, so the other name of the pair is the one to pass."""
    items, option = refused_items(message)
    renamed: list[RenamedOption] = []
    for text in items:
        if option and not text.startswith("-"):
            continue  # an option's value
        name = text.partition("=")[0].lstrip("-").replace("-", "_")
        rename = rename_of(name)
        if rename is not None and rename.is_field:
            renamed.append(RenamedOption(text, name, rename, option))
    return renamed


def partners(name: str) -> list[str]:
    """The names keyword ``name`` was renamed to or from (:data:`KEYWORD_RENAMES`)."""
    return [p for p in (r.partner(name) for r in KEYWORD_RENAMES) if p]
