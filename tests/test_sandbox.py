"""``autofix batch --sandbox`` against hostile submissions (no ML libraries needed).

One batch runs all five hostile scripts through the real CLI; each test then checks what
one of them could (not) do. Nothing here addresses anything but the loopback.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
import pytest

from autofix.run.runner import RunSpec, run_script
from autofix.run.sandbox import Sandbox, confine, isolation, scrub_env
from autofix.settings import Settings

from .conftest import TEST_SCRIPTS, make_repo, run_autofix, snapshot

HOSTILE = TEST_SCRIPTS / "hostile"
SECRETS = {"HF_TOKEN": "hf_secret", "AWS_SECRET_ACCESS_KEY": "aws_secret",
           "SSH_AUTH_SOCK": "/tmp/agent.sock", "PASSED_TOKEN": "allowed"}

#: These start processes (the CLI, a child, a sandbox) and train nothing.
pytestmark = pytest.mark.process


class Listener:
    """A TCP server on 127.0.0.1 that records what it receives."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.received.append(conn.recv(1024))

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


@pytest.fixture(scope="module")
def hostile_batch(tmp_path_factory: pytest.TempPathFactory,
                  listener: Listener) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("sandbox") / "repo"
    files: dict[str, str | Path] = {f"sub/{p.name}": p for p in HOSTILE.glob("*.py")}
    repo = make_repo(root, files)
    for name, marker, value in (("git_writer.py", "@GIT_DIR@", str(root / ".git")),
                                ("phone_home.py", "@PORT@", str(listener.port))):
        path = root / "sub" / name
        path.write_text(path.read_text().replace(marker, value))
    repo.git.add(A=True)
    repo.index.commit("hostile submissions")
    before = snapshot(repo)
    refs_before = {r.path: r.commit.hexsha for r in repo.refs}
    done = run_autofix(["batch", "sub", "--sandbox", "--jobs", "2", "--timeout", "60",
                        "--memory-mb", "512", "--max-processes", "48",
                        "--pass-env", "PASSED_TOKEN", "--report", "../r.json"], root,
                       timeout=300, env=SECRETS)
    report = json.loads((root.parent / "r.json").read_text())
    return {"done": done, "repo": repo, "root": root, "before": before,
            "refs_before": refs_before, "report": report,
            "rows": {Path(s["path"]).name: s for s in report["scripts"]}}


def said(batch: dict[str, Any], name: str) -> str:
    """The last line the script printed (its clean run's evidence)."""
    row = batch["rows"][name]
    assert row["status"] == "clean", row
    return str(row["runs"][-1]["evidence"])


def test_isolation_is_reported(hostile_batch: dict[str, Any]) -> None:
    assert hostile_batch["report"]["sandbox"] == isolation()
    assert "sandbox: network:" in hostile_batch["done"].stderr


def test_credentials_are_scrubbed_but_pass_env_kept(hostile_batch: dict[str, Any]) -> None:
    assert said(hostile_batch, "env_token.py") == (
        "HF_TOKEN=None AWS_SECRET_ACCESS_KEY=None SSH_AUTH_SOCK=None PASSED_TOKEN=allowed")


def test_scrub_env_keeps_the_training_environment() -> None:
    env = {"PATH": "/bin", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "HF_TOKEN": "x",
           "GITHUB_TOKEN": "x", "MY_API_KEY": "x", "AWS_PROFILE": "p", "WANDB_API_KEY": "x",
           "DB_PASSWORD": "x", "VIRTUAL_ENV": "/v", "SSH_AGENT_PID": "1"}
    assert scrub_env(env, keep=["AWS_PROFILE"]) == {
        "PATH": "/bin", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "VIRTUAL_ENV": "/v",
        "AWS_PROFILE": "p"}


def test_fork_bomb_is_bounded(hostile_batch: dict[str, Any]) -> None:
    text = said(hostile_batch, "fork_bomb.py")
    assert text.startswith("forked ") and text.endswith("then BlockingIOError"), text
    assert int(text.split()[1]) < 48


def test_memory_is_bounded(hostile_batch: dict[str, Any]) -> None:
    text = said(hostile_batch, "memory_hog.py")
    assert text.endswith("MiB then MemoryError"), text
    assert int(text.split()[1]) <= 512


def test_repository_is_read_only(hostile_batch: dict[str, Any]) -> None:
    text = said(hostile_batch, "git_writer.py")
    assert text == ("HACKED: OSError errno 30; refs/heads/main: OSError errno 30"), text  # EROFS
    repo: git.Repo = hostile_batch["repo"]
    root: Path = hostile_batch["root"]
    assert not (root / ".git" / "HACKED").exists()
    assert not (root / "sub" / "next_to_me.txt").exists()  # it wrote into its copy only
    assert {r.path: r.commit.hexsha for r in repo.refs} == hostile_batch["refs_before"]
    assert snapshot(repo) == hostile_batch["before"]
    repo.git.fsck("--strict")


def test_network_is_cut(hostile_batch: dict[str, Any], listener: Listener) -> None:
    text = said(hostile_batch, "phone_home.py")
    assert text.startswith("no connection: "), text
    assert listener.received == []


def test_without_sandbox_the_same_script_reaches_the_server(tmp_path: Path,
                                                             listener: Listener) -> None:
    """The control: the listener works, so the cut above is the sandbox's doing."""
    script = tmp_path / "phone_home.py"
    source = (HOSTILE / "phone_home.py").read_text().replace("@PORT@", str(listener.port))
    result = run_script(RunSpec(script, Settings(python=sys.executable, cwd=tmp_path,
                                                 timeout=60)), source)
    assert "connected and sent" in result.output_tail
    listener.thread.join(timeout=0.5)
    assert b"stolen secret" in listener.received
    listener.received.clear()


def test_confine_leaves_out_what_the_machine_cannot_do() -> None:
    confined = confine(["python", "x.py"], Sandbox(readonly=("/nonexistent",)))
    try:
        assert confined.cmd[-2:] == ["python", "x.py"]
        assert "/nonexistent" not in " ".join(confined.cmd)  # missing paths are not mounted
        if isolation()["network"] == "not isolated":
            assert "unshare" not in confined.cmd
        else:
            assert "--net" in confined.cmd
    finally:
        confined.close()
