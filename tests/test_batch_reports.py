"""``autofix batch --report`` (issue 27, point 5): the report named is written in the
format its suffix names, the JSON (or, for a JSON name, the Markdown) next to it, each
file written and printed once. The scripts are ``tests/scripts/cuda_literal`` (a
stand-in for torch: nothing is imported or trained)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from autofix.reports.formats import SCHEMA_PATH

from .conftest import TEST_SCRIPTS, make_repo, run_autofix

pytestmark = pytest.mark.process
PROJECT = TEST_SCRIPTS / "cuda_literal"


@pytest.mark.parametrize(("name", "written"), [("x.md", ["x.md", "x.json"]),
                                               ("x.html", ["x.html", "x.json"]),
                                               ("x.json", ["x.json", "x.md"])])
def test_each_report_is_written_and_printed_once(tmp_path: Path, name: str,
                                                 written: list[str]) -> None:
    repo = make_repo(tmp_path / "repo", {"a/train.py": PROJECT / "train.py",
                                         "a/torch.py": PROJECT / "torch.py",
                                         "b/train.py": PROJECT / "train.py",
                                         "b/torch.py": PROJECT / "torch.py"})
    root = Path(str(repo.working_tree_dir))
    out = tmp_path / "out"
    out.mkdir()
    done = run_autofix(["batch", "a/train.py", "b/train.py", "--jobs", "2", "--report",
                        str(out / name)], root, env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("reports: ")]
    assert lines == ["reports: " + ", ".join(str(out / w) for w in written)]
    assert sorted(p.name for p in out.iterdir()) == sorted(written)
    doc = json.loads((out / "x.json").read_text())
    jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))
    assert [s["status"] for s in doc["scripts"]] == ["fixed", "fixed"]
    assert doc["faults"] == [{"category": "cuda-unavailable", "scripts": 2, "fixed": 2,
                              "left": 0}]
    assert doc["command"].startswith("autofix batch a/train.py b/train.py")
    people = (out / written[0 if name != "x.json" else 1]).read_text()
    assert "cuda-unavailable" in people and "a/train.py" in people
