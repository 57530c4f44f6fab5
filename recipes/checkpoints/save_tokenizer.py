"""tokenizer-not-saved: the tokenizer is reloaded from a folder only the model was saved to.

Public report: FreedomIntelligence/GrammarGPT#3 (``OSError: Can't load tokenizer for
...`` on transformers 4; transformers 5 raises nothing and builds a tokenizer without the
training vocabulary). ``model.save_pretrained(out)`` writes the model only; a later
``AutoTokenizer.from_pretrained(out)`` finds no tokenizer there. Fix, as the library's
docs save a fine-tuned model: ``tokenizer.save_pretrained(out)`` right after
``model.save_pretrained(out)``, with the tokenizer the script trained with (the one in
scope there), for each folder the script later loads a tokenizer from. The same after
``trainer.save_model(out)`` (or ``trainer.save_model()``, which saves to
``trainer.args.output_dir``) when the ``Trainer`` has no tokenizer of its own to save: no
``processing_class=`` (``tokenizer=`` on transformers 4) and no ``data_collator`` built
with one (transformers 5 saves ``data_collator.tokenizer`` then, ``Trainer._save``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, argument, code, insert, patterns
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.values import Values


class SaveTokenizer(PlannedEdits):
    id = "save-tokenizer"
    category = "tokenizer-not-saved"
    requires_words = (("save_pretrained", "save_model"), ("from_pretrained",))
    requires_imports = ("transformers",)
    title = "save the tokenizer next to the model it is reloaded with"
    nothing_to_do = ("no model.save_pretrained(folder) or trainer.save_model(folder) whose "
                     "folder a tokenizer is later loaded from")

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
        Example(  # a Trainer without a tokenizer saves the model only
            before=(
                "from transformers import AutoTokenizer, Trainer, TrainingArguments\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "trainer = Trainer(model=model, args=TrainingArguments(output_dir='out'))\n"
                "trainer.train()\n"
                "trainer.save_model('final')\n"
                "tok = AutoTokenizer.from_pretrained('final')\n"
            ),
            after=(
                "from transformers import AutoTokenizer, Trainer, TrainingArguments\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "trainer = Trainer(model=model, args=TrainingArguments(output_dir='out'))\n"
                "trainer.train()\n"
                "trainer.save_model('final')\n"
                "tokenizer.save_pretrained('final')\n"
                "tok = AutoTokenizer.from_pretrained('final')\n"
            ),
        ),
        Example(  # save_model() writes to the arguments' output_dir
            before=(
                "from transformers import AutoTokenizer, Trainer, TrainingArguments\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "out = 'runs/clf'\n"
                "args = TrainingArguments(output_dir=out)\n"
                "trainer = Trainer(model=model, args=args)\n"
                "trainer.save_model()\n"
                "tok = AutoTokenizer.from_pretrained(out)\n"
            ),
            after=(
                "from transformers import AutoTokenizer, Trainer, TrainingArguments\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "out = 'runs/clf'\n"
                "args = TrainingArguments(output_dir=out)\n"
                "trainer = Trainer(model=model, args=args)\n"
                "trainer.save_model()\n"
                "tokenizer.save_pretrained(trainer.args.output_dir)\n"
                "tok = AutoTokenizer.from_pretrained(out)\n"
            ),
        ),
        Example(  # reloaded from the arguments' field
            before=(
                "from transformers import AutoTokenizer, Trainer, TrainingArguments\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "args = TrainingArguments(tempfile.mkdtemp())\n"
                "trainer = Trainer(model, args)\n"
                "trainer.save_model()\n"
                "tok = AutoTokenizer.from_pretrained(args.output_dir)\n"
            ),
            after=(
                "from transformers import AutoTokenizer, Trainer, TrainingArguments\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "args = TrainingArguments(tempfile.mkdtemp())\n"
                "trainer = Trainer(model, args)\n"
                "trainer.save_model()\n"
                "tokenizer.save_pretrained(trainer.args.output_dir)\n"
                "tok = AutoTokenizer.from_pretrained(args.output_dir)\n"
            ),
        ),
        Example(  # the Trainer saves its processing_class itself
            before=(
                "from transformers import AutoTokenizer, Trainer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "trainer = Trainer(model=model, processing_class=tokenizer)\n"
                "trainer.save_model('final')\n"
                "tok = AutoTokenizer.from_pretrained('final')\n"
            ),
        ),
        Example(  # ... and a collator's tokenizer (transformers 5)
            before=(
                "from transformers import AutoTokenizer, DataCollatorWithPadding, Trainer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "collator = DataCollatorWithPadding(tokenizer)\n"
                "trainer = Trainer(model=model, data_collator=collator)\n"
                "trainer.save_model('final')\n"
                "tok = AutoTokenizer.from_pretrained('final')\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        program = self.program
        loads = [c.args[0].value for c in program.calls if c.args
                 and c.args[0].keyword is None
                 and self.is_qualified(c.func, patterns.TOKENIZER)]
        saves = [c for c in program.calls if isinstance(c.func, cst.Attribute)
                 and c.func.attr.value == "save_pretrained" and c.args]
        targets = [(c, c.args[0].value, code(c.args[0].value)) for c in saves]
        targets += self._trainer_saves()
        for call, folder, written in targets:
            receiver = cst.ensure_type(call.func, cst.Attribute).value
            if program.is_tokenizer(receiver):
                continue
            if not any(self._same(folder, loaded) and program.line(loaded) > program.line(call)
                       for loaded in loads):
                continue
            if any(program.is_tokenizer(cst.ensure_type(c.func, cst.Attribute).value)
                   and (self._same(c.args[0].value, folder) or code(c.args[0].value) == written)
                   for c in saves):
                self.reason = f"the tokenizer is saved to {code(folder)} already"
                continue
            tokenizer = program.tokenizer_in_scope(call)
            if tokenizer is None:
                self.reason = (f"no tokenizer is in scope where the model is saved to "
                               f"{code(folder)} (line {program.line(call)})")
                continue
            statement = insert.enclosing_statement(self, call)
            line = f"{code(tokenizer)}.save_pretrained({written})"
            self.plan_edit(statement, _after(insert.parse_statement(line)),
                           f"{line} after the model is saved there (line "
                           f"{program.line(call)})")

    def _trainer_saves(self) -> list[tuple[cst.Call, cst.BaseExpression, str]]:
        """``trainer.save_model(folder)`` / ``trainer.save_model()`` calls of a ``Trainer``
        that has no tokenizer to save, each with the folder it writes (for no argument:
        the ``output_dir`` of the Trainer's arguments, when the module shows it) and that
        folder as the fix writes it (``trainer.args.output_dir`` for no argument)."""
        program = self.program
        out = []
        for call in program.calls:
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "save_model"):
                continue
            trainers = [v for v in self.values.origins(call.func.value)
                        if isinstance(v, cst.Call) and program.is_trainer_call(v)]
            if not trainers or any(self._saves_a_tokenizer(t) for t in trainers):
                continue
            folder = argument(call, "output_dir", 0)
            if folder is not None:
                out.append((call, folder, code(folder)))
                continue
            folder = self._output_dir(trainers[0])
            if folder is not None:
                out.append((call, folder, f"{code(call.func.value)}.args.output_dir"))
        return out

    def _saves_a_tokenizer(self, trainer: cst.Call) -> bool:
        """The Trainer saves a tokenizer itself: ``processing_class=`` / ``tokenizer=``
        given (not ``None``), or a ``data_collator`` built with a tokenizer argument."""
        for arg in trainer.args:
            keyword = arg.keyword.value if arg.keyword else ""
            if keyword in ("processing_class", "tokenizer") \
                    and not m.matches(arg.value, m.Name("None")):
                return True
            if keyword == "data_collator":
                for value in self.values.origins(arg.value):
                    if isinstance(value, cst.Call) and any(
                            self.program.is_tokenizer(a.value) for a in value.args):
                        return True
        return False

    def _output_dir(self, trainer: cst.Call) -> cst.BaseExpression | None:
        """The ``output_dir`` of the ``TrainingArguments`` given as the Trainer's ``args``
        (keyword or second positional)."""
        given = argument(trainer, "args", 1)
        if given is None:
            return None
        for value in self.values.origins(given):
            if isinstance(value, cst.Call):
                folder = argument(value, "output_dir", 0)
                if folder is not None:
                    return folder
        return None

    def _same(self, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
        a, b = self._field(a), self._field(b)
        return self.program.same_value(a, b) or (
            isinstance(a, cst.SimpleString) and code(a) == code(b))

    def _field(self, expr: cst.BaseExpression, depth: int = 0) -> cst.BaseExpression:
        """``args.output_dir`` (``trainer.args.output_dir``) as the argument that set it:
        the keyword of the same name in the call that built ``args`` (``TrainingArguments``
        keeps its arguments as fields), else ``expr``."""
        if not isinstance(expr, cst.Attribute) or depth > 3:
            return expr
        owner = self._field(expr.value, depth + 1)
        for value in self.values.origins(owner):
            if isinstance(value, cst.Call):
                name = expr.attr.value  # only output_dir is also TrainingArguments' first
                given = argument(value, name, 0 if name == "output_dir" else len(value.args))
                if given is not None:
                    return given
        return expr


def _after(new: insert.Statement) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """Edit: the statement followed by ``new`` (LibCST splices the pair into its block)."""
    def edit(node: cst.CSTNode) -> cst.CSTNode:
        return cast(cst.CSTNode, cst.FlattenSentinel([cast(insert.Statement, node), new]))
    return edit
