"""``autofix recipes``: the recipe listing, generated from the recipe classes."""

from __future__ import annotations

from typing import Annotated

import typer
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from autofix.cli.boundary import boundary, error_console, output_console
from autofix.toolkit.discovery import all_recipes, origin, plugins

#: Narrowest "what it does" column the wide table wraps its text into; a narrower
#: terminal gets the stacked table (:func:`stacked_table`).
TEXT_WIDTH = 30
#: Narrowest "what it does" column of the stacked table: on a terminal narrower than the
#: longest id or category and this, those are cut with an ellipsis instead.
NARROW_TEXT_WIDTH = 12


def recipes_table(width: int = 200) -> Table:
    """The recipe listing shown by ``autofix recipes`` on a ``width``-column terminal,
    never wider than ``width``: ids and categories in columns of their own, never wrapped
    or cut, the description wrapped (never narrower than :data:`TEXT_WIDTH`), the module
    column left out when it would not fit on one line; on a terminal too narrow for that
    (80 columns), :func:`stacked_table`."""
    found = all_recipes()
    ids = max(len(r.id) for r in found)
    cats = max(len(r.category) for r in found)
    modules = max(len(r.__module__) for r in found)
    origins = max(len(origin(r)) for r in found)
    fixed = ids + cats + origins + 13  # the borders and padding of four columns
    if fixed + TEXT_WIDTH > width:
        return stacked_table(width)
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


def stacked_table(width: int) -> Table:
    """The listing for a narrow ``width``-column terminal: two borderless columns, the
    recipe's id over its category (dim), then the description wrapped beside them, a blank
    line between recipes; a plugin's recipe names its origin after the description. The
    id column is cut with an ellipsis only where ``width`` leaves the description fewer
    than :data:`NARROW_TEXT_WIDTH` columns (an 80-column terminal cuts nothing)."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, leading=1)
    # 3: the two columns' padding and the line rich keeps free at a table's edge
    table.add_column("recipe / category", no_wrap=True, overflow="ellipsis",
                     max_width=max(8, width - NARROW_TEXT_WIDTH - 3))
    table.add_column("what it does", ratio=1, overflow="fold", min_width=NARROW_TEXT_WIDTH)
    for recipe in all_recipes():
        where = origin(recipe)
        text = recipe.title + ("" if where == "autofix" else f" ({where})")
        table.add_row(Text.assemble(recipe.id, "\n", (recipe.category, "dim")), Text(text))
    return table


def recipe_lines() -> list[str]:
    """One line per recipe, for a pipe (never cut to the width): its id, its category and
    what it does, aligned; a plugin's recipe names its origin."""
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
            if console.is_terminal:
                console.print(recipes_table(console.width))
            else:  # a pipe: one whole line per recipe, for grep and the like
                for line in recipe_lines():
                    console.print(line, markup=False)
