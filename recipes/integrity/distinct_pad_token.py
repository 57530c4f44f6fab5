"""distinct-pad-token: labels masked beyond padding because the pad token is the
end-of-text token.

The ``labels-masked-beyond-padding`` finding (``autofix/run/child/label_masks.py``): the
first training batch of a causal language model labels every attended end-of-text token
-100 right after scored text, and scores none, so the model never learns to stop. When the
pad token is the end-of-text token, a mask by pad id (``DataCollatorForLanguageModeling``,
a hand ``-100 if t == tokenizer.pad_token_id``) is what cut them: the fix is
``pad-token-unk``'s, made on this finding's facts (the ids measured at the first training
forward): ``tokenizer.pad_token = tokenizer.unk_token`` where the script sets the pad to
the end-of-text token, when the unknown token is distinct and absent from the batch.
Otherwise (a mask by the end-of-text id itself, no such unknown token) the finding is
advice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import libcst as cst

from autofix.toolkit import Example, NotApplicable

from ..llm.pad_token_unk import PadTokenUnk
from ._sites import sites

KIND = "labels-masked-beyond-padding"
_CUT: dict[str, Any] = {"eos_cut": 16, "eos_in_inputs": 16, "eos_in_labels": 0,
                        "eos_token_id": 2, "pad_token_id": 2, "unk_token_id": 0,
                        "bos_token_id": 1, "unk_in_inputs": 0}


def _facts(**change: Any) -> dict[str, Any]:
    return {"invariants": [{"kind": KIND, "file": "train.py", "line": 9,
                            "facts": {**_CUT, **change}}]}


class DistinctPadToken(PadTokenUnk):
    id = "distinct-pad-token"
    category = KIND
    title = "pad with a token distinct from the end-of-text token (the tokenizer's unknown " \
            "token), so only padding is masked in the labels"
    nothing_to_do = "no tokenizer.pad_token = tokenizer.eos_token line to change"

    examples = (  # type: ignore[assignment]  # the base's tuple type is inferred, fixed-size
        Example(
            before=(
                "from transformers import AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(path)\n"
                "tokenizer.pad_token = tokenizer.eos_token\n"
            ),
            after=(
                "from transformers import AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(path)\n"
                "tokenizer.pad_token = tokenizer.unk_token\n"
            ),
            run_facts=_facts(),
        ),
        Example(  # the unknown token is the end-of-text token (GPT-2): advice
            before=(
                "from transformers import AutoTokenizer\n"
                "tokenizer = AutoTokenizer.from_pretrained(path)\n"
                "tokenizer.pad_token = tokenizer.eos_token\n"
            ),
            run_facts=_facts(unk_token_id=2),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        found = [s.get("facts") for s in sites(self, KIND)]
        facts = next((f for f in found if isinstance(f, Mapping)), None)
        if facts is None:
            raise NotApplicable("the run did not see end-of-text labels masked")
        self.rc = dataclasses.replace(self.rc, facts={**self.rc.facts, "lm": dict(facts)})
        super().prepare(tree)
