"""Preflight checks for language models, before the first optimizer step.

Runs inside the child (standard library only at import; ``torch`` is the child's own). A
causal language model (a ``*ForCausalLM`` / ``*LMHeadModel``, also inside a PEFT wrapper)
trained by ``Trainer``, TRL's ``SFTTrainer`` or a hand-written loop is checked on the real
objects, at ``Trainer.train()`` and at the first iteration of a hand loop's ``DataLoader``:

1. ``lm-trainable``: the number of parameters that require grad is above zero. With none,
   nothing can learn: with gradient checkpointing on (``SFTConfig``'s default) the run even
   trains, with a grad norm of 0 and a flat loss, and without it ``backward`` raises
   "element 0 of tensors does not require grad". A PEFT model's adapter in inference mode
   (``PeftModel.from_pretrained`` without ``is_trainable=True``) is named.
2. ``lm-labels``: one batch through the loader's own collator has ``labels``, and at least
   one row has a label that is scored (not -100 after the causal shift: the label at
   position 0 is never predicted). Every row masked is the fault ``labels-all-masked``
   (the loss is NaN or 0 from the first step: a mean over no targets); some rows masked
   is a finding (they add nothing to the loss). A batch without ``labels`` is left to the
   run: the model raises its own "did not return a loss" (``causal-lm-without-labels``).
3. ``lm-pad-eos``: the pad token equals the end-of-text token, the batch holds real
   (attended) end-of-text tokens right after a scored label, and none of them is in the
   labels: a collator that masks labels by pad *id* (transformers'
   ``DataCollatorForLanguageModeling``: ``labels[labels == pad_token_id] = -100``) cut
   them out of scored text, so the model never learns to end its text and generation does
   not stop (``pad-token-is-eos``; the run trains, nothing raises). TRL's own collator pads
   the labels by position and keeps the end-of-text token, so SFTTrainer's fallback (pad =
   eos when the tokenizer has none) is not this fault; nor is an end-of-text token inside a
   masked prompt. The tokenizer's unknown token (its id, and how often the batch holds it)
   is measured too: a pad token the texts never hold is the fix.
4. ``lm-empty-completion``: every row of the batch scores only the end-of-text token (the
   completions are empty once tokenized: TRL appends eos to an empty completion), so the
   model learns to stop and nothing else (``empty-completion``).
5. ``lm-completion-only``: ``SFTConfig(completion_only_loss=True)`` while the training
   rows TRL prepared have no ``prompt``/``completion`` columns (language-modeling rows:
   ``text`` or ``messages``): TRL then computes the loss on every token without a word
   (``completion-only-loss-on-text``).

What was measured is sent as one ``lm_facts`` event (the model's trainable and total
parameter counts, its attention projections' names, the batch's label facts), which the
recipes read (``RecipeContext.facts["lm"]``). A fault is a ``preflight_fault`` event; the
caller then ends the run before its first step (``AutofixStop``), as the Keras loss check
does.

At ``SFTTrainer``'s dataset preparation (``_prepare_dataset``, TRL 1.x) the columns of each
split it is given are recorded (``sft_input``: the columns, and for prompt-completion rows
how many of the first :data:`REMEASURE_ROWS` completions are empty); when the prepared
split has fewer rows than it was given with ``max_length`` set (TRL drops the examples that
truncation left without a completion token), the same rows are prepared again, at most
:data:`REMEASURE_ROWS` of them, with ``max_length`` off, and the longest tokenized example
and prompt are reported (``dropped`` in ``lm_facts``): the length the fix needs, measured
by TRL's own preparation.
"""

from __future__ import annotations

import types
from typing import Any

from .batches import loader_batch, same_randomness
from .contract import Event
from .events import emit
from .facts import module_names

#: Rows prepared again to measure the untruncated lengths (a bound on the extra cost).
REMEASURE_ROWS = 256
#: The ignore index of transformers' losses.
IGNORE_INDEX = -100
#: TRL trainers whose batches are language-model batches (``input_ids`` + ``labels``);
#: the preference and RL trainers build other batches and are not checked.
LM_TRAINERS = ("SFTTrainer",)


class Seen:
    """What the checks measured in this run (reset per process)."""

    facts: dict[str, Any] = {}
    checked_loop = False


def base_model(model: Any) -> Any:
    """The model inside a PEFT wrapper (``get_base_model``), else ``model``."""
    getter = getattr(model, "get_base_model", None)
    if callable(getter):
        try:
            return getter()
        except Exception:  # noqa: BLE001 - not a PEFT model after all
            return model
    return model


def is_causal_lm(model: Any) -> bool:
    """A Hugging Face causal language model (class ``*ForCausalLM`` or ``*LMHeadModel``),
    also inside a PEFT wrapper."""
    name = type(base_model(model)).__name__
    return name.endswith("ForCausalLM") or name.endswith("LMHeadModel")


def lm_trainer(trainer: Any) -> bool:
    """``Trainer`` or ``SFTTrainer`` (or a subclass of theirs): no other TRL trainer."""
    trl = [c.__name__ for c in type(trainer).__mro__ if c.__module__.startswith("trl.")]
    return all(name in LM_TRAINERS or name.startswith("_") for name in trl)


def peft_state(model: Any) -> dict[str, Any]:
    """A PEFT model's active adapter and whether it is in inference mode (``{}`` for a
    model without ``peft_config``)."""
    configs = getattr(model, "peft_config", None)
    if not isinstance(configs, dict) or not configs:
        return {}
    active = getattr(model, "active_adapter", None)
    name = active if isinstance(active, str) and active in configs else next(iter(configs))
    return {"peft_adapter": name,
            "peft_inference_mode": bool(getattr(configs[name], "inference_mode", False))}


def _tokens(tokenizer: Any, model: Any) -> tuple[int | None, int | None]:
    """(pad id, eos id) from the tokenizer, else the model's config."""
    config = getattr(base_model(model), "config", None)
    pad = getattr(tokenizer, "pad_token_id", None)
    eos = getattr(tokenizer, "eos_token_id", None)
    if pad is None:
        pad = getattr(config, "pad_token_id", None)
    if eos is None:
        eos = getattr(config, "eos_token_id", None)
    return (pad if isinstance(pad, int) else None, eos if isinstance(eos, int) else None)


def _token_id(tokenizer: Any, name: str) -> int | None:
    """The tokenizer's ``<name>_token_id`` (``unk``, ``bos``), ``None`` when it has none."""
    value = getattr(tokenizer, f"{name}_token_id", None)
    return value if isinstance(value, int) else None


def batch_facts(batch: Any, pad: int | None, eos: int | None,
                unk: int | None = None) -> dict[str, Any]:
    """Label facts of one collated batch (a mapping of tensors ``input_ids``, ``labels``,
    ``attention_mask``, each ``[rows, length]``): its keys, rows, the rows without a scored
    label (every label after the first -100), the rows whose only scored labels are the
    end-of-text id ``eos`` (``rows_only_eos``), the attended ``unk`` tokens of ``input_ids``;
    and, when the pad id equals the end-of-text id, the attended end-of-text tokens of
    ``input_ids``, those kept in ``labels`` and those masked right after a scored label
    (``eos_cut``: masked by id inside scored text, not by a prompt mask)."""
    keys = [str(k) for k in getattr(batch, "keys", lambda: [])()]
    out: dict[str, Any] = {"batch_keys": keys}
    labels = batch["labels"] if "labels" in keys else None
    ids = batch["input_ids"] if "input_ids" in keys else None
    if labels is None or getattr(labels, "dim", lambda: 0)() != 2:
        return out
    scored = labels[:, 1:] != IGNORE_INDEX
    out["batch_rows"] = int(labels.shape[0])
    out["scored_labels"] = int(scored.sum().item())
    out["rows_without_targets"] = int((~scored.any(dim=1)).sum().item())
    if eos is not None:
        not_eos = scored & (labels[:, 1:] != eos)
        out["rows_only_eos"] = int((scored.any(dim=1) & ~not_eos.any(dim=1)).sum().item())
    if ids is None or ids.shape != labels.shape:
        return out
    mask = batch["attention_mask"] if "attention_mask" in keys else ids.new_ones(ids.shape)
    attended = mask == 1
    if unk is not None:
        out["unk_in_inputs"] = int(((ids == unk) & attended).sum().item())
    if pad is not None and pad == eos:
        real = (ids == eos) & attended
        out["eos_in_inputs"] = int(real.sum().item())
        out["eos_in_labels"] = int((labels == eos).sum().item())
        after_scored = real[:, 1:] & (labels[:, 1:] == IGNORE_INDEX) & \
            (labels[:, :-1] != IGNORE_INDEX)
        out["eos_cut"] = int(after_scored.sum().item())
    return out


def _fault(check: str, category: str, evidence: str) -> dict[str, str]:
    emit(Event.PREFLIGHT_FAULT, check=check, category=category, evidence=evidence)
    return {"check": check, "category": category}


def _judge(model: Any, facts: dict[str, Any], collator: Any) -> list[dict[str, str]]:
    """Emit the facts, the faults and the findings they show; returns the faults."""
    faults = []
    total, trainable = facts.get("params_total"), facts.get("params_trainable")
    if isinstance(total, int) and total and trainable == 0:
        peft = ""
        if facts.get("peft_inference_mode"):
            peft = (f"; the PEFT adapter '{facts.get('peft_adapter')}' is in inference mode "
                    "(PeftModel.from_pretrained loads it frozen unless is_trainable=True)")
        elif facts.get("peft_adapter"):
            peft = "; the PEFT model's adapter weights were frozen too"
        faults.append(_fault("lm-trainable", "no-trainable-parameters",
                             f"0 of the model's {total:,} parameters require grad{peft}: "
                             "nothing can learn (the loss stays flat, the gradient norm is 0)"))
    rows, empty = facts.get("batch_rows"), facts.get("rows_without_targets")
    if isinstance(rows, int) and rows and empty == rows:
        faults.append(_fault("lm-labels", "labels-all-masked",
                             f"every label of the first batch is -100 ({rows} rows, no token "
                             "scored after the causal shift): the loss is a mean over zero "
                             "targets (NaN, or 0), nothing is learned"))
    elif isinstance(rows, int) and isinstance(empty, int) and empty:
        emit(Event.FINDING, kind="rows-without-targets", step=0,
             evidence=f"{empty} of the {rows} rows of the first batch have no scored label "
                      "(every label -100 after the causal shift): they add nothing to the "
                      "loss (prompts longer than the sequence length, or a mask that covers "
                      "the answer)")
    if faults:
        return faults
    if facts.get("eos_cut") and facts.get("eos_in_labels") == 0:
        faults.append(_fault(
            "lm-pad-eos", "pad-token-is-eos",
            f"the pad token is the end-of-text token (id {facts.get('eos_token_id')}) and "
            f"{type(collator).__name__} masks the labels by pad id: the first batch has "
            f"{facts['eos_in_inputs']} real end-of-text tokens in input_ids and 0 in labels, "
            "so the model never learns to end its text (generation will not stop)"))
    if isinstance(rows, int) and rows and facts.get("rows_only_eos") == rows:
        faults.append(_fault(
            "lm-empty-completion", "empty-completion",
            f"every row of the first batch ({rows}) scores only the end-of-text token: the "
            "completions are empty, so the model learns to stop and nothing else"))
    return faults


def _measure(model: Any, batch: Any, tokenizer: Any, collator: Any,
             where: str) -> dict[str, Any]:
    params = list(model.parameters())
    facts: dict[str, Any] = {
        "where": where, "model_class": type(base_model(model)).__name__,
        "collator": type(collator).__name__ if collator is not None else "",
        "params_total": sum(p.numel() for p in params),
        "params_trainable": sum(p.numel() for p in params if p.requires_grad),
        **peft_state(model), **module_names(model)}
    positions = getattr(getattr(base_model(model), "config", None), "max_position_embeddings",
                        None)
    if isinstance(positions, int):
        facts["max_position_embeddings"] = positions
    pad, eos = _tokens(tokenizer, model)
    unk = _token_id(tokenizer, "unk")
    facts.update({"pad_token_id": pad, "eos_token_id": eos, "unk_token_id": unk,
                  "bos_token_id": _token_id(tokenizer, "bos")})
    if batch is not None:
        facts.update(batch_facts(batch, pad, eos, unk))
    return facts


def _emit(facts: dict[str, Any]) -> None:
    Seen.facts.update(facts)
    emit(Event.LM_FACTS, **facts)


def trainer_checks(trainer: Any) -> list[dict[str, str]]:
    """The checks at ``Trainer.train()`` (module docstring); returns the faults found
    (each emitted as a ``preflight_fault``). Nothing for a model that is not a causal LM,
    a TRL trainer other than ``SFTTrainer``, or a batch that cannot be collated (the other
    preflight checks report that)."""
    model = getattr(trainer, "model", None)
    if model is None or not is_causal_lm(model) or not lm_trainer(trainer):
        return []
    batch = None
    with same_randomness():
        try:
            batch = next(iter(trainer.get_train_dataloader()))
        except Exception:  # noqa: BLE001 - the collate check reports it
            batch = None
    collator = getattr(trainer, "data_collator", None)
    tokenizer = getattr(trainer, "processing_class", None) or getattr(collator, "tokenizer",
                                                                       None)
    facts = _measure(model, batch, tokenizer, collator, type(trainer).__name__)
    facts.update(_completion_only(trainer))
    _emit(facts)
    faults = _judge(model, facts, collator)
    if not faults and facts.get("completion_only_on_text"):
        columns = ", ".join(facts["completion_only_on_text"])
        faults.append(_fault(
            "lm-completion-only", "completion-only-loss-on-text",
            f"completion_only_loss=True, but the training rows are language-modeling rows "
            f"(columns: {columns}; no prompt and completion): SFTTrainer computes the loss "
            "on every token"))
    return faults


def _completion_only(trainer: Any) -> dict[str, Any]:
    """``{"completion_only_on_text": [columns]}`` when the trainer's config asks for
    ``completion_only_loss=True`` and the training split TRL prepared had no ``prompt`` and
    ``completion`` columns (``sft_input``, recorded by :func:`patch_sft`), else ``{}``."""
    if getattr(getattr(trainer, "args", None), "completion_only_loss", None) is not True:
        return {}
    train = (Seen.facts.get("sft_input") or {}).get("train")
    columns = train.get("columns") if isinstance(train, dict) else None
    if not isinstance(columns, list) or {"prompt", "completion"} <= set(columns) or \
            "labels" in columns:
        return {}
    return {"completion_only_on_text": columns}


def loop_checks(loader: Any, model: Any) -> list[dict[str, str]]:
    """The checks at a hand loop's first batch (once per run), on ``model`` (the one model
    the loop trains) and one batch of ``loader`` through its ``collate_fn``."""
    if Seen.checked_loop or model is None or not is_causal_lm(model):
        return []
    Seen.checked_loop = True
    with same_randomness():
        try:
            batch = loader_batch(loader)
        except Exception:  # noqa: BLE001 - the loader-collate check reports it
            batch = None
    collator = getattr(loader, "collate_fn", None)
    facts = _measure(model, batch, getattr(collator, "tokenizer", None), collator, "loop")
    _emit(facts)
    return _judge(model, facts, collator)


# --- TRL's dataset preparation --------------------------------------------------------


def _lengths(dataset: Any) -> tuple[int, int]:
    """(longest ``input_ids``, longest prompt: the tokens before the first scored label)
    over ``dataset``'s rows."""
    longest = prompt = 0
    for row in dataset:
        ids = row.get("input_ids") or []
        labels = row.get("labels") or []
        longest = max(longest, len(ids))
        first = next((i for i, v in enumerate(labels) if v != IGNORE_INDEX), len(labels))
        prompt = max(prompt, first)
    return longest, prompt


def _empty(value: Any) -> bool:
    """An empty completion: ``""``, or a conversational one whose messages say nothing."""
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list):
        return all(isinstance(m, dict) and not str(m.get("content") or "").strip()
                   for m in value)
    return False


def _record_input(dataset: Any, name: str) -> None:
    """Record ``sft_input[name]``: the columns of a split given to ``SFTTrainer`` and, for
    prompt-completion rows, how many of the first :data:`REMEASURE_ROWS` completions are
    empty (:func:`_empty`)."""
    columns = [str(c) for c in getattr(dataset, "column_names", None) or []]
    entry: dict[str, Any] = {"columns": columns}
    if "completion" in columns and hasattr(dataset, "select"):
        rows = min(len(dataset), REMEASURE_ROWS)
        completions = dataset.select(range(rows))["completion"]
        entry["checked_rows"] = rows
        entry["empty_completions"] = sum(1 for c in completions if _empty(c))
    inputs = dict(Seen.facts.get("sft_input") or {})
    inputs[name] = entry
    _emit({"sft_input": inputs})


def patch_sft(module: types.ModuleType) -> None:
    """Wrap ``SFTTrainer._prepare_dataset`` of TRL's ``module`` (module docstring, last
    paragraph); :func:`preflight.patch_sft` calls it when the preflight is on."""
    trainer_cls = getattr(module, "SFTTrainer", None)
    original = getattr(trainer_cls, "_prepare_dataset", None)
    if original is None or getattr(original, "_autofix", False):
        return

    def _prepare_dataset(self: Any, dataset: Any, processing_class: Any, args: Any,
                         *rest: Any, **kwargs: Any) -> Any:
        name = kwargs.get("dataset_name", rest[-1] if rest else "train")
        try:
            _record_input(dataset, str(name))
        except Exception:  # noqa: BLE001 - a dataset without columns: nothing recorded
            pass
        prepared = original(self, dataset, processing_class, args, *rest, **kwargs)
        try:
            before, after = len(dataset), len(prepared)
            limit = getattr(args, "max_length", None)
        except Exception:  # noqa: BLE001 - an iterable dataset: nothing to count
            return prepared
        if not isinstance(limit, int) or after >= before:
            return prepared
        dropped: dict[str, Any] = {"rows_in": before, "rows_out": after, "max_length": limit}
        try:
            sample = dataset.select(range(min(before, REMEASURE_ROWS)))
            args.max_length = None
            try:
                full = original(self, sample, processing_class, args, *rest, **kwargs)
            finally:
                args.max_length = limit
            dropped["longest"], dropped["longest_prompt"] = _lengths(full)
            dropped["measured_rows"] = len(sample)
        except Exception as exc:  # noqa: BLE001 - the counts alone are still facts
            dropped["measure_error"] = repr(exc)[:200]
        _emit({"dropped": dropped})
        return prepared

    _prepare_dataset._autofix = True  # type: ignore[attr-defined]
    trainer_cls._prepare_dataset = _prepare_dataset  # type: ignore[union-attr]
