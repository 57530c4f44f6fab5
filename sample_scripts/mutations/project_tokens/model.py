"""The model: the MiniLM-L6 encoder (hidden size 384), fine-tuned, mean-pooled, under a
linear head with dropout."""
from torch import nn
from transformers import AutoModel


class EncoderClassifier(nn.Module):
    def __init__(self, checkpoint, num_labels):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(checkpoint)
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(384, num_labels)

    def forward(self, input_ids, attention_mask):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).float()
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        return self.classifier(self.dropout(pooled))
