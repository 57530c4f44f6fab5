"""Scope-aware statement insertion, shared by every recipe that adds a statement.

A recipe that inserts ``ds = ds.class_encode_column("label")`` must put it where ``ds``
is the variable the failing call uses: in the same scope (a function body, a method,
the module), after the last assignment of ``ds`` that this scope sees, and never at
module level when ``ds`` lives in ``main()``. LibCST's ``ScopeProvider`` answers "which
assignments does this name at this node resolve to", ``ParentNodeProvider`` "which
statement holds this node", and the transformer below puts new statements into whatever
block (module, function, ``if``/``with``/``for`` body) holds the anchor statement.

Recipes get the metadata for free: :class:`autofix.toolkit.recipe.Recipe` declares
``ScopeProvider``, ``ParentNodeProvider`` and ``PositionProvider``; pass the recipe
itself as ``meta``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider, Scope, ScopeProvider

#: What a recipe's statements may be: one line of simple statements or a compound one.
Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement


class Metadata(Protocol):
    """Anything that resolves LibCST metadata for the tree being transformed (a
    :class:`~autofix.toolkit.recipe.Recipe` while it runs)."""

    def get_metadata(self, key: Any, node: cst.CSTNode, default: Any = ...) -> Any: ...


class NoPlace(Exception):
    """No statement or assignment where the insertion was asked for (recipes turn this
    into :class:`~autofix.toolkit.recipe.NotApplicable` with the message)."""


def enclosing_statement(meta: Metadata, node: cst.CSTNode) -> Statement:
    """The innermost statement (simple-statement line or compound statement) that holds
    ``node``; raises :class:`NoPlace` for a node outside any statement."""
    current: cst.CSTNode | None = node
    while current is not None:
        if isinstance(current, cst.SimpleStatementLine | cst.BaseCompoundStatement):
            return current
        current = meta.get_metadata(ParentNodeProvider, current, None)
    raise NoPlace("the node is not inside a statement")


def scope_of(meta: Metadata, node: cst.CSTNode) -> Scope:
    """The LibCST scope ``node`` is evaluated in (module, function, class, comprehension)."""
    scope = meta.get_metadata(ScopeProvider, node, None)
    if not isinstance(scope, Scope):
        raise NoPlace("no scope information for the node")
    return scope


def resolves(meta: Metadata, node: cst.CSTNode, name: str) -> bool:
    """True when ``name`` used at ``node`` refers to an assignment, import, parameter or
    builtin the program defines (in ``node``'s scope or an enclosing one). A fix that
    inserts ``name`` at ``node`` must check this first (issue 7: ``processing_class=tok``
    in a function where ``tok`` is not defined raised ``NameError``)."""
    return name in scope_of(meta, node)


def assignment_statements(meta: Metadata, node: cst.CSTNode, name: str) -> list[Statement]:
    """The statements that bind ``name`` as seen from ``node`` (same scope, or the
    enclosing scope that binds it), in source order, before ``node``'s statement.

    Only statements in the same block chain as ``node`` count as "before": an
    assignment in a sibling function is another scope and is never returned.
    """
    scope = scope_of(meta, node)
    if name not in scope:
        return []
    line = meta.get_metadata(PositionProvider, enclosing_statement(meta, node)).start.line
    found: list[tuple[int, Statement]] = []
    for assignment in scope[name]:
        target = getattr(assignment, "node", None)
        if not isinstance(target, cst.CSTNode):
            continue  # builtins have no node
        try:
            stmt = enclosing_statement(meta, target)
        except NoPlace:
            continue
        start = meta.get_metadata(PositionProvider, stmt).start.line
        if start < line and not isinstance(target, cst.FunctionDef | cst.ClassDef):
            found.append((start, stmt))
    found.sort(key=lambda pair: pair[0])
    return [stmt for _, stmt in dict.fromkeys(found)]


def last_assignment(meta: Metadata, node: cst.CSTNode, name: str) -> Statement:
    """The last statement before ``node`` that binds ``name`` in the scope ``node`` sees;
    raises :class:`NoPlace` naming the missing variable when there is none."""
    found = assignment_statements(meta, node, name)
    if not found:
        raise NoPlace(f"no assignment of {name} in the scope of the call that uses it")
    return found[-1]


def _blocks(meta: Metadata, node: cst.CSTNode) -> list[cst.CSTNode]:
    """The blocks (``Module``, ``IndentedBlock``) holding ``node``, innermost first."""
    out: list[cst.CSTNode] = []
    current = meta.get_metadata(ParentNodeProvider, node, None)
    while current is not None:
        if isinstance(current, cst.Module | cst.IndentedBlock):
            out.append(current)
        current = meta.get_metadata(ParentNodeProvider, current, None)
    return out


def on_path_to(meta: Metadata, stmt: Statement, use: cst.CSTNode) -> Statement:
    """``stmt``, or the compound statement around it that sits in a block enclosing
    ``use``: an assignment inside ``if ...:`` is followed by the new statement after the
    whole ``if``, so the statement runs on every path that reaches ``use``."""
    enclosing = _blocks(meta, use)
    current = stmt
    while True:
        parent = meta.get_metadata(ParentNodeProvider, current, None)
        if parent is None or parent in enclosing:
            return current
        current = enclosing_statement(meta, parent)


class _Inserter(cst.CSTTransformer):
    def __init__(self, anchor: cst.CSTNode, new: Sequence[Statement], before: bool) -> None:
        super().__init__()
        self.anchor = anchor
        self.new = list(new)
        self.before = before
        self.done = False

    def _body(self, body: Sequence[cst.BaseStatement],
              originals: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        for original, updated in zip(originals, body, strict=True):
            if original is self.anchor and not self.done:
                self.done = True
                out += [*self.new, updated] if self.before else [updated, *self.new]
            else:
                out.append(updated)
        return out

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._body(updated_node.body, original_node.body))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._body(updated_node.body, original_node.body))


def insert_statements(tree: cst.Module, anchor: Statement, new: Sequence[Statement], *,
                      before: bool = False) -> cst.Module:
    """``tree`` with ``new`` inserted right after (or ``before``) ``anchor``, in the block
    that holds it (module, function or any indented body), indentation taken from it.

    ``anchor`` must be a statement node of ``tree`` itself (identity, as given by
    :func:`enclosing_statement` or :func:`last_assignment` during the same transform).
    Raises :class:`NoPlace` when ``anchor`` is a one-line body (``if x: a = 1``) or not
    part of ``tree``.
    """
    inserter = _Inserter(anchor, new, before)
    result = tree.visit(inserter)
    if not inserter.done:
        raise NoPlace("the statement to insert next to is not in an indented block")
    return result


def insert_after_last_assignment(meta: Metadata, tree: cst.Module, use: cst.CSTNode,
                                 name: str, new: Sequence[Statement]) -> tuple[cst.Module, int]:
    """Insert ``new`` after the last statement that assigns ``name`` as seen from ``use``
    (the scope that resolves ``name`` there). Returns the new tree and the 1-based line
    of the first inserted statement. Raises :class:`NoPlace` when ``name`` has no
    assignment visible from ``use``."""
    binding = last_assignment(meta, use, name)
    if isinstance(binding, cst.FunctionDef) and binding.body in _blocks(meta, use):
        # ``name`` is a parameter of the function that uses it: the new statements open
        # the function's body (after its docstring), never after the ``def`` outside it
        first = _first_body_statement(binding)
        line = meta.get_metadata(PositionProvider, first).start.line
        return insert_statements(tree, first, new, before=True), line
    anchor = on_path_to(meta, binding, use)
    line = meta.get_metadata(PositionProvider, anchor).end.line + 1
    return insert_statements(tree, anchor, new), line


def _first_body_statement(function: cst.FunctionDef) -> Statement:
    """The statement of ``function``'s body the code runs first (its docstring skipped);
    raises :class:`NoPlace` for a one-line body (``def f(x): return x``)."""
    if not isinstance(function.body, cst.IndentedBlock):
        raise NoPlace(f"{function.name.value}() has a one-line body")
    body = [s for s in function.body.body if isinstance(s, Statement)]
    return body[1] if len(body) > 1 and function.get_docstring() is not None else body[0]


def parse_statement(code: str) -> Statement:
    """One statement parsed from ``code`` (a line ending is added when missing)."""
    return cst.parse_statement(code if code.endswith("\n") else code + "\n")


__all__ = [
    "Metadata", "NoPlace", "Statement", "assignment_statements", "enclosing_statement",
    "insert_after_last_assignment", "insert_statements", "last_assignment", "on_path_to",
    "parse_statement",
    "resolves", "scope_of",
]
