"""The source findings of a hand loop (read by autofix/toolkit/source_findings.py, worded by
the categories' ``source_findings`` hooks) on the plain PyTorch set: each
``eval-loader-shuffled`` and ``stats-before-split`` fault script gets its finding naming its
own lines, every healthy script gets none, the
``eval-loader-no-shuffle`` recipe clears the first on each of its fault scripts, and
``fit-on-train-split`` the second where the statistics are one statement of the split's
block."""

from __future__ import annotations

from pathlib import Path

import pytest

from autofix.categories import get_category
from autofix.toolkit.apply import apply_recipe
from autofix.toolkit.discovery import recipes_for
from autofix.loop.verdicts import source_findings
from autofix.types import Applied, Diagnosis, RecipeContext
from autofix_recipes.evidence.eval_loader_no_shuffle import EvalLoaderNoShuffle

from .conftest import SAMPLES

PLAIN = SAMPLES / "plain"

#: fault script -> (kind, the text its one finding must hold)
FAULTS = {
    "shuffled_eval_numpy_labels.py": (
        "eval-loader-shuffled", "line 13: the evaluation loop over `loader`",
        "built with shuffle=True (line 34)"),
    "shuffled_eval_sklearn_list.py": (
        "eval-loader-shuffled", "line 27: the evaluation loop over `val_loader`",
        "built with shuffle=True (line 15)"),
    "shuffled_eval_tensor_labels.py": (
        "eval-loader-shuffled", "line 23: the evaluation loop over `test_loader`",
        "built with shuffle=True (line 12)"),
    "stats_mean_std_all_rows.py": (
        "stats-before-split", "line 10: `x = (x - x.mean(dim=0)) / x.std(dim=0)` computes "
                              "`x.mean(dim=0)` and `x.std(dim=0)` on all rows of `x`",
        "which line 11 then splits with a slice"),
    "stats_minmax_random_split.py": (
        "stats-before-split", "line 9: `lo, hi = x.min(dim=0).values, x.max(dim=0).values`",
        "which line 18 then splits with random_split (of `dataset`)"),
    "stats_scaler_before_split.py": (
        "stats-before-split", "line 11: `X = StandardScaler().fit_transform(X)` computes",
        "on all rows of `X`, which line 12 then splits with train_test_split"),
}

HEALTHY = sorted((PLAIN / "healthy").glob("*.py"))


def test_the_sets_are_all_here() -> None:
    assert len(HEALTHY) == 25
    assert all((PLAIN / "faults" / name).is_file() for name in FAULTS)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_each_fault_script_gets_its_finding(name: str) -> None:
    kind, where, then = FAULTS[name]
    found = source_findings((PLAIN / "faults" / name).read_text(encoding="utf-8"))
    assert [f.kind for f in found] == [kind], found
    assert where in found[0].evidence and then in found[0].evidence, found[0].evidence


@pytest.mark.parametrize("path", HEALTHY, ids=lambda p: p.name)
def test_no_healthy_script_gets_one(path: Path) -> None:
    assert source_findings(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("name", [n for n, (k, *_) in FAULTS.items()
                                  if k == "eval-loader-shuffled"])
def test_the_recipe_sets_shuffle_false_where_the_loader_is_built(name: str) -> None:
    source = (PLAIN / "faults" / name).read_text(encoding="utf-8")
    line = int(FAULTS[name][2].rsplit("line ", 1)[1].rstrip(")"))
    rc = RecipeContext(Diagnosis(category="eval-loader-shuffled", evidence="finding"))
    outcome = apply_recipe(EvalLoaderNoShuffle, source, rc)
    assert isinstance(outcome, Applied), outcome
    lines = source.splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].replace("shuffle=True", "shuffle=False")
    # that one keyword changed (a line the edit makes too long is wrapped)
    assert outcome.source.split() == "".join(lines).split() != source.split()
    assert outcome.line == line
    assert source_findings(outcome.source) == []


#: stats-before-split fault script -> the lines the fix writes after the split (None: the
#: statistics are in a helper and the split is of a dataset object: advice)
MOVED = {
    "stats_mean_std_all_rows.py": ["x_mean = x_train.mean(dim=0)", "x_std = x_train.std(dim=0)",
                                   "x_train = (x_train - x_mean) / x_std",
                                   "x_test = (x_test - x_mean) / x_std"],
    "stats_scaler_before_split.py": ["scaler = StandardScaler()",
                                     "X_train = scaler.fit_transform(X_train)",
                                     "X_test = scaler.transform(X_test)"],
    "stats_minmax_random_split.py": None,
}


@pytest.mark.parametrize("name", sorted(MOVED))
def test_fit_on_train_split_fits_the_statistics_after_the_split(name: str) -> None:
    assert [r.id for r in recipes_for("stats-before-split")] == ["fit-on-train-split"]
    source = (PLAIN / "faults" / name).read_text(encoding="utf-8")
    recipe = recipes_for("stats-before-split")[0]
    outcome = apply_recipe(recipe, source, RecipeContext(
        Diagnosis(category="stats-before-split", evidence="")))
    want = MOVED[name]
    if want is None:
        assert not isinstance(outcome, Applied)
        assert "random_split" in source and "split at line 18" in outcome.reason
        return
    assert isinstance(outcome, Applied), outcome
    lines = [line.strip() for line in outcome.source.splitlines()]
    split = next(i for i, line in enumerate(lines) if "train" in line and "=" in line
                 and ("[:" in line or "train_test_split(" in line))
    assert lines[split + 1:split + 1 + len(want)] == want
    assert source_findings(outcome.source) == []  # the finding is gone
    compile(outcome.source, name, "exec")


def test_the_other_source_findings_have_their_recipes() -> None:
    assert [r.id for r in recipes_for("eval-loader-shuffled")] == ["eval-loader-no-shuffle"]
    assert "helper" in get_category("stats-before-split").no_recipe
