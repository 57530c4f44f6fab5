"""ragged-batch, TensorFlow face: ``to_tf_dataset`` without a padding ``collate_fn``.

Course (chapter 8, TensorFlow): ``to_tf_dataset`` stacks unpadded rows and fails inside
``fit`` ("all input arrays must have the same shape"). Fix, as the course's data
collator section does: ``collate_fn=DataCollatorWithPadding(tokenizer,
return_tensors="tf")`` on every ``to_tf_dataset`` call that has none.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.recipe import (
    TOKENIZER_PATTERN,
    Example,
    Recipe,
    append_keyword,
    keyword,
)

_BEFORE = (
    "from transformers import AutoTokenizer\n"
    "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
    "train = tokenized['train'].to_tf_dataset(\n"
    "    columns=['input_ids', 'labels'], batch_size=16, shuffle=True\n"
    ")\n"
)


class PadToTfDataset(Recipe):
    id = "ragged-batch-tf"
    category = "ragged-batch"
    title = "pad to_tf_dataset batches with DataCollatorWithPadding"
    TRACK = {"tokenizer": TOKENIZER_PATTERN}
    nothing_to_do = "no to_tf_dataset(...) call without a collate_fn"

    examples = (
        Example(
            before=_BEFORE,
            after=(
                "from transformers import DataCollatorWithPadding, AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "train = tokenized['train'].to_tf_dataset(\n"
                "    columns=['input_ids', 'labels'], batch_size=16, shuffle=True,\n"
                "    collate_fn=DataCollatorWithPadding(tokenizer, return_tensors=\"tf\")\n"
                ")\n"
            ),
        ),
        Example(  # already padded
            before=(
                "from transformers import AutoTokenizer\n"
                "tok = AutoTokenizer.from_pretrained(ckpt)\n"
                "ds.to_tf_dataset(columns=['input_ids'], collate_fn=collator)\n"
            ),
        ),
        Example(  # no tokenizer to pad with
            before="ds.to_tf_dataset(columns=['input_ids'], batch_size=8)\n",
        ),
    )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        func = original_node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "to_tf_dataset"):
            return updated_node
        if keyword(updated_node, "collate_fn") is not None:
            self.reason = "to_tf_dataset already has a collate_fn"
            return updated_node
        tokenizer = self.latest("tokenizer")
        if tokenizer is None:
            self.reason = "no tokenizer variable (X = AutoTokenizer.from_pretrained(...)) found"
            return updated_node
        AddImportsVisitor.add_needed_import(self.context, "transformers",
                                            "DataCollatorWithPadding")
        collator = cst.parse_expression(
            f'DataCollatorWithPadding({tokenizer}, return_tensors="tf")')
        self.changed(original_node, f"collate_fn=DataCollatorWithPadding({tokenizer}, "
                                    'return_tensors="tf")')
        return append_keyword(updated_node, "collate_fn", collator)

    def summary(self) -> str:
        return f"pad to_tf_dataset batches ({len(self.edits)} call(s): {self.edits[0]})"
