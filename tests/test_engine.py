"""Every loop policy of the engine, replayed: runs are built here (probe reports and
exceptions as the child would report them), recipes are the real ones where they fit,
commits go to a real throwaway git repo. No training: the fast tier runs these.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import git
import libcst as cst
import pytest
from rich.console import Console

from autofix.loop import engine
from autofix.reports.terminal import print_summary
from autofix.run.runner import RunSpec
from autofix.settings import Settings
from autofix.toolkit import Example, Recipe, append_keyword
from autofix.toolkit.discovery import recipes_for
from autofix.types import (
    ChanceLevel,
    DatasetFacts,
    Diagnosis,
    ExceptionInfo,
    Finding,
    Frame,
    KerasFacts,
    PreflightFault,
    ProbeReport,
    RunOutcome,
    RunRecord,
    RunResult,
    SessionResult,
    Status,
    StepRecord,
    SymptomReport,
    TrainerFacts,
)

from .conftest import SAMPLES, make_repo, trailers

Step = RunResult | Callable[[RunSpec, str], RunResult]
COURSE = (SAMPLES / "course_pt_mnli.py").read_text()
TRAIN_LINE = 66  # trainer.train() in course_pt_mnli.py
VERSIONS = {"transformers": "5.24.0", "torch": "2.13.0", "datasets": "5.2.0"}


class Replay:
    """A runner that hands back prepared results in order and records what it was asked
    to run (the program source and the extra environment of each run)."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.sources: list[str] = []
        self.envs: list[dict[str, str]] = []

    def __call__(self, spec: RunSpec, source: str,
                 on_line: Callable[[str], None] | None = None,
                 on_step: Callable[[int, float | None], None] | None = None) -> RunResult:
        self.sources.append(source)
        self.envs.append(spec.environment)
        assert self.steps, f"run {len(self.sources)} was not expected"
        step = self.steps.pop(0)
        return step(spec, source) if callable(step) else step


def _library_frame(message: str) -> Frame:
    """The innermost frame a real run shows for ``message``: categories are matched by
    where an error is raised (the collator, the loss...), as in the saved tracebacks."""
    site = "/venv/site-packages/"
    if "expected sequence" in message or "Unable to create tensor" in message:
        return Frame(site + "transformers/data/data_collator.py", 160,
                     "torch_default_data_collator", "batch[k] = torch.tensor(...)")
    if "out of bounds" in message:
        return Frame(site + "torch/nn/functional.py", 3555, "cross_entropy",
                     "return torch._C._nn.cross_entropy_loss(")
    if "input_ids" in message:
        return Frame(site + "transformers/models/bert/modeling_bert.py", 641, "forward",
                     "raise ValueError")
    return Frame(site + "lib.py", 10, "inner", "raise")


def failed(script: Path, line: int, text: str, type_: str, message: str,
           **probe: object) -> RunResult:
    """A run that raised ``type_: message`` at ``line`` of the script."""
    exc = ExceptionInfo(f"builtins.{type_}", message, (
        Frame(str(script), line, "<module>", text), _library_frame(message)))
    report = ProbeReport(versions=VERSIONS, exception=exc, **probe)  # type: ignore[arg-type]
    return RunResult(RunOutcome.FAILED, 1, 0.5, f"{type_}: {message}\n", 20, report)


def healthy(losses: list[float], num_classes: int = 3, lr: float = 5e-5) -> RunResult:
    steps = [StepRecord(i + 1, x, lr) for i, x in enumerate(losses)]
    report = ProbeReport(versions=VERSIONS, steps=steps, num_classes=num_classes,
                         budget_reached=True)
    return RunResult(RunOutcome.BUDGET, 0, 0.5, "done\n", 5, report)


LEARNING = [1.1] * 15 + [1.1 - 0.02 * i for i in range(45)]  # clearly under ln 3 at the end
FLAT = [1.098] * 60  # never under the chance level


def stalled(lr: float = 1e-3, keras: tuple[KerasFacts, ...] = ()) -> RunResult:
    steps = [StepRecord(i + 1, 1.1, lr) for i in range(40)]
    report = ProbeReport(versions=VERSIONS, steps=steps, num_classes=3, keras=list(keras),
                         symptom=SymptomReport("stalled-loss", 40,
                                               "loss stalled near chance (ln 3) from step 40"))
    return RunResult(RunOutcome.OK, 0, 0.5, "", 0, report)


def course_trainer(label_max: int = 2, columns: tuple[str, ...] = (
        "premise", "hypothesis", "label", "input_ids", "attention_mask")) -> TrainerFacts:
    return TrainerFacts("Trainer", "BertForSequenceClassification", 2, (
        DatasetFacts("train", columns, 600, "label", "int", None, 0, label_max),))


@dataclass(frozen=True)
class Case:
    """A script in a throwaway repository and the settings it is repaired with."""

    script: Path
    settings: Settings


def setup(tmp_path: Path, source: str = COURSE, name: str = "train.py",
          **settings: object) -> tuple[git.Repo, Case]:
    repo = make_repo(tmp_path / "repo", {name: source})
    root = Path(str(repo.working_tree_dir))
    return repo, Case(root / name, Settings(python=sys.executable, branch="fixes", cwd=root,
                                            **settings))  # type: ignore[arg-type]


def no_drift(source: str, python: str, versions: dict[str, str], **where: object
             ) -> list[Diagnosis]:
    """The API check of a script without drift, answered at once (the real one imports the
    library in the target interpreter; ``tests/test_drift.py`` runs it)."""
    return []


def installed(python: str) -> dict[str, str]:
    """The target environment's versions, as the real lookup reports them."""
    return {"python": "3.11.7", **VERSIONS}


def repair(case: Case, **parts: object) -> SessionResult:
    """:func:`autofix.loop.engine.repair` on ``case``, with no process started: runs are
    replayed (``runner``), the API check and the version lookup answer at once."""
    kwargs: dict[str, object] = {"api_check": no_drift, "versions": installed, **parts}
    return engine.repair(case.script, case.settings, **kwargs)  # type: ignore[arg-type]


def branch_source(repo: git.Repo, name: str = "train.py") -> str:
    return str((repo.commit("fixes").tree / name).data_stream.read().decode())


def summary_text(result: SessionResult) -> str:
    out = io.StringIO()
    print_summary(Console(file=out, width=200, highlight=False), result)
    return out.getvalue()


def raw_dataset_run(script: Path) -> RunResult:
    return failed(script, TRAIN_LINE, "trainer.train()", "ValueError",
                  "You must specify exactly one of input_ids or inputs_embeds",
                  trainers=[course_trainer(columns=("premise", "hypothesis", "label"))])


def ragged_run(script: Path) -> RunResult:
    return failed(script, TRAIN_LINE, "trainer.train()", "ValueError",
                  "expected sequence of length 21 at dim 1 (got 19)",
                  trainers=[course_trainer()])


def label_run(script: Path, line: int = TRAIN_LINE, text: str = "trainer.train()") -> RunResult:
    return failed(script, line, text, "IndexError", "Target 2 is out of bounds.",
                  trainers=[course_trainer()])


# -- the ordinary path ----------------------------------------------------------------


def test_three_faults_fixed_in_order_with_real_recipes(tmp_path: Path) -> None:
    repo, options = setup(tmp_path)
    script = options.script.resolve()
    replay = Replay(raw_dataset_run(script), ragged_run(script), label_run(script),
                    healthy(LEARNING))
    result = repair(options, runner=replay)
    assert result.status is Status.FIXED and result.mergeable
    assert trailers(repo, "fixes", "main") == ["raw-dataset", "ragged-batch",
                                                "label-out-of-range"]
    source = branch_source(repo)
    assert 'train_dataset=tokenized_datasets["train"]' in source
    assert "processing_class=tokenizer" in source and "num_labels=3" in source
    assert replay.sources[-1] == source  # the verification run ran the branch's file
    assert [r.outcome for r in result.runs] == ["failed", "failed", "failed", "budget"]
    assert "merge: git merge fixes" in summary_text(result)


# -- same fault after its fix ----------------------------------------------------------


def test_same_fault_after_its_fix_drops_the_commit(tmp_path: Path) -> None:
    repo, options = setup(tmp_path)
    script = options.script.resolve()
    replay = Replay(label_run(script), label_run(script))
    result = repair(options, runner=replay)
    assert result.status is Status.GAVE_UP and not result.mergeable
    assert "the same error at the same place" in result.reason and "dropped" in result.reason
    assert result.fixes == [] and "fixes" not in repo.heads
    assert [d.recipe for d in result.dropped] == ["label-out-of-range"]
    assert "num_labels=3" in replay.sources[1]  # the fix did run once
    text = summary_text(result)
    assert "merge" not in text and "dropped" in text


# -- a new error at a line the fix changed (issue 7) -------------------------------------

HELPERS = '''from transformers import AutoTokenizer, Trainer


def build(model, args, train):
    return Trainer(model, args, train_dataset=train)


def main():
    tok = AutoTokenizer.from_pretrained("ckpt")
    trainer = build(None, None, tok)
    trainer.train()


main()
'''


class PassUndefinedTokenizer(Recipe):
    """The pre-issue-7 ragged-batch edit: ``processing_class=tok`` wherever Trainer is
    called, whether or not ``tok`` is defined there."""

    id = "pass-undefined-tokenizer"
    category = "ragged-batch"
    title = "give Trainer the tokenizer (whatever its scope)"
    examples = (Example("from transformers import Trainer\nTrainer(m)\n",
                        "from transformers import Trainer\nTrainer(m, processing_class=tok)\n"),
                Example("x = 1\n"))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, r"transformers\.Trainer") or any(
                a.keyword and a.keyword.value == "processing_class" for a in updated_node.args):
            return updated_node
        self.changed(original_node, "processing_class=tok")
        return append_keyword(updated_node, "processing_class", cst.Name("tok"))


class PadInBuild(Recipe):
    """A second strategy for the same fault: pad with a collator that needs no name."""

    id = "pad-in-build"
    category = "ragged-batch"
    title = "pad batches with a default padding collator"
    examples = PassUndefinedTokenizer.examples

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, r"transformers\.Trainer") or any(
                a.keyword and a.keyword.value == "data_collator" for a in updated_node.args):
            return updated_node
        self.changed(original_node, "data_collator=padding_collator()")
        return append_keyword(updated_node, "data_collator",
                              cst.parse_expression("padding_collator()"))


def name_error_if_tok_in_build(script: Path) -> Step:
    def step(spec: RunSpec, source: str) -> RunResult:
        line = source.splitlines().index(
            next(ln for ln in source.splitlines() if "return Trainer(" in ln)) + 1
        assert "processing_class=tok" in source
        return failed(script, line, source.splitlines()[line - 1].strip(), "NameError",
                      "name 'tok' is not defined")
    return step


def test_fix_whose_next_run_raises_name_error_is_dropped_and_next_recipe_tried(
        tmp_path: Path) -> None:
    repo, options = setup(tmp_path, HELPERS)
    script = options.script.resolve()
    ragged = failed(script, 11, "trainer.train()", "ValueError",
                    "expected sequence of length 21 at dim 1 (got 19)")
    replay = Replay(ragged, name_error_if_tok_in_build(script), healthy(LEARNING))
    result = repair(options, runner=replay,
                    recipes=lambda c: (PassUndefinedTokenizer, PadInBuild)
                    if c == "ragged-batch" else ())
    assert result.status is Status.FIXED, result.reason
    assert [f.recipe for f in result.fixes] == ["pad-in-build"]
    assert [d.recipe for d in result.dropped] == ["pass-undefined-tokenizer"]
    reason = result.dropped[0].reason
    assert "broke the script" in reason and "NameError: name 'tok' is not defined" in reason
    assert "inserted 'tok'" in reason
    source = branch_source(repo)
    assert "processing_class=tok" not in source and "data_collator=padding_collator()" in source
    assert len(list(repo.iter_commits("main..fixes"))) == 1  # only the fix that helped
    assert result.fixes[0].run == 1  # it answers run 1's diagnosis
    assert [r.category for r in result.runs] == ["ragged-batch", "unknown", ""]
    text = summary_text(result)
    assert "dropped" in text and "pass-undefined-tokenizer" in text


def test_name_error_fix_without_another_recipe_gives_up_without_merge(tmp_path: Path) -> None:
    repo, options = setup(tmp_path, HELPERS)
    script = options.script.resolve()
    ragged = failed(script, 11, "trainer.train()", "ValueError",
                    "expected sequence of length 21 at dim 1 (got 19)")
    replay = Replay(ragged, name_error_if_tok_in_build(script))
    result = repair(options, runner=replay, recipes=lambda c: (
        PassUndefinedTokenizer,) if c == "ragged-batch" else ())
    assert result.status is Status.GAVE_UP
    assert "broke the script" in result.reason and "dropped" in result.reason
    assert "no other recipe" in result.reason
    assert "fixes" not in repo.heads and result.fixes == []
    json = result.to_json()
    assert json["branch"] is None
    assert json["dropped"][0]["recipe"] == "pass-undefined-tokenizer"
    assert "merge" not in summary_text(result)


def test_type_error_on_an_edited_multiline_call_drops_the_fix(tmp_path: Path) -> None:
    """TypeError raised at the first line of the Trainer(...) call whose argument the fix
    added four lines lower: the statement, not the line, is what the fix changed."""
    repo, options = setup(tmp_path)
    script = options.script.resolve()
    bad_kwarg = failed(script, 59, "trainer = Trainer(", "TypeError",
                       "Trainer.__init__() got an unexpected keyword argument "
                       "'processing_class'")
    replay = Replay(ragged_run(script), bad_kwarg)
    result = repair(options, runner=replay)
    assert result.status is Status.GAVE_UP
    assert "a statement the fix changed" in result.reason
    assert [d.recipe for d in result.dropped] == ["ragged-batch"]
    assert "fixes" not in repo.heads


def test_an_old_keyword_the_script_passed_is_its_next_fault_not_a_broken_fix(
        tmp_path: Path) -> None:
    """The fix edited the Trainer(...) call, and the next error there names a keyword the
    script passed before the fix (a second keyword of an old API): the fix stays."""
    repo, options = setup(tmp_path)
    script = options.script.resolve()
    own = failed(script, 59, "trainer = Trainer(", "TypeError",
                 "Trainer.__init__() got an unexpected keyword argument 'compute_metrics'")
    result = repair(options, runner=Replay(ragged_run(script), own))
    assert result.status is Status.GAVE_UP and result.dropped == []
    assert "broke the script" not in result.reason
    assert trailers(repo, "fixes", "main") == ["ragged-batch"]


def test_a_new_error_elsewhere_is_progress_not_a_broken_fix(tmp_path: Path) -> None:
    """A NameError at a line the fix did not touch, on a name it did not insert, is the
    script's own next fault: the fix stays."""
    repo, options = setup(tmp_path)
    script = options.script.resolve()
    other = failed(script, 55, "predictions = np.argmax(predictions, axis=-1)", "NameError",
                   "name 'np' is not defined")
    replay = Replay(label_run(script), other)
    result = repair(options, runner=replay)
    assert result.status is Status.GAVE_UP and result.dropped == []
    assert trailers(repo, "fixes", "main") == ["label-out-of-range"]
    assert "unknown" in result.reason
    text = summary_text(result)
    assert "merge:" not in text and "do not merge" in text  # gave up: no merge suggestion


# -- symptoms ---------------------------------------------------------------------------

LOOP = (SAMPLES / "course_pt_loop_mnli.py").read_text()


def test_symptom_fix_that_does_not_prove_itself_is_dropped(tmp_path: Path) -> None:
    repo, options = setup(tmp_path, LOOP)
    replay = Replay(stalled(), healthy(FLAT))
    result = repair(options, runner=replay)
    assert "lr=5e-5" in replay.sources[1]  # the real lr-too-high recipe ran
    assert result.status is Status.GAVE_UP
    assert "did not help" in result.reason and "chance level" in result.reason
    assert "dropped" in result.reason and "fixes" not in repo.heads


def test_symptom_fix_that_proves_itself_is_kept(tmp_path: Path) -> None:
    repo, options = setup(tmp_path, LOOP)
    result = repair(options, runner=Replay(stalled(), healthy(LEARNING)))
    assert result.status is Status.FIXED
    assert trailers(repo, "fixes", "main") == ["lr-too-high"]
    message = str(repo.commit("fixes").message)
    assert "Run 1 showed stalled-loss:" in message and "Autofix-Via: stalled-loss" in message


def slow(lr: float = 1e-3) -> RunResult:
    """A healthy run that ended with the finding learning-slowly (measured shape: the
    course TF script at Adam 1e-3, down to 0.97 and back up to 1.11, 75 steps)."""
    run = healthy(FLAT[:75], lr=lr)
    run.probe.findings.append(Finding("learning-slowly", 75, "learning slowly: loss 1.173 over "
                                                             "steps 1-10, 1.113 over 66-75"))
    return run


def test_learning_slowly_at_lr_1e3_gets_a_trial_kept_when_it_proves(tmp_path: Path) -> None:
    repo, options = setup(tmp_path, LOOP)
    result = repair(options, runner=Replay(slow(), healthy(LEARNING)))
    assert result.status is Status.FIXED, result.reason
    assert trailers(repo, "fixes", "main") == ["lr-too-high"]
    assert [r.category for r in result.runs] == ["lr-too-high", ""]  # the report's runs
    assert result.runs[0].evidence.startswith("not clearly learning at a learning rate of")
    message = str(repo.commit("fixes").message)
    assert "not clearly learning at a learning rate of 0.001: learning slowly" in message
    assert "a trial: the lower learning rate is kept only if" in message


def test_a_trial_that_does_not_prove_is_dropped_and_the_run_stays_clean(
        tmp_path: Path) -> None:
    repo, options = setup(tmp_path, LOOP)
    replay = Replay(slow(), slow(lr=5e-5))
    result = repair(options, runner=replay)
    assert "lr=5e-5" in replay.sources[1]  # the trial ran
    assert result.status is Status.CLEAN  # a slow script is not a failed repair: exit 0
    assert [r.category for r in result.runs] == ["lr-too-high", ""]
    assert "did not help" in result.reason and "dropped" in result.reason
    assert [f.kind for f in result.findings] == ["learning-slowly"]
    assert [d.recipe for d in result.dropped] == ["lr-too-high"]
    assert "fixes" not in repo.heads


def test_learning_slowly_on_a_frozen_base_at_1e3_is_a_finding_not_a_trial(
        tmp_path: Path) -> None:
    """A head trained on a frozen encoder (a linear probe) at 1e-3 is at its usual rate: the
    step evidence's ``frozen`` keeps the lr trial away, the finding stays."""
    repo, options = setup(tmp_path, LOOP)
    run = slow()
    run.probe.facts["step_evidence"] = {"fast": False, "frozen": True, "ratio": 1e-3}
    result = repair(options, runner=Replay(run))
    assert result.status is Status.CLEAN and not result.dropped
    assert [r.category for r in result.runs] == [""]
    assert [f.kind for f in result.findings] == ["learning-slowly"]
    assert "fixes" not in repo.heads


def test_learning_slowly_at_an_ordinary_lr_is_a_finding_not_a_trial(tmp_path: Path) -> None:
    repo, options = setup(tmp_path, LOOP)
    result = repair(options, runner=Replay(slow(lr=2e-5)))
    assert result.status is Status.CLEAN and not result.dropped
    assert [f.kind for f in result.findings] == ["learning-slowly"]


def learns_fast(lr: float, ratio: float) -> RunResult:
    """A healthy run clearly under ln 3 whose optimizer-step evidence shows Adam moving a
    pretrained model's weights by ``ratio`` per step (measured: 1e-3 gives 6.7e-3 to
    8.4e-3 on MiniLM-L6, 5e-5 at most 4.3e-4)."""
    run = healthy(LEARNING, lr=lr)
    run.probe.chance = ChanceLevel(1.0986, "classes", "ln 3", 3)
    run.probe.facts["step_evidence"] = {"ratio": ratio, "adam": True, "pretrained": True,
                                        "adapter": False, "optimizer": "AdamW",
                                        "fast": ratio >= 4e-3}
    return run


def test_learning_at_an_update_ratio_far_above_fine_tuning_gets_the_lr_trial(
        tmp_path: Path) -> None:
    """The same script at Adam 1e-3 learns in some runs and stalls in others: a run that
    learned still gets the lr trial from its update ratio, kept when the next run proves."""
    repo, options = setup(tmp_path, LOOP)
    replay = Replay(learns_fast(1e-3, 7.1e-3), healthy(LEARNING))
    result = repair(options, runner=replay)
    assert result.status is Status.FIXED, result.reason
    assert "lr=5e-5" in replay.sources[1]
    assert trailers(repo, "fixes", "main") == ["lr-too-high"]
    assert result.runs[0].evidence.startswith("no stall, but AdamW (learning rate 0.001)")
    assert "ratio of 7.1e-03 per step (fine-tuning rates" in result.runs[0].evidence


@pytest.mark.parametrize(("lr", "ratio"), [
    (5e-5, 3.6e-4),  # the grid's highest healthy rate
    (3e-4, 2.5e-3),  # over the stall threshold, under the trial's
    (5e-4, 7.1e-3),  # fast weights (a small checkpoint's scale) at a rate under 1e-3
])
def test_no_lr_trial_for_a_learning_run_at_fine_tuning_ratios(
        tmp_path: Path, lr: float, ratio: float) -> None:
    """The child's summary says ``fast`` only from RATIO_TRIAL on (tests/test_step_evidence
    checks where it is set); the parent trusts it."""
    repo, options = setup(tmp_path, LOOP)
    result = repair(options, runner=Replay(learns_fast(lr, ratio)))
    assert result.status is Status.CLEAN and not result.fixes and not result.dropped
    assert len(result.runs) == 1


def flat_stall(lr: float, facts: dict[str, object] | None = None) -> RunResult:
    """The child's flat verdict at the end of a 75-step run (measured on the grid: MiniLM,
    lr 1e-5, batch 32, 2 classes, 0.697 -> 0.686)."""
    steps = [StepRecord(i + 1, 0.697 - 0.00015 * i, lr) for i in range(75)]
    report = ProbeReport(versions=VERSIONS, steps=steps, num_classes=2, facts=facts or {},
                         symptom=SymptomReport("stalled-loss", 75,
                                               "loss stalled near chance: mean of steps 66-75 "
                                               "is 0.686 >= 0.9 x ln 2 = 0.624"))
    return RunResult(RunOutcome.OK, 0, 0.5, "", 0, report)


def test_a_flat_loss_with_no_known_cause_is_learning_slowly_not_a_failure(
        tmp_path: Path) -> None:
    repo, options = setup(tmp_path, LOOP)
    result = repair(options, runner=Replay(flat_stall(1e-5)))
    assert result.status is Status.CLEAN, result.reason
    assert [f.kind for f in result.findings] == ["learning-slowly"]
    assert "no known cause of a stall (a learning rate of 1e-05" in result.findings[0].evidence
    assert "fixes" not in repo.heads


@pytest.mark.parametrize(("lr", "facts", "category"), [
    (1e-3, None, "lr-too-high"),  # a root cause autofix fixes
    (5e-5, {"params_total": 1000, "params_trainable": 10}, "stalled-loss"),  # frozen: advice
])
def test_a_flat_loss_with_a_known_cause_stays_a_stall(tmp_path: Path, lr: float,
                                                       facts: dict[str, object] | None,
                                                       category: str) -> None:
    _, options = setup(tmp_path, LOOP)
    replay = Replay(flat_stall(lr, facts), healthy(LEARNING))
    result = repair(options, runner=replay)
    first = result.runs[0]
    assert first.category == category, result.reason


def test_a_preflight_fault_alone_is_fixed_and_owes_no_proof(tmp_path: Path) -> None:
    """Run 1 stopped cleanly at fit with a Keras loss on logits (a fault that raises
    nothing, found before any step): one commit; run 2 trains (no symptom was seen, so
    a healthy short run is enough)."""
    repo, options = setup(tmp_path, TF_SCRIPT)
    fault = PreflightFault("keras-loss", "keras-string-loss",
                           "compile(loss='sparse_categorical_crossentropy') reads the model's "
                           "outputs as probabilities")
    run1 = RunResult(RunOutcome.OK, 0, 0.5, "", 0, ProbeReport(versions=VERSIONS, faults=[fault]))
    result = repair(options, runner=Replay(run1, healthy(FLAT[:5])))
    assert result.status is Status.FIXED, result.reason
    assert trailers(repo, "fixes", "main") == ["keras-string-loss"]
    assert "loss=" not in branch_source(repo)
    assert "found by the preflight check 'keras-loss'" in str(repo.commit("fixes").message)


TF_SCRIPT = '''from transformers import TFAutoModelForSequenceClassification

model = TFAutoModelForSequenceClassification.from_pretrained("ckpt", num_labels=3)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(train, epochs=1)
'''


def test_several_causes_in_one_diagnosis_each_get_a_commit(tmp_path: Path) -> None:
    repo, options = setup(tmp_path, TF_SCRIPT)
    keras = (KerasFacts("tf_keras", "TFBertForSequenceClassification", True, 3, "Adam", 1e-3,
                        "sparse_categorical_crossentropy", None),)
    result = repair(options, runner=Replay(stalled(keras=keras), healthy(LEARNING)))
    assert result.status is Status.FIXED, result.reason
    assert trailers(repo, "fixes", "main") == ["keras-string-loss", "lr-too-high"]
    assert [f.run for f in result.fixes] == [1, 1]
    source = branch_source(repo)
    assert "loss=" not in source and "Adam(learning_rate=5e-5)" in source


def test_several_causes_dropped_together_when_unproven(tmp_path: Path) -> None:
    repo, options = setup(tmp_path, TF_SCRIPT)
    keras = (KerasFacts("tf_keras", "TFBertForSequenceClassification", True, 3, "Adam", 1e-3,
                        "sparse_categorical_crossentropy", None),)
    result = repair(options, runner=Replay(stalled(keras=keras), stalled(lr=5e-5)))
    assert result.status is Status.GAVE_UP
    assert "stalled-loss again" in result.reason
    assert sorted(d.recipe for d in result.dropped) == ["keras-string-loss", "lr-too-high"]
    assert "fixes" not in repo.heads


# -- the CUDA rerun ---------------------------------------------------------------------


def cuda_run(script: Path) -> RunResult:
    return failed(script, 37, "model = AutoModelForSequenceClassification.from_pretrained(",
                  "RuntimeError", "CUDA error: device-side assert triggered")


def test_cuda_assert_is_rerun_with_the_category_env_and_classified(tmp_path: Path) -> None:
    repo, options = setup(tmp_path)
    script = options.script.resolve()
    replay = Replay(cuda_run(script), label_run(script), healthy(LEARNING))
    result = repair(options, runner=replay)
    assert result.status is Status.FIXED
    rerun = {"CUDA_VISIBLE_DEVICES": "", "CUDA_LAUNCH_BLOCKING": "1"}
    assert not rerun.keys() & replay.envs[0].keys() and not rerun.keys() & replay.envs[2].keys()
    assert {k: replay.envs[1][k] for k in rerun} == rerun
    assert [r.category for r in result.runs] == ["cuda-device-assert", "label-out-of-range", ""]
    message = str(repo.commit("fixes").message)
    assert "Autofix-Via: cuda-device-assert" in message and "rerun on CPU" in message


def test_cuda_assert_that_does_not_reproduce_on_cpu_gives_up(tmp_path: Path) -> None:
    repo, options = setup(tmp_path)
    result = repair(options, runner=Replay(cuda_run(options.script.resolve()),
                                           healthy(LEARNING)))
    assert result.status is Status.GAVE_UP and "does not reproduce" in result.reason
    assert "fixes" not in repo.heads


# -- limits, crashes, Ctrl-C ------------------------------------------------------------


def test_max_iterations_stops_and_does_not_suggest_merging(tmp_path: Path) -> None:
    repo, options = setup(tmp_path, max_iterations=1)
    script = options.script.resolve()
    result = repair(options, runner=Replay(raw_dataset_run(script), ragged_run(script)))
    assert result.status is Status.GAVE_UP
    assert result.reason == "stopped after --max-iterations 1"
    assert trailers(repo, "fixes", "main") == ["raw-dataset"]
    assert "merge:" not in summary_text(result)


class CrashingRecipe(Recipe):
    id = "crashing-recipe"
    category = "label-out-of-range"
    title = "a recipe with a bug"
    examples = PassUndefinedTokenizer.examples

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        raise ZeroDivisionError("recipe bug")


def test_recipe_that_raises_is_a_typed_outcome_reported_not_fatal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOFIX_LOG_DIR", str(tmp_path / "logs"))
    repo, options = setup(tmp_path)
    script = options.script.resolve()
    lookup = {"label-out-of-range": (CrashingRecipe, *recipes_for("label-out-of-range"))}
    result = repair(options, runner=Replay(label_run(script), healthy(LEARNING)),
                    recipes=lambda c: lookup.get(c, ()))
    assert result.status is Status.FIXED  # the next recipe fixed it
    assert trailers(repo, "fixes", "main") == ["label-out-of-range"]
    assert len(result.warnings) == 1
    warning = result.warnings[0]
    assert "crashing-recipe crashed: ZeroDivisionError: recipe bug" in warning
    log = Path(warning.rsplit("traceback saved to ", 1)[1].rstrip(")"))
    assert log.parent == tmp_path / "logs" and "ZeroDivisionError" in log.read_text()
    assert result.to_json()["warnings"] == [warning]


def test_only_a_crashing_recipe_gives_up_with_the_crash(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOFIX_LOG_DIR", str(tmp_path / "logs"))
    repo, options = setup(tmp_path)
    result = repair(options, runner=Replay(label_run(options.script.resolve())),
                    recipes=lambda c: (CrashingRecipe,) if c == "label-out-of-range" else ())
    assert result.status is Status.GAVE_UP
    assert result.reason == "recipe crashing-recipe crashed: ZeroDivisionError: recipe bug"
    assert "fixes" not in repo.heads


def test_ctrl_c_during_a_run_keeps_the_fixes_committed_so_far(tmp_path: Path) -> None:
    repo, options = setup(tmp_path)
    script = options.script.resolve()

    def interrupted(spec: RunSpec, source: str) -> RunResult:
        raise KeyboardInterrupt

    result = repair(options, runner=Replay(raw_dataset_run(script), interrupted))
    assert result.interrupted and result.status is Status.ERROR and not result.mergeable
    assert trailers(repo, "fixes", "main") == ["raw-dataset"]
    assert [f.recipe for f in result.fixes] == ["raw-dataset"]


class InterruptAfterDiagnosis(engine.NullObserver):
    """An observer that gets Ctrl-C between diagnosis and the recipe (run_finished is
    called before a run's fix only when it gave up; here: the first run_finished)."""

    def run_started(self, n: int, note: str) -> None:
        pass

    def output_line(self, line: str) -> None:
        pass

    def run_finished(self, record: RunRecord, diagnosis: object) -> None:
        if record.n == 2:
            raise KeyboardInterrupt


def test_ctrl_c_between_phases_leaves_a_consistent_branch(tmp_path: Path) -> None:
    repo, options = setup(tmp_path)
    script = options.script.resolve()
    result = repair(options, observer=InterruptAfterDiagnosis(),
                    runner=Replay(raw_dataset_run(script), ragged_run(script)))
    assert result.interrupted
    # run 2's fix was committed before run_finished; the branch and the result agree
    assert trailers(repo, "fixes", "main") == [f.category for f in result.fixes]
    assert "merge:" not in summary_text(result)


def test_probe_errors_are_reported_as_warnings(tmp_path: Path) -> None:
    _, options = setup(tmp_path, "print('hi')\n")
    run = healthy(LEARNING)
    run.probe.probe_errors.append("trainer_facts: AttributeError('x')")
    result = repair(options, runner=Replay(run))
    assert result.status is Status.CLEAN
    assert result.warnings == ["run 1: a probe failed inside the script's process "
                               "(trainer_facts: AttributeError('x')); its facts are missing"]
