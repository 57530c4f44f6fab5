"""autofix repairs Hugging Face training scripts: it runs them, diagnoses the traceback or
training symptom, applies a LibCST recipe and commits each fix on a git branch.

The names below are the public surface for plugin authors and for driving autofix from
Python (``docs/plugins.md``): a recipe is a :class:`Recipe` subclass with its
:class:`Example` s, fixing a :class:`Category` registered with
:func:`register_category`; :func:`repair` runs a session with :class:`Settings`.

Packages: :mod:`autofix.loop` (the repair loop), :mod:`autofix.categories` (fault
categories), :mod:`autofix.toolkit` (the recipe toolkit), :mod:`autofix.run` (running a
script; ``run/child`` runs inside the training interpreter), :mod:`autofix.vcs` (git),
:mod:`autofix.batch`, :mod:`autofix.reports`, :mod:`autofix.cli`; ``docs/architecture.md``
maps them.
"""

from __future__ import annotations

from autofix.categories import Category, Kind, Proof, RootCause, register_category
from autofix.loop.engine import repair
from autofix.settings import Settings
from autofix.toolkit import (
    Example,
    NotApplicable,
    Recipe,
    RecipeContractError,
    append_keyword,
    code,
    drop_import,
    find,
    keyword,
    patterns,
    remove_keyword,
    replace_keyword,
)
from autofix.types import Diagnosis, Finding, RecipeContext, SessionResult

__all__ = ["Category", "Diagnosis", "Example", "Finding", "Kind", "NotApplicable", "Proof",
           "Recipe", "RecipeContext", "RecipeContractError", "RootCause", "SessionResult",
           "Settings",
           "append_keyword", "code", "drop_import", "find", "keyword", "patterns",
           "register_category", "remove_keyword", "repair", "replace_keyword"]
