"""ragged-batch: a Trainer built in another module (or by a helper the script imports).

The same fault as :mod:`recipes.ragged_batch` (no tokenizer, no padding collator: the
default collator stacks rows of different lengths, ``expected sequence of length 6 at dim
1 (got 5)``), where the ``Trainer(...)`` call is out of reach of the tokenizer: it sits in
a module of the project (``trainer = build_trainer(model, ds)``) that never sees one, so
:mod:`recipes.ragged_batch` finds no tokenizer to give it there. The fix is made where the
script trains: ``trainer.data_collator = DataCollatorWithPadding(tokenizer)`` just before
the ``trainer.train()`` that failed, with the tokenizer the script holds there. The
Trainer reads ``self.data_collator`` each time it builds a loader (``get_train_dataloader``
and the evaluation loaders), so the attribute set after construction pads every batch.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, code, insert
from autofix.toolkit.operators import insert_statement
from autofix.toolkit.scope import PlannedEdits


class SetCollatorBeforeTrain(PlannedEdits):
    id = "ragged-batch-set-collator"
    category = "ragged-batch"
    requires_words = (("train",),)
    requires_imports = ("transformers",)
    title = "give the Trainer a padding collator where the script trains"
    nothing_to_do = ("no trainer.train() on the failing line whose Trainer is built "
                     "elsewhere, with a tokenizer in scope")

    examples = (
        Example(
            before=(
                "from transformers import AutoTokenizer\n"
                "from setup import build_trainer\n"
                "tok = AutoTokenizer.from_pretrained(ckpt)\n"
                "trainer = build_trainer(model, ds)\n"
                "trainer.train()\n"
            ),
            after=(
                "from transformers import AutoTokenizer, DataCollatorWithPadding\n"
                "from setup import build_trainer\n"
                "tok = AutoTokenizer.from_pretrained(ckpt)\n"
                "trainer = build_trainer(model, ds)\n"
                "trainer.data_collator = DataCollatorWithPadding(tok)\n"
                "trainer.train()\n"
            ),
            evidence="ValueError: expected sequence of length 6 at dim 1 (got 5)",
            line=5,
        ),
        Example(  # the Trainer is built here: recipes.ragged_batch gives it the tokenizer
            before=(
                "from transformers import AutoTokenizer, Trainer\n"
                "tok = AutoTokenizer.from_pretrained(ckpt)\n"
                "trainer = Trainer(model, args, train_dataset=ds)\n"
                "trainer.train()\n"
            ),
            evidence="ValueError: expected sequence of length 6 at dim 1 (got 5)",
            line=4,
        ),
        Example(  # no tokenizer in the script
            before=(
                "import transformers\n"
                "from setup import build_trainer\n"
                "trainer = build_trainer(model, ds)\n"
                "trainer.train()\n"
            ),
            evidence="ValueError: expected sequence of length 6 at dim 1 (got 5)",
            line=4,
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        line = self.rc.diagnosis.line
        for call in self.program.calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "train"
                    and line and self.program.line(call) == line):
                continue
            receiver = func.value
            if any(isinstance(v, cst.Call) and self.program.is_trainer_call(v)
                   for v in self.program.values(receiver)):
                self.reason = "the Trainer is built in this file (the ragged-batch recipe's)"
                continue
            tokenizer = self.program.tokenizer_in_scope(call)
            if tokenizer is None:
                self.reason = f"no tokenizer is in scope at line {line}"
                continue
            AddImportsVisitor.add_needed_import(self.context, "transformers",
                                                "DataCollatorWithPadding")
            text = f"{code(receiver)}.data_collator = DataCollatorWithPadding({code(tokenizer)})"
            insert_statement(self, insert.enclosing_statement(self, call), text,
                             f"{text} before {code(receiver)}.train() (line {line})")
            return
