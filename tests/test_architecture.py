"""The layout's rules, checked against the tree: each package's ``__init__`` docstring
says what it may import (its ``Imports:`` paragraph), no module or package imports in a
circle and no two parts of autofix import each other, no module imports another's private
names, the CLI is imported by nobody, no module
or function outgrows what a reader can hold, and ``docs/architecture.md`` maps every module
there is."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ROOT

PACKAGE = ROOT / "autofix"
#: The top-level modules' own rules (they have no ``__init__`` docstring of their own).
LEAVES = {"autofix.types": (), "autofix.errors": (), "autofix.paths": (), "autofix.words": (),
          "autofix.settings": ()}
#: May import anything of autofix.
ENTRY = ("autofix", "autofix.__main__", "autofix.cli")
#: The most lines a module may have, and a function (its ``def`` line to its last line).
MODULE_LINES = 1000
FUNCTION_LINES = 100
#: The most lines a class of the loop may have (issue 51: a session is a small state machine
#: of a few classes, not one class holding every step).
LOOP_CLASS_LINES = 300
#: Modules the size limits skip (none: a module that outgrows them is split).
SIZE_EXEMPT: set[str] = set()


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def _tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text(encoding="utf-8"))


def _from_module(module: str, node: ast.ImportFrom) -> str:
    """The module ``from X import ...`` in ``module`` names, relative imports resolved
    (``from .events import emit`` in ``autofix.run.child.numeric``:
    ``autofix.run.child.events``)."""
    if not node.level:
        return node.module or ""
    base = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    parts = base.split(".")[:len(base.split(".")) - node.level + 1]
    return ".".join([*parts, *([node.module] if node.module else [])])


def _imports(module: str) -> Iterator[tuple[ast.stmt, str, str | None]]:
    """Each autofix import of ``module`` (at module level, in a function or under ``if``):
    (the statement, the module named, the name taken from it: ``None`` for ``import X``)."""
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "autofix":
                    yield node, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            source = _from_module(module, node)
            if source.split(".")[0] == "autofix":
                for alias in node.names:
                    yield node, source, alias.name


def imports_of(path: Path) -> set[str]:
    """Every ``autofix`` module ``path`` imports, at module level or inside a function
    (``from P import m`` of a submodule ``m`` counts as ``P.m``)."""
    found: set[str] = set()
    for _, source, name in _imports(module_name(path)):
        full = f"{source}.{name}" if name else source
        found.add(full if full in MODULES else source)
    return found


def _encloses(package: str, module: str) -> bool:
    return module == package or module.startswith(package + ".")


def import_edges(module: str) -> set[str]:
    """What importing ``module`` makes Python execute or read of autofix: each module it
    imports, every package above that module which does not hold ``module`` (its
    ``__init__`` runs first), and the package ``P`` of every ``from P import x``, also from
    inside ``P`` (the name is looked up in ``P``'s ``__init__`` before any submodule)."""
    edges: set[str] = set()
    for _, source, name in _imports(module):
        full = f"{source}.{name}" if name and f"{source}.{name}" in MODULES else source
        parts = full.split(".")
        edges |= {p for n in range(1, len(parts) + 1)
                  if (p := ".".join(parts[:n])) in MODULES and not _encloses(p, module)}
        if name is not None and source in MODULES and MODULES[source].name == "__init__.py":
            edges.add(source)
    return edges - {module}


def import_circle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of ``graph`` (module -> the modules it imports) as the path that closes
    it (``[a, b, a]``), or ``[]`` when there is none (depth-first, colouring nodes)."""
    done: set[str] = set()
    for root in sorted(graph):
        if root in done:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        path.append(root)
        on_path.add(root)
        while stack:
            node, pending = stack[-1]
            nxt = next(pending, None)
            if nxt is None:
                stack.pop()
                path.pop()
                on_path.discard(node)
                done.add(node)
            elif nxt in on_path:
                return [*path[path.index(nxt):], nxt]
            elif nxt not in done:
                stack.append((nxt, iter(sorted(graph.get(nxt, ())))))
                path.append(nxt)
                on_path.add(nxt)
    return []


def package_of(module: str) -> str:
    """The package whose rules govern ``module``: its nearest package with a docstring
    ``Imports:`` paragraph (``autofix.run.child.events`` -> ``autofix.run.child``)."""
    parts = module.split(".")
    for n in range(len(parts), 1, -1):
        candidate = ".".join(parts[:n])
        init = PACKAGE.joinpath(*parts[1:n], "__init__.py")
        if init.exists() and "Imports:" in (ast.get_docstring(ast.parse(init.read_text()))
                                            or ""):
            return candidate
    return module


def allowed(package: str) -> tuple[str, ...] | None:
    """The prefixes ``package`` may import (``None``: anything)."""
    if package in LEAVES:
        return LEAVES[package]
    if package in ENTRY:
        return None
    init = PACKAGE.joinpath(*package.split(".")[1:], "__init__.py")
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    rule = doc[doc.index("Imports:"):].split("\n\n")[0]
    return tuple(re.findall(r"autofix(?:\.\w+)+", rule))


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_imports_only_what_its_package_allows(module: str) -> None:
    package = package_of(module)
    rule = allowed(package)
    if rule is None:
        return
    wrong = sorted(name for name in imports_of(MODULES[module])
                   if not (name == package or name.startswith(package + "."))
                   and not any(name == p or name.startswith(p + ".") for p in rule))
    assert not wrong, f"{module} ({package} may import {', '.join(rule) or 'nothing'}) " \
                      f"imports {wrong}"


def test_the_child_imports_nothing_of_autofix() -> None:
    for module, path in MODULES.items():
        if module.startswith("autofix.run.child"):
            outside = {m for m in imports_of(path) if not _encloses("autofix.run.child", m)}
            assert not outside, module


def test_nobody_imports_the_cli() -> None:
    users = [m for m, p in MODULES.items() if not m.startswith("autofix.cli")
             and m != "autofix.__main__"
             and any(i.startswith("autofix.cli") for i in imports_of(p))]
    assert users == []


def test_no_import_circle() -> None:
    """No module or package's ``__init__`` reaches itself again through what it imports."""
    graph = {m: import_edges(m) for m in MODULES}
    circle = import_circle(graph)
    assert not circle, " -> ".join(circle)


def part_of(module: str) -> str:
    """The part of autofix ``module`` belongs to: a top-level module
    (``autofix.settings``) or a sub-package of ``autofix`` with everything inside it
    (``autofix.run.child.events`` -> ``autofix.run``); ``autofix`` itself for its
    ``__init__`` and ``__main__``."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] == "__main__":
        return "autofix"
    return ".".join(parts[:2])


def part_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``graph`` (module -> the modules it imports) folded onto the parts of autofix
    (:func:`part_of`): part -> the other parts its modules import. ``autofix`` itself
    (the public surface and ``python -m autofix``, which may import anything) is left
    out: nothing inside autofix imports it."""
    parts: dict[str, set[str]] = {}
    for module, imported in graph.items():
        part = part_of(module)
        if part == "autofix":
            continue
        parts.setdefault(part, set()).update(
            p for m in imported if (p := part_of(m)) not in (part, "autofix"))
    return parts


def test_no_two_parts_of_autofix_import_each_other() -> None:
    """No circle between the parts of autofix (its top-level modules and sub-packages,
    :func:`part_of`): a circle of modules each importing the next is caught above, but
    ``settings`` importing a module of ``run`` while another module of ``run`` imports
    ``settings`` is a loop between the two parts although no module reaches itself."""
    graph = {m: import_edges(m) for m in MODULES}
    circle = import_circle(part_graph(graph))
    assert not circle, " -> ".join(circle)


def test_the_part_circle_finder_finds_a_loop_no_module_circle_shows() -> None:
    """``autofix.settings`` -> ``autofix.run.sandbox``, ``autofix.run.runner`` ->
    ``autofix.settings``: no module circle, but a loop between ``settings`` and ``run``;
    a sub-package importing its own parent package is no loop between parts."""
    modules = {"autofix.settings": {"autofix.run.sandbox"}, "autofix.run.sandbox": set(),
               "autofix.run.runner": {"autofix.settings", "autofix.run.sandbox"}}
    assert import_circle(modules) == []
    assert import_circle(part_graph(modules)) == ["autofix.run", "autofix.settings",
                                                  "autofix.run"]
    nested = {"autofix.run.child.events": {"autofix.run.child"},
              "autofix.run.runner": {"autofix.run.child.events", "autofix.settings"},
              "autofix.settings": set()}
    assert import_circle(part_graph(nested)) == []
    assert part_of("autofix.run.child.events") == "autofix.run"
    assert part_of("autofix.settings") == "autofix.settings"


def test_the_circle_finder_finds_package_circles() -> None:
    """The checks above can fail: a submodule that reads its own package's ``__init__``,
    which imports it back, is a circle; a package importing its submodules is not."""
    assert import_circle({"p": {"p.a"}, "p.a": {"p.b"}, "p.b": set()}) == []
    assert import_circle({"p": {"p.a"}, "p.a": {"p.b"}, "p.b": {"p"}}) == ["p", "p.a", "p.b",
                                                                          "p"]
    edges = import_edges("autofix.run.child.numeric")
    assert "autofix.run.child.events" in edges and "autofix.run.child" not in edges
    assert {"autofix.toolkit", "autofix.toolkit.apply"} <= import_edges("autofix.loop.attempt")


def private_imports(module: str) -> list[str]:
    """The private names (``_x``, not ``__x__``) ``module`` takes from another autofix
    module: ``from M import _x``, or ``M._x`` on a module it imported."""
    found = []
    modules: dict[str, str] = {}  # local name -> the autofix module it is bound to
    for node, source, name in _imports(module):
        if name is None:
            continue
        alias = next(a for a in node.names if a.name == name)  # type: ignore[attr-defined]
        if f"{source}.{name}" in MODULES:
            modules[alias.asname or name] = f"{source}.{name}"
        elif name.startswith("_") and not name.startswith("__") and source != module:
            found.append(f"{module}:{node.lineno} from {source} import {name}")
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in modules and node.attr.startswith("_") \
                and not node.attr.startswith("__") and modules[node.value.id] != module:
            found.append(f"{module}:{node.lineno} {modules[node.value.id]}.{node.attr}")
    return found


def test_no_module_takes_another_modules_private_names() -> None:
    """A name shared by two modules is public where it is defined (issue 40)."""
    taken = [line for m in sorted(MODULES) for line in private_imports(m)]
    assert taken == []


def defined_names(node: ast.AST) -> list[str]:
    """The names ``node`` defines inside a class: a method's, a class attribute's, or
    ``self.x = ...``'s attribute."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [node.name]
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
            is_own(node.value):
        return [node.attr]
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, ast.AnnAssign) else []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def private_members(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """The private names (``_x``, not ``__x__``) the classes of each module define
    (:func:`defined_names`): name -> the modules defining it."""
    found: dict[str, set[str]] = {}
    for path, tree in trees.items():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                for name in defined_names(node):
                    if name.startswith("_") and not name.startswith("__"):
                        found.setdefault(name, set()).add(path)
    return found


def is_own(node: ast.expr) -> bool:
    """``self`` or ``cls``, or ``super()``: the object's own members."""
    return isinstance(node, ast.Name) and node.id in ("self", "cls") or \
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def private_member_uses(trees: dict[str, ast.Module]) -> list[str]:
    """Each ``obj._x`` (``obj`` not ``self``, ``cls`` or ``super()``) in a module of
    ``trees`` where ``_x`` is private to a class of another module: ``program._x(...)``
    from a recipe. (:func:`private_imports` sees only names taken from a module, never a
    member reached through an object, nor the recipes' modules.)"""
    members = private_members(trees)
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in members and \
                    not is_own(node.value) and path not in members[node.attr]:
                found.append(f"{path}:{node.lineno} {ast.unparse(node)} (private to "
                             f"{', '.join(sorted(members[node.attr]))})")
    return found


def test_no_module_reaches_another_modules_private_members() -> None:
    """What one module needs of another's objects is public (``Program.target_values``,
    not ``Program._target_values``), in autofix/ and recipes/ alike."""
    trees = {str(MODULES[m].relative_to(ROOT)): _tree(m) for m in MODULES}  # parsed once
    trees |= {str(p.relative_to(ROOT)): ast.parse(p.read_text(encoding="utf-8"))
              for p in sorted((ROOT / "recipes").rglob("*.py"))}
    assert private_member_uses(trees) == []
    seeded = {"a.py": ast.parse("class P:\n    def _walk(self):\n        return self._walk\n"),
              "b.py": ast.parse("def f(program):\n    return program._walk()\n")}
    assert private_member_uses(seeded) == ["b.py:2 program._walk (private to a.py)"]


@functools.cache
def _sizes() -> tuple[tuple[str, int, tuple[tuple[str, int], ...]], ...]:
    """(path, lines, ((function, lines), ...)) of every module of autofix/ and recipes/."""
    found = []
    for path in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "recipes").rglob("*.py")]):
        text = path.read_text(encoding="utf-8")
        functions = tuple((f"{n.name} (line {n.lineno})",
                           (n.end_lineno or n.lineno) - n.lineno + 1)
                          for n in ast.walk(ast.parse(text))
                          if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
        found.append((str(path.relative_to(ROOT)), len(text.splitlines()), functions))
    return tuple(found)


def test_no_module_or_function_too_long_to_hold() -> None:
    """At most 1,000 lines a module and 100 a function (issue 40), in autofix/ and
    recipes/; a longer one is split where it falls into parts."""
    long_modules, long_functions = [], []
    for path, lines, functions in _sizes():
        if path in SIZE_EXEMPT:
            continue
        if lines > MODULE_LINES:
            long_modules.append(f"{path}: {lines} lines")
        long_functions += [f"{path}: {name}: {n} lines" for name, n in functions
                           if n > FUNCTION_LINES]
    assert long_modules == [] and long_functions == []


def class_sizes(text: str) -> list[tuple[str, int]]:
    """(class name with its line, lines) of each class ``text`` defines."""
    return [(f"{n.name} (line {n.lineno})", (n.end_lineno or n.lineno) - n.lineno + 1)
            for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)]


def test_no_class_of_the_loop_too_long_to_hold() -> None:
    """No class of ``autofix/loop/`` over :data:`LOOP_CLASS_LINES` lines: the session's run
    and judgement, its attempts at a fix, its API check and its loop each have their own."""
    long_classes = [f"{path.relative_to(ROOT)}: {name}: {n} lines"
                    for path in sorted((PACKAGE / "loop").glob("*.py"))
                    for name, n in class_sizes(path.read_text(encoding="utf-8"))
                    if n > LOOP_CLASS_LINES]
    assert long_classes == []
    assert class_sizes("class A:\n    x = 1\n\n    def f(self):\n        pass\n") == \
        [("A (line 1)", 5)]


def test_the_size_exemptions_are_still_needed() -> None:
    """An exempt module that meets the limits loses its exemption."""
    sizes = {path: (lines, functions) for path, lines, functions in _sizes()}
    for path in SIZE_EXEMPT:
        lines, functions = sizes[path]
        assert lines > MODULE_LINES or any(n > FUNCTION_LINES for _, n in functions), path


def test_every_package_says_what_it_holds_and_may_import() -> None:
    for init in sorted(PACKAGE.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert len(doc.split()) > 20 and "Imports:" in doc or init.parent == PACKAGE, init


def test_the_architecture_page_maps_every_module() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    mapped = set(re.findall(r"`(autofix/[\w/]+\.py|recipes/[\w/]+\.py)`", page))
    there = {str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")} | \
        {str(p.relative_to(ROOT)) for p in (ROOT / "recipes").rglob("_*.py")
         if p.name != "__init__.py"}  # the helpers, in the family folders too
    assert there - mapped == set(), "modules missing from docs/architecture.md"
    assert mapped - there == set(), "docs/architecture.md names modules that do not exist"


#: A category id written as a string: a quoted run of lower-case words joined by ``-``
#: (``"nan-loss"``, ``'unknown'``).
QUOTED_ID = re.compile(r"""(["'])([a-z0-9]+(?:-[a-z0-9]+)*)\1""")


def quoted_category_ids(text: str, ids: set[str]) -> list[str]:
    """The registered category ids ``text`` spells as strings, with their lines."""
    return [f"{n}: {found.group(0)}" for n, line in enumerate(text.splitlines(), 1)
            for found in QUOTED_ID.finditer(line) if found.group(2) in ids]


def test_the_loop_names_no_category() -> None:
    """A fault kind is one declaration (its category's hooks, proof and recipes): the loop
    iterates the registry and names no category id, in code or docstrings (issue 51)."""
    from autofix.categories import all_categories
    from autofix.toolkit.discovery import plugins

    plugins()
    ids = {c.id for c in all_categories()}
    named = [f"{path.relative_to(ROOT)}:{hit}" for path in sorted((PACKAGE / "loop").glob("*.py"))
             for hit in quoted_category_ids(path.read_text(encoding="utf-8"), ids)]
    assert named == []
    seeded = 'if diag.category == "syntax-error":\n    kind = \'nan-loss\'  # "no-such-id"\n'
    assert quoted_category_ids(seeded, ids) == ['1: "syntax-error"', "2: 'nan-loss'"]
