# The language-modelling collator defaults to masked LM; a GPT-2 style tokenizer has no
# mask token (the model is causal).
import tempfile
from pathlib import Path

from datasets import load_dataset
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import (DataCollatorForLanguageModeling, GPT2Config, GPT2LMHeadModel,
                          PreTrainedTokenizerFast, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})

core = Tokenizer(models.WordLevel(unk_token="<|endoftext|>"))
core.pre_tokenizer = pre_tokenizers.Whitespace()
core.train_from_iterator(raw["train"]["premise"],
                         trainers.WordLevelTrainer(special_tokens=["<|endoftext|>"]))
tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|endoftext|>",
                                    unk_token="<|endoftext|>", pad_token="<|endoftext|>")


def encode(batch):
    return tokenizer(batch["premise"], truncation=True, max_length=32)


train = raw["train"].map(encode, batched=True, remove_columns=raw["train"].column_names)
model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_positions=64, n_embd=32,
                                   n_layer=2, n_head=2))
collator = DataCollatorForLanguageModeling(tokenizer=tokenizer)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         num_train_epochs=1, report_to="none", save_strategy="no",
                         logging_steps=5)
trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=collator)
trainer.train()
