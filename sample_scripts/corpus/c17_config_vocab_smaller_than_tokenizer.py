# A masked LM trained from scratch with a tokenizer trained on the data; the config's
# vocab_size is a number copied from another setup, smaller than the new tokenizer's.
import tempfile
from pathlib import Path

from datasets import load_dataset
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import (BertConfig, BertForMaskedLM, DataCollatorForLanguageModeling,
                          PreTrainedTokenizerFast, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
core = Tokenizer(models.WordLevel(unk_token="[UNK]"))
core.pre_tokenizer = pre_tokenizers.Whitespace()
core.train_from_iterator(list(raw["train"]["premise"]) + list(raw["train"]["hypothesis"]),
                         trainers.WordLevelTrainer(special_tokens=SPECIAL))
tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]",
                                    unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                                    mask_token="[MASK]")

VOCAB_SIZE = 64  # from the tutorial this started from


def encode(batch):
    return tokenizer(batch["premise"], truncation=True, max_length=32)


train = raw["train"].map(encode, batched=True, remove_columns=raw["train"].column_names)
config = BertConfig(vocab_size=VOCAB_SIZE, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
model = BertForMaskedLM(config)
collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm_probability=0.15)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         num_train_epochs=1, report_to="none", save_strategy="no",
                         logging_steps=5)
trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=collator)
trainer.train()
