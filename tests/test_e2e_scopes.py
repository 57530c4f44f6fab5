"""Real-stack runs of practitioners'-style scripts: the two shared cases (code in functions,
a config dataclass, the tokenizer made in a helper) and a few of ``sample_scripts/styles``.
Each script is repaired once (module fixture); the tests read autofix's own verification
run and the branch it leaves."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import git
import pytest

from tests.conftest import SAMPLES, make_repo, run_autofix, trailers

pytestmark = pytest.mark.e2e

CASES = SAMPLES / "cases"
STYLES = ["s01_functions.py", "s04_dataclass.py", "s12_loop_functions.py"]


def _repair(tmp: Path, folder: str, script: Path, data: Path) -> tuple[git.Repo, dict, str]:
    repo = make_repo(tmp, {f"{folder}/{script.name}": script, "data": data})
    proc = run_autofix([f"{folder}/{script.name}", "--max-steps", "10", "--branch", "fixes",
                        "--report", "report.json"], cwd=tmp)
    report = json.loads((tmp / "report.json").read_text())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return repo, report, proc.stdout


@pytest.fixture(scope="module")
def three_faults(tmp_path_factory: pytest.TempPathFactory) -> tuple[git.Repo, dict, str]:
    return _repair(tmp_path_factory.mktemp("three"), "cases",
                   CASES / "functions_three_faults.py", CASES / "data")


@pytest.fixture(scope="module")
def tokenizer_in_helper(tmp_path_factory: pytest.TempPathFactory) -> tuple[git.Repo, dict, str]:
    return _repair(tmp_path_factory.mktemp("helper"), "cases",
                   CASES / "functions_tokenizer_in_helper.py", CASES / "data")


def _branch_file(repo: git.Repo, path: str) -> str:
    return str(repo.git.show(f"fixes:{path}"))


def test_three_faults_fixed_in_their_scopes(three_faults: tuple[git.Repo, dict, str]) -> None:
    repo, report, _ = three_faults
    assert report["status"] == "fixed"
    assert sorted(trailers(repo, "fixes", "HEAD")) == sorted(
        ["raw-dataset", "ragged-batch", "label-out-of-range"])
    assert report["runs"][-1]["outcome"] in ("ok", "budget")
    source = _branch_file(repo, "cases/functions_three_faults.py")
    assert "    num_labels: int = 3\n" in source  # the dataclass default, the source
    assert "cfg.model_dir, num_labels=cfg.num_labels\n" in source  # use site unchanged
    assert 'build_trainer(cfg, model, tokenizer, encoded["train"], encoded["test"])' in source
    message = repo.git.log("-1", "--format=%B", "fixes")
    assert "the default of Config.num_labels" in message or any(
        "Config.num_labels" in str(f) for f in report["fixes"])


def test_tokenizer_threaded_into_the_function_that_builds_trainer(
        tokenizer_in_helper: tuple[git.Repo, dict, str]) -> None:
    repo, report, stdout = tokenizer_in_helper
    assert report["status"] == "fixed"
    assert trailers(repo, "fixes", "HEAD") == ["ragged-batch"]
    assert report["runs"][-1]["outcome"] in ("ok", "budget")
    assert not any("NameError" in r["evidence"] for r in report["runs"])
    source = _branch_file(repo, "cases/functions_tokenizer_in_helper.py")
    assert "def build_trainer(cfg: Config, model, train_ds, eval_ds, *, tokenizer=None)" \
        in source
    assert "processing_class=tokenizer" in source
    assert 'encoded["test"], tokenizer=tokenizer)' in source
    compile(source, "x.py", "exec")


@pytest.fixture(scope="module", params=STYLES)
def style(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> tuple[git.Repo, dict, str, str]:
    name = str(request.param)
    repo, report, stdout = _repair(tmp_path_factory.mktemp(name[:3]), "styles",
                                   SAMPLES / "styles" / name, SAMPLES / "data")
    return repo, report, stdout, name


@pytest.mark.slow  # three more whole repair sessions; the shared cases above stay in CI
def test_style_script_trains_on_the_branch(style: tuple[git.Repo, dict, str, str]) -> None:
    repo, report, _, name = style
    assert report["status"] == "fixed"
    assert report["fixes"], "a style script has at least one fault"
    assert report["runs"][-1]["outcome"] in ("ok", "budget")
    errors = ("NameError", "TypeError", "SyntaxError", "ImportError")
    assert not any(e in r["evidence"] for r in report["runs"][1:] for e in errors)
    source = _branch_file(repo, f"styles/{name}")
    compile(source, name, "exec")
    assert subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                          cwd=repo.working_dir, capture_output=True, text=True).stdout == ""
