"""The plain PyTorch set's manifest (sample_scripts/plain/manifest.toml) matches its folders.

Every script of ``healthy/`` and ``faults/`` is listed once, every listed path exists and
parses as Python, kinds are ``healthy`` or a kebab-case category id, each fault kind has at
least 3 variants and the healthy set at least 24 scripts (the issue's floors), and every
fault names its fix.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest
import tomllib

PLAIN = Path(__file__).resolve().parent.parent / "sample_scripts" / "plain"
ENTRIES = tomllib.loads((PLAIN / "manifest.toml").read_text())["script"]
KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")

pytestmark = pytest.mark.fast


def test_every_file_listed_once_and_every_listed_file_exists() -> None:
    listed = [e["path"] for e in ENTRIES]
    on_disk = sorted(str(p.relative_to(PLAIN)) for p in PLAIN.glob("*/*.py"))
    assert len(listed) == len(set(listed))
    assert sorted(listed) == on_disk


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["path"])
def test_entry_parses_and_is_described(entry: dict[str, str]) -> None:
    ast.parse((PLAIN / entry["path"]).read_text(encoding="utf-8"))
    assert KEBAB.fullmatch(entry["kind"]), entry["kind"]
    assert entry["description"].strip()
    healthy = entry["kind"] == "healthy"
    assert entry["path"].startswith("healthy/" if healthy else "faults/")
    assert healthy or entry["fix"].strip()


def test_floors_per_kind() -> None:
    kinds = Counter(e["kind"] for e in ENTRIES)
    assert kinds.pop("healthy") >= 24
    assert len(kinds) >= 10
    assert min(kinds.values()) >= 3, kinds
