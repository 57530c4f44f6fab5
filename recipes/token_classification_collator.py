"""token-labels-not-padded: per-token labels with ``DataCollatorWithPadding``.

Public report: huggingface/transformers#8146 (``tokenizer.pad`` pads the inputs but not
the ``labels``; "Unable to create tensor ... Perhaps your features (`labels` in this case)
have excessive nesting"). Fix, as the library's answer there: token classification uses
``DataCollatorForTokenClassification``, which pads the labels with -100. Applied only when
the script trains a token-classification model.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, Recipe

_PADDING = r"transformers(\.[\w.]*)?\.DataCollatorWithPadding"
_TOKEN_MODEL = r"transformers(\.[\w.]*)?\.\w*ForTokenClassification(\.from_pretrained)?"


class TokenClassificationCollator(Recipe):
    id = "token-classification-collator"
    category = "token-labels-not-padded"
    requires_words = (("DataCollatorWithPadding",),)
    requires_imports = ("transformers",)
    title = "pad per-token labels with DataCollatorForTokenClassification"
    #: padding the labels is right only for labels aligned with the tokens; unaligned
    #: word tags stop crashing once padded, and train on the wrong tokens
    restores = ("token-labels-misaligned",)
    nothing_to_do = "no DataCollatorWithPadding(...) to replace"

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForTokenClassification, "
                "DataCollatorWithPadding\n"
                "model = AutoModelForTokenClassification.from_pretrained(ckpt, num_labels=9)\n"
                "collator = DataCollatorWithPadding(tokenizer)\n"
            ),
            after=(  # the import line keeps its (sorted) order
                "from transformers import AutoModelForTokenClassification, "
                "DataCollatorForTokenClassification, DataCollatorWithPadding\n"
                "model = AutoModelForTokenClassification.from_pretrained(ckpt, num_labels=9)\n"
                "collator = DataCollatorForTokenClassification(tokenizer)\n"),
        ),
        Example(  # a sequence classifier: its labels are not per token
            before=(
                "from transformers import AutoModelForSequenceClassification, "
                "DataCollatorWithPadding\n"
                "model = AutoModelForSequenceClassification.from_pretrained(ckpt)\n"
                "collator = DataCollatorWithPadding(tokenizer)\n"
            ),
        ),
    )

    def visit_Module(self, node: cst.Module) -> bool:
        found = any(isinstance(c, cst.Call) and self.is_qualified(c.func, _TOKEN_MODEL)
                    for c in m.findall(node, m.Call()))
        if not found:
            self.reason = "the script builds no *ForTokenClassification model"
        return found

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, _PADDING):
            return updated_node
        AddImportsVisitor.add_needed_import(self.context, "transformers",
                                            "DataCollatorForTokenClassification")
        self.changed(original_node, "DataCollatorForTokenClassification")
        return updated_node.with_changes(func=cst.Name("DataCollatorForTokenClassification"))
