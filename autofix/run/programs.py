"""What autofix runs and patches: a Python script, or a Jupyter notebook as one program.

A notebook's code cells run in order as one program. IPython magics (``%time``,
``%%capture``) and shell lines (``!pip install ...``) are not run: each becomes a comment
placeholder on its own line, so line numbers still map 1:1 to cell lines, and the skipped
lines are listed in the report. Every cell starts with a marker comment, so after a recipe
rewrote the program it splits back into cells; only the cells whose code changed are
written back (their outputs cleared), every other cell, the metadata and the outputs stay
as they were. Reading and writing go through ``nbformat`` (no hand-written JSON).
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

_MARKER = "# %% autofix cell {n}"
_MARKER_RE = re.compile(r"^# %% autofix cell (\d+)$")
_MAGIC = "# autofix-skipped: "
#: Cell magics whose whole cell is not Python (its lines are all skipped).
_FOREIGN_CELL_MAGICS = ("%%bash", "%%sh", "%%html", "%%javascript", "%%writefile", "%%latex",
                        "%%markdown", "%%script", "%%perl", "%%ruby", "%%svg")


class CellsLost(ValueError):
    """A rewritten notebook program lost a cell's marker: it cannot be split back into the
    notebook's cells (its code would merge into the cell before)."""


@dataclass
class Program:
    """Python source built from a document, with the map back to its cells.

    ``lines[i]`` is ``(cell index, 1-based line in the cell)`` for program line ``i + 1``
    (``(-1, 0)`` for a script's own lines and for marker lines); ``skipped`` lists the
    magic and shell lines that were not run, as ``"cell N: line"``.
    """

    source: str
    lines: list[tuple[int, int]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


class Document:
    """A ``.py`` script: the program is the file's text."""

    kind = "script"

    def program(self, content: str) -> Program:
        """The program to run for the file text ``content``."""
        return Program(content)

    def content(self, old_content: str, new_program: str) -> str:
        """The new file text after a recipe turned the program into ``new_program``."""
        return new_program

    def where(self, program: Program, line: int) -> str:
        """How to name program line ``line`` to a person (``"line 12"``)."""
        return f"line {line}"


class NotebookDocument(Document):
    """A ``.ipynb`` notebook (nbformat 4)."""

    kind = "notebook"

    def program(self, content: str) -> Program:
        nb = nbformat.reads(content, as_version=nbformat.NO_CONVERT)  # type: ignore[no-untyped-call]
        out: list[str] = []
        lines: list[tuple[int, int]] = []
        skipped: list[str] = []
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            out.append(_MARKER.format(n=index))
            lines.append((index, 0))
            source_lines = cell.source.split("\n")
            foreign = source_lines[0].strip().startswith(_FOREIGN_CELL_MAGICS)
            for number, line in enumerate(source_lines, 1):
                stripped = line.strip()
                if foreign or stripped.startswith(("%", "!")):
                    skipped.append(f"cell {index}: {stripped}")
                    indent = line[: len(line) - len(line.lstrip())]
                    out.append(f"{indent}{_MAGIC}{line.lstrip()}")
                else:
                    out.append(line)
                lines.append((index, number))
        return Program("\n".join(out) + "\n", lines, skipped)

    def content(self, old_content: str, new_program: str) -> str:
        """The notebook with the cells whose code ``new_program`` changed rewritten; raises
        :class:`CellsLost` when a cell's marker is missing from ``new_program``."""
        nb = nbformat.reads(old_content, as_version=nbformat.NO_CONVERT)  # type: ignore[no-untyped-call]
        cells: dict[int, list[str]] = {}
        current: list[str] | None = None
        preamble: list[str] = []
        program_lines = new_program.split("\n")
        if program_lines and program_lines[-1] == "":
            program_lines.pop()  # the newline that ends the program, not part of a cell
        for line in program_lines:
            marker = _MARKER_RE.match(line)
            if marker:
                current = cells.setdefault(int(marker.group(1)), [])
            elif current is None:
                preamble.append(line)  # e.g. an import a recipe put above the first cell
            else:
                current.append(line)
        lost = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and i not in cells]
        if lost:
            raise CellsLost(f"the edit removed the marker of cell{'s' if len(lost) > 1 else ''} "
                            f"{', '.join(map(str, lost))}: it cannot be written back cell by cell")
        for index, new_lines in cells.items():
            if index == min(cells):
                new_lines[:0] = [ln for ln in preamble if ln.strip()]
            cell = nb.cells[index]
            while new_lines and not new_lines[0].strip() and not cell.source.startswith("\n"):
                new_lines.pop(0)  # the blank line after a removed first statement
            text = "\n".join(_restore(ln) for ln in new_lines)
            if text != cell.source:
                cell.source = text
                cell.outputs = []
                cell.execution_count = None
        written: str = nbformat.writes(nb, version=nbformat.NO_CONVERT)  # type: ignore[no-untyped-call]
        if old_content.endswith("\n") and not written.endswith("\n"):
            written += "\n"  # as nbformat.write and Jupyter leave it
        return written

    def where(self, program: Program, line: int) -> str:
        if 0 < line <= len(program.lines):
            cell, number = program.lines[line - 1]
            if cell >= 0:
                return f"cell {cell}, line {number}"
        return f"line {line}"


def _restore(line: str) -> str:
    stripped = line.lstrip()
    if stripped.startswith(_MAGIC):
        return line[: len(line) - len(stripped)] + stripped[len(_MAGIC):]
    return line


def document_for(path: Path) -> Document:
    """The :class:`Document` handling ``path`` (by suffix: ``.ipynb`` or ``.py``)."""
    return NotebookDocument() if path.suffix == ".ipynb" else Document()


def parse_problem(source: str) -> tuple[int, int, str] | None:
    """Why ``source`` does not parse as Python, read by the interpreter's own parser
    (:func:`ast.parse`; compile-time checks such as ``return`` outside a function are the
    run's): ``(line, column, the parser's message)``, 1-based, column 0 when unknown
    (a null byte); ``None`` when it parses."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning: an invalid escape, `is 1`
            ast.parse(source)
    except SyntaxError as exc:  # IndentationError and TabError included
        return exc.lineno or 1, exc.offset or 0, exc.msg
    except ValueError as exc:  # "source code string cannot contain null bytes"
        return 1, 0, str(exc)
    return None


#: How many imports deep :func:`local_modules` follows the user's own modules.
LOCAL_IMPORT_DEPTH = 3


def local_modules(source: str, folder: Path, depth: int = LOCAL_IMPORT_DEPTH) -> list[Path]:
    """The user's own modules a program imports, found beside it in ``folder`` (``import
    model``, ``from model import Net``, ``from pkg import mod``, ``from pkg.mod import
    f``), then the ones those import, ``depth`` levels deep; existing files only, in the
    order met, without repeats. Absolute imports only (a script has no package)."""
    import ast

    found: dict[Path, None] = {}
    pending = [(source, folder, 0)]
    while pending:
        text, here, level = pending.pop(0)
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        names: list[str] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.append(node.module)
                names += [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            base = here.joinpath(*name.split("."))
            for path in (base.with_suffix(".py"), base / "__init__.py"):
                if path.is_file() and path not in found:
                    found[path] = None
                    if level + 1 < depth:
                        pending.append((path.read_text(encoding="utf-8", errors="replace"),
                                        here, level + 1))
    return list(found)
