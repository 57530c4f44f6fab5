"""The libraries' own advice, through the real stack: scripts of this project's own
(``tests/scripts/advice/``) whose failure message names the change, repaired in a
throwaway repository; the branch autofix leaves is checked.

- a ``Trainer`` that evaluates every 2 steps without an ``eval_dataset``, its validation
  split in scope (in a helper's ``load_dataset(data_files=...)``): the split is passed;
- the same with training data only: evaluation is turned off in the dict of arguments;
- ``trainer.evaluate()`` with no evaluation data, a test split in scope: it is passed;
- TRL's ``SFTConfig`` default ``bf16=True`` on a CPU: ``bf16=False``;
- a streamed training file without ``max_steps``: no value is invented; the advice gives
  the formula with the script's own batch size and epochs, nothing is committed.

Cost: five sessions of a tiny BERT (hidden 32, 2 layers, MiniLM's tokenizer) or the tiny
Llama of ``scripts/make_tiny_llm.py``, two at once (one thread each), ``--max-steps 3``.
"""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import git
import pytest

from .conftest import ROOT, SAMPLES, make_repo, run_autofix, trailers

pytestmark = pytest.mark.e2e

SCRIPTS = Path(__file__).parent / "scripts" / "advice"
CASES = ("eval_split_in_scope.py", "eval_no_split.py", "evaluate_without_eval_data.py",
         "trl_bf16_default.py", "stream_without_max_steps.py")


@dataclass(frozen=True)
class Session:
    repo: git.Repo
    returncode: int
    output: str
    report: dict[str, object]
    source: str  # the script on the fix branch ("" : no branch)


def _tiny_llm(base: Path) -> str:
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_tiny_llm import build

    return str(build(base / "tiny-llm"))


def _run(script: str, root: Path, env: dict[str, str]) -> Session:
    repo = make_repo(root, {script: SCRIPTS / script, "data": SAMPLES / "data"})
    done = run_autofix([script, "--branch", "fixes", "--max-steps", "3", "--timeout", "600",
                        "--report", "../report.json"], root, timeout=1800,
                       env={"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", **env})
    report = json.loads((root.parent / "report.json").read_text())
    source = (repo.commit("fixes").tree / script).data_stream.read().decode() \
        if "fixes" in [h.name for h in repo.heads] else ""
    return Session(repo, done.returncode, done.stdout + done.stderr, report, source)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Session]:
    base = tmp_path_factory.mktemp("advice")
    env = {"AUTOFIX_TINY_LLM": os.environ.get("AUTOFIX_TINY_LLM") or _tiny_llm(base)}
    roots = {s: tmp_path_factory.mktemp(Path(s).stem) / "repo" for s in CASES}
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = pool.map(lambda s: _run(s, roots[s], env), CASES)
        return dict(zip(CASES, done, strict=True))


def _fixed(session: Session, categories: list[str]) -> None:
    assert session.returncode == 0, session.output[-4000:]
    assert session.report["status"] == "fixed"
    assert trailers(session.repo, "fixes", "main") == categories
    runs = session.report["runs"]
    assert isinstance(runs, list)
    assert runs[-1]["outcome"] in ("budget", "ok"), runs[-1]  # the branch's script trains


def test_the_validation_split_in_scope_is_passed(sessions: dict[str, Session]) -> None:
    session = sessions["eval_split_in_scope.py"]
    _fixed(session, ["training-args-conflict"])
    assert 'train_dataset=splits["train"],\n' in session.source
    assert 'eval_dataset=splits["validation"])' in session.source
    assert 'eval_strategy="steps"' in session.source  # the evaluation the script asked for
    fixes = session.report["fixes"]
    assert isinstance(fixes, list) and fixes[0]["recipe"] == "eval-dataset-for-strategy"


def test_without_a_split_evaluation_is_turned_off_at_its_source(
        sessions: dict[str, Session]) -> None:
    session = sessions["eval_no_split.py"]
    _fixed(session, ["training-args-conflict"])
    assert '"eval_strategy": "no",' in session.source  # in the dict given as **HP
    assert "eval_dataset" not in session.source


def test_evaluate_gets_the_test_split(sessions: dict[str, Session]) -> None:
    session = sessions["evaluate_without_eval_data.py"]
    _fixed(session, ["trainer-setup"])
    assert 'processing_class=tokenizer, eval_dataset=data["test"])' in session.source


def test_trl_bf16_default_is_turned_off(sessions: dict[str, Session]) -> None:
    session = sessions["trl_bf16_default.py"]
    _fixed(session, ["training-args-conflict"])
    assert 'report_to="none", bf16=False)' in session.source


def test_a_stream_gets_advice_not_an_invented_max_steps(sessions: dict[str, Session]) -> None:
    session = sessions["stream_without_max_steps.py"]
    assert session.source == ""  # nothing committed
    assert session.report["status"] == "gave_up"
    runs = session.report["runs"]
    assert isinstance(runs, list) and [r["category"] for r in runs] == ["training-args-conflict"]
    reason = str(session.report["reason"])
    assert "max_steps = ceil(rows / 32) x 2 (per_device_train_batch_size=32" in reason
