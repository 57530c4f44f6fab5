"""Training phases and the optimizer's parameters through the real PyTorch stack.

The step evidence follows the parameters each stepped optimizer holds: an optimizer over
other parameters than the model the loop trains (built before the model was made again,
or before its head was replaced in a second stage) is ``optimizer-before-model``, named by
step 10 of the phase; a second stage whose optimizer holds the new head trains, and its chance
level is the new head's (ln 3 after ln 4). Plain ``nn.Module`` models, short runs under
the real probe (``sample_scripts/plain/faults``; the healthy two-stage run is the faulty
one with the optimizer built after the head is replaced).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from autofix.categories.catalogue.evidence import step_cause
from autofix.loop.verdicts import judge
from autofix.run.runner import RunSpec, run_script
from autofix.settings import Settings
from autofix.types import Diagnosis, Healthy, RunResult

from .conftest import SAMPLES, make_repo, run_autofix, trailers

pytestmark = pytest.mark.e2e
FAULTS = SAMPLES / "plain" / "faults"
REPLACED = "stall_optimizer_of_replaced_model.py"
SWAPPED = "stall_head_swapped_after_optimizer.py"
BUILT = "stage2 = torch.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=3e-3)\n"
HEAD = "net.head = nn.Linear(64, 3)\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, RunResult]]:
    folder = tmp_path_factory.mktemp("phases")
    swapped = (FAULTS / SWAPPED).read_text()
    assert BUILT in swapped and HEAD in swapped
    sources = {REPLACED: (FAULTS / REPLACED).read_text(), SWAPPED: swapped,
               "healthy_two_stages.py": swapped.replace(BUILT + HEAD, HEAD + BUILT)}
    out = {}
    for name, source in sources.items():
        script = folder / name
        script.write_text(source)
        settings = Settings(python=sys.executable, cwd=folder, timeout=300, max_steps=60,
                            env={"OMP_NUM_THREADS": "1"})
        out[name] = (script, run_script(RunSpec(script, settings), source))
    return out


@pytest.mark.parametrize(("name", "step"), [(REPLACED, 10), (SWAPPED, 26)])
def test_an_optimizer_over_other_parameters_is_a_stall_at_its_cause(
        runs: dict[str, tuple[Path, RunResult]], name: str, step: int) -> None:
    script, run = runs[name]
    assert step_cause(run.probe) == "other-parameters", run.probe.facts.get("step_evidence")
    assert run.probe.symptom is not None and run.probe.symptom.step == step
    found = judge(run, script)
    assert isinstance(found, Diagnosis) and found.category == "optimizer-before-model"
    assert f"optimizer steps {step - 9}-{step}" in found.evidence


def test_a_second_stage_with_its_own_optimizer_trains_against_its_own_chance(
        runs: dict[str, tuple[Path, RunResult]]) -> None:
    script, run = runs["healthy_two_stages.py"]
    assert run.probe.symptom is None, run.probe.symptom
    assert isinstance(judge(run, script), Healthy)
    assert step_cause(run.probe) == ""
    # the chance level followed the head: ln 4 in the first stage, ln 3 in the second
    assert run.probe.num_classes == 3
    assert run.probe.chance is not None and math.isclose(run.probe.chance.value, math.log(3))


def test_the_optimizer_is_built_after_the_model_it_trains_is_swapped_in(
        tmp_path: Path) -> None:
    """Through the CLI: an experiment's ``setup()`` builds the optimizer, then a wider model
    is swapped in; the stall is named at step 10 and ``setup()`` moves after the swap."""
    script = "stall_optimizer_in_setup_function.py"
    repo = make_repo(tmp_path / "repo", {script: FAULTS / script})
    done = run_autofix([script, "--branch", "fixes"], tmp_path / "repo", timeout=600,
                       env={"OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert trailers(repo, "fixes", "main") == ["optimizer-before-model"]
    fixed = repo.git.show(f"fixes:{script}")
    assert fixed.index("exp.model = nn.Sequential(") < fixed.index("exp.setup(lr=0.05)")
    assert fixed.count("exp.setup(lr=0.05)") == 1
