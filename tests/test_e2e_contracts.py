"""Plain PyTorch scripts that break a module's contract, repaired through the real CLI
(``sample_scripts/contracts``): each is copied into a throwaway git repository, autofix
runs on it, and the branch it leaves must hold the fix (the diff's lines) and train (its
last run reaches the step budget with a finite loss).

- ``custom_head_hardcoded_768.py``: the field case (mim-solutions/bert_for_longer_texts#36,
  ``/work/shared/cases-t4/t4_07``), a head ``nn.Linear(768, 3)`` on the 384-wide MiniLM-L6;
- ``tiny_encoder_head_64.py``: the same kind on a BERT of hidden size 32 built from a
  config, a head sized 64;
- ``tiny_mlp_constant.py``: a plain MLP whose second layer's width comes from a constant
  through a constructor parameter.

Cost: three sessions of two runs each, about 15 s apiece on 2 cores (``--max-steps 5``),
one module-scoped fixture per script.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import SAMPLES, make_repo, run_autofix, trailers

CONTRACTS = SAMPLES / "contracts"


@dataclass(frozen=True)
class Session:
    returncode: int
    output: str
    report: dict[str, object]
    diff: list[str]  # the branch's changed lines, "-old" / "+new"


def _session(root: Path, script: str) -> Session:
    repo = make_repo(root, {script: CONTRACTS / script, "data": CONTRACTS / "data"})
    done = run_autofix([script, "--branch", "fixes", "--max-steps", "5", "--timeout", "600",
                        "--report", "../report.json"], root, timeout=900,
                       env={"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    report = json.loads((root.parent / "report.json").read_text())
    diff = [line for line in repo.git.diff("main..fixes").splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))] \
        if "fixes" in [h.name for h in repo.heads] else []
    assert trailers(repo, "fixes", "main") == ["layer-size-mismatch"], done.stdout[-3000:]
    return Session(done.returncode, done.stdout + done.stderr, report, diff)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Session]:
    """One autofix session per script, run when a test first asks for it."""
    done: dict[str, Session] = {}

    def get(script: str) -> Session:
        if script not in done:
            done[script] = _session(tmp_path_factory.mktemp(Path(script).stem) / "repo",
                                    script)
        return done[script]

    return get


def _trains(result: Session) -> None:
    assert result.returncode == 0, result.output[-4000:]
    assert result.report["status"] == "fixed"
    runs = result.report["runs"]
    assert isinstance(runs, list)
    assert [r["category"] for r in runs] == ["layer-size-mismatch", ""]
    assert runs[-1]["outcome"] in ("budget", "ok"), runs[-1]


@pytest.mark.e2e
def test_the_field_case_head_is_sized_from_the_encoder(
        sessions: Callable[[str], Session]) -> None:
    result = sessions("custom_head_hardcoded_768.py")
    _trains(result)
    assert result.diff == ["-        self.head = nn.Linear(768, num_classes)",
                           "+        self.head = nn.Linear(self.encoder.config.hidden_size, "
                           "num_classes)"]
    runs = result.report["runs"]
    assert isinstance(runs, list)
    assert "(16x384 and 768x3)" in runs[0]["evidence"]


@pytest.mark.e2e
def test_a_tiny_encoders_head_is_sized_from_its_config(
        sessions: Callable[[str], Session]) -> None:
    result = sessions("tiny_encoder_head_64.py")
    _trains(result)
    assert result.diff == ["-        self.head = nn.Linear(64, num_classes)",
                           "+        self.head = nn.Linear(self.encoder.config.hidden_size, "
                           "num_classes)"]


@pytest.mark.e2e
def test_a_layer_width_from_a_constant_is_changed_where_it_is_defined(
        sessions: Callable[[str], Session]) -> None:
    result = sessions("tiny_mlp_constant.py")
    _trains(result)
    assert result.diff == ["-HIDDEN = 64", "+HIDDEN = 32"]
