"""keras-ignore-index-labels: token labels padded with -100 (the PyTorch ignore index)
given to a Keras sparse cross-entropy, which has no ignore index.

Public report: huggingface/transformers#4699 (``Received a label value of -100 which is
outside the valid range of [0, 2)``, TensorFlow 2.21 with tf-keras, measured). The Hugging
Face TF models' internal loss masks -100 (``hf_compute_loss`` keeps only labels != -100),
so the fix is to compile without ``loss=``: the model computes that loss from the labels
``fit`` gives it.
"""

from __future__ import annotations

from autofix.toolkit import Example, patterns

from .._keras_loss import DropCompiledLoss


class IgnoreIndexInternalLoss(DropCompiledLoss):
    id = "keras-ignore-index-loss"
    category = "keras-ignore-index-labels"
    title = "drop the Keras loss so the model's internal loss masks the -100 labels"
    #: the model made with from_pretrained or built from a config
    TRACK = {"model": patterns.TF_MODEL_ANY}

    examples = (
        Example(
            before=(
                "import tf_keras\n"
                "from transformers import BertConfig, TFBertForTokenClassification\n"
                "model = TFBertForTokenClassification(BertConfig(num_labels=2))\n"
                "model.compile(optimizer=opt,\n"
                "              loss=tf_keras.losses.SparseCategoricalCrossentropy("
                "from_logits=True))\n"
            ),
            after=(
                "import tf_keras\n"
                "from transformers import BertConfig, TFBertForTokenClassification\n"
                "model = TFBertForTokenClassification(BertConfig(num_labels=2))\n"
                "model.compile(optimizer=opt)\n"
            ),
        ),
        Example(  # a plain Keras model has no internal loss: left alone
            before=(
                "import tf_keras\n"
                "import transformers\n"
                "model = tf_keras.Sequential([tf_keras.layers.Dense(2)])\n"
                "model.compile(optimizer=opt, loss='sparse_categorical_crossentropy')\n"
            ),
        ),
    )
