"""The recipe toolkit: what a recipe is built from, and how it is applied.

A recipe is one LibCST codemod class in one module, with its own examples (Fixit style):
:class:`Recipe` (the base; its contract is checked when the class is created),
:class:`Example` (before/after pairs and code to leave alone), :class:`NotApplicable`
(raised when the code does not have the shape the recipe fixes). Around it:

* :mod:`~autofix.toolkit.edits`: keyword arguments added, replaced, removed with the
  call's formatting kept (:func:`keyword`, :func:`argument`, :func:`append_keyword`, ...);
* :mod:`~autofix.toolkit.patterns`: qualified-name patterns of the library calls matched;
* :mod:`~autofix.toolkit.insert`: scope-aware statement insertion (a new statement where
  its names resolve);
* :mod:`~autofix.toolkit.scope`: :class:`~autofix.toolkit.scope.PlannedEdits`, recipes
  that follow a value to where it is defined (a tokenizer behind ``self.tok``, a dataset
  behind a helper's return);
* :mod:`~autofix.toolkit.statements`, :mod:`~autofix.toolkit.versions`,
  :mod:`~autofix.toolkit.style` (the user's formatting kept), :mod:`~autofix.toolkit.
  parsed` (one parse shared by every recipe tried), :mod:`~autofix.toolkit.apply`
  (:func:`apply_recipe`, as the engine applies it), :mod:`~autofix.toolkit.discovery`
  (the in-tree recipes and plugins').

Imports: :mod:`autofix.types` and :mod:`autofix.categories`; nothing of the loop, the
runner, git or reports. The names below are the public surface (also re-exported by
:mod:`autofix` for plugin authors).
"""

from __future__ import annotations

from autofix.toolkit import patterns
from autofix.toolkit.apply import apply_recipe, iter_examples, transform
from autofix.toolkit.edits import (
    append_keyword,
    argument,
    code,
    drop_import,
    keyword,
    remove_keyword,
    replace_keyword,
)
from autofix.toolkit.parsed import ParsedSource, find, parse_source
from autofix.toolkit.recipe import (
    Example,
    NotApplicable,
    OtherError,
    Recipe,
    RecipeContractError,
    contract_problems,
)
from autofix.toolkit.versions import at_least

__all__ = ["Example", "NotApplicable", "OtherError", "ParsedSource", "Recipe",
           "RecipeContractError",
           "append_keyword", "apply_recipe", "argument", "at_least", "code", "contract_problems",
           "drop_import", "find", "iter_examples", "keyword", "parse_source", "patterns",
           "remove_keyword", "replace_keyword", "transform"]
