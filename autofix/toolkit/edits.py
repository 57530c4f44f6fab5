"""Small LibCST edits recipes share: a node's code, keyword arguments added, replaced and
removed with the call's formatting kept, a name dropped from an import."""

from __future__ import annotations

import libcst as cst


def code(node: cst.CSTNode) -> str:
    """The source text of ``node``."""
    return cst.Module([]).code_for_node(node)


def drop_import(node: cst.ImportFrom, module: str, name: str
                ) -> cst.ImportFrom | cst.RemovalSentinel | None:
    """``from module import ..., name, ...`` without ``name`` (the whole statement removed
    when it was the only name); ``None`` when ``node`` does not import ``name`` from
    ``module``."""
    if not isinstance(node.module, cst.Name) or node.module.value != module \
            or isinstance(node.names, cst.ImportStar):
        return None
    kept = [a for a in node.names if not (isinstance(a.name, cst.Name) and a.name.value == name)]
    if len(kept) == len(node.names):
        return None
    if not kept:
        return cst.RemoveFromParent()
    kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(names=kept)


def remove_keyword(call: cst.Call, name: str) -> cst.Call:
    """``call`` without its ``name=`` argument (the previous argument's comma is dropped
    when the removed one was last, so no dangling comma appears)."""
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == name)]
    if args and len(args) < len(call.args) and call.args[-1].keyword is not None \
            and call.args[-1].keyword.value == name:
        args[-1] = args[-1].with_changes(comma=call.args[-1].comma)
    return call.with_changes(args=args)


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    """The ``name=`` argument of ``call``, if present."""
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name),
                None)


def argument(call: cst.Call, name: str, position: int | None = None
             ) -> cst.BaseExpression | None:
    """The value ``call`` gives its parameter ``name``, the one at ``position`` (0-based)
    among the positional ones: as ``name=...`` or as that positional argument; ``None``
    when it gives none, or when a ``*args`` at or before ``position`` hides which
    argument fills it (``position=None``: the keyword only)."""
    given = keyword(call, name)
    if given is not None:
        return given.value
    if position is None:
        return None
    positional = [a for a in call.args if a.keyword is None and a.star != "**"]
    if len(positional) <= position or any(a.star for a in positional[:position + 1]):
        return None
    return positional[position].value


def set_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``name=value`` at the call itself: its ``name=`` argument's value
    replaced, else the keyword added last (:func:`append_keyword`). To set a setting where
    the script defines its value, use :meth:`autofix.toolkit.values.Owner.set`."""
    if keyword(call, name) is not None:
        return replace_keyword(call, name, value)
    return append_keyword(call, name, value)


def append_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``name=value`` added last, following the call's own layout.

    A one-argument-per-line call with a trailing comma gets the new argument on its own
    line with the same indentation and trailing comma; a call whose arguments start on
    their own line gets the new argument on a new line at that indentation.
    """
    args = list(call.args)
    new = cst.Arg(value=value, keyword=cst.Name(name),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")))
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    if isinstance(last.comma, cst.Comma):  # trailing comma: keep the layout
        closing = last.comma.whitespace_after
        before = args[-2].comma if len(args) > 1 else None
        if isinstance(closing, cst.ParenthesizedWhitespace) and isinstance(before, cst.Comma) \
                and isinstance(before.whitespace_after, cst.ParenthesizedWhitespace):
            # last arg keeps its own comment, then breaks to the next argument's indent
            inner = before.whitespace_after
            args[-1] = last.with_changes(comma=last.comma.with_changes(
                whitespace_after=closing.with_changes(indent=inner.indent,
                                                      last_line=inner.last_line)))
            new = new.with_changes(comma=last.comma.with_changes(
                whitespace_after=closing.with_changes(first_line=cst.TrailingWhitespace(),
                                                      empty_lines=[])))
        else:
            args[-1] = last.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            new = new.with_changes(comma=last.comma)
    else:  # the space before ")" moves behind the new last argument
        opening = call.whitespace_before_args
        after: cst.BaseParenthesizableWhitespace = cst.SimpleWhitespace(" ")
        if isinstance(opening, cst.ParenthesizedWhitespace):  # args start on their own line
            after = opening.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=after),
                                     whitespace_after_arg=cst.SimpleWhitespace(""))
        new = new.with_changes(whitespace_after_arg=last.whitespace_after_arg)
    return call.with_changes(args=[*args, new])


def replace_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with the value of its ``name=`` argument replaced (layout kept)."""
    return call.with_changes(args=[
        a.with_changes(value=value) if a.keyword is not None and a.keyword.value == name else a
        for a in call.args
    ])
