"""int-labels-on-multi-label-head: multi-hot label rows built as integers.

Public report: huggingface/transformers#4337. With ``problem_type`` unset, transformers
5.24 picks the loss from the labels' dtype: integer ``[B, C]`` rows select single-label
cross-entropy (``Expected input batch_size (16) to match target batch_size (48)``); with
``problem_type="multi_label_classification"`` the BCE loss cannot take them (``result type
Float can't be cast to the desired output type Long``), both measured. Float rows select the
multi-label loss and feed it. The fix casts where the rows are built: in the function given
to ``Dataset.map`` that writes the label column (``enc["labels"] = ...`` or ``return
{"label": ...}``), the integer values of the row become floats (``int(x)`` -> ``float(x)``,
``1 if c else 0`` -> ``1.0 if c else 0.0``, an integer literal -> a float literal).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, Recipe
from autofix.toolkit.scope import string_value

from .._mapfn import map_function_names, map_lambdas

LABEL_KEYS = ("labels", "label")


class _Floats(cst.CSTTransformer):
    """Integer values of a label expression turned into floats."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if m.matches(updated_node.func, m.Name("int")) and \
                len(updated_node.args) == 1:
            self.count += 1
            return updated_node.with_changes(func=cst.Name("float"))
        return updated_node

    def leave_Integer(self, original_node: cst.Integer, updated_node: cst.Integer
                      ) -> cst.BaseExpression:
        if updated_node.value in ("0", "1"):
            self.count += 1
            return cst.Float(updated_node.value + ".0")
        return updated_node

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        return False  # indexes stay integers

    def visit_Call(self, node: cst.Call) -> bool:
        return not m.matches(node.func, m.Name("range") | m.Name("len") | m.Name("enumerate"))


class CastMultiHotFloat(Recipe):
    id = "cast-multi-hot-float"
    category = "int-labels-on-multi-label-head"
    requires_words = (("map",),)
    requires_imports = ("datasets",)
    title = "build the multi-hot label rows as floats"
    nothing_to_do = ("no function given to Dataset.map writes the label column with integer "
                     "values autofix can cast")
    restores = ("int-labels-on-multi-label-head",)

    examples = (
        Example(
            before=(
                "from datasets import load_dataset\n"
                "def topics(example):\n"
                "    words = set(example['text'].split())\n"
                "    return {'label': [int(bool(words & v)) for v in TOPICS.values()]}\n"
                "train = load_dataset('json', data_files='x.json')['train'].map(topics)\n"
            ),
            after=(
                "from datasets import load_dataset\n"
                "def topics(example):\n"
                "    words = set(example['text'].split())\n"
                "    return {'label': [float(bool(words & v)) for v in TOPICS.values()]}\n"
                "train = load_dataset('json', data_files='x.json')['train'].map(topics)\n"
            ),
        ),
        Example(  # enc["labels"] = ... in a batched map function
            before=(
                "import datasets\n"
                "def encode(batch):\n"
                "    enc = tok(batch['text'])\n"
                "    enc['labels'] = [[1 if t in p else 0 for t in TOPICS]\n"
                "                     for p in batch['text']]\n"
                "    return enc\n"
                "train = raw.map(encode, batched=True)\n"
            ),
            after=(
                "import datasets\n"
                "def encode(batch):\n"
                "    enc = tok(batch['text'])\n"
                "    enc['labels'] = [[1.0 if t in p else 0.0 for t in TOPICS]\n"
                "                     for p in batch['text']]\n"
                "    return enc\n"
                "train = raw.map(encode, batched=True)\n"
            ),
        ),
        Example(  # labels already floats: nothing to cast
            before=(
                "import datasets\n"
                "def encode(batch):\n"
                "    enc = tok(batch['text'])\n"
                "    enc['labels'] = [[float(t in p) for t in TOPICS] for p in batch['text']]\n"
                "    return enc\n"
                "train = raw.map(encode, batched=True)\n"
            ),
        ),
    )

    def visit_Module(self, node: cst.Module) -> bool:
        self.functions = map_function_names(node)
        self.lambdas = map_lambdas(node)
        return True

    def _in_map_function(self, node: cst.CSTNode) -> bool:
        for anc in self._ancestors(node):
            if isinstance(anc, cst.FunctionDef) and anc.name.value in self.functions:
                return True
            if isinstance(anc, cst.Lambda) and any(anc is lam for lam in self.lambdas):
                return True
        return False

    def _ancestors(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        from libcst.metadata import ParentNodeProvider

        out = []
        parent = self.get_metadata(ParentNodeProvider, node, None)
        while parent is not None:
            out.append(parent)
            parent = self.get_metadata(ParentNodeProvider, parent, None)
        return out

    def _cast(self, original: cst.CSTNode, value: cst.BaseExpression) -> cst.BaseExpression:
        floats = _Floats()
        new = value.visit(floats)
        if floats.count and isinstance(new, cst.BaseExpression):
            self.changed(original, "multi-hot label values built as floats")
            return new
        return value

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        if len(original_node.targets) != 1 or not self._in_map_function(original_node):
            return updated_node
        target = original_node.targets[0].target
        if isinstance(target, cst.Subscript) and len(target.slice) == 1 and \
                isinstance(target.slice[0].slice, cst.Index) and \
                string_value(target.slice[0].slice.value) in LABEL_KEYS:
            return updated_node.with_changes(value=self._cast(original_node,
                                                              updated_node.value))
        return updated_node

    def leave_DictElement(self, original_node: cst.DictElement,
                          updated_node: cst.DictElement) -> cst.DictElement:
        if string_value(original_node.key) in LABEL_KEYS and \
                self._in_map_function(original_node) and \
                isinstance(original_node.value, (cst.List, cst.ListComp)):
            return updated_node.with_changes(value=self._cast(original_node,
                                                              updated_node.value))
        return updated_node

    def summary(self) -> str:
        return ("build the multi-hot label rows as floats (integer rows select the "
                "single-label loss, or break the multi-label one)")

