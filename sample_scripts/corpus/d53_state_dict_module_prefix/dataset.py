import torch
from transformers import AutoTokenizer

import config

TOKENIZER = AutoTokenizer.from_pretrained(config.BERT_PATH)


class NLIDataset:
    def __init__(self, premises, hypotheses, targets):
        self.premises = premises
        self.hypotheses = hypotheses
        self.targets = targets

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        enc = TOKENIZER(self.premises[i], self.hypotheses[i], padding="max_length",
                        truncation=True, max_length=config.MAX_LEN)
        return {
            "ids": torch.tensor(enc["input_ids"], dtype=torch.long),
            "mask": torch.tensor(enc["attention_mask"], dtype=torch.long),
            "token_type_ids": torch.tensor(enc["token_type_ids"], dtype=torch.long),
            "targets": torch.tensor(self.targets[i], dtype=torch.long),
        }
