"""The field cases of broken call contracts (``sample_scripts/cases/t5_*.py``, public
reports reproduced afresh on the MiniLM-L6 checkpoint), repaired through the real CLI in
one ``autofix batch``: each ends fixed (exit 0, the session's last run trained on the
branch's source) with its fix where the script makes the value.

- ``t5_04_pandas_label_column_2d.py``: class ids read as ``df[["label"]]``, shaped
  ``(16, 1)`` at ``cross_entropy`` -> ``df["label"]`` (``loss-target-shape``);
- ``t5_05_batchnorm_head_last_batch.py``: 241 rows in batches of 16 end each epoch with a
  one-row batch under the head's batch norm -> ``drop_last=True`` on the training loader
  (``batch-norm-single-row``);
- ``t5_08_numpy_padded_ids.py``: token ids padded into ``np.zeros`` (float64) ->
  ``dtype=np.int64`` where the array is made (``float-token-ids``).

Slow tier (``scripts/test.sh -m slow``): three MiniLM-L6 sessions of two runs each, about
3 minutes on 2 cores; the same operators are checked in the default tier on plain torch
(``tests/test_e2e_call_contracts.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import SAMPLES, make_repo, run_autofix, trailers

CASES = SAMPLES / "cases"
FIXES = {
    "t5_04_pandas_label_column_2d.py": (
        "loss-target-shape",
        ['-    y = torch.tensor(df[["label"]].values, dtype=torch.long)',
         '+    y = torch.tensor(df["label"].values, dtype=torch.long)']),
    "t5_05_batchnorm_head_last_batch.py": ("batch-norm-single-row", None),
    "t5_08_numpy_padded_ids.py": (
        "float-token-ids",
        ["-    ids = np.zeros((len(texts), MAX_LEN))",
         "+    ids = np.zeros((len(texts), MAX_LEN), dtype=np.int64)"]),
}


@pytest.mark.slow
def test_the_field_cases_of_call_contracts_end_fixed(tmp_path: Path) -> None:
    files: dict[str, str | Path] = {name: CASES / name for name in FIXES}
    files.update({f"data/{p.name}": p for p in (CASES / "data").glob("tickets_*.jsonl")})
    repo = make_repo(tmp_path / "repo", files)
    done = run_autofix(["batch", *FIXES, "--jobs", "2", "--timeout", "600"],
                       tmp_path / "repo", timeout=2400, env={"OMP_NUM_THREADS": "1"})
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    for name, (category, diff) in FIXES.items():
        branch = f"autofix/{Path(name).stem}"
        assert trailers(repo, branch, "main") == [category], output[-4000:]
        assert f"{name}: fixed (1 fix)" in output
        changed = [line for line in repo.git.diff(f"main..{branch}").splitlines()
                   if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        if diff is not None:
            assert changed == diff
        else:  # the training loader's call, wherever its arguments wrap
            added = [line for line in changed if line.startswith("+")]
            assert any("drop_last=True" in line for line in added), changed
            assert not any("val_dl" in line for line in changed), changed
