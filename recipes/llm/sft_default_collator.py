"""sft-default-collator: SFTTrainer given transformers' DataCollatorWithPadding.

``SFTTrainer`` tokenizes the rows itself and builds its own collator, which pads
``input_ids`` and makes the ``labels`` (padded with -100 by position, the prompt masked for
prompt/completion rows), and sets the pad token to the end-of-text token when the tokenizer
has none. A ``data_collator=DataCollatorWithPadding(tokenizer)`` replaces it: the batches
carry no labels (the model returns no loss), the tokenizer of a base model has no pad token
("Asking to pad but the tokenizer does not have a padding token"), and after ``pad_token =
eos_token`` the ragged ``labels`` TRL made cannot be padded ("Perhaps your features
(`labels` in this case) have excessive nesting"). The fix drops ``data_collator=`` so TRL's
own collator is used (TRL's SFT documentation: the default collator).
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import RemoveImportsVisitor

from autofix.toolkit import Example, code, keyword, patterns, remove_keyword
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.values import Values


def _drop_collator(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.Call)
    return remove_keyword(node, "data_collator")


class SftDefaultCollator(PlannedEdits):
    id = "sft-default-collator"
    category = "causal-lm-without-labels"
    title = "let SFTTrainer build its own collator (drop DataCollatorWithPadding)"
    requires_words = (("DataCollatorWithPadding",), ("SFTTrainer",))
    requires_imports = ("trl",)
    nothing_to_do = "no SFTTrainer(data_collator=DataCollatorWithPadding(...))"

    examples = (
        Example(
            before=(
                "from transformers import DataCollatorWithPadding\n"
                "from trl import SFTTrainer\n"
                "trainer = SFTTrainer(\n"
                "    model=model,\n"
                "    train_dataset=ds,\n"
                "    data_collator=DataCollatorWithPadding(tokenizer),\n"
                ")\n"
            ),
            after=(
                "from trl import SFTTrainer\n"
                "trainer = SFTTrainer(\n"
                "    model=model,\n"
                "    train_dataset=ds,\n"
                ")\n"
            ),
        ),
        Example(  # another collator: the script's choice
            before=(
                "from transformers import DataCollatorForSeq2Seq\n"
                "from trl import SFTTrainer\n"
                "trainer = SFTTrainer(model=model, data_collator=DataCollatorForSeq2Seq(tok))\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        for call in self.program.calls:
            if not self.is_qualified(call.func, patterns.SFT_TRAINER):
                continue
            arg = keyword(call, "data_collator")
            if arg is None:
                continue
            values = self.values.origins(arg.value)
            if values and all(isinstance(v, cst.Call) and self.is_qualified(
                    v.func, patterns.WITH_PADDING_COLLATOR) for v in values):
                RemoveImportsVisitor.remove_unused_import(self.context, "transformers",
                                                          "DataCollatorWithPadding")
                self.plan_edit(call, _drop_collator,
                               f"dropped data_collator={code(arg.value)} (SFTTrainer's own "
                               "collator makes the labels)")
