"""``autofix recipes``: the recipe listing, generated from the recipe classes."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from autofix.cli.boundary import boundary, error_console, output_console
from autofix.toolkit.discovery import all_recipes, origin, plugins

#: Narrowest "what it does" column the table wraps its text into; a terminal too narrow
#: for it gets one line per recipe instead of a squeezed table.
TEXT_WIDTH = 30


def recipes_table(width: int = 200) -> Table | None:
    """The recipe listing shown by ``autofix recipes`` on a ``width``-column terminal:
    ids and categories are never wrapped or cut, the description wraps (never narrower
    than :data:`TEXT_WIDTH`), the module column is left out when it would not fit on
    one line; ``None`` when even that does not fit (then :func:`recipe_lines`)."""
    found = all_recipes()
    ids = max(len(r.id) for r in found)
    cats = max(len(r.category) for r in found)
    modules = max(len(r.__module__) for r in found)
    origins = max(len(origin(r)) for r in found)
    fixed = ids + cats + origins + 13  # the borders and padding of four columns
    if fixed + TEXT_WIDTH > width:
        return None
    with_module = fixed + modules + 3 + 40 <= width
    table = Table()
    table.add_column("recipe", no_wrap=True, min_width=ids)
    table.add_column("category", no_wrap=True, min_width=cats)
    table.add_column("what it does", min_width=TEXT_WIDTH, ratio=1, overflow="fold")
    if with_module:
        table.add_column("module", no_wrap=True, min_width=modules)
    table.add_column("origin", no_wrap=True)
    for recipe in found:
        table.add_row(recipe.id, recipe.category, escape(recipe.title),  # "[column]" is text
                      *([recipe.__module__] if with_module else []), origin(recipe))
    return table


def recipe_lines() -> list[str]:
    """One line per recipe (a pipe, or a terminal too narrow for the table): its id, its
    category and what it does, aligned; a plugin's recipe names its origin."""
    found = all_recipes()
    ids = max(len(r.id) for r in found)
    cats = max(len(r.category) for r in found)
    lines = [f"{'recipe':<{ids}}  {'category':<{cats}}  what it does"]
    for r in found:
        where = origin(r)
        lines.append(f"{r.id:<{ids}}  {r.category:<{cats}}  {r.title}"
                     + ("" if where == "autofix" else f" ({where})"))
    return lines


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
    err = error_console()
    with boundary(err):
        for problem in plugins().problems:  # reported, never fatal
            err.print(f"[yellow]warning:[/yellow] {escape(problem)}")
        if markdown:
            typer.echo(recipes_markdown(), nl=False)
        else:
            console = output_console()
            table = recipes_table(console.width) if console.is_terminal else None
            if table is not None:
                console.print(table)
            else:
                for line in recipe_lines():
                    console.print(line, markup=False)
