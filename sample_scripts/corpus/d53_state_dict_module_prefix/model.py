from torch import nn
from transformers import AutoModel

import config


class BERTBaseUncased(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = AutoModel.from_pretrained(config.BERT_PATH)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(self.bert.config.hidden_size, 3)

    def forward(self, ids, mask, token_type_ids):
        pooled = self.bert(ids, attention_mask=mask, token_type_ids=token_type_ids).pooler_output
        return self.out(self.drop(pooled))
