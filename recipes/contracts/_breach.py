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
from libcst.metadata import CodeRange, PositionProvider

from autofix.categories.breaches import CallBreach, Holder, breach_of
from autofix.toolkit import NotApplicable
from autofix.toolkit.provenance import ITEM, Origin, Provenance
from autofix.toolkit.scope import Option, PlannedEdits
from autofix.types import ExceptionInfo, Frame

#: The batch keys a call's argument comes from when a Trainer feeds a model from its
#: batches: a loss's target is the model's ``labels``; an embedding's input its
#: ``input_ids``.
BATCH_KEYS = {"target": ("labels",), "input": ("input_ids",)}
#: The dataset columns a batch key is made from (the collators rename ``label``).
COLUMN_ALIASES = {"labels": ("label", "label_ids")}


def _keyword(node: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    if not isinstance(node, cst.Call):
        return None
    return next((a.value for a in node.args if a.keyword is not None
                 and a.keyword.value == name), None)


class BreachRecipe(PlannedEdits):
    """A recipe for the breaches whose confirmed (or declared) operator is one of
    :attr:`operators`; subclasses give :meth:`options`."""

    abstract = True
    shared_operator = True
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
        expression and origins), then the returns of a ``__getitem__``/``collate_fn`` of
        this file behind a loader (or a ``Trainer``) of the failure, at the holder's key
        or name."""
        out: list[tuple[cst.BaseExpression | None, list[Origin]]] = []
        written = self.written(breach)  # the argument as the failing call writes it
        if written is not None:
            out.append((written, provenance.origins(written)))
        for holder in breach.holders:
            if not holder.is_in(self.rc.script) or (holder.rows and breach.at):
                continue  # a tensor of like rows is a guess the written argument beats
            use = provenance.name_read(holder.name, holder.line, holder.key)
            if use is not None:
                out.append((use, provenance.origins(use)))
        # the batch's item under the holder's key, or under its name (a model's forward
        # parameter, which a Trainer fills from the batch's key of that name)
        keys = [h.key for h in breach.holders if h.key] + [h.name for h in breach.holders
                                                           if not h.key]
        keys += BATCH_KEYS.get(breach.argument, ())
        for key in dict.fromkeys(keys):
            path: tuple[object, ...] = (int(key),) if key.isdigit() else (key,)
            for loader in breach.loaders:
                for place in (loader.collate, loader.getitem):
                    func = self._function_at(place)
                    if func is not None:
                        out.append((None, [o for ret in self.program.returns(func)
                                           for o in provenance.origins(ret, path)]))
        for loader in breach.loaders:  # a Trainer given a datasets pipeline of this file
            if loader.kind != "trainer" or not loader.dataset.startswith("datasets.") \
                    or not loader.holder().is_in(self.rc.script):
                continue
            trainer = provenance.name_read(loader.name, loader.line)
            for call in provenance.origins(trainer) if trainer is not None else ():
                given = _keyword(call.node, "train_dataset")
                for key in dict.fromkeys(keys):
                    for column in (key, *COLUMN_ALIASES.get(key, ())):
                        out.append((None, provenance.origins(given, (ITEM, column))
                                    if given is not None else []))
        return out

    def written(self, breach: CallBreach, prefix: str = "") -> cst.BaseExpression | None:
        """The expression of this file the breach's ``at`` names (``prefix`` ``"call_"``:
        the call itself, else the offending argument), ``None`` when it names none here."""
        at = breach.at
        if not at or not Holder(str(at.get("file", "")), 0, "", "").is_in(self.rc.script):
            return None
        start = (at.get(f"{prefix}line"), at.get(f"{prefix}column"))
        end = (at.get(f"{prefix}end_line"), at.get(f"{prefix}end_column"))
        for node, pos in self.metadata[PositionProvider].items():
            if not isinstance(node, cst.BaseExpression) or not isinstance(pos, CodeRange):
                continue
            # both Python's positions and LibCST's leave an expression's parentheses out
            if (pos.start.line, pos.start.column) == start \
                    and (pos.end.line, pos.end.column) == end:
                return node
        return None

    def _function_at(self, place: str) -> cst.FunctionDef | None:
        file, _, line = place.rpartition(":")
        if not file or not line.isdigit() or not Holder(file, 0, "", "").is_in(self.rc.script):
            return None
        for node in self.program.tree.body:
            for func in _functions(node):  # the code's first line: a decorator's, or def's
                first = self.program.line(func.decorators[0]) if func.decorators \
                    else self.program.line(func)
                if first == int(line):
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
