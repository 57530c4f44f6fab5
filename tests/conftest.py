"""Shared fixtures: scratch git repos, the two training environments, offline settings."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest

from autofix.run.child.events import describe_exception
from autofix.run.probe_events import exception_from_json
from autofix.types import ExceptionInfo

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_scripts"
TEST_SCRIPTS = Path(__file__).resolve().parent / "scripts"
V4_PYTHON = ROOT / ".venv-v4" / "bin" / "python"
OLD_PYTHON = ROOT / ".venv-old" / "bin" / "python"
AUTOFIX = [sys.executable, "-m", "autofix"]


#: The tier markers; a test with none of them is in the fast tier.
TIERS = ("process", "e2e", "v4", "old", "slow")


def pytest_configure(config: pytest.Config) -> None:
    """Under ``pytest -n`` (pytest-xdist) each worker gets a temporary folder of its own
    (``TMPDIR``, inherited by every script a test runs), so two sample scripts writing
    ``tempfile.gettempdir()/<output_dir>`` at once never share a folder."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        import tempfile

        base = Path(tempfile.gettempdir()) / f"autofix-tests-{os.getpid()}-{worker}"
        base.mkdir(parents=True, exist_ok=True)
        os.environ["TMPDIR"] = str(base)
        tempfile.tempdir = None  # gettempdir() reads TMPDIR again
        config.add_cleanup(lambda: shutil.rmtree(base, ignore_errors=True))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that has no tier marker ``fast`` (no process, no training)."""
    for item in items:
        if not any(item.get_closest_marker(tier) for tier in TIERS):
            item.add_marker(pytest.mark.fast)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing in the tests may reach the Hugging Face Hub."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def v4_python() -> str:
    """The transformers 4.57 environment built by scripts/setup.sh (required, not skipped)."""
    if not V4_PYTHON.exists():
        pytest.fail(f"{V4_PYTHON} is missing: run scripts/setup.sh (the test command does)")
    return str(V4_PYTHON)


@pytest.fixture
def old_python() -> str:
    """The transformers 4.40 environment built by scripts/setup.sh (required, not skipped)."""
    if not OLD_PYTHON.exists():
        pytest.fail(f"{OLD_PYTHON} is missing: run scripts/setup.sh (the test command does)")
    return str(OLD_PYTHON)


def chromium() -> str:
    """The headless browser the report pages are rendered in (the Debian ``chromium``
    package); the calling test is skipped, saying how to get it, when it is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("Chromium is missing: the full set-up, scripts/setup.sh (not --main-only), "
                    "installs it (apt-get install chromium, as root or through sudo)")
    return browser


def make_repo(path: Path, files: dict[str, str | Path]) -> git.Repo:
    """A git repo at ``path`` whose first commit holds ``files`` (text, or a path to copy;
    a directory path is copied whole)."""
    path.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            if content.is_dir():
                shutil.copytree(content, target)
            else:
                shutil.copy(content, target)
        else:
            target.write_text(content, encoding="utf-8")
    repo = git.Repo.init(path, initial_branch="main")
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Test User")
        cw.set_value("user", "email", "test@example.com")
    repo.git.add(A=True)
    repo.index.commit("initial")
    return repo


@pytest.fixture(scope="module")
def tiny_llm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny Llama-style causal LM and tokenizer of ``scripts/make_tiny_llm.py``, built
    once per test module (a few seconds; a scratch repository cannot build it itself):
    pass it to the samples as ``AUTOFIX_TINY_LLM``."""
    spec = importlib.util.spec_from_file_location("make_tiny_llm",
                                                  ROOT / "scripts" / "make_tiny_llm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built: Path = module.build(tmp_path_factory.mktemp("tiny-llm") / "model")
    return built


@pytest.fixture
def scratch_repo(tmp_path: Path) -> Callable[[dict[str, str | Path]], git.Repo]:
    """Factory: ``scratch_repo({"train.py": "..."})`` -> a committed repo in tmp_path."""
    return lambda files: make_repo(tmp_path / "repo", files)


def snapshot(repo: git.Repo) -> dict[str, object]:
    """What must not change: HEAD, the current branch, the index, every work-tree file."""
    root = Path(str(repo.working_tree_dir))
    files = {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }
    index = (Path(repo.git_dir) / "index").read_bytes()
    return {"head": repo.head.commit.hexsha, "branch": repo.active_branch.name,
            "index": index, "files": files}


def run_autofix(args: list[str], cwd: Path, timeout: float = 600,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real ``autofix`` CLI in a subprocess (stdin closed), output captured."""
    return subprocess.run(
        [*AUTOFIX, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def trailers(repo: git.Repo, branch: str, base: str) -> list[str]:
    """``Autofix-Category`` of each commit on ``branch`` after ``base``, oldest first."""
    out = []
    for commit in reversed(list(repo.iter_commits(f"{base}..{branch}"))):
        msg = str(commit.message)
        cat = [ln.split(":", 1)[1].strip() for ln in msg.splitlines()
               if ln.startswith("Autofix-Category:")]
        out.append(cat[0] if cat else "")
    return out


def failed(action: Callable[[], Any]) -> ExceptionInfo:
    """What the parent reads of the exception ``action`` raises (the child's event)."""
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - any failure is the point
        return exception_from_json(json.loads(json.dumps(describe_exception(exc),
                                                         default=repr)))
    raise AssertionError("the action did not fail")
