"""binary-single-output-head: the class ids 0 and 1 on a 1-output head.

Report: a binary task given ``num_labels=1`` "because it is binary"
(sample_scripts/corpus d10): transformers 5.24 then sets ``problem_type="regression"`` and
trains an MSE regression on the class ids; older stacks raised ``Found dtype Long but
expected Float``. Binary classification in transformers is ``num_labels=2`` (cross-entropy
on the class ids), set where the head is decided (``recipes/_num_labels.py``). Found by the
preflight contract at ``Trainer.train()`` (``autofix/run/child/label_contracts.py``); a
script that sets ``problem_type="regression"`` itself is not judged.
"""

from __future__ import annotations

from autofix.toolkit import Example
from autofix.types import DatasetFacts, TrainerFacts

from ._num_labels import HeadSize

_BINARY = (TrainerFacts("Trainer", "BertForSequenceClassification", 1, (
    DatasetFacts("train", ("label",), 100, "label", "int", None, 0, 1),)),)


class BinaryTwoOutputs(HeadSize):
    id = "binary-two-outputs"
    category = "binary-single-output-head"
    requires_imports = ("transformers",)
    title = "classify 0/1 labels with a 2-output head (num_labels=2), not a regression"
    restores = ("binary-single-output-head",)

    examples = (
        Example(
            before=(
                "from transformers import BertConfig, BertForSequenceClassification\n"
                "config = BertConfig(hidden_size=32, num_labels=1)\n"
                "model = BertForSequenceClassification(config)\n"
            ),
            after=(
                "from transformers import BertConfig, BertForSequenceClassification\n"
                "config = BertConfig(hidden_size=32, num_labels=2)\n"
                "model = BertForSequenceClassification(config)\n"
            ),
            trainers=_BINARY,
        ),
        Example(  # a computed head size: reported, not overwritten
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "model = M.from_pretrained(ckpt, num_labels=len(names))\n"
            ),
            trainers=_BINARY,
        ),
    )

    def wanted(self) -> int:
        return 2

    def summary(self) -> str:
        return f"set num_labels=2 for the binary class ids{self.where()}"
