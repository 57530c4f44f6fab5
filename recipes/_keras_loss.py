"""The family base of the recipes that drop ``compile(loss=...)`` on a Hugging Face TF model
so the model computes its internal loss (on logits, from the ``labels`` it is given)."""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Recipe, code, keyword, patterns


class DropCompiledLoss(Recipe):
    """Drops the ``loss`` (keyword, or the second positional argument) of
    ``model.compile(...)`` where ``model`` holds a Hugging Face TF model."""

    abstract = True
    requires_words = (("compile",),)
    requires_imports = ("transformers",)
    TRACK = {"model": patterns.TF_MODEL}
    nothing_to_do = "no compile(loss=...) on a Hugging Face TF model"

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_model_compile(original_node):
            return updated_node
        args = list(updated_node.args)
        loss = keyword(updated_node, "loss")
        positional = [a for a in args if a.keyword is None and not a.star]
        if loss is None and len(positional) >= 2:
            loss = positional[1]
        if loss is None:
            return updated_node
        self.changed(original_node, f"dropped loss={code(loss.value)}")
        kept = [a for a in args if a is not loss]
        if kept and loss is args[-1]:
            kept[-1] = kept[-1].with_changes(comma=loss.comma,
                                             whitespace_after_arg=loss.whitespace_after_arg)
        return updated_node.with_changes(args=kept)

    def summary(self) -> str:
        return f"use the model's internal loss ({'; '.join(self.edits)})"
