"""keras3-objects: Keras 3 optimizer/loss/callback objects given to a tf-keras model.

TensorFlow >= 2.16 makes ``tensorflow.keras`` (and ``import keras``) Keras 3, while the
transformers TF models (4.x) are built on the legacy Keras 2 package ``tf_keras``. A
Keras 3 object passed to their ``compile``/``fit`` is not recognised: ``ValueError: Could
not interpret optimizer identifier: <keras.src.optimizers.adam.Adam object ...>`` (TF
2.21, tf-keras 2.21, transformers 4.57.6, measured; losses and callbacks fail the same
way). The transformers TF documentation: install ``tf-keras`` and use it. The recipe
imports optimizers, losses, callbacks and metrics from ``tf_keras`` instead, where the
target environment has ``tf-keras`` installed.
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, NotApplicable, Recipe, patterns

_TF = {"tf-keras": "2.21.0", "tensorflow": "2.21.0", "transformers": "4.57.6"}

_BEFORE = (
    "from tensorflow.keras.losses import SparseCategoricalCrossentropy\n"
    "from tensorflow.keras.optimizers import Adam\n"
    "model.compile(optimizer=Adam(5e-5), loss=SparseCategoricalCrossentropy(from_logits=True))\n"
)


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


class UseTfKeras(Recipe):
    id = "keras3-objects"
    category = "keras3-objects"
    requires_words = (("keras",),)
    title = "use tf_keras optimizers, losses and callbacks with the transformers TF model"
    nothing_to_do = "no optimizer/loss/callback/metric taken from Keras 3"

    examples = (
        Example(before=_BEFORE, after=_BEFORE.replace("from tensorflow.keras.", "from tf_keras."),
                versions=_TF),
        Example(  # attribute style: tf.keras.optimizers.Adam, keras.callbacks.EarlyStopping
            before=("import tensorflow as tf\n"
                    "import keras\n"
                    "def fit(model, data):\n"
                    "    opt = tf.keras.optimizers.Adam(learning_rate=3e-5)\n"
                    "    stop = keras.callbacks.EarlyStopping(patience=1)\n"
                    "    model.compile(optimizer=opt)\n"
                    "    model.fit(data, callbacks=[stop])\n"),
            after=("import tensorflow as tf\n"
                   "import keras\n"
                   "import tf_keras\n"
                   "\n"
                   "def fit(model, data):\n"
                   "    opt = tf_keras.optimizers.Adam(learning_rate=3e-5)\n"
                   "    stop = tf_keras.callbacks.EarlyStopping(patience=1)\n"
                   "    model.compile(optimizer=opt)\n"
                   "    model.fit(data, callbacks=[stop])\n"),
            versions=_TF,
        ),
        Example(  # no tf-keras in the target environment: nothing to switch to
            before=_BEFORE, versions={"tensorflow": "2.15.0", "transformers": "4.40.0"},
        ),
        Example(  # already tf_keras
            before="from tf_keras.optimizers import Adam\nmodel.compile(optimizer=Adam(5e-5))\n",
            versions=_TF,
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if not (self.rc.versions.get("tf-keras") or self.rc.versions.get("tf_keras")):
            raise NotApplicable("tf-keras is not installed in the target environment; "
                                "install it (pip install tf-keras) for transformers TF models")
        return super().transform_module_impl(tree)

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
                         ) -> cst.ImportFrom:
        if updated_node.module is None or updated_node.relative:
            return updated_node
        module = _dotted(updated_node.module)
        found = re.fullmatch(patterns.KERAS3_MODULE, module)
        if not found:
            return updated_node
        new = "tf_keras" + module[len(found[1]):]
        self.changed(original_node, f"import from {new} instead of {module}")
        return updated_node.with_changes(module=cst.parse_expression(new))

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute
                        ) -> cst.Attribute:
        if not re.fullmatch(patterns.KERAS3_PARTS, original_node.attr.value) \
                or not self.is_qualified(original_node, patterns.KERAS3_OBJECT) \
                or _dotted(original_node.value) not in ("tf.keras", "keras", "tensorflow.keras"):
            return updated_node
        AddImportsVisitor.add_needed_import(self.context, "tf_keras")
        self.changed(original_node, f"tf_keras.{original_node.attr.value} instead of "
                                    f"{_dotted(original_node)}")
        return updated_node.with_changes(value=cst.Name("tf_keras"))
