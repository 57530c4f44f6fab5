"""LibCST's per-instance reflection, done once per class.

LibCST looks up a visitor's methods by reflection on every *instance*:

- ``MatcherDecoratableTransformer``/``MatcherDecoratableVisitor.__init__`` (every
  codemod, every recipe, and the visitor behind each ``libcst.matchers.findall``) run
  ``dir()`` plus ``getattr`` over about 1,000 attributes three times, to find methods
  decorated with ``@m.visit``/``@m.leave``/``@m.call_if_inside``;
- ``BatchableCSTVisitor.get_visitors`` (every metadata provider resolved) runs
  ``inspect.getmembers``.

The answer depends only on the class, so :func:`install` makes each of these look once per
class and re-bind the methods it found to the new instance. Measured on 30 hypothesmith
programs with the training snippet (``benchmarks/bench_recipe_corpus.py``'s checks, every
recipe, quiet 2-core machine): 47.3 s before, 28.2 s with the two ``@m.visit``/``@m.leave``
gatherers cached, 16.8 s with all four lookups; a new recipe instance had cost about 10 ms
of reflection. The slowness is LibCST's known issue #880 ("MatcherDecoratableTransformer
>3x slower than CSTTransformer, despite using no decorators").

The cache is keyed by class (weakly, so classes made in tests can go) and assumes what
LibCST's own code assumes: the decorated and ``visit_*``/``leave_*`` methods are the
class's, not attributes set on an instance before its ``__init__`` ran.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from libcst import _batched_visitor
from libcst.matchers import _visitors

_installed = False

_Funcs = dict[Any, Any]  # matcher -> sequence of bound methods


#: a method as found on one instance: (function, True) when it was bound to that instance
#: (re-bound to each new one), (the method itself, False) otherwise (a classmethod)
_Unbound = tuple[Callable[..., Any], bool]


def _unbind(method: Callable[..., Any], obj: object) -> _Unbound:
    """What to keep of ``method`` found on ``obj`` without keeping ``obj`` alive."""
    if isinstance(method, types.MethodType) and method.__self__ is obj:
        return method.__func__, True
    return method, False


def _bind(kept: _Unbound, obj: object) -> Callable[..., Any]:
    """The method :func:`_unbind` kept, as found on ``obj``."""
    func, on_instance = kept
    return types.MethodType(func, obj) if on_instance else func


def _per_class_funcs(gather: Callable[[object], _Funcs]) -> Callable[[object], _Funcs]:
    """``gather`` (matcher -> bound methods of an instance), run on the first instance of
    each class; later instances get the same methods bound to them."""
    kept: weakref.WeakKeyDictionary[type, list[tuple[Any, tuple[_Unbound, ...]]]] = \
        weakref.WeakKeyDictionary()

    def per_class(obj: object) -> _Funcs:
        known = kept.get(type(obj))
        if known is None:
            found = gather(obj)
            kept[type(obj)] = [(matcher, tuple(_unbind(f, obj) for f in funcs))
                               for matcher, funcs in found.items()]
            return found
        return {matcher: tuple(_bind(f, obj) for f in funcs) for matcher, funcs in known}

    per_class.__wrapped__ = gather  # type: ignore[attr-defined]
    return per_class


def _per_class_matchers(gather: Callable[[object], dict[Any, Any]]
                        ) -> Callable[[object], dict[Any, Any]]:
    """``gather`` (the gating matchers of ``@m.call_if_inside`` and kin, class-level
    decorator facts), once per class; a fresh dict for each instance (LibCST updates it)."""
    keys: weakref.WeakKeyDictionary[type, tuple[Any, ...]] = weakref.WeakKeyDictionary()

    def per_class(obj: object) -> dict[Any, Any]:
        found = keys.get(type(obj))
        if found is None:
            found = keys[type(obj)] = tuple(gather(obj))
        return dict.fromkeys(found)

    per_class.__wrapped__ = gather  # type: ignore[attr-defined]
    return per_class


def _per_class_visitors(get_visitors: Callable[[Any], Mapping[str, Callable[..., Any]]]
                        ) -> Callable[[Any], Mapping[str, Callable[..., Any]]]:
    """``BatchableCSTVisitor.get_visitors`` once per class, re-bound per instance."""
    kept: weakref.WeakKeyDictionary[type, dict[str, _Unbound]] = weakref.WeakKeyDictionary()

    def per_class(self: Any) -> Mapping[str, Callable[..., Any]]:
        known = kept.get(type(self))
        if known is None:
            found = get_visitors(self)
            kept[type(self)] = {name: _unbind(f, self) for name, f in found.items()}
            return dict(found)
        return {name: _bind(f, self) for name, f in known.items()}

    per_class.__wrapped__ = get_visitors  # type: ignore[attr-defined]
    return per_class


def install() -> None:
    """Replace LibCST's per-instance reflection with the per-class one (idempotent; a
    LibCST without these internals is left as it is)."""
    global _installed
    if _installed:
        return
    _installed = True
    names = ("_gather_constructed_visit_funcs", "_gather_constructed_leave_funcs",
             "_gather_matchers")
    if not all(hasattr(_visitors, n) for n in names) \
            or not hasattr(_batched_visitor.BatchableCSTVisitor, "get_visitors"):
        return
    _visitors._gather_constructed_visit_funcs = _per_class_funcs(  # type: ignore[assignment]
        _visitors._gather_constructed_visit_funcs)
    _visitors._gather_constructed_leave_funcs = _per_class_funcs(  # type: ignore[assignment]
        _visitors._gather_constructed_leave_funcs)
    _visitors._gather_matchers = _per_class_matchers(  # type: ignore[assignment]
        _visitors._gather_matchers)
    _batched_visitor.BatchableCSTVisitor.get_visitors = (  # type: ignore[method-assign]
        _per_class_visitors(_batched_visitor.BatchableCSTVisitor.get_visitors))  # type: ignore[assignment]
