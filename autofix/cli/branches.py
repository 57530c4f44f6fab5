"""``autofix log``, ``autofix undo`` and ``autofix branches``: autofix's branches after a
session (the git work is in :mod:`autofix.vcs.repo`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from autofix.errors import AutofixError
from autofix.vcs.repo import (
    Repo,
    autofix_branches,
    branch_log,
    delete_branch,
    repo_containing,
    undo_last,
)

EXIT_USAGE = 2


def _repo(err: Console) -> Repo:
    try:
        return repo_containing(Path.cwd())
    except AutofixError as exc:
        err.print(f"[bold red]error:[/bold red] {escape(str(exc))}")
        raise typer.Exit(EXIT_USAGE) from None


def _branch(repo: Repo, err: Console, branch: str | None) -> str:
    """``branch``, else the only autofix branch there is (exit 2 when ambiguous/none)."""
    if branch:
        return branch
    names = [b.name for b in autofix_branches(repo)]
    if len(names) == 1:
        return names[0]
    err.print("[bold red]error:[/bold red] " + (
        "no autofix branch in this repository" if not names else
        f"name the branch: {', '.join(names)}"))
    raise typer.Exit(EXIT_USAGE)


def _fail(err: Console, exc: AutofixError) -> typer.Exit:
    err.print(f"[bold red]error:[/bold red] {escape(str(exc))}")
    if exc.hint:
        err.print(f"  hint: {escape(exc.hint)}")
    return typer.Exit(EXIT_USAGE)


def register(app: typer.Typer) -> None:
    """Add the three commands to ``app``."""

    @app.command("log")
    def log(branch: Annotated[str | None, typer.Argument(
            help="An autofix branch (default: the only one).")] = None) -> None:
        """List a branch's autofix commits, newest first, from their trailers."""
        console, err = Console(highlight=False, soft_wrap=True), Console(stderr=True)
        repo = _repo(err)
        name = _branch(repo, err, branch)
        try:
            commits = branch_log(repo, name)
        except AutofixError as exc:
            raise _fail(err, exc) from None
        if not commits:
            console.print(f"{name}: no autofix commit at its tip")
            return
        for c in commits:
            what = "snapshot" if c.snapshot else f"{c.category} ({c.recipe})"
            via = f" via {c.via}" if c.via else ""
            console.print(f"{c.sha[:8]}  {c.date[:19]}  [bold]{escape(what)}[/bold]{via}  "
                          f"{escape(c.subject.removeprefix('autofix: '))}")

    @app.command("undo")
    def undo(branch: Annotated[str | None, typer.Argument(
            help="An autofix branch (default: the only one).")] = None) -> None:
        """Drop the branch's last autofix commit (only autofix's own, only at the tip, never
        on a checked-out branch)."""
        console, err = Console(highlight=False), Console(stderr=True)
        repo = _repo(err)
        name = _branch(repo, err, branch)
        try:
            dropped = undo_last(repo, name)
        except AutofixError as exc:
            raise _fail(err, exc) from None
        console.print(f"dropped {dropped.sha[:8]} ({dropped.category}: "
                      f"{escape(dropped.subject)}) from {name}; "
                      f"`git branch -f {name} {dropped.sha[:8]}` brings it back")

    @app.command("branches")
    def branches(prune: Annotated[bool, typer.Option(
            "--prune", help="Delete the autofix branches already merged into HEAD.")] = False,
    ) -> None:
        """List autofix's branches: autofix commits at the tip, merged into HEAD or not."""
        console, err = Console(highlight=False), Console(stderr=True)
        repo = _repo(err)
        found = autofix_branches(repo)
        table = Table("branch", "commits", "merged", "last fix")
        table.columns[0].no_wrap = True
        for info in found:
            table.add_row(info.name, str(info.commits), "yes" if info.merged else "no",
                          escape(info.subject.removeprefix("autofix: ")))
        if not prune:
            console.print(table if found else "no autofix branch")
            return
        deleted = [i for i in found if i.merged and not i.checked_out]
        for info in deleted:
            delete_branch(repo, info)
            console.print(f"deleted {info.name} (merged)")
        if not deleted:
            console.print("no merged autofix branch to delete")
