"""A label metric given raw logits, read from the source (autofix/toolkit/logits_scan.py) and
worded by the category ``metric-on-logits`` (``Category.source_diagnoses``).

Unit tests of the reading; the session that uses it (ch3_04: the raw-dataset fault and the
evaluation loop's metric fixed in one group, proved by one verifying run) is
``tests/test_e2e_batch.py``.
"""

from __future__ import annotations

import nbformat
import pytest

from autofix.loop.verdicts import source_diagnoses as logits_metric_diagnoses

from .conftest import SAMPLES

COURSE_LOOP = '''import numpy as np
import torch
from sklearn.metrics import accuracy_score

all_predictions, all_labels = [], []
for batch in eval_dataloader:
    with torch.no_grad():
        outputs = model(**batch)
    all_predictions.append({predictions})
    all_labels.append(batch["labels"].numpy())
predictions = np.concatenate(all_predictions)
references = np.concatenate(all_labels)
print("accuracy:", accuracy_score(references, predictions))
'''

EVALUATE_LOOP = '''import evaluate

def evaluate_model(model, loader, accelerator):
    metric = evaluate.load("{metric}")
    for batch in loader:
        outputs = model(**batch)
        predictions = {predictions}
        predictions, references = accelerator.gather_for_metrics((predictions,
                                                                  batch["labels"]))
        metric.add_batch(predictions=predictions, references=references)
    return metric.compute()
'''


def _lines(source: str) -> list[tuple[int, str]]:
    return [(d.line, d.evidence) for d in logits_metric_diagnoses(source)]


def test_the_course_loop_gives_its_metric_call() -> None:
    source = COURSE_LOOP.format(predictions="outputs.logits.cpu().numpy()")
    found = logits_metric_diagnoses(source)
    assert [(d.category, d.line, d.via) for d in found] == [
        ("metric-on-logits", 13, "source-scan")]
    assert found[0].line_text == 'print("accuracy:", accuracy_score(references, predictions))'
    assert "accuracy_score()" in found[0].evidence


@pytest.mark.parametrize("classes", [
    "outputs.logits.argmax(dim=-1).numpy()",
    "torch.argmax(outputs.logits, dim=-1).numpy()",
    "outputs.logits.max(-1).indices.numpy()",
    "(outputs.logits[:, 0] > 0).long().numpy()",
    "(torch.sigmoid(outputs.logits) > 0.5).numpy()",
    "predict(outputs)",
])
def test_class_ids_on_the_way_give_nothing(classes: str) -> None:
    assert _lines(COURSE_LOOP.format(predictions=classes)) == []


def test_an_argmax_after_the_concatenation_gives_nothing() -> None:
    source = COURSE_LOOP.format(predictions="outputs.logits.numpy()").replace(
        "references = np.concatenate", "predictions = predictions.argmax(-1)\n"
                                       "references = np.concatenate")
    assert _lines(source) == []


def test_a_regression_head_gives_nothing() -> None:
    source = COURSE_LOOP.format(predictions="outputs.logits.numpy()")
    assert _lines(source) != []
    assert _lines("model = AutoModelForSequenceClassification.from_pretrained(c, "
                  "num_labels=1)\n" + source) == []
    assert _lines("is_regression = task == 'stsb'\n" + source) == []


def test_evaluate_accumulation_through_the_gather() -> None:
    assert _lines(EVALUATE_LOOP.format(metric="accuracy", predictions="outputs.logits")) == [
        (10, "metric.add_batch() is given the model's logits (predictions), where it takes "
             "class ids")]
    assert _lines(EVALUATE_LOOP.format(metric="accuracy",
                                       predictions="outputs.logits.argmax(dim=-1)")) == []
    # a metric of scores, not classes: the logits may be what it takes
    assert _lines(EVALUATE_LOOP.format(metric="mse", predictions="outputs.logits")) == []


def test_a_score_metric_and_a_source_that_does_not_parse_give_nothing() -> None:
    source = COURSE_LOOP.format(predictions="outputs.logits.numpy()").replace(
        "accuracy_score", "roc_auc_score")
    assert _lines(source) == []
    assert _lines("def broken(:\n    pass\n") == []


def test_the_course_exercise_and_its_fix() -> None:
    notebook = nbformat.read(SAMPLES / "course" / "ch3_04_training_loop_eval.ipynb", 4)
    source = "\n".join(c.source for c in notebook.cells if c.cell_type == "code"
                       and not c.source.startswith(("!", "%")))
    assert [d.category for d in logits_metric_diagnoses(source)] == ["metric-on-logits"]
    fixed = source.replace("accuracy_score(references, predictions)",
                           "accuracy_score(references, np.argmax(predictions, axis=-1))")
    assert logits_metric_diagnoses(fixed) == []


def test_no_finding_on_the_shipped_scripts_that_evaluate_correctly() -> None:
    """Every shipped script whose metric is right (the samples, the test scripts, the
    course exercises but ch3_04): no diagnosis."""
    scripts = [p for p in (SAMPLES.rglob("*.py")) if "ch3_04" not in p.name]
    assert len(scripts) > 10
    flagged = [p.name for p in scripts if logits_metric_diagnoses(p.read_text())]
    assert flagged == []


def test_a_tuple_of_lists_and_tensors_gathered_with_torch_cat() -> None:
    source = ("import torch\nfrom sklearn.metrics import f1_score\n"
              "scores, gold = [], []\n"
              "for batch in test:\n"
              "    out = model(**batch)\n"
              "    scores.append(out.logits.cpu())\n"
              "    gold.append(batch['labels'])\n"
              "print(f1_score(torch.cat(gold).numpy(), torch.cat(scores).numpy(), "
              "average='macro'))\n")
    assert [line for line, _ in _lines(source)] == [8]
    assert _lines(source.replace("torch.cat(scores).numpy()",
                                 "torch.cat(scores).argmax(-1).numpy()")) == []


#: A name bound some other way in the function that reads it (a parameter, a loop or
#: comprehension target, a lambda parameter), or a metric name rebound to a score metric:
#: the module's logits of the same name are not what reaches the metric.
SHADOWED = {
    "parameter": ("from sklearn.metrics import accuracy_score\n"
                  "def score(preds, labels):\n"
                  "    return accuracy_score(labels, preds)\n"
                  "preds = model(**batch).logits\n"
                  "print(score(preds.argmax(-1), batch['labels']))\n"),
    "loop target": ("from sklearn.metrics import f1_score\n"
                    "preds = model(**batch).logits\n"
                    "def report(batches):\n"
                    "    for preds, labels in batches:\n"
                    "        print(f1_score(labels, preds))\n"),
    "lambda": ("from sklearn.metrics import accuracy_score\n"
               "preds = model(**batch).logits\n"
               "score = lambda preds: accuracy_score(y, preds)\n"),
    "comprehension": ("from sklearn.metrics import accuracy_score\n"
                      "p = model(**batch).logits\n"
                      "scores = [accuracy_score(y, p) for p in per_fold_class_ids]\n"),
    "inner parameter": ("from sklearn.metrics import accuracy_score\n"
                        "logits = model(**batch).logits\n"
                        "def outer():\n"
                        "    def inner(logits):\n"
                        "        return accuracy_score(labels, logits)\n"
                        "    return inner(logits.argmax(-1))\n"),
    "local score metric": ("import evaluate\n"
                           "metric = evaluate.load('accuracy')\n"
                           "def similarity(model, loader):\n"
                           "    metric = evaluate.load('spearmanr')\n"
                           "    for batch in loader:\n"
                           "        out = model(**batch)\n"
                           "        metric.add_batch(predictions=out.logits, references=y)\n"),
    "metric rebound": ("import evaluate\n"
                       "metric = evaluate.load('accuracy')\n"
                       "metric = evaluate.load('pearsonr')\n"
                       "out = cross_encoder(**pairs)\n"
                       "print(metric.compute(predictions=out.logits, references=gold))\n"),
}

#: Other spellings of logits reaching a label metric.
REACHING = {
    "subscript": ("from sklearn.metrics import accuracy_score\n"
                  "outputs = model(**batch)\n"
                  "preds = outputs['logits'].numpy()\n"
                  "print(accuracy_score(batch['labels'], preds))\n"),
    "gather on an attribute": ("import evaluate\n"
                               "class Loop:\n"
                               "    def evaluate(self):\n"
                               "        metric = evaluate.load('accuracy')\n"
                               "        for batch in self.loader:\n"
                               "            outputs = self.model(**batch)\n"
                               "            preds = self.accelerator.gather_for_metrics("
                               "outputs.logits)\n"
                               "            metric.add_batch(predictions=preds, references=y)\n"),
    "comprehension": ("import numpy as np\nfrom sklearn.metrics import accuracy_score\n"
                      "outs = [model(**b) for b in batches]\n"
                      "preds = np.concatenate([o.logits.numpy() for o in outs])\n"
                      "print(accuracy_score(y, preds))\n"),
    "list addition": ("from sklearn.metrics import accuracy_score\n"
                      "preds = []\n"
                      "for batch in loader:\n"
                      "    preds = preds + model(**batch).logits.tolist()\n"
                      "print(accuracy_score(labels, preds))\n"),
    "load_metric": ("from datasets import load_metric\n"
                    "metric = load_metric('accuracy')\n"
                    "for batch in loader:\n"
                    "    outputs = model(**batch)\n"
                    "    metric.add_batch(predictions=outputs.logits, references=y)\n"),
}


@pytest.mark.parametrize("case", sorted(SHADOWED))
def test_names_bound_otherwise_are_not_followed(case: str) -> None:
    assert _lines(SHADOWED[case]) == []


@pytest.mark.parametrize("case", sorted(REACHING))
def test_other_spellings_of_logits_reaching_the_metric(case: str) -> None:
    assert len(_lines(REACHING[case])) == 1
