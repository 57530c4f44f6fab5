"""Build a tiny Llama-style causal LM and its fast tokenizer, offline, in seconds.

    python scripts/make_tiny_llm.py OUT_DIR [--no-chat-template] [--pad] [--pretrain-steps N]

or, from Python (tests build it once into a cache folder):

    from make_tiny_llm import build
    path = build(out_dir, chat_template=True, pad=False)   # -> Path(out_dir)

What is written to OUT_DIR is what ``AutoModelForCausalLM.from_pretrained(OUT_DIR)`` and
``AutoTokenizer.from_pretrained(OUT_DIR)`` load:

- the model: ``LlamaForCausalLM`` with 2 layers, hidden size 64, 4 heads, intermediate
  size 128, tied embeddings, ``max_position_embeddings`` 256, about 142k parameters,
  initialised from a fixed seed and then "pretrained" for 60 steps (a few seconds, one
  thread) on the repository's sentences, each string a document of its own, so that it
  behaves as a small base model: it knows the words (loss well under ln V) but not which
  answer follows which question. ``--pretrain-steps 0`` keeps the random weights (a model
  to train from scratch; LoRA on it cannot learn: frozen random embeddings bound the
  logits). Its modules are named as in real Llama checkpoints
  (``q_proj``, ``k_proj``, ``v_proj``, ``o_proj``, ``gate_proj``, ``up_proj``,
  ``down_proj``, ``embed_tokens``, ``lm_head``), so LoRA ``target_modules`` behave as on
  a real one;
- the tokenizer: byte-level BPE (vocabulary ~1000) trained on this repository's own text
  (``sample_scripts/data/*.jsonl`` and ``sample_scripts/llm/data/*.jsonl``), with
  ``<unk>`` (0), ``<s>`` (1, added at the start of every encoding as Llama does) and
  ``</s>`` (2), ``model_max_length`` 256, and a Zephyr-like chat template
  (``<|user|>\\n...</s>\\n<|assistant|>\\n...</s>\\n``) unless ``--no-chat-template``.

Like real Llama / Mistral base tokenizers it has NO pad token by default; ``--pad`` adds a
distinct ``<pad>`` token (id = the last one), as many fine-tuned checkpoints do.
``--no-pad`` is accepted and is the default.

Deterministic: the same flags give byte-identical files. Needs only the standard library,
``tokenizers`` and ``transformers`` (with torch).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS_GLOBS = ("sample_scripts/data/*.jsonl", "sample_scripts/llm/data/*.jsonl")

VOCAB_SIZE = 1000
MAX_POSITIONS = 256
UNK, BOS, EOS, PAD = "<unk>", "<s>", "</s>", "<pad>"
SEED = 0
#: The "pretraining": steps of batches of 16 blocks of 64 tokens (see pretraining_texts).
PRETRAIN_STEPS, PRETRAIN_BATCH, PRETRAIN_BLOCK, PRETRAIN_LR = 60, 16, 64, 1e-2

#: A Zephyr-like chat template: role headers as plain text, each turn closed by eos.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}"
    "{{ '<|system|>\n' + message['content'] + eos_token + '\n' }}"
    "{% elif message['role'] == 'user' %}{{ '<|user|>\n' + message['content'] + eos_token + '\n' }}"
    "{% elif message['role'] == 'assistant' %}"
    "{{ '<|assistant|>\n' + message['content'] + eos_token + '\n' }}"
    "{% else %}{{ raise_exception('Unknown role: ' + message['role']) }}"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)


def _strings(value: object) -> Iterator[str]:
    """Every string inside a JSON value, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def corpus_texts() -> list[str]:
    """The repository's own text, in a fixed order, plus chat-formatted turns (so the
    template's role headers become a few tokens)."""
    texts: list[str] = []
    for pattern in CORPUS_GLOBS:
        for path in sorted(REPO.glob(pattern)):
            with path.open(encoding="utf-8") as f:
                for line in f:
                    line = line.strip()
                    if not line:
                        continue
                    row = json.loads(line)
                    texts.extend(_strings(row))
                    for message in row.get("messages", []) if isinstance(row, dict) else []:
                        texts.append(f"<|{message['role']}|>\n{message['content']}{EOS}\n")
    if not texts:  # outside the repository: still build something usable
        texts = ["Question: What is 1 + 2?\nAnswer: 3",
                 "<|user|>\nhello</s>\n<|assistant|>\nhi</s>\n"]
    return texts


def build_tokenizer(chat_template: bool = True, pad: bool = False):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE(unk_token=UNK))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE, min_frequency=2, special_tokens=[UNK, BOS, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    core.train_from_iterator(corpus_texts(), trainer=trainer)
    bos_id = core.token_to_id(BOS)
    # Llama adds bos (not eos) at the start of every encoding.
    core.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B", special_tokens=[(BOS, bos_id)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token=BOS, eos_token=EOS, unk_token=UNK,
        model_max_length=MAX_POSITIONS, padding_side="right", clean_up_tokenization_spaces=False)
    if pad:
        tokenizer.add_special_tokens({"pad_token": PAD})
    if chat_template:
        tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_model(tokenizer):
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
        max_position_embeddings=MAX_POSITIONS, tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, dtype="float32")
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id)
    return model


def pretraining_texts() -> list[str]:
    """Documents for the short pretraining: the NLI set's sentences, and every string of the
    LLM sets as a document of its own (a question, an answer, a chat turn's content), so
    the base model knows all the words but not which answer follows which question."""
    texts: list[str] = []
    for pattern in CORPUS_GLOBS:
        for path in sorted(REPO.glob(pattern)):
            with path.open(encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        row = json.loads(line)
                        row.pop("text", None)  # prompt + completion in one: the task itself
                        texts.extend(t for t in _strings(row) if t.strip())
    return texts or ["The quick brown fox jumps over the lazy dog."]


def pretrain(model, tokenizer, steps: int) -> None:
    """A few seconds of causal-LM training on :func:`pretraining_texts`, single-threaded
    with a fixed seed (deterministic), so that the model is a "base model": it has learned
    the words (its loss is well under ln V) but none of the tasks."""
    import torch

    ids: list[int] = []
    for text in pretraining_texts():
        ids.extend(tokenizer(text).input_ids + [tokenizer.eos_token_id])
    usable = len(ids) // PRETRAIN_BLOCK * PRETRAIN_BLOCK
    blocks = torch.tensor(ids[:usable]).view(-1, PRETRAIN_BLOCK)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        generator = torch.Generator().manual_seed(SEED)
        optimizer = torch.optim.AdamW(model.parameters(), lr=PRETRAIN_LR)
        model.train()
        for _ in range(steps):
            batch = blocks[torch.randint(len(blocks), (PRETRAIN_BATCH,), generator=generator)]
            model(input_ids=batch, labels=batch).loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        model.eval()
    finally:
        torch.set_num_threads(threads)


def build(out_dir: str | Path, chat_template: bool = True, pad: bool = False,
          pretrain_steps: int = PRETRAIN_STEPS) -> Path:
    """Build the tiny model and tokenizer into ``out_dir`` (created if needed); returns it.
    ``pretrain_steps=0``: random weights (a model to train from scratch)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(chat_template=chat_template, pad=pad)
    model = build_model(tokenizer)
    if pretrain_steps:
        pretrain(model, tokenizer, pretrain_steps)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    # transformers 5 writes "TokenizersBackend", which transformers 4 cannot load; the
    # class both load tokenizer.json with is PreTrainedTokenizerFast.
    config_path = out / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--no-chat-template", action="store_true",
                        help="leave the tokenizer without a chat template (a base model)")
    pad = parser.add_mutually_exclusive_group()
    pad.add_argument("--pad", dest="pad", action="store_true",
                     help="add a distinct <pad> token (default: none, as real Llama tokenizers)")
    pad.add_argument("--no-pad", dest="pad", action="store_false", help="no pad token (default)")
    parser.set_defaults(pad=False)
    parser.add_argument("--pretrain-steps", type=int, default=PRETRAIN_STEPS,
                        help=f"steps of generic pretraining (default {PRETRAIN_STEPS}; "
                             "0: random weights)")
    args = parser.parse_args(argv)
    out = build(args.out_dir, chat_template=not args.no_chat_template, pad=args.pad,
                pretrain_steps=args.pretrain_steps)
    print(out)


if __name__ == "__main__":
    main()
