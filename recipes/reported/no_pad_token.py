"""no-pad-token: a GPT-2 style tokenizer (or the model's config) has no padding token.

Public reports: huggingface/transformers#12594 (the collator pads, "Asking to pad but the
tokenizer does not have a padding token"), babylm/evaluation-pipeline-2023#17
("Cannot handle batch sizes > 1 if no padding token is defined"). The library's own
message names the fix: ``tokenizer.pad_token = tokenizer.eos_token`` (padding positions
are masked by the attention mask, so which token pads does not matter), and a
sequence-classification head must know the id: ``model.config.pad_token_id =
tokenizer.pad_token_id``. Each line goes right after the statement that makes the object,
in the same block (module level).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from autofix.toolkit import Example, NotApplicable, Recipe, patterns
from autofix.toolkit.statements import assignments, assigns_attribute, insert_after

_ASKING = "Asking to pad but the tokenizer does not have a padding token"
_BATCH = "Cannot handle batch sizes > 1 if no padding token is defined"


class SetPadToken(Recipe):
    id = "no-pad-token"
    category = "no-pad-token"
    requires_imports = ("transformers",)
    title = "give the tokenizer (and the model's config) the end-of-text token as pad token"
    nothing_to_do = "no tokenizer or model assignment to follow with the pad token"

    examples = (
        Example(
            before=(
                "from transformers import AutoTokenizer\n"
                "tok = AutoTokenizer.from_pretrained('gpt2')\n"
                "enc = tok(texts, padding=True)\n"
            ),
            after=(
                "from transformers import AutoTokenizer\n"
                "tok = AutoTokenizer.from_pretrained('gpt2')\n"
                "tok.pad_token = tok.eos_token\n"
                "enc = tok(texts, padding=True)\n"
            ),
            evidence=f"ValueError: {_ASKING}. Please select a token ...",
        ),
        Example(
            before=(
                "import transformers as tf\n"
                "tokenizer = tf.AutoTokenizer.from_pretrained(ckpt)\n"
                "tokenizer.pad_token = tokenizer.eos_token\n"
                "model = tf.AutoModelForSequenceClassification.from_pretrained(ckpt)\n"
                "trainer = tf.Trainer(model=model)\n"
            ),
            after=(
                "import transformers as tf\n"
                "tokenizer = tf.AutoTokenizer.from_pretrained(ckpt)\n"
                "tokenizer.pad_token = tokenizer.eos_token\n"
                "model = tf.AutoModelForSequenceClassification.from_pretrained(ckpt)\n"
                "model.config.pad_token_id = tokenizer.pad_token_id\n"
                "trainer = tf.Trainer(model=model)\n"
            ),
            evidence=f"ValueError: {_BATCH}.",
        ),
        Example(  # the pad token is already set: something else is wrong
            before=(
                "from transformers import AutoTokenizer\n"
                "tok = AutoTokenizer.from_pretrained('gpt2')\n"
                "tok.pad_token = tok.unk_token\n"
            ),
            evidence=f"ValueError: {_ASKING}.",
        ),
        Example(  # a tokenizer that is not from transformers
            before="tok = make_tokenizer()\nenc = tok(texts, padding=True)\n",
            evidence=f"ValueError: {_ASKING}.",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        evidence = self.rc.diagnosis.evidence
        tokenizers = assignments(self, tree.body, patterns.TOKENIZER_ANY)
        if not tokenizers:
            raise NotApplicable("no tokenizer assignment (tok = AutoTokenizer.from_pretrained"
                                "(...)) at module level")
        index, tok = tokenizers[-1]
        if _BATCH in evidence:
            models = [(i, name) for i, name in assignments(self, tree.body, patterns.SEQ_CLS_ANY)
                      if i > index]
            if not models:
                raise NotApplicable("no sequence-classification model made after the "
                                    "tokenizer at module level")
            at, model = models[-1]
            if assigns_attribute(tree.body, f"{model}.config.pad_token_id"):
                raise NotApplicable(f"{model}.config.pad_token_id is already set")
            line = f"{model}.config.pad_token_id = {tok}.pad_token_id"
        else:
            if assigns_attribute(tree.body, f"{tok}.pad_token"):
                raise NotApplicable(f"{tok}.pad_token is already set")
            at, line = index, f"{tok}.pad_token = {tok}.eos_token"
        self.edits.append(line)
        self.first_line = self.get_metadata(PositionProvider, tree.body[at]).end.line + 1
        return tree.with_changes(body=insert_after(tree.body, at, line))


