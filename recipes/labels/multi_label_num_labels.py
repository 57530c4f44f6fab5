"""multi-label-width-mismatch: multi-hot label rows ``[B, K]`` on a head with ``C != K``
outputs.

Public reports: lonePatient/Bert-Multi-Label-Text-Classification#26 and #43 (``Target size
(torch.Size([16, 5])) must be the same as input size (torch.Size([16, 2]))``, transformers
5.24 / torch 2.13, measured). A multi-label head needs one output per label of the rows,
with the multi-label (BCE) loss: ``num_labels = K`` and
``problem_type="multi_label_classification"`` where the head is decided
(``recipes/_num_labels.py``: the config call, the value's source, a count variable in
scope). K is the width of the targets the loss read (the facts at the failure), else the
first size of the message.
"""

from __future__ import annotations

from autofix.categories.failure import Failure, labels_at_loss, shape, sizes_in_message
from autofix.toolkit import Example, NotApplicable
from autofix.types import ExceptionInfo, FrameFacts

from ._num_labels import HeadSize

MULTI_LABEL = "multi_label_classification"


def _at_loss(width: int, outputs: int) -> ExceptionInfo:
    target = {"kind": "tensor", "dtype": "torch.float32", "shape": [16, width], "min": 0.0,
              "max": 1.0, "integral": True, "distinct": [0, 1]}
    logits = {"kind": "tensor", "dtype": "torch.float32", "shape": [16, outputs]}
    return ExceptionInfo(
        "builtins.ValueError", f"Target size (torch.Size([16, {width}])) must be the same as "
        f"input size (torch.Size([16, {outputs}]))", facts=(
            FrameFacts("torch/nn/functional.py", 1, "binary_cross_entropy_with_logits", False,
                       {"input": logits, "target": target}),))


def label_width(exc: ExceptionInfo | None) -> int | None:
    """The width of the multi-hot targets the loss read (``None``: not known)."""
    if exc is None:
        return None
    at = labels_at_loss(Failure(exc))
    dims = shape(at.target) if at is not None else None
    if dims and len(dims) == 2:
        return dims[-1]
    sizes = sizes_in_message(exc.message)
    return sizes[0][-1] if sizes and len(sizes[0]) == 2 else None


class MultiLabelNumLabels(HeadSize):
    id = "multi-label-num-labels"
    category = "multi-label-width-mismatch"
    requires_imports = ("transformers",)
    title = "give the multi-label head one output per label of the multi-hot rows"
    restores = ("multi-label-width-mismatch",)

    examples = (
        Example(  # the default two outputs: num_labels and the multi-label loss added
            before=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(ckpt)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(\n"
                "    ckpt,\n"
                "    num_labels=5,\n"
                "    problem_type=\"multi_label_classification\",\n"
                ")\n"
            ),
            failure=_at_loss(5, 2),
        ),
        Example(  # a constant kept from another project, problem_type already set
            before=(
                "from transformers import BertConfig, BertForSequenceClassification\n"
                "NUM_TOPICS = 6\n"
                "config = BertConfig(num_labels=NUM_TOPICS,\n"
                "                    problem_type=\"multi_label_classification\")\n"
                "model = BertForSequenceClassification(config)\n"
            ),
            after=(
                "from transformers import BertConfig, BertForSequenceClassification\n"
                "NUM_TOPICS = 5\n"
                "config = BertConfig(num_labels=NUM_TOPICS,\n"
                "                    problem_type=\"multi_label_classification\")\n"
                "model = BertForSequenceClassification(config)\n"
            ),
            failure=_at_loss(5, 6),
        ),
        Example(  # no facts about the labels' width: nothing changed
            before=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(ckpt)\n"
            ),
        ),
    )

    def wanted(self) -> int:
        width = label_width(self.rc.diagnosis.failure)
        if width is None:
            raise NotApplicable("the width of the multi-hot labels is not known")
        return width

    def problem_type(self) -> str | None:
        return MULTI_LABEL

    def summary(self) -> str:
        return (f"set num_labels={self.num_labels} (the multi-hot rows' width) with "
                f"problem_type=\"{MULTI_LABEL}\"{self.where()}")
