"""The model: the frozen MiniLM-L6 encoder (hidden size 384), mean-pooled, under a small
trainable head with batch norm and dropout."""
import torch
from torch import nn
from transformers import AutoModel


class IntentModel(nn.Module):
    def __init__(self, checkpoint, num_labels, hidden=128):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(checkpoint)
        for p in self.encoder.parameters():
            p.requires_grad = False
        self.head = nn.Sequential(nn.Linear(384, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                                  nn.Dropout(0.1), nn.Linear(hidden, num_labels))

    def forward(self, input_ids, attention_mask):
        with torch.no_grad():
            hidden = self.encoder(input_ids=input_ids,
                                  attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).float()
            pooled = (hidden * mask).sum(1) / mask.sum(1)
        return self.head(pooled)
