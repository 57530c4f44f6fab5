"""The in-memory branch writer and its replay by the driver; ranked probe events."""

from __future__ import annotations

import json
from pathlib import Path

from autofix.run.probe_events import read_probe
from autofix.types import FixRecord, RunRecord, SessionResult, Status
from autofix.vcs.writers import MemoryBranch, replay

from .conftest import make_repo, snapshot


def test_memory_branch_commits_drops_and_replays(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"ex/a.py": "print(1)\n"})
    root = Path(str(repo.working_tree_dir))
    (root / "ex" / "a.py").write_text("print(2)\n")  # uncommitted edit: a snapshot first
    before = snapshot(repo)
    branch = MemoryBranch("autofix/ex/a", "ex/a.py", "print(2)\n")
    first = branch.commit_fix("print(3)\n", "autofix: three\n\nAutofix-Category: a\n")
    branch.commit_fix("print(4)\n", "autofix: four\n")
    branch.drop_last()
    assert branch.source == "print(3)\n" and [c.key for c in branch.commits] == [first]
    result = SessionResult(Status.FIXED, "autofix/ex/a", "ok",
                           runs=[RunRecord(1, "failed", "a", "e", 1.0, "r", first)],
                           fixes=[FixRecord("a", "r", first, "ex/a.py", 1)])
    base = repo.head.commit.hexsha
    out = replay(root / "ex" / "a.py", "autofix/ex/a", base, branch.commits, result)
    tip = repo.commit("autofix/ex/a")
    assert out.fixes[0].commit == tip.hexsha == out.runs[0].commit
    assert (tip.tree / "ex/a.py").data_stream.read() == b"print(3)\n"
    snap = tip.parents[0]
    assert str(snap.summary).startswith("autofix: snapshot ")
    assert (snap.tree / "ex/a.py").data_stream.read() == b"print(2)\n"
    assert snap.parents[0].hexsha == base
    assert snapshot(repo) == before
    repo.git.fsck("--strict")


def test_replay_without_commits_writes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    result = SessionResult(Status.CLEAN, "autofix/a", "clean")
    assert replay(tmp_path / "repo" / "a.py", "autofix/a", repo.head.commit.hexsha, [],
                  result) is result
    assert [h.name for h in repo.heads] == ["main"]


def test_first_failing_rank_is_the_root_cause(tmp_path: Path) -> None:
    events = [
        {"event": "step", "rank": 0, "step": 1, "loss": 0.7},
        {"event": "step", "rank": 1, "step": 1, "loss": 0.6},
        {"event": "exception", "rank": 1, "type": "builtins.IndexError",
         "message": "Target 2 is out of bounds.", "frames": [], "chain": []},
        {"event": "exception", "rank": 0, "type": "builtins.RuntimeError",
         "message": "Connection closed by peer", "frames": [], "chain": []},
        {"event": "exit", "rank": 0, "code": 1},
    ]
    path = tmp_path / "probe.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    report = read_probe(path)
    assert report.rank == 1
    assert report.exception is not None and report.exception.message == (
        "Target 2 is out of bounds.")
    assert [s.loss for s in report.steps] == [0.7]  # rank 0's steps only
