"""Reading and writing ``TrainingArguments(...)`` keywords, shared by the recipes of the
``training-args-conflict`` family (not a recipe itself: the registry skips modules whose
name starts with ``_``)."""

from __future__ import annotations

import libcst as cst

from autofix.recipe import append_keyword, keyword, replace_keyword

TRAINING_ARGS_PATTERN = (r"transformers(\.training_args(_seq2seq|_tf)?)?\."
                         r"(Seq2Seq|TF)?TrainingArguments")
#: The evaluation-strategy keyword, under either of its names (renamed in 4.41.0).
EVAL_STRATEGY = ("eval_strategy", "evaluation_strategy")


def strategy(call: cst.Call, names: tuple[str, ...], default: str) -> str | None:
    """The strategy given to ``call`` under one of ``names``: ``"epoch"`` for ``"epoch"``
    or ``IntervalStrategy.EPOCH``; ``default`` when absent; ``None`` when it is not a
    literal (a variable: the recipe cannot read it)."""
    for name in names:
        arg = keyword(call, name)
        if arg is None:
            continue
        value = arg.value
        if isinstance(value, cst.SimpleString):
            return str(value.evaluated_value).lower()
        if isinstance(value, cst.Attribute):
            return value.attr.value.lower()
        return None
    return default


def int_value(call: cst.Call, name: str) -> int | None:
    """The integer literal given as ``name=`` (``None``: absent or not a literal int)."""
    arg = keyword(call, name)
    if arg is not None and isinstance(arg.value, cst.Integer):
        return int(arg.value.evaluated_value)
    return None


def set_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``name=value``: the existing argument's value replaced, else added."""
    if keyword(call, name) is not None:
        return replace_keyword(call, name, value)
    return append_keyword(call, name, value)


def is_true(call: cst.Call, name: str) -> bool:
    """True when ``call`` has ``name=True``."""
    arg = keyword(call, name)
    return arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "True"
