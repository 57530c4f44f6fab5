"""sft-max-length: SFTConfig's max_length is shorter than the prompts, every example dropped.

Public report: FourthBrain/Building-with-Instruction-Tuned-LLMs-A-Step-by-Step-Guide#4.
TRL 1.x truncates each tokenized example to ``max_length`` and drops the examples left
without a scored token ("Dropping fully masked examples"); when every prompt is longer
than ``max_length`` the training set is empty and the sampler fails ("num_samples should
be a positive integer value, but got num_samples=0").

The new length is measured, not guessed: the probe prepares the same rows again with TRL's
own preparation and no truncation (``autofix/run/child/preflight_lm.py``) and reports the
longest example; the fix sets ``max_length`` to that length rounded up to a multiple of
:data:`MULTIPLE` (headroom for rows the measurement did not see), at most the model's
``max_position_embeddings`` when that still holds the longest example. The value is changed
where it is written: the ``SFTConfig(max_length=...)`` literal, or the constant it names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import libcst as cst

from autofix.toolkit import Example, NotApplicable, code, keyword, patterns
from autofix.toolkit.scope import PlannedEdits, replace_kw, replace_with
from autofix.toolkit.values import Values

#: The new max_length is the longest measured example rounded up to a multiple of this.
MULTIPLE = 64

_DROPPED = {"lm": {"dropped": {"rows_in": 200, "rows_out": 0, "max_length": 8,
                               "longest": 17, "longest_prompt": 13},
                   "max_position_embeddings": 256}}


def new_length(facts: Mapping[str, Any]) -> tuple[int, int, int] | str:
    """(old max_length, new max_length, longest example) from the probe's facts, or why
    there is none."""
    lm = facts.get("lm") or {}
    dropped = lm.get("dropped") if isinstance(lm, Mapping) else None
    if not isinstance(dropped, Mapping) or not isinstance(dropped.get("longest"), int):
        return "the untruncated lengths were not measured"
    old, longest = dropped.get("max_length"), int(dropped["longest"])
    if not isinstance(old, int) or longest <= old:
        return f"the longest example ({longest} tokens) fits max_length={old}"
    value = -(-longest // MULTIPLE) * MULTIPLE
    positions = lm.get("max_position_embeddings")
    if isinstance(positions, int) and value > positions:
        if positions < longest:
            return (f"the longest example ({longest} tokens) is longer than the model's "
                    f"{positions} positions")
        value = positions
    return old, value, longest


class SftMaxLength(PlannedEdits):
    id = "sft-max-length"
    category = "all-examples-masked"
    title = "raise SFTConfig's max_length above the longest example (measured)"
    requires_words = (("max_length",),)
    requires_imports = ("trl",)
    nothing_to_do = "no SFTConfig(max_length=...) literal to raise"

    examples = (
        Example(
            before=(
                "from trl import SFTConfig\n"
                "args = SFTConfig(output_dir='out', max_length=8, bf16=False)\n"
            ),
            after=(
                "from trl import SFTConfig\n"
                "args = SFTConfig(output_dir='out', max_length=64, bf16=False)\n"
            ),
            run_facts=_DROPPED,
        ),
        Example(  # a constant: changed where it is defined
            before=(
                "import trl\n"
                "MAX_LEN = 8\n"
                "args = trl.SFTConfig(output_dir='out', max_length=MAX_LEN)\n"
            ),
            after=(
                "import trl\n"
                "MAX_LEN = 64\n"
                "args = trl.SFTConfig(output_dir='out', max_length=MAX_LEN)\n"
            ),
            run_facts=_DROPPED,
        ),
        Example(  # nothing measured: no length is guessed
            before=(
                "from trl import SFTConfig\n"
                "args = SFTConfig(output_dir='out', max_length=8)\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        found = new_length(self.rc.facts)
        if isinstance(found, str):
            raise NotApplicable(found)
        old, value, longest = found
        for call in self.program.calls:
            if not self.is_qualified(call.func, patterns.TRL_CONFIG):
                continue
            arg = keyword(call, "max_length")
            if arg is None:
                continue
            sources = self.values.origins(arg.value)
            literal = sources[0] if len(sources) == 1 else None
            if not isinstance(literal, cst.Integer) or literal.evaluated_value != old:
                self.reason = (f"max_length={code(arg.value)} is not the literal {old} "
                               "(set it above the longest example where it is decided)")
                continue
            new = cst.Integer(str(value))
            why = f"(the longest example is {longest} tokens)"
            if literal is arg.value:
                self.plan_edit(call, replace_kw("max_length", new), f"max_length={value} {why}")
            else:
                self.plan_edit(literal, replace_with(new),
                               f"{code(arg.value)} = {value} {why}")
