"""lora-target-modules: LoRA's ``target_modules`` name modules the model does not have.

Public report: hiyouga/LlamaFactory#3597 (GPT-2 / Qwen-1's fused ``c_attn`` on a
Llama-architecture model; PEFT 0.21: "Target modules {'c_attn'} not found in the base
model"). PEFT matches ``target_modules`` against the model's own module names; which names
a model has depends on its architecture (Llama, Mistral, Qwen2: ``q_proj``, ``k_proj``,
``v_proj``, ``o_proj``; GPT-2: ``c_attn``; BERT: ``query``, ``key``, ``value``).

The fix takes the names from the model itself, never from a list of architectures: the
probe reads the model's ``named_modules()`` at the failure (the model in PEFT's frames)
and keeps the leaf names of the linear layers found only inside its attention blocks
(``autofix/run/child/facts.py: module_names``). The new list replaces the old one where
it is written: the ``target_modules=`` literal of the ``LoraConfig(...)`` (or any PEFT
config) call, or the list literal a name there is assigned from. Only when none of the
old names is a module of the model: a list that names some real modules is another fault.
"""

from __future__ import annotations

import libcst as cst

from autofix.categories.catalogue.llm import module_names
from autofix.categories.failure import Failure
from autofix.toolkit import Example, NotApplicable, code, keyword, patterns
from autofix.toolkit.facts import failure_of
from autofix.toolkit.scope import PlannedEdits, replace_kw, replace_with
from autofix.toolkit.values import Values
from autofix.types import ExceptionInfo, ProbeReport

_LLAMA = {"lm": {"attention_linear": ["q_proj", "k_proj", "v_proj", "o_proj"],
                 "linear_names": ["down_proj", "gate_proj", "k_proj", "lm_head", "o_proj",
                                  "q_proj", "up_proj", "v_proj"]}}


def _strings(node: cst.CSTNode) -> list[str] | None:
    """The strings of a string literal or a list/tuple/set of string literals (``None``
    for anything else)."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return [value] if isinstance(value, str) else None
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        out = []
        for element in node.elements:
            if not isinstance(element, cst.Element) or \
                    not isinstance(element.value, cst.SimpleString):
                return None
            value = element.value.evaluated_value
            if not isinstance(value, str):
                return None
            out.append(value)
        return out
    return None


def _literal(names: list[str], like: cst.CSTNode) -> cst.BaseExpression:
    """A list literal of ``names`` in the quote style of ``like``'s first string."""
    quote = "'" if isinstance(like, cst.SimpleString) and like.value.startswith("'") or \
        isinstance(like, (cst.List, cst.Tuple, cst.Set)) and like.elements and \
        isinstance(like.elements[0].value, cst.SimpleString) and \
        like.elements[0].value.value.startswith("'") else '"'
    return cst.parse_expression("[" + ", ".join(f"{quote}{n}{quote}" for n in names) + "]")


class LoraTargetModules(PlannedEdits):
    id = "lora-target-modules"
    category = "lora-target-modules-not-found"
    title = "target the model's own attention projections with LoRA"
    requires_words = (("target_modules",),)
    requires_imports = ("peft",)
    nothing_to_do = "no PEFT config with a literal target_modules list"

    examples = (
        Example(
            before=(
                "from peft import LoraConfig, get_peft_model\n"
                'lora = LoraConfig(r=8, target_modules=["c_attn"])\n'
                "model = get_peft_model(model, lora)\n"
            ),
            after=(
                "from peft import LoraConfig, get_peft_model\n"
                'lora = LoraConfig(r=8, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])\n'
                "model = get_peft_model(model, lora)\n"
            ),
            run_facts=_LLAMA,
        ),
        Example(  # the list is a constant: changed where it is defined
            before=(
                "import peft\n"
                "TARGETS = ('c_attn', 'c_proj')\n"
                "config = peft.LoraConfig(r=16, target_modules=TARGETS)\n"
            ),
            after=(
                "import peft\n"
                "TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj']\n"
                "config = peft.LoraConfig(r=16, target_modules=TARGETS)\n"
            ),
            run_facts=_LLAMA,
        ),
        Example(  # some names are the model's own: not this fault
            before=(
                "from peft import LoraConfig\n"
                'cfg = LoraConfig(target_modules=["q_proj", "c_attn"])\n'
            ),
            run_facts=_LLAMA,
        ),
        Example(  # the model's module names are unknown: nothing is guessed
            before=(
                "from peft import LoraConfig\n"
                'cfg = LoraConfig(target_modules=["c_attn"])\n'
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        failure = failure_of(self.rc) or Failure(ExceptionInfo("", ""),
                                                 probe=ProbeReport(facts=dict(self.rc.facts)))
        attention, linear = module_names(failure)
        if not attention:
            raise NotApplicable("the model's module names are not in the run's facts")
        for call in self.program.calls:
            if not self.is_qualified(call.func, patterns.PEFT_CONFIG):
                continue
            arg = keyword(call, "target_modules")
            if arg is None:
                continue
            sources = self.values.origins(arg.value)
            literal = next((s for s in sources if _strings(s) is not None), None)
            if literal is None or len(sources) != 1:
                self.reason = f"target_modules={code(arg.value)} is not a literal list"
                continue
            old = _strings(literal) or []
            if any(name in linear or name in attention for name in old):
                self.reason = (f"some of target_modules {old} are modules of the model "
                               f"(its linear layers: {', '.join(linear)})")
                continue
            new = _literal(attention, literal)
            if literal is arg.value:
                self.plan_edit(call, replace_kw("target_modules", new),
                               f"target_modules={code(new)}")
            else:
                self.plan_edit(literal, replace_with(new),
                               f"target_modules {code(arg.value)} = {code(new)}")


