"""The value-source service: where the script defines a value a fix must change.

A recipe knows *what* must change (``save_strategy`` of the ``TrainingArguments`` the
trainer gets, the ``weight=`` a loss receives, the ``lr`` of an optimizer); :class:`Values`
finds *where* the script sets it, in the forms users write, and plans the edit there:

- an argument of a library call: a keyword, a positional argument, an entry of the dict
  given as ``**kwargs`` (a ``{...}`` literal or ``dict(...)``), each followed to the literal
  it comes from (a constant, a parameter's default or call sites, ``self.x`` set in
  ``__init__`` and the instantiations that fill it, a dataclass field, an ``argparse``
  default, a config dict's entry: :func:`autofix.toolkit.sources.literal_source`);
- the options of ``HfArgumentParser(...).parse_args_into_dataclasses()``: a flag in a
  ``sys.argv`` default list (``sys.argv += [...]``, ``sys.argv = [...]``,
  ``.extend([...])``), or the ``args=[...]`` the parse is given; a flag the user passes on
  the command line is named (:class:`~autofix.toolkit.sources.CommandLine`), never edited;
- the values an expression comes from (:meth:`Values.origins`: assignments, a helper's
  ``return``, parameters filled at their call sites, ``self.x``).

A setting's owner is an :class:`Owner` (:class:`CallOwner` for ``TrainingArguments(...)``
or any other call, :class:`ArgvOwner` for a parsed command line); :meth:`Owner.get` reads a
setting (:class:`Setting`: its value when it is a literal, where it is defined),
:meth:`Owner.set` and :meth:`Owner.remove` plan the edit on the recipe
(:class:`~autofix.toolkit.scope.PlannedEdits`). Every edit is planned on the original tree
and applied in one pass; list edits (flags removed or added to an argv list) are gathered
per list and applied once (:meth:`Values.flush`, run by ``PlannedEdits`` after
``prepare``). A recipe makes one :class:`Values` in its ``prepare`` (``Values(self)``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst
import libcst.matchers as m

from autofix.toolkit.edits import argument, code, keyword, remove_keyword
from autofix.toolkit.patterns import DICT, HF_ARGUMENT_PARSER
from autofix.toolkit.recipe import NotApplicable
from autofix.toolkit.scope import Program, append_kw, replace_with, string_value
from autofix.toolkit.sources import CommandLine, Literal, literal_source

if TYPE_CHECKING:
    from autofix.toolkit.scope import PlannedEdits


class Unknown:
    """The value of a setting that is not a literal autofix can read."""

    def __repr__(self) -> str:
        return "UNKNOWN"


#: A setting whose value autofix cannot read (:attr:`Setting.value`).
UNKNOWN = Unknown()

#: The parse methods of ``HfArgumentParser`` that read the command line.
_ARGV_PARSES = ("parse_args_into_dataclasses", "parse_known_args", "parse_args")


def _integer_arithmetic(node: cst.CSTNode) -> int | None:
    """The value of integer literals joined by ``+ - * //`` (``16 * 8 * 8`` -> 1024);
    ``None`` for anything else (a name, a float, a division by 0)."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if not isinstance(node, cst.BinaryOperation):
        return None
    left, right = _integer_arithmetic(node.left), _integer_arithmetic(node.right)
    if left is None or right is None:
        return None
    op = node.operator
    if isinstance(op, cst.Add):
        return left + right
    if isinstance(op, cst.Subtract):
        return left - right
    if isinstance(op, cst.Multiply):
        return left * right
    if isinstance(op, cst.FloorDivide) and right:
        return left // right
    return None


def is_literal(node: cst.CSTNode) -> bool:
    """A literal a recipe may overwrite: a string, a number, ``True``/``False``/``None``,
    an enum member (``IntervalStrategy.EPOCH``), a negative number, or integers joined by
    ``+ - * //`` (``16 * 8 * 8``: overwritten whole by one number)."""
    if isinstance(node, (cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    if isinstance(node, cst.BinaryOperation):
        return _integer_arithmetic(node) is not None
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and \
        node.value.value[:1].isupper() and node.attr.value.isupper()


def literal_value(node: cst.CSTNode) -> object:
    """The value of a literal (:func:`is_literal`); an enum member as its lower-cased
    name (``IntervalStrategy.EPOCH`` -> ``"epoch"``, as transformers' enums read);
    :data:`UNKNOWN` for anything else."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.Float):
        return float(node.evaluated_value)
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.Attribute) and is_literal(node):
        return node.attr.value.lower()
    if isinstance(node, cst.BinaryOperation):
        found = _integer_arithmetic(node)
        return UNKNOWN if found is None else found
    if isinstance(node, cst.UnaryOperation):
        inner = literal_value(node.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) \
            else UNKNOWN
    return UNKNOWN


def literal_of(value: object, like: cst.CSTNode | None = None) -> cst.BaseExpression:
    """A Python value as a LibCST literal (``"no"``, ``False``, ``3``, ``1e-05``; an
    expression node is returned as it is); a string takes the quotes of ``like`` when that
    is a plain string literal."""
    if isinstance(value, bool) or value is None:
        return cst.Name(repr(value))
    if isinstance(value, int):
        return cst.Integer(str(value)) if value >= 0 else cst.UnaryOperation(
            cst.Minus(), cst.Integer(str(-value)))
    if isinstance(value, cst.BaseExpression):
        return value
    if isinstance(value, float):
        text = f"{value:.12g}"  # 0.03 / 10 is 0.003, not 0.0029999999999999996
        text = text if any(c in text for c in ".en") else f"{text}.0"
        return cst.Float(text) if value >= 0 else cst.UnaryOperation(
            cst.Minus(), cst.Float(text.lstrip("-")))
    text = str(value)
    quote = like.quote if isinstance(like, cst.SimpleString) and like.quote in ("'", '"') \
        and like.quote not in text and "\\" not in text else '"'
    return cst.SimpleString(quote + text.replace("\\", "\\\\").replace(quote, "\\" + quote)
                            + quote)


@dataclass(frozen=True)
class Setting:
    """One setting as the script defines it.

    ``name`` is the name it is given under (the first of the names asked for that is
    present, else the first); ``present`` whether the script gives it at all (absent: the
    library's default); ``value`` the Python value of its literal (:data:`UNKNOWN` when it
    is not one, with ``reason`` saying why); ``node`` the literal to rewrite and ``where``
    the place in words ("the default of --lr", "sys.argv at line 70"); ``line`` its line;
    ``command_line`` the flag when the user's command line sets it (no edit is right: the
    fix names the flag).
    """

    name: str
    present: bool
    value: object = UNKNOWN
    node: cst.BaseExpression | None = None
    where: str = ""
    line: int = 0
    reason: str = ""
    command_line: CommandLine | None = None

    @property
    def known(self) -> bool:
        """True when the value is read (absent settings count as known: the default)."""
        return not self.present or self.value is not UNKNOWN


class NotFollowed(NotApplicable):
    """A setting cannot be read or written where the script defines it (the reason is the
    message): a recipe that lets it through declines with that reason."""


class Owner:
    """What holds a group of settings: a call's arguments, or a parsed command line."""

    label = ""

    def get(self, *names: str, position: int | None = None) -> Setting:
        """The setting under the first of ``names`` the script gives (``position``: the
        call's positional slot for it, when it has one)."""
        raise NotImplementedError

    def value(self, *names: str, default: object = None, position: int | None = None
              ) -> object:
        """The setting's value, ``default`` when absent. Raises :class:`NotFollowed` when
        it is given but not a literal autofix can read (the reason says why)."""
        found = self.get(*names, position=position)
        if not found.present:
            return default
        if found.value is UNKNOWN:
            raise NotFollowed(found.reason or f"{found.name} is not a literal autofix can "
                                              "read")
        return found.value

    def set(self, name: str, value: object, why: str = "", *, aliases: Sequence[str] = (),
            position: int | None = None) -> bool:
        """Plan ``name=value`` where the script defines it (added when absent); ``False``
        when it holds ``value`` already. Raises :class:`NotFollowed`."""
        raise NotImplementedError

    def remove(self, name: str, why: str = "") -> bool:
        """Plan the removal of ``name`` (the library's default then holds); ``False`` when
        absent. Raises :class:`NotFollowed`."""
        raise NotImplementedError


class CallOwner(Owner):
    """The arguments of one call (``TrainingArguments(...)``, ``ModelCheckpoint(...)``):
    keywords, positional slots, and the entries of the dict given as ``**kwargs``."""

    def __init__(self, values: Values, call: cst.Call) -> None:
        self.values = values
        self.call = call
        self.label = f"{code(call.func)}(...) at line {values.program.line(call)}"
        self._holder: cst.Call | cst.Dict | None | str = "unread"

    # -- reading ---------------------------------------------------------------------

    def splatted(self) -> cst.Call | cst.Dict | None:
        """The ``dict(...)`` call or ``{...}`` literal given as ``call(**name)``, when it
        holds arguments of the call (``name`` assigned once and never changed afterwards,
        every key a literal string); ``None`` when the call has no ``**``. Raises
        :class:`NotFollowed` when the ``**`` cannot be followed to one such dict."""
        if self._holder == "unread":
            self._holder = self._find_splatted()
        assert not isinstance(self._holder, str)
        return self._holder

    def _find_splatted(self) -> cst.Call | cst.Dict | None:
        call, program = self.call, self.values.program
        stars = [a for a in call.args if a.star == "**"]
        if not stars:
            return None
        if len(stars) > 1:
            raise NotFollowed(f"{code(call.func)}(...) takes its arguments from several "
                              "** dicts")
        star = stars[0].value
        if isinstance(star, cst.Dict):
            return star if _string_keys(star) else self._opaque(star)
        if isinstance(star, cst.Call) and self.values.recipe.is_qualified(
                star.func, DICT) and all(a.keyword is not None
                                                          for a in star.args):
            return star
        if not isinstance(star, cst.Name):
            return self._opaque(star)
        name = star.value
        tree = program.tree
        if m.findall(tree, m.AugAssign(target=m.Name(name))) \
                or m.findall(tree, m.Subscript(value=m.Name(name))) \
                or m.findall(tree, m.Call(func=m.Attribute(
                    value=m.Name(name), attr=m.OneOf(*map(m.Name, _DICT_CHANGES))))):
            raise NotFollowed(f"the dict {name} given as **{name} is changed after it is "
                              "made")
        found = program.values(star)
        if len(found) == 1 and isinstance(found[0], cst.Dict) and _string_keys(found[0]):
            return found[0]
        if len(found) == 1 and isinstance(found[0], cst.Call) and \
                self.values.recipe.is_qualified(found[0].func, DICT) and \
                all(a.keyword is not None for a in found[0].args):
            return found[0]
        return self._opaque(star)

    def _opaque(self, star: cst.BaseExpression) -> cst.Call | cst.Dict | None:
        raise NotFollowed(f"{code(self.call.func)}(...) takes its arguments from "
                          f"**{code(star)[:40]}, which is not one dict literal")

    def expression(self, name: str, position: int | None = None
                   ) -> tuple[cst.BaseExpression | None, str]:
        """The expression the call gives ``name`` and where ("" at the call, "the dict
        given as **"), ``(None, "")`` when absent."""
        given = argument(self.call, name, position)
        if given is not None:
            return given, ""
        holder = self.splatted()
        if isinstance(holder, cst.Call):
            inner = keyword(holder, name)
            if inner is not None:
                return inner.value, "the dict given as **"
        elif isinstance(holder, cst.Dict):
            entry = _entry(holder, name)
            if entry is not None:
                return entry.value, "the dict given as **"
        return None, ""

    def get(self, *names: str, position: int | None = None) -> Setting:
        for i, name in enumerate(names):
            expr, holder = self.expression(name, position if i == 0 else None)
            if expr is None:
                continue
            return self.values.follow(expr, name, holder)
        return Setting(names[0], False, where=self.label)

    # -- writing ---------------------------------------------------------------------

    def set(self, name: str, value: object, why: str = "", *, aliases: Sequence[str] = (),
            position: int | None = None) -> bool:
        note = f" ({why})" if why else ""
        found = self.get(name, *aliases, position=position)
        if found.present:
            return self.values.rewrite(found, value, note)
        new = literal_of(value)
        holder = self.splatted()
        recipe = self.values.recipe
        if isinstance(holder, cst.Call):
            recipe.plan_edit(holder, append_kw(name, new),
                             f"{name}={code(new)} in the dict given as **{note}")
        elif isinstance(holder, cst.Dict):
            recipe.plan_edit(holder, _add_entry(name, new),
                             f"{name}={code(new)} in the dict given as **{note}")
        else:
            recipe.plan_edit(self.call, append_kw(name, new), f"{name}={code(new)}{note}")
        return True

    def remove(self, name: str, why: str = "") -> bool:
        note = f" ({why})" if why else ""
        recipe = self.values.recipe
        if keyword(self.call, name) is not None:
            recipe.plan_edit(self.call, _remove_kw(name), f"{name}= removed{note}")
            return True
        holder = self.splatted()
        if isinstance(holder, cst.Call) and keyword(holder, name) is not None:
            recipe.plan_edit(holder, _remove_kw(name),
                             f"{name} removed from the dict given as **{note}")
            return True
        if isinstance(holder, cst.Dict) and _entry(holder, name) is not None:
            recipe.plan_edit(holder, _remove_entry(name),
                             f"{name} removed from the dict given as **{note}")
            return True
        return False


@dataclass
class _ArgvList:
    """A list literal of command-line words the script parses (``sys.argv += [...]``)."""

    node: cst.List
    where: str
    removed: set[int] = field(default_factory=set)
    added: list[str] = field(default_factory=list)


class ArgvOwner(Owner):
    """The options a parsed command line sets: the flags of the ``sys.argv`` lists (or the
    ``args=[...]``) the script gives ``HfArgumentParser``, then the user's own command
    line (``rc.args``), which wins and is never edited."""

    def __init__(self, values: Values, parse: cst.Call, lists: list[_ArgvList],
                 guarded: bool) -> None:
        self.values = values
        self.parse = parse
        self.lists = lists
        #: the lists apply only when the script is run with no arguments of its own
        self.guarded = guarded
        line = values.program.line(parse)
        self.label = f"the command line parsed at line {line}"

    def active_lists(self) -> list[_ArgvList]:
        """The lists that apply to this run (a list guarded by ``len(sys.argv) == 1`` does
        not when the user passed arguments)."""
        return [] if self.guarded and self.values.args else self.lists

    @staticmethod
    def flags(name: str) -> tuple[str, ...]:
        """The spellings ``HfArgumentParser`` accepts for the field ``name``."""
        return tuple(dict.fromkeys((f"--{name}", f"--{name.replace('_', '-')}")))

    def _find(self, name: str) -> tuple[_ArgvList, int, cst.BaseExpression | None] | None:
        """The list, index of the flag, and the value node (``None``: a bare flag, or the
        ``--x=v`` element itself when the value is inline)."""
        spellings = self.flags(name)
        for argv in self.active_lists():
            elements = argv.node.elements
            for i, element in enumerate(elements):
                text = string_value(element.value)
                if text is None:
                    continue
                flag, eq, _ = text.partition("=")
                if flag not in spellings:
                    continue
                if eq:
                    return argv, i, element.value
                nxt = elements[i + 1].value if i + 1 < len(elements) else None
                nxt_text = string_value(nxt) if nxt is not None else None
                if nxt is None or (nxt_text is not None and nxt_text.startswith("--")):
                    return argv, i, None
                return argv, i, nxt
        return None

    def get(self, *names: str, position: int | None = None) -> Setting:
        for name in names:
            given = _on_command_line(self.flags(name), self.values.args)
            if given is not None:
                return Setting(name, True, UNKNOWN, where=f"the command line ({given.flag})",
                               reason=f"{name} comes from the command line ({given.flag} "
                                      f"{given.value})", command_line=given)
            found = self._find(name)
            if found is None:
                continue
            argv, i, node = found
            line = self.values.program.line(argv.node)
            if node is None:
                return Setting(name, True, True, argv.node.elements[i].value,
                               f"{argv.where} at line {line}", line)
            text = string_value(node)
            if text is None:
                return Setting(name, True, UNKNOWN, node, f"{argv.where} at line {line}", line,
                               reason=f"the value of --{name} in {argv.where} is "
                                      f"{code(node)[:40]}, not a literal")
            if text.startswith("--"):  # --x=v
                text = text.partition("=")[2]
            return Setting(name, True, _argv_value(text), node, f"{argv.where} at line {line}",
                           line)
        return Setting(names[0], False, where=self.label)

    def _the_list(self, name: str) -> _ArgvList:
        if self.values.args and (self.guarded or not self.lists):
            raise NotFollowed(f"{name} comes from the command line: run the script with "
                              f"--{name} set")
        if len(self.lists) != 1:
            raise NotFollowed(f"{len(self.lists) or 'no'} lists of command-line defaults in "
                              f"the script: pass --{name} on the command line")
        return self.lists[0]

    def set(self, name: str, value: object, why: str = "", *, aliases: Sequence[str] = (),
            position: int | None = None) -> bool:
        note = f" ({why})" if why else ""
        found = self.get(name, *aliases)
        if found.command_line is not None:
            raise NotFollowed(f"{found.name} comes from the command line "
                              f"({found.command_line.flag} {found.command_line.value}): "
                              f"run the script with {found.command_line.flag} "
                              f"{_argv_text(value)}")
        recipe = self.values.recipe
        text = _argv_text(value)
        if found.present:
            if found.value == value or (found.value is True and value is True):
                return False
            located = self._find(found.name)
            assert located is not None
            argv, i, node = located
            if node is None:  # a bare flag (True)
                if value is False:
                    argv.removed.add(i)
                    recipe.changed(argv.node, f"--{found.name} removed from {argv.where}{note}")
                    return True
                argv.added += [f"--{found.name}", text]
                argv.removed.add(i)
                recipe.changed(argv.node, f"--{found.name} {text} in {argv.where}{note}")
                return True
            old = string_value(node) or ""
            new = f"{old.partition('=')[0]}={text}" if old.startswith("--") else text
            recipe.plan_edit(node, replace_with(literal_of(new, node)),
                             f"--{found.name} {text} in {argv.where} (was {old!r}){note}")
            return True
        argv = self._the_list(name)
        argv.added += [f"--{name}"] if value is True else [f"--{name}", text]
        recipe.changed(argv.node, f"--{name} {text} added to {argv.where}{note}")
        return True

    def remove(self, name: str, why: str = "") -> bool:
        note = f" ({why})" if why else ""
        found = self.get(name)
        if not found.present:
            return False
        if found.command_line is not None:
            raise NotFollowed(f"{name} comes from the command line "
                              f"({found.command_line.flag}): run the script without it")
        located = self._find(name)
        assert located is not None
        argv, i, node = located
        argv.removed.add(i)
        if node is not None and not (string_value(node) or "").startswith("--"):
            argv.removed.add(i + 1)
        self.values.recipe.changed(argv.node, f"--{name} removed from {argv.where}{note}")
        return True


class Values:
    """The value-source service of one recipe run (see the module docstring)."""

    def __init__(self, recipe: PlannedEdits) -> None:
        self.recipe = recipe
        self.program: Program = recipe.program
        self.args: tuple[str, ...] = tuple(recipe.rc.args)
        self._argv: list[_ArgvList] | None = None
        recipe.finishers.append(self.flush)

    # -- following values --------------------------------------------------------------

    def origins(self, expr: cst.BaseExpression) -> list[cst.CSTNode]:
        """The expressions ``expr``'s value may come from (:meth:`Program.values`)."""
        return self.program.values(expr)

    def bound(self, target: cst.CSTNode) -> list[cst.CSTNode]:
        """The expressions the name bound at ``target`` (a binding :meth:`Program.resolve`
        gives: an assignment's target, a parameter) may hold
        (:meth:`Program.target_values`); empty when the module shows none."""
        return self.program.target_values(target)

    def assignments(self, name: str, at: cst.CSTNode
                    ) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
        """``(target, value)`` of each plain ``name = value`` that binds the ``name`` read
        at ``at`` (:meth:`Program.assigned_values`): where the script defines the variable,
        for an edit of the value or a statement next to it."""
        return self.program.assigned_values(name, at)

    def literal(self, expr: cst.BaseExpression, what: str = "the value",
                accept: Callable[[cst.BaseExpression], bool] = is_literal
                ) -> Literal | CommandLine | str:
        """Where ``expr``'s literal is set (:func:`autofix.toolkit.sources.literal_source`,
        with this run's command line)."""
        return literal_source(self.program, expr, self.args, what, accept)

    def follow(self, expr: cst.BaseExpression, name: str, holder: str = "") -> Setting:
        """The :class:`Setting` ``name`` given as ``expr``, followed to its literal."""
        found = self.literal(expr, name)
        if isinstance(found, CommandLine):
            return Setting(name, True, UNKNOWN, where=f"the command line ({found.flag})",
                           reason=f"{name} comes from the command line ({found.flag} "
                                  f"{found.value})", command_line=found)
        if isinstance(found, str):
            return Setting(name, True, UNKNOWN, expr, holder or name,
                           self.program.line(expr), reason=found)
        where = found.where or holder or name
        return Setting(name, True, literal_value(found.node), found.node, where,
                       self.program.line(found.node))

    def rewrite(self, found: Setting, value: object, note: str = "") -> bool:
        """Plan ``found``'s literal rewritten to ``value`` where it is defined; ``False``
        when it holds ``value`` already. Raises :class:`NotFollowed` when it is not a
        literal (or comes from the command line)."""
        if found.command_line is not None:
            raise NotFollowed(f"{found.name} comes from the command line "
                              f"({found.command_line.flag} {found.command_line.value}): run "
                              f"the script with another {found.command_line.flag}")
        if found.value is UNKNOWN or found.node is None:
            raise NotFollowed(found.reason or f"{found.name} is not a literal autofix can "
                                              "rewrite")
        if found.value == value and type(found.value) is type(value):
            return False
        new = literal_of(value, found.node)
        at = "" if found.where == found.name else f" at {found.where}, line {found.line}"
        self.recipe.plan_edit(found.node, replace_with(new), f"{found.name}={code(new)}{at}"
                                                              f"{note}")
        return True

    # -- the owners of settings --------------------------------------------------------

    def calls(self, pattern: str) -> list[cst.Call]:
        """The calls of the module whose callee's qualified name matches ``pattern``."""
        return [c for c in self.program.calls if self.recipe.is_qualified(c.func, pattern)]

    def owners_of(self, expr: cst.BaseExpression, pattern: str) -> list[Owner]:
        """The owners of the settings of the object ``expr`` holds, when it is made by a
        call matching ``pattern`` (:class:`CallOwner`) or parsed by ``HfArgumentParser``
        into such a class (:class:`ArgvOwner`)."""
        found: list[Owner] = []
        for value in self.origins(expr):
            if isinstance(value, cst.Call) and self.recipe.is_qualified(value.func, pattern):
                found.append(CallOwner(self, value))
            elif isinstance(value, cst.Call) and self._is_class_call(value, pattern):
                found.append(CallOwner(self, value))
        for parse in self._parsed_into(expr, pattern):
            found.append(self.argv_owner(parse))
        return found

    def owners(self, pattern: str) -> list[Owner]:
        """Every owner of the module's objects of ``pattern``: its calls, and the
        ``HfArgumentParser`` parses into that class."""
        found: list[Owner] = [CallOwner(self, c) for c in self.calls(pattern)]
        found += [self.argv_owner(p) for p in self._parses_of(pattern)]
        return found

    def argv_owner(self, parse: cst.Call) -> ArgvOwner:
        """The :class:`ArgvOwner` of an ``HfArgumentParser`` parse call."""
        given = keyword(parse, "args")
        positional = [a for a in parse.args if a.keyword is None]
        if given is None and positional and parse.func.attr.value in _ARGV_PARSES \
                if isinstance(parse.func, cst.Attribute) else False:
            given = positional[0]
        if given is not None:
            lists = [_ArgvList(v, "the args= list") for v in self.origins(given.value)
                     if isinstance(v, cst.List)]
            return ArgvOwner(self, parse, lists, guarded=False)
        lists, guarded = self._sys_argv_lists()
        return ArgvOwner(self, parse, lists, guarded)

    def _is_class_call(self, call: cst.Call, pattern: str) -> bool:
        """``call`` instantiates a module class derived (through module classes) from a
        class matching ``pattern``."""
        cls = self.program.class_called(call)
        seen: set[str] = set()
        while cls is not None and cls.name.value not in seen:
            seen.add(cls.name.value)
            if any(self.recipe.is_qualified(b.value, pattern) for b in cls.bases):
                return True
            bases = self.program.module_bases(cls)
            cls = bases[0] if bases else None
        return False

    def _parser_classes(self, parse: cst.Call) -> list[cst.BaseExpression]:
        """The dataclasses an ``HfArgumentParser`` parse fills, in order."""
        func = parse.func
        if not isinstance(func, cst.Attribute):
            return []
        for made in self.origins(func.value):
            if isinstance(made, cst.Call) and self.recipe.is_qualified(made.func,
                                                                        HF_ARGUMENT_PARSER):
                first = made.args[0].value if made.args else None
                if first is None:
                    return []
                if isinstance(first, (cst.Tuple, cst.List)):
                    return [e.value for e in first.elements]
                return [first]
        return []

    def _parses_of(self, pattern: str) -> list[cst.Call]:
        """The ``HfArgumentParser`` parses of the command line that fill a class matching
        ``pattern``."""
        return [c for c in self.program.calls if isinstance(c.func, cst.Attribute)
                and c.func.attr.value in _ARGV_PARSES
                and any(self.recipe.is_qualified(k, pattern) for k in self._parser_classes(c))]

    def _parsed_into(self, expr: cst.BaseExpression, pattern: str) -> list[cst.Call]:
        """The parses whose element of ``pattern``'s class ``expr`` is: ``a, b, args =
        parser.parse_args_into_dataclasses()`` (or the single result of a one-class
        parser)."""
        out: list[cst.Call] = []
        if not isinstance(expr, cst.Name):
            return out
        for target in self.program.resolve(expr.value, expr):
            parse, index = self._unpacked_from(target)
            if parse is None:
                continue
            classes = self._parser_classes(parse)
            if index is None and len(classes) == 1:
                index = 0
            if index is not None and index < len(classes) and \
                    self.recipe.is_qualified(classes[index], pattern):
                out.append(parse)
        return out

    def _unpacked_from(self, target: cst.CSTNode) -> tuple[cst.Call | None, int | None]:
        program = self.program
        parent = program.parent(target)
        if isinstance(parent, cst.Element):
            tup = program.parent(parent)
            holder = program.parent(tup) if tup is not None else None
            assign = program.parent(holder) if isinstance(holder, cst.AssignTarget) else None
            if isinstance(tup, (cst.Tuple, cst.List)) and isinstance(assign, cst.Assign) and \
                    isinstance(assign.value, cst.Call) and \
                    isinstance(assign.value.func, cst.Attribute) and \
                    assign.value.func.attr.value in _ARGV_PARSES:
                return assign.value, list(tup.elements).index(parent)
        if isinstance(parent, cst.AssignTarget):
            assign = program.parent(parent)
            value = assign.value if isinstance(assign, cst.Assign) else None
            if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Call) and \
                    len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index) and \
                    isinstance(value.slice[0].slice.value, cst.Integer):
                made, index = value.value, int(value.slice[0].slice.value.evaluated_value)
                if isinstance(made.func, cst.Attribute) and made.func.attr.value in \
                        _ARGV_PARSES:
                    return made, index
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                    value.func.attr.value in _ARGV_PARSES:
                return value, None
        return None, None

    def _sys_argv_lists(self) -> tuple[list[_ArgvList], bool]:
        """The list literals the module puts into ``sys.argv``, and whether each sits under
        an ``if`` on ``len(sys.argv)`` (defaults for a run with no arguments)."""
        if self._argv is not None:
            return self._argv, any(self._guarded(a.node) for a in self._argv)
        tree = self.program.tree
        lists: list[_ArgvList] = []
        for node in m.findall(tree, m.AugAssign(target=_SYS_ARGV, operator=m.AddAssign())):
            assert isinstance(node, cst.AugAssign)
            lists += self._lists_in(node.value, "the sys.argv defaults")
        for node in m.findall(tree, m.Assign(targets=[m.AssignTarget(
                m.OneOf(_SYS_ARGV, m.Subscript(value=_SYS_ARGV)))])):
            assert isinstance(node, cst.Assign)
            lists += self._lists_in(node.value, "the sys.argv list")
        for node in m.findall(tree, m.Call(func=m.Attribute(value=_SYS_ARGV,
                                                            attr=m.Name("extend")))):
            assert isinstance(node, cst.Call)
            if node.args:
                lists += self._lists_in(node.args[0].value, "the sys.argv defaults")
        self._argv = lists
        return lists, any(self._guarded(a.node) for a in lists)

    def _lists_in(self, expr: cst.BaseExpression, where: str) -> list[_ArgvList]:
        """The list literals ``expr`` is made of (``[...]``, ``sys.argv[:1] + [...]``, a
        name bound to a list literal)."""
        if isinstance(expr, cst.BinaryOperation):
            return self._lists_in(expr.left, where) + self._lists_in(expr.right, where)
        if isinstance(expr, cst.List):
            return [_ArgvList(expr, where)] if any(
                (string_value(e.value) or "").startswith("--") for e in expr.elements) else []
        if isinstance(expr, cst.Name):
            return [a for v in self.origins(expr) if isinstance(v, cst.BaseExpression)
                    and v is not expr for a in self._lists_in(v, where)]
        return []

    def _guarded(self, node: cst.CSTNode) -> bool:
        for anc in self.program.ancestors(node):
            if isinstance(anc, cst.If) and "sys.argv" in code(anc.test) and \
                    "len" in code(anc.test):
                return True
        return False

    # -- applying list edits -----------------------------------------------------------

    def flush(self) -> None:
        """Plan the gathered edits of the argv lists (flags removed and added), one edit
        per list."""
        for argv in self._argv or ():
            if argv.removed or argv.added:
                self.recipe.plan[argv.node] = _list_edit(argv.removed, argv.added)


_SYS_ARGV = m.Attribute(value=m.Name("sys"), attr=m.Name("argv"))
#: The methods that change a dict in place.
_DICT_CHANGES = ("update", "pop", "popitem", "setdefault", "clear")


def _string_keys(node: cst.Dict) -> bool:
    return all(isinstance(e, cst.DictElement) and string_value(e.key) is not None
               for e in node.elements)


def _entry(node: cst.Dict, name: str) -> cst.DictElement | None:
    return next((e for e in node.elements if isinstance(e, cst.DictElement)
                 and string_value(e.key) == name), None)


def _on_command_line(flags: Sequence[str], args: Sequence[str]) -> CommandLine | None:
    for i, arg in enumerate(args):
        flag, eq, inline = arg.partition("=")
        if flag in flags:
            value = inline if eq else (args[i + 1] if i + 1 < len(args)
                                       and not args[i + 1].startswith("--") else "True")
            return CommandLine(flag, value)
    return None


def _argv_value(text: str) -> object:
    """A command-line word as ``HfArgumentParser`` reads it for a setting: a bool, an int,
    a float, else the string."""
    if text in ("True", "False", "true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def _argv_text(value: object) -> str:
    return str(value) if not isinstance(value, float) else f"{value:g}"


def _remove_kw(name: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def edit(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        return remove_keyword(node, name)
    return edit


def _add_entry(name: str, value: cst.BaseExpression) -> Callable[[cst.CSTNode], cst.CSTNode]:
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


def _remove_entry(name: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def edit(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Dict)
        elements = list(node.elements)
        index = next(i for i, e in enumerate(elements) if isinstance(e, cst.DictElement)
                     and string_value(e.key) == name)
        last = index == len(elements) - 1
        removed = elements.pop(index)
        if last and elements:
            elements[-1] = elements[-1].with_changes(comma=removed.comma)
        return node.with_changes(elements=elements)
    return edit


def _breaks(comma: cst.Comma | cst.MaybeSentinel) -> bool:
    """The comma is followed by a line break."""
    return isinstance(comma, cst.Comma) and \
        isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)


def _list_edit(removed: set[int], added: list[str]) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """Edit: a list literal without the elements at ``removed`` and with string elements
    ``added`` at its end, its layout (commas, line breaks) kept."""
    def edit(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.List)
        old = list(node.elements)
        like = next((e.value for e in old if isinstance(e.value, cst.SimpleString)), None)
        if not old:
            return node
        kept: list[cst.BaseElement] = []
        for i, element in enumerate(old):
            if i not in removed:
                kept.append(element)
            elif kept and _breaks(element.comma) and not _breaks(kept[-1].comma):
                kept[-1] = kept[-1].with_changes(comma=element.comma)  # keep the line break
        trailing = old[-1].comma
        sep = next((e.comma for e in old[:-1] if isinstance(e.comma, cst.Comma)),
                   cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        # every kept element but the new last one is followed by a plain separator
        out = [e.with_changes(comma=e.comma if isinstance(e.comma, cst.Comma) else sep)
               for e in kept]
        out += [cst.Element(literal_of(text, like), comma=sep) for text in added]
        if out:
            out[-1] = out[-1].with_changes(comma=trailing)
        return node.with_changes(elements=out)
    return edit


__all__ = ["UNKNOWN", "ArgvOwner", "CallOwner", "NotFollowed", "Owner", "Setting", "Values",
           "is_literal", "literal_of", "literal_value"]
