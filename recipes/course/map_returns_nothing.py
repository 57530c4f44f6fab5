"""map-returns-nothing: the function given to ``Dataset.map`` does not return its result.

``map`` keeps a dataset unchanged when the function returns ``None``, so the "tokenized"
dataset still holds raw text and the model gets no ``input_ids`` (the ``raw-dataset``
symptoms, or ``IndexError`` on older releases). Fix: the function's last statement, the
tokenizer call, is returned (or the variable it was assigned to).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, Recipe, find

_BEFORE = (
    "def tokenize(examples):\n"
    "    tokenizer(examples['premise'], truncation=True)  # tokenize\n"
    "\n"
    "tokenized = raw.map(tokenize, batched=True)\n"
)


class ReturnFromMapFunction(Recipe):
    id = "map-returns-nothing"
    category = "map-returns-nothing"
    requires_words = (("map",),)
    #: A map function without return shows the raw-dataset faces (datasets 5 keeps the
    #: dataset unchanged): try it there too; it only applies when a function given to
    #: ``.map`` really has no ``return``.
    also_fixes = ("raw-dataset",)
    title = "return the result from the function given to Dataset.map"
    nothing_to_do = "every function given to .map(...) returns a value"

    examples = (
        Example(
            before=_BEFORE,
            after=_BEFORE.replace("    tokenizer(", "    return tokenizer("),
        ),
        Example(
            before=(
                "def prep(batch):\n"
                "    out = tok(batch['text'])\n"
                "ds = ds.map(prep)\n"
            ),
            after=(
                "def prep(batch):\n"
                "    out = tok(batch['text'])\n"
                "    return out\n"
                "ds = ds.map(prep)\n"
            ),
        ),
        Example(  # the course's chapter 7 function: the result is built up, then forgotten
            before=(
                "def tokenize_function(examples):\n"
                "    result = tokenizer(examples['text'])\n"
                "    if tokenizer.is_fast:\n"
                "        result['word_ids'] = [result.word_ids(i) for i in range(3)]\n"
                "ds = ds.map(tokenize_function, batched=True)\n"
            ),
            after=(
                "def tokenize_function(examples):\n"
                "    result = tokenizer(examples['text'])\n"
                "    if tokenizer.is_fast:\n"
                "        result['word_ids'] = [result.word_ids(i) for i in range(3)]\n"
                "    return result\n"
                "ds = ds.map(tokenize_function, batched=True)\n"
            ),
        ),
        Example(  # already returns
            before="def f(x):\n    return tok(x['text'])\nds = ds.map(f)\n",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self.functions = {
            cst.ensure_type(c, cst.Call).args[0].value.value  # type: ignore[attr-defined]
            for c in find(tree, m.Call(func=m.Attribute(attr=m.Name("map")),
                                            args=[m.Arg(value=m.Name(), keyword=None),
                                                  m.ZeroOrMore()]))
        }
        return super().transform_module_impl(tree)

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        name = original_node.name.value
        if name not in self.functions or m.findall(updated_node, m.Return()):
            return updated_node
        body = list(updated_node.body.body)
        last = body[-1] if body else None
        stmt = last.body[0] if isinstance(last, cst.SimpleStatementLine) else None
        if isinstance(last, cst.SimpleStatementLine) and isinstance(stmt, cst.Expr) \
                and isinstance(stmt.value, cst.Call):
            body[-1] = last.with_changes(body=[cst.Return(value=stmt.value)])
            self.changed(original_node, f"{name} returns its tokenizer call")
        else:  # return the variable the tokenizer's output was first assigned to
            var = next((cst.ensure_type(s.body[0], cst.Assign).targets[0].target
                        for s in body if isinstance(s, cst.SimpleStatementLine)
                        and m.matches(s.body[0], m.Assign(targets=[m.AssignTarget(
                            target=m.Name())], value=m.Call()))), None)
            if not isinstance(var, cst.Name):
                return updated_node
            body.append(cst.parse_statement(f"return {var.value}\n"))
            self.changed(original_node, f"{name} returns {var.value}")
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))
