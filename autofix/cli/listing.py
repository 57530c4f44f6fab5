"""``autofix recipes``: the recipe listing, generated from the recipe classes."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from autofix.cli.boundary import boundary
from autofix.toolkit.discovery import all_recipes, origin, plugins


def recipes_table(width: int = 200) -> Table:
    """The recipe listing shown by ``autofix recipes`` (generated from the classes) for a
    ``width``-column console: ids and categories are never wrapped or cut, the description
    wraps, and the module column is left out when it would not fit on one line."""
    found = all_recipes()
    ids = max(len(r.id) for r in found)
    cats = max(len(r.category) for r in found)
    modules = max(len(r.__module__) for r in found)
    with_module = ids + cats + modules + 30 + 13 + 12 <= width
    table = Table()
    table.add_column("recipe", no_wrap=True, min_width=ids)
    table.add_column("category", no_wrap=True, min_width=cats)
    table.add_column("what it does")
    if with_module:
        table.add_column("module", no_wrap=True, min_width=modules)
    table.add_column("origin", no_wrap=True)
    for recipe in found:
        table.add_row(recipe.id, recipe.category, recipe.title,
                      *([recipe.__module__] if with_module else []), origin(recipe))
    return table


def recipes_markdown() -> str:
    """The same listing as a Markdown table (the copy in docs/recipes.md is checked against it)."""
    rows = ["| recipe | category | what it does | module |", "|---|---|---|---|"]
    rows += [f"| `{r.id}` | `{r.category}` | {r.title} | `{r.__module__}` |"
             for r in all_recipes()]
    return "\n".join(rows) + "\n"


def recipes(
    markdown: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False,
) -> None:
    """List the fix recipes autofix knows, with their origin (autofix or a plugin)."""
    err = Console(stderr=True, highlight=False)
    with boundary(err):
        for problem in plugins().problems:  # reported, never fatal
            err.print(f"[yellow]warning:[/yellow] {escape(problem)}")
        if markdown:
            typer.echo(recipes_markdown(), nl=False)
        else:
            console = Console()
            console.print(recipes_table(console.width))
