"""The speed-ups under the recipes give LibCST's own answers: the per-class method lookups
(:mod:`autofix.toolkit.cst_reflection`), plain visits for recipes without matcher decorators, and
:func:`autofix.toolkit.recipe.find`."""

from __future__ import annotations

import types

import libcst as cst
import libcst.matchers as m
from libcst._batched_visitor import BatchableCSTVisitor
from libcst.codemod import CodemodContext
from libcst.matchers import _visitors
from libcst.metadata import (
    ExpressionContextProvider,
    ParentNodeProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

import autofix.toolkit.recipe  # noqa: F401 - installs the per-class lookups
from autofix.toolkit import Recipe, find
from autofix.toolkit.discovery import all_recipes
from autofix.types import Diagnosis, RecipeContext
from tests.conftest import SAMPLES


def _same(a: object, b: object) -> bool:
    """Two bound methods of the same function on the same object (``==`` on methods)."""
    return isinstance(a, types.MethodType) and a == b


def _context(category: str) -> RecipeContext:
    return RecipeContext(Diagnosis(category, "test", line=1), {}, ())


def test_recipes_get_libcst_s_own_methods_bound_to_each_instance() -> None:
    recipes = list(all_recipes())
    assert len(recipes) > 25
    for recipe in recipes:
        first, second = (recipe(CodemodContext(), _context(recipe.category)) for _ in "ab")
        for gathered in (first._extra_visit_funcs, second._extra_visit_funcs,
                         first._extra_leave_funcs, second._extra_leave_funcs):
            assert gathered == {}  # no in-tree recipe uses @m.visit/@m.leave
        assert first._plain and second._plain


class _Decorated(Recipe):
    """Not a recipe (abstract): a codemod with each kind of matcher decorator."""

    abstract = True

    def __init__(self, context: CodemodContext, rc: RecipeContext) -> None:
        super().__init__(context, rc)
        self.inside: list[str] = []
        self.visited: list[str] = []
        self.left: list[str] = []

    @m.call_if_inside(m.FunctionDef(name=m.Name("f")))
    def visit_Name(self, node: cst.Name) -> None:
        self.inside.append(node.value)

    @m.visit(m.Call(func=m.Name("g")))
    def on_g(self, node: cst.Call) -> None:
        self.visited.append(cst.ensure_type(node.func, cst.Name).value)

    @m.leave(m.Integer())
    def bump(self, original: cst.Integer, updated: cst.Integer) -> cst.Integer:
        self.left.append(updated.value)
        self.changed(original, "bumped")
        return updated.with_changes(value=str(int(updated.value) + 1))


def test_matcher_decorators_still_work_on_every_instance() -> None:
    source = "def f():\n    a = g(1)\n\ndef h():\n    b = g(2)\n"
    outputs = []
    for _ in range(3):  # the first instance gathers, the later ones use the per-class answer
        codemod = _Decorated(CodemodContext(), _context("raw-dataset"))
        assert not codemod._plain
        outputs.append(codemod.transform_module(cst.parse_module(source)).code)
        assert codemod.inside == ["f", "a", "g"]  # only inside f() (its name too)
        assert codemod.visited == ["g", "g"]
        assert codemod.left == ["1", "2"]
        # the methods LibCST calls are bound to this instance, not the first one
        (funcs,) = codemod._extra_leave_funcs.values()
        assert all(getattr(f, "__self__", None) is codemod for f in funcs)
    assert outputs == ["def f():\n    a = g(2)\n\ndef h():\n    b = g(3)\n"] * 3


def test_per_class_lookups_equal_libcst_s_own() -> None:
    gather_visit = _visitors._gather_constructed_visit_funcs
    gather_leave = _visitors._gather_constructed_leave_funcs
    gather_matchers = _visitors._gather_matchers
    own = (gather_visit.__wrapped__, gather_leave.__wrapped__,  # type: ignore[attr-defined]
           gather_matchers.__wrapped__)  # type: ignore[attr-defined]
    for _ in range(2):
        codemod = _Decorated(CodemodContext(), _context("raw-dataset"))
        for cached, original in zip((gather_visit, gather_leave), own[:2], strict=True):
            mine, theirs = cached(codemod), original(codemod)
            assert mine.keys() == theirs.keys() and len(mine) == 1
            assert all(_same(a, b) for k in mine for a, b in zip(mine[k], theirs[k], strict=True))
        assert gather_matchers(codemod) == own[2](codemod) and len(own[2](codemod)) == 1
    get_visitors = BatchableCSTVisitor.get_visitors
    for provider in (ScopeProvider, QualifiedNameProvider, ParentNodeProvider,
                     ExpressionContextProvider):  # the batchable ones (not PositionProvider)
        for _ in range(2):
            instance: BatchableCSTVisitor = provider()  # type: ignore[assignment]
            by_name = get_visitors(instance)
            own_names = get_visitors.__wrapped__(instance)  # type: ignore[attr-defined]
            assert by_name.keys() == own_names.keys() and len(by_name) >= 1
            assert all(_same(by_name[k], own_names[k]) for k in by_name)


def test_find_gives_findall_s_nodes_in_findall_s_order() -> None:
    sources = sorted((SAMPLES / "styles").glob("*.py"))[:4]
    assert sources
    matchers: list[m.BaseMatcherNode] = [
        m.Call(), m.ClassDef(), m.FunctionDef(), m.Name("tok"),
        m.Call(func=m.Attribute(attr=m.Name("map"))), m.Arg(keyword=m.Name("num_labels")),
        m.Name() | m.Attribute()]  # not one node type: goes to findall
    compared = 0
    for path in sources:
        tree = cst.parse_module(path.read_text(encoding="utf-8"))
        for matcher in matchers:
            expected = list(m.findall(tree, matcher))
            assert find(tree, matcher) == expected
            assert all(a is b for a, b in zip(find(tree, matcher), expected, strict=True))
            compared += len(expected)
        other = cst.parse_module(path.read_text(encoding="utf-8"))  # equal code, new tree
        assert all(a is not b for a, b in zip(find(other, m.Call()), find(tree, m.Call()),
                                              strict=True))
    assert compared > 100
