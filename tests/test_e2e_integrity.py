"""Silent faults of data and evaluation through the real CLI in a throwaway repository,
on tiny models (plain torch MLPs, a tiny BERT from a config, the tiny Llama):

* a hand loop in helper functions with four faults (statistics of all rows before the
  split, the test classes encoded by their own ``pd.factorize``, softmax given to
  ``F.cross_entropy``, the accuracy on a flat ``argmax()``): one commit per fault, each
  kept after the next run no longer shows it; the branch's script prints a real accuracy;
  its fixed script, run again, is clean (the healthy twin: no finding);
* a class-based project across modules: the softmax in ``model.py``'s forward is removed
  there; the labels each split's ``Dataset`` maps in its own order are named (advice);
* a ``Trainer`` whose ``compute_metrics`` takes ``np.argmax(logits)``: fixed with
  ``axis=-1``;
* a causal LM whose labels are masked by the pad id while the pad token is the
  end-of-text token, in batches sliced by hand (no ``DataLoader``, so the language-model
  preflight never sees them): the pad token becomes the unknown token.

The sessions are module-scoped fixtures shared by the tests that read them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest

from .conftest import ROOT, make_repo, run_autofix, trailers

pytestmark = [pytest.mark.e2e]
SCRIPTS = ROOT / "tests" / "scripts" / "integrity"


class Session:
    """One autofix session on a scratch repository: its exit code, output and report."""

    def __init__(self, root: Path, script: str, env: dict[str, str] | None = None,
                 args: tuple[str, ...] = ()) -> None:
        self.root = root
        self.repo = git.Repo(root)
        self.base = self.repo.head.commit.hexsha
        done = run_autofix([script, "--branch", "fixes", "--report", "../report.json", *args],
                           root, timeout=900, env={"OMP_NUM_THREADS": "1", **(env or {})})
        self.code, self.out = done.returncode, done.stdout + done.stderr
        self.report: dict[str, Any] = json.loads((root.parent / "report.json").read_text())
        self.env = env or {}

    @property
    def categories(self) -> list[str]:
        return trailers(self.repo, "fixes", self.base) if "fixes" in self.repo.heads else []

    def fixed(self, path: str) -> str:
        return str(self.repo.git.show(f"fixes:{path}"))

    def run_branch(self, path: str, cwd: str = ".") -> str:
        """The branch's ``path`` run under plain python (its output)."""
        self.repo.git.checkout("fixes")
        try:
            done = subprocess.run([sys.executable, path], cwd=self.root / cwd, text=True,
                                  capture_output=True, timeout=300,
                                  env={**__import__("os").environ, **self.env})
        finally:
            self.repo.git.checkout("main")
        assert done.returncode == 0, done.stderr
        return done.stdout


Factory = Callable[[str, dict[str, str | Path]], Path]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Factory:
    def make(name: str, files: dict[str, str | Path]) -> Path:
        root = tmp_path_factory.mktemp(name) / "repo"
        make_repo(root, files)
        return root

    return make


@pytest.fixture(scope="module")
def four_faults(scratch: Factory) -> Session:
    return Session(scratch("four", {"train.py": SCRIPTS / "loop_four_faults.py"}), "train.py")


def test_four_silent_faults_each_get_their_fix(four_faults: Session) -> None:
    session = four_faults
    assert session.code == 0, session.out
    assert session.report["status"] == "fixed"
    assert sorted(session.categories) == ["label-encoding-mismatch", "metric-on-flat-argmax",
                                          "probabilities-to-logit-loss", "stats-before-split"]
    fixed = session.fixed("train.py")
    assert "X = StandardScaler().fit_transform(X)" not in fixed
    assert "    scaler = StandardScaler()\n    X_train = scaler.fit_transform(X_train)\n" \
           "    X_test = scaler.transform(X_test)\n" in fixed
    assert "y_test = pd.Index(classes).get_indexer(n_test)" in fixed
    assert "logits = model(X[i:i + 30])\n        loss = F.cross_entropy(logits, " in fixed
    assert "pred = model(X).argmax(dim=-1)" in fixed
    assert session.report["findings"] == []


def test_the_fixed_script_measures_a_real_accuracy(four_faults: Session) -> None:
    before = subprocess.run([sys.executable, "train.py"], cwd=four_faults.root, text=True,
                            capture_output=True, timeout=300, check=True).stdout
    after = four_faults.run_branch("train.py")
    assert float(before.split()[-1]) < 0.4  # a flat index against every label
    assert float(after.split()[-1]) > 0.75


def test_the_fixed_script_is_clean(four_faults: Session, scratch: Factory) -> None:
    twin = scratch("twin", {"train.py": four_faults.fixed("train.py")})
    session = Session(twin, "train.py")
    assert session.code == 0, session.out
    assert session.report["status"] == "clean" and session.report["findings"] == []


@pytest.fixture(scope="module")
def project(scratch: Factory) -> Session:
    root = scratch("project", {name: SCRIPTS / "project" / name
                               for name in ("train.py", "model.py", "data.py")})
    return Session(root, "train.py")


def test_a_softmax_in_another_modules_forward_is_removed_there(project: Session) -> None:
    assert project.categories == ["probabilities-to-logit-loss"], project.out
    assert "    def forward(self, x):\n        return self.body(x)" in project.fixed("model.py")
    assert project.fixed("train.py") == (SCRIPTS / "project" / "train.py").read_text().rstrip()


def test_labels_each_split_maps_in_its_own_order_are_named(project: Session) -> None:
    # the softmax fix ends the session fixed; the mapping built inside the Dataset class
    # (once per split) is advice: reported with both mappings, no edit
    assert project.code == 0 and project.report["status"] == "fixed", project.out
    findings = [f for f in project.report["findings"] if f["kind"] == "label-encoding-mismatch"]
    assert len(findings) == 1
    evidence = findings[0]["evidence"]
    assert "`train_set.label2id`" in evidence and "`val_set.label2id`" in evidence


def test_compute_metrics_on_a_flat_argmax_gets_the_class_axis(scratch: Factory) -> None:
    root = scratch("trainer", {"train.py": SCRIPTS / "trainer_flat_metric.py"})
    session = Session(root, "train.py")
    assert session.code == 0, session.out
    assert session.categories == ["metric-on-flat-argmax"]
    assert "np.argmax(logits, axis=-1)" in session.fixed("train.py")
    assert float(session.run_branch("train.py").split()[-1]) > 0.6


def test_end_of_text_labels_masked_as_padding_get_a_distinct_pad(
        scratch: Factory, tiny_llm: Path) -> None:
    root = scratch("lm", {"train.py": SCRIPTS / "lm_masked_eos.py"})
    session = Session(root, "train.py", env={"AUTOFIX_TINY_LLM": str(tiny_llm)})
    assert session.code == 0, session.out
    assert session.categories == ["labels-masked-beyond-padding"]
    assert "tokenizer.pad_token = tokenizer.unk_token" in session.fixed("train.py")
    assert float(session.run_branch("train.py").split()[-1]) > 0.2
