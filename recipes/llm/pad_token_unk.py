"""pad-token-unk: pad = eos and a collator that masks every end-of-text token of the labels.

Public reports: huggingface/blog#1302, huggingface/transformers#23530, huggingface/trl#976.
``DataCollatorForLanguageModeling(mlm=False)`` builds the labels as a copy of ``input_ids``
with ``labels[labels == tokenizer.pad_token_id] = -100`` (transformers'
``data/data_collator.py``): it masks by *id*, so when the script pads with the end-of-text
token (``tokenizer.pad_token = tokenizer.eos_token``, the usual line for a Llama or GPT-2
tokenizer without a pad token) every real end-of-text token the texts end with is masked
too and the model never learns to stop. The remedy the reports give is a pad token that is
not the end-of-text token; the one a tokenizer already has without growing its vocabulary
is its unknown token (``tokenizer.pad_token = tokenizer.unk_token``, as in the Llama 2
fine-tuning guides): padding positions are masked by the attention mask, so which token
pads does not change the model's inputs, and masking it in the labels then masks padding
only.

Applied only on the language-model preflight's facts (``autofix/run/child/preflight_lm.py``):
the end-of-text tokens of the first batch were cut out of scored text, and the tokenizer's
unknown token exists, is neither end-of-text nor begin-of-text and occurs nowhere in the
batch. The edit is made where the pad token is set: ``X.pad_token = X.eos_token`` becomes
``X.pad_token = X.unk_token`` (``pad_token_id = eos_token_id`` likewise) for a tokenizer
``X``. A tokenizer without such a token is left to the advice (add ``'<pad>'`` and resize
the embeddings).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.categories.catalogue.llm import distinct_unk
from autofix.toolkit import Example, NotApplicable, code, find
from autofix.toolkit.scope import PlannedEdits, replace_with

#: The attribute set on the tokenizer -> (the end-of-text value it was given, the new one).
SWAPS = {"pad_token": ("eos_token", "unk_token"),
         "pad_token_id": ("eos_token_id", "unk_token_id")}

_CUT = {"lm": {"eos_cut": 16, "eos_in_inputs": 16, "eos_in_labels": 0, "eos_token_id": 2,
               "pad_token_id": 2, "unk_token_id": 0, "bos_token_id": 1, "unk_in_inputs": 0,
               "collator": "DataCollatorForLanguageModeling"}}
_NO_UNK = {"lm": {**_CUT["lm"], "unk_token_id": None}}


class PadTokenUnk(PlannedEdits):
    id = "pad-token-unk"
    category = "pad-token-is-eos"
    title = "pad with the tokenizer's unknown token, not the end-of-text token"
    requires_words = (("pad_token", "pad_token_id"),)
    requires_imports = ("transformers",)
    nothing_to_do = "no tokenizer.pad_token = tokenizer.eos_token line to change"

    examples = (
        Example(
            before=(
                "from transformers import AutoTokenizer, DataCollatorForLanguageModeling\n"
                "tokenizer = AutoTokenizer.from_pretrained(path)\n"
                "tokenizer.pad_token = tokenizer.eos_token\n"
                "collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)\n"
            ),
            after=(
                "from transformers import AutoTokenizer, DataCollatorForLanguageModeling\n"
                "tokenizer = AutoTokenizer.from_pretrained(path)\n"
                "tokenizer.pad_token = tokenizer.unk_token\n"
                "collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)\n"
            ),
            run_facts=_CUT,
        ),
        Example(  # the id form, on a tokenizer made under another name
            before=(
                "import transformers\n"
                "tok = transformers.AutoTokenizer.from_pretrained(path)\n"
                "if tok.pad_token_id is None:\n"
                "    tok.pad_token_id = tok.eos_token_id\n"
            ),
            after=(
                "import transformers\n"
                "tok = transformers.AutoTokenizer.from_pretrained(path)\n"
                "if tok.pad_token_id is None:\n"
                "    tok.pad_token_id = tok.unk_token_id\n"
            ),
            run_facts=_CUT,
        ),
        Example(  # no unknown token distinct from eos: advice (add '<pad>', resize)
            before=(
                "from transformers import AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained('gpt2')\n"
                "tokenizer.pad_token = tokenizer.eos_token\n"
            ),
            run_facts=_NO_UNK,
        ),
        Example(  # nothing measured: left alone
            before=(
                "from transformers import AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(path)\n"
                "tokenizer.pad_token = tokenizer.eos_token\n"
            ),
        ),
        Example(  # another object's pad_token (not a tokenizer): left alone
            before=(
                "from transformers import AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(path)\n"
                "settings.pad_token = settings.eos_token\n"
            ),
            run_facts=_CUT,
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        lm = self.rc.facts.get("lm") or {}
        if not lm.get("eos_cut") or lm.get("eos_in_labels"):
            raise NotApplicable("the preflight did not see end-of-text tokens masked by pad id")
        if not distinct_unk(lm):
            raise NotApplicable("the tokenizer has no unknown token distinct from eos and "
                                "absent from the texts (add a '<pad>' token and resize the "
                                "embeddings)")
        for node in find(tree, m.Assign()):
            assert isinstance(node, cst.Assign)
            if len(node.targets) != 1:
                continue
            target = node.targets[0].target
            value = node.value
            if not (isinstance(target, cst.Attribute) and isinstance(value, cst.Attribute)):
                continue
            swap = SWAPS.get(target.attr.value)
            if swap is None or value.attr.value != swap[0] or \
                    code(value.value) != code(target.value) or \
                    not self.program.is_tokenizer(target.value):
                continue
            new = value.with_changes(attr=cst.Name(swap[1]))
            self.plan_edit(value, replace_with(new),
                           f"{code(target)} = {code(new)} (the end-of-text token stays in "
                           "the labels)")
