"""ragged-batch, hand-written loop face: a ``DataLoader`` over tokenized rows without a
padding ``collate_fn``.

PyTorch's default collate stacks the rows and fails on different lengths ("stack expects
each tensor to be equal size"). Fix, as the course's "A full training" section does:
``collate_fn=DataCollatorWithPadding(tokenizer)`` on each ``DataLoader`` without one.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.recipe import TOKENIZER_PATTERN, Example, Recipe, append_keyword, keyword

_DATALOADER = r"torch\.utils\.data(\.dataloader)?\.DataLoader"


class PadDataLoader(Recipe):
    id = "ragged-batch-loader"
    category = "ragged-batch"
    title = "pad DataLoader batches with DataCollatorWithPadding"
    TRACK = {"tokenizer": TOKENIZER_PATTERN}
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
                "from transformers import DataCollatorWithPadding, AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "loader = DataLoader(ds['train'], shuffle=True, batch_size=8, "
                "collate_fn=DataCollatorWithPadding(tokenizer))\n"
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

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, _DATALOADER):
            return updated_node
        if keyword(updated_node, "collate_fn") is not None:
            self.reason = "the DataLoader already has a collate_fn"
            return updated_node
        tokenizer = self.latest("tokenizer")
        if tokenizer is None:
            self.reason = "no tokenizer variable (X = AutoTokenizer.from_pretrained(...)) found"
            return updated_node
        AddImportsVisitor.add_needed_import(self.context, "transformers",
                                            "DataCollatorWithPadding")
        self.changed(original_node, f"collate_fn=DataCollatorWithPadding({tokenizer})")
        return append_keyword(updated_node, "collate_fn",
                              cst.parse_expression(f"DataCollatorWithPadding({tokenizer})"))

    def summary(self) -> str:
        return f"pad DataLoader batches ({self.edits[0]})"
