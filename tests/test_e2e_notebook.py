"""A notebook repaired end to end through the real stack: only the patched cell changes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import git
import nbformat
import pytest

from .conftest import SAMPLES, run_autofix, snapshot, trailers

Repo = Callable[[dict[str, str | Path]], git.Repo]
pytestmark = pytest.mark.e2e


def course_notebook() -> str:
    """The course script as a notebook: its faults 1-2 fixed, num_labels still missing."""
    source = (SAMPLES / "course_pt_mnli.py").read_text()
    source = source.replace('train_dataset=raw_datasets["train"]',
                            'train_dataset=tokenized_datasets["train"]')
    source = source.replace('eval_dataset=raw_datasets["validation_matched"],',
                            'eval_dataset=tokenized_datasets["validation_matched"],\n'
                            '    processing_class=tokenizer,')
    source = source.replace("from pathlib import Path", "from pathlib import Path\n"
                            "data_dir = Path('data')")
    source = source.replace('data_dir = Path(__file__).parent / "data"\n', "")
    chunks = [c.strip("\n") for c in source.split("\n\n\n") if c.strip()]
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# Fine-tuning MiniLM on MNLI")]
    nb.cells.append(nbformat.v4.new_code_cell("!pip install transformers datasets\n"
                                              "%matplotlib inline"))
    for i, chunk in enumerate(chunks):
        nb.cells.append(nbformat.v4.new_code_cell(chunk, execution_count=i + 1, outputs=[
            nbformat.v4.new_output("stream", name="stdout", text=f"output of cell {i}\n")]))
    return nbformat.writes(nb) + "\n"


def test_notebook_fix_touches_only_the_patched_cell(scratch_repo: Repo) -> None:
    original = course_notebook()
    repo = scratch_repo({"course.ipynb": original, "data": SAMPLES / "data"})
    root = Path(str(repo.working_tree_dir))
    before = snapshot(repo)
    done = run_autofix(["course.ipynb", "--branch", "fixes", "--max-steps", "3",
                        "--report", "../r.json"], root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert snapshot(repo) == before
    assert trailers(repo, "fixes", "main") == ["label-out-of-range"]
    report = json.loads((root.parent / "r.json").read_text())
    assert report["skipped"] == ["cell 1: !pip install transformers datasets",
                                 "cell 1: %matplotlib inline"]
    message = str(repo.commit("fixes").message)
    assert "course.ipynb, cell" in message
    old = json.loads(original)
    new = json.loads((repo.commit("fixes").tree / "course.ipynb").data_stream.read())
    assert {k: v for k, v in new.items() if k != "cells"} == \
        {k: v for k, v in old.items() if k != "cells"}
    assert len(new["cells"]) == len(old["cells"])
    changed = [i for i, (a, b) in enumerate(zip(old["cells"], new["cells"])) if a != b]
    assert len(changed) == 1
    a, b = old["cells"][changed[0]], new["cells"][changed[0]]
    assert "num_labels=3" in "".join(b["source"]) and "num_labels" not in "".join(a["source"])
    assert b["outputs"] == [] and b["execution_count"] is None
    assert {k: v for k, v in a.items() if k not in ("source", "outputs", "execution_count")} \
        == {k: v for k, v in b.items() if k not in ("source", "outputs", "execution_count")}
