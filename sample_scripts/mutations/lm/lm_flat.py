"""A causal language model fine-tuned at module level (a notebook-like script) on
question/answer texts: the tiny Llama of scripts/make_tiny_llm.py ($AUTOFIX_TINY_LLM_BASE),
each text ended with the end-of-text token so the model learns to stop, padded by
DataCollatorForLanguageModeling(mlm=False), which masks the padding in the labels. The
tokenizer has no pad token: it pads with its unknown token, which the texts never hold.

Prints ``val stop acc X``: the share of held-out texts after which the model's most likely
next token is end-of-text. 36 optimizer steps, a few seconds.
"""
import json
import os
import sys
import tempfile
from pathlib import Path

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"
torch.manual_seed(0)

if os.environ.get("AUTOFIX_TINY_LLM_BASE"):
    checkpoint = os.environ["AUTOFIX_TINY_LLM_BASE"]
else:  # built by the repository's scripts/make_tiny_llm.py
    sys.path.insert(0, str(next(p / "scripts" for p in HERE.parents
                                if (p / "scripts/make_tiny_llm.py").is_file())))
    from make_tiny_llm import build

    checkpoint = str(build(tempfile.mkdtemp(), chat_template=False))

with open(DATA / "instructions.jsonl") as f:
    texts = [json.loads(line)["text"] for line in f]
train_texts, val_texts = texts[:180], texts[180:]

tokenizer = AutoTokenizer.from_pretrained(checkpoint)
tokenizer.pad_token = tokenizer.unk_token
model = AutoModelForCausalLM.from_pretrained(checkpoint)
features = [tokenizer(text + tokenizer.eos_token, truncation=True, max_length=64)
            for text in train_texts]
loader = DataLoader(features, batch_size=16, shuffle=True,
                    collate_fn=DataCollatorForLanguageModeling(tokenizer, mlm=False))
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)

model.train()
for epoch in range(3):
    for batch in loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    print(f"epoch {epoch} loss {loss.item():.4f}")

model.eval()
stops = 0
with torch.no_grad():
    for text in val_texts:
        ids = tokenizer(text, return_tensors="pt")["input_ids"]
        stops += int(model(input_ids=ids).logits[0, -1].argmax()) == tokenizer.eos_token_id
print(f"val stop acc {stops / len(val_texts):.3f}")
