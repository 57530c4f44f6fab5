"""The invariants of a hand loop's training step through the real CLI and the real stack.

* The field case ``sample_scripts/cases/t5_11_steplr_per_batch.py`` (``StepLR(step_size=1,
  gamma=0.1)`` stepped inside the batch loop of MiniLM-L6: the rate is 1e-20 within epoch
  0): fixed by one ``scheduler-step-per-epoch`` commit that moves ``scheduler.step()``
  after the batch loop; the branch's script, run under plain ``python`` for its 2 epochs,
  reaches a validation accuracy above 0.9; the report says what the verifying run covered.
* A ``train_step`` helper that never clears the gradients gets ``opt.zero_grad()`` at the
  top of the step, after the batch is unpacked, before the forward.
* A dropout MLP evaluated at module level after its loop, without ``no_grad`` and without
  ``model.eval()``: ``model.eval()`` before the evaluation loop.
* A warmup schedule sized in optimizer steps stepped once per epoch:
  ``scheduler.step()`` moved into the batch loop, after ``optimizer.step()``.
* Healthy forwards (gradient accumulation, a loss backpropagated after two forwards, a
  teacher in eval mode, a frozen encoder with dropout called in training mode inside the
  model's forward and outside it, an ``evaluate()`` that switches modes): no finding.

The four sessions run two at a time (one per core) in one module-scoped fixture; the tiny
scripts train plain MLPs (a few seconds a run), the field case MiniLM-L6 (about 30 s a run).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import git
import pytest

from autofix.loop.verdicts import run_findings
from autofix.run.runner import RunSpec, run_script
from autofix.settings import Settings

from .conftest import SAMPLES, TEST_SCRIPTS, make_repo, run_autofix, trailers

pytestmark = pytest.mark.e2e
STEP = TEST_SCRIPTS / "training_step"
CASE = SAMPLES / "cases" / "t5_11_steplr_per_batch.py"
ENV = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
       "TRANSFORMERS_OFFLINE": "1"}


@dataclass(frozen=True)
class Session:
    repo: git.Repo
    code: int
    out: str
    report: dict[str, object]

    @property
    def root(self) -> Path:
        return Path(str(self.repo.working_tree_dir))

    def changed(self, sign: str) -> list[str]:
        """The lines the branch added (``+``) or removed (``-``), stripped."""
        diff = self.repo.git.diff("main", "fixes")
        return [ln[1:].strip() for ln in diff.splitlines()
                if ln.startswith(sign) and not ln.startswith(sign * 3)]

    def fixed(self, name: str) -> str:
        return str(self.repo.git.show(f"fixes:{name}"))


def session(folder: Path, files: dict[str, str | Path], script: str) -> Session:
    repo = make_repo(folder / "repo", files)
    done = run_autofix([script, "--branch", "fixes", "--report", "../report.json"],
                       folder / "repo", timeout=900, env=ENV)
    report = json.loads((folder / "report.json").read_text())
    return Session(repo, done.returncode, done.stdout + done.stderr, report)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Session]:
    jobs = {
        "t5_11": ({"t5_11_steplr_per_batch.py": CASE,
                   "data/tickets_train.jsonl": CASE.parent / "data" / "tickets_train.jsonl",
                   "data/tickets_validation.jsonl":
                       CASE.parent / "data" / "tickets_validation.jsonl"},
                  "t5_11_steplr_per_batch.py"),
        "zero_grad": ({"train.py": STEP / "zero_grad_step_fn.py"}, "train.py"),
        "eval_mode": ({"train.py": STEP / "eval_after_loop.py"}, "train.py"),
        "warmup": ({"train.py": STEP / "warmup_per_epoch.py"}, "train.py"),
    }
    with ThreadPoolExecutor(2) as pool:
        futures = {name: pool.submit(session, tmp_path_factory.mktemp(name), files, script)
                   for name, (files, script) in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


def test_the_field_case_steplr_stepped_per_batch_is_fixed_at_the_epoch_loop(
        sessions: dict[str, Session]) -> None:
    done = sessions["t5_11"]
    assert done.code == 0, done.out
    assert done.report["status"] == "fixed", done.out
    assert trailers(done.repo, "fixes", "main") == ["scheduler-stepped-per-batch"]
    assert done.changed("-") == ["scheduler.step()"] and done.changed("+") == \
        ["scheduler.step()"], done.repo.git.diff("main", "fixes")
    fixed = done.fixed("t5_11_steplr_per_batch.py")
    assert "            losses.append(out.loss.item())\n        scheduler.step()\n" \
           "        model.eval()\n" in fixed
    runs = done.report["runs"]
    assert isinstance(runs, list)
    assert runs[0]["category"] == "scheduler-stepped-per-batch"
    summary = done.report["fixes"][0]["summary"]  # type: ignore[index]
    assert "StepLR(step_size=1, gamma=0.1) counts epochs; stepped after every optimizer step " \
           "its rate fell under 1/100 of its peak at call 3, within the first of 2 epochs of " \
           "16 steps" in summary
    last = runs[-1]
    assert last["total_steps"] == 32 and len(last["steps"]) == 32
    evaluations = [p for p in last["phases"] if p["kind"] == "evaluate"]
    assert [p["step"] for p in evaluations] == [16, 32]
    assert evaluations[-1]["metrics"]["held_out_accuracy"] > 0.9
    assert last["covered"].startswith("32 of 32 training steps; 2 evaluations (steps 16, "
                                      "32; the last after the final step: held_out_loss ")
    assert f"covered (run {last['n']}): 32 of 32 training steps" in done.out


def test_the_fixed_field_case_reaches_090_under_plain_python(
        sessions: dict[str, Session]) -> None:
    """The branch's script, run as its author would (``python``, its 2 epochs)."""
    done = sessions["t5_11"]
    script = done.root / "fixed_t5_11.py"
    script.write_text(done.fixed("t5_11_steplr_per_batch.py"))
    ran = subprocess.run([sys.executable, str(script)], cwd=done.root, capture_output=True,
                         text=True, timeout=600, env={**ENV, "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.stderr[-2000:]
    accuracies = [float(a) for a in re.findall(r"val acc ([0-9.]+)", ran.stdout)]
    assert len(accuracies) == 2 and accuracies[-1] > 0.9, ran.stdout


def test_a_train_step_helper_gets_zero_grad_at_the_top_of_its_step(
        sessions: dict[str, Session]) -> None:
    done = sessions["zero_grad"]
    assert done.code == 0 and done.report["status"] == "fixed", done.out
    assert trailers(done.repo, "fixes", "main") == ["zero-grad-missing"]
    assert done.changed("+") == ["opt.zero_grad()"] and done.changed("-") == []
    assert "    x, y = batch\n    opt.zero_grad()\n    logits = model(x)\n" in \
        done.fixed("train.py")


def test_a_module_level_evaluation_without_no_grad_gets_model_eval_before_it(
        sessions: dict[str, Session]) -> None:
    done = sessions["eval_mode"]
    assert done.code == 0 and done.report["status"] == "fixed", done.out
    assert trailers(done.repo, "fixes", "main") == ["eval-without-eval-mode"]
    assert done.changed("+") == ["model.eval()"] and done.changed("-") == []
    assert "correct = 0\nmodel.eval()\nfor i in range(600, 800, 50):\n" in \
        done.fixed("train.py")
    first = done.report["runs"][0]  # type: ignore[index]
    assert "with gradients on, its outputs never backpropagated" in first["evidence"] or \
        "eval-without-eval-mode" in done.out


def test_a_warmup_stepped_per_epoch_is_stepped_after_each_optimizer_step(
        sessions: dict[str, Session]) -> None:
    done = sessions["warmup"]
    assert done.code == 0 and done.report["status"] == "fixed", done.out
    assert trailers(done.repo, "fixes", "main") == ["scheduler-stepped-per-epoch"]
    assert "        optimizer.step()\n        scheduler.step()\n    print(" in \
        done.fixed("train.py")


def test_forwards_that_are_trained_on_give_no_finding(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text((STEP / "healthy_forwards.py").read_text())
    settings = Settings(python=sys.executable, cwd=tmp_path, timeout=300, max_steps=60,
                        env=ENV)
    run = run_script(RunSpec(script, settings), script.read_text())
    assert run.probe.exception is None and len(run.probe.steps) == 10, run.output_tail
    facts = run.probe.facts
    assert facts["train_mode_evals"] == [] and facts["no_grad_train_calls"] == 0
    assert facts["no_grad_eval_calls"] >= 20  # the teacher and the evaluations
    assert run_findings(run) == []
    # the evaluations of the student, not the teacher's forwards inside the steps
    assert [(p.kind, p.step) for p in run.probe.phases] == [("evaluate", 5), ("evaluate", 10)]
