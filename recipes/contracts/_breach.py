"""The shared base of the recipes that repair a broken call contract with one of the
shared operators (:mod:`autofix.toolkit.source_ops`): the breach the child measured at
the failure (:func:`autofix.categories.breaches.breach_of`), the user's expression that
held the offending value in the file being edited, its provenance
(:class:`autofix.toolkit.provenance.Provenance`), and the ranked candidates the engine runs
until one passes (:meth:`~autofix.toolkit.scope.PlannedEdits.choose`).

Where the value is made in another of the user's files than the one holding it (a
``Dataset.__getitem__`` in ``data.py``, the loop in ``engine.py``), the recipe starts in
that file from the return of the ``__getitem__`` or ``collate_fn`` the child found behind
the loader, with the key the batch held the value under.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import libcst as cst

from autofix.categories.breaches import CallBreach, Holder, breach_of
from autofix.toolkit import NotApplicable
from autofix.toolkit.provenance import Origin, Provenance
from autofix.toolkit.scope import Option, PlannedEdits
from autofix.types import ExceptionInfo, Frame


class BreachRecipe(PlannedEdits):
    """A recipe for the breaches whose confirmed (or declared) operator is one of
    :attr:`operators`; subclasses give :meth:`options`."""

    abstract = True
    operators: ClassVar[tuple[str, ...]] = ()

    def breach(self) -> CallBreach:
        """The breach this recipe repairs; raises :class:`NotApplicable` when the failure
        shows none it can."""
        found = breach_of(self.rc.diagnosis.failure)
        if found is None:
            raise NotApplicable("the facts at the failure show no broken call contract")
        operator = found.operator or next(iter(found.repairs), "")
        if operator not in self.operators:
            needs = operator or "another repair"
            raise NotApplicable(f"the breach ({found.contract}) needs {needs}, not "
                                f"{' or '.join(self.operators)}")
        return found

    def starts(self, breach: CallBreach, provenance: Provenance
               ) -> list[tuple[cst.BaseExpression | None, list[Origin]]]:
        """Where to start in this file: each holder of the value in this file (its
        expression and origins), else the returns of a ``__getitem__``/``collate_fn`` of
        this file behind a loader of the failure, at the holder's key."""
        out: list[tuple[cst.BaseExpression | None, list[Origin]]] = []
        for holder in breach.holders:
            if not holder.is_in(self.rc.script):
                continue
            use = provenance.name_read(holder.name, holder.line, holder.key)
            if use is not None:
                out.append((use, provenance.origins(use)))
        if out:
            return out
        key = next((h.key for h in breach.holders if h.key), "")
        path: tuple[object, ...] = (int(key),) if key.isdigit() else (key,) if key else ()
        for loader in breach.loaders:
            for place in (loader.collate, loader.getitem):
                func = self._function_at(place)
                if func is None:
                    continue
                origins = [o for ret in self.program.returns(func)
                           for o in provenance.origins(ret, path)]
                out.append((None, origins))
        return out

    def _function_at(self, place: str) -> cst.FunctionDef | None:
        file, _, line = place.rpartition(":")
        if not file or not line.isdigit() or not Holder(file, 0, "", "").is_in(self.rc.script):
            return None
        for node in self.program.tree.body:
            for func in _functions(node):
                if self.program.line(func) <= int(line) <= self.program.line(func) + 1:
                    return func
        return None

    def prepare(self, tree: cst.Module) -> None:
        breach = self.breach()
        provenance = Provenance(self)
        options = self.candidates(breach, provenance)
        if not options:
            raise NotApplicable(self.reason or self.nothing_to_do)
        self.choose(options)

    def candidates(self, breach: CallBreach, provenance: Provenance) -> list[Option]:
        """The candidates, best first (subclasses)."""
        raise NotImplementedError


def _functions(node: cst.CSTNode) -> list[cst.FunctionDef]:
    if isinstance(node, cst.FunctionDef):
        return [node, *(f for s in node.body.body for f in _functions(s))] \
            if isinstance(node.body, cst.IndentedBlock) else [node]
    if isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock):
        return [f for s in node.body.body for f in _functions(s)]
    return []


def breach_failure(message: str, contract: Mapping[str, Any], line: int) -> ExceptionInfo:
    """An exception as the child reports one whose failing call broke ``contract`` (its
    JSON: ``contract``, ``category``, ``trial``, ``holders``...), raised from the user's
    ``script.py`` at ``line``, for a recipe's examples."""
    return ExceptionInfo("builtins.RuntimeError", message,
                         (Frame("script.py", line, "<module>", ""),), contract=dict(contract))
