"""A diverging loss repaired on the real PyTorch stack (issue 26, item 1): unnormalised
inputs standardised where they are made (a case of the ML-Dev-Bench ``nan_losses`` kind),
and exploding gradients whose clipping only makes the loss finite, so the clip is dropped
and the learning rate divided, down the ladder (/10, /100) when a tenth still diverges. Each branch's script is then run again the way the
benchmark's own test runs it: its ``train()`` must return finite losses that fall."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, make_repo, run_autofix

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # three repair sessions with ladders

CASES = {"house.py": SAMPLES / "divergence" / "unscaled_house_prices.py",
         "delivery.py": SAMPLES / "divergence" / "exploding_delivery_times.py",
         "scores.py": SAMPLES / "divergence" / "rate_ladder_scores.py"}


class Session:
    def __init__(self, repo: git.Repo, script: str) -> None:
        root = Path(str(repo.working_tree_dir))
        branch = f"fix-{Path(script).stem}"
        self.done = run_autofix([script, "--branch", branch, "--report", f"../{branch}.json"],
                                root, timeout=600)
        self.out = self.done.stdout + self.done.stderr
        self.report = json.loads((root.parent / f"{branch}.json").read_text())
        self.commits = list(reversed(list(repo.iter_commits(f"main..{branch}"))))
        self.source = (repo.commit(branch).tree / script).data_stream.read().decode()
        self.original = Path(CASES[script]).read_text()


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Session]:
    repo = make_repo(tmp_path_factory.mktemp("divergence") / "repo", dict(CASES))
    return {script: Session(repo, script) for script in CASES}


def rerun(source: str, tmp: Path) -> list[float]:
    """The benchmark's test: import the fixed script, call ``train()``, read its losses."""
    (tmp / "fixed.py").write_text(source)
    code = "import json, fixed; print('LOSSES', json.dumps(fixed.train()))"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp, capture_output=True,
                          text=True, timeout=300, env={"OMP_NUM_THREADS": "1", "PATH": ""})
    line = next(x for x in done.stdout.splitlines() if x.startswith("LOSSES"))
    return [float(x) for x in json.loads(line.split(" ", 1)[1])]


def falls_like_the_benchmark(losses: list[float]) -> bool:
    """ML-Dev-Bench's check: no NaN, the last loss under the first and the middle one,
    the middle one under the first (and every loss finite)."""
    mid = len(losses) // 2
    return all(math.isfinite(x) for x in losses) \
        and losses[-1] < losses[0] and losses[-1] < losses[mid] < losses[0]


def test_unnormalised_inputs_are_standardised_where_they_are_made(
        sessions: dict[str, Session], tmp_path: Path) -> None:
    s = sessions["house.py"]
    assert s.done.returncode == 0, s.out
    assert s.report["status"] == "fixed"
    assert len(s.commits) == 1
    message = str(s.commits[0].message)
    assert "Autofix-Recipe: standardise-inputs" in message
    assert "Autofix-Category: unscaled-inputs" in message and "Autofix-Via: nan-loss" in message
    assert "the first non-finite step" in message  # the step, the history, the norm
    assert "loss over steps 1-" in message and "it grew" in message
    assert "gradient norm over steps 1-" in message
    assert "input features of the model call on line 23 (shape [64, 2]): values up to 240" \
        in message
    line = "features = (features - features.mean(dim=0)) / features.std(dim=0).clip(min=1e-8)"
    added = [x for x in s.source.splitlines() if x not in s.original.splitlines()]
    assert added == [line]
    lines = s.source.splitlines()  # right after the features are made, before the targets
    assert lines[lines.index(line) - 1].startswith("features = torch.stack(")
    assert falls_like_the_benchmark(rerun(s.source, tmp_path))


def test_a_clip_that_leaves_the_loss_flat_is_dropped_and_the_rate_divided(
        sessions: dict[str, Session], tmp_path: Path) -> None:
    s = sessions["delivery.py"]
    assert s.done.returncode == 0, s.out
    assert [str(c.message).count("Autofix-Recipe: divide-lr") for c in s.commits] == [1]
    runs = s.report["runs"]
    assert isinstance(runs, list) and runs[0]["category"] == "exploding-gradients"
    dropped = s.report["dropped"]
    assert isinstance(dropped, list) and [d["recipe"] for d in dropped] == ["clip-grad-norm"]
    assert "the loss is not finite and falling" in dropped[0]["reason"]
    added = [x for x in s.source.splitlines() if x not in s.original.splitlines()]
    assert added == ["optimizer = torch.optim.SGD(net.parameters(), lr=0.001)"]
    assert "clip_grad_norm_" not in s.source
    assert falls_like_the_benchmark(rerun(s.source, tmp_path))


def test_a_rate_still_diverging_after_one_division_goes_on_down_the_ladder(
        sessions: dict[str, Session], tmp_path: Path) -> None:
    s = sessions["scores.py"]
    assert s.done.returncode == 0, s.out
    assert [str(c.message).count("Autofix-Recipe: divide-lr") for c in s.commits] == [1]
    message = str(s.commits[0].message)
    assert message.startswith("autofix: divide the learning rate by 100 (lr=0.1)"), message
    assert "1. lr=1 (/10): not kept" in message and "2. lr=0.1 (/100): kept" in message
    assert "divide-lr candidate 1 not kept" in s.out
    # the report names both candidates and the runs that tried them
    [fix] = s.report["fixes"]
    tried = [(c["label"], c["kept"]) for c in fix["candidates"]]
    assert tried == [("lr=1 (/10)", False), ("lr=0.1 (/100)", True)], fix["candidates"]
    runs = [c["run"] for c in fix["candidates"]]
    assert runs == sorted(runs) and len(set(runs)) == 2 and runs[-1] <= len(s.report["runs"])
    added = [x for x in s.source.splitlines() if x not in s.original.splitlines()]
    assert added == ["optimizer = torch.optim.SGD(model.parameters(), lr=0.1)"]
    assert falls_like_the_benchmark(rerun(s.source, tmp_path))
