"""dataset-not-torch-formatted: a ``DataLoader`` with the default collate over a datasets
``Dataset`` of Python lists.

A tokenized ``datasets.Dataset`` without ``set_format("torch")`` returns Python lists, and
torch's ``default_collate`` transposes a batch of equal-length lists into a list of
per-position tensors: the model gets ``input_ids`` as a list ("'list' object has no
attribute 'size'"); with rows of different lengths the same loader fails in the collate
itself (``ragged-batch``). The facts at the failure show the loader (default collate, a
dataset of format ``None``) and the transposed batch. Fix: the DataLoader gets
``collate_fn=DataCollatorWithPadding(tokenizer)``, which pads and makes tensors (the
course's "A full training" section), on each ``DataLoader`` without a ``collate_fn``.
"""

from __future__ import annotations

import libcst as cst

from autofix.categories.catalogue.data import unformatted_loader_batch
from autofix.toolkit import Example, NotApplicable
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.patterns import DATALOADER
from autofix.types import ExceptionInfo

from .._collate import AddPaddingCollator


def _failure(collate: str = "torch.utils.data._utils.collate.default_collate"
             ) -> ExceptionInfo:
    dataset = {"kind": "dataset", "columns": ["input_ids", "labels"], "format": None}
    batch = {"kind": "mapping", "keys": ["input_ids"], "values": {"input_ids": {
        "kind": "list", "len": 64, "items": [{"kind": "tensor", "shape": [16]}]}}}
    return example_failure("AttributeError", "'list' object has no attribute 'size'",
                           user={"loader": {"kind": "loader", "collate_fn": collate,
                                            "dataset": dataset}, "batch": batch})


_TOK = ("from torch.utils.data import DataLoader\n"
        "from transformers import AutoTokenizer\n"
        "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n")


class LoaderCollator(AddPaddingCollator):
    id = "loader-collator"
    category = "dataset-not-torch-formatted"
    requires_words = (("DataLoader",),)
    requires_imports = ("torch",)
    title = "batch the datasets rows with DataCollatorWithPadding (tensors, not lists)"
    nothing_to_do = "no DataLoader(...) without a collate_fn"

    examples = (
        Example(
            before=_TOK + "loader = DataLoader(tokenized['train'], batch_size=16)\n",
            after=_TOK.replace("AutoTokenizer\n", "AutoTokenizer, DataCollatorWithPadding\n")
            + "loader = DataLoader(\n    tokenized['train'],\n    batch_size=16,\n"
              "    collate_fn=DataCollatorWithPadding(tokenizer),\n)\n",
            failure=_failure(),
        ),
        Example(  # the loader has its own collate function: another fault
            before=_TOK + "loader = DataLoader(tokenized['train'], batch_size=16)\n",
            failure=_failure("__main__.collate"),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = failure_of(self.rc)
        if failure is None or unformatted_loader_batch(failure) is not True:
            raise NotApplicable("the facts at the failure show no default-collated batch "
                                "of Python lists")
        super().prepare(tree)

    def is_batching_call(self, node: cst.Call) -> bool:
        return self.is_qualified(node.func, DATALOADER)
