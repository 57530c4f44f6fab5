"""Mutation operators for ``bench_mutations.py``: the edits people make to a healthy training
script, as LibCST transforms anchored by the code they change.

Each operator is a frozen dataclass with ``apply(module) -> module``; an anchor is the code
of an expression or a statement as the script writes it, compared with all whitespace
removed (so a call wrapped over two lines matches its one-line spelling). A statement
anchor matches a statement whose code starts with it (``"raw = load_dataset("``), a
compound statement by its header (``"for batch in loader"``). An anchor must match exactly
once unless the operator names which match (``nth``); otherwise :class:`AnchorError` is
raised, so a healthy script edited since its mutations were declared fails the generator's
check instead of seeding another fault.

The operators: :class:`Replace` (an expression rewritten: a literal, a dtype, an axis, a
method call dropped or added), :class:`SetArg` (a keyword argument set, added or dropped),
:class:`DropStatement`, :class:`ReplaceStatement`, :class:`MoveStatement` (a call moved to
another place or loop level), :class:`InsertAfter`, :class:`WrapWith` (statements put under
a ``with`` block), :class:`Decorate` (a decorator added to a function) and :class:`Seq`
(several in order).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

_SPACE = re.compile(r"\s+")


class AnchorError(ValueError):
    """An operator's anchor matched no node, or several when one was required."""


def norm(code: str) -> str:
    """``code`` with every whitespace character removed: the form anchors are compared in."""
    return _SPACE.sub("", code)


def _statement_matches(module: cst.Module, node: cst.CSTNode, anchor: str) -> bool:
    if isinstance(node, cst.SimpleStatementLine):
        return norm(module.code_for_node(node)).startswith(norm(anchor))
    if isinstance(node, cst.BaseCompoundStatement) and hasattr(node, "body"):
        # its header alone: the body (and any else) replaced by "pass" before codegen
        changes: dict[str, object] = {"body": cst.IndentedBlock(body=[_pass_line()]),
                                      "leading_lines": []}
        if hasattr(node, "decorators"):
            changes["decorators"] = []
        if getattr(node, "orelse", None) is not None:
            changes["orelse"] = None
        head = module.code_for_node(node.with_changes(**changes)).split("\n")[0]
        return norm(head).startswith(norm(anchor))
    return False


def _pick(count: int, nth: int | None, what: str) -> int:
    """The index of the match to edit: ``nth``, or 0 when exactly one matched."""
    if count == 0:
        raise AnchorError(f"no match for {what!r}")
    if nth is None:
        if count > 1:
            raise AnchorError(f"{count} matches for {what!r}: name one with nth")
        return 0
    if nth >= count:
        raise AnchorError(f"{what!r} matched {count} times, not {nth + 1}")
    return nth


class _Collect(cst.CSTVisitor):
    """The nodes for which ``match(node)`` holds, in source order (outermost first)."""

    def __init__(self, match: Callable[[cst.CSTNode], bool]) -> None:
        super().__init__()
        self.match = match
        self.found: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.match(node):
            self.found.append(node)
        return True


def _collect(module: cst.Module, match: Callable[[cst.CSTNode], bool]) -> list[cst.CSTNode]:
    collector = _Collect(match)
    module.visit(collector)
    return collector.found


def _replace(module: cst.Module, found: list[cst.CSTNode],
             make: Callable[[cst.CSTNode], cst.CSTNode], nth: int | None, what: str
             ) -> cst.Module:
    """``module`` with the ``nth`` of ``found`` (the only one when ``nth`` is None) replaced
    by ``make(node)``."""
    node = found[_pick(len(found), nth, what)]
    replaced = module.deep_replace(node, make(node))
    assert isinstance(replaced, cst.Module)
    return replaced


@dataclass(frozen=True)
class Replace:
    """The expression whose code is ``old`` becomes ``new`` (parsed as an expression)."""

    old: str
    new: str
    nth: int | None = None

    def apply(self, module: cst.Module) -> cst.Module:
        new = cst.parse_expression(self.new)
        shape = type(cst.parse_expression(self.old))  # only nodes of its type are compared

        def match(node: cst.CSTNode) -> bool:
            return type(node) is shape and \
                norm(module.code_for_node(node)) == norm(self.old)

        def make(node: cst.CSTNode) -> cst.CSTNode:
            if isinstance(node, cst.BaseExpression) and (node.lpar or node.rpar):
                return new.with_changes(lpar=node.lpar, rpar=node.rpar)
            return new

        return _replace(module, _collect(module, match), make, self.nth, self.old)


def _callee_name(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return ""


@dataclass(frozen=True)
class SetArg:
    """In the call to ``callee`` (its last name: ``Adam`` for ``torch.optim.Adam``) whose
    code contains ``where``, the keyword ``keyword`` set to ``value`` (added when absent),
    or dropped when ``value`` is None."""

    callee: str
    keyword: str
    value: str | None
    where: str = ""
    nth: int | None = None

    def apply(self, module: cst.Module) -> cst.Module:
        def call(node: cst.CSTNode) -> bool:
            return isinstance(node, cst.Call) and _callee_name(node) == self.callee and \
                norm(self.where) in norm(module.code_for_node(node))

        def has(node: cst.CSTNode) -> bool:
            return isinstance(node, cst.Call) and any(
                a.keyword and a.keyword.value == self.keyword for a in node.args)

        calls = _collect(module, call)
        # the calls that have the keyword, if any does; else (to add it) every such call
        with_keyword = [c for c in calls if has(c)]
        if with_keyword or self.value is None:
            calls = with_keyword
        return _replace(module, calls, self._set, self.nth,
                        f"{self.callee}({self.keyword}=...) {self.where}".strip())

    def _set(self, node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        args = list(node.args)
        at = next((i for i, a in enumerate(args)
                   if a.keyword and a.keyword.value == self.keyword), None)
        if self.value is None:
            if at is None:
                raise AnchorError(f"{self.callee} has no {self.keyword}= to drop")
            dropped = args.pop(at)
            if at == len(args) and args:  # it was the last: its comma (or none) moves back
                args[-1] = args[-1].with_changes(comma=dropped.comma)
            return node.with_changes(args=args)
        value = cst.parse_expression(self.value)
        if at is not None:
            args[at] = args[at].with_changes(value=value)
            return node.with_changes(args=args)
        new = cst.Arg(value=value, keyword=cst.Name(self.keyword),
                      equal=cst.AssignEqual(cst.SimpleWhitespace(""),
                                            cst.SimpleWhitespace("")))
        if args:
            separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            if isinstance(args[-1].comma, cst.Comma):  # a trailing comma stays last
                new = new.with_changes(comma=args[-1].comma)
                if len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
                    separator = args[-2].comma
            args[-1] = args[-1].with_changes(comma=separator)
        return node.with_changes(args=[*args, new])


def _statements(module: cst.Module, anchor: str, nth: int | None) -> cst.CSTNode:
    """The statement ``anchor`` names (see the module docstring)."""
    found: list[cst.CSTNode] = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, cst.SimpleStatementLine | cst.BaseCompoundStatement) and \
                    _statement_matches(module, node, anchor):
                found.append(node)
            return True

    module.visit(Finder())
    return found[_pick(len(found), nth, anchor)]


class _BodyEdit(cst.CSTTransformer):
    """Rewrites the statement list of every block: ``edit(statements)`` returns the new
    list (or None to leave the block)."""

    def __init__(self, edit: Callable[[list[cst.BaseStatement]],
                                      list[cst.BaseStatement] | None]) -> None:
        super().__init__()
        self.edit = edit

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        body = self.edit(list(updated_node.body))
        return updated_node if body is None else updated_node.with_changes(body=body)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = self.edit(list(updated_node.body))
        return updated_node if body is None else updated_node.with_changes(body=body)


def _pass_line() -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Pass()])


def _without(module: cst.Module, target: cst.CSTNode) -> cst.Module:
    def edit(body: list[cst.BaseStatement]) -> list[cst.BaseStatement] | None:
        if not any(s.deep_equals(target) for s in body):
            return None
        kept = [s for s in body if not s.deep_equals(target)]
        return kept or [_pass_line()]

    return module.visit(_BodyEdit(edit))


def _with_after(module: cst.Module, anchor: cst.CSTNode, new: Sequence[cst.BaseStatement],
                before: bool = False) -> cst.Module:
    done = False

    def edit(body: list[cst.BaseStatement]) -> list[cst.BaseStatement] | None:
        nonlocal done
        for i, statement in enumerate(body):
            if not done and statement.deep_equals(anchor):
                done = True
                at = i if before else i + 1
                return [*body[:at], *new, *body[at:]]
        return None

    result = module.visit(_BodyEdit(edit))
    if not done:
        raise AnchorError("the anchor statement is not in a block")
    return result


@dataclass(frozen=True)
class DropStatement:
    """The statement ``anchor`` removed (``pass`` when it was its block's only one)."""

    anchor: str
    nth: int | None = None

    def apply(self, module: cst.Module) -> cst.Module:
        return _without(module, _statements(module, self.anchor, self.nth))


@dataclass(frozen=True)
class MoveStatement:
    """The statement ``anchor`` moved after (or ``before``) the statement ``to``: a call put
    at another loop level or at another place in the order of the script."""

    anchor: str
    to: str
    before: bool = False
    nth: int | None = None

    def apply(self, module: cst.Module) -> cst.Module:
        moved = _statements(module, self.anchor, self.nth)
        module = _without(module, moved)
        target = _statements(module, self.to, None)
        assert isinstance(moved, cst.BaseStatement)
        return _with_after(module, target, [moved], before=self.before)


@dataclass(frozen=True)
class ReplaceStatement:
    """The statement ``anchor`` replaced by the statements ``code`` (parsed): a constant's
    literal changed where it is defined."""

    anchor: str
    code: str

    def apply(self, module: cst.Module) -> cst.Module:
        target = _statements(module, self.anchor, None)
        module = _with_after(module, target, cst.parse_module(self.code).body)
        return _without(module, target)


@dataclass(frozen=True)
class InsertAfter:
    """The statements ``code`` (parsed) inserted after the statement ``anchor``."""

    anchor: str
    code: str

    def apply(self, module: cst.Module) -> cst.Module:
        target = _statements(module, self.anchor, None)
        return _with_after(module, target, cst.parse_module(self.code).body)


@dataclass(frozen=True)
class WrapWith:
    """The statement ``anchor`` (and the ``count - 1`` after it) put under
    ``with <context>:``."""

    anchor: str
    context: str
    count: int = 1

    def apply(self, module: cst.Module) -> cst.Module:
        first = _statements(module, self.anchor, None)
        done = False

        def edit(body: list[cst.BaseStatement]) -> list[cst.BaseStatement] | None:
            nonlocal done
            for i, statement in enumerate(body):
                if not done and statement.deep_equals(first):
                    done = True
                    inner = body[i:i + self.count]
                    block = cst.With(items=[cst.WithItem(cst.parse_expression(self.context))],
                                     body=cst.IndentedBlock(body=inner))
                    return [*body[:i], block, *body[i + self.count:]]
            return None

        return module.visit(_BodyEdit(edit))


@dataclass(frozen=True)
class Decorate:
    """The function (or method) ``function`` decorated with ``@<decorator>``."""

    function: str
    decorator: str

    def apply(self, module: cst.Module) -> cst.Module:
        def match(node: cst.CSTNode) -> bool:
            return isinstance(node, cst.FunctionDef) and node.name.value == self.function

        def make(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, cst.FunctionDef)
            decorator = cst.Decorator(cst.parse_expression(self.decorator))
            return node.with_changes(decorators=[decorator, *node.decorators])

        return _replace(module, _collect(module, match), make, None, f"def {self.function}")


@dataclass(frozen=True)
class Seq:
    """Several operators applied in order (one human edit that touches two places)."""

    ops: tuple[Operator, ...]

    def apply(self, module: cst.Module) -> cst.Module:
        for op in self.ops:
            module = op.apply(module)
        return module


Operator = Replace | SetArg | DropStatement | MoveStatement | ReplaceStatement | \
    InsertAfter | WrapWith | Decorate | Seq


def mutate(source: str | cst.Module, op: Operator) -> str:
    """``source`` (a text or a parsed module: LibCST trees are immutable, so one parse can
    serve every mutation of a file) with ``op`` applied; raises :class:`AnchorError` when its
    anchor is not found as declared, ``libcst.ParserSyntaxError`` when ``source`` does not
    parse."""
    module = cst.parse_module(source) if isinstance(source, str) else source
    return op.apply(module).code
