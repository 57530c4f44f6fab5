"""keras-h5-subclassed-model: a Hugging Face TF model saved with ``model.save("x.h5")``.

Public report: huggingface/transformers#11581 (``NotImplementedError: Saving the model to
HDF5 format requires the model to be a Functional model or a Sequential model``):
Hugging Face TF models are subclassed Keras models, which HDF5 cannot describe. Fix, as the
library saves them: ``model.save_pretrained(folder)`` (config and weights, reloaded with
``from_pretrained``), the path's ``.h5`` suffix dropped (it names a folder now) and a
``save_format=`` argument removed.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

from autofix.toolkit import Example, code, patterns, remove_keyword
from autofix.toolkit.scope import PlannedEdits, replace_with, string_value
from autofix.toolkit.values import Values


class KerasSavePretrained(PlannedEdits):
    id = "keras-save-pretrained"
    category = "keras-h5-subclassed-model"
    requires_words = (("save",),)
    requires_imports = ("transformers",)
    title = "save the Hugging Face TF model with save_pretrained, not as HDF5"
    nothing_to_do = "no model.save(...) of a Hugging Face TF model on the failing line"

    examples = (
        Example(
            before=(
                "from transformers import TFBertForSequenceClassification\n"
                "model = TFBertForSequenceClassification(config)\n"
                "model.fit(x, y)\n"
                "model.save(str(out / 'classifier.h5'))\n"
            ),
            after=(
                "from transformers import TFBertForSequenceClassification\n"
                "model = TFBertForSequenceClassification(config)\n"
                "model.fit(x, y)\n"
                "model.save_pretrained(str(out / 'classifier'))\n"
            ),
            line=4,
        ),
        Example(  # a Keras model of the user's own: not a Hugging Face one
            before=(
                "import tf_keras\n"
                "model = tf_keras.Sequential([])\n"
                "model.save('classifier.h5')\n"
            ),
            line=3,
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        line = self.rc.diagnosis.line
        for call in self.program.calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "save"):
                continue
            position = self.get_metadata(PositionProvider, call)
            if line and not position.start.line <= line <= position.end.line:
                continue
            if not any(isinstance(v, cst.Call) and self.is_qualified(v.func, patterns.TF_MODEL_ANY)
                       for v in self.values.origins(func.value)):
                self.reason = f"{code(func.value)} is not a Hugging Face TF model"
                continue
            for literal in m.findall(call, m.SimpleString()):
                assert isinstance(literal, cst.SimpleString)
                text = string_value(literal)
                if text is not None and text.endswith(".h5"):
                    self.plan_edit(literal, replace_with(cst.SimpleString(
                        literal.value.replace(".h5", ""))), f"{text} -> {text[:-3]} (a folder)")
            self.plan_edit(func.attr, replace_with(cst.Name("save_pretrained")),
                           f"{code(func.value)}.save(...) -> save_pretrained(...) at line "
                           f"{position.start.line}")
            if any(a.keyword is not None and a.keyword.value == "save_format"
                   for a in call.args):
                self.plan_edit(call, _no_save_format, "save_format= dropped")


def _no_save_format(node: cst.CSTNode) -> cst.CSTNode:
    return remove_keyword(cst.ensure_type(node, cst.Call), "save_format")
