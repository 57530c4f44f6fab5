"""A custom head on a pretrained-style encoder, sized for another encoder: the encoder is a
2-layer BERT of hidden size 32 built from a config, the head expects 64 features
(``mat1 and mat2 shapes cannot be multiplied (8x32 and 64x3)``)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from transformers import BertConfig, BertModel

torch.manual_seed(0)
VOCAB = 60


class TinyClassifier(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        config = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                            num_attention_heads=2, intermediate_size=64)
        self.encoder = BertModel(config)
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(64, num_classes)

    def forward(self, input_ids):
        hidden = self.encoder(input_ids=input_ids).last_hidden_state
        return self.head(self.dropout(hidden[:, 0]))


ids = torch.randint(3, VOCAB, (160, 12))
labels = ids[:, 1] % 3
ids[:, 0] = 2  # a [CLS]-like first token
loader = DataLoader(TensorDataset(ids, labels), batch_size=8, shuffle=True)

model = TinyClassifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(2):
    model.train()
    for step, (batch_ids, batch_labels) in enumerate(loader):
        loss = loss_fn(model(batch_ids), batch_labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 5 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
