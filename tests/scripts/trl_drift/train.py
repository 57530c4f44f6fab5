"""TRL fine-tuning written for TRL 0.x, on the tiny Llama of scripts/make_tiny_llm.py (the
folder named by $AUTOFIX_TINY_LLM): SFTTrainer given ``max_seq_length=`` and
``dataset_text_field=`` (SFTConfig fields since TRL 0.12, ``max_seq_length`` renamed
``max_length``), then DPOTrainer given plain ``TrainingArguments`` (it reads DPOConfig's
fields)."""
import os
import tempfile

from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainingArguments
from trl import DPOTrainer, SFTConfig, SFTTrainer

checkpoint = os.environ["AUTOFIX_TINY_LLM"]
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
sums = [(i % 9, (i * 7) % 11) for i in range(48)]

notes = Dataset.from_list([{"note": f"Question: What is {a} + {b}? Answer: {a + b}"}
                           for a, b in sums])
sft_config = SFTConfig(output_dir=tempfile.mkdtemp(), max_steps=3,
                       per_device_train_batch_size=8, learning_rate=1e-3, logging_steps=1,
                       report_to="none", save_strategy="no", bf16=False)
sft = SFTTrainer(model=AutoModelForCausalLM.from_pretrained(checkpoint), args=sft_config,
                 train_dataset=notes, processing_class=tokenizer, dataset_text_field="note",
                 max_seq_length=32)
sft.train()

pairs = Dataset.from_list([{"prompt": f"Question: What is {a} + {b}? Answer:",
                            "chosen": f" {a + b}", "rejected": f" {a + b + 1}"}
                           for a, b in sums])
dpo_args = TrainingArguments(output_dir=tempfile.mkdtemp(), max_steps=3,
                             per_device_train_batch_size=8, learning_rate=1e-3,
                             logging_steps=1, report_to="none", save_strategy="no")
dpo = DPOTrainer(AutoModelForCausalLM.from_pretrained(checkpoint), args=dpo_args,
                 train_dataset=pairs, processing_class=tokenizer)
dpo.train()
