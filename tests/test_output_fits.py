"""Output that fits (issue 27, point 3; issue 40, point 5): tables wrap their text columns
instead of squeezing them, one readable line per recipe in a pipe, the recipe listing
within an 80-column terminal (ids over categories, descriptions wrapped), hints wrapped
to the terminal only on a terminal (in a pipe one line each), and a one-line error for an
interpreter that is not Python."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from rich.console import Console

from autofix.batch.jobs import Row
from autofix.cli.batch import rows_table
from autofix.cli.listing import TEXT_WIDTH, recipes_table
from autofix.reports.terminal import print_hint, print_table
from autofix.toolkit.discovery import all_recipes

from .conftest import AUTOFIX, TEST_SCRIPTS, make_repo, run_autofix


@pytest.mark.process
def test_one_readable_line_per_recipe_in_a_pipe_at_80_columns() -> None:
    done = subprocess.run([*AUTOFIX, "recipes"], capture_output=True, text=True, check=True,
                          env={**os.environ, "COLUMNS": "80"})
    lines = done.stdout.splitlines()
    recipes = all_recipes()
    assert len(lines) == len(recipes) + 1 and lines[0].split() == [
        "recipe", "category", "what", "it", "does"]
    for line, recipe in zip(lines[1:], recipes, strict=True):
        assert line.split()[:2] == [recipe.id, recipe.category]
        assert line.endswith(recipe.title), line  # the whole description, never cut
    assert "…" not in done.stdout and "│" not in done.stdout


def _printed(table: object, width: int) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, force_terminal=True, color_system=None).print(table)
    return out.getvalue().splitlines()


@pytest.mark.parametrize("width", [60, 80, 100])
def test_a_narrow_terminal_gets_the_stacked_table_within_its_width(width: int) -> None:
    """Ids over categories, the description wrapped beside them: no line wider than the
    terminal, every id and category whole on a line of its own, every description whole
    once its lines are joined (issue 40: 86 lines, all wider than 80, before)."""
    lines = _printed(recipes_table(width), width)
    assert max(len(line) for line in lines) <= width
    assert "…" not in "\n".join(lines)
    stacked = _columns(lines)
    for recipe in all_recipes():
        assert recipe.id in stacked and stacked[recipe.id][0] == recipe.category, recipe.id
        # whole, in order (a word longer than the column is folded across two lines)
        assert "".join(stacked[recipe.id][1].split()) == "".join(recipe.title.split())


def _columns(lines: list[str]) -> dict[str, tuple[str, str]]:
    """The stacked table read back: id -> (category, the description's lines joined)."""
    edge = lines[0].index("what it does")
    rows: list[list[str]] = []
    for line in lines[2:]:
        if not line.strip():
            rows.append([])
        elif rows and rows[-1]:
            rows[-1].append(line)
        else:
            rows.append([line])
    found = {}
    for row in filter(None, rows):
        left = [ln[:edge].strip() for ln in row if ln[:edge].strip()]
        found[left[0]] = (left[1], " ".join(" ".join(ln[edge:].split()) for ln in row).strip())
    return found


def test_a_very_narrow_terminal_cuts_ids_rather_than_overflow() -> None:
    lines = _printed(recipes_table(30), 30)
    assert max(len(line) for line in lines) <= 30 and "…" in "\n".join(lines)


@pytest.mark.process
def test_the_recipes_command_fits_an_80_column_terminal() -> None:
    """``autofix recipes`` on a real terminal (a pseudo-terminal, ``COLUMNS=80``)."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen([*AUTOFIX, "recipes"], stdout=follower, stderr=subprocess.PIPE,
                            env={**os.environ, "COLUMNS": "80", "NO_COLOR": "1"})
    os.close(follower)
    chunks = []
    while True:  # read while it writes: a full terminal buffer would block it
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the command ended and closed the terminal: everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=120) == 0
    assert proc.stderr is not None and proc.stderr.read() == b""
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", b"".join(chunks).decode()).replace("\r", "")
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert set(_columns(lines)) == {r.id for r in all_recipes()}


def test_a_wide_terminal_gets_a_wrapping_table() -> None:
    for width in (120, 160):  # ids and categories up to ~32 characters leave 30+ to wrap in
        table = recipes_table(width)
        assert table is not None
        out = io.StringIO()
        Console(file=out, width=width, force_terminal=True, color_system=None).print(table)
        text = out.getvalue()
        assert max(len(line) for line in text.splitlines()) <= width
        cells = [line.split("│")[3].strip() for line in text.splitlines()
                 if line.startswith("│")]
        column = text.splitlines()[1].split("┃")[3]
        assert len(column) >= TEXT_WIDTH
        words = {w for c in cells for w in c.split()}
        flowing = "".join("".join(cells).split())
        for recipe in all_recipes():
            assert "".join(recipe.title.split()) in flowing, recipe.title  # wrapped, whole
            # words, not a squeezed column: only a word longer than the column is folded
            assert all(w in words for w in recipe.title.split() if len(w) < len(column) - 2)


def test_tables_off_a_terminal_keep_one_line_per_row() -> None:
    note = "UserWarning: " + "a very long warning " * 10
    rows = [Row("course/ex01.py", "autofix/course/ex01", status="gave_up", run=3,
                note=note, seconds=12.0, started=time.monotonic()),
            Row("course/ex02.py", "autofix/course/ex02", status="clean", seconds=7.0)]
    out = io.StringIO()
    print_table(Console(file=out, width=80), rows_table(rows, 80, live=False))
    body = [ln for ln in out.getvalue().splitlines() if "course/" in ln]
    assert len(body) == 2 and note.strip() in body[0]  # not wrapped, not cut
    out = io.StringIO()
    print_table(Console(file=out, width=80, force_terminal=True, color_system=None),
                rows_table(rows, 80, live=False))
    lines = out.getvalue().splitlines()
    assert max(len(ln) for ln in lines) <= 80 and len(lines) > 6  # wrapped on a terminal
    assert "…" not in out.getvalue()


def test_hints_wrap_on_a_terminal_only() -> None:
    hint = "commit them (git add train.py && git commit) or stash them " * 3
    pipe = io.StringIO()
    print_hint(Console(file=pipe, width=80, soft_wrap=True), hint)
    assert pipe.getvalue().count("\n") == 1 and len(pipe.getvalue()) > 100
    tty = io.StringIO()
    print_hint(Console(file=tty, width=60, force_terminal=True, color_system=None,
                       soft_wrap=True), hint)
    lines = tty.getvalue().splitlines()
    assert len(lines) > 2 and all(len(ln) <= 60 and ln.startswith("  ") for ln in lines)


@pytest.mark.process
def test_errors_are_one_line_each_in_a_pipe(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": TEST_SCRIPTS / "clean.py"})
    root = Path(str(repo.working_tree_dir))
    done = run_autofix(["train.py", "--branch", "main"], root, env={"COLUMNS": "80"})
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: --branch main is checked out")
    assert lines[1].startswith("  hint: ") and len(lines[1]) > 80


@pytest.mark.process
@pytest.mark.skipif(shutil.which("script") is None, reason="needs util-linux script")
def test_errors_wrap_to_a_terminal(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": TEST_SCRIPTS / "clean.py"})
    command = " ".join([*AUTOFIX, "train.py", "--branch", "main"])
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.run(["script", "-qec", f"stty cols 60; {command}", "/dev/null"],
                          cwd=repo.working_tree_dir, capture_output=True, text=True,
                          timeout=120, env=env)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)
    lines = [ln.rstrip("\r") for ln in plain.splitlines() if ln.strip()]
    hint = next(i for i, ln in enumerate(lines) if ln.startswith("  hint: "))
    assert len(lines) > hint + 1 and lines[hint + 1].startswith("  ")  # wrapped, indented
    assert max(len(ln) for ln in lines) <= 60, lines


@pytest.mark.process
@pytest.mark.parametrize("python", ["/bin/ls", "/no/such/python", "/tmp"])
def test_an_interpreter_that_is_not_python_is_a_one_line_error(tmp_path: Path,
                                                               python: str) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": TEST_SCRIPTS / "clean.py"})
    done = run_autofix(["train.py", "--python", python], Path(str(repo.working_tree_dir)),
                       env={"COLUMNS": "80"})
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"error: --python {python} ")
    assert "import json" not in done.stderr and "too long" not in done.stderr
    assert [h.name for h in repo.heads] == ["main"]
