"""tf-from-pytorch-weights: a TensorFlow model loaded from PyTorch weights without
``from_pt=True``.

Public report: huggingface/transformers#40318 (``TypeError: 'builtins.safe_open' object is
not iterable`` in ``load_pytorch_state_dict_in_tf2_model``): the checkpoint folder holds
``model.safetensors`` (PyTorch) and no ``tf_model.h5``. Fix, as the library's docs load a
PyTorch checkpoint into a TF class: ``from_pt=True`` on the failing ``TF*.from_pretrained``
call.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from autofix.toolkit import Example, Recipe, append_keyword, code, keyword, patterns


class TfFromPt(Recipe):
    id = "tf-from-pt"
    category = "tf-from-pytorch-weights"
    requires_words = (("from_pretrained",),)
    requires_imports = ("transformers",)
    title = "load PyTorch weights into the TensorFlow model with from_pt=True"
    nothing_to_do = "no TF*.from_pretrained(...) call without from_pt on the failing line"

    examples = (
        Example(
            before=(
                "from transformers import TFAutoModelForSequenceClassification as TFM\n"
                "model = TFM.from_pretrained(ckpt, num_labels=3)\n"
            ),
            after=(
                "from transformers import TFAutoModelForSequenceClassification as TFM\n"
                "model = TFM.from_pretrained(ckpt, num_labels=3, from_pt=True)\n"
            ),
            line=2,
        ),
        Example(  # already asks for it
            before=(
                "from transformers import TFAutoModel\n"
                "model = TFAutoModel.from_pretrained(ckpt, from_pt=True)\n"
            ),
            line=2,
        ),
    )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        line = self.rc.diagnosis.line
        position = self.get_metadata(PositionProvider, original_node)
        if not self.is_qualified(original_node.func, patterns.TF_MODEL) \
                or keyword(original_node, "from_pt") is not None \
                or line and not position.start.line <= line <= position.end.line:
            return updated_node
        self.changed(original_node, f"{code(original_node.func)}(..., from_pt=True)")
        return append_keyword(updated_node, "from_pt", cst.Name("True"))
