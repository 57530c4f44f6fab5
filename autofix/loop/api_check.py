"""API drift found without a training run (issue 10): the script's library references,
and those of its own modules, checked against the libraries installed in the target
interpreter.

:func:`scan` lists, with LibCST's ``QualifiedNameProvider``, what a source takes from the
checked libraries (:data:`autofix.toolkit.drift.CHECKED_LIBRARIES`): the names it imports,
the keyword arguments of its calls to their callables, the class that builds what a
trainer call gets as ``args``; and the classes it derives from a library class
(:data:`~autofix.toolkit.drift.BASE_LIBRARIES`) with the parameters of each method they
define. :func:`check_api` sends that to ``autofix/run/child/api_check.py`` running in the
user's interpreter (``--python``), which imports the real libraries and answers with the
errors the run would raise (``cannot import name ...``, ``unexpected keyword argument
...``, an override the library calls with a keyword it lacks, a trainer given arguments of
a class it is not paired with) and the facts of each (what the installed library takes
instead). Each answer is classified like a traceback; those of the drift categories become
:class:`Diagnosis` objects (located in the file that holds the code to change) the engine
handles before the first run.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import (
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedName,
    QualifiedNameProvider,
    QualifiedNameSource,
    ScopeProvider,
)

from autofix.categories import all_categories
from autofix.categories.renames import KEYWORD_RENAMES
from autofix.run.runner import contained_run
from autofix.toolkit.drift import BASE_LIBRARIES, CHECKED_LIBRARIES, top_level
from autofix.types import Diagnosis

API_CHECK = Path(__file__).parent.parent / "run" / "child" / "api_check.py"
#: Seconds the check may take (one import of transformers, datasets and TRL: 3-15 s measured
#: on this project's 2-core machines).
CHECK_TIMEOUT = 180.0
#: ``Diagnosis.via`` of drift the check found before the first run (the commit message
#: says so; the recipes edit the file the check located it in).
API_PREFLIGHT = "api-preflight"
#: Decorators that make a method something other than one the library calls with ``self``.
_DESCRIPTORS = ("staticmethod", "classmethod", "property", "cached_property", "setter",
                "getter", "deleter")
#: How far a value is followed through assignments to the call that builds it.
_FOLLOW = 4


@dataclass
class ApiUses:
    """What a program takes from the checked libraries (1-based source lines; ``file`` is
    "" for the script, else the path of a module of the user's)."""

    imports: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    classes: list[dict[str, Any]] = field(default_factory=list)
    referenced: set[str] = field(default_factory=set)

    def empty(self) -> bool:
        """True when the program references none of the checked libraries."""
        return not self.imports and not self.calls and not self.classes

    def request(self) -> dict[str, Any]:
        """The JSON request of ``autofix/run/child/api_check.py``."""
        return {"imports": self.imports, "calls": self.calls, "classes": self.classes,
                "referenced": sorted(self.referenced),
                "aliases": [[r.old, r.new] for r in KEYWORD_RENAMES]}


def _in(name: str, libraries: tuple[str, ...]) -> bool:
    return top_level(name) in libraries and "<" not in name


class _Scanner(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, ScopeProvider,
                             ParentNodeProvider)

    def __init__(self, file: str, module: str) -> None:
        self.file = file
        self.module = module
        self.uses = ApiUses()
        #: class name -> (its entry, qualified names of its bases that are not library ones)
        self.local: dict[str, tuple[dict[str, Any], list[str]]] = {}
        #: local trainer calls: (call entry, the local class's qualified name)
        self.local_calls: list[tuple[dict[str, Any], str]] = []

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _names(self, node: cst.CSTNode) -> set[QualifiedName]:
        return set(self.get_metadata(QualifiedNameProvider, node, set()))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = cst.Module([]).code_for_node(node.module)
        if not _in(module, CHECKED_LIBRARIES):
            return
        for alias in node.names:
            if isinstance(alias.name, cst.Name):
                self.uses.imports.append({"module": module, "name": alias.name.value,
                                          "line": self._line(node), "file": self.file})

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.uses.referenced.add(node.attr.value)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if isinstance(value, str) and value.isidentifier():
            self.uses.referenced.add(value)

    # -- classes -----------------------------------------------------------------------

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        library: list[str] = []
        local: list[str] = []
        for base in node.bases:
            if base.keyword is not None:
                continue
            for q in sorted(self._names(base.value), key=lambda q: q.name):
                if _in(q.name, BASE_LIBRARIES) and q.source is QualifiedNameSource.IMPORT:
                    library.append(q.name)
                elif q.source is QualifiedNameSource.LOCAL:
                    local.append(f"{self.module}.{q.name}")
                elif q.source is QualifiedNameSource.IMPORT:
                    local.append(q.name)  # perhaps a module of the user's
        methods = []
        if isinstance(node.body, cst.IndentedBlock):
            for stmt in node.body.body:
                if isinstance(stmt, cst.FunctionDef):
                    methods.append(self._method(stmt, node))
        entry = {"name": node.name.value, "file": self.file, "line": self._line(node),
                 "bases": library, "methods": methods}
        self.local[node.name.value] = (entry, local)

    def _method(self, func: cst.FunctionDef, cls: cst.ClassDef) -> dict[str, Any]:
        p = func.params
        params: list[dict[str, Any]] = []
        params += [{"name": a.name.value, "kind": "posonly", "default": a.default is not None}
                   for a in p.posonly_params]
        params += [{"name": a.name.value, "kind": "pos", "default": a.default is not None}
                   for a in p.params]
        if isinstance(p.star_arg, cst.Param):
            params.append({"name": p.star_arg.name.value, "kind": "varpos", "default": False})
        params += [{"name": a.name.value, "kind": "kwonly", "default": a.default is not None}
                   for a in p.kwonly_params]
        if p.star_kwarg is not None:
            params.append({"name": p.star_kwarg.name.value, "kind": "varkw", "default": False})
        decorated = False
        for deco in func.decorators:
            expr = deco.decorator.func if isinstance(deco.decorator, cst.Call) \
                else deco.decorator
            last = expr.attr.value if isinstance(expr, cst.Attribute) else \
                expr.value if isinstance(expr, cst.Name) else ""
            decorated = decorated or last in _DESCRIPTORS
        return {"name": func.name.value, "line": self._line(func), "params": params,
                "decorated": decorated}

    # -- calls -------------------------------------------------------------------------

    def _construction(self, expr: cst.BaseExpression, depth: int = 0
                      ) -> tuple[str, int] | None:
        """The library class whose call builds ``expr``'s value (followed through
        assignments in scope) and that call's line; ``None`` when unknown or several."""
        if depth > _FOLLOW:
            return None
        if isinstance(expr, cst.Call):
            names = sorted(q.name for q in self._names(expr.func) if _in(q.name, BASE_LIBRARIES))
            return (names[0], self._line(expr)) if names else None
        if not isinstance(expr, cst.Name):
            return None
        scope = self.get_metadata(ScopeProvider, expr, None)
        if scope is None:
            return None
        found: set[tuple[str, int]] = set()
        for assignment in scope[expr.value]:
            node = getattr(assignment, "node", None)
            holder = self.get_metadata(ParentNodeProvider, node, None) if node else None
            value: cst.BaseExpression | None = None
            if isinstance(holder, cst.AssignTarget):
                assign = self.get_metadata(ParentNodeProvider, holder, None)
                value = assign.value if isinstance(assign, cst.Assign) else None
            elif isinstance(holder, cst.AnnAssign):
                value = holder.value
            built = self._construction(value, depth + 1) if value is not None else None
            if built is None:
                return None
            found.add(built)
        if len({name for name, _ in found}) != 1:
            return None
        return min(found, key=lambda f: f[1])

    def visit_Call(self, node: cst.Call) -> None:
        keywords = [a.keyword.value for a in node.args if a.keyword is not None]
        names = self._names(node.func)
        targets = sorted(q.name for q in names if _in(q.name, CHECKED_LIBRARIES))
        local = sorted(q.name for q in names if q.source is QualifiedNameSource.LOCAL
                       or (q.source is QualifiedNameSource.IMPORT
                           and not _in(q.name, BASE_LIBRARIES)))
        entry: dict[str, Any] = {"target": targets[0] if targets else "",
                                 "keywords": keywords, "line": self._line(node),
                                 "file": self.file}
        args = next((a.value for a in node.args
                     if a.keyword is not None and a.keyword.value == "args"), None)
        if args is not None:
            built = self._construction(args)
            if built is not None:
                entry.update(args_class=built[0], args_line=built[1], args_file=self.file)
        else:
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            found = [(i, self._construction(v)) for i, v in enumerate(positional[:3])]
            entry["positional_args"] = [{"index": i, "class": b[0], "line": b[1]}
                                        for i, b in found if b is not None]
            if not entry["positional_args"]:
                del entry["positional_args"]
        if targets:
            if keywords or "args_class" in entry or "positional_args" in entry:
                self.uses.calls.append(entry)
        elif local and ("args_class" in entry or "positional_args" in entry):
            name = local[0] if "." in local[0] else f"{self.module}.{local[0]}"
            self.local_calls.append((entry, name))


def _module_name(path: str, folder: Path) -> str:
    """``pkg.mod`` for ``folder/pkg/mod.py`` (``__main__`` for the script, path "")."""
    if not path:
        return "__main__"
    try:
        rel = Path(path).resolve().relative_to(folder.resolve()).with_suffix("")
    except ValueError:
        return Path(path).stem
    parts = list(rel.parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def scan(source: str, modules: Mapping[str, str] | None = None,
         folder: Path | None = None) -> ApiUses:
    """What ``source`` (the script) and ``modules`` (path -> source of the user's own
    modules beside it, in ``folder``) take from the checked libraries. A class deriving
    from a class of the user's takes that class's library bases.

    Raises ``libcst.ParserSyntaxError`` when ``source`` does not parse (a module that does
    not parse is skipped: the run reports it).
    """
    folder = folder or Path(".")
    scanners: list[_Scanner] = []
    for path, text in {"": source, **(modules or {})}.items():
        try:
            tree = cst.parse_module(text)
        except cst.ParserSyntaxError:
            if not path:
                raise
            continue
        scanner = _Scanner(path, _module_name(path, folder))
        MetadataWrapper(tree).visit(scanner)
        scanners.append(scanner)
    by_name = {f"{s.module}.{name}": entry for s in scanners for name, entry in s.local.items()}

    def library_bases(name: str, seen: frozenset[str] = frozenset()) -> list[str]:
        if name in seen or name not in by_name:
            return []
        entry, local = by_name[name]
        out = list(entry["bases"])
        for base in local:
            out += [b for b in library_bases(base, seen | {name}) if b not in out]
        return out

    uses = ApiUses()
    for scanner in scanners:
        uses.imports += scanner.uses.imports
        uses.calls += scanner.uses.calls
        uses.referenced |= scanner.uses.referenced
        for name, (entry, _) in scanner.local.items():
            bases = library_bases(f"{scanner.module}.{name}")
            if bases and entry["methods"]:
                uses.classes.append({**entry, "bases": bases})
        for call, local in scanner.local_calls:
            bases = library_bases(local)
            if bases:
                uses.calls.append({**call, "target": "", "pair_target": bases[0]})
    return uses


@dataclass(frozen=True)
class ApiFinding:
    """One error the run would raise: ``type`` and ``message`` as the library words them,
    in ``file`` ("" the script) at ``line``, with the ``facts`` of what to change."""

    line: int
    type: str
    message: str
    library: str = ""
    file: str = ""
    facts: tuple[tuple[str, str], ...] = ()


#: Runs a standard-library script of autofix's with a request on its standard input in
#: the session's warm interpreter: ``tool(script, input, timeout)``, ``None`` when it could
#: not (:meth:`autofix.run.warm.WarmInterpreter.tool`).
Tool = Callable[[Path, str, float], "subprocess.CompletedProcess[str] | None"]


def check_api(python: str, uses: ApiUses, tool: Tool | None = None) -> list[ApiFinding]:
    """Run the check in interpreter ``python`` (through ``tool``, a fork of the session's
    warm interpreter, when given and it can; else a fresh ``python``); empty when nothing
    is wrong or the check could not run (a preflight never blocks the real run: that run
    shows the error)."""
    if uses.empty():
        return []
    request = json.dumps(uses.request())
    try:
        done = tool(API_CHECK, request, CHECK_TIMEOUT) if tool is not None else None
        if done is None:
            done = contained_run([python, str(API_CHECK)], input=request,
                                 timeout=CHECK_TIMEOUT)
        answer = json.loads(done.stdout) if done.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
        return []
    found = []
    for f in answer.get("findings", []):
        if "type" not in f or "message" not in f:
            continue
        facts = f.get("facts") or {}
        found.append(ApiFinding(int(f.get("line", 0)), str(f["type"]), str(f["message"]),
                                str(f.get("library", "")), str(f.get("file", "")),
                                tuple((str(k), str(v)) for k, v in facts.items())))
    return found


def api_diagnoses(source: str, python: str, versions: dict[str, str],
                  modules: Mapping[str, str] | None = None,
                  folder: Path | None = None, tool: Tool | None = None) -> list[Diagnosis]:
    """Diagnoses for the drift findings of ``source`` and of the user's ``modules`` (path
    -> source, beside the script in ``folder``) in interpreter ``python``.

    Only findings that classify into a drift category (``Category.before_run``, with the
    same patterns as a real traceback) are returned, each with the file to change
    (``file``: "" for the script, else the module's path), the line and the facts the
    check measured; ``versions`` names the installed libraries for the evidence; ``tool``
    runs the check in the session's warm interpreter (:func:`check_api`). A source
    that does not parse gives none (the run reports it as ``syntax-error``).
    """
    try:
        uses = scan(source, modules, folder)
    except cst.ParserSyntaxError:
        return []
    texts = {"": source, **(modules or {})}
    found: list[Diagnosis] = []
    for finding in check_api(python, uses, tool):
        headline = f"{finding.type}: {finding.message}"
        # a category that needs the facts at a failure (or has no message to go by) cannot
        # be shown before a run: there are no frames yet
        category = next((c for c in all_categories()
                         if c.compiled and not c.needs_facts
                         and c.matches(finding.type, finding.message)), None)
        if category is None or not category.before_run:
            continue
        library = finding.library
        installed = f"{library} {versions[library]}" if library in versions else library
        lines = texts.get(finding.file, "").splitlines()
        text = lines[finding.line - 1] if 0 < finding.line <= len(lines) else ""
        details = [f"found before the first run: checked against the {installed} "
                   "signatures (no training run needed)"]
        caller = dict(finding.facts).get("caller", "")
        if caller:
            details.append(f"the library calls it at {caller}")
        found.append(Diagnosis(
            category=category.id, evidence=headline, file=finding.file, line=finding.line,
            line_text=text, details=tuple(details), via=API_PREFLIGHT,
            error_type=finding.type, facts=finding.facts))
    return found
