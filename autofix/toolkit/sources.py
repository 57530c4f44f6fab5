"""Where a setting's value is defined: a value used at a call followed back to the literal
that sets it, so a recipe fixes it there and not where it is used.

:func:`literal_source` follows an expression (``lr=args.learning_rate``,
``num_labels=cfg.num_labels``, ``lr=LR``) through what the module shows: a name's single
assignment, a module constant, a function parameter (the argument at its call sites, or
its default), ``self.x``, a class or dataclass field default (also ``field(default=...)``),
a dict literal's entry, and an ``argparse`` option's ``default=``. It returns
:class:`Literal` (the literal and where it is, for the commit message; which literals count
is the caller's choice: numbers by default, ``accept=`` for others),
:class:`CommandLine` when the script's own command line sets the option (no source edit can
be right: the recipe names the flag instead), or a reason string when the value cannot be
followed to one literal (a computed value is reported, never overwritten).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from autofix.toolkit.edits import code, keyword
from autofix.toolkit.scope import Program, option_dest, string_value

#: How many steps :func:`literal_source` follows before it gives up.
MAX_DEPTH = 8


@dataclass(frozen=True)
class Literal:
    """The literal a value comes from and where it is (``"the default of
    --learning_rate"``; ``""`` when it is the expression itself)."""

    node: cst.BaseExpression
    where: str


def is_number(node: cst.BaseExpression) -> bool:
    """An integer or float literal (the default literal :func:`literal_source` accepts)."""
    return isinstance(node, (cst.Integer, cst.Float))


@dataclass(frozen=True)
class CommandLine:
    """The value is set by the script's command line: ``flag`` given ``value``."""

    flag: str
    value: str


Source = Literal | CommandLine | str


def option_on_command_line(flags: list[str], args: tuple[str, ...]) -> CommandLine | None:
    """The first of ``flags`` given in ``args`` (``--x 1`` or ``--x=1``), with its value."""
    for i, arg in enumerate(args):
        flag, _, inline = arg.partition("=")
        if flag in flags:
            value = inline or (args[i + 1] if i + 1 < len(args) else "")
            return CommandLine(flag, value)
    return None


class _Tracer:
    def __init__(self, program: Program, args: tuple[str, ...], what: str,
                 accept: Callable[[cst.BaseExpression], bool]) -> None:
        self.program = program
        self.args = args
        self.what = what
        self.accept = accept

    def source(self, expr: cst.BaseExpression, depth: int) -> Source:
        program = self.program
        text = code(expr)
        if depth > MAX_DEPTH:
            return f"{self.what}={text} could not be followed to a literal"
        if self.accept(expr):
            return Literal(expr, "")
        if isinstance(expr, cst.Name):
            targets = program.resolve(expr.value, expr)
            if len(targets) != 1:
                return (f"{text} is assigned in {len(targets)} places" if targets else
                        f"{text} is not defined where {self.what} is set")
            return self._from_target(targets[0], text, depth)
        if isinstance(expr, cst.Attribute):
            attr = expr.attr.value
            if m.matches(expr.value, m.Name("self")):
                values = program.self_assignments(expr, attr)
                if len(values) != 1:
                    return f"self.{attr} is assigned in {len(values)} places"
                return self.source(values[0], depth + 1)
            return self._one([self._attribute(v, attr, depth) for v in
                              self._owners(expr.value)], text)
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and \
                isinstance(expr.slice[0].slice, cst.Index):
            key = string_value(expr.slice[0].slice.value)
            if key is not None:
                return self._one([self._entry(v, key, depth) for v in
                                  program.values(expr.value)], text)
        return f"{self.what}={text} is not a value autofix can trace to a literal"

    def _one(self, found: list[Source], text: str) -> Source:
        lines = [f for f in found if isinstance(f, CommandLine)]
        if lines:
            return lines[0]
        good = list({id(f.node): f for f in found if isinstance(f, Literal)}.values())
        if len(good) == 1:
            return good[0]
        if len(good) > 1:
            return f"{self.what}={text} comes from {len(good)} places"
        return next((f for f in found if isinstance(f, str)), f"{text} could not be followed")

    def _owners(self, expr: cst.BaseExpression) -> list[cst.CSTNode]:
        if isinstance(expr, cst.Name):
            classes = [t for t in self.program.resolve(expr.value, expr)
                       if isinstance(t, cst.ClassDef)]
            if classes:
                return list(classes)
        return self.program.values(expr)

    def _from_target(self, target: cst.CSTNode, text: str, depth: int) -> Source:
        program = self.program
        if isinstance(target, cst.Param):
            func = program.param_function(target)
            name = target.name.value
            given = [program.bound(func, s, name) for s in program.call_sites(func)] \
                if func is not None else []
            args = [g for g in given if g is not None]
            if args:
                return self._one([self.source(a, depth + 1) for a in args], text)
            if target.default is not None:
                found = self.source(target.default, depth + 1)
                if isinstance(found, Literal) and found.node is target.default:
                    fname = func.name.value if func is not None else "lambda"
                    return Literal(found.node, f"the default of parameter {name} of {fname}()")
                return found
            return f"{text} is a parameter that no call site fills"
        parent = program.parent(target)
        value = None
        if isinstance(parent, cst.AssignTarget):
            assign = program.parent(parent)
            value = assign.value if isinstance(assign, cst.Assign) else None
        elif isinstance(parent, cst.AnnAssign):
            value = parent.value
        if value is None:
            return f"{text} is not assigned a value autofix can follow"
        found = self.source(value, depth + 1)
        if isinstance(found, Literal) and found.node is value:
            return Literal(found.node, text)
        return found

    def _attribute(self, owner: cst.CSTNode, attr: str, depth: int) -> Source:
        program = self.program
        if isinstance(owner, cst.Call):
            cls = program.class_called(owner)
            if cls is not None:
                given = keyword(owner, attr)
                if given is not None:
                    return self.source(given.value, depth + 1)
                return self._field(cls, attr, depth)
            if isinstance(owner.func, cst.Attribute) and owner.func.attr.value in (
                    "parse_args", "parse_known_args"):
                return self._option(attr, depth)
        if isinstance(owner, cst.ClassDef):
            return self._field(owner, attr, depth)
        return (f"{self.what} comes from .{attr} of {code(owner)[:60]}, which autofix cannot "
                "follow")

    def _field(self, cls: cst.ClassDef, attr: str, depth: int) -> Source:
        for stmt in cls.body.body:
            for small in getattr(stmt, "body", ()):
                value = None
                if isinstance(small, cst.AnnAssign) and m.matches(small.target, m.Name(attr)):
                    value = small.value
                elif isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        m.matches(small.targets[0].target, m.Name(attr)):
                    value = small.value
                else:
                    continue
                default = keyword(value, "default") if isinstance(value, cst.Call) else None
                if default is not None:
                    value = default.value  # dataclasses.field(default=...)
                if value is None:
                    return f"{cls.name.value}.{attr} has no default"
                found = self.source(value, depth + 1)
                if isinstance(found, Literal) and found.node is value:
                    return Literal(found.node, f"the default of {cls.name.value}.{attr}")
                return found
        for base in cls.bases:
            if isinstance(base.value, cst.Name) and base.value.value in self.program.classes:
                return self._field(self.program.classes[base.value.value], attr, depth + 1)
        return f"class {cls.name.value} has no field {attr}"

    def _option(self, attr: str, depth: int) -> Source:
        for call in self.program.calls:
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value ==
                    "add_argument" and option_dest(call) == attr):
                continue
            flags = [t for t in (string_value(a.value) for a in call.args if a.keyword is None)
                     if t and t.startswith("-")]
            given = option_on_command_line(flags, self.args)
            if given is not None:
                return given
            default = keyword(call, "default")
            if default is None:
                return f"{flags[0] if flags else attr} has no default: pass it on the command line"
            found = self.source(default.value, depth + 1)
            if isinstance(found, Literal) and found.node is default.value:
                return Literal(found.node, f"the default of {flags[0] if flags else attr}")
            return found
        return f"no parser.add_argument(...) defines {attr}"

    def _entry(self, owner: cst.CSTNode, key: str, depth: int) -> Source:
        if isinstance(owner, cst.Dict):
            for element in owner.elements:
                if isinstance(element, cst.DictElement) and string_value(element.key) == key:
                    found = self.source(element.value, depth + 1)
                    if isinstance(found, Literal) and found.node is element.value:
                        return Literal(found.node, f"the {key!r} entry of the config dict")
                    return found
        return f"no dict literal with a {key!r} entry found for {self.what}"


def literal_source(program: Program, expr: cst.BaseExpression, args: tuple[str, ...] = (),
                   what: str = "the value",
                   accept: Callable[[cst.BaseExpression], bool] = is_number) -> Source:
    """Where ``expr``'s value is set (see the module docstring). ``args`` is the script's
    command line (an option given there wins over its default); ``what`` names the setting
    in the reasons (``"lr"``); ``accept`` says which nodes are the literals to find
    (:func:`is_number` by default)."""
    return _Tracer(program, args, what, accept).source(expr, 0)


def name_source(program: Program, name: str, at: cst.CSTNode, args: tuple[str, ...] = (),
                what: str = "the value",
                accept: Callable[[cst.BaseExpression], bool] = is_number) -> Source:
    """:func:`literal_source` of the variable ``name`` as it reads at the node ``at`` (a
    name autofix is about to write there, not yet a node of the module)."""
    targets = program.resolve(name, at)
    if len(targets) != 1:
        return f"{name} is assigned in {len(targets)} places"
    return _Tracer(program, args, what, accept)._from_target(targets[0], name, 0)
