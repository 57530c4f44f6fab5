"""Fault categories: how each fault shows, the facts it needs, and its behaviour.

One home per category: its data and behaviour are one :class:`Category` in a family
module of :mod:`autofix.categories.catalogue` (plugins bring their own), registered in the
one registry (:mod:`autofix.categories.registry`). Traceback text is read by
:mod:`autofix.categories.tracebacks`; where an error was raised by
:mod:`autofix.categories.sites`.

Imports: :mod:`autofix.types`, :mod:`autofix.paths`, the child's contract
(:mod:`autofix.run.child.contract`), the call contracts' declarations
(:mod:`autofix.run.child.call_contracts`) and the stall rule the child and the parent share
(:mod:`autofix.run.child.symptoms`) only; nothing of the loop, the runner, git or reports.
"""

from __future__ import annotations

from autofix.categories import catalogue
from autofix.categories.catalogue import LR_TOO_HIGH, SLOW_TRIAL, TIMEOUT, UNKNOWN
from autofix.categories.model import (
    EXAMPLES_DIR,
    SOURCE_SCAN,
    Category,
    Kind,
    Place,
    Proof,
    RootCause,
)
from autofix.categories.registry import (
    all_categories,
    category_origin,
    drop_plugin_categories,
    get_category,
    is_category,
    register_category,
    symptom_ids,
)

__all__ = ["EXAMPLES_DIR", "LR_TOO_HIGH", "SLOW_TRIAL", "SOURCE_SCAN", "TIMEOUT", "UNKNOWN",
           "Category", "Kind", "Place", "Proof", "RootCause", "all_categories", "catalogue",
           "category_origin", "drop_plugin_categories", "get_category", "is_category",
           "register_category", "symptom_ids"]
