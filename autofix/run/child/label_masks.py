"""Labels masked where the inputs are not padding (``labels-masked-beyond-padding``).

A causal language model learns to end its text only from end-of-text tokens it is scored
on. A mask built by token *id* (``labels[labels == pad_token_id] = -100``, transformers'
``DataCollatorForLanguageModeling``, or a hand ``-100 if t == tokenizer.pad_token_id``)
also masks every real end-of-text token when the pad token is the end-of-text token
(``tokenizer.pad_token = tokenizer.eos_token``, the usual line for GPT-2 and Llama), and
a mask by the end-of-text id itself does so whatever pads: the run trains, nothing raises,
and generation never stops (huggingface/transformers#22794, huggingface/trl#976).

Checked at the first training forward (gradients on, the model in training mode) of a
Hugging Face causal language model (``*ForCausalLM``/``*LMHeadModel``, also under PEFT)
given ``input_ids`` and ``labels`` of one shape, however the batch was built (a
``DataLoader``, ``Trainer``, slices of tensors): the end-of-text id (the model's
``config.eos_token_id``) at attended positions (``attention_mask`` 1) right after a
scored label, labelled -100, while no end-of-text token is scored anywhere in the batch.
A masked prompt is no fault (its end-of-text tokens, if any, follow no scored label), nor
is a batch that scores some end-of-text token. When the language-model preflight already
named the same cut (``pad-token-is-eos``, at ``Trainer.train()`` or a loop's first
``DataLoader`` batch), nothing more is sent.

The ``invariant`` event holds the counts and the tokens a recipe needs (pad, end-of-text,
unknown and begin-of-text ids, whether the unknown token occurs in the batch).
"""

from __future__ import annotations

import types
from typing import Any

from . import preflight_lm
from .invariants import report, user_frame, where

KIND = "labels-masked-beyond-padding"
IGNORE_INDEX = -100


class Seen:
    """Whether the first training forward was checked (reset per process)."""

    checked = False


def _first_id(value: Any) -> int | None:
    if isinstance(value, int):
        return value
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], int):
        return int(value[0])
    return None


def _tokenizer_in(frame: Any) -> Any:
    """A tokenizer bound in the user's frames (locals, then globals, innermost first):
    an object with ``eos_token_id``, ``unk_token_id`` and ``convert_tokens_to_ids``."""
    while frame is not None:
        for scope in (frame.f_locals, frame.f_globals):
            for value in list(scope.values()):
                if hasattr(value, "convert_tokens_to_ids") and hasattr(value, "eos_token_id") \
                        and not isinstance(value, type):
                    return value
        frame = frame.f_back
    return None


def cut_facts(ids: Any, labels: Any, mask: Any, eos: int) -> dict[str, int]:
    """Counts over one batch (``[rows, length]`` tensors): attended end-of-text tokens in
    ``ids`` (``eos_in_inputs``), end-of-text tokens scored in ``labels``
    (``eos_in_labels``) and attended end-of-text tokens labelled -100 right after a
    scored label (``eos_cut``)."""
    attended = mask == 1
    real = (ids == eos) & attended
    cut = real[:, 1:] & (labels[:, 1:] == IGNORE_INDEX) & (labels[:, :-1] != IGNORE_INDEX)
    return {"eos_in_inputs": int(real.sum().item()),
            "eos_in_labels": int((labels == eos).sum().item()),
            "eos_cut": int(cut.sum().item())}


def check(model: Any, kwargs: dict[str, Any]) -> None:
    """The check at the first training forward of a causal LM (module docstring)."""
    import torch

    if Seen.checked or not getattr(model, "training", False) or not torch.is_grad_enabled():
        return
    ids, labels = kwargs.get("input_ids"), kwargs.get("labels")
    if ids is None or labels is None or not preflight_lm.is_causal_lm(model):
        return
    Seen.checked = True
    if getattr(ids, "shape", None) != getattr(labels, "shape", None) or labels.dim() != 2:
        return
    config = getattr(preflight_lm.base_model(model), "config", None)
    eos = _first_id(getattr(config, "eos_token_id", None))
    if eos is None or preflight_lm.Seen.facts.get("eos_cut"):
        return
    mask = kwargs.get("attention_mask")
    mask = mask if mask is not None and mask.shape == ids.shape else torch.ones_like(ids)
    facts: dict[str, Any] = cut_facts(ids, labels, mask, eos)
    if not facts["eos_cut"] or facts["eos_in_labels"]:
        return
    pad = _first_id(getattr(config, "pad_token_id", None))
    frame = user_frame(3)
    tokenizer = _tokenizer_in(frame)
    unk = preflight_lm.Seen.facts.get("unk_token_id")
    if tokenizer is not None:
        unk = _first_id(getattr(tokenizer, "unk_token_id", None))
        pad = _first_id(getattr(tokenizer, "pad_token_id", None)) if pad is None else pad
    facts.update(eos_token_id=eos, pad_token_id=pad, unk_token_id=unk,
                 bos_token_id=_first_id(getattr(config, "bos_token_id", None)),
                 rows=int(ids.shape[0]), model_class=type(preflight_lm.base_model(model)).__name__)
    if isinstance(unk, int):
        facts["unk_in_inputs"] = int(((ids == unk) & (mask == 1)).sum().item())
    place = where(frame)
    pads = " (the pad token is the end-of-text token)" if pad == eos else ""
    report(KIND, f"the first training batch has {facts['eos_in_inputs']} real end-of-text "
                 f"tokens (id {eos}) in input_ids{pads}, {facts['eos_cut']} of them labelled "
                 "-100 right after a scored token and none scored anywhere: the labels are "
                 "masked where the inputs are not padding, so the model never learns to end "
                 "its text (generation will not stop); mask the padding positions only, with "
                 "a pad token distinct from the end-of-text token",
           place, facts)


def patch_models(module: types.ModuleType) -> None:
    """``transformers.modeling_utils``: every ``PreTrainedModel`` call is checked (only
    the first training forward of a causal LM does anything)."""
    model_cls = module.PreTrainedModel
    original = model_cls.__call__
    if getattr(original, "_autofix_masks", False):
        return

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not Seen.checked:
            try:
                check(self, kwargs)
            except Exception:  # noqa: BLE001 - the probe must never break the script
                Seen.checked = True
        return original(self, *args, **kwargs)

    __call__._autofix_masks = True  # type: ignore[attr-defined]
    model_cls.__call__ = __call__
