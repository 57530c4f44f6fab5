"""mlm-without-mask-token: the language-modelling collator defaults to masked LM.

Public report: the collator's own check ("This tokenizer does not have a mask token which
is necessary for masked language modeling. You should pass `mlm=False` ..."), hit when a
GPT-2 style (causal) model is trained with ``DataCollatorForLanguageModeling(tokenizer)``.
Fix, as the message says: ``mlm=False``, but only when the script trains a causal LM (a
masked LM needs a tokenizer with a mask token instead, which is not this recipe's call).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, Recipe, append_keyword, keyword, patterns, replace_keyword


class CausalCollator(Recipe):
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
        Example(  # a masked LM: the tokenizer lacks a mask token, mlm=False would be wrong
            before=(
                "from transformers import AutoModelForMaskedLM, DataCollatorForLanguageModeling\n"
                "model = AutoModelForMaskedLM.from_pretrained(ckpt)\n"
                "collator = DataCollatorForLanguageModeling(tok)\n"
            ),
        ),
    )

    def visit_Module(self, node: cst.Module) -> bool:
        calls = m.findall(node, m.Call())
        if not any(isinstance(c, cst.Call) and self.is_qualified(c.func, patterns.CAUSAL_LM_MODEL)
                   for c in calls):
            self.reason = ("the script builds no causal language model (AutoModelForCausalLM,"
                           " *LMHeadModel); a masked LM needs a tokenizer with a mask token")
            return False
        return True

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, patterns.LM_COLLATOR):
            return updated_node
        mlm = keyword(updated_node, "mlm")
        if mlm is None:
            self.changed(original_node, "mlm=False")
            return append_keyword(updated_node, "mlm", cst.Name("False"))
        if m.matches(mlm.value, m.Name("True")):
            self.changed(original_node, "mlm=False")
            return replace_keyword(updated_node, "mlm", cst.Name("False"))
        return updated_node
