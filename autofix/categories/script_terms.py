"""Advice in the script's own terms: the names, keys and arguments on the user's failing
line, read with :mod:`ast` from the line's text (the traceback's, one logical line).

A category's advice names what the script holds (its variable, its column, its call) and
never a library call the script does not use (issue: "advice that fits the script in front
of it"); these readers give it the words. Each returns "" (or an empty tuple) when the line
does not parse or holds no such form, so advice falls back to the category's ``hint``.
"""

from __future__ import annotations

import ast


def _parse(text: str) -> ast.AST | None:
    source = text.strip()
    if source.endswith((",", "(", "[", "{", "\\")):  # the first line of a wrapped call
        source = source.rstrip("\\")
        for closing in (")", "))", ")))", "]", "])"):
            try:
                return ast.parse(source + closing)
            except SyntaxError:
                continue
        return None
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def argument_on(text: str, *keywords: str, position: int = -1, method: str = "") -> str:
    """The source of a call's argument on a source line: the first of ``keywords`` given,
    else the positional argument at ``position`` of a call with exactly that many plus one
    (a loss's ``(input, target)``); with ``method``, only a call of ``X.method(...)``
    counts (``trainer.predict(split)``); "" when the line holds none."""
    tree = _parse(text)
    if tree is None:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (not method or isinstance(
                node.func, ast.Attribute) and node.func.attr == method):
            given = {k.arg: k.value for k in node.keywords if k.arg}
            found = next((given[k] for k in keywords if k in given), None)
            if found is None and position >= 0 and len(node.args) == position + 1:
                found = node.args[position]
            if found is not None:
                return ast.unparse(found)
    return ""


def subscript_keys(text: str) -> tuple[tuple[str, str], ...]:
    """``(receiver, key)`` of every subscript by a string constant on the line, in
    order: ``tok(list(chunk["premise"]), batch["hypothesis"])`` gives
    ``(("chunk", "premise"), ("batch", "hypothesis"))``; the receiver is its source."""
    tree = _parse(text)
    if tree is None:
        return ()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            found.append((node, (ast.unparse(node.value), node.slice.value)))
    found.sort(key=lambda item: (getattr(item[0], "lineno", 0), item[0].col_offset))
    return tuple(pair for _, pair in found)


def column_reads(text: str) -> tuple[tuple[str, str], ...]:
    """``(receiver, name)`` of every column-like read on the line: the string subscripts of
    :func:`subscript_keys`, then attribute reads of a plain name (``df.text.tolist()``
    gives ``("df", "text")``); callers keep those that name a real column."""
    tree = _parse(text)
    if tree is None:
        return ()
    reads = [(node, (node.value.id, node.attr)) for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)]
    reads.sort(key=lambda item: (getattr(item[0], "lineno", 0), item[0].col_offset))
    return (*subscript_keys(text), *(pair for _, pair in reads))


def attribute_owner(text: str, attribute: str) -> str:
    """The source of the object whose ``attribute`` the line reads (``out.loss.backward()``
    and ``attribute="loss"`` give ``"out"``; ``out["loss"]`` counts too); "" when none."""
    tree = _parse(text)
    if tree is None:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == attribute:
            return ast.unparse(node.value)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and node.slice.value == attribute:
            return ast.unparse(node.value)
    return ""


def called_names(text: str) -> tuple[str, ...]:
    """The dotted names of every call on the line (``torch.tensor``, ``model``,
    ``tok``), in order of appearance."""
    tree = _parse(text)
    if tree is None:
        return ()
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    calls.sort(key=lambda node: (getattr(node, "lineno", 0), node.col_offset))
    return tuple(ast.unparse(node.func) for node in calls)
