"""Paths as a commit message or report names them: library files relative to their
package (``torch/nn/functional.py:3555``), the repository's files relative to its root,
never the absolute layout of the machine autofix ran on."""

from __future__ import annotations

import re
import sys
from pathlib import Path

#: An absolute path up to and including an installation folder of packages.
_INSTALLED = re.compile(r"(?:[A-Za-z]:)?[/\\][^\s'\"()<>]*?[/\\](?:site|dist)-packages[/\\]")


def _stdlib_prefixes() -> list[str]:
    roots = {sys.base_prefix, sys.prefix, sys.exec_prefix}
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return sorted({str(Path(r) / "lib" / version) + "/" for r in roots}, key=len, reverse=True)


def relative_paths(text: str, root: Path | str | None = None) -> str:
    """``text`` with absolute paths shortened: ``.../site-packages/torch/x.py`` becomes
    ``torch/x.py``, ``<root>/sub/train.py`` becomes ``sub/train.py`` and the standard
    library's ``/usr/lib/python3.11/json/x.py`` becomes ``json/x.py``."""
    text = _INSTALLED.sub("", text)
    if root:
        prefix = str(Path(root).resolve()).rstrip("/") + "/"
        text = text.replace(prefix, "")
    for prefix in _stdlib_prefixes():
        text = text.replace(prefix, "")
    return text


_QUOTED = re.compile(r"""['"]([^'"]+)['"]""")


def missing_path(message: str) -> str:
    """The path a ``FileNotFoundError`` message names (the last quoted text; "" if none)."""
    found = _QUOTED.findall(message)
    return found[-1] if found else ""


def folder_name(folder: Path, root: Path | str | None) -> str:
    """``folder`` for a person: relative to the repository root ``root`` when inside it
    (``.`` for the root itself), else absolute."""
    if root:
        try:
            rel = folder.resolve().relative_to(Path(root).resolve()).as_posix()
            return f"{rel or '.'} (in the repository)" if rel != "." else \
                "the repository's top folder"
        except ValueError:
            pass
    return str(folder)
