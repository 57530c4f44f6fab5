"""How many recipes reach what they change through the value-source service.

Each recipe is run on its own examples (the before sources, with their contexts) while the
service's entry points count their callers:

- ``values``: the value-source service (:mod:`autofix.toolkit.values`): ``Values`` (its
  ``origins``, ``calls``, ``owners``, ``literal``...) and the owners of settings
  (``CallOwner`` / ``ArgvOwner``: ``get``, ``value``, ``set``, ``remove``);
- ``operators``: the shared edit operators (:mod:`autofix.toolkit.operators`, the repair
  operators of :mod:`autofix.toolkit.source_ops`);
- ``provenance``: the provenance service (:mod:`autofix.toolkit.provenance`);
- ``program`` (reported apart, not counted as the service): ``Program``'s own value
  following (``values``, ``target_values``, ``assigned_values``, ``self_assignments``),
  which the service is built on.

A recipe counts as reaching its target through the service when one of the first three
is called while it runs on one of its examples; the others find what they change by
walking the tree themselves (a visitor's ``leave_Call``, ``m.findall``, ``Program`` alone).

    .venv/bin/python benchmarks/targeting.py          # the count
    .venv/bin/python benchmarks/targeting.py --list   # each recipe and what it used
"""

from __future__ import annotations

import argparse
import functools
import inspect
import os
import sys
from collections import defaultdict
from collections.abc import Callable
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: The recipe running now (its id), and what each recipe called.
_CURRENT: list[str] = [""]
HITS: dict[str, set[str]] = defaultdict(set)
SERVICE = ("values", "operators", "provenance")


def _counted(fn: Callable[..., Any], part: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        if _CURRENT[0]:
            HITS[_CURRENT[0]].add(part)
        return fn(*args, **kwargs)
    return run


def _instrument_class(cls: type, part: str, names: tuple[str, ...] = ()) -> None:
    """Count the calls of ``cls``'s public methods (or of ``names``)."""
    for name, member in list(vars(cls).items()):
        if names and name not in names or not names and name.startswith("_"):
            continue
        if isinstance(member, staticmethod):
            setattr(cls, name, staticmethod(_counted(member.__func__, part)))
        elif inspect.isfunction(member):
            setattr(cls, name, _counted(member, part))


def _instrument_module(module: Any, part: str) -> None:
    """Count the calls of ``module``'s public functions (before any recipe imports them)."""
    for name, member in list(vars(module).items()):
        if inspect.isfunction(member) and not name.startswith("_") and \
                member.__module__ == module.__name__:
            setattr(module, name, _counted(member, part))


def instrument() -> None:
    """Count the service's entry points; done before the recipes are imported, so the
    functions they import by name are the counted ones."""
    from autofix.toolkit import operators, provenance, scope, source_ops, values

    for cls in (values.Values, values.Owner, values.CallOwner, values.ArgvOwner):
        _instrument_class(cls, "values")
    _instrument_class(provenance.Provenance, "provenance")
    for module in (operators, source_ops):
        _instrument_module(module, "operators")
    _instrument_module(provenance, "provenance")
    _instrument_class(scope.Program, "program",
                      ("values", "target_values", "assigned_values", "self_assignments"))


def measure() -> dict[str, set[str]]:
    """Run every recipe on its examples; returns recipe id -> the parts it called."""
    instrument()
    from autofix.toolkit import apply_recipe
    from autofix.toolkit.discovery import all_recipes

    for recipe in all_recipes():
        HITS[recipe.id]  # noqa: B018 - every recipe has a row
        for example in recipe.examples:
            _CURRENT[0] = recipe.id
            try:
                apply_recipe(recipe, example.before, example.context(recipe.category))
            finally:
                _CURRENT[0] = ""
    return dict(HITS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="each recipe and what it used")
    options = parser.parse_args(argv)
    hits = measure()
    through = sorted(r for r, parts in hits.items() if parts & set(SERVICE))
    alone = sorted(r for r in hits if r not in through)
    if options.list:
        for recipe in sorted(hits):
            parts = ", ".join(sorted(hits[recipe])) or "-"
            mark = "service" if recipe in through else "own walk"
            print(f"{recipe:34} {mark:9} {parts}")
        print()
    total = len(hits)
    print(f"{len(through)} of {total} recipes ({100 * len(through) / total:.0f} %) reach "
          f"their target through the service; {len(alone)} walk the tree themselves "
          f"({sum(1 for r in alone if 'program' in hits[r])} of them follow values with "
          "Program alone)")
    for part in SERVICE:
        print(f"  {part}: {sum(1 for r in through if part in hits[r])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
