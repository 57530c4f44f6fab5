"""Scopes and values for recipes: which names resolve where, and where a value comes from.

Not a recipe (the registry skips modules whose name starts with ``_``). :class:`Program`
wraps a module the recipe is visiting (its metadata comes from LibCST's ``ScopeProvider``,
``ParentNodeProvider`` and ``PositionProvider``, resolved by the codemod) and answers:

- which function/class encloses a node, the call sites of a function defined in the
  module, which argument fills a parameter at a call site;
- :meth:`Program.values`: the expressions a value may come from, followed through
  assignments (also tuple unpacking), a helper's ``return``, a parameter filled at the call
  sites the module shows (or its default), and ``self.x = ...`` in the class's methods;
- :meth:`Program.tokenizer_at`: an expression naming a tokenizer that resolves at a node,
  or a plan to thread one in as a new parameter from the call sites that have one.

:class:`PlannedEdits` lets a recipe decide its edits on the original tree first (node ->
function that rewrites it) and apply them in one pass, so an edit can touch a call, a
function's parameters and a class field default at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import cast

import libcst as cst
import libcst.matchers as m
from libcst.metadata import (
    BuiltinAssignment,
    ClassScope,
    ComprehensionScope,
    FunctionScope,
    GlobalScope,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    Scope,
    ScopeProvider,
)

from autofix.toolkit import patterns
from autofix.toolkit.edits import append_keyword, code, replace_keyword
from autofix.toolkit.parsed import find
from autofix.toolkit.recipe import NotApplicable, Recipe

#: How deep :meth:`Program.values` follows a value (assignments, returns, call sites).
MAX_DEPTH = 12

Edit = Callable[[cst.CSTNode], cst.CSTNode]


class PlannedEdits(Recipe):
    """A recipe whose edits are planned on the original tree (``self.plan``: original node
    -> rewrite of its updated copy) and applied while the tree is rebuilt."""

    abstract = True

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider,
                             ScopeProvider, ParentNodeProvider)

    def plan_edit(self, node: cst.CSTNode, edit: Edit, description: str) -> None:
        """Rewrite ``node`` with ``edit`` (several edits of one node compose in order)."""
        previous = self.plan.get(node)
        self.plan[node] = edit if previous is None else _compose(previous, edit)
        self.changed(node, description)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self.plan: dict[cst.CSTNode, Edit] = {}
        #: statements to insert, per block: (index of the anchor, before it, statement)
        #: (:func:`autofix.toolkit.operators.insert_statement`)
        self.insertions: dict[cst.CSTNode, list[tuple[int, bool, cst.CSTNode]]] = {}
        #: called after :meth:`prepare`, before the tree is rebuilt: edits gathered while
        #: planning and applied as one (the value service's argv lists)
        self.finishers: list[Callable[[], None]] = []
        self.program = Program(self, tree)
        self.prepare(tree)
        for finish in self.finishers:
            finish()
        return super().transform_module_impl(tree)

    def prepare(self, tree: cst.Module) -> None:
        """Plan the edits (subclasses); raise :class:`NotApplicable` to decline."""

    def choose(self, options: Sequence[Option]) -> None:
        """Plan one of several candidate fixes, ranked best first: the one
        :attr:`~autofix.types.RecipeContext.choice` names (0 unless the engine asks for
        another while it tries them, :mod:`autofix.loop.candidates`). Their labels are
        kept (:attr:`Recipe.options`) so the engine knows there are several. Raises
        :class:`NotApplicable` when there is none (or no such choice)."""
        if not options:
            raise NotApplicable(self.reason or self.nothing_to_do)
        self.options = [o.label for o in options]
        if self.rc.choice >= len(options):
            raise NotApplicable(f"no candidate {self.rc.choice + 1} (only {len(options)})")
        options[self.rc.choice].plan()

    def on_leave(self, original_node: cst.CSTNodeT, updated_node: cst.CSTNodeT
                 ) -> cst.CSTNodeT | cst.RemovalSentinel:
        updated = super().on_leave(original_node, updated_node)
        edit = self.plan.get(original_node)
        if edit is not None and isinstance(updated, cst.CSTNode):
            return cast(cst.CSTNodeT, edit(updated))
        return updated


@dataclass(frozen=True)
class Option:
    """One candidate fix of a recipe: its one-line ``label`` (``"lr=0.1"``) and the
    function that plans its edits (:meth:`PlannedEdits.choose`)."""

    label: str
    plan: Callable[[], None]


@dataclass
class TokenizerPlan:
    """How to reach a tokenizer from a node: ``expr`` resolves there once ``params`` (a
    function gets a new keyword-only parameter) and ``passes`` (a call site passes it) are
    applied."""

    expr: cst.BaseExpression
    params: list[tuple[cst.FunctionDef, str]] = field(default_factory=list)
    passes: list[tuple[cst.Call, str, cst.BaseExpression]] = field(default_factory=list)

    def describe(self) -> str:
        if not self.params:
            return code(self.expr)
        func, name = self.params[0]
        return (f"{name} (threaded into {func.name.value}() from its call site"
                f"{'s' if len(self.passes) > 1 else ''})")


class Program:
    """Answers scope and value questions about ``tree`` (the module ``recipe`` visits)."""

    def __init__(self, recipe: Recipe, tree: cst.Module) -> None:
        self.r = recipe
        self.tree = tree
        self.classes: dict[str, cst.ClassDef] = {}
        for node in find(tree, m.ClassDef()):
            assert isinstance(node, cst.ClassDef)
            self.classes.setdefault(node.name.value, node)
        self.calls = [c for c in find(tree, m.Call()) if isinstance(c, cst.Call)]
        self._sites: dict[cst.FunctionDef, list[cst.Call]] | None = None
        #: functions given a new tokenizer parameter -> its name
        self.threaded: dict[cst.FunctionDef, str] = {}

    # -- structure -------------------------------------------------------------------

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.r.get_metadata(ParentNodeProvider, node, None)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self.parent(node)
        while parent is not None:
            yield parent
            parent = self.parent(parent)

    def line(self, node: cst.CSTNode) -> int:
        pos = self.r.get_metadata(PositionProvider, node, None)
        return pos.start.line if pos is not None else 0

    def scope(self, node: cst.CSTNode) -> Scope | None:
        return self.r.get_metadata(ScopeProvider, node, None)

    def function_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The innermost function whose body holds ``node`` (``None``: module level)."""
        for anc in self.ancestors(node):
            if isinstance(anc, cst.FunctionDef):
                return anc
            if isinstance(anc, cst.Lambda):
                return None
        return None

    def class_of(self, node: cst.CSTNode) -> cst.ClassDef | None:
        """The class whose method holds ``node``, if any."""
        func = self.function_of(node)
        if func is None:
            return None
        parent = self.parent(func)
        grand = self.parent(parent) if parent is not None else None
        return grand if isinstance(grand, cst.ClassDef) else None

    def resolve(self, name: str, at: cst.CSTNode) -> list[cst.CSTNode]:
        """The nodes that bind ``name`` as seen from ``at`` (assignment targets, params,
        defs, imports); empty when ``name`` does not resolve there."""
        scope = self.scope(at)
        if scope is None or name not in scope:
            return []
        return [a.node for a in scope[name] if hasattr(a, "node")]

    def resolves(self, name: str, at: cst.CSTNode) -> bool:
        """True when ``name`` is bound where ``at`` runs (a local must be assigned on an
        earlier line of the same function; a global, read by module-level code, on an
        earlier line of the module: code inside a function runs later and sees it). A
        builtin (``len``, ``False``) that nothing of the program rebinds is bound."""
        nodes = self.resolve(name, at)
        scope = self.scope(at)
        if not nodes:
            return scope is not None and name in scope \
                and any(isinstance(a, BuiltinAssignment) for a in scope[name])
        here = self.function_of(at)
        if isinstance(scope, FunctionScope) or here is None:
            local = [n for n in nodes if self.function_of(n) is here]
            if local and all(self.line(n) >= self.line(at) and not isinstance(n, cst.Param)
                             for n in local):
                return False
        return True

    def function_called(self, call: cst.Call) -> cst.FunctionDef | None:
        """The function of the module that ``call`` calls (``f(...)`` or ``self.f(...)``)."""
        func = call.func
        if isinstance(func, cst.Name):
            for node in self.resolve(func.value, call):
                if isinstance(node, cst.FunctionDef):
                    return node
        if isinstance(func, cst.Attribute) and m.matches(func.value, m.Name("self")):
            cls = self.class_of(call)
            if cls is not None:
                for stmt in cls.body.body:
                    if isinstance(stmt, cst.FunctionDef) and stmt.name.value == func.attr.value:
                        return stmt
        return None

    def class_called(self, call: cst.Call) -> cst.ClassDef | None:
        """The class of the module that ``call`` instantiates, if any."""
        if isinstance(call.func, cst.Name):
            for node in self.resolve(call.func.value, call):
                if isinstance(node, cst.ClassDef):
                    return node
        return None

    def call_sites(self, func: cst.FunctionDef) -> list[cst.Call]:
        """The calls of ``func`` that the module shows: ``f(...)``, ``self.f(...)``, and for
        a class's ``__init__`` the instantiations of the class (and of its module
        subclasses that define no ``__init__``) and the ``super().__init__(...)`` calls of
        its module subclasses."""
        if self._sites is None:
            self._sites = {}
            for call in self.calls:
                target = self.function_called(call) or self.constructor_called(call)
                if target is not None:
                    self._sites.setdefault(target, []).append(call)
        return self._sites.get(func, [])

    def constructor_called(self, call: cst.Call) -> cst.FunctionDef | None:
        """The module ``__init__`` that ``call`` runs: ``Cls(...)`` for a module class (its
        own ``__init__`` or the first one up its module bases), or ``super().__init__(...)``
        in a method of a module class (the first ``__init__`` up that class's bases)."""
        cls = self.class_called(call)
        if cls is not None:
            return self.init_of(cls)
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "__init__" and \
                m.matches(func.value, m.Call(func=m.Name("super"))):
            owner = self.class_of(call)
            if owner is not None:
                return next((init for base in self.module_bases(owner)
                             if (init := self.init_of(base)) is not None), None)
        return None

    def module_bases(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        """The bases of ``cls`` defined in the module (by name), in order."""
        return [self.classes[b.value.value] for b in cls.bases
                if isinstance(b.value, cst.Name) and b.value.value in self.classes
                and self.classes[b.value.value] is not cls]

    def init_of(self, cls: cst.ClassDef, depth: int = 0) -> cst.FunctionDef | None:
        """The ``__init__`` instances of ``cls`` run, when the module defines it (``cls``'s
        own, else the first up its module bases)."""
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
                return stmt
        if depth > MAX_DEPTH:
            return None
        return next((init for base in self.module_bases(cls)
                     if (init := self.init_of(base, depth + 1)) is not None), None)

    def bound(self, func: cst.FunctionDef, call: cst.Call, param: str
              ) -> cst.BaseExpression | None:
        """The argument ``call`` gives ``func``'s parameter ``param`` (``None``: not given)."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == param:
                return arg.value
        positional = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
        if positional[:1] == ["self"] and (isinstance(call.func, cst.Attribute)
                                           or self.class_called(call) is not None):
            positional = positional[1:]
        given = [a for a in call.args if a.keyword is None]
        for i, arg in enumerate(given):
            if arg.star:
                return None
            if i < len(positional) and positional[i] == param:
                return arg.value
        return None

    def returns(self, func: cst.FunctionDef) -> list[cst.BaseExpression]:
        """The values ``func`` returns (nested functions' returns excluded)."""
        found = []
        for ret in m.findall(func.body, m.Return()):
            assert isinstance(ret, cst.Return)
            if ret.value is not None and self.function_of(ret) is func:
                found.append(ret.value)
        return found

    def is_trainer_call(self, call: cst.Call) -> bool:
        """``Trainer(...)``, ``Seq2SeqTrainer(...)`` or a module class derived from them."""
        if self.r.is_qualified(call.func, patterns.TRAINER):
            return True
        cls = self.class_called(call)
        seen: set[str] = set()
        while cls is not None and cls.name.value not in seen:
            seen.add(cls.name.value)
            bases = [b.value for b in cls.bases]
            if any(self.r.is_qualified(b, patterns.TRAINER) for b in bases):
                return True
            cls = next((self.classes.get(b.value) for b in bases
                        if isinstance(b, cst.Name) and b.value in self.classes), None)
        return False

    # -- values ----------------------------------------------------------------------

    def values(self, expr: cst.BaseExpression, depth: int = 0,
               seen: set[cst.CSTNode] | None = None) -> list[cst.CSTNode]:
        """The expressions ``expr``'s value may come from, followed as far as the module
        shows (see the module docstring). A terminal is a call that is not to a module
        function, a literal, a ``ClassDef`` (a parameter annotated with a module class and
        never filled), or ``expr`` itself when nothing is known."""
        seen = set() if seen is None else seen
        if depth > MAX_DEPTH or expr in seen:
            return []
        seen.add(expr)
        out: list[cst.CSTNode] = []
        if isinstance(expr, cst.Name):
            for target in self.resolve(expr.value, expr):
                out += self.target_values(target, depth + 1, seen)
            return out or [expr]
        if isinstance(expr, cst.Call):
            func = self.function_called(expr)
            if func is not None:
                for ret in self.returns(func):
                    out += self.values(ret, depth + 1, seen)
                return out or [expr]
            return [expr]
        if isinstance(expr, cst.Attribute) and m.matches(expr.value, m.Name("self")):
            for value in self.self_assignments(expr, expr.attr.value):
                out += self.values(value, depth + 1, seen)
            return out or [expr]
        return [expr]

    def target_values(self, target: cst.CSTNode, depth: int = 0,
                      seen: set[cst.CSTNode] | None = None) -> list[cst.CSTNode]:
        """The expressions the name bound at ``target`` may hold (:meth:`values` of a name,
        from one of its bindings): ``target`` is what :meth:`resolve` gives (the ``Name`` of
        an assignment target, of a tuple element being unpacked, or a ``Param``, followed
        to its call sites' arguments and its default). ``depth`` counts the steps already
        followed (the walk stops past ``MAX_DEPTH``), ``seen`` the expressions already
        visited. Empty when the binding holds nothing the module shows (an import, a
        ``for`` target, a parameter never filled)."""
        seen = set() if seen is None else seen
        if isinstance(target, cst.Param):
            func = self.param_function(target)
            out: list[cst.CSTNode] = []
            sites = self.call_sites(func) if func is not None else []
            unfilled = not sites
            for site in sites:
                assert func is not None
                arg = self.bound(func, site, target.name.value)
                if arg is not None:
                    out += self.values(arg, depth, seen)
                else:
                    unfilled = True
            if target.default is not None and unfilled:  # a call site leaves the default
                out += self.values(target.default, depth, seen)
            if not out and target.annotation is not None:
                ann = target.annotation.annotation
                if isinstance(ann, cst.Name) and ann.value in self.classes:
                    out.append(self.classes[ann.value])
            return out
        parent = self.parent(target)
        if isinstance(parent, cst.AssignTarget):
            assign = self.parent(parent)
            if isinstance(assign, cst.Assign):
                return self.values(assign.value, depth, seen)
        if isinstance(parent, cst.AnnAssign) and parent.value is not None:
            return self.values(parent.value, depth, seen)
        if isinstance(parent, cst.Element):  # a, b = value
            tup = self.parent(parent)
            holder = self.parent(tup) if tup is not None else None
            assign = self.parent(holder) if isinstance(holder, cst.AssignTarget) else None
            if isinstance(tup, (cst.Tuple, cst.List)) and isinstance(assign, cst.Assign):
                index = [e for e in tup.elements].index(parent)
                return self._element(assign.value, index, depth, seen)
        return []

    def param_function(self, param: cst.Param) -> cst.FunctionDef | None:
        """The function whose parameter ``param`` is; ``None`` for a lambda's."""
        for anc in self.ancestors(param):
            if isinstance(anc, cst.FunctionDef):
                return anc
            if isinstance(anc, cst.Lambda):
                return None
        return None

    def _element(self, value: cst.BaseExpression, index: int, depth: int,
                 seen: set[cst.CSTNode]) -> list[cst.CSTNode]:
        """Values of element ``index`` of the tuple ``value`` evaluates to."""
        if isinstance(value, (cst.Tuple, cst.List)):
            elements = value.elements
            if index < len(elements) and not isinstance(elements[index], cst.StarredElement):
                return self.values(elements[index].value, depth, seen)
            return []
        if isinstance(value, cst.Call):
            func = self.function_called(value)
            out: list[cst.CSTNode] = []
            if func is not None:
                for ret in self.returns(func):
                    out += self._element(ret, index, depth + 1, seen)
            return out
        if isinstance(value, cst.Name) and depth <= MAX_DEPTH:
            out = []
            for target in self.resolve(value.value, value):
                parent = self.parent(target)
                if isinstance(parent, cst.AssignTarget):
                    assign = self.parent(parent)
                    if isinstance(assign, cst.Assign):
                        out += self._element(assign.value, index, depth + 1, seen)
            return out
        return []

    def assigned_values(self, name: str, at: cst.CSTNode
                        ) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
        """``(target, value)`` of every plain assignment ``name = value`` that binds the
        ``name`` seen from ``at`` (tuple unpacking, parameters, imports left out)."""
        out: list[tuple[cst.CSTNode, cst.BaseExpression]] = []
        for target in self.resolve(name, at):
            parent = self.parent(target)
            assign = self.parent(parent) if isinstance(parent, cst.AssignTarget) else None
            if isinstance(assign, cst.Assign):
                out.append((target, assign.value))
            elif isinstance(parent, cst.AnnAssign) and parent.value is not None:
                out.append((target, parent.value))
        return out

    def bound_at(self, name: str, at: cst.CSTNode, guards: tuple[str, ...] = ()) -> bool:
        """True when ``name`` is surely bound where ``at`` runs: it resolves there, and each
        ``if`` around one of its assignments that does not also hold ``at`` either binds it
        in both branches, or has a test among ``guards`` (the tests that hold at ``at``,
        e.g. from ``x if <test> else None``: :func:`branches`). A rebinding from itself
        (``ds = ds.select(...)``) needs it bound already and is not counted."""
        if not self.resolves(name, at):
            return False
        around_at = set(self.ancestors(at))
        targets = [t for t, value in self.assigned_values(name, at)  # not ds = ds.select()
                   if not m.matches(chain_base(value) or cst.Name("_"), m.Name(name))]
        for target in targets:
            child: cst.CSTNode = target
            for anc in self.ancestors(target):
                if anc in around_at or isinstance(anc, (cst.FunctionDef, cst.Module)):
                    break
                if isinstance(anc, cst.If):
                    in_body = child is anc.body
                    other = anc.orelse if in_body else anc.body
                    both = other is not None and any(
                        t is not target and other in set(self.ancestors(t)) for t in targets)
                    if not both and not (in_body and code(anc.test) in guards):
                        return False
                child = anc
        return True

    def self_assignments(self, at: cst.CSTNode, attr: str) -> list[cst.BaseExpression]:
        """Values assigned to ``self.<attr>`` in the methods of the class holding ``at``."""
        cls = self.class_of(at)
        if cls is None:
            return []
        found: list[cst.BaseExpression] = []
        for assign in m.findall(cls, m.Assign(targets=[m.AssignTarget(
                target=m.Attribute(value=m.Name("self"), attr=m.Name(attr)))])):
            assert isinstance(assign, cst.Assign)
            found.append(assign.value)
        return found

    def same_value(self, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
        """True when ``a`` and ``b`` hold the same value as far as the module shows (a
        common origin, or the same name bound the same way)."""
        if isinstance(a, cst.Subscript) and isinstance(b, cst.Subscript):
            return code(a.slice[0]) == code(b.slice[0]) and self.same_value(a.value, b.value)
        mine = {self._key(v) for v in self.values(a)}
        return any(self._key(v) in mine for v in self.values(b))

    def _key(self, value: cst.CSTNode) -> object:
        """Identity of a value: the node, or for a name nothing more is known about, the
        name with the bindings it resolves to."""
        if isinstance(value, cst.Name):
            return ("name", value.value, frozenset(self.resolve(value.value, value)))
        return value

    def is_tokenizer(self, expr: cst.BaseExpression) -> bool:
        """True when some value of ``expr`` is made by ``AutoTokenizer.from_pretrained``
        (or another ``*Tokenizer*``/``*Processor`` class's)."""
        return any(isinstance(v, cst.Call) and self.r.is_qualified(v.func, patterns.TOKENIZER)
                   for v in self.values(expr))

    # -- tokenizers in scope ---------------------------------------------------------

    def visible_names(self, at: cst.CSTNode) -> list[str]:
        """Names bound in the scopes ``at`` sees, innermost scope first."""
        scope = self.scope(at)
        names: list[str] = []
        first = True
        while scope is not None:
            if first or not isinstance(scope, (ClassScope, ComprehensionScope)):
                for assignment in scope.assignments:
                    # ``import a.b`` binds "a.b" in LibCST's scope: not a name to write
                    if assignment.name not in names and assignment.name.isidentifier():
                        names.append(assignment.name)
            first = False
            if isinstance(scope, GlobalScope):
                break
            scope = scope.parent
        return names

    def tokenizer_in_scope(self, at: cst.CSTNode) -> cst.BaseExpression | None:
        """A name (or ``self.<attr>``) that holds a tokenizer and resolves at ``at``."""
        ranked = sorted(self.visible_names(at), key=lambda n: "tok" not in n.lower())
        for name in ranked:
            if not self.resolves(name, at):
                continue
            targets = self.resolve(name, at)
            if any(isinstance(t, (cst.FunctionDef, cst.ClassDef, cst.ImportAlias))
                   for t in targets):
                continue
            node = cst.Name(name)
            if any(self.is_tokenizer_target(t) for t in targets):
                return node
        cls = self.class_of(at)
        if cls is not None:
            attrs = sorted({cast(cst.Attribute, a.target).attr.value
                            for a in _self_targets(cls)},
                           key=lambda n: "tok" not in n.lower())
            for attr in attrs:
                if any(self.is_tokenizer(v) for v in self.self_assignments(at, attr)):
                    return cst.Attribute(value=cst.Name("self"), attr=cst.Name(attr))
        return None

    def is_tokenizer_target(self, target: cst.CSTNode) -> bool:
        return any(isinstance(v, cst.Call) and self.r.is_qualified(v.func, patterns.TOKENIZER)
                   for v in self.target_values(target, 1, set()))

    def tokenizer_at(self, at: cst.CSTNode) -> TokenizerPlan | str:
        """How to name a tokenizer at ``at``: in scope, else threaded in as a keyword-only
        parameter of the enclosing function from each of its call sites (all of which must
        have one in scope). Returns the reason naming what is missing when neither works."""
        found = self.tokenizer_in_scope(at)
        if found is not None:
            return TokenizerPlan(found)
        func = self.function_of(at)
        if func is not None and func in self.threaded:
            return TokenizerPlan(cst.Name(self.threaded[func]))
        if func is None or self.class_of(at) is not None:
            where = f"{func.name.value}()" if func is not None else "the module"
            return (f"no tokenizer (X = AutoTokenizer.from_pretrained(...)) is in scope in "
                    f"{where}")
        sites = self.call_sites(func)
        if not sites:
            return (f"no tokenizer is in scope in {func.name.value}() and the module never "
                    f"calls {func.name.value}() to pass one")
        param = fresh_name("tokenizer", self.visible_names(at))
        plan = TokenizerPlan(cst.Name(param), params=[(func, param)])
        for site in sites:
            if any(a.keyword is not None and a.keyword.value == param for a in site.args) \
                    or any(a.star == "**" for a in site.args):
                return f"{func.name.value}() is called with **kwargs or already gets {param}="
            outer = self.tokenizer_in_scope(site)
            if outer is None:
                return (f"no tokenizer is in scope in {func.name.value}() nor where it is "
                        f"called (line {self.line(site)})")
            plan.passes.append((site, param, outer))
        return plan


#: Dataset methods that return the dataset transformed (followed back to a ``.map``);
#: ``take``/``skip`` are an ``IterableDataset``'s ``select``.
_CHAIN = {"remove_columns", "rename_column", "rename_columns", "with_format", "select",
          "shuffle", "filter", "cast_column", "cast", "flatten", "sort", "with_transform",
          "take", "skip", "set_format"}


def chain_base(value: cst.CSTNode) -> cst.BaseExpression | None:
    """For ``X.select(...)``, ``X.shuffle().take(n)`` (dataset transforms of :data:`_CHAIN`,
    no ``.map``) the dataset ``X`` they start from; ``None`` for anything else."""
    found = False
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in _CHAIN:
        value, found = value.func.value, True
    return value if found and isinstance(value, cst.BaseExpression) else None


def branches(expr: cst.BaseExpression, guards: tuple[str, ...] = ()
             ) -> Iterator[tuple[cst.BaseExpression, tuple[str, ...]]]:
    """The values a conditional expression may take, each with the tests that hold when it
    is taken (``a if c else None``: ``(a, ("c",))``; ``None`` branches left out; anything
    else is one branch, itself)."""
    if isinstance(expr, cst.IfExp):
        test = code(expr.test)
        yield from branches(expr.body, (*guards, test))
        yield from branches(expr.orelse, (*guards, f"not {test}"))
    elif not m.matches(expr, m.Name("None")):
        yield expr, guards


def map_receiver(value: cst.CSTNode) -> cst.BaseExpression | None:
    """For ``X.map(...)`` (also followed by ``.remove_columns(...)``, ``.shuffle()``...)
    the dataset ``X`` it maps; ``None`` for anything else."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if value.func.attr.value == "map":
            return value.func.value
        if value.func.attr.value not in _CHAIN:
            return None
        value = value.func.value
    return None


def _self_targets(cls: cst.ClassDef) -> Iterator[cst.AssignTarget]:
    for target in m.findall(cls, m.AssignTarget(target=m.Attribute(value=m.Name("self")))):
        assert isinstance(target, cst.AssignTarget)
        yield target


def fresh_name(name: str, taken: list[str]) -> str:
    """``name``, or ``name2``, ``name3``, ... the first not in ``taken`` (the names visible
    where a new one is bound)."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}{n}"
    return candidate


def add_keyword_only(func: cst.FunctionDef, name: str) -> cst.FunctionDef:
    """``func`` with a new keyword-only parameter ``name=None`` (after a ``*`` it adds when
    the function has none)."""
    params = func.params
    new = cst.Param(cst.Name(name), default=cst.Name("None"),
                    equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                          whitespace_after=cst.SimpleWhitespace("")))
    star = params.star_arg
    kwonly = list(params.kwonly_params)
    plain = list(params.params)
    listed = [*plain, *kwonly]
    last = listed[-1] if listed else None
    space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    inner: cst.Comma = space
    if last is not None and isinstance(last.comma, cst.Comma) and params.star_kwarg is None \
            and (kwonly or isinstance(star, cst.MaybeSentinel)):
        # trailing comma layout: the new parameter goes on its own line, same indent
        before = listed[-2].comma if len(listed) > 1 else None
        inner = before if isinstance(before, cst.Comma) else space
        new = new.with_changes(comma=last.comma)
        fixed = last.with_changes(comma=inner)
        if kwonly:
            kwonly[-1] = fixed
        else:
            plain[-1] = fixed
    if isinstance(star, cst.MaybeSentinel):
        star = cst.ParamStar(comma=inner)
    return func.with_changes(params=params.with_changes(
        params=plain, star_arg=star, kwonly_params=[*kwonly, new]))


def apply_tokenizer_plan(recipe: PlannedEdits, plan: TokenizerPlan) -> None:
    """Plan the parameter and call-site edits that thread ``plan``'s tokenizer in."""
    for func, name in plan.params:
        recipe.program.threaded[func] = name
        recipe.plan_edit(func, partial(_add_param, name=name),
                         f"new parameter {name} of {func.name.value}()")
    for site, name, value in plan.passes:
        recipe.plan_edit(site, append_kw(name, value),
                         f"pass {name}={code(value)} at line {recipe.program.line(site)}")


def _compose(first: Edit, second: Edit) -> Edit:
    def run(node: cst.CSTNode) -> cst.CSTNode:
        return second(first(node))
    return run


def _add_param(node: cst.CSTNode, name: str) -> cst.CSTNode:
    assert isinstance(node, cst.FunctionDef)
    return add_keyword_only(node, name)


def _append(node: cst.CSTNode, name: str, value: cst.BaseExpression) -> cst.CSTNode:
    assert isinstance(node, cst.Call)
    return append_keyword(node, name, value)


def _replace(node: cst.CSTNode, name: str, value: cst.BaseExpression) -> cst.CSTNode:
    assert isinstance(node, cst.Call)
    return replace_keyword(node, name, value)


def _same(_node: cst.CSTNode, value: cst.CSTNode) -> cst.CSTNode:
    return value


def append_kw(name: str, value: cst.BaseExpression) -> Edit:
    """Edit: the call with ``name=value`` appended
    (:func:`autofix.toolkit.recipe.append_keyword`)."""
    return partial(_append, name=name, value=value)


def replace_kw(name: str, value: cst.BaseExpression) -> Edit:
    """Edit: the call with its ``name=`` argument's value replaced."""
    return partial(_replace, name=name, value=value)


def replace_with(value: cst.CSTNode) -> Edit:
    """Edit: the node replaced by ``value``."""
    return partial(_same, value=value)


def string_value(node: cst.BaseExpression) -> str | None:
    """The value of a plain string literal (``None`` for anything else)."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def option_dest(call: cst.Call) -> str | None:
    """The ``dest`` of an ``add_argument(...)`` call: ``dest=``, else the first long option
    with dashes as underscores."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dest":
            return string_value(arg.value)
    for arg in call.args:
        if arg.keyword is None:
            text = string_value(arg.value)
            if text and text.startswith("--"):
                return re.sub(r"\W", "_", text[2:])
    return None
