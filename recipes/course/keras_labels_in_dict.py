"""keras-labels-in-dict: labels travel inside the input dict while ``compile(loss=...)``
expects them separately.

Shows as "No gradients provided for any variable" (older stacks) or "Could not find label
column(s) in input dict and no separate labels were provided!" (transformers 4.57 with
tf-keras 2.21). Fix, as the course's TensorFlow chapter does: drop ``loss=`` and let the
model compute its internal loss from the ``labels`` in the dict.
"""

from __future__ import annotations

from autofix.toolkit import Example

from .._keras_loss import DropCompiledLoss


class LabelsInDictInternalLoss(DropCompiledLoss):
    id = "keras-labels-in-dict"
    category = "keras-labels-in-dict"
    title = "drop the Keras loss so the model uses the labels in its input dict"

    examples = (
        Example(
            before=(
                "from transformers import TFAutoModelForSequenceClassification as M\n"
                "model = M.from_pretrained(ckpt)\n"
                "model.compile(optimizer=opt,\n"
                "              loss=tf.keras.losses.SparseCategoricalCrossentropy())\n"
            ),
            after=(
                "from transformers import TFAutoModelForSequenceClassification as M\n"
                "model = M.from_pretrained(ckpt)\n"
                "model.compile(optimizer=opt)\n"
            ),
        ),
        Example(  # already on the internal loss
            before=(
                "from transformers import TFAutoModelForSequenceClassification as M\n"
                "model = M.from_pretrained(ckpt)\n"
                "model.compile(optimizer=opt)\n"
            ),
        ),
    )
