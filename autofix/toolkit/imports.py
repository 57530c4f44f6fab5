"""New import statements put where the file's import order wants them.

LibCST's ``AddImportsVisitor`` (the one way recipes add an import) appends a new statement
after the file's last import: ``import numpy as np`` lands under ``from transformers
import (...)``, and ruff's isort rule (I001) flags the file. This moves each import
statement an edit added at the top of the module into the section isort and ruff give
it (``__future__``, standard library, third party, then the file's own and relative
imports, the sections separated by a blank line), and, inside the section, before the
first statement it sorts ahead of (plain ``import x`` lines before ``from x import y``
lines, modules compared case-insensitively: isort's and ruff's defaults). The file's
sections are read from its own blank-line groups, so a group of the user's own modules
after the third-party group stays last. Names added to an existing ``from`` line are
:mod:`autofix.toolkit.style`'s business.
"""

from __future__ import annotations

import sys

import libcst as cst

#: isort's and ruff's sections, in file order (``known-first-party`` and relative
#: imports come after the third-party section; a module is not known to be first-party
#: here, so only the file's own grouping puts one there).
FUTURE, STDLIB, THIRD_PARTY, LOCAL = range(4)


def _module(stmt: cst.SimpleStatementLine) -> tuple[str, int, bool]:
    """``(dotted module, leading dots, is a from-import)`` of an import statement."""
    node = stmt.body[0]
    code = cst.Module([]).code_for_node
    if isinstance(node, cst.ImportFrom):
        name = code(node.module) if node.module is not None else ""
        return name, len(node.relative), True
    assert isinstance(node, cst.Import)
    return code(node.names[0].name), 0, False


def section(stmt: cst.SimpleStatementLine) -> int:
    """The isort section of an import statement: :data:`FUTURE`, :data:`STDLIB` (a module
    of ``sys.stdlib_module_names``), :data:`LOCAL` (a relative import) or
    :data:`THIRD_PARTY` (anything else)."""
    module, dots, _ = _module(stmt)
    top = module.split(".")[0]
    if dots:
        return LOCAL
    if top == "__future__":
        return FUTURE
    return STDLIB if top in sys.stdlib_module_names else THIRD_PARTY


def sort_key(stmt: cst.SimpleStatementLine) -> tuple[bool, str]:
    """Where an import statement sorts inside its section: ``import x`` lines first,
    then ``from x import y`` lines, each by module, case-insensitively."""
    module, dots, is_from = _module(stmt)
    return is_from, "." * dots + module.lower()


def _is_import(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
        and isinstance(stmt.body[0], cst.Import | cst.ImportFrom)


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
        and isinstance(stmt.body[0], cst.Expr) \
        and isinstance(stmt.body[0].value, cst.SimpleString | cst.ConcatenatedString)


def _blank(stmt: cst.SimpleStatementLine) -> bool:
    """``stmt`` starts a group: a blank line (not only comments) stands above it."""
    return any(line.comment is None for line in stmt.leading_lines)


def _header(module: cst.Module) -> tuple[int, int]:
    """``(start, end)``: the module's leading import statements, after its docstring."""
    start = 1 if module.body and _is_docstring(module.body[0]) else 0
    end = start
    while end < len(module.body) and _is_import(module.body[end]):
        end += 1
    return start, end


def _existing(before: cst.Module) -> tuple[set[str], set[str]]:
    """The top-level ``import`` statements of ``before`` (their code) and the modules its
    top-level ``from`` statements import from (a name added to one is no new line)."""
    code = cst.Module([]).code_for_node
    plain: set[str] = set()
    froms: set[str] = set()
    for stmt in before.body:
        if _is_import(stmt):
            assert isinstance(stmt, cst.SimpleStatementLine)
            module, dots, is_from = _module(stmt)
            if is_from:
                froms.add("." * dots + module)
            else:
                plain.add(code(stmt.body[0]))
    return plain, froms


def _place(header: list[cst.SimpleStatementLine], new: cst.SimpleStatementLine,
           first: bool) -> list[cst.SimpleStatementLine]:
    """``header`` with ``new`` inserted where its section and sort key put it; ``first``:
    the header opens the module (no blank line is put above it there)."""
    groups: list[list[int]] = []
    for i, stmt in enumerate(header):
        if not groups or _blank(stmt):
            groups.append([])
        groups[-1].append(i)
    mine = section(new)
    bare = new.with_changes(leading_lines=())
    same = [g for g in groups if section(header[g[0]]) == mine]
    out = list(header)
    if same:  # into its section's group, before the first line it sorts ahead of
        group = same[0]
        at = next((i for i in group if sort_key(new) < sort_key(header[i])), group[-1] + 1)
        if at == group[0]:  # the group's blank line and comments stay above the group
            out[at] = header[at].with_changes(leading_lines=())
            bare = bare.with_changes(leading_lines=header[at].leading_lines)
        out.insert(at, bare)
        return out
    later = next((g for g in groups if section(header[g[0]]) > mine), None)
    if later is None:  # a section after all the file has: a group of its own, last
        blank = () if not header and first else (cst.EmptyLine(),)
        return [*out, bare.with_changes(leading_lines=blank)]
    at = later[0]
    above = header[at].leading_lines
    out[at] = header[at].with_changes(leading_lines=(
        cst.EmptyLine(), *(line for line in above if line.comment is not None)))
    out.insert(at, bare.with_changes(leading_lines=tuple(line for line in above
                                                         if line.comment is None)))
    return out


def place_new_imports(before: cst.Module, after: cst.Module) -> cst.Module:
    """``after`` (an edit of ``before``) with each import statement the edit added among
    the module's leading imports moved to where isort/ruff order puts it (see the module
    docstring); ``after`` itself when the edit added none."""
    plain, froms = _existing(before)
    start, end = _header(after)
    code = cst.Module([]).code_for_node
    header: list[cst.SimpleStatementLine] = []
    added: list[cst.SimpleStatementLine] = []
    for stmt in after.body[start:end]:
        assert isinstance(stmt, cst.SimpleStatementLine)
        module, dots, is_from = _module(stmt)
        known = "." * dots + module in froms if is_from else code(stmt.body[0]) in plain
        (header if known else added).append(stmt)
    if not added or not header:
        return after
    for stmt in sorted(added, key=lambda s: (section(s), sort_key(s))):
        header = _place(header, stmt, first=start == 0)
    body = [*after.body[:start], *header, *after.body[end:]]
    return after.with_changes(body=body)


def _from_line(stmt: cst.BaseStatement) -> cst.ImportFrom | None:
    """The ``from m import a, b`` of a one-line statement written without parentheses."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
            and isinstance(stmt.body[0], cst.ImportFrom) and stmt.body[0].lpar is None \
            and not isinstance(stmt.body[0].names, cst.ImportStar):
        return stmt.body[0]
    return None


def wrap_long_from_imports(before: str, after: cst.Module, limit: int) -> cst.Module:
    """``after`` with each top-level ``from m import a, b, c`` line an edit made longer than
    ``limit`` (a line ``before`` does not have) written as isort and ruff write it: in
    parentheses, one name per line, each followed by a comma."""
    old_lines = set(before.splitlines())
    code = after.code_for_node
    body = list(after.body)
    changed = False
    for i, stmt in enumerate(body):
        node = _from_line(stmt)
        if node is None:
            continue
        assert isinstance(stmt, cst.SimpleStatementLine)
        line = code(stmt.with_changes(leading_lines=())).rstrip("\n")
        if len(line) <= limit or line in old_lines:
            continue
        assert not isinstance(node.names, cst.ImportStar)
        names = [code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in node.names]
        module = code(node.module) if node.module is not None else ""
        text = f"from {'.' * len(node.relative)}{module} import (\n" \
            + "".join(f"{after.default_indent}{name},\n" for name in names) + ")\n"
        wrapped = cst.parse_statement(text, config=after.config_for_parsing)
        body[i] = wrapped.with_changes(leading_lines=stmt.leading_lines,
                                       trailing_whitespace=stmt.trailing_whitespace)
        changed = True
    return after.with_changes(body=body) if changed else after
