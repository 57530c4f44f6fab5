"""keras-string-loss: ``compile(loss="sparse_categorical_crossentropy")`` on an HF model.

A string loss means ``from_logits=False``, but Hugging Face models output logits, so the
loss is computed on the wrong quantity and training stalls near chance (measured on the
project's TF sample: the per-step loss sits at ln 3 = 1.10 from step 10 on, at lr 1e-3
and at 5e-5 alike). Fix, as the course recommends (chapter 8, TensorFlow): drop
``loss=`` so the model's internal loss, computed on logits, is used.
"""

from __future__ import annotations

from typing import ClassVar

from autofix.toolkit import Example

from .._keras_loss import DropCompiledLoss

_COMPILE_BEFORE = (
    "from transformers import TFAutoModelForSequenceClassification\n"
    "model = TFAutoModelForSequenceClassification.from_pretrained(ckpt, num_labels=3)\n"
    'model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")  # compile\n'
)


class UseInternalLoss(DropCompiledLoss):
    id = "keras-string-loss"
    category = "keras-string-loss"
    title = "use the model's internal loss instead of a Keras loss on logits"

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
