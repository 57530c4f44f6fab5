"""Shared shape of the recipes that give a batching call a padding collator (not a recipe
itself: the registry skips modules whose name starts with ``_``)."""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import code, keyword, patterns
from autofix.toolkit.scope import PlannedEdits, append_kw, apply_tokenizer_plan
from autofix.toolkit.values import Values


class AddPaddingCollator(PlannedEdits):
    """Adds ``collate_fn=DataCollatorWithPadding(<tokenizer>...)`` to each matching call
    that has no ``collate_fn``; subclasses say which calls and how the collator reads."""

    abstract = True

    def is_batching_call(self, node: cst.Call) -> bool:
        raise NotImplementedError

    def collator(self, tokenizer: str) -> str:
        return f"DataCollatorWithPadding({tokenizer})"

    def accepts(self, collator: cst.Call) -> bool:
        """True when the script's collator built by ``collator`` suits these calls."""
        return True

    def own_collator(self, call: cst.Call) -> cst.Name | None:
        """A collator variable of the script that is bound at ``call``: the one another
        batching call of the same kind passes as ``collate_fn`` (the same binding), else one
        holding a padding collator (``collator = DataCollatorWithPadding(tokenizer)``)."""
        program = self.program
        names: list[str] = []
        for other in program.calls:
            arg = keyword(other, "collate_fn") if other is not call else None
            if arg is not None and isinstance(arg.value, cst.Name) \
                    and self.is_batching_call(other) \
                    and set(program.resolve(arg.value.value, other)) \
                    == set(program.resolve(arg.value.value, call)):
                names.append(arg.value.value)
        names += program.visible_names(call)
        for name in dict.fromkeys(names):
            made = [v for _, v in self.values.assignments(name, call)]
            padding = [v for v in made if isinstance(v, cst.Call)
                       and self.is_qualified(v.func, patterns.PADDING_COLLATOR)]
            if padding and all(self.accepts(v) for v in padding) \
                    and program.bound_at(name, call):
                return cst.Name(name)
        return None

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        for call in self.program.calls:
            if not self.is_batching_call(call):
                continue
            if keyword(call, "collate_fn") is not None:
                self.reason = "the call already has a collate_fn"
                continue
            own = self.own_collator(call)
            if own is not None:  # the script's own collator, as its other calls pass it
                self.plan_edit(call, append_kw("collate_fn", own),
                               f"collate_fn={code(own)} (the script's own collator)")
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
