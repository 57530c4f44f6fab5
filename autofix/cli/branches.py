"""``autofix log``, ``autofix undo`` and ``autofix branches``: autofix's branches after a
session (the git work is in :mod:`autofix.vcs.repo`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from autofix.cli.boundary import boundary, error_console, output_console
from autofix.errors import AutofixError
from autofix.reports.terminal import print_table
from autofix.vcs.repo import (
    Repo,
    autofix_branches,
    branch_log,
    delete_branch,
    repo_containing,
    undo_last,
)


def _repo() -> Repo:
    return repo_containing(Path.cwd())


def _branch(repo: Repo, branch: str | None) -> str:
    """``branch``, else the only autofix branch there is (:class:`AutofixError`, exit 2,
    when there is none or several)."""
    if branch:
        return branch
    names = [b.name for b in autofix_branches(repo)]
    if len(names) == 1:
        return names[0]
    raise AutofixError("no autofix branch in this repository" if not names else
                       f"name the branch: {', '.join(names)}")


def register(app: typer.Typer) -> None:
    """Add the three commands to ``app``."""

    @app.command("log")
    def log(branch: Annotated[str | None, typer.Argument(
            help="An autofix branch (default: the only one).")] = None) -> None:
        """List a branch's autofix commits, newest first, from their trailers."""
        console, err = output_console(), error_console()
        with boundary(err):
            repo = _repo()
            name = _branch(repo, branch)
            commits = branch_log(repo, name)
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
        console, err = output_console(), error_console()
        with boundary(err):
            repo = _repo()
            name = _branch(repo, branch)
            dropped = undo_last(repo, name)
        console.print(f"dropped {dropped.sha[:8]} ({dropped.category}: "
                      f"{escape(dropped.subject)}) from {name}; "
                      f"`git branch -f {name} {dropped.sha[:8]}` brings it back")

    @app.command("branches")
    def branches(prune: Annotated[bool, typer.Option(
            "--prune", help="Delete the autofix branches already merged into HEAD.")] = False,
    ) -> None:
        """List autofix's branches: autofix commits at the tip, merged into HEAD or not."""
        console, err = output_console(), error_console()
        with boundary(err):
            repo = _repo()
            found = autofix_branches(repo)
        table = Table("branch", "commits", "merged", "last fix")
        table.columns[0].no_wrap = True
        last = table.columns[3]
        last.min_width, last.ratio, last.overflow = 20, 1, "fold"  # wraps, never squeezed
        for info in found:
            table.add_row(info.name, str(info.commits), "yes" if info.merged else "no",
                          escape(info.subject.removeprefix("autofix: ")))
        if not prune:
            if found:
                print_table(console, table)
            else:
                console.print("no autofix branch")
            return
        deleted = [i for i in found if i.merged and not i.checked_out]
        with boundary(err):
            for info in deleted:
                delete_branch(repo, info)
                console.print(f"deleted {info.name} (merged)")
        if not deleted:
            console.print("no merged autofix branch to delete")
