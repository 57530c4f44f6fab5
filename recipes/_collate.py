"""Shared shape of the recipes that give a batching call a padding collator (not a recipe
itself: the registry skips modules whose name starts with ``_``)."""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import code, keyword
from autofix.toolkit.scope import PlannedEdits, append_kw, apply_tokenizer_plan


class AddPaddingCollator(PlannedEdits):
    """Adds ``collate_fn=DataCollatorWithPadding(<tokenizer>...)`` to each matching call
    that has no ``collate_fn``; subclasses say which calls and how the collator reads."""

    abstract = True

    def is_batching_call(self, node: cst.Call) -> bool:
        raise NotImplementedError

    def collator(self, tokenizer: str) -> str:
        return f"DataCollatorWithPadding({tokenizer})"

    def prepare(self, tree: cst.Module) -> None:
        for call in self.program.calls:
            if not self.is_batching_call(call):
                continue
            if keyword(call, "collate_fn") is not None:
                self.reason = "the call already has a collate_fn"
                continue
            plan = self.program.tokenizer_at(call)
            if isinstance(plan, str):
                self.reason = plan
                continue
            apply_tokenizer_plan(self, plan)
            AddImportsVisitor.add_needed_import(self.context, "transformers",
                                                "DataCollatorWithPadding")
            collator = cst.parse_expression(self.collator(code(plan.expr)))
            self.plan_edit(call, append_kw("collate_fn", collator),
                           f"collate_fn={self.collator(plan.describe())}")
