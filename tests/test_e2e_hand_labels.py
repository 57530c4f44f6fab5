"""Class ids stored as floats in hand-written loops (issue 41: a fix or advice in the
script's own terms), through the real CLI in throwaway repositories:

- ids built with ``torch.tensor(labels, dtype=torch.float)`` and sliced into batches by
  hand (``xb, yb = x[i:i + 8], y[i:i + 8]``): fixed at that token, ``dtype=torch.long``;
- ids yielded by a generator function of the script (``(x[:, 0] > 0).float()``): fixed in
  the ``yield``;
- ids from a float32 numpy array (``torch.from_numpy``): no torch token to change, so
  nothing is committed and the advice names the loss's target ``yb`` and its line, never
  a ``datasets`` column the script does not have.

Cost: three runs of a two-layer MLP, well under a second each.
"""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from .conftest import TEST_SCRIPTS, make_repo, run_autofix, trailers

pytestmark = pytest.mark.e2e
SCRIPTS = TEST_SCRIPTS / "hand_labels"


def _session(tmp_path: Path, script: str) -> tuple[git.Repo, str, int]:
    repo = make_repo(tmp_path / "repo", {"train.py": SCRIPTS / script})
    done = run_autofix(["train.py", "--branch", "fixes"], tmp_path / "repo", timeout=300)
    return repo, done.stdout + done.stderr, done.returncode


@pytest.mark.parametrize(("script", "before", "after"), [
    ("sliced_float_ids.py", "y = torch.tensor(labels, dtype=torch.float)",
     "y = torch.tensor(labels, dtype=torch.long)"),
    ("float_ids_from_function.py", "yield x, (x[:, 0] > 0).float()",
     "yield x, (x[:, 0] > 0).long()"),
    ("numpy_float_ids.py", "classes = (features[:, 0] > 0).astype(np.float32)",
     "classes = (features[:, 0] > 0).astype(np.int64)"),
])
def test_the_float_token_is_made_int64(tmp_path: Path, script: str, before: str,
                                       after: str) -> None:
    repo, out, code = _session(tmp_path, script)
    assert code == 0, out
    assert trailers(repo, "fixes", "HEAD") == ["class-ids-as-floats"]
    diff = repo.git.diff("HEAD", "fixes")
    removed = [ln[1:].strip() for ln in diff.splitlines()
               if ln.startswith("-") and not ln.startswith("---")]
    added = [ln[1:].strip() for ln in diff.splitlines()
             if ln.startswith("+") and not ln.startswith("+++")]
    assert (removed, added) == ([before], [after]), diff
