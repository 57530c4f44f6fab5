"""The sandbox's pieces (``autofix/run/sandbox.py``): the scrubbed environment, the
bubblewrap command a run gets, what is reported and refused where bubblewrap is missing.
The hostile scripts themselves run in ``tests/test_e2e_sandbox.py``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from autofix.errors import AutofixError
from autofix.run import sandbox
from autofix.run.sandbox import (
    CHILD,
    bubblewrap,
    bwrap_command,
    confine,
    isolation,
    not_isolated,
    require_isolation,
    scrub_env,
)
from autofix.settings import Sandbox

from .conftest import make_repo


def test_scrub_env_keeps_the_training_environment() -> None:
    env = {"PATH": "/bin", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "HF_TOKEN": "x",
           "GITHUB_TOKEN": "x", "MY_API_KEY": "x", "AWS_PROFILE": "p", "WANDB_API_KEY": "x",
           "DB_PASSWORD": "x", "VIRTUAL_ENV": "/v", "SSH_AGENT_PID": "1"}
    assert scrub_env(env, keep=["AWS_PROFILE"]) == {
        "PATH": "/bin", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "VIRTUAL_ENV": "/v",
        "AWS_PROFILE": "p"}


def _pairs(args: list[str], flag: str) -> list[tuple[str, str]]:
    """Every ``flag SRC DEST`` of a bwrap command line."""
    return [(args[i + 1], args[i + 2]) for i, a in enumerate(args) if a == flag]


def test_the_bwrap_command_shows_the_script_only_what_it_needs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".cache" / "huggingface" / "hub").mkdir(parents=True)
    (home / ".cache" / "huggingface" / "token").write_text("hf_x")
    (home / ".ssh").mkdir()
    hf = tmp_path / "hf"
    (hf / "hub").mkdir(parents=True)
    (hf / "token").write_text("hf_y")
    copy, run = tmp_path / "copy", tmp_path / "run"
    monkeypatch.setattr(sandbox, "interpreter_roots",
                        lambda python: ("/opt/python/3.11", str(tmp_path / "venv")))
    args = bwrap_command(["python", "boot.py"], bwrap="bwrap", python="python",
                         env={"HOME": str(home), "HF_HOME": str(hf)}, cwd=copy / "sub",
                         writable=[copy, run], etc=tmp_path)
    assert args[0] == "bwrap" and args[-3:] == ["--", "python", "boot.py"]
    assert {"--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session"} <= \
        set(args)
    read_only = _pairs(args, "--ro-bind")
    assert ("/", "/") not in read_only and ("/etc", "/etc") not in read_only
    assert {("/usr", "/usr"), ("/opt/python/3.11", "/opt/python/3.11"),
            (str(tmp_path / "venv"),) * 2, (str(CHILD),) * 2, (str(hf),) * 2,
            (str(home / ".cache/huggingface/hub"),) * 2,
            ("/dev/null", str(hf / "token")),
            (str(tmp_path / "passwd"), "/etc/passwd")} <= set(read_only)
    assert _pairs(args, "--bind") == [(str(copy), str(copy)), (str(run), str(run))]
    # the home folder is an empty tmpfs; of it only the model cache is bound, no token
    assert not any(src in (str(home), str(home / ".ssh"),
                           str(home / ".cache/huggingface/token")) for src, _ in read_only)
    assert args.index(str(home)) < args.index(str(home / ".cache/huggingface/hub"))
    tmpfs = [args[i + 1] for i, a in enumerate(args) if a == "--tmpfs"]
    assert tmpfs == ["/tmp", str(home)]
    assert args.index("--tmpfs") < args.index("--bind")  # /tmp before the copy in it
    assert args[args.index("--chdir") + 1] == str(copy / "sub")
    passwd = (tmp_path / "passwd").read_text()
    assert passwd.splitlines()[0].split(":")[2:6:3] == [str(os.getuid()), str(home)]
    assert len(passwd.splitlines()) == 2  # the user and nobody


@pytest.mark.process
def test_interpreter_roots_hold_the_venv_and_the_python_it_links_to() -> None:
    roots = sandbox.interpreter_roots(sys.executable)
    for folder in (sys.prefix, sys.base_prefix):
        real = os.path.realpath(folder)
        assert any(real == r or real.startswith(r + "/") for r in roots), (real, roots)
    assert "/" not in roots


@pytest.fixture
def no_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process sees no ``bwrap`` on ``PATH``: the cached probes are cleared before
    and after."""
    real_which = sandbox.shutil.which
    monkeypatch.setattr(sandbox.shutil, "which",
                        lambda name, *a, **k: None if name == "bwrap" else real_which(name))
    bubblewrap.cache_clear()
    isolation.cache_clear()
    yield
    bubblewrap.cache_clear()
    isolation.cache_clear()


def test_without_bubblewrap_the_report_says_what_is_not_isolated(no_bubblewrap: None) -> None:
    found = isolation()
    assert found["isolation"] == "none: bubblewrap (bwrap) is not installed"
    assert found["network"] == "not isolated"
    assert found["files"].startswith("not isolated: ")
    assert not_isolated()[:2] == ["files", "network"]


def test_require_isolation_refuses_without_bubblewrap(no_bubblewrap: None) -> None:
    with pytest.raises(AutofixError) as refused:
        require_isolation()
    assert str(refused.value).startswith(
        "--require-isolation: bubblewrap (bwrap) is not installed")
    assert "apt-get install bubblewrap" in refused.value.hint
    with pytest.raises(AutofixError):  # a run asked to be isolated is not started either
        confine(["python", "x.py"], Sandbox(require_isolation=True))


def test_without_bubblewrap_a_run_keeps_its_limits(no_bubblewrap: None) -> None:
    confined = confine(["python", "x.py"], Sandbox(memory_mb=100))
    try:
        assert not confined.isolated and "bwrap" not in " ".join(confined.cmd)
        assert confined.cmd[-2:] == ["python", "x.py"]
        if isolation()["memory"] == "RLIMIT_AS":
            assert f"--as={100 * 1024 * 1024}" in confined.cmd
    finally:
        confined.close()


def without_bubblewrap(folder: Path) -> dict[str, str]:
    """The environment with a ``PATH`` of the tools a batch needs (git, sh, prlimit),
    linked into ``folder/bin``, and no ``bwrap``."""
    tools = folder / "bin"
    tools.mkdir()
    for name in ("git", "sh", "prlimit"):
        found = shutil.which(name)
        if found:
            (tools / name).symlink_to(found)
    return {**os.environ, "PATH": str(tools), "COLUMNS": "200"}


@pytest.mark.process
def test_the_cli_refuses_to_run_unisolated_with_require_isolation(tmp_path: Path) -> None:
    """Without bubblewrap on ``PATH``, ``--require-isolation`` stops
    before any run: exit 2, the missing tool named with how to install it."""
    repo = make_repo(tmp_path / "repo", {"train.py": "open('ran.txt', 'w').write('x')\n"})
    done = subprocess.run(
        [sys.executable, "-m", "autofix", "batch", ".", "--require-isolation"],
        cwd=tmp_path / "repo", capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, env=without_bubblewrap(tmp_path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--require-isolation: bubblewrap (bwrap) is not installed" in done.stderr
    assert "apt-get install bubblewrap" in done.stderr and "nothing was run" in done.stderr
    assert not (tmp_path / "repo" / "ran.txt").exists()
    assert [h.name for h in repo.heads] == ["main"]


@pytest.mark.process
def test_a_sandboxed_run_without_bubblewrap_is_reported_not_isolated(tmp_path: Path) -> None:
    """``--sandbox`` alone runs on where bubblewrap is missing, and says what is open."""
    make_repo(tmp_path / "repo", {"train.py": "print('hello')\n"})
    done = subprocess.run(
        [sys.executable, "-m", "autofix", "batch", ".", "--sandbox", "--report", "../r.json"],
        cwd=tmp_path / "repo", capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL, env=without_bubblewrap(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning: not isolated here: files, network" in done.stderr
    assert "--require-isolation refuses to run without it" in done.stderr
    assert "isolation: none: bubblewrap (bwrap) is not installed for 1 script" in done.stdout
    markdown = (tmp_path / "r.md").read_text()
    assert "Not isolated (bubblewrap (bwrap) is not installed): files, network" in markdown
