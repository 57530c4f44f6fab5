"""ragged-batch, TensorFlow face: ``to_tf_dataset`` without a padding ``collate_fn``.

Course (chapter 8, TensorFlow): ``to_tf_dataset`` stacks unpadded rows and fails inside
``fit`` ("all input arrays must have the same shape"). Fix, as the course's data
collator section does: ``collate_fn=DataCollatorWithPadding(tokenizer,
return_tensors="tf")`` on every ``to_tf_dataset`` call that has none.
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, keyword
from autofix.toolkit.scope import string_value

from .._collate import AddPaddingCollator

_BEFORE = (
    "from transformers import AutoTokenizer\n"
    "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
    "train = tokenized['train'].to_tf_dataset(\n"
    "    columns=['input_ids', 'labels'], batch_size=16, shuffle=True\n"
    ")\n"
)


class PadToTfDataset(AddPaddingCollator):
    id = "ragged-batch-tf"
    category = "ragged-batch"
    requires_words = (("to_tf_dataset",),)
    title = "pad to_tf_dataset batches with DataCollatorWithPadding"
    nothing_to_do = "no to_tf_dataset(...) call without a collate_fn"

    examples = (
        Example(
            before=_BEFORE,
            after=(
                "from transformers import AutoTokenizer, DataCollatorWithPadding\n"
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

    def is_batching_call(self, node: cst.Call) -> bool:
        func = node.func
        return isinstance(func, cst.Attribute) and func.attr.value == "to_tf_dataset"

    def accepts(self, collator: cst.Call) -> bool:
        """A collator of the script returning NumPy or TensorFlow arrays (not torch's)."""
        value = keyword(collator, "return_tensors")
        return value is not None and string_value(value.value) in ("np", "tf")

    def collator(self, tokenizer: str) -> str:
        return f'DataCollatorWithPadding({tokenizer}, return_tensors="tf")'

    def summary(self) -> str:
        return f"pad to_tf_dataset batches ({'; '.join(dict.fromkeys(self.edits))})"
