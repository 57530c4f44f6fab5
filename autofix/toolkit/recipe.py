"""The recipe base class, its examples, and how a recipe is applied to source code.

A recipe is a LibCST codemod (``VisitorBasedCodemodCommand``) that fixes one fault
category. It carries its own examples (Fixit style): ``Example(before, after)`` pairs it
must produce and ``Example(before)`` code it must leave alone. Library calls are matched
by qualified name (``QualifiedNameProvider``), so ``from transformers import Trainer as T``
and ``import transformers as tf; tf.Trainer`` match as well.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, cast

import libcst as cst
from libcst.codemod import CodemodContext, SkipFile, VisitorBasedCodemodCommand
from libcst.metadata import (
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from autofix.categories import is_category
from autofix.toolkit.cst_reflection import install as install_cst_reflection
from autofix.toolkit.parsed import ParsedSource
from autofix.types import (
    DatasetFacts,
    Diagnosis,
    ExceptionInfo,
    KerasFacts,
    RecipeContext,
    TrainerFacts,
)

install_cst_reflection()  # LibCST's method lookups once per class, not per recipe

#: A cell delimiter of the percent format (``# %%``: Jupytext, VS Code, Spyder; autofix's
#: own notebook program marks each cell ``# %% autofix cell N``). LibCST keeps the comment
#: lines above a statement in that statement's ``leading_lines``, so removing a cell's
#: first statement would delete its delimiter and merge the cell into the one before.
CELL_DELIMITER = re.compile(r"#\s*%%")

_Statement = (cst.SimpleStatementLine, cst.BaseCompoundStatement)


@dataclass(frozen=True)
class Example:
    """A recipe example: ``after=None`` means the recipe must leave ``before`` unchanged.

    ``versions`` and ``trainers`` stand in for the target environment and probe facts;
    ``facts`` for what the check that found the fault measured (:attr:`Diagnosis.facts`).
    """

    before: str
    after: str | None = None
    versions: dict[str, str] = field(default_factory=lambda: {"transformers": "5.24.0"})
    trainers: tuple[TrainerFacts, ...] = ()
    datasets: tuple[DatasetFacts, ...] = ()
    keras: tuple[KerasFacts, ...] = ()
    #: the run's facts (:attr:`autofix.types.RecipeContext.facts`)
    run_facts: Mapping[str, Any] = field(default_factory=dict)
    evidence: str = "example"
    line: int = 0  # the failing line in ``before`` (0: none)
    #: the exception with the facts of its frames (:mod:`autofix.toolkit.facts`)
    failure: ExceptionInfo | None = None
    args: tuple[str, ...] = ()  # the script's command line
    facts: tuple[tuple[str, str], ...] = ()
    #: which of the recipe's candidate fixes ``after`` is (0: the best)
    choice: int = 0

    def context(self, category: str) -> RecipeContext:
        """The :class:`RecipeContext` this example runs the recipe with."""
        return RecipeContext(
            diagnosis=Diagnosis(category=category, evidence=self.evidence, line=self.line,
                                failure=self.failure, facts=self.facts),
            versions=self.versions,
            trainers=self.trainers,
            datasets=self.datasets,
            keras=self.keras,
            args=self.args,
            facts=self.run_facts,
            choice=self.choice,
        )


class NotApplicable(SkipFile):
    """Raised by a recipe when the code does not have the shape it fixes."""


class OtherError(NotApplicable):
    """Raised by a recipe when the diagnosis's error is not the one it fixes (an
    ``api-drift`` about ``load_metric`` given to the ``AdamW`` recipe): like a
    :meth:`Recipe.precheck` decline, a reason shown only when no other recipe of the
    category looked at the code and said why."""


class RecipeContractError(TypeError):
    """A recipe class breaks the recipe contract (raised when the class is created)."""


_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def contract_problems(cls: type[Recipe]) -> list[str]:
    """What ``cls`` lacks to be a recipe (empty: it keeps the contract).

    The contract (Fixit's rule checks): an ``id`` of lower-case words joined by ``-``
    equal to its module's name (``-`` as ``_``: ``recipes/course/drift_adamw.py`` holds
    ``drift-adamw``; only for the in-tree package, ``recipes/`` installed as
    ``autofix_recipes``, and classes in its ``_*`` or ``test_*`` modules are exempt); a
    ``title``; a ``category`` (and ``also_fixes``) registered in
    :mod:`autofix.categories.catalogue`; at least one before/after example and one example the
    recipe must leave unchanged.
    """
    problems = []
    if not cls.id or not _ID.fullmatch(cls.id):
        problems.append(f"id {cls.id!r} must be lower-case words joined by '-'")
    module = cls.__module__.rsplit(".", 1)[-1]
    in_tree = cls.__module__.split(".", 1)[0] == "autofix_recipes"  # plugins name modules freely
    if cls.id and in_tree and not module.startswith(("test_", "_")) \
            and cls.id.replace("-", "_") != module:
        problems.append(f"id {cls.id!r} must equal its module's name ({module}.py holds "
                        f"{module.replace('_', '-')!r}; one recipe per module)")
    if not cls.title:
        problems.append("no title")
    # a plugin module declares its own categories (``CATEGORIES``) above its recipes; the
    # plugin loader registers them
    own = {str(c.id) for c in getattr(sys.modules.get(cls.__module__), "CATEGORIES", ())
           if hasattr(c, "id")} if not in_tree else set()
    for category in (cls.category, *cls.also_fixes):
        if not is_category(category) and category not in own:
            problems.append(f"category {category!r} is not registered (autofix.categories."
                            "register_category)")
    if not any(e.after is not None for e in cls.examples):
        problems.append("no before/after example")
    if not any(e.after is None for e in cls.examples):
        problems.append("no example the recipe must leave unchanged")
    return problems


class Recipe(VisitorBasedCodemodCommand):
    """Base of every recipe in ``recipes/``.

    Subclasses set ``id``, ``category``, ``title``, ``examples`` and implement the
    codemod's ``visit_*``/``leave_*`` methods; they call :meth:`changed` for each edit
    and raise :class:`NotApplicable` (a ``SkipFile``) when the code has nothing to fix.
    """

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, ScopeProvider,
                             ParentNodeProvider)

    #: True on a shared base class that is not a recipe itself (only the class that sets
    #: it; its subclasses are recipes again and must keep the contract).
    abstract: ClassVar[bool] = True

    id: ClassVar[str] = ""
    category: ClassVar[str] = ""
    title: ClassVar[str] = ""
    examples: ClassVar[tuple[Example, ...]] = ()
    #: The commit's subject says the change itself (the summary's first clause, when it
    #: fits a subject line) instead of :attr:`title`: for a recipe whose fixes of one
    #: session would otherwise all read the same ("pass each keyword under the name ...").
    subject_from_change: ClassVar[bool] = False
    #: Why the recipe does not apply when it found nothing to change (``self.reason``,
    #: set while visiting, says it more precisely).
    nothing_to_do: ClassVar[str] = "nothing to change"
    #: Other categories whose symptoms this recipe's root cause also produces.
    also_fixes: ClassVar[tuple[str, ...]] = ()
    #: A shared repair operator (``cast-where-made``: one operator for the dtype faults
    #: of several categories): a fix it makes for one of :attr:`also_fixes` is committed
    #: under that category, not under :attr:`category` (it is no root cause behind the
    #: other's face, but that category's repair).
    shared_operator: ClassVar[bool] = False
    #: The contract the fix claims to restore, as the categories that break it: one of
    #: them diagnosed on the next run means the fix did not restore it (a collator swap
    #: that stops a crash while the token labels stay misaligned), and it is dropped.
    restores: ClassVar[tuple[str, ...]] = ()
    #: role -> regex of a call's qualified name; ``X = call(...)`` puts ``X`` under role in
    #: ``self.assigned`` (in source order, seen before the code that follows it).
    TRACK: ClassVar[dict[str, str]] = {}
    #: Cheap pre-check before any metadata is resolved (see :meth:`precheck`): groups of
    #: words; the recipe can only apply when the source holds a word of every group.
    #: Empty: no pre-check. Declare only words every edit of the recipe depends on.
    requires_words: ClassVar[tuple[tuple[str, ...], ...]] = ()
    #: Top-level modules one of which the source must import absolutely (the qualified
    #: names the recipe matches, e.g. ``transformers.Trainer``, exist only then).
    requires_imports: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def precheck(cls, parsed: ParsedSource) -> str:
        """Why the recipe cannot apply to ``parsed`` without visiting it ("" when it may):
        a word group of :attr:`requires_words` with no word in the source, or none of
        :attr:`requires_imports` imported. Honest by construction: only declines on facts
        the recipe's matching needs (``tests/test_recipe_robustness.py`` checks that it
        never declines where the recipe applies)."""
        for group in cls.requires_words:
            if parsed.words.isdisjoint(group):
                return f"the script never mentions {' or '.join(group)}"
        imports = parsed.imports
        if cls.requires_imports and imports is not None \
                and imports.isdisjoint(cls.requires_imports):
            return f"the script does not import {' or '.join(cls.requires_imports)}"
        return ""

    def __init_subclass__(cls, **kwargs: object) -> None:
        """Check the recipe contract when a recipe class is created; raises
        :class:`RecipeContractError` listing every problem (see :func:`contract_problems`).
        """
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("abstract", False):
            return
        problems = contract_problems(cls)
        if problems:
            raise RecipeContractError(f"recipe {cls.__module__}.{cls.__qualname__}: "
                                      + "; ".join(problems))

    def __init__(self, context: CodemodContext, recipe_context: RecipeContext) -> None:
        super().__init__(context)
        self.rc = recipe_context
        self.edits: list[str] = []
        #: the labels of the candidate fixes the recipe could make, best first (set by
        #: :meth:`autofix.toolkit.scope.PlannedEdits.choose`; empty: one way only)
        self.options: list[str] = []
        self.reason = ""
        self.first_line = 0
        self.assigned: dict[str, list[str]] = {role: [] for role in self.TRACK}
        #: a wrapper shared with other recipes (``ParsedSource.wrapper``), used when the
        #: module given to ``transform_module`` is its module
        self.shared_wrapper: MetadataWrapper | None = None
        #: no ``@m.visit``/``@m.leave``/``@m.call_if_inside``-style decorator anywhere on
        #: the class (every in-tree recipe): the matcher machinery would only cost time
        self._plain = not (self._extra_visit_funcs or self._extra_leave_funcs
                           or self._matchers)
        #: the module and indented blocks being visited, innermost last (whose body a
        #: statement belongs to), and the cell delimiters of a removed statement waiting
        #: for the next statement of the same body (:meth:`_keep_delimiters`)
        self._bodies: list[cst.CSTNode] = []
        self._orphans: list[cst.EmptyLine] = []
        self._orphans_of: cst.CSTNode | None = None
        self._carried: dict[cst.CSTNode, list[cst.EmptyLine]] = {}

    # A recipe without matcher decorators visits as a plain ``CSTTransformer``: LibCST's
    # matcher layer checks every node for decorators it does not have (LibCST issue #880,
    # ">3x slower ... despite using no decorators"). Measured on 20 transformers modules,
    # every recipe as benchmarks/bench_recipe_corpus.py runs them: 33.5 s -> 20.5 s.
    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, _Statement) and self._orphans \
                and self._bodies and self._orphans_of is self._bodies[-1]:
            self._carried[node], self._orphans = self._orphans, []  # the next statement
        if isinstance(node, (cst.Module, cst.IndentedBlock)):
            self._bodies.append(node)
        if self._plain:
            return cst.CSTTransformer.on_visit(self, node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNodeT, updated_node: cst.CSTNodeT
                 ) -> cst.CSTNodeT | cst.RemovalSentinel:
        if self._plain:
            updated: cst.CSTNodeT | cst.RemovalSentinel = cst.CSTTransformer.on_leave(  # type: ignore[assignment]
                self, original_node, updated_node)  # (LibCST's own narrower type)
        else:
            updated = super().on_leave(original_node, updated_node)
        return self._keep_delimiters(original_node, updated)

    def _keep_delimiters(self, original: cst.CSTNodeT,
                         updated: cst.CSTNodeT | cst.RemovalSentinel
                         ) -> cst.CSTNodeT | cst.RemovalSentinel:
        """Cell delimiters (:data:`CELL_DELIMITER`) above a statement a recipe removes move
        to the next statement of the same body (or the body's footer when it was the last):
        a removed import never merges two cells. Other comments go with their statement."""
        if isinstance(original, (cst.Module, cst.IndentedBlock)):
            self._bodies.pop()
            if self._orphans and self._orphans_of is original \
                    and isinstance(updated, (cst.Module, cst.IndentedBlock)):
                kept, self._orphans = self._orphans, []
                return cast(cst.CSTNodeT, updated.with_changes(footer=[*kept, *updated.footer]))
            return updated
        if not isinstance(original, _Statement):
            return updated
        carried = self._carried.pop(original, [])
        # LibCST drops a statement line whose small statements were all removed
        removed = isinstance(updated, cst.RemovalSentinel) or (
            isinstance(updated, cst.FlattenSentinel) and not updated.nodes) or (
            isinstance(updated, cst.CSTNode) and updated._is_removable()
            and not original._is_removable())
        if removed:
            delimiters = [line for line in original.leading_lines
                          if line.comment is not None and CELL_DELIMITER.match(line.comment.value)]
            if carried or delimiters:
                self._orphans = [*carried, *delimiters]
                self._orphans_of = self._bodies[-1] if self._bodies else None
            return updated
        if carried and isinstance(updated, _Statement):
            return cast(cst.CSTNodeT, updated.with_changes(
                leading_lines=[*carried, *updated.leading_lines]))
        return updated

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if self._plain:
            return cst.CSTTransformer.on_visit_attribute(self, node, attribute)
        return super().on_visit_attribute(node, attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        if self._plain:
            return cst.CSTTransformer.on_leave_attribute(self, original_node, attribute)
        return super().on_leave_attribute(original_node, attribute)

    @contextmanager
    def _handle_metadata_reference(self, module: cst.Module) -> Iterator[cst.Module]:
        """LibCST's own (a fresh ``MetadataWrapper`` per codemod) unless ``module`` is the
        module of :attr:`shared_wrapper`: then its already-resolved metadata are reused."""
        shared = self.shared_wrapper
        if shared is None or shared.module is not module:
            with super()._handle_metadata_reference(module) as tree:
                yield tree
            return
        old = self.context.wrapper
        with self.resolve(shared):
            self.context = replace(self.context, wrapper=shared)
            try:
                yield shared.module
            finally:
                self.context = replace(self.context, wrapper=old)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name) \
                or not isinstance(node.value, cst.Call):
            return
        for role, pattern in self.TRACK.items():
            if self.is_qualified(node.value.func, pattern):
                self.assigned[role].append(node.targets[0].target.value)

    def latest(self, role: str) -> str | None:
        """The last variable assigned from a ``role`` call so far (``None``: none yet)."""
        names = self.assigned.get(role, [])
        return names[-1] if names else None

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        """Visit the module; raises :class:`NotApplicable` when nothing was changed."""
        new = super().transform_module_impl(tree)
        if not self.edits:
            raise NotApplicable(self.reason or self.nothing_to_do)
        return new

    # -- helpers for subclasses ---------------------------------------------------

    def is_model_compile(self, node: cst.Call) -> bool:
        """True for ``X.compile(...)`` where ``X`` holds a Hugging Face TF model (tracked
        under the ``model`` role)."""
        func = node.func
        return (isinstance(func, cst.Attribute) and func.attr.value == "compile"
                and isinstance(func.value, cst.Name)
                and func.value.value in self.assigned.get("model", []))

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """Qualified names of ``node`` (e.g. ``{"transformers.Trainer"}``)."""
        names = self.get_metadata(QualifiedNameProvider, node, set())
        return {q.name for q in names}

    def is_qualified(self, node: cst.CSTNode, pattern: str) -> bool:
        """True when a qualified name of ``node`` fully matches regex ``pattern``."""
        return any(re.fullmatch(pattern, name) for name in self.qualified(node))

    def changed(self, node: cst.CSTNode, description: str) -> None:
        """Record one edit at ``node`` (its line is reported as the fix's line)."""
        self.edits.append(description)
        if not self.first_line:
            self.first_line = self.get_metadata(PositionProvider, node).start.line

    def summary(self) -> str:
        """One line describing what the recipe changed (the commit subject)."""
        return "; ".join(dict.fromkeys(self.edits))
