"""A causal language model fine-tuned by a hand loop that slices its own batches (no
DataLoader): the tokenizer pads with its end-of-text token and the labels are masked by
the pad id, so every real end-of-text label is masked too and the model never learns to
stop (nothing raises). The tiny Llama of scripts/make_tiny_llm.py ($AUTOFIX_TINY_LLM).
Prints ``stop acc X``: the share of texts after which end-of-text is the most likely next
token. 30 optimizer steps, a few seconds."""
import os

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

torch.manual_seed(0)
path = os.environ["AUTOFIX_TINY_LLM"]
tokenizer = AutoTokenizer.from_pretrained(path)
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained(path)
texts = [f"question {i % 7} answer {'yes' if i % 2 else 'no'} " * (1 + i % 3)
         for i in range(96)]
batch = tokenizer([t + tokenizer.eos_token for t in texts], padding=True,
                  return_tensors="pt")
labels = batch["input_ids"].clone()
labels[labels == tokenizer.pad_token_id] = -100
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
model.train()
for _epoch in range(10):
    for i in range(0, len(texts), 32):
        optimizer.zero_grad()
        out = model(input_ids=batch["input_ids"][i:i + 32],
                    attention_mask=batch["attention_mask"][i:i + 32],
                    labels=labels[i:i + 32])
        out.loss.backward()
        optimizer.step()
model.eval()
ends = (batch["attention_mask"].sum(1) - 1).tolist()
with torch.no_grad():
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
stops = [logits[r, e - 1].argmax().item() == tokenizer.eos_token_id for r, e in enumerate(ends)]
print(f"stop acc {sum(stops) / len(stops):.3f}")
