"""keras-unconverted-inputs: Keras ``fit`` given the tokenizer's Python lists.

Public report: huggingface/transformers#9358 (``ValueError: Failed to find data adapter
that can handle input: (<class 'dict'> containing ... <class 'list'> ...)``): the
tokenizer without ``return_tensors`` returns lists of unequal lengths, and the labels are a
Python list; Keras takes arrays. Fix, as the library's TF examples tokenize for Keras: the
tokenizer call that makes ``fit``'s inputs gets ``padding=True, return_tensors="np"``, and
labels given as a list become ``np.array(...)``.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import PositionProvider

from autofix.toolkit import Example, code, keyword
from autofix.toolkit.scope import PlannedEdits, append_kw, replace_with
from autofix.toolkit.values import Values


class KerasNumpyInputs(PlannedEdits):
    id = "keras-numpy-inputs"
    category = "keras-unconverted-inputs"
    requires_words = (("fit",),)
    requires_imports = ("transformers",)
    title = "give Keras fit padded NumPy arrays from the tokenizer, and labels as an array"
    nothing_to_do = "no fit(...) on the failing line whose inputs come from a tokenizer call"

    examples = (
        Example(
            before=(
                "from transformers import AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "enc = tokenizer(texts, truncation=True)\n"
                "model.fit(dict(enc), df['label'].tolist(), epochs=1)\n"
            ),
            after=(
                "import numpy as np\n"
                "from transformers import AutoTokenizer\n"
                "\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "enc = tokenizer(texts, truncation=True, padding=True, return_tensors=\"np\")\n"
                "model.fit(dict(enc), np.array(df['label']), epochs=1)\n"
            ),
            line=4,
        ),
        Example(  # inputs that are not the tokenizer's
            before=(
                "from transformers import AutoTokenizer\n"
                "model.fit(dataset, epochs=1)\n"
            ),
            line=2,
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        line = self.rc.diagnosis.line
        program = self.program
        for call in program.calls:
            func = call.func
            position = self.get_metadata(PositionProvider, call)
            if not (isinstance(func, cst.Attribute) and func.attr.value == "fit") \
                    or not line or not position.start.line <= line <= position.end.line:
                continue
            plain = [a for a in call.args if a.keyword is None and not a.star]
            x = keyword(call, "x") or (plain[0] if plain else None)
            y = keyword(call, "y") or (plain[1] if len(plain) > 1 else None)
            if x is None:
                continue
            inputs = x.value
            if m.matches(inputs, m.Call(func=m.Name("dict"), args=[m.Arg()])):
                inputs = cst.ensure_type(inputs, cst.Call).args[0].value
            made = [v for v in self.values.origins(inputs) if isinstance(v, cst.Call)
                    and program.is_tokenizer(v.func)]
            if not made:
                self.reason = f"fit's inputs {code(x.value)} do not come from a tokenizer call"
                continue
            for tokenize in made:
                if keyword(tokenize, "padding") is None:
                    self.plan_edit(tokenize, append_kw("padding", cst.Name("True")),
                                   f"padding=True at line {program.line(tokenize)}")
                if keyword(tokenize, "return_tensors") is None:
                    self.plan_edit(tokenize, append_kw("return_tensors",
                                                       cst.SimpleString('"np"')),
                                   f'return_tensors="np" at line {program.line(tokenize)}')
            if y is not None and self._listish(y.value):
                self._array(y.value)

    def _listish(self, value: cst.BaseExpression) -> bool:
        """A list: ``x.tolist()``, a list literal or ``list(...)``."""
        return m.matches(value, m.Call(func=m.Attribute(attr=m.Name("tolist")), args=[])
                         | m.List() | m.Call(func=m.Name("list")))

    def _array(self, value: cst.BaseExpression) -> None:
        inner = value
        if m.matches(value, m.Call(func=m.Attribute(attr=m.Name("tolist")), args=[])):
            inner = cst.ensure_type(cst.ensure_type(value, cst.Call).func, cst.Attribute).value
        if not any(isinstance(t, (cst.Import, cst.ImportFrom))
                   for t in self.program.resolve("np", value)):
            AddImportsVisitor.add_needed_import(self.context, "numpy", asname="np")
        new = cst.parse_expression(f"np.array({code(inner)})")
        self.plan_edit(value, replace_with(new), f"labels as {code(new)}")
