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

from autofix.toolkit import Example, patterns
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.values import CallOwner, NotFollowed, Values


class IgnoreMismatchedSizes(PlannedEdits):
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

    def prepare(self, tree: cst.Module) -> None:
        values = Values(self)
        for call in values.calls(patterns.TASK_MODEL_PRETRAINED):
            owner = CallOwner(values, call)
            try:  # a head sized here, and the script says nothing of mismatched sizes
                if owner.get("num_labels").present and \
                        not owner.get("ignore_mismatched_sizes").present:
                    owner.set("ignore_mismatched_sizes", True)
            except NotFollowed as declined:
                self.reason = str(declined)
