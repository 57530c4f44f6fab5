"""token-labels-not-padded: per-token labels with a collator that pads only the inputs.

Public report: huggingface/transformers#8146 (``tokenizer.pad`` pads the inputs but not
the ``labels``; "Unable to create tensor ... Perhaps your features (`labels` in this case)
have excessive nesting"). Fix, as the library's answer there: token classification uses
``DataCollatorForTokenClassification``, which pads the labels with -100. A
``DataCollatorWithPadding(...)`` becomes one; a ``Trainer`` given no ``data_collator`` (its
default, ``DataCollatorWithPadding(processing_class)``, pads the inputs only) gets the
script's own ``DataCollatorForTokenClassification`` variable when one is bound there (the
official ``run_ner.py`` defines ``data_collator``), else a new one on the tokenizer in scope.
Applied only when the script trains a token-classification model.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, code, keyword, patterns
from autofix.toolkit.scope import PlannedEdits, append_kw, replace_with
from autofix.toolkit.values import Values

_NEW = "DataCollatorForTokenClassification"


class TokenClassificationCollator(PlannedEdits):
    id = "token-classification-collator"
    category = "token-labels-not-padded"
    requires_words = (("DataCollatorWithPadding", "Trainer", "Seq2SeqTrainer"),)
    requires_imports = ("transformers",)
    title = "pad per-token labels with DataCollatorForTokenClassification"
    #: padding the labels is right only for labels aligned with the tokens; unaligned
    #: word tags stop crashing once padded, and train on the wrong tokens
    restores = ("token-labels-misaligned",)
    nothing_to_do = "no DataCollatorWithPadding(...) to replace, no Trainer without a collator"

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForTokenClassification, "
                "DataCollatorWithPadding\n"
                "model = AutoModelForTokenClassification.from_pretrained(ckpt, num_labels=9)\n"
                "collator = DataCollatorWithPadding(tokenizer)\n"
            ),
            after=(  # the import line keeps its (sorted) order, wrapped as isort wraps it
                "from transformers import (\n"
                "    AutoModelForTokenClassification,\n"
                "    DataCollatorForTokenClassification,\n"
                "    DataCollatorWithPadding,\n"
                ")\n"
                "model = AutoModelForTokenClassification.from_pretrained(ckpt, num_labels=9)\n"
                "collator = DataCollatorForTokenClassification(tokenizer)\n"),
        ),
        Example(  # Trainer without a collator: the script's own token collator
            before=(
                "from transformers import (AutoModelForTokenClassification,\n"
                "                          DataCollatorForTokenClassification, Trainer)\n"
                "model = AutoModelForTokenClassification.from_pretrained(ckpt, num_labels=9)\n"
                "data_collator = DataCollatorForTokenClassification(tokenizer)\n"
                "trainer = Trainer(\n"
                "    model=model,\n"
                "    train_dataset=train_ds,\n"
                "    processing_class=tokenizer,\n"
                ")\n"
            ),
            after=(
                "from transformers import (AutoModelForTokenClassification,\n"
                "                          DataCollatorForTokenClassification, Trainer)\n"
                "model = AutoModelForTokenClassification.from_pretrained(ckpt, num_labels=9)\n"
                "data_collator = DataCollatorForTokenClassification(tokenizer)\n"
                "trainer = Trainer(\n"
                "    model=model,\n"
                "    train_dataset=train_ds,\n"
                "    processing_class=tokenizer,\n"
                "    data_collator=data_collator,\n"
                ")\n"
            ),
        ),
        Example(  # none defined: a new one on the tokenizer in scope
            before=(
                "from transformers import AutoModelForTokenClassification, AutoTokenizer, "
                "Trainer\n"
                "tok = AutoTokenizer.from_pretrained(ckpt)\n"
                "model = AutoModelForTokenClassification.from_pretrained(ckpt, num_labels=9)\n"
                "trainer = Trainer(model=model, train_dataset=train_ds, processing_class=tok)\n"
            ),
            after=(
                "from transformers import (\n"
                "    AutoModelForTokenClassification,\n"
                "    AutoTokenizer,\n"
                "    DataCollatorForTokenClassification,\n"
                "    Trainer,\n"
                ")\n"
                "tok = AutoTokenizer.from_pretrained(ckpt)\n"
                "model = AutoModelForTokenClassification.from_pretrained(ckpt, num_labels=9)\n"
                "trainer = Trainer(\n"
                "    model=model,\n"
                "    train_dataset=train_ds,\n"
                "    processing_class=tok,\n"
                "    data_collator=DataCollatorForTokenClassification(tok),\n"
                ")\n"
            ),
        ),
        Example(  # a sequence classifier: its labels are not per token
            before=(
                "from transformers import AutoModelForSequenceClassification, "
                "DataCollatorWithPadding\n"
                "model = AutoModelForSequenceClassification.from_pretrained(ckpt)\n"
                "collator = DataCollatorWithPadding(tokenizer)\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        program = self.program
        if not any(self.is_qualified(c.func, patterns.TOKEN_CLS_ANY) for c in program.calls):
            self.reason = "the script builds no *ForTokenClassification model"
            return
        for call in program.calls:
            if self.is_qualified(call.func, patterns.WITH_PADDING_COLLATOR):
                AddImportsVisitor.add_needed_import(self.context, "transformers", _NEW)
                self.plan_edit(call.func, replace_with(cst.Name(_NEW)), _NEW)
            elif program.is_trainer_call(call) and keyword(call, "data_collator") is None \
                    and len([a for a in call.args if a.keyword is None]) < 3 \
                    and not any(a.star for a in call.args):
                collator = self._collator(call)
                if collator is not None:
                    self.plan_edit(call, append_kw("data_collator", collator),
                                   f"Trainer(data_collator={code(collator)}) at line "
                                   f"{program.line(call)}")

    def _collator(self, call: cst.Call) -> cst.BaseExpression | None:
        """The script's own token collator bound at ``call``, else a new one on the
        tokenizer in scope (``None``, with the reason, when there is none)."""
        program = self.program
        for name in program.visible_names(call):
            made = [v for _, v in self.values.assignments(name, call)]
            if made and all(isinstance(v, cst.Call)
                            and self.is_qualified(v.func, patterns.TOKEN_COLLATOR)
                            for v in made) and program.bound_at(name, call):
                return cst.Name(name)
        tokenizer = program.tokenizer_in_scope(call)
        if tokenizer is None:
            self.reason = (f"Trainer at line {program.line(call)} has no data_collator and no "
                           "tokenizer is in scope to build DataCollatorForTokenClassification")
            return None
        AddImportsVisitor.add_needed_import(self.context, "transformers", _NEW)
        return cst.parse_expression(f"{_NEW}({code(tokenizer)})")
