"""End to end through real TensorFlow / tf-keras (transformers 4.57 env) on CPU.

The course's TensorFlow MNLI script fails three times (label column name, ragged batch,
label out of range), compiles a string loss on logits, and then trains but does not learn
at Adam's default 1e-3; autofix must fix all of it, the lr fix ending the stall, and prove
it with a falling loss: its own verification run (60
steps, the default budget) is the proof, so the branch is not trained again.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, run_autofix, snapshot, trailers

Repo = Callable[[dict[str, str | Path]], git.Repo]
pytestmark = [pytest.mark.e2e, pytest.mark.v4, pytest.mark.slow]  # 3 min; a TF case stays in test_e2e_cases


def test_course_tf_script(scratch_repo: Repo, v4_python: str) -> None:
    repo = scratch_repo({"course_tf_mnli.py": SAMPLES / "course_tf_mnli.py",
                         "data": SAMPLES / "data"})
    root = Path(str(repo.working_tree_dir))
    before = snapshot(repo)
    done = run_autofix(["course_tf_mnli.py", "--branch", "fixes", "--python", v4_python,
                        "--report", "../report.json"], root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert snapshot(repo) == before
    fixes = trailers(repo, "fixes", "main")
    assert fixes[:4] == [
        "label-column-name", "ragged-batch", "label-out-of-range", "keras-string-loss"], fixes
    report = json.loads((root.parent / "report.json").read_text())
    runs = report["runs"]
    assert "Column labels not found in dataset" in runs[0]["evidence"]
    assert runs[0]["steps"] == []
    messages = [str(c.message) for c in repo.iter_commits("main..fixes")]
    assert any("all input arrays must have the same shape" in m for m in messages)
    assert any("Received a label value of 2" in m for m in messages)
    assert any("compile(loss='sparse_categorical_crossentropy') reads the model's outputs as "
               "probabilities" in m and "found by the preflight check 'keras-loss'" in m
               for m in messages)
    source = (repo.commit("fixes").tree / "course_tf_mnli.py").data_stream.read().decode()
    assert 'tokenized_datasets.rename_column("label", "labels")' in source
    assert source.count('collate_fn=DataCollatorWithPadding(tokenizer, return_tensors="tf")') \
        == 2
    assert "num_labels=3" in source
    if fixes[4:] != ["lr-too-high"]:
        # Adam's 1e-3 is not always a stall on this script (unseeded; measured faces: flat at
        # ln 3, down and back up, learning slowly, and once in a suite run on 2026-12-01 no
        # lr fix kept): the four preflight fixes must stand and nothing else be committed
        assert fixes[4:] == [], fixes
        assert report["status"] in ("fixed", "clean"), report["status"]
        assert runs[-1]["outcome"] in ("budget", "ok"), runs[-1]  # the branch trains
        return
    assert report["status"] == "fixed"
    # preflight (issue 10): run 1 records the to_tf_dataset failure, checks the padding
    # with the label column renamed, the labels against the head and the compiled loss
    # against the model's outputs at fit, all before a training step; run 2 trains at Adam's
    # 1e-3 and is not clearly learning (flat at ln 3, or down and back up), or learns with
    # updates far above fine-tuning's: measured all three ways, so the verdict is a stall
    # or a trial of a lower lr; run 3 proves the lr fix
    assert [r["category"] for r in runs] == ["label-column-name", "lr-too-high", ""]
    evidence = runs[1]["evidence"]
    assert (("stalled near chance" in evidence or "stopped falling" in evidence
             or "update-to-weight ratio" in evidence)  # the step evidence, from step 30
            and "root causes: lr-too-high" in evidence) or \
        "not clearly learning at a learning rate of 0.001: learning slowly" in evidence or \
        ("no stall, but Adam (learning rate 0.001)" in evidence
         and "update-to-weight ratio" in evidence and "fine-tuning rates" in evidence), evidence
    assert runs[2]["outcome"] in ("budget", "ok")
    assert "from tf_keras.optimizers import Adam" in source
    assert "model.compile(optimizer=Adam(learning_rate=5e-5))" in source

    # the verification run trained the branch's script with a falling loss, clearly under
    # the chance level ln 3 (the proof the symptom fixes owed, LossMonitor.clearly_learning)
    found = re.match(r"(\d+) steps, loss (\S+) at step 1, (\S+) over the last 10 steps",
                     runs[2]["evidence"])
    assert found is not None, runs[2]["evidence"]
    first, last = float(found.group(2)), float(found.group(3))
    assert int(found.group(1)) >= 40  # past the stall rule's first step
    assert last < 0.85 * math.log(3) and last < first
