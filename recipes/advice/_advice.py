"""The shape of the recipes that apply a library's own advice (the advice family,
``autofix/categories/catalogue/advice.py``) to the argument it names, where its value is
defined: the ``TrainingArguments`` / TRL config / ``Trainer`` call, or the constant,
dataclass field default, argparse default, config-dict entry or parameter that feeds it,
or the ``dict`` given as ``TrainingArguments(**hp)``. Not a recipe itself (the registry
skips modules whose name starts with ``_``).

A recipe of the family says which advice it makes (:meth:`AdviceRecipe.handles`, read on
the parsed message; the inventory ``benchmarks/inventory_advice.py`` asks it too), then
plans its edits in :meth:`AdviceRecipe.make`. It chooses between the message's
alternatives from what the script has, and never invents a value the library does not
give: when the value cannot be derived from the script's own settings it declines and its
reason says what to set.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from autofix.categories.advice import Advice, parse_advice
from autofix.toolkit import NotApplicable, code, keyword, patterns
from autofix.toolkit.scope import (
    Edit,
    PlannedEdits,
    append_kw,
    map_receiver,
    replace_with,
    string_value,
)
from autofix.toolkit.sources import CommandLine, literal_source

#: ``TrainingArguments`` and the classes that extend it (``Seq2SeqTrainingArguments``,
#: TRL's ``SFTConfig``...).
ARGS_CALL = rf"(?:{patterns.TRAINING_ARGS}|{patterns.TRL_CONFIG})"
#: Splits that hold evaluation data, in the order a script's own naming is preferred
#: (``datasets``' ``load_dataset`` names, the course's ``validation``; ``test`` last: it is
#: the only held-out split of many datasets, e.g. ``imdb``).
EVAL_SPLITS = ("validation", "valid", "val", "dev", "eval", "evaluation", "test")
#: Dataset methods that keep the split they are called on (``ds["train"].select(...)``).
_SAME_SPLIT = ("select", "shuffle", "filter", "map", "take", "skip", "remove_columns",
               "rename_column", "rename_columns", "with_format", "set_format", "cast",
               "cast_column", "sort", "flatten_indices", "class_encode_column")
Literal = cst.BaseExpression


def flat(advice: Sequence[Advice]) -> list[Advice]:
    """Every advice, the alternatives of an ``either`` one by one."""
    out: list[Advice] = []
    for a in advice:
        out += flat(a.alternatives) if a.kind == "either" else [a]
    return out


def message_text(evidence: str, message: str = "") -> str:
    """The library's message from a diagnosis: its whole ``message`` when known, else the
    ``Type: message`` evidence line without its type (a ``KeyError``'s quotes taken off)."""
    text = message or re.sub(r"^\w+(?:Error|Exception|Warning)?: ", "", evidence.strip())
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"" and \
            (evidence.startswith("KeyError") or not message):
        text = text[1:-1]
    return text


def literal_of(value: object) -> cst.BaseExpression:
    """A Python value as a LibCST literal: ``"no"``, ``False``, ``3``."""
    if isinstance(value, bool) or value is None:
        return cst.Name(repr(value))
    if isinstance(value, int):
        return cst.Integer(str(value))
    if isinstance(value, float):
        return cst.Float(repr(value))
    return cst.SimpleString('"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"')


def is_literal(node: cst.CSTNode) -> bool:
    """A literal a recipe may overwrite: a string, a number, ``True``/``False``/``None``,
    an enum member (``IntervalStrategy.EPOCH``) or a negative number."""
    if isinstance(node, (cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and \
        node.value.value[:1].isupper() and node.attr.value.isupper()


def literal_value(node: cst.CSTNode) -> object:
    """The value of a literal (:func:`is_literal`); an enum member as its lower-cased
    name (``IntervalStrategy.EPOCH`` -> ``"epoch"``, as transformers' enums read)."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.Float):
        return float(node.evaluated_value)
    if isinstance(node, cst.Name):
        return {"True": True, "False": False, "None": None}.get(node.value, node.value)
    if isinstance(node, cst.Attribute):
        return node.attr.value.lower()
    if isinstance(node, cst.UnaryOperation):
        inner = literal_value(node.expression)
        return -inner if isinstance(inner, (int, float)) else None
    return None


class AdviceRecipe(PlannedEdits):
    """A recipe that makes the change a library's message names."""

    abstract = True
    requires_imports = ("transformers", "trl")

    @classmethod
    def handles(cls, advice: Sequence[Advice], message: str) -> bool:
        """True when this recipe makes the change ``advice`` (parsed from ``message``)
        names; only then does it look at the code."""
        return False

    # -- the protocol ------------------------------------------------------------------

    def prepare(self, tree: cst.Module) -> None:
        diagnosis = self.rc.diagnosis
        self.message = message_text(diagnosis.evidence, diagnosis.message)
        self.advice = parse_advice(self.message)
        if not self.handles(self.advice, self.message):
            raise NotApplicable(f"the library's message does not ask for what {self.id} "
                                "changes")
        self.described: list[str] = []
        self.make(tree)

    def make(self, tree: cst.Module) -> None:
        """Plan the edits (subclasses); raise :class:`NotApplicable` to decline."""

    # -- the calls ---------------------------------------------------------------------

    def at_failure(self, calls: list[cst.Call]) -> list[cst.Call]:
        """The calls of ``calls`` whose lines hold the failing line, else all of them."""
        line = self.rc.diagnosis.line
        if line:
            spans = [c for c in calls if self.program.line(c) <= line <= self._end(c)]
            if spans:
                return spans
        return calls

    def _end(self, node: cst.CSTNode) -> int:
        from libcst.metadata import PositionProvider

        pos = self.get_metadata(PositionProvider, node, None)
        return pos.end.line if pos is not None else 0

    def trainer_calls(self) -> list[cst.Call]:
        """``Trainer(...)`` (and ``Seq2SeqTrainer``, TRL's trainers, module subclasses)."""
        return [c for c in self.program.calls if self.program.is_trainer_call(c)
                or self.is_qualified(c.func, patterns.TRL_TRAINER)]

    def args_calls(self) -> list[cst.Call]:
        """``TrainingArguments(...)`` and the configs that extend it."""
        return [c for c in self.program.calls if self.is_qualified(c.func, ARGS_CALL)]

    def trainer_argument(self, trainer: cst.Call, name: str, position: int
                         ) -> cst.BaseExpression | None:
        """The argument ``trainer`` gives its parameter ``name`` (keyword, or positional at
        ``position``), else ``None``."""
        given = keyword(trainer, name)
        if given is not None:
            return given.value
        plain = [a for a in trainer.args if a.keyword is None]
        if len(plain) > position and not any(a.star for a in plain[:position + 1]):
            return plain[position].value
        return None

    def the_args_call(self) -> cst.Call:
        """The arguments the failure is about: the ``TrainingArguments(...)`` call on the
        failing line, else the one the failing trainer is given (followed through
        variables, helpers' returns and call sites), else the only one in the module.
        Raises :class:`NotApplicable` when it is not one call."""
        calls = self.args_calls()
        line = self.rc.diagnosis.line
        here = [c for c in calls if line and self.program.line(c) <= line <= self._end(c)]
        if len(here) == 1:
            return here[0]
        found: list[cst.Call] = []
        for trainer in self.at_failure(self.trainer_calls()):
            given = self.trainer_argument(trainer, "args", 1)
            if given is not None:
                found += [v for v in self.program.values(given)
                          if isinstance(v, cst.Call) and v in calls and v not in found]
        if len(found) == 1:
            return found[0]
        if not found and len(calls) == 1:
            return calls[0]
        raise NotApplicable(f"{len(found) or len(calls)} TrainingArguments calls could "
                            "be the failing one" if (found or calls) else
                            "no TrainingArguments (or TRL config) call in this file")

    # -- reading and writing one argument ---------------------------------------------

    def splatted(self, call: cst.Call) -> cst.Call | cst.Dict | None:
        """The ``dict(...)`` call or ``{...}`` literal given as ``call(**name)`` when it
        holds the call's arguments (``name`` assigned once, never changed afterwards,
        every key a literal string); ``None`` when ``call`` has no ``**``."""
        stars = [a for a in call.args if a.star == "**"]
        if not stars:
            return None
        if len(stars) > 1 or not isinstance(stars[0].value, cst.Name):
            raise NotApplicable(f"{code(call.func)}(...) takes its arguments from "
                                f"{code(stars[0].value)}, which autofix cannot follow")
        name = stars[0].value.value
        tree = self.program.tree
        if m.findall(tree, m.AugAssign(target=m.Name(name))) \
                or m.findall(tree, m.Subscript(value=m.Name(name))) \
                or m.findall(tree, m.Call(func=m.Attribute(value=m.Name(name)))):
            raise NotApplicable(f"the dict {name} given as **{name} is changed after it is "
                                "made")
        values = [v for v in self.program.values(stars[0].value)]
        if len(values) == 1 and isinstance(values[0], cst.Dict) and all(
                isinstance(e, cst.DictElement) and string_value(e.key) is not None
                for e in values[0].elements):
            return values[0]
        if len(values) == 1 and isinstance(values[0], cst.Call) and \
                self.is_qualified(values[0].func, r"(builtins\.)?dict") and \
                all(a.keyword is not None for a in values[0].args):
            return values[0]
        raise NotApplicable(f"{code(call.func)}(...) takes its arguments from **{name}, "
                            "which is not one dict literal")

    def argument(self, call: cst.Call, name: str) -> cst.BaseExpression | None:
        """The expression ``call`` gives ``name``: its keyword, else the entry of the dict
        it is given as ``**``; ``None`` when absent (the library's default)."""
        given = keyword(call, name)
        if given is not None:
            return given.value
        holder = self.splatted(call)
        if isinstance(holder, cst.Call):
            inner = keyword(holder, name)
            return inner.value if inner is not None else None
        if isinstance(holder, cst.Dict):
            return next((e.value for e in holder.elements if isinstance(e, cst.DictElement)
                         and string_value(e.key) == name), None)
        return None

    def current(self, call: cst.Call, name: str, default: object) -> object:
        """The value ``call`` gives ``name``, followed to its literal; ``default`` when
        absent. Raises :class:`NotApplicable` when it is not a literal autofix can read."""
        expr = self.argument(call, name)
        if expr is None:
            return default
        source = self.source(expr, name)
        return literal_value(source[0])

    def set_argument(self, call: cst.Call, name: str, value: object, why: str = "") -> None:
        """Plan ``name=value`` for ``call``: the literal the argument comes from replaced
        where it is defined, else the keyword added to the call (or to the dict given as
        ``**``). Nothing when it already holds ``value``."""
        new = literal_of(value)
        expr = self.argument(call, name)
        note = f" ({why})" if why else ""
        if expr is not None:
            literal, where = self.source(expr, name)
            if literal_value(literal) == value:
                return
            if isinstance(literal, cst.SimpleString) and isinstance(value, str) and \
                    literal.quote in ("'", '"') and literal.quote not in value and \
                    "\\" not in value:
                new = cst.SimpleString(f"{literal.quote}{value}{literal.quote}")  # its quotes
            line = self.program.line(literal)
            at = "" if where == name else f" at {where}, line {line}"
            self.plan_edit(literal, replace_with(new), f"{name}={code(new)}{at}{note}")
            return
        holder = self.splatted(call)
        if isinstance(holder, cst.Call):
            self.plan_edit(holder, append_kw(name, new),
                           f"{name}={code(new)} in the dict given as **{note}")
        elif isinstance(holder, cst.Dict):
            self.plan_edit(holder, _dict_entry(name, new),
                           f"{name}={code(new)} in the dict given as **{note}")
        else:
            self.plan_edit(call, append_kw(name, new), f"{name}={code(new)}{note}")

    # -- where a value is defined ------------------------------------------------------

    def source(self, expr: cst.BaseExpression, name: str) -> tuple[Literal, str]:
        """The literal ``expr``'s value comes from and where it is (``name`` itself, a
        module constant, a class field default, an argparse default, a dict entry, a
        parameter's default or argument: :func:`autofix.toolkit.sources.literal_source`).
        Raises :class:`NotApplicable` when it cannot be followed to one literal, or when the
        value comes from the command line."""
        found = literal_source(self.program, expr, self.rc.args, name, is_literal)
        if isinstance(found, CommandLine):
            raise NotApplicable(f"{name} comes from the command line ({found.flag} "
                                f"{found.value}): run the script with another {found.flag}")
        if isinstance(found, str):
            raise NotApplicable(found)
        return found.node, found.where or name

    # -- datasets ----------------------------------------------------------------------

    def eval_split(self, trainer: cst.Call) -> cst.BaseExpression | None:
        """An evaluation split in scope at ``trainer``, of the same dataset as its training
        split: ``tokenized["validation"]`` when the trainer is given
        ``tokenized["train"]`` (or a variable holding it, or ``.select(...)`` of it) and
        the script shows that split exists (the split is read elsewhere, or the data are
        loaded with ``data_files={... "validation": ...}``, a ``DatasetDict({...})`` or
        ``train_test_split``); a variable that already holds that split is preferred.
        ``None`` when there is none."""
        train = self.trainer_argument(trainer, "train_dataset", 3)
        if train is None:
            return None
        for subscript in self._split_of(train):
            base = subscript.value
            splits = self.splits(base)
            for key in EVAL_SPLITS:
                if key not in splits:
                    continue
                held = self._holder(base, key, trainer)
                if held is not None:
                    return held
                if isinstance(base, cst.Name) and self.program.resolves(base.value, trainer):
                    return subscript.with_changes(slice=[cst.SubscriptElement(cst.Index(
                        cst.SimpleString(f'"{key}"')))])
        return None

    def _split_of(self, expr: cst.BaseExpression, depth: int = 0) -> list[cst.Subscript]:
        """The ``X["train"]`` subscripts ``expr`` is (through ``.select(...)`` and kin,
        and through the variables holding it)."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
                expr.func.attr.value in _SAME_SPLIT:
            expr = expr.func.value
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and \
                isinstance(expr.slice[0].slice, cst.Index):
            key = string_value(expr.slice[0].slice.value)
            return [expr] if key == "train" else []
        if isinstance(expr, cst.Name) and depth < 4:
            out: list[cst.Subscript] = []
            for value in self.program.values(expr):
                if value is not expr and isinstance(value, cst.BaseExpression):
                    out += self._split_of(value, depth + 1)
            return out
        return []

    def splits(self, base: cst.BaseExpression) -> set[str]:
        """The split names the script shows ``base`` (a ``DatasetDict``) has."""
        found: set[str] = set()
        for node in m.findall(self.program.tree, m.Subscript()):
            assert isinstance(node, cst.Subscript)
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                key = string_value(node.slice[0].slice.value)
                if key and key in EVAL_SPLITS and \
                        self.program.same_value(node.value, base):
                    found.add(key)
        pending = list(self.program.values(base))
        seen: set[int] = set()
        while pending:
            value = pending.pop()
            if id(value) in seen or len(seen) > 40:
                continue
            seen.add(id(value))
            if not isinstance(value, cst.Call):
                continue
            receiver = map_receiver(value)
            if receiver is not None:
                pending += self.program.values(receiver)
                continue
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value == "train_test_split":
                found |= {"train", "test"}
            elif self.is_qualified(func, r"datasets(\.[\w.]*)?\.load_dataset"):
                files = keyword(value, "data_files")
                for held in self.program.values(files.value) if files is not None else ():
                    if isinstance(held, cst.Dict):
                        found |= {k for e in held.elements if isinstance(e, cst.DictElement)
                                  and (k := string_value(e.key))}
            elif self.is_qualified(func, r"datasets(\.[\w.]*)?\.DatasetDict"):
                for arg in value.args[:1]:
                    for held in self.program.values(arg.value):
                        if isinstance(held, cst.Dict):
                            found |= {k for e in held.elements
                                      if isinstance(e, cst.DictElement)
                                      and (k := string_value(e.key))}
        return found

    def _holder(self, base: cst.BaseExpression, key: str, at: cst.Call) -> cst.Name | None:
        """A variable visible at ``at`` that holds ``base[key]``."""
        for name in self.program.visible_names(at):
            for target in self.program.resolve(name, at):
                parent = self.program.parent(target)
                assign = self.program.parent(parent) if isinstance(parent, cst.AssignTarget) \
                    else None
                value = assign.value if isinstance(assign, cst.Assign) else None
                if isinstance(value, cst.Subscript) and len(value.slice) == 1 and \
                        isinstance(value.slice[0].slice, cst.Index) and \
                        string_value(value.slice[0].slice.value) == key and \
                        self.program.same_value(value.value, base) and \
                        self.program.resolves(name, at):
                    return cst.Name(name)
        return None


def _dict_entry(name: str, value: cst.BaseExpression) -> Edit:
    """Edit: a ``{...}`` literal with the entry ``"name": value`` added last."""
    def edit(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Dict)
        elements = list(node.elements)
        quote = next((e.key.quote for e in elements if isinstance(e, cst.DictElement)
                      and isinstance(e.key, cst.SimpleString)), '"')
        entry = cst.DictElement(cst.SimpleString(f"{quote}{name}{quote}"), value)
        if elements and isinstance(elements[-1].comma, cst.Comma):
            entry = entry.with_changes(comma=elements[-1].comma)
            elements[-1] = elements[-1].with_changes(
                comma=elements[-2].comma if len(elements) > 1 and
                isinstance(elements[-2].comma, cst.Comma) else cst.Comma(
                    whitespace_after=cst.SimpleWhitespace(" ")))
        elif elements:
            elements[-1] = elements[-1].with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return node.with_changes(elements=[*elements, entry])
    return edit
