"""training-args-conflict: bf16 asked for on a machine without a bf16-capable GPU.

``TrainingArguments.__post_init__`` (transformers 5.24, 4.57.6) raises ``Your setup doesn't
support bf16/gpu. You need to assign use_cpu if you want to train the model on CPU.`` when
``bf16`` (or ``bf16_full_eval``) is on and neither a bf16 GPU nor XLA is present. TRL's
configs (``SFTConfig``, ``DPOConfig``, ``GRPOConfig``...: TRL 1.16 ``_BaseConfig``) turn
``bf16`` on by default when ``fp16`` is off, so a script that never mentions bf16 meets
it on a CPU. The library names ``use_cpu``, which would keep bf16 autocast on the CPU and
pin the script to the CPU on every machine; the recipe turns bf16 off instead (fp32
training here, the machine's choice left to the script), where the value is defined, or
as ``bf16=False`` on the config call when it comes from the default.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from autofix.categories.advice import Advice
from autofix.toolkit import Example, NotApplicable, patterns

from ._advice import AdviceRecipe

_EVIDENCE = ("ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if "
             "you want to train the model on CPU.")


class TurnBf16Off(AdviceRecipe):
    id = "bf16-without-gpu"
    category = "training-args-conflict"
    title = "train without bf16 where no bf16-capable GPU is present"
    nothing_to_do = "no TrainingArguments or TRL config call with bf16 on"

    examples = (
        Example(  # TRL's default bf16=True
            before="from trl import SFTConfig\n"
                   "args = SFTConfig(output_dir='out', max_steps=10)\n",
            after="from trl import SFTConfig\n"
                  "args = SFTConfig(output_dir='out', max_steps=10, bf16=False)\n",
            evidence=_EVIDENCE,
        ),
        Example(  # set by the script: changed where it is defined
            before="from transformers import TrainingArguments\n"
                   "USE_BF16 = True\n"
                   "args = TrainingArguments('out', bf16=USE_BF16)\n",
            after="from transformers import TrainingArguments\n"
                  "USE_BF16 = False\n"
                  "args = TrainingArguments('out', bf16=USE_BF16)\n",
            evidence=_EVIDENCE,
        ),
        Example(  # transformers' own default is off: nothing to turn off
            before="from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out')\n",
            evidence=_EVIDENCE,
        ),
        Example(  # another message
            before="from trl import SFTConfig\n"
                   "args = SFTConfig(output_dir='out')\n",
            evidence="ValueError: At most one of fp16 and bf16 can be True, but not both",
        ),
    )

    @classmethod
    def handles(cls, advice: Sequence[Advice], message: str) -> bool:
        return bool(re.search(r"doesn't support bf16/gpu", message))

    def make(self, tree: cst.Module) -> None:
        args = self.the_args()
        trl = self.is_qualified(args.call.func, patterns.TRL_ANY)
        changed = False
        for name, default in (("bf16", trl), ("bf16_full_eval", False)):
            if args.value(name, default=default) is True:
                args.set(name, False, "no bf16-capable GPU here")
                changed = True
        if not changed:
            raise NotApplicable("bf16 is not turned on by this call or its defaults")
