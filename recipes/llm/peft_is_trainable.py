"""peft-is-trainable: a saved adapter loaded for inference, then trained.

Public report: tloen/alpaca-lora#352 ("trainable params: 0"). ``PeftModel.from_pretrained``
loads an adapter in inference mode (``is_trainable=False``, PEFT's default): every weight is
frozen. With gradient checkpointing on (``SFTConfig``'s default) the run trains anyway,
with a gradient norm of 0 and a flat loss; without it ``backward`` raises "element 0 of
tensors does not require grad". The fix is PEFT's own switch: ``is_trainable=True`` on the
``from_pretrained`` call. Applied only when the run's facts show the adapter in inference
mode with no trainable parameter (the preflight's ``lm-trainable`` check), or no facts
say otherwise.
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, NotApplicable, patterns
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.values import CallOwner, NotFollowed, Values

_FROZEN = {"lm": {"params_trainable": 0, "params_total": 146368, "peft_adapter": "default",
                  "peft_inference_mode": True}}


class PeftIsTrainable(PlannedEdits):
    id = "peft-is-trainable"
    category = "no-trainable-parameters"
    title = "load the PEFT adapter trainable (is_trainable=True) to train it further"
    requires_words = (("from_pretrained",),)
    requires_imports = ("peft",)
    nothing_to_do = "no PeftModel.from_pretrained(...) loading an adapter for inference"

    examples = (
        Example(
            before=(
                "from peft import PeftModel\n"
                "model = PeftModel.from_pretrained(base, adapter_dir)\n"
            ),
            after=(
                "from peft import PeftModel\n"
                "model = PeftModel.from_pretrained(base, adapter_dir, is_trainable=True)\n"
            ),
            run_facts=_FROZEN,
        ),
        Example(
            before=(
                "import peft\n"
                "model = peft.AutoPeftModelForCausalLM.from_pretrained(path, is_trainable=False)\n"
            ),
            after=(
                "import peft\n"
                "model = peft.AutoPeftModelForCausalLM.from_pretrained(path, is_trainable=True)\n"
            ),
        ),
        Example(  # already trainable
            before=(
                "from peft import PeftModel\n"
                "model = PeftModel.from_pretrained(base, adapter_dir, is_trainable=True)\n"
            ),
        ),
        Example(  # the facts show a trainable adapter: another cause
            before=(
                "from peft import PeftModel\n"
                "model = PeftModel.from_pretrained(base, adapter_dir)\n"
            ),
            run_facts={"lm": {"params_trainable": 16384, "params_total": 158656,
                          "peft_inference_mode": False}},
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        lm = self.rc.facts.get("lm") or {}
        if lm.get("peft_inference_mode") is False or lm.get("params_trainable"):
            raise NotApplicable("the run's facts show no adapter loaded for inference")
        values = Values(self)
        for call in values.calls(patterns.PEFT_FROM_PRETRAINED):
            try:  # set where the script defines it (a constant, a default, the ** dict)
                CallOwner(values, call).set("is_trainable", True)
            except NotFollowed as declined:
                self.reason = str(declined)
