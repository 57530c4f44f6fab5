"""The crashes of a hand-written PyTorch loop, repaired through the real CLI: one script of
each kind of ``sample_scripts/plain/faults`` is copied into one throwaway git repository,
``autofix batch`` repairs them (one branch each), and each branch must hold its fix (the
diff's lines, the commit's category) and train (the session ends fixed: its last run, on
the branch's source, reached the step budget).

- ``nonscalar_reduction_none.py``: ``backward()`` on a ``reduction="none"`` loss
  (``non-scalar-backward``, ``reduce-loss-mean``);
- ``graph_running_total.py``: a running total kept as a tensor and backwarded
  (``graph-reused``, ``running-loss-item``);
- ``target_lstm_lm.py``: a character LM's 3-D logits given to ``cross_entropy``
  (``loss-target-shape``, ``flatten-token-loss``);
- ``json_label2id_values.py``: ``label2id`` zipped from a numpy array, ``json.dumps``
  refuses its ``int64`` values (``numpy-scalar-json``, ``json-python-ints``);
- ``graph_loss_rebuilt_tensor.py``: an objective's parts summed through ``torch.tensor``
  in a trainer class's method (``loss-off-graph``, ``stack-loss-values``).

Cost: one batch of five sessions of two runs each, four at once (``--max-steps 5``),
about 40 s on 2 cores shared with other work, run once for every test (one
module-scoped fixture).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, make_repo, run_autofix, trailers

FAULTS = SAMPLES / "plain" / "faults"
SCRIPTS = ("nonscalar_reduction_none.py", "graph_running_total.py", "target_lstm_lm.py",
           "json_label2id_values.py", "graph_loss_rebuilt_tensor.py")


def branch(script: str) -> str:
    """The branch ``autofix batch`` leaves a script's fixes on."""
    return f"autofix/{Path(script).stem}"


@dataclass(frozen=True)
class Batch:
    returncode: int
    output: str
    repo: git.Repo
    root: Path

    def diff(self, script: str) -> list[str]:
        """The branch's changed lines, "-old" / "+new"."""
        return [line for line in self.repo.git.diff(f"main..{branch(script)}").splitlines()
                if line[:1] in "+-" and not line.startswith(("+++", "---"))]


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Batch:
    root = tmp_path_factory.mktemp("plain") / "repo"
    repo = make_repo(root, {name: FAULTS / name for name in SCRIPTS})
    done = run_autofix(["batch", *SCRIPTS, "--jobs", "4", "--max-steps", "5",
                        "--timeout", "300"], root, timeout=900,
                       env={"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    return Batch(done.returncode, done.stdout + done.stderr, repo, root)


def _fixed(batch: Batch, script: str, category: str, diff: list[str]) -> None:
    assert trailers(batch.repo, branch(script), "main") == [category], \
        batch.output[-4000:]
    assert batch.diff(script) == diff
    # fixed: the session's last run, on the branch's source, reached the step budget
    assert f"{script}: fixed (1 fix)" in batch.output


@pytest.mark.e2e
def test_the_batch_fixes_every_script(batch: Batch) -> None:
    assert batch.returncode == 0, batch.output[-4000:]


@pytest.mark.e2e
def test_a_per_sample_loss_is_averaged_before_backward(batch: Batch) -> None:
    _fixed(batch, "nonscalar_reduction_none.py", "non-scalar-backward",
           ["-        per_sample.backward()", "+        per_sample.mean().backward()"])


@pytest.mark.e2e
def test_a_running_total_keeps_numbers_and_the_step_backpropagates_its_loss(
        batch: Batch) -> None:
    _fixed(batch, "graph_running_total.py", "graph-reused",
           ["-    total_loss += loss", "+    total_loss += loss.item()",
            "-    total_loss.backward()", "+    loss.backward()",
            '-    print(f"step {step} mean loss {total_loss.item() / (step + 1):.4f}")',
            '+    print(f"step {step} mean loss {total_loss / (step + 1):.4f}")'])


@pytest.mark.e2e
def test_token_scores_and_targets_are_flattened_for_the_loss(batch: Batch) -> None:
    _fixed(batch, "target_lstm_lm.py", "loss-target-shape",
           ["-    loss = nn.functional.cross_entropy(model(x), y)",
            "+    loss = nn.functional.cross_entropy(model(x).flatten(0, -2), y.reshape(-1))"])


@pytest.mark.e2e
def test_numpy_label_ids_become_python_ints_where_the_dict_is_built(batch: Batch) -> None:
    _fixed(batch, "json_label2id_values.py", "numpy-scalar-json",
           ["-    label2id = dict(zip(label_names, label_ids))",
            "+    label2id = dict(zip(label_names, map(int, label_ids)))"])


@pytest.mark.e2e
def test_the_parts_of_an_objective_are_stacked_where_the_method_makes_them(
        batch: Batch) -> None:
    _fixed(batch, "graph_loss_rebuilt_tensor.py", "loss-off-graph",
           ["-        return torch.tensor([ce, self.penalty * l2]).sum()",
            "+        return torch.stack([ce, self.penalty * l2]).sum()"])

