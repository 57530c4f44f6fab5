"""API drift found without a training run (issue 10): the script's library references
checked against the libraries installed in the target interpreter.

:func:`scan` lists, with LibCST's ``QualifiedNameProvider``, the names the script imports
from ``transformers``/``datasets`` and the keyword arguments of its calls to their
callables. :func:`check_api` sends that list to ``autofix/run/child/api_check.py`` running in
the user's interpreter (``--python``), which imports the real libraries and answers with the
errors the run would raise (``cannot import name ...``, ``unexpected keyword argument ...``).
Each answer is classified like a traceback; those whose category has recipes (api-drift)
become :class:`Diagnosis` objects the engine fixes before the first run.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider

from autofix.categories import all_categories
from autofix.run.runner import contained_run
from autofix.types import Diagnosis

#: Libraries whose API the check covers: the ones whose renames the course scripts hit.
CHECKED_LIBRARIES = ("transformers", "datasets")
API_CHECK = Path(__file__).parent.parent / "run" / "child" / "api_check.py"
#: Seconds the check may take (one import of transformers and datasets: 3-8 s measured on
#: this project's 2-core machines).
CHECK_TIMEOUT = 180.0


@dataclass
class ApiUses:
    """What a script takes from the checked libraries (1-based source lines)."""

    imports: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)

    def empty(self) -> bool:
        """True when the script references none of :data:`CHECKED_LIBRARIES`."""
        return not self.imports and not self.calls


def _checked(name: str) -> bool:
    return name.split(".", 1)[0] in CHECKED_LIBRARIES


class _Scanner(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self) -> None:
        self.uses = ApiUses()

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = cst.Module([]).code_for_node(node.module)
        if not _checked(module):
            return
        for alias in node.names:
            if isinstance(alias.name, cst.Name):
                self.uses.imports.append({"module": module, "name": alias.name.value,
                                          "line": self._line(node)})

    def visit_Call(self, node: cst.Call) -> None:
        keywords = [a.keyword.value for a in node.args if a.keyword is not None]
        if not keywords:
            return
        names = self.get_metadata(QualifiedNameProvider, node.func, set())
        targets = sorted(q.name for q in names if _checked(q.name) and "<" not in q.name)
        if targets:
            self.uses.calls.append({"target": targets[0], "keywords": keywords,
                                    "line": self._line(node)})


def scan(source: str) -> ApiUses:
    """The imports and keyword calls of ``source`` that name a checked library.

    Raises ``libcst.ParserSyntaxError`` when ``source`` does not parse.
    """
    scanner = _Scanner()
    MetadataWrapper(cst.parse_module(source)).visit(scanner)
    return scanner.uses


@dataclass(frozen=True)
class ApiFinding:
    """One error the run would raise: ``type`` and ``message`` as the library words them."""

    line: int
    type: str
    message: str
    library: str = ""


def check_api(python: str, uses: ApiUses) -> list[ApiFinding]:
    """Run the check in interpreter ``python``; empty when nothing is wrong or the check
    could not run (a preflight never blocks the real run: that run shows the error)."""
    if uses.empty():
        return []
    request = json.dumps({"imports": uses.imports, "calls": uses.calls})
    try:
        done = contained_run([python, str(API_CHECK)], input=request, timeout=CHECK_TIMEOUT)
        answer = json.loads(done.stdout) if done.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
        return []
    return [ApiFinding(int(f.get("line", 0)), str(f["type"]), str(f["message"]),
                       str(f.get("library", "")))
            for f in answer.get("findings", []) if "type" in f and "message" in f]


def api_diagnoses(source: str, python: str, versions: dict[str, str]) -> list[Diagnosis]:
    """Diagnoses for the drift findings of ``source`` in interpreter ``python``.

    Only findings that classify into a category with the same patterns as a real traceback
    (api-drift) are returned; ``versions`` names the installed libraries for the evidence.
    A source that does not parse gives none (the run reports it as ``syntax-error``).
    """
    try:
        uses = scan(source)
    except cst.ParserSyntaxError:
        return []
    lines = source.splitlines()
    found: list[Diagnosis] = []
    for finding in check_api(python, uses):
        headline = f"{finding.type}: {finding.message}"
        category = next((c for c in all_categories() if c.matches(finding.type, finding.message)),
                        None)
        if category is None or category.id != "api-drift":
            continue
        library = finding.library
        installed = f"{library} {versions[library]}" if library in versions else library
        text = lines[finding.line - 1] if 0 < finding.line <= len(lines) else ""
        found.append(Diagnosis(
            category=category.id, evidence=headline, line=finding.line, line_text=text,
            details=(f"found before the first run: checked against the {installed} "
                     "signatures (no training run needed)",),
            via="api-preflight"))
    return found
