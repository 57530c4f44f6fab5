"""Finds the functions given to ``Dataset.map`` (not a recipe itself: the registry skips
modules whose name starts with ``_``)."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import find


def map_function_names(tree: cst.Module) -> set[str]:
    """Names of the functions given to ``X.map(...)`` in ``tree``.

    The first positional argument or ``function=``: a name (``tokenize``), a method
    (``self.tokenize``: ``tokenize``) or ``functools.partial(tokenize, ...)``. Lambdas are
    not named; :func:`map_lambdas` finds them.
    """
    names: set[str] = set()
    for call in find(tree, m.Call(func=m.Attribute(attr=m.Name("map")))):
        arg = _function_arg(cst.ensure_type(call, cst.Call))
        if isinstance(arg, cst.Call) and arg.args \
                and m.matches(arg.func, m.Name("partial") | m.Attribute(attr=m.Name("partial"))):
            arg = arg.args[0].value
        if isinstance(arg, cst.Name):
            names.add(arg.value)
        elif isinstance(arg, cst.Attribute):
            names.add(arg.attr.value)
    return names


def map_lambdas(tree: cst.Module) -> list[cst.Lambda]:
    """The lambdas given inline to ``X.map(...)`` in ``tree``."""
    found = []
    for call in find(tree, m.Call(func=m.Attribute(attr=m.Name("map")))):
        arg = _function_arg(cst.ensure_type(call, cst.Call))
        if isinstance(arg, cst.Lambda):
            found.append(arg)
    return found


def _function_arg(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "function":
            return arg.value
    first = call.args[0] if call.args else None
    return first.value if first is not None and first.keyword is None else None
