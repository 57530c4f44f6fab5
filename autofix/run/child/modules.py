"""The user's own modules as they are on the fix branch.

A fix may edit a module the script imports (``model.py`` beside ``train.py``), not only
the script. The child must then import the branch's version of that module, while its
frames still name the user's real path. The parent writes each edited module to a
temporary file and sends ``{real path: patched file}`` (``AUTOFIX_PATCHED_MODULES``, JSON);
:func:`install` puts a finder first on ``sys.meta_path`` that loads those modules from
their patched file under their real name and path, and fills ``linecache`` so tracebacks
show the patched lines.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import linecache
import os
import sys
from typing import Any


class _PatchedLoader(importlib.machinery.SourceFileLoader):
    """Loads the module at its real path (``__file__``) from the patched file's text."""

    def __init__(self, fullname: str, real: str, patched: str) -> None:
        super().__init__(fullname, real)
        self.patched = patched

    def get_data(self, path: str) -> bytes:
        if os.path.abspath(path) == os.path.abspath(self.path):
            with open(self.patched, "rb") as fh:
                return fh.read()
        return super().get_data(path)

    def path_stats(self, path: str) -> Any:  # never a stale .pyc of the user's version
        raise OSError("patched source: no bytecode cache")


class PatchedModules(importlib.abc.MetaPathFinder):
    """Finds modules whose file is one of ``patched`` (real path -> patched file)."""

    def __init__(self, patched: dict[str, str]) -> None:
        self.patched = {os.path.abspath(k): v for k, v in patched.items()}
        self.active: set[str] = set()  # names being looked up (other finders ask us back)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname in self.active:
            return None
        self.active.add(fullname)
        try:
            return self._find(fullname, path, target)
        finally:
            self.active.discard(fullname)

    def _find(self, fullname: str, path: Any, target: Any) -> Any:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            try:
                spec = finder.find_spec(fullname, path, target)
            except (ImportError, ValueError):
                continue
            if spec is None:
                continue
            origin = os.path.abspath(spec.origin) if spec.origin else ""
            if origin not in self.patched:
                return None  # the module exists elsewhere: nothing of ours
            loader = _PatchedLoader(fullname, origin, self.patched[origin])
            return importlib.util.spec_from_file_location(
                fullname, origin, loader=loader,
                submodule_search_locations=spec.submodule_search_locations)
        return None


def install(raw: str) -> None:
    """Install the finder for the JSON mapping ``raw`` ("" or ``{}``: nothing)."""
    patched = json.loads(raw) if raw else {}
    if not patched:
        return
    for real, file in patched.items():
        with open(file, encoding="utf-8") as fh:
            text = fh.read()
        linecache.cache[os.path.abspath(real)] = (len(text), None,
                                                  text.splitlines(keepends=True),
                                                  os.path.abspath(real))
    sys.meta_path.insert(0, PatchedModules(patched))
