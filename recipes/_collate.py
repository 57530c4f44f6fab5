"""Shared shape of the recipes that give a batching call a padding collator (not a recipe
itself: the registry skips modules whose name starts with ``_``)."""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.recipe import TOKENIZER_PATTERN, Recipe, append_keyword, keyword


class AddPaddingCollator(Recipe):
    """Adds ``collate_fn=DataCollatorWithPadding(<tokenizer>...)`` to each matching call
    that has no ``collate_fn``; subclasses say which calls and how the collator reads."""

    abstract = True

    TRACK = {"tokenizer": TOKENIZER_PATTERN}

    def is_batching_call(self, node: cst.Call) -> bool:
        raise NotImplementedError

    def collator(self, tokenizer: str) -> str:
        return f"DataCollatorWithPadding({tokenizer})"

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_batching_call(original_node):
            return updated_node
        if keyword(updated_node, "collate_fn") is not None:
            self.reason = "the call already has a collate_fn"
            return updated_node
        tokenizer = self.latest("tokenizer")
        if tokenizer is None:
            self.reason = "no tokenizer variable (X = AutoTokenizer.from_pretrained(...)) found"
            return updated_node
        AddImportsVisitor.add_needed_import(self.context, "transformers",
                                            "DataCollatorWithPadding")
        collator = self.collator(tokenizer)
        self.changed(original_node, f"collate_fn={collator}")
        return append_keyword(updated_node, "collate_fn", cst.parse_expression(collator))
