"""peft-config-to-trainer: a LoRA config made and never given to SFTTrainer.

The script freezes the base model for LoRA and builds a ``LoraConfig`` (or another PEFT
config), then leaves ``peft_config=`` out of ``SFTTrainer(...)``: no adapter is added and
nothing is trainable (the preflight's ``lm-trainable`` check: 0 parameters require grad).
With ``peft_config=`` TRL wraps the model with ``get_peft_model``, whose adapters are
trainable and whose base stays frozen (TRL's PEFT documentation). Applied only when the
config is assigned to a name the script never uses and that name is in scope at the
``SFTTrainer`` call, and when the run's facts show no adapter on the model.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, find, keyword, patterns
from autofix.toolkit.scope import PlannedEdits, append_kw

_FROZEN = {"lm": {"params_trainable": 0, "params_total": 142272}}


class PeftConfigToTrainer(PlannedEdits):
    id = "peft-config-to-trainer"
    category = "no-trainable-parameters"
    title = "give SFTTrainer the PEFT config the script builds (peft_config=)"
    requires_words = (("SFTTrainer",),)
    requires_imports = ("trl",)
    nothing_to_do = "no unused PEFT config and no SFTTrainer(...) without peft_config"

    examples = (
        Example(
            before=(
                "from peft import LoraConfig\n"
                "from trl import SFTTrainer\n"
                "for p in model.parameters():\n"
                "    p.requires_grad = False\n"
                "peft_config = LoraConfig(r=16, target_modules=['q_proj', 'v_proj'])\n"
                "trainer = SFTTrainer(model=model, args=args, train_dataset=ds)\n"
            ),
            after=(
                "from peft import LoraConfig\n"
                "from trl import SFTTrainer\n"
                "for p in model.parameters():\n"
                "    p.requires_grad = False\n"
                "peft_config = LoraConfig(r=16, target_modules=['q_proj', 'v_proj'])\n"
                "trainer = SFTTrainer(model=model, args=args, train_dataset=ds, "
                "peft_config=peft_config)\n"
            ),
            run_facts=_FROZEN,
        ),
        Example(  # the config is used (get_peft_model): not this fault
            before=(
                "from peft import LoraConfig, get_peft_model\n"
                "from trl import SFTTrainer\n"
                "cfg = LoraConfig(r=16)\n"
                "model = get_peft_model(model, cfg)\n"
                "trainer = SFTTrainer(model=model, args=args, train_dataset=ds)\n"
            ),
            run_facts=_FROZEN,
        ),
        Example(  # the trainer already gets one
            before=(
                "from peft import LoraConfig\n"
                "from trl import SFTTrainer\n"
                "cfg = LoraConfig(r=16)\n"
                "trainer = SFTTrainer(model=model, peft_config=cfg)\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        lm = self.rc.facts.get("lm") or {}
        if lm.get("peft_adapter") or lm.get("params_trainable"):
            raise NotApplicable("the run's facts show an adapter or trainable parameters")
        used: dict[str, int] = {}
        for name in find(tree, m.Name()):
            assert isinstance(name, cst.Name)
            used[name.value] = used.get(name.value, 0) + 1
        configs = []
        for assign in find(tree, m.Assign(targets=[m.AssignTarget(target=m.Name())],
                                          value=m.Call())):
            assert isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)
            target = assign.targets[0].target
            assert isinstance(target, cst.Name)
            if self.is_qualified(assign.value.func, patterns.PEFT_CONFIG) \
                    and used.get(target.value) == 1:
                configs.append(target.value)
        if len(configs) != 1:
            raise NotApplicable("no PEFT config assigned to a name the script never uses"
                                if not configs else "more than one unused PEFT config")
        for call in self.program.calls:
            if not self.is_qualified(call.func, patterns.SFT_TRAINER) \
                    or keyword(call, "peft_config") is not None:
                continue
            if not self.program.resolves(configs[0], call):
                self.reason = f"{configs[0]} is not in scope at SFTTrainer(...)"
                continue
            self.plan_edit(call, append_kw("peft_config", cst.Name(configs[0])),
                           f"peft_config={configs[0]}")
