"""The built-in catalogue, one module per family, registered in classification order: the
language-model family (its categories fire on their own messages, or only on their facts),
labels against the head, then the faults of values, of module and tensor contracts and of
data structures recognised from the facts at the failure (they need those facts, so they
never fire on a message alone and come first), the course's faults, the categories the
call contracts declare (after the categories that name the same failure more closely: ids
past an embedding's rows are tokens added without a resize when the tokenizer shows it),
drift between the
script's classes and the libraries, the reported ones, saving and reloading what was
trained (checkpoints), the libraries' own advice (what no category above claimed), the
training symptoms and their root causes, a diverging loss's causes, the step evidence's
causes and findings, what else a run that trained shows (findings), the silent faults of
data and evaluation, then the run's own outcomes (``reads-stdin``, ``timeout``,
``unknown``). A category that raises nothing (no ``patterns``, ``types`` or ``check``) is
never matched against an exception: its place only orders the findings it reports.
Adding a category is one entry in the family module it belongs to (``docs/recipes.md``
walks through it); its recipes go into the recipes' folder of the same name
(``recipes/labels/`` for the categories of ``labels.py``).

Imports: autofix.types, autofix.paths, autofix.categories, autofix.run.child.contract,
autofix.run.child.call_contracts (the contracts' own declarations: standard library only),
autofix.run.child.symptoms (the stall rule the child and the parent share).
"""

from __future__ import annotations

from autofix.categories.catalogue.advice import ADVICE
from autofix.categories.catalogue.checkpoints import CHECKPOINTS
from autofix.categories.catalogue.contracts import CONTRACTS, DECLARED
from autofix.categories.catalogue.course import COURSE
from autofix.categories.catalogue.data import DATA
from autofix.categories.catalogue.divergence import DIVERGENCE
from autofix.categories.catalogue.drift import DRIFT
from autofix.categories.catalogue.evidence import ROOT_CAUSES as STEP_ROOT_CAUSES
from autofix.categories.catalogue.integrity import INTEGRITY
from autofix.categories.catalogue.labels import LABELS
from autofix.categories.catalogue.llm import LLM
from autofix.categories.catalogue.reported import REPORTED
from autofix.categories.catalogue.run import READS_STDIN, TIMEOUT, UNKNOWN
from autofix.categories.catalogue.symptoms import (
    FINDINGS,
    LR_TOO_HIGH,
    ROOT_CAUSES,
    SLOW_TRIAL,
    SYMPTOMS,
)
from autofix.categories.catalogue.values import VALUES
from autofix.categories.model import Category
from autofix.categories.registry import register_category

#: Every built-in category, in classification order.
BUILT_IN: tuple[Category, ...] = (*LLM, *LABELS, *VALUES, *CONTRACTS, *DATA, *COURSE,
                                  *DECLARED, *DRIFT, *REPORTED, *CHECKPOINTS, *ADVICE, *SYMPTOMS,
                                  *ROOT_CAUSES, *DIVERGENCE, *STEP_ROOT_CAUSES, *FINDINGS,
                                  *INTEGRITY,
                                  READS_STDIN, TIMEOUT, UNKNOWN)

for _category in BUILT_IN:
    register_category(_category)

__all__ = ["ADVICE", "BUILT_IN", "CHECKPOINTS", "CONTRACTS", "COURSE", "DATA", "DECLARED",
           "DIVERGENCE", "DRIFT", "FINDINGS", "INTEGRITY", "LABELS", "LLM", "LR_TOO_HIGH",
           "READS_STDIN", "REPORTED", "ROOT_CAUSES", "SLOW_TRIAL", "STEP_ROOT_CAUSES",
           "SYMPTOMS", "TIMEOUT", "UNKNOWN", "VALUES"]
