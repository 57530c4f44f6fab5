"""Every process a run starts ends with the run and with autofix (issue 27, point 2): a
grandchild in its own session (``start_new_session=True``, as ``setsid`` does) and a
double-forked daemon are gone after the run, after a timeout, and after a ``kill -9`` of
autofix itself; in a cgroup where this machine lets autofix make one (root here), and
with the supervisor's subreaper alone (``AUTOFIX_CGROUP=off``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autofix.run import cgroups
from autofix.run.runner import RunSpec, run_script
from autofix.settings import Settings
from autofix.types import RunOutcome

from .conftest import AUTOFIX, TEST_SCRIPTS, make_repo

pytestmark = pytest.mark.process

ESCAPING = (TEST_SCRIPTS / "escaping_children.py").read_text()
MODES = ["cgroup", "subreaper"]


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def marked(mark: str) -> list[int]:
    """The living processes whose environment holds ``AUTOFIX_TEST_MARK=mark``."""
    needle = f"AUTOFIX_TEST_MARK={mark}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                env = Path(entry.path, "environ").read_bytes()
            except OSError:
                continue
            if needle in env.split(b"\0") and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def gone(pids: list[int], seconds: float = 5.0) -> list[int]:
    """The pids of ``pids`` still alive after waiting up to ``seconds`` for them to end."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def _mode(mode: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {cgroups.OFF_VARIABLE: "off"} if mode == "subreaper" else {}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if mode == "cgroup" and not cgroups.enabled():
        pytest.skip("no writable cgroup v2 hierarchy here (not root?)")
    return env


def test_root_gets_a_cgroup_per_run() -> None:
    """As root with a cgroup2 mount (this machine, CI), runs must get a cgroup."""
    if os.geteuid() != 0 or cgroups._cgroup2_mount() is None:
        pytest.skip("not root, or no cgroup v2 hierarchy mounted")
    assert cgroups.enabled()
    made = cgroups.make()
    assert made is not None and made.is_dir()
    cgroups.remove(made)
    assert not made.exists()


@pytest.mark.parametrize("mode", MODES)
def test_setsid_grandchild_and_daemon_end_with_the_run(
        tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _mode(mode, monkeypatch)
    pids = tmp_path / "pids"
    settings = Settings(python=sys.executable, cwd=tmp_path, args=(str(pids),))
    result = run_script(RunSpec(tmp_path / "train.py", settings), ESCAPING)
    assert result.outcome is RunOutcome.OK, result.output_tail
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2
    assert gone(started, seconds=1.0) == []


@pytest.mark.parametrize("mode", MODES)
def test_a_timeout_ends_every_process_of_the_run(
        tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _mode(mode, monkeypatch)
    pids = tmp_path / "pids"
    settings = Settings(python=sys.executable, cwd=tmp_path, args=(str(pids), "600"),
                        timeout=2.0)
    result = run_script(RunSpec(tmp_path / "train.py", settings), ESCAPING)
    assert result.outcome is RunOutcome.TIMEOUT
    assert gone([int(p) for p in pids.read_text().split()], seconds=1.0) == []
    if mode == "cgroup":
        assert not [p for p in cgroups.parent().iterdir()  # type: ignore[union-attr]
                    if p.name.startswith(f"{cgroups.PREFIX}{os.getpid()}-")]


def test_the_exit_code_and_the_signal_pass_through(tmp_path: Path) -> None:
    settings = Settings(python=sys.executable, cwd=tmp_path)
    code = run_script(RunSpec(tmp_path / "a.py", settings), "raise SystemExit(3)\n")
    assert code.returncode == 3 and code.outcome is RunOutcome.FAILED
    killed = run_script(RunSpec(tmp_path / "b.py", settings),
                        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    assert killed.returncode == -signal.SIGKILL


@pytest.mark.parametrize("mode", MODES)
def test_kill_9_of_autofix_ends_the_child_and_its_grandchildren(
        tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the supervisor, the training child outlived a ``kill -9`` of autofix."""
    env = _mode(mode, monkeypatch)
    repo = tmp_path / "repo"
    make_repo(repo, {"train.py": ESCAPING})
    mark = uuid.uuid4().hex
    pids = tmp_path / "pids"
    proc = subprocess.Popen([*AUTOFIX, "train.py", "--", str(pids), "600"], cwd=repo,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            env={**os.environ, **env, "AUTOFIX_TEST_MARK": mark})
    try:
        deadline = time.monotonic() + 120
        while not (pids.exists() and len(pids.read_text().split()) == 2):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        started = [int(p) for p in pids.read_text().split()]
        running = marked(mark)
        assert len(running) >= 5  # autofix, the supervisor, the child, sleep, the daemon
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert gone(running + started) == []
        assert marked(mark) == []
    finally:
        for pid in marked(mark):  # never leave one behind, even when the test fails
            os.kill(pid, signal.SIGKILL)
