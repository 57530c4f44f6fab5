"""Broken call contracts of a hand-written loop, repaired through the real CLI at the line
that made the bad value: four plain-torch scripts of ``sample_scripts/plain/faults``
(``contract_*.py``) in one throwaway git repository, repaired by one ``autofix batch``
(one branch each). Each branch must hold its fix where the value is made (the diff's
lines, the commit's category), and its script must run to the end under plain python.

- ``contract_bn_last_batch.py``: batch norm gets the one-row last batch of a 65-row
  dataset in batches of 16 (``batch-norm-single-row``, ``drop-last-batch``);
- ``contract_numpy_features.py``: numpy's float64 features into a float32 ``nn.Linear``
  (``input-dtype-mismatch``, ``cast-where-made``);
- ``contract_labels_column.py``: class ids from ``df[["label"]]``, shaped ``(batch, 1)``
  (``loss-target-shape``, ``drop-trailing-axis``);
- ``contract_numpy_token_ids.py``: word ids padded into ``np.zeros`` (float64) into an
  ``nn.Embedding`` (``float-token-ids``, ``cast-where-made``).

Cost: one batch of four sessions of two runs each, two at once (``--max-steps 20``), about
30 s on 2 cores (one module-scoped fixture).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, make_repo, run_autofix, trailers

FAULTS = SAMPLES / "plain" / "faults"
SCRIPTS = ("contract_bn_last_batch.py", "contract_numpy_features.py",
           "contract_labels_column.py", "contract_numpy_token_ids.py")


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
    root = tmp_path_factory.mktemp("contracts") / "repo"
    repo = make_repo(root, {name: FAULTS / name for name in SCRIPTS})
    done = run_autofix(["batch", *SCRIPTS, "--jobs", "2", "--max-steps", "20",
                        "--timeout", "300"], root, timeout=900,
                       env={"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    return Batch(done.returncode, done.stdout + done.stderr, repo, root)


def _fixed(batch: Batch, script: str, category: str, diff: list[str]) -> None:
    assert trailers(batch.repo, branch(script), "main") == [category], \
        batch.output[-4000:]
    assert batch.diff(script) == diff
    source = batch.repo.git.show(f"{branch(script)}:{script}")
    path = batch.root / f"branch_{script}"
    path.write_text(source)
    ran = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         timeout=300, cwd=batch.root)
    assert ran.returncode == 0, ran.stderr[-2000:]


@pytest.mark.e2e
def test_the_batch_fixes_every_script(batch: Batch) -> None:
    assert batch.returncode == 0, batch.output[-4000:]


@pytest.mark.e2e
def test_a_one_row_last_batch_is_dropped_at_its_loader(batch: Batch) -> None:
    _fixed(batch, "contract_bn_last_batch.py", "batch-norm-single-row",
           ["-    loader = DataLoader(make_data(), batch_size=16, shuffle=True)",
            "+    loader = DataLoader(make_data(), batch_size=16, shuffle=True, drop_last=True)"])


@pytest.mark.e2e
def test_float64_features_are_made_float32_where_numpy_draws_them(batch: Batch) -> None:
    _fixed(batch, "contract_numpy_features.py", "input-dtype-mismatch",
           ["-features = rng.normal(size=(256, 5))",
            "+features = rng.normal(size=(256, 5)).astype(np.float32)"])


@pytest.mark.e2e
def test_class_ids_are_read_as_one_column(batch: Batch) -> None:
    _fixed(batch, "contract_labels_column.py", "loss-target-shape",
           ['-    y = torch.tensor(df[["label"]].values, dtype=torch.long)',
            '+    y = torch.tensor(df["label"].values, dtype=torch.long)'])


@pytest.mark.e2e
def test_token_ids_are_made_int64_where_the_array_is_made(batch: Batch) -> None:
    _fixed(batch, "contract_numpy_token_ids.py", "float-token-ids",
           ["-    ids = np.zeros((len(sentences), length))",
            "+    ids = np.zeros((len(sentences), length), dtype=np.int64)"])
