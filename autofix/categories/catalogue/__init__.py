"""The built-in catalogue, one module per family, registered in classification order:
the course's faults, the reported ones, the training symptoms and their root causes,
then the run's own outcomes (``timeout``, ``unknown``). Adding a category is one entry in
the family module it belongs to (``docs/recipes.md`` walks through it).

Imports: autofix.types, autofix.paths, autofix.categories, autofix.run.child.contract.
"""

from __future__ import annotations

from autofix.categories.catalogue.course import COURSE
from autofix.categories.catalogue.reported import REPORTED
from autofix.categories.catalogue.run import TIMEOUT, UNKNOWN
from autofix.categories.catalogue.symptoms import (
    LR_TOO_HIGH,
    ROOT_CAUSES,
    SLOW_TRIAL,
    SYMPTOMS,
)
from autofix.categories.model import Category
from autofix.categories.registry import register_category

#: Every built-in category, in classification order.
BUILT_IN: tuple[Category, ...] = (*COURSE, *REPORTED, *SYMPTOMS, *ROOT_CAUSES, TIMEOUT, UNKNOWN)

for _category in BUILT_IN:
    register_category(_category)

__all__ = ["BUILT_IN", "COURSE", "LR_TOO_HIGH", "REPORTED", "ROOT_CAUSES", "SLOW_TRIAL",
           "SYMPTOMS", "TIMEOUT", "UNKNOWN"]
