"""keras-string-loss: ``compile(loss="sparse_categorical_crossentropy")`` on an HF model.

A string loss means ``from_logits=False``, but Hugging Face models output logits, so the
loss is computed on the wrong quantity and training stalls near chance (measured on the
project's TF sample: the per-step loss sits at ln 3 = 1.10 from step 10 on, at lr 1e-3
and at 5e-5 alike). Fix, as the course recommends (chapter 8, TensorFlow): drop
``loss=`` so the model's internal loss, computed on logits, is used.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from autofix.toolkit.recipe import TF_MODEL_PATTERN, Example, Recipe, code, keyword

_COMPILE_BEFORE = (
    "from transformers import TFAutoModelForSequenceClassification\n"
    "model = TFAutoModelForSequenceClassification.from_pretrained(ckpt, num_labels=3)\n"
    'model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")  # compile\n'
)


class UseInternalLoss(Recipe):
    id = "keras-string-loss"
    category = "keras-string-loss"
    requires_words = (("compile",),)
    requires_imports = ("transformers",)
    title = "use the model's internal loss instead of a Keras loss on logits"
    TRACK = {"model": TF_MODEL_PATTERN}
    nothing_to_do = "no compile(loss=...) on a Hugging Face TF model"

    examples: ClassVar[tuple[Example, ...]] = (
        Example(
            before=_COMPILE_BEFORE,
            after=(
                "from transformers import TFAutoModelForSequenceClassification\n"
                "model = TFAutoModelForSequenceClassification.from_pretrained(ckpt, "
                "num_labels=3)\n"
                'model.compile(optimizer="adam")  # compile\n'
            ),
        ),
        Example(  # positional (optimizer, loss), an alias
            before=(
                "import transformers as t\n"
                "net = t.TFBertForSequenceClassification.from_pretrained(ckpt)\n"
                "net.compile('adam', 'sparse_categorical_crossentropy')\n"
            ),
            after=(
                "import transformers as t\n"
                "net = t.TFBertForSequenceClassification.from_pretrained(ckpt)\n"
                "net.compile('adam')\n"
            ),
        ),
        Example(  # not an HF model: a plain Keras model may want its loss
            before=(
                "import tf_keras\n"
                "model = tf_keras.Sequential([])\n"
                'model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")\n'
            ),
        ),
    )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_model_compile(original_node):
            return updated_node
        args = list(updated_node.args)
        loss = keyword(updated_node, "loss")
        positional = [a for a in args if a.keyword is None and not a.star]
        if loss is None and len(positional) >= 2:
            loss = positional[1]
        if loss is None:
            return updated_node
        self.changed(original_node, f"dropped loss={code(loss.value)}")
        kept = [a for a in args if a is not loss]
        if kept and loss is args[-1]:
            kept[-1] = kept[-1].with_changes(comma=loss.comma,
                                             whitespace_after_arg=loss.whitespace_after_arg)
        return updated_node.with_changes(args=kept)

    def summary(self) -> str:
        return f"use the model's internal loss ({'; '.join(self.edits)})"
