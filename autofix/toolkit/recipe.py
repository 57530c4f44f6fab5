"""The recipe base class, its examples, and how a recipe is applied to source code.

A recipe is a LibCST codemod (``VisitorBasedCodemodCommand``) that fixes one fault
category. It carries its own examples (Fixit style): ``Example(before, after)`` pairs it
must produce and ``Example(before)`` code it must leave alone. Library calls are matched
by qualified name (``QualifiedNameProvider``), so ``from transformers import Trainer as T``
and ``import transformers as tf; tf.Trainer`` match as well.
"""

from __future__ import annotations

import ast
import re
import sys
import traceback
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import ClassVar

import libcst as cst
import libcst.matchers as m
from libcst.codemod import CodemodContext, SkipFile, VisitorBasedCodemodCommand
from libcst.metadata import (
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from autofix.categories import is_category
from autofix.toolkit import cst_reflection, patterns
from autofix.toolkit.style import keep_style
from autofix.types import (
    Applied,
    DatasetFacts,
    Diagnosis,
    KerasFacts,
    RecipeContext,
    RecipeCrashed,
    RecipeOutcome,
    TrainerFacts,
)
from autofix.types import NotApplicable as NotApplicableOutcome

cst_reflection.install()  # LibCST's method lookups once per class, not per recipe


@dataclass(frozen=True)
class Example:
    """A recipe example: ``after=None`` means the recipe must leave ``before`` unchanged.

    ``versions`` and ``trainers`` stand in for the target environment and probe facts.
    """

    before: str
    after: str | None = None
    versions: dict[str, str] = field(default_factory=lambda: {"transformers": "5.24.0"})
    trainers: tuple[TrainerFacts, ...] = ()
    datasets: tuple[DatasetFacts, ...] = ()
    keras: tuple[KerasFacts, ...] = ()
    evidence: str = "example"
    line: int = 0  # the failing line in ``before`` (0: none)

    def context(self, category: str) -> RecipeContext:
        """The :class:`RecipeContext` this example runs the recipe with."""
        return RecipeContext(
            diagnosis=Diagnosis(category=category, evidence=self.evidence, line=self.line),
            versions=self.versions,
            trainers=self.trainers,
            datasets=self.datasets,
            keras=self.keras,
        )


class NotApplicable(SkipFile):
    """Raised by a recipe when the code does not have the shape it fixes."""


_WORD = re.compile(r"\w+")


class ParsedSource:
    """One source parsed once for every recipe tried on it: its LibCST module, one shared
    ``MetadataWrapper`` (it resolves each metadata provider once and caches it; a recipe
    resolving its own cost 0.3-3 s per file, measured on transformers' modules), and the
    facts :meth:`Recipe.precheck` reads (words, imported top-level modules).

    ``module`` is ``None`` and ``error`` says why when LibCST cannot parse ``source``.
    CST nodes are immutable, so recipes share the tree and its metadata safely.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.error = ""
        self.module: cst.Module | None = None
        try:
            self.module = cst.parse_module(source)
        except cst.ParserSyntaxError as exc:
            self.error = exc.message
        #: Why LibCST could not parse new code in this module's style ("" when it can):
        #: its indent or newline holds characters its parser config rejects (a form feed,
        #: found by the hypothesmith benchmark), which crashes ``AddImportsVisitor``.
        self.unwritable = ""
        if self.module is not None:
            try:
                self.module.config_for_parsing  # noqa: B018 - the validation is the point
            except ValueError as exc:
                self.unwritable = str(exc)

    @cached_property
    def wrapper(self) -> MetadataWrapper:
        """The shared wrapper (its ``module`` is a copy of :attr:`module`, as LibCST makes)."""
        assert self.module is not None, "no wrapper for a source that does not parse"
        return MetadataWrapper(self.module)

    @cached_property
    def words(self) -> frozenset[str]:
        """Every word (``\\w+``) of the source, comments and strings included: a superset
        of its identifiers, attribute names and keywords."""
        return frozenset(_WORD.findall(self.source))

    @cached_property
    def imports(self) -> frozenset[str] | None:
        """Top-level modules the source imports absolutely (``import a.b``, ``from a.b
        import c`` give ``a``), anywhere in the file; ``None`` when Python's own parser
        rejects the source (then no recipe is declined on imports)."""
        try:
            with warnings.catch_warnings():  # e.g. SyntaxWarning on odd literals
                warnings.simplefilter("ignore")
                tree = ast.parse(self.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
        return frozenset(found)


@lru_cache(maxsize=4)
def parse_source(source: str) -> ParsedSource:
    """The :class:`ParsedSource` of ``source``, shared by the recipes tried on it in turn
    (the engine tries each candidate recipe on the same program source)."""
    return ParsedSource(source)


class RecipeContractError(TypeError):
    """A recipe class breaks the recipe contract (raised when the class is created)."""


_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def contract_problems(cls: type[Recipe]) -> list[str]:
    """What ``cls`` lacks to be a recipe (empty: it keeps the contract).

    The contract (Fixit's rule checks): an ``id`` of lower-case words joined by ``-``
    equal to its module's name (``-`` as ``_``: ``recipes/drift_adamw.py`` holds
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
    #: Why the recipe does not apply when it found nothing to change (``self.reason``,
    #: set while visiting, says it more precisely).
    nothing_to_do: ClassVar[str] = "nothing to change"
    #: Other categories whose symptoms this recipe's root cause also produces.
    also_fixes: ClassVar[tuple[str, ...]] = ()
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

    # A recipe without matcher decorators visits as a plain ``CSTTransformer``: LibCST's
    # matcher layer checks every node for decorators it does not have (LibCST issue #880,
    # ">3x slower ... despite using no decorators"). Measured on 20 transformers modules,
    # every recipe as benchmarks/bench_recipe_corpus.py runs them: 33.5 s -> 20.5 s.
    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._plain:
            return cst.CSTTransformer.on_visit(self, node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNodeT, updated_node: cst.CSTNodeT
                 ) -> cst.CSTNodeT | cst.RemovalSentinel:
        if self._plain:
            return cst.CSTTransformer.on_leave(  # type: ignore[return-value]
                self, original_node, updated_node)  # (LibCST's own narrower type)
        return super().on_leave(original_node, updated_node)

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


#: Kept for recipes written before ``autofix.toolkit.patterns`` (the one home of the patterns).
TRAINER_PATTERN = patterns.TRAINER
TOKENIZER_PATTERN = patterns.TOKENIZER
TF_MODEL_PATTERN = patterns.TF_MODEL


class _Index(cst.CSTVisitor):
    """Every node of a tree by type, in source order (one plain walk)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_type: defaultdict[type[cst.CSTNode], list[cst.CSTNode]] = defaultdict(list)

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.by_type[type(node)].append(node)
        return True


#: id(tree) -> (tree, its index); the tree is kept so its id is not reused while cached
_INDEXES: OrderedDict[int, tuple[cst.CSTNode, _Index]] = OrderedDict()


def find(tree: cst.CSTNode, matcher: m.BaseMatcherNode) -> list[cst.CSTNode]:
    """What ``libcst.matchers.findall(tree, matcher)`` finds (same nodes, same order), for
    the whole-tree searches every recipe makes: a matcher on one node type (``m.Call(...)``,
    no metadata matchers) is answered from an index of ``tree`` built by one plain walk and
    kept for the last 8 trees, so the recipes tried on one source share it. Any other
    matcher goes to ``findall``. Why: each ``findall`` walks the whole tree through LibCST's
    matcher layer; on 20 transformers modules these walks took a quarter of the time."""
    kind = getattr(cst, type(matcher).__name__, None)
    if not (isinstance(kind, type) and issubclass(kind, cst.CSTNode)):
        return list(m.findall(tree, matcher))
    entry = _INDEXES.get(id(tree))
    if entry is None or entry[0] is not tree:
        index = _Index()
        tree.visit(index)
        entry = _INDEXES[id(tree)] = (tree, index)
        while len(_INDEXES) > 8:
            _INDEXES.popitem(last=False)
    _INDEXES.move_to_end(id(tree))
    return [n for n in entry[1].by_type.get(kind, ()) if m.matches(n, matcher)]


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


def transform(recipe: type[Recipe], parsed: ParsedSource, rc: RecipeContext
              ) -> tuple[Recipe, cst.Module]:
    """Run ``recipe`` on ``parsed`` (its shared metadata); returns the codemod (its
    ``summary()``/``first_line``) and the new module. Raises :class:`NotApplicable` when the
    pre-check or the recipe declines, ``SkipFile``, or whatever the recipe raises."""
    why = recipe.precheck(parsed)
    if why:
        raise NotApplicable(why)
    if parsed.unwritable:
        raise NotApplicable(f"LibCST cannot write code into this file: {parsed.unwritable}")
    command = recipe(CodemodContext(), rc)
    command.shared_wrapper = parsed.wrapper
    return command, command.transform_module(parsed.wrapper.module)


def apply_recipe(recipe: type[Recipe], source: str, rc: RecipeContext) -> RecipeOutcome:
    """Apply ``recipe`` to ``source`` and say what happened; never raises for a recipe bug.

    The source is parsed once (:func:`parse_source`) for all recipes tried on it, and
    :meth:`Recipe.precheck` declines cheaply before any metadata is resolved.

    Returns :class:`~autofix.types.Applied` with the new source and a summary;
    :class:`~autofix.types.NotApplicable` with the reason when the recipe raised
    :class:`NotApplicable`, changed nothing, or the source does not parse;
    :class:`~autofix.types.RecipeCrashed` with the error and traceback when the recipe
    raised anything else or produced code that does not parse.
    """
    parsed = parse_source(source)
    if parsed.module is None:
        return NotApplicableOutcome(f"the script does not parse: {parsed.error}", recipe.id)
    try:
        command, new_module = transform(recipe, parsed, rc)
    except NotApplicable as exc:
        return NotApplicableOutcome(str(exc) or recipe.nothing_to_do, recipe.id)
    except SkipFile as exc:
        return NotApplicableOutcome(str(exc) or "skipped", recipe.id)
    except Exception as exc:  # noqa: BLE001 - a recipe bug is an outcome, never fatal
        return RecipeCrashed(recipe.id, f"{type(exc).__name__}: {exc}",
                             "".join(traceback.format_exception(exc)))
    new_source = keep_style(source, new_module.code)  # import order, line length
    if new_source == source:
        return NotApplicableOutcome("the recipe found nothing to change", recipe.id)
    try:
        cst.parse_module(new_source)
    except cst.ParserSyntaxError as exc:  # a recipe bug; never commit it
        return RecipeCrashed(recipe.id, f"produced code that does not parse: {exc.message}")
    return Applied(new_source, command.summary() or recipe.title, command.first_line)


def iter_examples(recipes: Iterable[type[Recipe]]) -> Iterable[tuple[type[Recipe], Example]]:
    """Every (recipe, example) pair, in declaration order (used by the generic tests)."""
    for recipe in recipes:
        for example in recipe.examples:
            yield recipe, example
