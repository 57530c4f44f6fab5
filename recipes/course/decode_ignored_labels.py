"""decode-ignored-labels: ``compute_metrics`` decodes label ids that still hold -100.

The collators for seq2seq and token tasks pad ``labels`` with -100 (the loss's
``ignore_index``), and ``Trainer`` pads predictions gathered across batches with -100
too. Decoding them fails in the fast tokenizer: ``OverflowError: number too small to fit
in target type`` (transformers 5.24, measured) or ``out of range integral type conversion
attempted`` (4.57.6). The HF course's summarization chapter does it before decoding:
``labels = np.where(labels != -100, labels, tokenizer.pad_token_id)``. The recipe wraps
each array given to ``decode``/``batch_decode`` inside the metrics function the same way
(the tokenizer of the call itself supplies the pad id, so every name resolves there).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, NotApplicable, Recipe, code, find

_DECODE = m.Call(func=m.Attribute(attr=m.Name("batch_decode") | m.Name("decode")))

_BEFORE = (
    "def compute_metrics(eval_pred):\n"
    "    preds, labels = eval_pred\n"
    "    label_text = tokenizer.batch_decode(labels, skip_special_tokens=True)\n"
    "    return {'n': len(label_text)}\n"
    "trainer = Seq2SeqTrainer(model=m, compute_metrics=compute_metrics)\n"
)


class PadIgnoredLabels(Recipe):
    id = "decode-ignored-labels"
    category = "decode-ignored-labels"
    requires_words = (("compute_metrics",), ("decode", "batch_decode"))
    title = "replace -100 by the pad token id before decoding in compute_metrics"
    nothing_to_do = "compute_metrics decodes nothing, or already replaces -100"

    examples = (
        Example(
            before=_BEFORE,
            after="import numpy as np\n\n" + _BEFORE.replace(  # wrapped past 88 columns
                "batch_decode(labels, skip_special_tokens=True)",
                "batch_decode(\n"
                "        np.where(labels != -100, labels, tokenizer.pad_token_id),\n"
                "        skip_special_tokens=True,\n"
                "    )"),
        ),
        Example(  # attributes, a method's tokenizer, both predictions and labels
            before=("import numpy as np\n"
                    "class M:\n"
                    "    def metrics(self, p):\n"
                    "        a = self.tok.batch_decode(p.predictions)\n"
                    "        b = self.tok.batch_decode(p.label_ids)\n"
                    "        return {}\n"
                    "    def fit(self):\n"
                    "        Trainer(compute_metrics=self.metrics)\n"),
            after=("import numpy as np\n"
                   "class M:\n"
                   "    def metrics(self, p):\n"
                   "        a = self.tok.batch_decode(\n"
                   "            np.where(p.predictions != -100, p.predictions, "
                   "self.tok.pad_token_id),\n"
                   "        )\n"
                   "        b = self.tok.batch_decode(\n"
                   "            np.where(p.label_ids != -100, p.label_ids, "
                   "self.tok.pad_token_id),\n"
                   "        )\n"
                   "        return {}\n"
                   "    def fit(self):\n"
                   "        Trainer(compute_metrics=self.metrics)\n"),
        ),
        Example(  # already replaced in the function
            before=("import numpy as np\n"
                    "def compute_metrics(p):\n"
                    "    preds, labels = p\n"
                    "    labels = np.where(labels != -100, labels, tokenizer.pad_token_id)\n"
                    "    return tokenizer.batch_decode(labels)\n"
                    "Trainer(compute_metrics=compute_metrics)\n"),
        ),
        Example(  # decoding outside compute_metrics: not this fault
            before="print(tokenizer.decode(ids))\n",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self.functions: set[str] = set()
        for arg in find(tree, m.Arg(keyword=m.Name("compute_metrics"))):
            value = cst.ensure_type(arg, cst.Arg).value
            if isinstance(value, cst.Name):
                self.functions.add(value.value)
            elif isinstance(value, cst.Attribute):
                self.functions.add(value.attr.value)
        if not self.functions:
            raise NotApplicable("no compute_metrics= function found")
        self.depth = 0
        return super().transform_module_impl(tree)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value in self.functions:
            if m.findall(node, m.Comparison(comparisons=[m.ZeroOrMore(), m.ComparisonTarget(
                    comparator=m.UnaryOperation(operator=m.Minus(),
                                                expression=m.Integer("100"))),
                    m.ZeroOrMore()])):
                self.reason = f"{node.name.value} already compares with -100"
                return
            self.depth += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if original_node.name.value in self.functions and self.depth:
            self.depth -= 1
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.depth or not m.matches(original_node, _DECODE) or not updated_node.args \
                or updated_node.args[0].keyword is not None:
            return updated_node
        tokenizer = code(cst.ensure_type(updated_node.func, cst.Attribute).value)
        ids = code(updated_node.args[0].value)
        if ids.startswith("np.where("):
            return updated_node
        AddImportsVisitor.add_needed_import(self.context, "numpy", asname="np")
        wrapped = cst.parse_expression(f"np.where({ids} != -100, {ids}, "
                                       f"{tokenizer}.pad_token_id)")
        self.changed(original_node, f"decode {ids} with -100 replaced by "
                                    f"{tokenizer}.pad_token_id")
        first = updated_node.args[0].with_changes(value=wrapped)
        return updated_node.with_changes(args=[first, *updated_node.args[1:]])
