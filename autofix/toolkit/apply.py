"""How a recipe is applied to source code (as the engine applies it) and how its
examples are enumerated (for the generic test)."""

from __future__ import annotations

import traceback
from collections.abc import Iterable

import libcst as cst
from libcst.codemod import CodemodContext, SkipFile

from autofix.toolkit.parsed import ParsedSource, parse_source
from autofix.toolkit.recipe import Example, NotApplicable, OtherError, Recipe
from autofix.toolkit.style import keep_style
from autofix.types import Applied, RecipeContext, RecipeCrashed, RecipeOutcome
from autofix.types import NotApplicable as NotApplicableOutcome


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
    why = recipe.precheck(parsed)
    if why:
        return NotApplicableOutcome(why, recipe.id, precheck=True)
    try:
        command, new_module = transform(recipe, parsed, rc)
    except OtherError as exc:  # not this recipe's error: worth no more than a pre-check
        return NotApplicableOutcome(str(exc), recipe.id, precheck=True)
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
    return Applied(new_source, command.summary() or recipe.title, command.first_line,
                   options=tuple(command.options), choice=rc.choice)


def iter_examples(recipes: Iterable[type[Recipe]]) -> Iterable[tuple[type[Recipe], Example]]:
    """Every (recipe, example) pair, in declaration order (used by the generic tests)."""
    for recipe in recipes:
        for example in recipe.examples:
            yield recipe, example
