"""The language-model faults that raise nothing (``autofix/run/child/preflight_lm.py``: an
end-of-text token masked as padding, empty completions, completion_only_loss on text rows)
and TRL's text field naming no column (``catalogue/llm.py``), on real torch / transformers /
datasets objects and on the facts the child reports: no process, no training."""

from __future__ import annotations

import types
from typing import Any

import pytest

from autofix.categories.registry import get_category
from autofix.loop.diagnosis import classify
from autofix.run.child import preflight_lm
from autofix.types import ExceptionInfo, Frame, FrameFacts, ProbeReport

torch = pytest.importorskip("torch")
IGNORE = -100
EOS, BOS, UNK = 2, 1, 0


def _tokenizer() -> Any:
    """A real fast tokenizer (word level) with <unk> 0, <s> 1, </s> 2 and no pad token."""
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    vocab = {"<unk>": UNK, "<s>": BOS, "</s>": EOS, "a": 3, "b": 4, "c": 5, "Q": 6}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")


def test_the_library_collator_masks_every_end_of_text_token_when_pad_is_eos() -> None:
    transformers = pytest.importorskip("transformers")
    tokenizer = _tokenizer()
    tokenizer.pad_token = tokenizer.eos_token
    rows = [tokenizer(text + " </s>") for text in ("a b c", "a b", "c")]
    batch = transformers.DataCollatorForLanguageModeling(tokenizer, mlm=False)(rows)
    facts = preflight_lm.batch_facts(batch, EOS, EOS, UNK)
    assert (facts["eos_in_inputs"], facts["eos_in_labels"], facts["eos_cut"]) == (3, 0, 3)
    assert facts["unk_in_inputs"] == 0 and facts["rows_only_eos"] == 0

    tokenizer.pad_token = tokenizer.unk_token  # the fix: the end-of-text tokens stay scored
    batch = transformers.DataCollatorForLanguageModeling(tokenizer, mlm=False)(rows)
    facts = preflight_lm.batch_facts(batch, UNK, EOS, UNK)
    assert "eos_cut" not in facts and int((batch["labels"] == EOS).sum()) == 3


def _batch(ids: list[list[int]], labels: list[list[int]]) -> dict[str, Any]:
    ids_t = torch.tensor(ids)
    return {"input_ids": ids_t, "attention_mask": torch.ones_like(ids_t),
            "labels": torch.tensor(labels)}


def test_an_end_of_text_token_inside_a_masked_prompt_is_not_cut() -> None:
    # a chat turn: "Q </s>" is the prompt (masked), "a </s>" the scored answer
    batch = _batch([[6, EOS, 3, EOS]], [[IGNORE, IGNORE, 3, EOS]])
    facts = preflight_lm.batch_facts(batch, EOS, EOS)
    assert (facts["eos_in_inputs"], facts["eos_in_labels"], facts["eos_cut"]) == (2, 1, 0)
    assert preflight_lm._judge(None, {**facts, "eos_token_id": EOS}, None) == []


def test_rows_scoring_only_the_end_of_text_token() -> None:
    empty = _batch([[6, 3, EOS], [6, 4, EOS]], [[IGNORE, IGNORE, EOS], [IGNORE, IGNORE, EOS]])
    facts = preflight_lm.batch_facts(empty, None, EOS)
    assert facts["rows_only_eos"] == 2
    faults = preflight_lm._judge(None, facts, None)
    assert [f["category"] for f in faults] == ["empty-completion"]
    answered = _batch([[6, 3, EOS], [6, 4, EOS]], [[IGNORE, IGNORE, EOS], [IGNORE, 4, EOS]])
    facts = preflight_lm.batch_facts(answered, None, EOS)
    assert facts["rows_only_eos"] == 1 and preflight_lm._judge(None, facts, None) == []


def test_every_label_masked_is_reported_before_the_other_label_faults() -> None:
    batch = _batch([[6, 3, EOS]], [[IGNORE, IGNORE, IGNORE]])
    facts = preflight_lm.batch_facts(batch, EOS, EOS)
    faults = preflight_lm._judge(None, facts, None)
    assert [f["category"] for f in faults] == ["labels-all-masked"]


def test_completion_only_loss_on_the_rows_trl_prepared() -> None:
    def trainer(flag: Any) -> Any:
        return types.SimpleNamespace(args=types.SimpleNamespace(completion_only_loss=flag))

    saved = dict(preflight_lm.Seen.facts)
    try:
        preflight_lm.Seen.facts = {"sft_input": {"train": {"columns": ["text"]}}}
        assert preflight_lm._completion_only(trainer(True)) == {
            "completion_only_on_text": ["text"]}
        assert preflight_lm._completion_only(trainer(None)) == {}  # TRL decides: fine
        preflight_lm.Seen.facts = {"sft_input": {"train": {"columns": ["prompt",
                                                                       "completion"]}}}
        assert preflight_lm._completion_only(trainer(True)) == {}
    finally:
        preflight_lm.Seen.facts = saved


def test_the_input_rows_are_recorded_with_their_empty_completions() -> None:
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_dict({"prompt": ["Q a", "Q b", "Q c"],
                                       "completion": ["", " b", "  "]})
    saved = dict(preflight_lm.Seen.facts)
    try:
        preflight_lm.Seen.facts = {}
        preflight_lm._record_input(rows, "train")
        assert preflight_lm.Seen.facts["sft_input"] == {"train": {
            "columns": ["prompt", "completion"], "checked_rows": 3, "empty_completions": 2}}
    finally:
        preflight_lm.Seen.facts = saved


def _lm(**facts: Any) -> ProbeReport:
    return ProbeReport(facts={"lm": facts})


def test_the_pad_eos_advice_names_the_unknown_token_only_when_it_is_safe() -> None:
    advice = get_category("pad-token-is-eos").advice
    assert advice is not None
    cut = {"eos_cut": 8, "eos_in_inputs": 8, "eos_in_labels": 0, "eos_token_id": EOS,
           "bos_token_id": BOS, "collator": "DataCollatorForLanguageModeling"}
    safe = advice(_lm(**cut, unk_token_id=UNK, unk_in_inputs=0))
    assert "tokenizer.pad_token = tokenizer.unk_token (id 0" in safe and "8 real" in safe
    held = advice(_lm(**cut, unk_token_id=UNK, unk_in_inputs=3))  # the texts hold <unk>
    gpt2 = advice(_lm(**{**cut, "bos_token_id": EOS}, unk_token_id=EOS, unk_in_inputs=0))
    for text in (held, gpt2):
        assert "unk_token" not in text and "add_special_tokens({'pad_token': '<pad>'})" in text
    assert advice(_lm(eos_in_inputs=8, eos_in_labels=0)) == ""  # nothing cut: no advice


def test_the_advice_of_empty_completions_and_of_completion_only_on_text() -> None:
    empty = get_category("empty-completion").advice
    assert empty is not None
    text = empty(_lm(batch_rows=16, rows_only_eos=16, sft_input={"train": {
        "columns": ["prompt", "completion"], "checked_rows": 200, "empty_completions": 200}}))
    assert "200 of the first 200 rows have completion == ''" in text
    assert empty(_lm(batch_rows=16, rows_only_eos=3)) == ""
    only = get_category("completion-only-loss-on-text").advice
    assert only is not None
    assert "the columns text" in only(_lm(completion_only_on_text=["text"]))


def _key_error(field: str, keys: list[str], features: dict[str, str]) -> ExceptionInfo:
    """TRL's ``KeyError`` for a missing text column, with the facts the child reports."""
    sft = "/x/site-packages/trl/trainer/sft_trainer.py"
    fmt = "/x/site-packages/datasets/formatting/formatting.py"
    row = {"kind": "mapping", "type": "datasets.formatting.formatting.LazyRow", "keys": keys}
    dataset = {"kind": "dataset", "columns": keys, "num_rows": 200, "features": features}
    return ExceptionInfo(
        "KeyError", repr(field),
        frames=(Frame("train.py", 85, "<module>"), Frame(sft, 1383, "tokenize_fn"),
                Frame(fmt, 299, "__getitem__")),
        facts=(FrameFacts(fmt, 299, "__getitem__", False, {"self": row}),
               FrameFacts(sft, 1383, "tokenize_fn", False, {
                   "example": row, "dataset_text_field": {"kind": "str", "value": field}}),
               FrameFacts("train.py", 85, "<module>", True, {"dataset": dataset})))


def test_a_text_field_the_rows_do_not_have() -> None:
    exc = _key_error("content", ["text"], {"text": "Value('string')"})
    found = classify(exc)
    assert found.id == "dataset-text-field-missing"
    assert found.advise is not None
    from autofix.categories.failure import Failure

    advice = found.advise(Failure(exc))
    assert "dataset_text_field='content'" in advice and "dataset_text_field='text'" in advice
    # the field is a column: the KeyError comes from somewhere else
    assert classify(_key_error("text", ["text"], {"text": "Value('string')"})).id != \
        "dataset-text-field-missing"


def test_a_preflight_fault_is_told_with_its_category_s_advice_from_the_facts() -> None:
    from autofix.loop.verdicts import fault_diagnosis
    from autofix.types import PreflightFault

    fault = PreflightFault("lm-empty-completion", "empty-completion", "every row ...")
    probe = _lm(batch_rows=16, rows_only_eos=16)
    assert "scores only the end-of-text token" in fault_diagnosis(fault, probe).hint
    assert fault_diagnosis(fault).hint == get_category("empty-completion").hint
