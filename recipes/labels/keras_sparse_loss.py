"""keras-categorical-loss-sparse-labels: a Keras categorical cross-entropy given one class
id per row.

Report: openillumi.com "keras bert shape mismatch" (``ValueError: Shapes (16, 1) and (16,
3) are incompatible``, tf-keras 2.21 with transformers 4.57.6, measured).
``CategoricalCrossentropy`` wants one-hot rows; class ids are what
``SparseCategoricalCrossentropy`` reads (same arguments). The categorical accuracy metric
is swapped with it, or it would compare ids with one-hot rows.
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, Recipe, patterns

_SWAPS = {"CategoricalCrossentropy": "SparseCategoricalCrossentropy",
          "CategoricalAccuracy": "SparseCategoricalAccuracy",
          "categorical_crossentropy": "sparse_categorical_crossentropy",
          "categorical_accuracy": "sparse_categorical_accuracy"}


class KerasSparseLoss(Recipe):
    id = "keras-sparse-loss"
    category = "keras-categorical-loss-sparse-labels"
    title = "use the sparse categorical loss (and accuracy) for class-id labels"
    nothing_to_do = "no Keras CategoricalCrossentropy / categorical_crossentropy to swap"
    restores = ("keras-categorical-loss-sparse-labels",)

    examples = (
        Example(
            before=(
                "import tf_keras\n"
                "model.compile(optimizer=opt,\n"
                "              loss=tf_keras.losses.CategoricalCrossentropy(from_logits=True),\n"
                "              metrics=[tf_keras.metrics.CategoricalAccuracy('accuracy')])\n"
            ),
            after=(
                "import tf_keras\n"
                "model.compile(optimizer=opt,\n"
                "              loss=tf_keras.losses.SparseCategoricalCrossentropy("
                "from_logits=True),\n"
                "              metrics=[tf_keras.metrics.SparseCategoricalAccuracy('accuracy')])\n"
            ),
        ),
        Example(  # already sparse
            before=(
                "import tf_keras\n"
                "model.compile(loss=tf_keras.losses.SparseCategoricalCrossentropy())\n"
            ),
        ),
    )

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute
                        ) -> cst.Attribute:
        name = original_node.attr.value
        if name in _SWAPS and self.is_qualified(original_node, patterns.KERAS_LOSS_OR_METRIC):
            self.changed(original_node, f"{name} -> {_SWAPS[name]}")
            return updated_node.with_changes(attr=cst.Name(_SWAPS[name]))
        return updated_node

    def leave_SimpleString(self, original_node: cst.SimpleString,
                           updated_node: cst.SimpleString) -> cst.SimpleString:
        value = original_node.evaluated_value
        if value in ("categorical_crossentropy", "categorical_accuracy") and \
                self._in_compile(original_node):
            quote = original_node.value[0]
            self.changed(original_node, f"{value!r} -> {_SWAPS[str(value)]!r}")
            return updated_node.with_changes(value=f"{quote}{_SWAPS[str(value)]}{quote}")
        return updated_node

    def _in_compile(self, node: cst.CSTNode) -> bool:
        from libcst.metadata import ParentNodeProvider

        parent = self.get_metadata(ParentNodeProvider, node, None)
        while parent is not None:
            if isinstance(parent, cst.Call) and isinstance(parent.func, cst.Attribute) and \
                    parent.func.attr.value == "compile":
                return True
            parent = self.get_metadata(ParentNodeProvider, parent, None)
        return False

    def summary(self) -> str:
        return "use the sparse categorical loss for class-id labels (" + \
            "; ".join(self.edits) + ")"
