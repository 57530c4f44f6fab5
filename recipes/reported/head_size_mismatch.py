"""head-size-mismatch: a checkpoint whose classification head has another number of labels.

Public report: huggingface/transformers#20327 (a 9-label NER checkpoint fine-tuned on 5
labels: "size mismatch for classifier.weight ... You may consider adding
`ignore_mismatched_sizes=True`"); transformers 5 says "You set `ignore_mismatched_sizes`
to `False`, thus raising an error". Fix, as the library advises: add
``ignore_mismatched_sizes=True`` to the ``from_pretrained`` call that asks for a new
``num_labels`` (the head is initialised afresh and trained on the new labels).
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, Recipe, append_keyword, keyword, patterns


class IgnoreMismatchedSizes(Recipe):
    id = "head-size-mismatch"
    category = "head-size-mismatch"
    requires_imports = ("transformers",)
    title = "load the checkpoint with ignore_mismatched_sizes=True for the new num_labels"
    nothing_to_do = "no *For*.from_pretrained(..., num_labels=...) call to change"

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForTokenClassification as M\n"
                "model = M.from_pretrained(ckpt, num_labels=5)\n"
            ),
            after=(
                "from transformers import AutoModelForTokenClassification as M\n"
                "model = M.from_pretrained(ckpt, num_labels=5, ignore_mismatched_sizes=True)\n"
            ),
        ),
        Example(  # no new label count asked for: the mismatch is elsewhere
            before=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(ckpt)\n"
            ),
        ),
        Example(  # already ignored
            before=(
                "from transformers import AutoModelForSequenceClassification as A\n"
                "model = A.from_pretrained(ckpt, num_labels=3, ignore_mismatched_sizes=True)\n"
            ),
        ),
    )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, patterns.TASK_MODEL_PRETRAINED):
            return updated_node
        if keyword(updated_node, "num_labels") is None \
                or keyword(updated_node, "ignore_mismatched_sizes") is not None:
            return updated_node
        self.changed(original_node, "ignore_mismatched_sizes=True")
        return append_keyword(updated_node, "ignore_mismatched_sizes", cst.Name("True"))
