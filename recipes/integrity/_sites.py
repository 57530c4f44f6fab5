"""Where the run saw a broken invariant, for the recipes of the integrity family.

The child sends each broken invariant with the user's file, line and function where it
showed (``autofix/run/child/invariants.py``); the engine hands them to recipes as
``RecipeContext.facts["invariants"]``. :func:`sites` gives those of one kind in the file a
recipe is editing (the script, or one of the user's modules: a model's ``forward`` in
``models.py``), :func:`calls_at` the calls of the statement at a line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import libcst as cst

from autofix.toolkit.scope import PlannedEdits


def in_file(recipe: PlannedEdits, place: Mapping[str, Any]) -> bool:
    """``place``'s file is the one ``recipe`` edits (resolved paths; an example's relative
    script by its name)."""
    file = str(place.get("file") or "")
    script = recipe.rc.script
    if not file:
        return False
    if not script.is_absolute():
        return Path(file).name == script.name
    try:
        return Path(file).resolve() == script.resolve()
    except OSError:
        return False


def sites(recipe: PlannedEdits, kind: str) -> list[Mapping[str, Any]]:
    """The invariant events of ``kind`` the run sent (every file), in the order sent."""
    found = recipe.rc.facts.get("invariants") or []
    return [e for e in found if isinstance(e, Mapping) and e.get("kind") == kind]


def calls_at(recipe: PlannedEdits, line: int) -> list[cst.Call]:
    """The calls of the statement the run reported at ``line``, outermost first (a call
    written over several lines is reported at one of them)."""
    program = recipe.program
    out = []
    for call in program.calls:
        statement = next((a for a in program.ancestors(call)
                          if isinstance(a, (cst.SimpleStatementLine, cst.If, cst.For,
                                            cst.While, cst.With))), None)
        if statement is None:
            continue
        start, end = _span(recipe, statement)
        if start <= line <= end:
            out.append(call)
    return out


def _span(recipe: PlannedEdits, node: cst.CSTNode) -> tuple[int, int]:
    from libcst.metadata import PositionProvider

    pos = recipe.get_metadata(PositionProvider, node)
    if isinstance(node, cst.BaseCompoundStatement):  # its header only
        body = getattr(node, "body", None)
        if body is not None:
            return pos.start.line, recipe.get_metadata(PositionProvider, body).start.line
    return pos.start.line, pos.end.line


def is_method(recipe: PlannedEdits, func: cst.BaseExpression, name: str) -> bool:
    """``func`` is ``<value>.<name>``, a method of the value (a tensor, an array), not a
    function of ``torch`` or ``numpy`` reached through an import (``torch.argmax``)."""
    return isinstance(func, cst.Attribute) and func.attr.value == name and not any(
        q == lib or q.startswith(lib + ".") for q in recipe.qualified(func)
        for lib in ("torch", "numpy"))
