"""The language-model family (``autofix/categories/catalogue/llm.py``, the child's
``preflight_lm.py`` and ``facts.module_names``) on real torch objects and on the facts the
child reports: no process, no training."""

from __future__ import annotations

from typing import Any

import pytest

from autofix.categories import EXAMPLES_DIR
from autofix.categories.tracebacks import parse_traceback
from autofix.loop.diagnosis import classify, diagnose_symptom
from autofix.run.child import facts as child_facts
from autofix.run.child import preflight_lm
from autofix.types import (
    ExceptionInfo,
    FrameFacts,
    ProbeReport,
    RunOutcome,
    RunResult,
    SampleLoss,
    SymptomReport,
    TrainerFacts,
)

torch = pytest.importorskip("torch")
nn = torch.nn


class LlamaAttention(nn.Module):  # the class names are what the checks read
    def __init__(self) -> None:
        super().__init__()
        self.q_proj, self.k_proj = nn.Linear(4, 4), nn.Linear(4, 4)
        self.v_proj, self.o_proj = nn.Linear(4, 4), nn.Linear(4, 4)


class LlamaMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate_proj, self.up_proj, self.down_proj = (nn.Linear(4, 4) for _ in range(3))


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.self_attn, self.mlp = LlamaAttention(), LlamaMLP()


class Config:
    vocab_size = 938
    num_labels = 2


class LlamaForCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.config = Config()
        self.embed_tokens = nn.Embedding(10, 4)
        self.layers = nn.ModuleList([Layer(), Layer()])
        self.lm_head = nn.Linear(4, 10)


class BertForSequenceClassification(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.config = Config()
        self.classifier = nn.Linear(4, 2)


class PeftModel(nn.Module):
    def __init__(self, base: nn.Module) -> None:
        super().__init__()
        self.base = base

    def get_base_model(self) -> nn.Module:
        return self.base


LLAMA_ATTENTION = ["q_proj", "k_proj", "v_proj", "o_proj"]


def test_module_names_are_the_model_s_own_attention_projections() -> None:
    names = child_facts.module_names(LlamaForCausalLM())
    assert names["attention_linear"] == LLAMA_ATTENTION
    assert names["linear_names"] == ["down_proj", "gate_proj", "k_proj", "lm_head", "o_proj",
                                     "q_proj", "up_proj", "v_proj"]
    assert child_facts.module_names(object()) == {}


def test_batch_facts_count_scored_labels_after_the_shift() -> None:
    labels = torch.tensor([[5, -100, -100], [-100, 7, 2], [-100, -100, -100]])
    ids = torch.tensor([[5, 2, 2], [1, 7, 2], [1, 3, 2]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 1], [1, 1, 1]])
    batch = {"input_ids": ids, "attention_mask": mask, "labels": labels}
    found = preflight_lm.batch_facts(batch, pad=2, eos=2)
    # row 0's only label is at position 0, which no token predicts: it has no target
    assert found == {"batch_keys": ["input_ids", "attention_mask", "labels"], "batch_rows": 3,
                     "scored_labels": 2, "rows_without_targets": 2, "rows_only_eos": 0,
                     "eos_in_inputs": 3, "eos_in_labels": 1, "eos_cut": 1}
    assert preflight_lm.batch_facts({"input_ids": ids}, 2, 2) == {"batch_keys": ["input_ids"]}


def _exc(message: str, kind: str = "ValueError", facts: tuple[FrameFacts, ...] = ()
         ) -> ExceptionInfo:
    return ExceptionInfo(kind, message, facts=facts)


def _model_frame(**extra: Any) -> FrameFacts:
    value = {"kind": "model", "type": "transformers.models.llama.modeling_llama."
             "LlamaForCausalLM", "attention_linear": LLAMA_ATTENTION,
             "linear_names": LLAMA_ATTENTION + ["lm_head"], **extra}
    return FrameFacts("peft/tuners/tuners_utils.py", 1, "inject_adapter", False,
                      {"model": value})


def test_lora_targets_another_architecture_s_modules() -> None:
    message = ("Target modules {'c_attn'} not found in the base model. Please check the "
               "target modules and try again.")
    found = classify(_exc(message, "NoMatchingPeftModuleError", (_model_frame(),)))
    assert found.id == "lora-target-modules-not-found"
    assert found.advice is not None
    advice = found.advice(ProbeReport(exception=_exc(message, facts=(_model_frame(),))))
    assert "['q_proj', 'k_proj', 'v_proj', 'o_proj']" in advice and "LlamaForCausalLM" in advice


def test_no_trainable_parameters_only_on_the_counts() -> None:
    message = "element 0 of tensors does not require grad and does not have a grad_fn"
    frozen = ProbeReport(facts={"lm": {"params_trainable": 0, "params_total": 142272}})
    assert classify(_exc(message, "RuntimeError"), frozen).id == "no-trainable-parameters"
    trains = ProbeReport(facts={"lm": {"params_trainable": 10, "params_total": 142272}})
    assert classify(_exc(message, "RuntimeError"), trains).id != "no-trainable-parameters"
    assert classify(_exc(message, "RuntimeError")).id != "no-trainable-parameters"


def test_every_example_dropped_needs_the_measured_rows() -> None:
    message = "num_samples should be a positive integer value, but got num_samples=0"
    dropped = {"rows_in": 200, "rows_out": 0, "max_length": 8, "longest": 17,
               "longest_prompt": 13}
    probe = ProbeReport(facts={"lm": {"dropped": dropped}})
    found = classify(_exc(message), probe)
    assert found.id == "all-examples-masked"
    assert found.advice is not None and "max_length=8" in found.advice(probe)
    assert classify(_exc(message)).id != "all-examples-masked"  # an empty set of its own


def test_causal_lm_given_a_padding_collator() -> None:
    message = ("The model did not return a loss from the inputs, only the following keys: "
               "logits. For reference, the inputs it received are input_ids,attention_mask.")
    causal = ProbeReport(trainers=[TrainerFacts("Trainer", "LlamaForCausalLM", 2)],
                         facts={"lm": {"collator": "DataCollatorWithPadding",
                                       "batch_keys": ["input_ids", "attention_mask"]}})
    assert classify(_exc(message), causal).id == "causal-lm-without-labels"
    encoder = ProbeReport(trainers=[TrainerFacts("Trainer", "BertModel", 2)])
    assert classify(_exc(message), encoder).id != "causal-lm-without-labels"


def test_ragged_labels_of_a_causal_lm_are_not_missing_labels() -> None:
    """A causal LM's rows with their own labels (a prompt masked with -100) under
    Trainer(data_collator=DataCollatorWithPadding(...)), the real traceback: the collator's
    error names the labels it could not pad, so the fault is their padding, not their
    absence (lm-collator would overwrite them with a copy of input_ids)."""
    text = (EXAMPLES_DIR / "token-labels-not-padded" / "v5-causal-lm.txt").read_text()
    exc = parse_traceback(text)
    assert exc is not None
    causal = ProbeReport(trainers=[TrainerFacts("Trainer", "LlamaForCausalLM", 2)],
                         facts={"lm": {"collator": "DataCollatorWithPadding"}})
    assert classify(exc, causal).id == "token-labels-not-padded"


def test_labels_masked_from_the_first_step_are_the_labels_fault() -> None:
    samples = tuple(SampleLoss(i, -100, None) for i in range(4))

    def diagnosis(step: int) -> str:
        report = ProbeReport(symptom=SymptomReport("nan-loss", step, f"loss is nan at step "
                                                   f"{step}", 938, 2, samples))
        run = RunResult(RunOutcome.FAILED, 1, 1.0, "", 0, report)
        diag = diagnose_symptom(run)
        assert diag is not None
        return diag.category

    assert diagnosis(1) == "labels-all-masked"
    assert diagnosis(3) == "nan-loss"  # a batch masked later on: reported, not this fault


def test_sfts_dataset_preparation_is_recorded_only_with_the_preflight_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``preflight.patch_sft`` wraps ``SFTTrainer._prepare_dataset`` (the split's columns
    recorded as ``sft_input``) when the preflight is on, and leaves TRL alone when off."""
    import types

    from autofix.run.child import preflight

    class SFTTrainer:
        def _prepare_dataset(self, dataset: Any, *args: Any, **kwargs: Any) -> Any:
            return dataset

    trl = types.ModuleType("trl.trainer.sft_trainer")
    trl.SFTTrainer = SFTTrainer  # type: ignore[attr-defined]
    original = SFTTrainer._prepare_dataset
    monkeypatch.setattr(preflight, "ENABLED", False)
    preflight.patch_sft(trl)
    assert SFTTrainer._prepare_dataset is original
    monkeypatch.setattr(preflight, "ENABLED", True)
    monkeypatch.setattr(preflight_lm.Seen, "facts", {})
    preflight.patch_sft(trl)
    assert SFTTrainer._prepare_dataset is not original

    class Rows(list[dict[str, Any]]):
        column_names = ["text"]

    rows = Rows([{"text": "a"}])
    assert SFTTrainer()._prepare_dataset(rows, None, None, "train") is rows
    assert preflight_lm.Seen.facts["sft_input"] == {"train": {"columns": ["text"]}}
