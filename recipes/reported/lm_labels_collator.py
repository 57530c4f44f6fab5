"""token-labels-not-padded: a language model's own labels (a prompt masked with -100 by
the script) batched by a collator that pads ``input_ids`` but not ``labels``.

Public reports: huggingface/transformers#8146 and #25373 ("Unable to create tensor ...
Perhaps your features (`labels` in this case) have excessive nesting" with
``DataCollatorForLanguageModeling`` or ``DataCollatorWithPadding`` on rows that carry
labels of different lengths). ``DataCollatorForLanguageModeling(mlm=False)`` would also
overwrite the labels with a copy of ``input_ids``, undoing the prompt mask. The library's
collator for rows that bring their labels is ``DataCollatorForSeq2Seq``: it pads
``input_ids`` with the pad token and ``labels`` with -100 (its ``label_pad_token_id``), so
the masked prompt stays masked; a causal LM shifts the labels itself.

The collator call that reaches ``DataLoader(collate_fn=...)`` or
``Trainer(data_collator=...)`` (directly or through the name it is assigned to) becomes
``DataCollatorForSeq2Seq`` on the same tokenizer (``pad_to_multiple_of`` and
``return_tensors`` kept). Applied only when the script trains a causal or seq2seq language
model (token classification is ``token-classification-collator``'s).
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from autofix.toolkit import Example, code, patterns
from autofix.toolkit.scope import PlannedEdits, replace_with
from autofix.toolkit.values import Values

from ..llm.lm_collator import KEPT, fed_collators, tokenizer_arg

NEW = "DataCollatorForSeq2Seq"

_HEAD = ("from torch.utils.data import DataLoader\n"
         "from transformers import AutoModelForCausalLM, DataCollatorForLanguageModeling\n"
         "model = AutoModelForCausalLM.from_pretrained(path)\n")


class LmLabelsCollator(PlannedEdits):
    id = "lm-labels-collator"
    category = "token-labels-not-padded"
    title = "pad a language model's own labels with -100 (DataCollatorForSeq2Seq)"
    requires_words = (("DataCollatorForLanguageModeling", "DataCollatorWithPadding"),)
    requires_imports = ("transformers",)
    #: padding is right only for labels row-aligned with input_ids (one label per token)
    restores = ("token-labels-misaligned",)
    nothing_to_do = ("no DataCollatorForLanguageModeling or DataCollatorWithPadding reaching "
                     "DataLoader(collate_fn=) or Trainer(data_collator=) in a script that "
                     "trains a causal or seq2seq language model")

    examples = (
        Example(
            before=(_HEAD + "collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)\n"
                    "loader = DataLoader(rows, batch_size=8, collate_fn=collator)\n"),
            after=("from torch.utils.data import DataLoader\n"
                   "from transformers import AutoModelForCausalLM, DataCollatorForSeq2Seq\n"
                   "model = AutoModelForCausalLM.from_pretrained(path)\n"
                   "collator = DataCollatorForSeq2Seq(tokenizer)\n"
                   "loader = DataLoader(rows, batch_size=8, collate_fn=collator)\n"),
        ),
        Example(  # one name per line: the new name gets a line of its own
            before=("from torch.utils.data import DataLoader\n"
                    "from transformers import (\n"
                    "    AutoModelForCausalLM,\n"
                    "    AutoTokenizer,\n"
                    "    DataCollatorForLanguageModeling,\n"
                    "    get_scheduler,\n"
                    ")\n"
                    "model = AutoModelForCausalLM.from_pretrained(path)\n"
                    "loader = DataLoader(rows, collate_fn=DataCollatorForLanguageModeling(tok))\n"),
            after=("from torch.utils.data import DataLoader\n"
                   "from transformers import (\n"
                   "    AutoModelForCausalLM,\n"
                   "    AutoTokenizer,\n"
                   "    DataCollatorForSeq2Seq,\n"
                   "    get_scheduler,\n"
                   ")\n"
                   "model = AutoModelForCausalLM.from_pretrained(path)\n"
                   "loader = DataLoader(rows, collate_fn=DataCollatorForSeq2Seq(tok))\n"),
        ),
        Example(  # Trainer, the padding collator given inline; its options kept
            before=("from transformers import AutoModelForCausalLM, DataCollatorWithPadding, "
                    "Trainer\n"
                    "model = AutoModelForCausalLM.from_pretrained(path)\n"
                    "trainer = Trainer(model=model, train_dataset=rows, data_collator="
                    "DataCollatorWithPadding(tok, pad_to_multiple_of=8))\n"),
            after=("from transformers import AutoModelForCausalLM, DataCollatorForSeq2Seq, "
                   "Trainer\n"
                   "model = AutoModelForCausalLM.from_pretrained(path)\n"
                   "trainer = Trainer(model=model, train_dataset=rows, data_collator="
                   "DataCollatorForSeq2Seq(tok, pad_to_multiple_of=8))\n"),
        ),
        Example(  # token classification: token-classification-collator's
            before=("from torch.utils.data import DataLoader\n"
                    "from transformers import AutoModelForTokenClassification, "
                    "DataCollatorWithPadding\n"
                    "model = AutoModelForTokenClassification.from_pretrained(path)\n"
                    "loader = DataLoader(rows, collate_fn=DataCollatorWithPadding(tok))\n"),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        if not any(self.is_qualified(c.func, patterns.LM_MODEL) for c in self.program.calls):
            self.reason = "the script builds no causal or seq2seq language model"
            return
        for value in fed_collators(Values(self), patterns.INPUT_COLLATOR):
            tokenizer = tokenizer_arg(value)
            if tokenizer is None:
                self.reason = f"{code(value)} names no tokenizer"
                continue
            new = self._collator(value, tokenizer)
            self.plan_edit(value, replace_with(new), code(new))

    def _collator(self, call: cst.Call, tokenizer: cst.BaseExpression) -> cst.Call:
        """``DataCollatorForSeq2Seq(<tokenizer>, ...)`` named like ``call``'s function,
        keeping its :data:`KEPT` arguments."""
        func = call.func
        if isinstance(func, cst.Attribute):
            new_func: cst.BaseExpression = func.with_changes(attr=cst.Name(NEW))
        else:
            new_func = cst.Name(NEW)
            AddImportsVisitor.add_needed_import(self.context, "transformers", NEW)
            for old in self.qualified(func):  # the replaced collator's import, once unused
                RemoveImportsVisitor.remove_unused_import(self.context, "transformers",
                                                          old.rsplit(".", 1)[-1])
        kept = [code(a).rstrip(", ") for a in call.args
                if a.keyword is not None and a.keyword.value in KEPT]
        text = ", ".join([code(tokenizer), *kept])
        return cst.parse_expression(f"{code(new_func)}({text})")  # type: ignore[return-value]
