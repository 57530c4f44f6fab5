"""Statement-level helpers shared by the recipes (a line inserted after an assignment, a
statement `X.method()` alone on its line); not a recipe itself."""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from autofix.toolkit.recipe import Recipe


def assignments(recipe: Recipe, body: Sequence[cst.BaseStatement], pattern: str
                ) -> list[tuple[int, str]]:
    """``(index, name)`` of each ``name = call(...)`` statement in ``body`` whose call's
    qualified name fully matches ``pattern`` (``AutoTokenizer.from_pretrained`` and
    ``PreTrainedTokenizerFast`` alike), in source order; nested blocks are not searched."""
    found = []
    for i, stmt in enumerate(body):
        if not m.matches(stmt, m.SimpleStatementLine(body=[m.Assign(
                targets=[m.AssignTarget(target=m.Name())], value=m.Call())])):
            continue
        assert isinstance(stmt, cst.SimpleStatementLine)
        assign = stmt.body[0]
        assert isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)
        target = assign.targets[0].target
        assert isinstance(target, cst.Name)
        func = assign.value.func
        if recipe.is_qualified(func, pattern):
            found.append((i, target.value))
    return found


def assigns_attribute(body: Sequence[cst.BaseStatement], dotted: str) -> bool:
    """True when some statement of ``body`` assigns ``dotted`` (``"tok.pad_token"``)."""
    for stmt in body:
        for node in m.findall(stmt, m.AssignTarget()):
            assert isinstance(node, cst.AssignTarget)
            if re.sub(r"\s", "", cst.Module([]).code_for_node(node.target)) == dotted:
                return True
    return False


def insert_after(body: Sequence[cst.BaseStatement], index: int, line: str
                 ) -> list[cst.BaseStatement]:
    """``body`` with the statement ``line`` (source text) inserted after ``body[index]``."""
    new = list(body)
    new.insert(index + 1, cst.parse_statement(line + "\n"))
    return new


def method_call(stmt: cst.BaseStatement, method: str) -> cst.Call | None:
    """The call of ``stmt`` when it is a statement ``X.method(...)`` alone on its line
    (``optimizer.step()``, ``optimizer.zero_grad(set_to_none=True)``), else ``None``."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    expr = stmt.body[0]
    if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
        return None
    func = expr.value.func
    if isinstance(func, cst.Attribute) and func.attr.value == method:
        return expr.value
    return None
