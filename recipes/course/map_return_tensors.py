"""map-return-tensors: a tokenizer asked for tensors inside the function given to
``Dataset.map``.

``tokenizer(batch["text"], truncation=True, return_tensors="pt")`` in a batched map
function must make one rectangular tensor of the batch; without padding the rows differ
in length and the tokenizer raises ``ValueError: Unable to create tensor, you should
probably activate truncation and/or padding ...`` (transformers 5.24 and 4.57.6, measured;
the cause chained under it is ``expected sequence of length 8 at dim 1 (got 14)``). The
message is the one a collator raises for unpadded batches, but here it is raised in the
map function, and datasets stores lists anyway, so the tensors buy nothing. Fix: drop
``return_tensors`` from the calls inside the map function; batches are padded later by
the collator (``Trainer`` pads with the tokenizer or ``DataCollatorWithPadding``; without
one the next run shows ``ragged-batch``, which has its own recipe).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, Recipe, keyword, remove_keyword

from .._mapfn import map_function_names, map_lambdas

#: Tensor methods applied to the tokenizer's output: without return_tensors they fail on
#: lists, so the recipe leaves such functions alone.
_TENSOR_METHODS = ("squeeze", "unsqueeze", "flatten", "numpy", "view", "reshape", "to")

_BEFORE = (
    "def tokenize(batch):\n"
    "    return tokenizer(batch['text'], truncation=True, return_tensors='pt')\n"
    "\n"
    "tok = raw.map(tokenize, batched=True)\n"
)


class DropReturnTensorsInMap(Recipe):
    id = "map-return-tensors"
    category = "map-return-tensors"
    title = "drop return_tensors from the tokenizer call in the Dataset.map function"
    nothing_to_do = "no call inside a function given to .map(...) asks for return_tensors"

    examples = (
        Example(before=_BEFORE, after=_BEFORE.replace(", return_tensors='pt')", ")")),
        Example(  # a method, a lambda, other names, a multi-line call
            before=(
                "class Prep:\n"
                "    def encode(self, rows):\n"
                "        enc = self.tok(\n"
                "            rows['sentence'],\n"
                "            return_tensors=\"pt\",\n"
                "            truncation=True,\n"
                "        )\n"
                "        return enc\n"
                "    def run(self, ds):\n"
                "        return ds.map(self.encode, batched=True)\n"
                "other = ds.map(lambda b: tk(b['q'], return_tensors='np'), batched=True)\n"
            ),
            after=(
                "class Prep:\n"
                "    def encode(self, rows):\n"
                "        enc = self.tok(\n"
                "            rows['sentence'],\n"
                "            truncation=True,\n"
                "        )\n"
                "        return enc\n"
                "    def run(self, ds):\n"
                "        return ds.map(self.encode, batched=True)\n"
                "other = ds.map(lambda b: tk(b['q']), batched=True)\n"
            ),
        ),
        Example(  # functools.partial and function=
            before=(
                "from functools import partial\n"
                "def enc(b, tokenizer):\n"
                "    return tokenizer(b['text'], return_tensors='pt', max_length=32)\n"
                "ds = ds.map(function=partial(enc, tokenizer=tok), batched=True)\n"
            ),
            after=(
                "from functools import partial\n"
                "def enc(b, tokenizer):\n"
                "    return tokenizer(b['text'], max_length=32)\n"
                "ds = ds.map(function=partial(enc, tokenizer=tok), batched=True)\n"
            ),
        ),
        Example(  # return_tensors outside any map function: a collator, left alone
            before=(
                "def collate(rows):\n"
                "    return tokenizer([r['text'] for r in rows], padding=True, "
                "return_tensors='pt')\n"
                "tok = raw.map(lambda b: tokenizer(b['text']), batched=True)\n"
            ),
        ),
        Example(  # the tensors are used as tensors: dropping them would break the function
            before=(
                "def tokenize(x):\n"
                "    enc = tokenizer(x['text'], return_tensors='pt')\n"
                "    return {k: v.squeeze(0) for k, v in enc.items()}\n"
                "ds = ds.map(tokenize)\n"
            ),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self.functions = map_function_names(tree)
        self.lambdas = {id(lam) for lam in map_lambdas(tree)}
        if not self.functions and not self.lambdas:
            raise NotApplicable("no function is given to .map(...)")
        self.depth = 0
        return super().transform_module_impl(tree)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node.name.value in self.functions:
            if m.findall(node, m.Call(func=m.Attribute(attr=m.OneOf(
                    *(m.Name(n) for n in _TENSOR_METHODS))))) and \
                    m.findall(node, m.Arg(keyword=m.Name("return_tensors"))):
                self.reason = (f"{node.name.value} uses the tokenizer's tensors (tensor "
                               "methods on its output); left as it is")
                return False
            self.depth += 1
        return True

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if original_node.name.value in self.functions and self.depth:
            self.depth -= 1
        return updated_node

    def visit_Lambda(self, node: cst.Lambda) -> None:
        if id(node) in self.lambdas:
            self.depth += 1

    def leave_Lambda(self, original_node: cst.Lambda, updated_node: cst.Lambda
                     ) -> cst.Lambda:
        if id(original_node) in self.lambdas:
            self.depth -= 1
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.depth or keyword(updated_node, "return_tensors") is None:
            return updated_node
        self.changed(original_node, "drop return_tensors from the tokenizer call in the "
                                    "Dataset.map function")
        return remove_keyword(updated_node, "return_tensors")
