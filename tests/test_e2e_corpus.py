"""Representative cases of the public-report corpus (``sample_scripts/corpus``) through the
real CLI and stack: two fixed by a recipe (one of them diagnosed from the objects at the
failing embedding lookup), one that gets advice and no commit. The whole
corpus runs in ``benchmarks/bench_corpus.py`` (too long for the suite)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import git
import pytest
import tomllib

from .conftest import SAMPLES, make_repo, run_autofix, trailers

CORPUS = SAMPLES / "corpus"
MANIFEST = {c["id"]: c for c in tomllib.loads((CORPUS / "manifest.toml").read_text())["case"]}

pytestmark = pytest.mark.e2e


def _run(tmp: Path, case: str) -> tuple[git.Repo, subprocess.CompletedProcess[str]]:
    script = MANIFEST[case]["script"]
    repo = make_repo(tmp / case, {script: CORPUS / script, "data": SAMPLES / "data"})
    out = run_autofix([script, "--branch", "fixes", "--max-steps", "3", "--timeout", "300"],
                      cwd=Path(str(repo.working_tree_dir)))
    return repo, out


@pytest.fixture(scope="module")
def mlm_case(tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[git.Repo, subprocess.CompletedProcess[str]]:
    return _run(tmp_path_factory.mktemp("corpus"), "c10")


@pytest.fixture(scope="module")
def resume_case(tmp_path_factory: pytest.TempPathFactory
                ) -> tuple[git.Repo, subprocess.CompletedProcess[str]]:
    return _run(tmp_path_factory.mktemp("corpus"), "c12")


@pytest.fixture(scope="module")
def vocab_case(tmp_path_factory: pytest.TempPathFactory
               ) -> tuple[git.Repo, subprocess.CompletedProcess[str]]:
    return _run(tmp_path_factory.mktemp("corpus"), "c17")


def test_a_config_vocabulary_smaller_than_the_tokenizer_is_set_where_it_is_defined(
        vocab_case: tuple[git.Repo, subprocess.CompletedProcess[str]]) -> None:
    """The same "index out of range in self" as tokens added without a resize; the facts at
    the lookup (133 tokenizer tokens, 64 rows, none added) tell it apart."""
    repo, out = vocab_case
    assert out.returncode == 0, out.stdout + out.stderr
    assert trailers(repo, "fixes", "main") == ["vocab-size-mismatch"]
    script = MANIFEST["c17"]["script"]
    diff = repo.git.diff("main", "fixes", "--", script).splitlines()
    assert [ln for ln in diff if ln[:1] in "+-" and ln[:3] not in ("+++", "---")] == [
        "-VOCAB_SIZE = 64  # from the tutorial this started from",
        "+VOCAB_SIZE = len(tokenizer)  # from the tutorial this started from"]
    assert "resize_token_embeddings" not in repo.git.show(f"fixes:{script}")


def test_causal_lm_collator_is_fixed_with_mlm_false(
        mlm_case: tuple[git.Repo, subprocess.CompletedProcess[str]]) -> None:
    repo, out = mlm_case
    assert out.returncode == 0, out.stdout + out.stderr
    assert trailers(repo, "fixes", "main") == ["mlm-without-mask-token"]
    fixed = repo.git.show("fixes:c10_mlm_collator_causal_model.py")
    assert "DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)" in fixed


def test_resume_without_checkpoint_gets_advice_and_no_commit(
        resume_case: tuple[git.Repo, subprocess.CompletedProcess[str]]) -> None:
    repo, out = resume_case
    assert out.returncode == 1, out.stdout + out.stderr
    assert "no-checkpoint-to-resume" in out.stdout
    assert "resume_from_checkpoint=True needs a checkpoint-*" in out.stdout
    assert "fixes" not in [h.name for h in repo.heads]
