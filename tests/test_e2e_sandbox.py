"""``autofix batch --sandbox`` against hostile submissions, through the real CLI.

One batch runs every hostile script of ``tests/scripts/hostile/`` and one ordinary faulty
training script side by side. The user running autofix has credentials in a home folder
of the test's own (``HOME``: an SSH key, git's credential store, the Hugging Face token;
``HF_HOME`` with a token of its own) and in its environment; a server listens on
127.0.0.1. Each test checks what one script could (not) do, and that nothing of it leaked
into the output, the reports or the commits. Nothing here addresses anything but the
loopback. Where bubblewrap cannot isolate runs, the batch is skipped, saying why.
"""

from __future__ import annotations

import json
import socket
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
import pytest

from autofix.run.runner import RunSpec, run_script
from autofix.run.sandbox import bubblewrap, isolation
from autofix.settings import Settings

from .conftest import SAMPLES, TEST_SCRIPTS, make_repo, run_autofix, snapshot

HOSTILE = TEST_SCRIPTS / "hostile"
TRAIN = SAMPLES / "plain" / "faults" / "nonscalar_reduction_none.py"
#: A value no file or output of the test holds unless it leaked.
TAG = uuid.uuid4().hex[:12]
SECRETS = {"ssh": f"-----BEGIN-OPENSSH-PRIVATE-KEY-----ssh{TAG}",
           "git": f"https://student:git-{TAG}@example.com",
           "hf": f"hf_home{TAG}", "hf_home": f"hf_own{TAG}"}
ENV_SECRETS = {"HF_TOKEN": f"hf_env{TAG}", "AWS_SECRET_ACCESS_KEY": f"aws{TAG}",
               "SSH_AUTH_SOCK": "/tmp/agent.sock", "PASSED_TOKEN": "allowed"}
#: Every process of the batch carries this variable (autofix passes it on to the runs).
MARKER = "AUTOFIX_TEST_SANDBOX_BATCH"

#: These run the CLI and train one small model (a few seconds on CPU).
pytestmark = pytest.mark.e2e


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


def fake_home(folder: Path) -> Path:
    """A home folder holding the credentials a teacher's machine has."""
    home = folder / "home"
    for rel, text in ((".ssh/id_rsa", SECRETS["ssh"]), (".git-credentials", SECRETS["git"]),
                      (".cache/huggingface/token", SECRETS["hf"]),
                      ("hf/token", SECRETS["hf_home"])):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text + "\n")
    (home / "hf" / "hub").mkdir()
    return home


def leftovers(marker: str) -> list[str]:
    """The processes (pid and command) whose environment holds ``MARKER=marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            if f"{MARKER}={marker}".encode() in environ:
                found.append(f"{entry.name}: {(entry / 'cmdline').read_bytes()!r}")
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def hostile_batch(tmp_path_factory: pytest.TempPathFactory,
                  listener: Listener) -> dict[str, Any]:
    bwrap = bubblewrap()
    if not bwrap.usable:
        pytest.skip(f"{bwrap.problem}: runs cannot be isolated here; the full set-up "
                    "(scripts/setup.sh) installs bubblewrap")
    base = tmp_path_factory.mktemp("sandbox")
    root, home = base / "repo", fake_home(base)
    host_file = Path(tempfile.gettempdir()) / f"autofix-escape-{TAG}"
    files: dict[str, str | Path] = {f"sub/{p.name}": p for p in HOSTILE.glob("*.py")}
    files["sub/train_loss.py"] = TRAIN
    repo = make_repo(root, files)
    for path in (root / "sub").glob("*.py"):
        path.write_text(path.read_text().replace("@REPO@", str(root))
                        .replace("@PORT@", str(listener.port)).replace("@HOME@", str(home))
                        .replace("@HOST_FILE@", str(host_file)))
    repo.git.add(A=True)
    repo.index.commit("submissions")
    before = snapshot(repo)
    refs_before = {r.path: r.commit.hexsha for r in repo.refs}
    marker = uuid.uuid4().hex
    done = run_autofix(["batch", "sub", "--sandbox", "--jobs", "3", "--timeout", "120",
                        "--memory-mb", "1536", "--max-processes", "48",
                        "--pass-env", "PASSED_TOKEN", "--report", "../r.json"], root,
                       timeout=600, env={**ENV_SECRETS, "HOME": str(home),
                                         "HF_HOME": str(home / "hf"), MARKER: marker})
    report_text = (base / "r.json").read_text()
    report = json.loads(report_text)
    try:
        history = repo.git.log("--all", "-p")
    except git.GitCommandError as exc:  # a script broke a ref: the repository test says so
        history = str(exc)
    return {"done": done, "repo": repo, "root": root, "before": before, "home": home,
            "refs_before": refs_before, "report": report, "host_file": host_file,
            "texts": [done.stdout, done.stderr, report_text, (base / "r.md").read_text(),
                      history],
            "left": leftovers(marker),
            "rows": {Path(s["path"]).name: s for s in report["scripts"]}}


def said(batch: dict[str, Any], name: str) -> str:
    """The last line the script printed (its clean run's evidence)."""
    row = batch["rows"][name]
    assert row["status"] == "clean", row
    return str(row["runs"][-1]["evidence"])


def test_the_batch_ends_well_and_states_its_isolation(hostile_batch: dict[str, Any]) -> None:
    done = hostile_batch["done"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    expected = isolation()
    assert expected["isolation"].startswith("bubblewrap ")
    assert hostile_batch["report"]["sandbox"] == expected
    assert {row["isolation"]["isolation"] for row in hostile_batch["rows"].values()} == \
        {expected["isolation"]}
    assert f"sandbox: isolation: {expected['isolation']}" in done.stderr
    assert "not isolated" not in done.stderr
    scripts = len(hostile_batch["rows"])
    assert scripts == len(list(HOSTILE.glob("*.py"))) + 1
    assert f"isolation: {expected['isolation']} for all {scripts} scripts" in done.stdout
    assert f"Isolated by {expected['isolation']}." in hostile_batch["texts"][3]


def test_credentials_in_the_home_folder_and_etc_shadow_are_out_of_reach(
        hostile_batch: dict[str, Any]) -> None:
    text = said(hostile_batch, "snoop.py")
    results = dict(part.split(": ", 1) for part in text.split("; "))
    assert set(results) == {"ssh", "git", "hf", "hf_home", "shadow", "repo"}, text
    for name in ("ssh", "git", "hf", "shadow", "repo"):
        assert results[name] == "FileNotFoundError errno 2", text  # not there at all
    # HF_HOME is the model cache the script may read, its token file masked
    assert not results["hf_home"].startswith("READ hf_"), text


def test_no_secret_reached_any_output_report_or_commit(hostile_batch: dict[str, Any]) -> None:
    for secret in [*SECRETS.values(), ENV_SECRETS["HF_TOKEN"],
                   ENV_SECRETS["AWS_SECRET_ACCESS_KEY"]]:
        hits = [n for n, text in enumerate(hostile_batch["texts"]) if secret in text]
        assert hits == [], (secret, hits)


def test_credentials_in_the_environment_are_scrubbed_but_pass_env_kept(
        hostile_batch: dict[str, Any]) -> None:
    assert said(hostile_batch, "env_token.py") == (
        "HF_TOKEN=None AWS_SECRET_ACCESS_KEY=None SSH_AUTH_SOCK=None PASSED_TOKEN=allowed")


def test_writes_outside_the_copy_reach_nothing_of_the_host(
        hostile_batch: dict[str, Any]) -> None:
    text = said(hostile_batch, "writer.py")
    results = dict(part.split(": ", 1) for part in text.split("; "))
    assert results["git"] == results["ref"] == results["tree"] == \
        "FileNotFoundError errno 2", text  # the repository is not in its sight
    # into its private /tmp, gone with the run (as root; another user may not write the
    # folders bubblewrap made to mount its copy in)
    assert results["tmp"] in ("written", "PermissionError errno 13"), text
    assert not hostile_batch["host_file"].exists()
    assert not Path("/tmp", hostile_batch["host_file"].name).exists()
    root: Path = hostile_batch["root"]
    assert not (root / ".git" / "HACKED").exists()
    assert not (root / "sub" / "HACKED.txt").exists()
    assert not (root / "sub" / "next_to_me.txt").exists()  # it wrote into its copy only


def test_other_submissions_are_out_of_sight(hostile_batch: dict[str, Any]) -> None:
    assert said(hostile_batch, "neighbours.py") == \
        "copies 1, runs 1, other copies' scripts 0"


def test_the_network_is_cut(hostile_batch: dict[str, Any], listener: Listener) -> None:
    text = said(hostile_batch, "phone_home.py")
    assert text.startswith("no connection: "), text
    assert listener.received == []


def test_processes_and_memory_are_bounded(hostile_batch: dict[str, Any]) -> None:
    forks = said(hostile_batch, "fork_bomb.py")
    assert forks.startswith("forked ") and forks.endswith("then BlockingIOError"), forks
    assert int(forks.split()[1]) < 48
    memory = said(hostile_batch, "memory_hog.py")
    assert memory.endswith("MiB then MemoryError"), memory
    assert int(memory.split()[1]) <= 1536


def test_a_training_script_in_the_same_batch_is_repaired(
        hostile_batch: dict[str, Any]) -> None:
    row = hostile_batch["rows"]["train_loss.py"]
    assert row["status"] == "fixed", row
    assert [f["category"] for f in row["fixes"]] == ["non-scalar-backward"]
    assert row["trained"] and row["runs"][-1]["steps"], row["runs"][-1]
    repo: git.Repo = hostile_batch["repo"]
    fixed = repo.git.show(f"{row['branch']}:sub/train_loss.py")
    assert "backward()" in fixed and fixed != TRAIN.read_text()


def test_the_repository_is_unchanged_and_nothing_is_left_running(
        hostile_batch: dict[str, Any]) -> None:
    repo: git.Repo = hostile_batch["repo"]
    assert snapshot(repo) == hostile_batch["before"]
    refs = {r.path: r.commit.hexsha for r in repo.refs}
    assert {p: h for p, h in refs.items() if p in hostile_batch["refs_before"]} == \
        hostile_batch["refs_before"]
    assert sorted(set(refs) - set(hostile_batch["refs_before"])) == \
        ["refs/heads/autofix/sub/train_loss"]  # the one fix branch, written by autofix
    repo.git.fsck("--strict")
    assert hostile_batch["left"] == []


def test_without_sandbox_the_same_scripts_reach_the_host(tmp_path: Path,
                                                         listener: Listener) -> None:
    """The control: the listener answers and the home folder is readable outside the
    sandbox, so the cuts above are the sandbox's doing."""
    home = fake_home(tmp_path)
    for name, marker, value in (("phone_home.py", "@PORT@", str(listener.port)),
                                ("snoop.py", "@HOME@", str(home))):
        script = tmp_path / name
        source = (HOSTILE / name).read_text().replace(marker, value) \
            .replace("@REPO@", str(tmp_path))
        result = run_script(RunSpec(script, Settings(python=sys.executable, cwd=tmp_path,
                                                     timeout=60)), source)
        if name == "phone_home.py":
            assert "connected and sent" in result.output_tail
        else:
            assert f"ssh: READ {SECRETS['ssh']}" in result.output_tail
    listener.thread.join(timeout=0.5)
    assert b"stolen secret" in listener.received
    listener.received.clear()

