"""ragged-batch, hand-written loop face: a ``DataLoader`` over tokenized rows without a
padding ``collate_fn``.

PyTorch's default collate stacks the rows and fails on different lengths ("stack expects
each tensor to be equal size"). Fix, as the course's "A full training" section does:
``collate_fn=DataCollatorWithPadding(tokenizer)`` on each ``DataLoader`` without one.
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example
from autofix.toolkit.patterns import DATALOADER

from .._collate import AddPaddingCollator


class PadDataLoader(AddPaddingCollator):
    id = "ragged-batch-loader"
    category = "ragged-batch"
    requires_words = (("DataLoader",),)
    requires_imports = ("torch",)
    title = "pad DataLoader batches with DataCollatorWithPadding"
    nothing_to_do = "no DataLoader(...) without a collate_fn"

    examples = (
        Example(
            before=(
                "from torch.utils.data import DataLoader\n"
                "from transformers import AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "loader = DataLoader(ds['train'], shuffle=True, batch_size=8)\n"
            ),
            after=(
                "from torch.utils.data import DataLoader\n"
                "from transformers import AutoTokenizer, DataCollatorWithPadding\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "loader = DataLoader(\n"
                "    ds['train'],\n"
                "    shuffle=True,\n"
                "    batch_size=8,\n"
                "    collate_fn=DataCollatorWithPadding(tokenizer),\n"
                ")\n"
            ),
        ),
        Example(  # the script's own collator, as its evaluation loader passes it
            before=(
                "from torch.utils.data import DataLoader\n"
                "from transformers import AutoTokenizer, DataCollatorWithPadding\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "if args.pad_to_max_length:\n"
                "    collator = default_data_collator\n"
                "else:\n"
                "    collator = DataCollatorWithPadding(tokenizer, pad_to_multiple_of=8)\n"
                "train_loader = DataLoader(train_ds, shuffle=True, batch_size=8)\n"
                "eval_loader = DataLoader(eval_ds, collate_fn=collator, batch_size=8)\n"
            ),
            after=(
                "from torch.utils.data import DataLoader\n"
                "from transformers import AutoTokenizer, DataCollatorWithPadding\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "if args.pad_to_max_length:\n"
                "    collator = default_data_collator\n"
                "else:\n"
                "    collator = DataCollatorWithPadding(tokenizer, pad_to_multiple_of=8)\n"
                "train_loader = DataLoader(train_ds, shuffle=True, batch_size=8, "
                "collate_fn=collator)\n"
                "eval_loader = DataLoader(eval_ds, collate_fn=collator, batch_size=8)\n"
            ),
        ),
        Example(  # already has a collate_fn
            before=(
                "import torch\n"
                "from transformers import AutoTokenizer\n"
                "tok = AutoTokenizer.from_pretrained(ckpt)\n"
                "torch.utils.data.DataLoader(ds, collate_fn=collator)\n"
            ),
        ),
    )

    def is_batching_call(self, node: cst.Call) -> bool:
        return self.is_qualified(node.func, DATALOADER)

    def summary(self) -> str:
        return f"pad DataLoader batches ({'; '.join(dict.fromkeys(self.edits))})"
