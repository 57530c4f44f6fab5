"""mlm-without-mask-token: the language-modelling collator defaults to masked LM.

Public report: the collator's own check ("This tokenizer does not have a mask token which
is necessary for masked language modeling. You should pass `mlm=False` ..."), hit when a
GPT-2 style (causal) model is trained with ``DataCollatorForLanguageModeling(tokenizer)``.
Fix, as the message says: ``mlm=False``, but only when the script trains a causal LM (a
masked LM needs a tokenizer with a mask token instead, which is not this recipe's call).
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, NotApplicable, patterns
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.values import CallOwner, NotFollowed, Values


class CausalCollator(PlannedEdits):
    id = "mlm-false"
    category = "mlm-without-mask-token"
    requires_words = (("DataCollatorForLanguageModeling",),)
    requires_imports = ("transformers",)
    title = "train the causal model with DataCollatorForLanguageModeling(mlm=False)"
    nothing_to_do = "no DataCollatorForLanguageModeling(...) with masked LM on"

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForCausalLM, DataCollatorForLanguageModeling\n"
                "model = AutoModelForCausalLM.from_pretrained(ckpt)\n"
                "collator = DataCollatorForLanguageModeling(tokenizer=tok)\n"
            ),
            after=(
                "from transformers import AutoModelForCausalLM, DataCollatorForLanguageModeling\n"
                "model = AutoModelForCausalLM.from_pretrained(ckpt)\n"
                "collator = DataCollatorForLanguageModeling(tokenizer=tok, mlm=False)\n"
            ),
        ),
        Example(
            before=(
                "import transformers\n"
                "model = transformers.GPT2LMHeadModel(cfg)\n"
                "c = transformers.DataCollatorForLanguageModeling(tok, mlm=True)\n"
            ),
            after=(
                "import transformers\n"
                "model = transformers.GPT2LMHeadModel(cfg)\n"
                "c = transformers.DataCollatorForLanguageModeling(tok, mlm=False)\n"
            ),
        ),
        Example(  # mlm given by position, through a constant: changed where it is defined
            before=(
                "import transformers\n"
                "MASKED = True\n"
                "model = transformers.GPT2LMHeadModel(cfg)\n"
                "c = transformers.DataCollatorForLanguageModeling(tok, MASKED)\n"
            ),
            after=(
                "import transformers\n"
                "MASKED = False\n"
                "model = transformers.GPT2LMHeadModel(cfg)\n"
                "c = transformers.DataCollatorForLanguageModeling(tok, MASKED)\n"
            ),
        ),
        Example(  # a masked LM: the tokenizer lacks a mask token, mlm=False would be wrong
            before=(
                "from transformers import AutoModelForMaskedLM, DataCollatorForLanguageModeling\n"
                "model = AutoModelForMaskedLM.from_pretrained(ckpt)\n"
                "collator = DataCollatorForLanguageModeling(tok)\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        if not any(self.is_qualified(c.func, patterns.CAUSAL_LM_MODEL)
                   for c in self.program.calls):
            raise NotApplicable("the script builds no causal language model "
                                "(AutoModelForCausalLM, *LMHeadModel); a masked LM needs a "
                                "tokenizer with a mask token")
        values = Values(self)
        for call in values.calls(patterns.LM_COLLATOR):
            try:  # mlm is the collator's second parameter
                CallOwner(values, call).set("mlm", False, position=1)
            except NotFollowed as declined:
                self.reason = str(declined)
