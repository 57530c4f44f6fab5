"""A causal language model fine-tuned by a hand-written loop in helper functions on
question/answer texts: the tiny Llama of scripts/make_tiny_llm.py ($AUTOFIX_TINY_LLM_BASE),
each text ended with the end-of-text token so the model learns to stop, batched by
DataCollatorForLanguageModeling(mlm=False), which masks the padding in the labels. The
tokenizer has no pad token: it pads with its unknown token, which the texts never hold.

Prints ``val stop acc X``: the share of held-out texts after which the model's most likely
next token is end-of-text. 36 optimizer steps, a few seconds.
"""
import os
import sys
import tempfile
from pathlib import Path

import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"


def tiny_llm():
    """The tiny Llama's folder: $AUTOFIX_TINY_LLM_BASE, else built by scripts/make_tiny_llm.py."""
    if os.environ.get("AUTOFIX_TINY_LLM_BASE"):
        return os.environ["AUTOFIX_TINY_LLM_BASE"]
    maker = next(p / "scripts" for p in HERE.parents if (p / "scripts/make_tiny_llm.py").is_file())
    sys.path.insert(0, str(maker))
    from make_tiny_llm import build

    return str(build(tempfile.mkdtemp(), chat_template=False))


def load_tokenizer(checkpoint):
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    tokenizer.pad_token = tokenizer.unk_token
    return tokenizer


def make_loader(tokenizer, split):
    def tokenize(batch):
        return tokenizer([text + tokenizer.eos_token for text in batch["text"]],
                         truncation=True, max_length=64)

    tokenized = split.map(tokenize, batched=True, remove_columns=split.column_names)
    return DataLoader(tokenized, batch_size=16, shuffle=True,
                      collate_fn=DataCollatorForLanguageModeling(tokenizer, mlm=False))


def train_epoch(model, loader, optimizer):
    model.train()
    for batch in loader:
        optimizer.zero_grad()
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
    return loss.item()


def stop_accuracy(model, tokenizer, texts):
    model.eval()
    stops = 0
    with torch.no_grad():
        for text in texts:
            ids = tokenizer(text, return_tensors="pt")["input_ids"]
            stops += int(model(input_ids=ids).logits[0, -1].argmax()) == tokenizer.eos_token_id
    return stops / len(texts)


def main():
    torch.manual_seed(0)
    splits = load_dataset("json", data_files=str(DATA / "instructions.jsonl"),
                          split="train").train_test_split(test_size=20, seed=0)
    checkpoint = tiny_llm()
    tokenizer = load_tokenizer(checkpoint)
    model = AutoModelForCausalLM.from_pretrained(checkpoint)
    loader = make_loader(tokenizer, splits["train"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
    for epoch in range(3):
        print(f"epoch {epoch} loss {train_epoch(model, loader, optimizer):.4f}")
    print(f"val stop acc {stop_accuracy(model, tokenizer, splits['test']['text']):.3f}")


if __name__ == "__main__":
    main()
