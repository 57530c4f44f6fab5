"""The ticket splits as ``datasets``: CSV files with string intents, class-encoded (one
``ClassLabel`` per split, the intents sorted) and renamed to ``label``, then tokenized."""
from datasets import load_dataset


def load_splits(folder, tokenizer):
    raw = load_dataset("csv", data_files={"train": str(folder / "tickets_train.csv"),
                                          "validation": str(folder / "tickets_validation.csv")})
    raw = raw.class_encode_column("intent")
    raw = raw.rename_column("intent", "label")

    def tokenize(batch):
        return tokenizer(batch["text"], truncation=True, max_length=32)

    return raw, raw.map(tokenize, batched=True, remove_columns=["text"])
