"""api-drift: ``from transformers import AdamW`` (removed) -> ``torch.optim.AdamW``.

transformers deprecated its own ``AdamW`` for PyTorch's and then removed it ("cannot
import name 'AdamW' from 'transformers'"). PyTorch's always corrects the bias, so a
``correct_bias=`` argument is dropped with it.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, OtherError, Recipe, drop_import, patterns, remove_keyword


class AdamWFromTorch(Recipe):
    id = "drift-adamw"
    category = "api-drift"
    requires_words = (("AdamW",),)
    title = "import AdamW from torch.optim (transformers removed its own)"

    examples = (
        Example(
            before=("from transformers import AdamW, get_scheduler\n"
                    "optimizer = AdamW(model.parameters(), lr=5e-5, correct_bias=True)\n"),
            after=("from torch.optim import AdamW\n"
                   "from transformers import get_scheduler\n"
                   "\n"
                   "optimizer = AdamW(model.parameters(), lr=5e-5)\n"),
            evidence="ImportError: cannot import name 'AdamW' from 'transformers'",
        ),
        Example(
            before="from transformers import AdamW\noptimizer = AdamW(params, lr=5e-5)\n",
            after="from torch.optim import AdamW\noptimizer = AdamW(params, lr=5e-5)\n",
            evidence="ImportError: cannot import name 'AdamW' from 'transformers'",
        ),
        Example(  # already PyTorch's
            before="from torch.optim import AdamW\noptimizer = AdamW(params, lr=5e-5)\n",
            evidence="ImportError: cannot import name 'AdamW' from 'transformers'",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if "AdamW" not in self.rc.diagnosis.evidence:
            raise OtherError("the error is not about transformers.AdamW")
        self.reason = "no `from transformers import AdamW` in the code"
        return super().transform_module_impl(tree)

    def leave_ImportFrom(self, original_node: cst.ImportFrom,
                         updated_node: cst.ImportFrom
                         ) -> cst.ImportFrom | cst.RemovalSentinel:
        dropped = drop_import(updated_node, "transformers", "AdamW")
        if dropped is None:
            return updated_node
        self.changed(original_node, "from transformers import AdamW -> from torch.optim")
        if isinstance(dropped, cst.RemovalSentinel):  # the only name: the import is replaced
            return updated_node.with_changes(  # where it is (a notebook keeps it in its cell)
                module=cst.Attribute(value=cst.Name("torch"), attr=cst.Name("optim")))
        AddImportsVisitor.add_needed_import(self.context, "torch.optim", "AdamW")
        return dropped

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if self.is_qualified(original_node.func, patterns.ADAMW) and any(
                a.keyword is not None and a.keyword.value == "correct_bias"
                for a in updated_node.args):
            self.changed(original_node, "dropped correct_bias= (torch's AdamW always "
                                        "corrects the bias)")
            return remove_keyword(updated_node, "correct_bias")
        return updated_node
