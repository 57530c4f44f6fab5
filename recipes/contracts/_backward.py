"""What the recipes of a hand loop's backward and loss share (``reduce-loss-mean``,
``model-labels``, ``running-loss-item``, ``detach-carried-state``,
``features-inside-loop``, ``flatten-token-loss``, ``json-python-ints``): the line of the
script the failure was raised from, the calls on it, the loop around it, and the facts
of the user's locals there.

In: a :class:`~autofix.toolkit.scope.PlannedEdits` recipe during ``prepare`` (its
``program`` and ``rc``). Out: nodes of the original tree, facts as summaries. Raises
:class:`~autofix.toolkit.NotApplicable` where a recipe cannot go on without them (no user
frame in the script, no call of the kind on its line).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import PositionProvider

from autofix.categories.failure import Failure
from autofix.toolkit import NotApplicable
from autofix.toolkit.facts import failure_of
from autofix.toolkit.scope import PlannedEdits

Value = Mapping[str, Any]


def the_failure(recipe: PlannedEdits) -> Failure:
    """The failure being fixed, with its facts; raises ``NotApplicable`` without them."""
    failure = failure_of(recipe.rc)
    if failure is None or not failure.has_facts:
        raise NotApplicable("the facts at the failure were not recorded")
    return failure


def failing_line(recipe: PlannedEdits, failure: Failure) -> int:
    """The line of the script (the file the recipe edits) in the innermost user frame of
    the failure; raises ``NotApplicable`` when no user frame is in this file."""
    for frame in failure.user_frames():
        if Path(frame.file).name == recipe.rc.script.name:
            return frame.line
    raise NotApplicable(f"no frame of the failure is in {recipe.rc.script.name}")


def spans(recipe: PlannedEdits, node: cst.CSTNode, line: int) -> bool:
    """``node`` starts on or before ``line`` and ends on or after it."""
    pos = recipe.get_metadata(PositionProvider, node, None)
    return pos is not None and pos.start.line <= line <= pos.end.line


def calls_at(recipe: PlannedEdits, line: int) -> list[cst.Call]:
    """The calls of the program whose source spans ``line``, innermost last."""
    return [c for c in recipe.program.calls if spans(recipe, c, line)]


def backward_receivers(recipe: PlannedEdits, line: int) -> list[cst.BaseExpression]:
    """The receivers ``X`` of the ``X.backward(...)`` calls on ``line``."""
    return [c.func.value for c in calls_at(recipe, line)
            if isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward"]


def the_backward(recipe: PlannedEdits, line: int) -> tuple[cst.Call, cst.BaseExpression]:
    """The one ``X.backward(...)`` call on ``line`` and its receiver ``X``; raises
    ``NotApplicable`` when there is none or several."""
    found = [c for c in calls_at(recipe, line)
             if isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward"]
    if len(found) != 1:
        raise NotApplicable(f"{len(found)} .backward() calls on line {line}: "
                            "which tensor was backwarded is not clear")
    func = found[0].func
    assert isinstance(func, cst.Attribute)
    return found[0], func.value


def loop_around(recipe: PlannedEdits, node: cst.CSTNode) -> cst.For | cst.While | None:
    """The innermost ``for``/``while`` loop whose body holds ``node``, within its
    function (``None``: none)."""
    for anc in recipe.program.ancestors(node):
        if isinstance(anc, (cst.For, cst.While)):
            return anc
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            return None
    return None


def statement_of(recipe: PlannedEdits, node: cst.CSTNode) -> cst.BaseStatement | None:
    """The statement that holds ``node`` (a simple statement line or a compound one)."""
    for anc in (node, *recipe.program.ancestors(node)):
        if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return anc
    return None


def user_fact(failure: Failure, name: str) -> Value | None:
    """The summary of the user's local ``name`` in the innermost user frame holding it."""
    return failure.value(name, user=True)


def requires_grad(value: Value | None) -> bool:
    """A tensor that records a graph, or a tuple or list whose items all are."""
    if value is None:
        return False
    if value.get("kind") == "tensor":
        return bool(value.get("requires_grad"))
    items = value.get("items") or ()
    return value.get("kind") in ("tuple", "list") and bool(items) and all(
        requires_grad(i) for i in items)
