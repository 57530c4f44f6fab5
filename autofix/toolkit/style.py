"""Edits that keep the file's own style (applied to every recipe's output).

* Import order: a new import statement goes into its isort section, and a ``from`` line
  grown past the line length is wrapped as isort wraps it (:mod:`autofix.toolkit.imports`);
  LibCST's ``AddImportsVisitor`` puts a new name in front of an existing ``from m import
  a, b`` line, and a recipe that swaps one name for another leaves the new one where the
  old one stood; when the line was sorted (plainly, or isort's default
  constants/classes/functions order) the names are sorted again, otherwise an added name
  goes last and a swapped one keeps its place.
* Line length: a call an edit grew past the file's limit (88, black's and ruff's default,
  or the longest line the file already has, whichever is larger) is wrapped the way the
  file wraps its calls: one argument per line with a trailing comma when the file's
  multi-line calls open with a line break (black), otherwise continuation lines aligned
  with the opening parenthesis (a call already continued that way whose first or a later
  line grew has its arguments flowed again, its own line breaks kept).
* Alignment: a call continued with lines aligned with its opening parenthesis whose callee
  an edit renamed (``TrainingArguments(`` -> ``DPOConfig(``) has its continuation lines
  moved to the new parenthesis (and flowed again where that makes one too long).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from autofix.toolkit.imports import place_new_imports, wrap_long_from_imports

#: black's and ruff's default line length, used when the file has no longer line.
DEFAULT_LINE_LENGTH = 88


def line_limit(source: str) -> int:
    """The line length the file keeps: the larger of 88 and its longest line."""
    return max([DEFAULT_LINE_LENGTH, *(len(line) for line in source.splitlines())])


def _isort_key(name: str) -> tuple[int, str]:
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name.lower()


def _sort_key(names: Sequence[str]) -> Callable[[str], Any] | None:
    """The key ``names`` are sorted by (plain, case-insensitive, isort's), or ``None``."""
    keys: tuple[Callable[[str], Any], ...] = (lambda n: n, str.lower, _isort_key)
    for key in keys:
        if list(names) == sorted(names, key=key):
            return key
    return None


def _alias_name(alias: cst.ImportAlias) -> str:
    return cst.Module([]).code_for_node(alias.name)


class _ImportOrder(cst.CSTTransformer):
    def __init__(self, before: dict[str, list[str]]) -> None:
        super().__init__()
        self.before = before

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom
                         ) -> cst.ImportFrom:
        if updated.module is None or isinstance(updated.names, cst.ImportStar):
            return updated
        module = "." * len(updated.relative) + cst.Module([]).code_for_node(updated.module)
        old = self.before.get(module)
        aliases = list(updated.names)
        names = [_alias_name(a) for a in aliases]
        if not old or set(names) == set(old):
            return updated
        key = _sort_key(old)
        added = [n for n in names if n not in old]
        if set(old) < set(names):  # names added: sorted in, or last on an unsorted line
            order = sorted(names, key=key) if key else [*[n for n in names if n in old], *added]
        elif key:  # a name swapped for another (or dropped) on a sorted line: sorted again
            order = sorted(names, key=key)
        else:  # an unsorted line keeps the new name where the old one stood
            return updated
        by_name = dict(zip(names, aliases, strict=True))
        commas = _one_per_line([a.comma for a in aliases])  # layout belongs to the position
        if order == names and commas == [a.comma for a in aliases]:
            return updated
        return updated.with_changes(names=[by_name[n].with_changes(comma=c)
                                           for n, c in zip(order, commas, strict=True)])


def _one_per_line(commas: list[Any]) -> list[Any]:
    """The commas of a ``from`` import's names, with one name per line kept: when all but
    one comma between names break the line (the name an import visitor added got ", "),
    that one breaks it too."""
    between = commas[:-1]
    breaking = [c for c in between if isinstance(c, cst.Comma)
                and isinstance(c.whitespace_after, cst.ParenthesizedWhitespace)]
    if len(between) < 2 or not breaking or len(breaking) < len(between) - 1:
        return commas
    return [breaking[0]] * len(between) + commas[-1:]


def _from_imports(module: cst.Module) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}

    class Collect(cst.CSTVisitor):
        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            if node.module is not None and not isinstance(node.names, cst.ImportStar):
                name = "." * len(node.relative) + cst.Module([]).code_for_node(node.module)
                found.setdefault(name, [_alias_name(a) for a in node.names])

    module.visit(Collect())
    return found


def keep_import_order(before: cst.Module, after: cst.Module) -> cst.Module:
    """``after`` with names added to an existing ``from`` import put where the line's own
    order wants them (sorted lines stay sorted; otherwise new names go last)."""
    return after.visit(_ImportOrder(_from_imports(before)))


def _hanging_style(module: cst.Module) -> bool:
    """True when the file's multi-line calls open with a line break (black style); also
    the default for a file that has no multi-line call."""
    hanging = visual = 0

    class Count(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal hanging, visual
            if isinstance(node.whitespace_before_args, cst.ParenthesizedWhitespace):
                hanging += 1
            elif any(isinstance(a.comma, cst.Comma)
                     and isinstance(a.comma.whitespace_after, cst.ParenthesizedWhitespace)
                     for a in node.args):
                visual += 1

    module.visit(Count())
    return hanging >= visual


def _flat_args(call: cst.Call) -> bool:
    """Every argument of ``call`` is written on one line (its line breaks, if any, are
    the ones after its commas), so flowing them again moves whole arguments only."""
    code = cst.Module([]).code_for_node
    return all("\n" not in code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
               for a in call.args)


def _newline(column: int) -> cst.ParenthesizedWhitespace:
    return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[],
                                       indent=True, last_line=cst.SimpleWhitespace(" " * column))


class _Wrap(cst.CSTTransformer):
    """Wraps the outermost single-line call that starts on each of ``lines``."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, lines: set[int], hanging: bool, limit: int, indents: dict[int, int],
                 unit: int) -> None:
        super().__init__()
        self.lines, self.hanging, self.limit = set(lines), hanging, limit
        self.indents, self.unit = indents, unit
        self.depth = 0
        self.target: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        pos = self.get_metadata(PositionProvider, node)
        # a single-line call, or a call continued with aligned lines (visual style) whose
        # first line grew: its arguments are flowed again
        aligned = pos.end.line > pos.start.line and not self.hanging and \
            not isinstance(node.whitespace_before_args, cst.ParenthesizedWhitespace)
        if not node.args or len(node.args) == 1 and pos.end.line == pos.start.line and \
                isinstance(node.args[0].value, (cst.Name, cst.Attribute, cst.BaseNumber)):
            return  # nothing to gain from breaking int(label_id): a later call on the line
        if pos.start.line in self.lines and (pos.end.line == pos.start.line or aligned):
            self.lines.discard(pos.start.line)
            self.target.append(node)
        elif aligned and _flat_args(node):
            # a continuation line of an aligned call grew (an argument appended last)
            grown = {n for n in self.lines if pos.start.line < n <= pos.end.line}
            if grown:
                self.lines -= grown
                self.target.append(node)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not self.target or original is not self.target[-1]:
            return updated
        self.target.pop()
        pos = self.get_metadata(PositionProvider, original)
        base = self.indents.get(pos.start.line, 0)
        args = list(updated.args)
        if self.hanging:
            inner = _newline(self.unit)
            new_args = [a.with_changes(comma=cst.Comma(whitespace_after=inner),
                                       whitespace_after_arg=cst.SimpleWhitespace(""))
                        for a in args[:-1]]
            new_args.append(args[-1].with_changes(
                comma=cst.Comma(whitespace_after=_newline(0)),
                whitespace_after_arg=cst.SimpleWhitespace("")))
            return updated.with_changes(whitespace_before_args=inner, args=new_args)
        func_end = self.get_metadata(PositionProvider, original.func).end.column
        column = func_end + 1  # just after "("
        code = cst.Module([]).code_for_node
        width = column
        new_args = []
        for i, arg in enumerate(args):
            text = code(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)) + ", "
            if i and width + len(text.rstrip()) > self.limit:
                prev = new_args[-1]
                new_args[-1] = prev.with_changes(
                    comma=cst.Comma(whitespace_after=_newline(column - base)))
                width = column
            width += len(text)
            new_args.append(arg)
            if isinstance(arg.comma, cst.Comma) and isinstance(arg.comma.whitespace_after,
                                                               cst.ParenthesizedWhitespace):
                width = column  # the call's own line break: the next line starts afresh
        return updated.with_changes(args=new_args)


def wrap_long_calls(before: str, after: cst.Module) -> cst.Module:
    """``after`` with every call on a line the edit made longer than the file's limit
    (:func:`line_limit` of ``before``) wrapped in the file's own call style."""
    limit = line_limit(before)
    old_lines = set(before.splitlines())
    lines = after.code.splitlines()
    long_new = {i + 1 for i, line in enumerate(lines)
                if len(line) > limit and line not in old_lines}
    if not long_new:
        return after
    indents = {i + 1: len(line) - len(line.lstrip()) for i, line in enumerate(lines)}
    unit = len(after.default_indent.replace("\t", "    ")) or 4
    wrapper = MetadataWrapper(after)
    return wrapper.visit(_Wrap(long_new, _hanging_style(after), limit, indents, unit))


def _breaks(call: cst.Call) -> list[cst.ParenthesizedWhitespace]:
    """The line breaks after ``call``'s own argument commas."""
    return [a.comma.whitespace_after for a in call.args if isinstance(a.comma, cst.Comma)
            and isinstance(a.comma.whitespace_after, cst.ParenthesizedWhitespace)]


class _Realign(cst.CSTTransformer):
    """Moves the continuation lines of the aligned calls that start on ``lines`` (first
    lines an edit changed) to the call's parenthesis, when those not already there all
    stood at one column where ``old_parens`` (columns of ``(`` on lines the edit replaced)
    had one."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, lines: set[int], old_parens: set[int], indents: dict[int, int]) -> None:
        super().__init__()
        self.lines, self.old_parens, self.indents = lines, old_parens, indents

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        pos = self.get_metadata(PositionProvider, original)
        if pos.start.line not in self.lines or pos.end.line == pos.start.line or \
                isinstance(updated.whitespace_before_args, cst.ParenthesizedWhitespace):
            return updated
        breaks = _breaks(original)
        columns = {len(b.last_line.value) for b in breaks}
        base = self.indents.get(pos.start.line, 0)
        column = self.get_metadata(PositionProvider, original.func).end.column + 1 - base
        stale = columns - {column}  # breaks the edit itself made stand at the new one
        if not breaks or not all(b.indent for b in breaks) or len(stale) != 1 \
                or stale.pop() + base - 1 not in self.old_parens:
            return updated
        return updated.with_changes(args=[
            a.with_changes(comma=a.comma.with_changes(whitespace_after=_newline(column)))
            if isinstance(a.comma, cst.Comma)
            and isinstance(a.comma.whitespace_after, cst.ParenthesizedWhitespace) else a
            for a in updated.args])


def realign_calls(before: str, after: cst.Module) -> cst.Module:
    """``after`` with the aligned calls whose opening an edit moved realigned
    (:class:`_Realign`); unchanged when nothing moved."""
    old_lines = before.splitlines()
    lines = after.code.splitlines()
    kept = set(lines)
    changed = {i + 1 for i, line in enumerate(lines) if line not in set(old_lines)}
    old_parens = {i for line in old_lines if line not in kept
                  for i, ch in enumerate(line) if ch == "("}
    if not changed or not old_parens:
        return after
    indents = {i + 1: len(line) - len(line.lstrip()) for i, line in enumerate(lines)}
    return MetadataWrapper(after).visit(_Realign(changed, old_parens, indents))


def keep_style(before: str, after: str) -> str:
    """``after`` (a recipe's output for ``before``) with the file's import order and line
    length kept; ``after`` unchanged when it does not parse or nothing needs restyling."""
    try:
        old, new = cst.parse_module(before), cst.parse_module(after)
    except cst.ParserSyntaxError:
        return after
    new = place_new_imports(old, new)
    new = keep_import_order(old, new)
    new = wrap_long_from_imports(before, new, line_limit(before))
    new = realign_calls(before, new)
    new = wrap_long_calls(before, new)
    return new.code
