"""autofix's own time per iteration on the course sample: diagnose + recipe + commit.

The script's run is left out: each iteration is fed the real traceback saved for that
fault (``autofix/examples/<category>/v5.txt``, paths rewritten to the scratch script) and
the probe facts the real run reports. Prints per-phase and per-iteration figures in
milliseconds. Target (issue 2): < 1 s per iteration.

Usage: python benchmarks/bench_iteration.py [--rounds N]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from autofix.loop.diagnosis import diagnose
from autofix.loop.messages import commit_message
from autofix.run.runner import target_versions
from autofix.toolkit.discovery import recipes_for
from autofix.toolkit import apply_recipe
from autofix.types import (
    DatasetFacts,
    ProbeReport,
    RecipeContext,
    RunOutcome,
    RunResult,
    TrainerFacts,
)
from autofix.vcs.repo import prepare_branch

ROOT = Path(__file__).resolve().parent.parent
FAULTS = ("raw-dataset", "ragged-batch", "label-out-of-range")
FACTS = TrainerFacts("Trainer", "BertForSequenceClassification", 2, (
    DatasetFacts("train", ("premise", "hypothesis", "label", "input_ids"), 600, "label", "int",
                 None, 0, 2),))


def scratch_repo(base: Path) -> Path:
    repo = base / "repo"
    repo.mkdir()
    shutil.copy(ROOT / "sample_scripts" / "course_pt_mnli.py", repo)
    git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=b@b"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "sample"], check=True)
    return repo / "course_pt_mnli.py"


def fake_run(category: str, script: Path) -> RunResult:
    text = (ROOT / "autofix" / "categories" / "examples" / category / "v5.txt").read_text()
    text = re.sub(r'File "[^"]*course_pt_mnli\.py"', f'File "{script}"', text)
    return RunResult(RunOutcome.FAILED, 1, 0.0, text, len(text),
                     ProbeReport(trainers=[FACTS]))


def one_session(script: Path, branch: str, versions: dict[str, str]) -> list[dict[str, float]]:
    import git

    repo = git.Repo(script.parent)
    fb = prepare_branch(repo, script, branch, resume=False)
    rows = []
    for n, category in enumerate(FAULTS, 1):
        run = fake_run(category, script)
        t0 = time.perf_counter()
        diag = diagnose(run, script)
        assert diag.category == category, (diag.category, category)
        t1 = time.perf_counter()
        recipe = recipes_for(category)[0]
        outcome = apply_recipe(recipe, fb.source,
                               RecipeContext(diag, versions, tuple(run.probe.trainers), script))
        assert outcome.status.value == "applied", outcome.reason
        t2 = time.perf_counter()
        fb.commit_fix(outcome.source, commit_message(recipe, outcome, diag, n, fb.rel))
        t3 = time.perf_counter()
        rows.append({"diagnose": t1 - t0, "recipe": t2 - t1, "commit": t3 - t2, "total": t3 - t0})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    rounds = parser.parse_args().rounds
    versions = target_versions(str(Path(__import__("sys").executable)))
    with tempfile.TemporaryDirectory() as tmp:
        script = scratch_repo(Path(tmp))
        rows = [r for i in range(rounds) for r in one_session(script, f"bench{i}", versions)]
    print(f"autofix per iteration on course_pt_mnli.py ({len(rows)} iterations, "
          f"{rounds} rounds x {len(FAULTS)} faults), milliseconds:")
    for phase in ("diagnose", "recipe", "commit", "total"):
        values = [r[phase] * 1000 for r in rows]
        print(f"  {phase:9s} median {statistics.median(values):7.1f}   max {max(values):7.1f}")
    worst = max(r["total"] for r in rows)
    print(f"target < 1000 ms per iteration: {'met' if worst < 1 else 'MISSED'} "
          f"(worst {worst * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
