"""The one registry of fault categories: the built-in catalogue and plugins' categories.

Classification tries categories in registration order (the built-in catalogue first, in
the order of :mod:`autofix.categories.catalogue`, then plugins' in load order).
"""

from __future__ import annotations

import re

from autofix.categories.model import Category, Kind

#: Origin of the categories autofix ships (plugins register under their distribution).
BUILT_IN = "autofix"

_REGISTRY: dict[str, Category] = {}
_ORIGIN: dict[str, str] = {}
_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def valid_id(category_id: str) -> bool:
    """True for an id of lower-case words joined by ``-`` (``label-out-of-range``)."""
    return bool(_ID.fullmatch(str(category_id)))


def register_category(category: Category, *, origin: str = BUILT_IN,
                      replace: bool = False) -> Category:
    """Add ``category`` to the registry under ``origin`` (``"autofix"``, or the plugin
    that brings it) and return it. A recipe's ``category`` must be registered before the
    recipe class is defined.

    Raises ``ValueError`` for an id already registered (unless ``replace``) or an id that
    is not lower-case words joined by ``-``.
    """
    if not valid_id(category.id):
        raise ValueError(f"category id {category.id!r} must be lower-case words joined by '-'")
    if str(category.id) in _REGISTRY and not replace:
        raise ValueError(f"category {category.id!r} is already registered")
    _REGISTRY[str(category.id)] = category
    _ORIGIN[str(category.id)] = origin
    return category


def drop_plugin_categories() -> None:
    """Forget every category a plugin registered (the plugin loader calls this before it
    loads the plugins again)."""
    for cid in [c for c, origin in _ORIGIN.items() if origin != BUILT_IN]:
        del _REGISTRY[cid], _ORIGIN[cid]


def get_category(category_id: str) -> Category:
    """The category with id ``category_id``; raises ``KeyError`` for an unknown id."""
    return _REGISTRY[str(category_id)]


def is_category(category_id: str) -> bool:
    """True when ``category_id`` is registered (the recipe contract's "known category")."""
    return str(category_id) in _REGISTRY


def all_categories() -> tuple[Category, ...]:
    """Every registered category, in registration order."""
    return tuple(_REGISTRY.values())


def category_origin(category_id: str) -> str:
    """``"autofix"`` for a built-in category, else the plugin that registered it."""
    return _ORIGIN[str(category_id)]


def symptom_ids() -> frozenset[str]:
    """Ids of the training-symptom categories (``nan-loss``, ``stalled-loss``, ...)."""
    return frozenset(c.id for c in _REGISTRY.values() if c.kind is Kind.SYMPTOM)
