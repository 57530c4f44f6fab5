"""Fine-tuning language models: TRL's ``SFTTrainer``/``SFTConfig``, PEFT's LoRA, chat
templates and hand-written causal-LM loops, measured on transformers 5.24 / TRL 1.16 /
PEFT 0.21 / torch 2.13 CPU with the tiny Llama of ``scripts/make_tiny_llm.py``
(``sample_scripts/llm/``, corpus cases ``l01``-``l16``).

Each category reads the facts that tell it apart: the model's real module names and
parameter counts (``autofix/run/child/facts.py``), what the language-model preflight
measured (``autofix/run/child/preflight_lm.py``, the report's ``facts["lm"]``: a batch's
labels, the rows TRL's preparation dropped with their untruncated lengths), the trainer
the script built. A message these faults share with others ('NoneType' object has no
attribute 'backward', "Asking to pad", "num_samples=0") counts here only when the facts
show this family's cause (``needs_facts``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from autofix.categories.facts import all_ignored, all_ignored_text, sample_lines
from autofix.categories.failure import Failure
from autofix.categories.model import Category
from autofix.types import Diagnosis, ExceptionInfo, ProbeReport, SymptomReport

#: Class names of causal language models (a PEFT wrapper's base model counts too).
CAUSAL_LM = r"(ForCausalLM|LMHeadModel)$"
#: transformers' padding collator: it pads the inputs and makes no labels.
PADDING_COLLATOR = r"(^|\.)DataCollatorWithPadding$"


#: Keywords of each TRL trainer that are fields of its config (TRL 0.9 moved them there).
TRL_MOVED: dict[str, tuple[str, ...]] = {
    "SFTTrainer": ("dataset_text_field", "packing", "max_seq_length", "dataset_num_proc",
                   "dataset_batch_size", "dataset_kwargs", "neftune_noise_alpha",
                   "model_init_kwargs", "num_of_sequences", "chars_per_token",
                   "eval_packing"),
    "DPOTrainer": ("beta", "label_smoothing", "loss_type", "max_length", "max_prompt_length",
                   "max_target_length", "truncation_mode", "precompute_ref_log_probs",
                   "generate_during_eval", "disable_dropout", "padding_value",
                   "label_pad_token_id", "model_init_kwargs", "ref_model_init_kwargs",
                   "dataset_num_proc", "reference_free", "force_use_ref_model",
                   "model_adapter_name", "ref_adapter_name", "is_encoder_decoder"),
}
#: Config fields TRL renamed: (config, old) -> (new, the TRL release that renamed it).
TRL_RENAMED: dict[tuple[str, str], tuple[str, str]] = {
    ("SFTConfig", "max_seq_length"): ("max_length", "0.20.0"),
}
def lm_facts(probe: ProbeReport) -> Mapping[str, Any]:
    """What the language-model preflight measured (``{}`` when it did not run)."""
    found = probe.facts.get("lm")
    return found if isinstance(found, Mapping) else {}


def _failure(probe: ProbeReport) -> Failure:
    """The run's failure as the checks read it (an empty exception when the probe has
    none: a preflight fault's advice)."""
    return Failure(probe.exception or ExceptionInfo("", ""), probe=probe)


def _models(failure: Failure) -> Iterator[Mapping[str, Any]]:
    """Summaries of the Hugging Face models in the failing frames (PEFT's wrappers and
    plain torch modules left out), innermost first."""
    for value in failure.summaries("model"):
        kind = str(value.get("type", ""))
        if kind.startswith("transformers."):
            yield value


def is_causal(failure: Failure) -> bool | None:
    """True when the model being trained is a causal LM (the trainer's model, the
    preflight's, or a model in the failing frames), False when it is another Hugging Face
    model, None when no model is known."""
    names = [str(lm_facts(failure.probe).get("model_class", ""))]
    names += [t.model_class for t in failure.probe.trainers]
    names += [str(v.get("type", "")).rsplit(".", 1)[-1] for v in _models(failure)]
    names = [n for n in names if n and not n.startswith("Peft")]
    if not names:
        return None
    return any(re.search(CAUSAL_LM, n) for n in names)


# --- LoRA target modules ---------------------------------------------------------------


def module_names(failure: Failure) -> tuple[list[str], list[str]]:
    """(attention projections, every linear layer's leaf name) of the model: the leaf
    names of the linear layers found only inside its attention blocks, and of all its
    linear layers (``autofix/run/child/facts.py: module_names``), read from the model in
    the failing frames, else from the preflight's facts; empty lists when neither has
    them."""
    sources = [*_models(failure), lm_facts(failure.probe)]
    for value in sources:
        names = value.get("attention_linear")
        if isinstance(names, list) and names:
            linear = value.get("linear_names")
            return ([str(n) for n in names],
                    [str(n) for n in linear] if isinstance(linear, list) else [])
    return [], []


def attention_projections(failure: Failure) -> list[str]:
    """The model's attention projections (:func:`module_names`); ``[]`` when unknown."""
    return module_names(failure)[0]


def _lora_check(failure: Failure) -> bool | None:
    return True if attention_projections(failure) else None


def _lora_advice(probe: ProbeReport) -> str:
    failure = _failure(probe)
    names = attention_projections(failure)
    if not names:
        return ""
    model = next((str(v.get("type", "")).rsplit(".", 1)[-1] for v in _models(failure)), "")
    return (f"target_modules must name modules of the model{' ' + model if model else ''}: "
            f"its attention projections (model.named_modules()) are "
            f"{', '.join(names)}: LoraConfig(target_modules={names!r})")


# --- no trainable parameters -----------------------------------------------------------


def trainable_counts(failure: Failure) -> tuple[int, int] | None:
    """(trainable, total) parameters of the model being trained: the preflight's count,
    the probe's, else the model in the failing frames; ``None`` when unknown."""
    for facts in (lm_facts(failure.probe), failure.probe.facts):
        trainable, total = facts.get("params_trainable"), facts.get("params_total")
        if isinstance(trainable, int) and isinstance(total, int) and total:
            return trainable, total
    for value in _models(failure):
        trainable, total = value.get("params_trainable"), value.get("params_total")
        if isinstance(trainable, int) and isinstance(total, int) and total:
            return trainable, total
    return None


def _frozen(failure: Failure) -> bool | None:
    counts = trainable_counts(failure)
    return None if counts is None else counts[0] == 0


def _frozen_advice(probe: ProbeReport) -> str:
    facts = lm_facts(probe)
    if facts.get("peft_inference_mode"):
        return ("the PEFT adapter was loaded for inference: PeftModel.from_pretrained(base, "
                "adapter, is_trainable=True) makes its weights trainable")
    if facts.get("peft_adapter"):
        return ("get_peft_model already freezes the base model and leaves the adapter "
                "trainable: drop the loop that sets requires_grad=False on every parameter")
    return ("no parameter requires grad: unfreeze the layers to train, or add LoRA adapters "
            "(get_peft_model(model, LoraConfig(...)), or SFTTrainer(peft_config=...))")


# --- labels, lengths, collators ---------------------------------------------------------


def _dropped(failure: Failure) -> bool | None:
    dropped = lm_facts(failure.probe).get("dropped")
    if not isinstance(dropped, Mapping):
        return None
    return dropped.get("rows_out") == 0 and bool(dropped.get("rows_in"))


def _dropped_advice(probe: ProbeReport) -> str:
    dropped = lm_facts(probe).get("dropped")
    if not isinstance(dropped, Mapping):
        return ""
    longest = dropped.get("longest")
    measured = f"; the longest example is {longest} tokens (its prompt " \
        f"{dropped.get('longest_prompt')})" if isinstance(longest, int) else ""
    return (f"max_length={dropped.get('max_length')} truncates every example before its "
            f"completion, so SFTTrainer dropped all {dropped.get('rows_in')} rows as fully "
            f"masked{measured}: raise SFTConfig(max_length=...) above the longest prompt")


def _padding_collator(failure: Failure) -> bool:
    """A ``DataCollatorWithPadding`` is the collator in use (the preflight saw it, or it
    is in the failing frames)."""
    if lm_facts(failure.probe).get("collator") == "DataCollatorWithPadding":
        return True
    return any(True for _ in failure.summaries(type_pattern=PADDING_COLLATOR))


def _sft(failure: Failure) -> bool:
    return any(t.trainer_class == "SFTTrainer" for t in failure.probe.trainers) or \
        lm_facts(failure.probe).get("where") == "SFTTrainer"


def _no_labels_check(failure: Failure) -> bool | None:
    """A causal LM whose batches carry no labels: a padding collator (which makes none),
    or a batch in the failing frames without ``labels``; with SFTTrainer, any failure
    raised while its DataCollatorWithPadding pads (TRL's own collator makes the labels)."""
    causal = is_causal(failure)
    if not causal:
        return causal
    if _sft(failure):
        return _padding_collator(failure) and failure.site == "collator" or \
            _padding_collator(failure) and "did not return a loss" in failure.exc.message
    batch = failure.value("batch", "inputs", user=True)
    keys = batch.get("keys") if batch else lm_facts(failure.probe).get("batch_keys")
    if isinstance(keys, list) and "labels" in keys or _rows_bring_labels(failure):
        return False
    return _padding_collator(failure) or isinstance(keys, list) and "input_ids" in keys


def _rows_bring_labels(failure: Failure) -> bool:
    """The rows being batched have a ``labels`` feature: the collator's own error names it
    (``features (`labels` in this case) have excessive nesting``: the labels are there, of
    different lengths), or a training dataset the probe saw has a ``labels`` column. Such
    a batch lacks no labels: its collator does not pad them (``token-labels-not-padded``)."""
    if "(`labels` in this case)" in failure.exc.message:
        return True
    return any("labels" in d.columns for t in failure.probe.trainers for d in t.datasets
               if d.role == "train")


def _no_labels_advice(probe: ProbeReport) -> str:
    failure = _failure(probe)
    if _sft(failure):
        return ("SFTTrainer builds its own collator, which pads and makes the labels (with "
                "-100 on the padding): drop data_collator=DataCollatorWithPadding(...)")
    return ("a causal LM computes its loss from labels; DataCollatorWithPadding pads the "
            "inputs and makes none: use DataCollatorForLanguageModeling(tokenizer, "
            "mlm=False), which copies input_ids to labels with -100 on the padding")


def distinct_unk(facts: Mapping[str, Any]) -> bool:
    """The tokenizer has an unknown token that is neither end-of-text nor begin-of-text and
    that the measured batch never holds: a pad token the texts do not contain, so masking
    the labels by pad id masks padding only."""
    unk, eos = facts.get("unk_token_id"), facts.get("eos_token_id")
    return isinstance(unk, int) and unk not in (eos, facts.get("bos_token_id")) and \
        facts.get("unk_in_inputs") == 0


def _pad_eos_advice(probe: ProbeReport) -> str:
    facts = lm_facts(probe)
    if not facts.get("eos_cut"):
        return ""
    cut = (f"{facts.get('collator') or 'the collator'} sets labels to -100 wherever "
           f"input_ids == pad_token_id, and the pad token is the end-of-text token (id "
           f"{facts.get('eos_token_id')}): the first batch's {facts.get('eos_in_inputs')} "
           "real end-of-text tokens are all masked, so the model never learns to stop")
    if distinct_unk(facts):
        return (f"{cut}; pad with a token the texts never hold: tokenizer.pad_token = "
                f"tokenizer.unk_token (id {facts.get('unk_token_id')}, absent from the batch)")
    return (f"{cut}; give the tokenizer a pad token of its own: "
            "tokenizer.add_special_tokens({'pad_token': '<pad>'}) and "
            "model.resize_token_embeddings(len(tokenizer)) (or build the labels with -100 on "
            "the padding positions only, e.g. DataCollatorForSeq2Seq on rows that have labels)")


def _empty_completion_advice(probe: ProbeReport) -> str:
    facts = lm_facts(probe)
    rows = facts.get("batch_rows")
    if not isinstance(rows, int) or facts.get("rows_only_eos") != rows:
        return ""
    train = (facts.get("sft_input") or {}).get("train") or {}
    counted = ""
    if isinstance(train, Mapping) and isinstance(train.get("empty_completions"), int):
        counted = (f"; {train['empty_completions']} of the first {train.get('checked_rows')} "
                   "rows have completion == ''")
    return (f"every row of the first batch ({rows}) scores only the end-of-text token: the "
            f"completions are empty{counted}. Put the answer in the completion column and "
            "only the question in the prompt (prompt-completion rows: SFTTrainer scores the "
            "completion), or train on the full text as language-modeling rows (a 'text' "
            "column)")


def _completion_only_advice(probe: ProbeReport) -> str:
    columns = lm_facts(probe).get("completion_only_on_text")
    if not isinstance(columns, list):
        return ""
    return (f"completion_only_loss=True applies to prompt-completion rows only; the training "
            f"rows have the columns {', '.join(map(str, columns))}, so SFTTrainer scores every "
            "token. Give it 'prompt' and 'completion' columns (the loss is then on the "
            "completion, TRL's default for them), or drop completion_only_loss=True to train "
            "on the whole text knowingly")


def text_field(failure: Failure) -> tuple[str, list[str], Mapping[str, Any]] | None:
    """(the ``dataset_text_field`` TRL read, the row's keys, the dataset's features) at a
    failure inside TRL's tokenization of a row (``tokenize_fn``'s locals: the row
    ``example`` and ``dataset_text_field``; the features of the dataset being mapped),
    ``None`` when those facts are not there."""
    field = failure.value("dataset_text_field", user=False)
    row = failure.value("example", user=False)
    keys = row.get("keys") if row else None
    if field is None or field.get("kind") != "str" or not isinstance(keys, list):
        return None
    dataset = next(failure.summaries("dataset"), None) or {}
    features = dataset.get("features")
    return (str(field.get("value")), [str(k) for k in keys],
            features if isinstance(features, Mapping) else {})


def _text_field_check(failure: Failure) -> bool | None:
    found = text_field(failure)
    if found is None:
        return None
    name, keys, _ = found
    return name not in keys and failure.exc.message.strip().strip("'\"") == name


def string_columns(features: Mapping[str, Any], keys: list[str]) -> list[str]:
    """The row's columns whose feature is a string (``Value('string')``), in row order."""
    return [k for k in keys if "string" in str(features.get(k, ""))]


def _text_field_advise(failure: Failure) -> str:
    found = text_field(failure)
    if found is None:
        return ""
    name, keys, features = found
    texts = string_columns(features, keys)
    change = (f": dataset_text_field={texts[0]!r} (its only text column)" if len(texts) == 1
              else f"; set dataset_text_field to the column that holds the text "
                   f"({', '.join(texts) or 'none of them is a string column'})")
    return (f"SFTConfig(dataset_text_field={name!r}) names a column the training rows do not "
            f"have (their columns: {', '.join(keys)}){change}")


def _masked_from_the_start(symptom: SymptomReport) -> Diagnosis | None:
    """``labels-all-masked`` for a non-finite loss from the first step whose bad batch has
    every label -100 (the loss's mean over zero targets: the labels' fault, not the loss');
    ``None`` otherwise (a later step's all-ignored batch stays the symptom's)."""
    if not all_ignored(symptom.samples) or symptom.step != 1:
        return None
    return Diagnosis(category="labels-all-masked", via=symptom.kind,
                     evidence=f"{symptom.evidence}; {all_ignored_text(symptom.samples)}",
                     details=tuple(sample_lines(symptom.samples)), hint=_MASKED_HINT)


_MASKED_HINT = ("the labels mask every token (-100): mask only the prompt, e.g. "
                "labels = [-100] * len(tokenizer(prompt).input_ids) + ids[prompt_len:], or let "
                "SFTTrainer mask prompt/completion rows itself")


LLM: tuple[Category, ...] = (
    Category(
        id="lora-target-modules-not-found",
        title="LoRA target_modules name modules the model does not have (another "
              "architecture's names)",
        patterns=(r"Target modules? .* not found in the base model",),
        check=_lora_check,
        advice=_lora_advice,
        examples=("v5.txt",),
        hint="target_modules must be names of the model's own modules (print "
             "model.named_modules()): Llama/Mistral/Qwen2 call the attention projections "
             "q_proj, k_proj, v_proj, o_proj; GPT-2 c_attn",
    ),
    Category(
        id="no-trainable-parameters",
        recipes=("freeze-encoder-only", "peft-config-to-trainer", "peft-is-trainable",
                 "unfreeze-peft-adapters"),
        title="no parameter of the model requires grad: nothing can learn",
        patterns=(r"element 0 of tensors does not require grad and does not have a grad_fn",
                  r"optimizer got an empty parameter list"),
        check=_frozen,
        needs_facts=True,
        advice=_frozen_advice,
        no_recipe="which parameters should train (adapters, a head, the whole model) is the "
                  "script's choice: autofix advises",
        hint="every parameter is frozen (requires_grad=False): add trainable adapters (PEFT) "
             "or unfreeze the layers to train",
    ),
    Category(
        id="labels-all-masked",
        title="every label of the batch is -100: the loss has no target (NaN or 0 from the "
              "first step)",
        no_recipe="which tokens carry the loss is the script's masking code: autofix advises",
        hint=_MASKED_HINT,
        symptom_cause=_masked_from_the_start,
    ),
    Category(
        id="all-examples-masked",
        title="SFTTrainer dropped every example: max_length is shorter than the prompts",
        patterns=(r"num_samples should be a positive integer value, but got num_samples=0",),
        check=_dropped,
        needs_facts=True,
        advice=_dropped_advice,
        hint="max_length truncates the examples before their completion, so no token is "
             "left to train on: raise SFTConfig(max_length=...) above the longest prompt",
    ),
    Category(
        id="chat-template-missing",
        title="conversational rows with a tokenizer that has no chat template (a base model)",
        patterns=(r"Cannot use chat template functions because tokenizer\.chat_template is "
                  r"not set",),
        examples=("v5.txt",),
        no_recipe="the chat template is the format the model learns and will be prompted "
                  "with: autofix does not choose one",
        hint="the tokenizer has no chat template (a base model's): use the instruct model's "
             "tokenizer, or give SFTConfig(chat_template_path=...) a template (a .jinja file "
             "or a tokenizer that has one), or train on prompt/completion rows",
    ),
    Category(
        id="assistant-mask-unsupported-template",
        title="assistant_only_loss with a chat template that has no {% generation %} markers",
        patterns=(r"The chat template is not training-compatible",
                  r"chat template doesn't generate assistant masks"),
        examples=("v5.txt",),
        no_recipe="the template's text is the model's: autofix does not rewrite it",
        hint="assistant_only_loss needs a chat template whose assistant turns are wrapped in "
             "{% generation %}...{% endgeneration %}: add the markers to the template, or "
             "train on prompt/completion rows (completion_only_loss, TRL's default for them)",
    ),
    Category(
        id="formatting-func-batched",
        title="a batched-style formatting_func (loops over a batch, returns a list) called on "
              "one example",
        patterns=(r"string index out of range", r"string indices must be integers"),
        frame_guards=(r"trl/trainer/sft_trainer\.py:_func: ",),
        examples=("v5.txt",),
        no_recipe="rewriting the function's loop is not a mechanical edit: autofix advises",
        hint="TRL 1.x calls formatting_func on one example and wants one string back: "
             "return f\"...{example['instruction']}...{example['output']}\" instead of "
             "looping over the batch",
    ),
    Category(
        id="pad-token-is-eos",
        title="the pad token is the end-of-text token and the collator masks every "
              "end-of-text token out of the labels (the model never learns to stop)",
        advice=_pad_eos_advice,
        hint="DataCollatorForLanguageModeling sets labels to -100 wherever input_ids == "
             "pad_token_id; with pad = eos every real end-of-text token is masked: pad with a "
             "token the texts never hold (tokenizer.pad_token = tokenizer.unk_token, or add "
             "'<pad>' and resize the embeddings)",
    ),
    Category(
        id="empty-completion",
        title="every completion is empty: the only token scored is the end-of-text token",
        advice=_empty_completion_advice,
        no_recipe="what the completions should be is the data's: autofix does not build it",
        hint="the completions are empty once tokenized (SFTTrainer appends eos, the only "
             "token left to learn): put the answer in 'completion' and the question alone in "
             "'prompt'",
    ),
    Category(
        id="completion-only-loss-on-text",
        title="completion_only_loss=True on language-modeling rows (no prompt/completion): "
              "SFTTrainer scores every token",
        advice=_completion_only_advice,
        no_recipe="turning text rows into prompt/completion rows is a change of the data, and "
                  "dropping the option would not give what it asks for: autofix advises",
        hint="completion_only_loss restricts the loss to the completion of prompt-completion "
             "rows; rows with only 'text' (or 'messages') have none: give the dataset "
             "'prompt' and 'completion' columns, or use assistant_only_loss on "
             "conversational rows",
    ),
    Category(
        id="dataset-text-field-missing",
        title="SFTConfig's dataset_text_field names a column the training rows do not have",
        types=("KeyError",),
        frame_guards=(r"trl/trainer/sft_trainer\.py:tokenize_fn: ",),
        check=_text_field_check,
        needs_facts=True,
        advise=_text_field_advise,
        hint="dataset_text_field must name the dataset's text column (print "
             "dataset.column_names): SFTConfig(dataset_text_field='text') is the default",
    ),
    Category(
        id="causal-lm-without-labels",
        recipes=("lm-collator", "sft-default-collator"),
        title="a causal LM trained on batches without labels (DataCollatorWithPadding)",
        patterns=(r"did not return a loss from the inputs, only the following keys: logits",
                  r"'NoneType' object has no attribute 'backward'",
                  r"Asking to pad but the tokenizer does not have a padding token",
                  r"features \(`labels` in this case\) have excessive nesting"),
        check=_no_labels_check,
        needs_facts=True,
        advice=_no_labels_advice,
        hint="a causal LM needs labels: DataCollatorForLanguageModeling(tokenizer, mlm=False) "
             "copies input_ids to labels (SFTTrainer's own collator does it too)",
    ),
)
