"""Reading and writing ``TrainingArguments(...)`` keywords, shared by the recipes of the
``training-args-conflict`` family and the recipes that set one flag when the facts at the
failure show its fault (:class:`SetFlag`); not a recipe itself: the registry skips modules
whose name starts with ``_``."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst
import libcst.matchers as m

from autofix.categories.failure import Failure
from autofix.toolkit import NotApplicable, Recipe, append_keyword, find, keyword, replace_keyword
from autofix.toolkit.facts import failure_of

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


def splatted_dicts(recipe: Recipe, tree: cst.Module) -> set[cst.Call]:
    """The ``dict(...)`` calls that hold a ``TrainingArguments``' keywords: ``hp =
    dict(...)``, the only assignment of ``hp`` in the module, given as
    ``TrainingArguments(**hp)`` to a call with no other keyword than ``output_dir`` (so
    every argument the recipes read is in the dict, and a keyword they add cannot clash).
    The recipes of the family edit such a call as they edit ``TrainingArguments(...)``."""
    found: set[cst.Call] = set()
    for node in find(tree, m.Call()):
        call = cst.ensure_type(node, cst.Call)
        if not recipe.is_qualified(call.func, TRAINING_ARGS_PATTERN):
            continue
        stars = [a for a in call.args if a.star == "**" and isinstance(a.value, cst.Name)]
        others = [a for a in call.args if a.keyword is not None
                  and a.keyword.value != "output_dir"]
        if len(stars) != 1 or others or any(a.star == "*" for a in call.args):
            continue
        name = cst.ensure_type(stars[0].value, cst.Name).value
        assigned = [cst.ensure_type(a, cst.Assign) for a in m.findall(
            tree, m.Assign(targets=[m.AssignTarget(m.Name(name))]))]
        if len(assigned) == 1 and isinstance(assigned[0].value, cst.Call) \
                and recipe.is_qualified(assigned[0].value.func, r"(builtins\.)?dict") \
                and not any(a.keyword is None for a in assigned[0].value.args) \
                and not find(tree, m.AugAssign(target=m.Name(name))) \
                and not find(tree, m.Subscript(value=m.Name(name))) \
                and not find(tree, m.Attribute(value=m.Name(name))):
            found.add(assigned[0].value)
    return found


class SetFlag(Recipe):
    """Sets one boolean keyword (``flag=value``) of each ``TrainingArguments(...)`` call
    matched by ``args_pattern``, or of the ``dict(...)`` given to it as ``**hp``
    (:func:`splatted_dicts`), when :meth:`shows` finds the fault in the facts at the
    failure (``Diagnosis.failure``); ``NotApplicable(no_facts)`` when it does not. The
    commit line says ``flag=value, because``."""

    abstract = True
    flag: ClassVar[str] = ""
    value: ClassVar[bool] = True
    because: ClassVar[str] = ""
    no_facts: ClassVar[str] = ""
    args_pattern: ClassVar[str] = TRAINING_ARGS_PATTERN

    def shows(self, failure: Failure) -> bool | None:
        """True when the facts at the failure show the fault this flag fixes."""
        raise NotImplementedError

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        failure = failure_of(self.rc)
        if failure is None or self.shows(failure) is not True:
            raise NotApplicable(self.no_facts)
        return super().transform_module_impl(tree)

    def visit_Module(self, node: cst.Module) -> None:
        self.dicts = splatted_dicts(self, node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not (self.is_qualified(original_node.func, self.args_pattern)
                or original_node in self.dicts):
            return updated_node
        if any(a.star == "**" for a in original_node.args):
            return updated_node  # the dict given as **hp is edited instead
        wanted = str(self.value)
        arg = keyword(updated_node, self.flag)
        if arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == wanted:
            self.reason = f"{self.flag}={wanted} is set already"
            return updated_node
        self.changed(original_node, f"{self.flag}={wanted}, {self.because}")
        return set_keyword(updated_node, self.flag, cst.Name(wanted))
