"""tokenizer-not-saved: the tokenizer is reloaded from a folder only the model was saved to.

Public report: FreedomIntelligence/GrammarGPT#3 (``OSError: Can't load tokenizer for
...`` on transformers 4; transformers 5 raises nothing and builds a tokenizer without the
training vocabulary). ``model.save_pretrained(out)`` writes the model only; a later
``AutoTokenizer.from_pretrained(out)`` finds no tokenizer there. Fix, as the library's
docs save a fine-tuned model: ``tokenizer.save_pretrained(out)`` right after
``model.save_pretrained(out)``, with the tokenizer the script trained with (the one in
scope there), for each folder the script later loads a tokenizer from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import libcst as cst

from autofix.toolkit import Example, code, insert, patterns
from autofix.toolkit.scope import PlannedEdits


class SaveTokenizer(PlannedEdits):
    id = "save-tokenizer"
    category = "tokenizer-not-saved"
    requires_words = (("save_pretrained",), ("from_pretrained",))
    requires_imports = ("transformers",)
    title = "save the tokenizer next to the model it is reloaded with"
    nothing_to_do = ("no model.save_pretrained(folder) whose folder a tokenizer is later "
                     "loaded from")

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "train(model, tokenizer)\n"
                "model.save_pretrained(output_dir)\n"
                "\n"
                "clf_model = AutoModelForSequenceClassification.from_pretrained(output_dir)\n"
                "clf_tokenizer = AutoTokenizer.from_pretrained(output_dir)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "train(model, tokenizer)\n"
                "model.save_pretrained(output_dir)\n"
                "tokenizer.save_pretrained(output_dir)\n"
                "\n"
                "clf_model = AutoModelForSequenceClassification.from_pretrained(output_dir)\n"
                "clf_tokenizer = AutoTokenizer.from_pretrained(output_dir)\n"
            ),
        ),
        Example(  # the tokenizer is saved already
            before=(
                "from transformers import AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "model.save_pretrained(out)\n"
                "tokenizer.save_pretrained(out)\n"
                "tok = AutoTokenizer.from_pretrained(out)\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        program = self.program
        loads = [c.args[0].value for c in program.calls if c.args
                 and c.args[0].keyword is None
                 and self.is_qualified(c.func, patterns.TOKENIZER)]
        saves = [c for c in program.calls if isinstance(c.func, cst.Attribute)
                 and c.func.attr.value == "save_pretrained" and c.args]
        for call in saves:
            folder = call.args[0].value
            receiver = cst.ensure_type(call.func, cst.Attribute).value
            if program.is_tokenizer(receiver):
                continue
            if not any(self._same(folder, loaded) and program.line(loaded) > program.line(call)
                       for loaded in loads):
                continue
            if any(program.is_tokenizer(cst.ensure_type(c.func, cst.Attribute).value)
                   and self._same(c.args[0].value, folder) for c in saves):
                self.reason = f"the tokenizer is saved to {code(folder)} already"
                continue
            tokenizer = program.tokenizer_in_scope(call)
            if tokenizer is None:
                self.reason = (f"no tokenizer is in scope where the model is saved to "
                               f"{code(folder)} (line {program.line(call)})")
                continue
            statement = insert.enclosing_statement(self, call)
            line = f"{code(tokenizer)}.save_pretrained({code(folder)})"
            self.plan_edit(statement, _after(insert.parse_statement(line)),
                           f"{line} after the model is saved there (line "
                           f"{program.line(call)})")

    def _same(self, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
        return self.program.same_value(a, b) or (
            isinstance(a, cst.SimpleString) and code(a) == code(b))


def _after(new: insert.Statement) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """Edit: the statement followed by ``new`` (LibCST splices the pair into its block)."""
    def edit(node: cst.CSTNode) -> cst.CSTNode:
        return cast(cst.CSTNode, cst.FlattenSentinel([cast(insert.Statement, node), new]))
    return edit
