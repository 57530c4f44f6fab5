"""The layout's rules, checked against the tree: each package's ``__init__`` docstring
says what it may import (its ``Imports:`` paragraph), no module imports in a circle, the
CLI is imported by nobody, and ``docs/architecture.md`` maps every module there is."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from .conftest import ROOT

PACKAGE = ROOT / "autofix"
#: The top-level modules' own rules (they have no ``__init__`` docstring of their own).
LEAVES = {"autofix.types": (), "autofix.errors": (), "autofix.paths": (), "autofix.words": (),
          "autofix.settings": ("autofix.run.sandbox",)}
#: May import anything of autofix.
ENTRY = ("autofix", "autofix.__main__", "autofix.cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path) -> set[str]:
    """Every ``autofix`` module ``path`` imports, at module level or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "autofix"}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "autofix":
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in MODULES else node.module)
    return found


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
            assert not imports_of(path), module


def test_nobody_imports_the_cli() -> None:
    users = [m for m, p in MODULES.items() if not m.startswith("autofix.cli")
             and m != "autofix.__main__"
             and any(i.startswith("autofix.cli") for i in imports_of(p))]
    assert users == []


def test_no_import_circle() -> None:
    graph = {m: {i for i in imports_of(p) if i in MODULES and i != m}
             for m, p in MODULES.items()}
    graph["autofix"] = set()  # the public surface re-exports; nothing imports it back

    def cycle_from(start: str) -> list[str]:
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start:
                    return [*path, start]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
        return []

    circles = [c for m in graph if (c := cycle_from(m))]
    assert not circles, " -> ".join(circles[0])


def test_every_package_says_what_it_holds_and_may_import() -> None:
    for init in sorted(PACKAGE.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert len(doc.split()) > 20 and "Imports:" in doc or init.parent == PACKAGE, init


def test_the_architecture_page_maps_every_module() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    mapped = set(re.findall(r"`(autofix/[\w/]+\.py|recipes/[\w/]+\.py)`", page))
    there = {str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")} | \
        {str(p.relative_to(ROOT)) for p in (ROOT / "recipes").glob("_*.py")
         if p.name != "__init__.py"}
    assert there - mapped == set(), "modules missing from docs/architecture.md"
    assert mapped - there == set(), "docs/architecture.md names modules that do not exist"
