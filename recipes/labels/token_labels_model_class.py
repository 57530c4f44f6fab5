"""token-labels-on-sequence-head: labels shaped like ``input_ids`` on a
sequence-classification model.

Public reports: huggingface/transformers#9906 (per-token NER tags, ``Expected input
batch_size (16) to match target batch_size (256)``) and #6452 (the masked-LM collator with
a sequence classifier, ``... target batch_size (272)``), measured on transformers 5.24. The
labels are per token; the model predicts one class per sequence. The fix loads the model
class the labels are for, with the same checkpoint or config: the masked-LM class when the
script batches with ``DataCollatorForLanguageModeling`` (its labels are token ids), the
token-classification class otherwise (its ``num_labels`` stays the tags' count).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from autofix.toolkit import Example, Recipe, keyword, patterns


class TokenLabelsModelClass(Recipe):
    id = "token-labels-model-class"
    category = "token-labels-on-sequence-head"
    requires_imports = ("transformers",)
    title = "load the model class the per-token labels are for"
    nothing_to_do = "no *ForSequenceClassification model made here"
    restores = ("token-labels-on-sequence-head",)

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForSequenceClassification, BertConfig\n"
                "model = AutoModelForSequenceClassification.from_config(BertConfig(num_labels=2))\n"
            ),
            after=(
                "from transformers import AutoModelForTokenClassification, BertConfig\n"
                "model = AutoModelForTokenClassification.from_config(BertConfig(num_labels=2))\n"
            ),
        ),
        Example(  # the masked-LM collator: its labels are token ids
            before=(
                "import transformers\n"
                "from transformers import DataCollatorForLanguageModeling\n"
                "model = transformers.BertForSequenceClassification(config)\n"
                "collator = DataCollatorForLanguageModeling(tok, mlm=True)\n"
            ),
            after=(
                "import transformers\n"
                "from transformers import DataCollatorForLanguageModeling\n"
                "model = transformers.BertForMaskedLM(config)\n"
                "collator = DataCollatorForLanguageModeling(tok, mlm=True)\n"
            ),
        ),
        Example(  # a token-classification model already: nothing to change
            before=(
                "from transformers import AutoModelForTokenClassification\n"
                "model = AutoModelForTokenClassification.from_pretrained(ckpt)\n"
            ),
        ),
    )

    def visit_Module(self, node: cst.Module) -> bool:
        self.task = "TokenClassification"
        for call in m.findall(node, m.Call()):
            assert isinstance(call, cst.Call)
            if self.is_qualified(call.func, patterns.LM_COLLATOR):
                mlm = keyword(call, "mlm")
                if mlm is None or not m.matches(mlm.value, m.Name("False")):
                    self.task = "MaskedLM"
        return True

    def _new(self, name: str) -> str:
        return name.replace("ForSequenceClassification", "For" + self.task)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        if not original_node.value.endswith("ForSequenceClassification") or \
                not self.is_qualified(original_node, patterns.SEQ_CLS_CLASS):
            return updated_node
        new = self._new(original_node.value)
        module = next(iter(self.qualified(original_node))).rsplit(".", 1)[0]
        AddImportsVisitor.add_needed_import(self.context, module, new)
        RemoveImportsVisitor.remove_unused_import(self.context, module, original_node.value)
        self.changed(original_node, f"{original_node.value} -> {new}")
        return updated_node.with_changes(value=new)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute
                        ) -> cst.Attribute:
        name = original_node.attr.value
        if not name.endswith("ForSequenceClassification") or \
                not self.is_qualified(original_node, patterns.SEQ_CLS_CLASS):
            return updated_node
        new = self._new(name)
        self.changed(original_node, f"{name} -> {new}")
        return updated_node.with_changes(attr=cst.Name(new))

    def summary(self) -> str:
        return f"load the *For{self.task} class of the model: the labels are per token"
