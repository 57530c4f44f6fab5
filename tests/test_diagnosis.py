"""Category registry: every saved real traceback is classified as its category."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from autofix.categories import EXAMPLES_DIR, all_categories
from autofix.categories.tracebacks import parse_traceback
from autofix.loop.diagnosis import classify, diagnose
from autofix.run.probe_events import _keras, _trainer, exception_from_json
from autofix.toolkit.facts import example_failure
from autofix.types import ProbeReport, RunOutcome, RunResult

EXAMPLES = [(c, p) for c in all_categories() for p in c.example_paths()]
REQUIRED = {"raw-dataset", "ragged-batch", "label-out-of-range", "cuda-device-assert",
            "syntax-error", "timeout", "unknown"}


def test_required_categories_exist() -> None:
    assert REQUIRED <= {c.id for c in all_categories()}


def test_every_example_file_is_declared() -> None:
    on_disk = {p for p in EXAMPLES_DIR.rglob("*.txt")}
    declared = {p for _, p in EXAMPLES}
    assert on_disk == declared


@pytest.mark.parametrize(("category", "path"), EXAMPLES,
                         ids=[f"{c.id}/{p.name}" for c, p in EXAMPLES])
def test_real_example_is_classified(category: object, path: Path) -> None:
    """A saved traceback is classified as its category; with its ``.facts.json`` (the
    probe's structured exception with the facts at the failure, and the run's Keras and
    Trainer facts, saved from the same real run) it is classified from those facts."""
    exc = parse_traceback(path.read_text(encoding="utf-8"))
    assert exc is not None, f"no traceback parsed from {path}"
    probe = None
    facts = path.with_suffix(".facts.json")
    if facts.is_file():
        doc = json.loads(facts.read_text(encoding="utf-8"))
        exc = exception_from_json(doc["exception"])
        probe = ProbeReport(exception=exc, keras=[_keras(k) for k in doc["keras"]],
                            trainers=[_trainer(t) for t in doc["trainers"]])
    assert classify(exc, probe).id == category.id  # type: ignore[attr-defined]


def test_pt_faults_have_v5_and_v4_examples() -> None:
    for cid in ("raw-dataset", "ragged-batch", "label-out-of-range"):
        names = {p.name for c, p in EXAMPLES if c.id == cid}
        assert {"v5.txt", "v4.txt"} <= names, cid


TB = '''noise before
Traceback (most recent call last):
  File "/u/train.py", line 12, in <module>
    main()
  File "/u/train.py", line 9, in main
    x = [1][3]
IndexError: list index out of range
'''


def test_parse_traceback_frames_and_message() -> None:
    exc = parse_traceback(TB)
    assert exc is not None
    assert exc.type == "IndexError"
    assert exc.message == "list index out of range"
    assert [(f.line, f.function, f.text) for f in exc.frames] == [
        (12, "<module>", "main()"), (9, "main", "x = [1][3]")]


def test_parse_chained_traceback_keeps_cause() -> None:
    text = TB + "\nThe above exception was the direct cause of the following exception:\n\n" + \
        TB.replace("IndexError: list index out of range", "RuntimeError: wrapped")
    exc = parse_traceback(text)
    assert exc is not None and exc.type == "RuntimeError"
    assert [c.type for c in exc.chain] == ["IndexError"]


def test_unknown_failure_keeps_key_lines(tmp_path: Path) -> None:
    script = Path("/u/train.py")
    run = RunResult(RunOutcome.FAILED, 1, 1.0, TB, len(TB), ProbeReport())
    diag = diagnose(run, script)
    assert diag.category == "unknown"
    assert diag.evidence == "IndexError: list index out of range"
    assert diag.line == 9 and diag.line_text == "x = [1][3]"
    assert diag.details[-1] == "IndexError: list index out of range"
    assert "train.py:12 in <module>: main()" in diag.details


def test_no_traceback_at_all_is_unknown_with_last_line() -> None:
    run = RunResult(RunOutcome.FAILED, 3, 1.0, "working\nSegmentation fault\n", 30,
                    ProbeReport())
    diag = diagnose(run, Path("/u/train.py"))
    assert diag.category == "unknown"
    assert "exit code 3" in diag.evidence and "Segmentation fault" in diag.evidence


def test_timeout_diagnosis() -> None:
    run = RunResult(RunOutcome.TIMEOUT, -15, 30.0, "step 3\n", 7, ProbeReport())
    assert diagnose(run, Path("/u/train.py")).category == "timeout"


def test_same_fault_even_when_the_fix_edited_the_failing_line() -> None:
    from autofix.types import Diagnosis

    before = Diagnosis("raw-dataset", "ValueError: x", "/u/t.py", 17, "trainer = Trainer(a)")
    after = Diagnosis("raw-dataset", "ValueError: x", "/u/t.py", 17, "trainer = Trainer(b)")
    moved = Diagnosis("raw-dataset", "ValueError: x", "/u/t.py", 18, "trainer = Trainer(a)")
    other = Diagnosis("raw-dataset", "ValueError: x", "/u/t.py", 30, "trainer.evaluate()")
    assert before.same_fault(after) and before.same_fault(moved)
    assert not before.same_fault(other)
    assert not before.same_fault(Diagnosis("ragged-batch", "ValueError: x", "/u/t.py", 17))


def test_a_call_rejecting_the_next_keyword_is_a_new_fault() -> None:
    from autofix.types import Diagnosis

    first = Diagnosis("api-drift", "TypeError: DPOTrainer.__init__() got an unexpected "
                      "keyword argument 'tokenizer'", "/u/t.py", 40)
    second = Diagnosis("api-drift", first.evidence.replace("tokenizer", "beta"), "/u/t.py", 40)
    assert not first.same_fault(second) and first.same_fault(first)


def test_another_override_rejecting_the_same_keyword_is_a_new_fault() -> None:
    """Without the API check (it timed out), each stale override fails in its own run and
    the library raises every one from its own frames: the script line is the same
    ``trainer.train()`` and often so is the keyword; the callable named tells them apart."""
    from autofix.types import Diagnosis

    def raised(message: str) -> Diagnosis:
        return Diagnosis("override-signature", f"TypeError: {message}", "/u/train.py", 35,
                         "trainer.train()")

    on_log = raised("LossPrinter.on_log() got an unexpected keyword argument 'model'")
    on_step = raised("LossPrinter.on_step_end() got an unexpected keyword argument 'model'")
    step = raised("Weighted.training_step() takes 3 positional arguments but 4 were given")
    loss = raised("Weighted.compute_loss() got an unexpected keyword argument "
                  "'num_items_in_batch'")
    assert not on_log.same_fault(on_step) and not step.same_fault(loss)
    assert on_log.same_fault(raised(on_log.evidence.removeprefix("TypeError: ")))
    assert step.same_fault(step) and loss.same_fault(loss)


# -- faults from the corpus of public reports: frame guards and probe facts -----------

PANDAS_TB = '''Traceback (most recent call last):
  File "/u/train.py", line 30, in <module>
    trainer.train()
  File "/v/site-packages/torch/utils/data/_utils/fetch.py", line 54, in fetch
    data = [self.dataset[idx] for idx in possibly_batched_index]
  File "/v/site-packages/pandas/core/frame.py", line 4330, in __getitem__
    indexer = self.columns.get_loc(key)
KeyError: 342
'''


def test_keyerror_is_a_dataframe_only_where_pandas_raised_it() -> None:
    exc = parse_traceback(PANDAS_TB)
    assert exc is not None and classify(exc).id == "dataframe-to-trainer"
    plain = parse_traceback(TB.replace("IndexError: list index out of range",
                                       "KeyError: 'premise'"))
    assert plain is not None and classify(plain).id == "unknown"


def test_shape_error_is_too_long_only_in_the_embeddings() -> None:
    text = TB.replace("IndexError: list index out of range", "RuntimeError: The size of "
                      "tensor a (96) must match the size of tensor b (64) at non-singleton "
                      "dimension 1")
    exc = parse_traceback(text)
    assert exc is not None and classify(exc).id == "unknown"  # the user's own arithmetic
    inside = text.replace('    x = [1][3]\n', '    x = [1][3]\n  File "/v/transformers/models/'
                          'bert/modeling_bert.py", line 99, in forward\n    embeddings += '
                          'self.position_embeddings(position_ids)\n')
    exc = parse_traceback(inside)
    assert exc is not None and classify(exc).id == "longer-than-positions"


def test_raw_dataset_face_with_a_dataparallel_model_is_the_wrapper() -> None:
    from autofix.types import TrainerFacts

    text = TB.replace("IndexError: list index out of range", "ValueError: You should supply "
                      "an encoding or a list of encodings to this method that includes "
                      "input_ids, but you provided ['label']")
    wrapped = ProbeReport(trainers=[TrainerFacts("Trainer", "DataParallel", None)])
    run = RunResult(RunOutcome.FAILED, 1, 1.0, text, len(text), wrapped)
    diag = diagnose(run, Path("/u/train.py"))
    assert diag.category == "model-wrapped-dataparallel"
    assert "DataParallel" in diag.hint
    plain = ProbeReport(trainers=[TrainerFacts("Trainer", "BertForSequenceClassification", 3)])
    run = RunResult(RunOutcome.FAILED, 1, 1.0, text, len(text), plain)
    assert diagnose(run, Path("/u/train.py")).category == "raw-dataset"


def test_loss_without_head_advice_only_for_base_models() -> None:
    causal = TB.replace("IndexError: list index out of range", "ValueError: The model did not "
                        "return a loss from the inputs, only the following keys: logits.")
    exc = parse_traceback(causal)
    assert exc is not None and classify(exc).id == "unknown"  # a causal LM without labels


def _float_ids_failure(trainer_datasets: tuple[object, ...], line: str) -> object:
    from autofix.categories.failure import Failure
    from autofix.types import DatasetFacts, ExceptionInfo, FrameFacts, TrainerFacts

    target = {"kind": "tensor", "dtype": "torch.float32", "shape": [8], "min": 0, "max": 1,
              "integral": True}
    logits = {"kind": "tensor", "dtype": "torch.float32", "shape": [8, 2]}
    exc = ExceptionInfo("builtins.RuntimeError", "expected target dtype to be Long or Byte, "
                        "but got Float", facts=(FrameFacts(
                            "torch/nn/functional.py", 1, "cross_entropy", False,
                            {"input": logits, "target": target}),))
    trainers = [TrainerFacts("Trainer", "BertForSequenceClassification", 2,
                             (DatasetFacts("train", ("input_ids", "labels"), 64, "labels",
                                           "int"),))] if trainer_datasets else []
    return Failure(exc, "loss", (), ProbeReport(exception=exc, trainers=trainers),
                   user_line=("train.py", 15, line))


@pytest.mark.parametrize(("trainer", "line", "says", "never"), [
    ((), "loss = loss_fn(model(x), y)",
     ["train.py, line 15: `loss = loss_fn(model(x), y)`", "`y` holds whole class ids as "
      "float32", "or pass `y.long()` to the loss"], ["cast_column", "Value("]),
    (("train",), "Trainer(model=m, args=a, train_dataset=train).train()",
     ["train.py, line 15", "the datasets column 'labels'",
      "train = train.cast_column('labels', Value(\"int64\"))"], ["torch.long", ".long()"]),
])
def test_class_ids_advice_names_the_scripts_own_terms(trainer: tuple[str, ...], line: str,
                                                      says: list[str], never: list[str]
                                                      ) -> None:
    """A plain loop is told its own line, target and the int64 token; a Trainer script the
    datasets column it gave the trainer: never a library call the script does not use."""
    from autofix.categories import get_category

    category = get_category("class-ids-as-floats")
    assert category.advise is not None
    advice = category.advise(_float_ids_failure(trainer, line))  # type: ignore[arg-type]
    for text in says:
        assert text in advice, advice
    for text in never:
        assert text not in advice, advice


def test_a_loss_without_a_graph_is_named_by_the_forward_before_it() -> None:
    """The same message, two faults: the model's last forward ran with gradients off
    (``no-grad-training``), or it recorded a graph the loss was then cut off from
    (``loss-off-graph``); without the forward's record the older reading stays."""
    exc = example_failure(
        "RuntimeError", "element 0 of tensors does not require grad and does not have a "
        "grad_fn", user={"batch_loss": {"kind": "tensor", "dtype": "torch.float32",
                                        "shape": [], "requires_grad": False},
                         "net": {"kind": "model", "params": 4, "trainable": 4}},
        library={"self": {"kind": "tensor", "dtype": "torch.float32", "shape": [],
                          "requires_grad": False}},
        library_file="torch/_tensor.py", library_function="backward")
    graph = {"grad": True, "graph": True, "training": True}
    assert classify(replace(exc, forward=graph)).id == "loss-off-graph"
    assert classify(replace(exc, forward={**graph, "grad": False, "graph": False})).id == \
        "no-grad-training"
    assert classify(exc).id == "no-grad-training"
