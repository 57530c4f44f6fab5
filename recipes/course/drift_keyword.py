"""api-drift: a keyword argument the installed library no longer takes where the script
passes it: renamed (``evaluation_strategy`` -> ``eval_strategy``, ``Trainer(tokenizer=)``
-> ``processing_class=``, ``SFTConfig(max_seq_length=)`` -> ``max_length=``), or moved
from a trainer into its configuration class (TRL's ``SFTTrainer(max_seq_length=,
dataset_text_field=, packing=)`` -> ``SFTConfig(max_length=, dataset_text_field=,
packing=)``, ``DPOTrainer(beta=)`` -> ``DPOConfig(beta=)``).

Which name and which class the installed library takes is measured by the API check in the
target interpreter (``inspect.signature`` of the callable and of the trainer's paired
configuration class): its facts ``accepts`` (the renamed keyword the callable takes) or
``moves_to``/``as`` (the class and name that take it). Renames run in both directions:
transformers 4.40 wants ``evaluation_strategy``, 5.x ``eval_strategy``. A moved keyword is
created in the configuration call the trainer receives, wherever the file builds it
(followed through assignments and helpers); when that call builds the plain
``TrainingArguments``, it becomes the configuration class with the same arguments, plus
``TrainingArguments``' defaults where the configuration's differ (``bf16=False``: SFTConfig
defaults to bf16, which a CPU cannot run; the trainer itself converts plain arguments with
their values kept, so this is the configuration it would have built). A trainer given no
arguments gets ``args=<Config>(...)`` holding the keyword.

Without the check's facts (a traceback of a run), only a rename of
:data:`autofix.categories.renames.KEYWORD_RENAMES` is made: the message names the keyword the
library rejected, the table its other name.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.categories.renames import rename_of
from autofix.toolkit import Example, NotApplicable, OtherError, code, keyword, remove_keyword
from autofix.toolkit.drift import owner_calls
from autofix.toolkit.scope import Edit, append_kw
from autofix.toolkit.values import Values

from .._drift import TrainerDrift, named_class


def _renamed(old: str, new: str) -> Edit:
    def run(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        return node.with_changes(args=[
            a.with_changes(keyword=cst.Name(new)) if a.keyword is not None
            and a.keyword.value == old else a for a in node.args])
    return run


def _without(name: str) -> Edit:
    def run(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        return remove_keyword(node, name)
    return run


SFT_HEAD = ("from transformers import TrainingArguments\n"
            "from trl import SFTConfig, SFTTrainer\n")


class DriftKeyword(TrainerDrift):
    id = "drift-keyword"
    subject_from_change = True
    category = "api-drift"
    title = "pass each keyword under the name and to the class the installed library takes"
    requires_imports = ("transformers", "trl", "peft", "datasets")

    examples = (
        Example(  # transformers 5: the new name
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', evaluation_strategy='epoch')\n"),
            after=("from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', eval_strategy='epoch')\n"),
            evidence="TypeError: TrainingArguments.__init__() got an unexpected keyword "
                     "argument 'evaluation_strategy'",
            facts=(("keyword", "evaluation_strategy"),
                   ("callable", "transformers.TrainingArguments"),
                   ("accepts", "eval_strategy")),
        ),
        Example(  # an old install wants the old name (a traceback: no facts)
            before=("import transformers\n"
                    "args = transformers.TrainingArguments('out', eval_strategy='steps')\n"),
            after=("import transformers\n"
                   "args = transformers.TrainingArguments('out', evaluation_strategy='steps')\n"),
            versions={"transformers": "4.38.2"},
            evidence="TypeError: __init__() got an unexpected keyword argument 'eval_strategy'",
        ),
        Example(  # Trainer and TRL trainers: tokenizer= -> processing_class=
            before=("from trl import SFTTrainer\n"
                    "trainer = SFTTrainer(model, args=cfg, tokenizer=tok)\n"),
            after=("from trl import SFTTrainer\n"
                   "trainer = SFTTrainer(model, args=cfg, processing_class=tok)\n"),
            evidence="TypeError: SFTTrainer.__init__() got an unexpected keyword argument "
                     "'tokenizer'",
            facts=(("keyword", "tokenizer"), ("callable", "trl.SFTTrainer"),
                   ("accepts", "processing_class")),
        ),
        Example(  # l02: SFTConfig(max_seq_length=) -> max_length=
            before=("from trl import SFTConfig\n"
                    "cfg = SFTConfig(output_dir='o', max_seq_length=128)\n"),
            after=("from trl import SFTConfig\n"
                   "cfg = SFTConfig(output_dir='o', max_length=128)\n"),
            evidence="TypeError: SFTConfig.__init__() got an unexpected keyword argument "
                     "'max_seq_length'",
            facts=(("keyword", "max_seq_length"), ("callable", "trl.SFTConfig"),
                   ("accepts", "max_length")),
        ),
        Example(  # l03: moved from SFTTrainer into the SFTConfig it gets, renamed
            before=(SFT_HEAD.replace("from transformers import TrainingArguments\n", "")
                    + "args = SFTConfig(output_dir='o', bf16=False)\n"
                    "trainer = SFTTrainer(model=m, args=args, train_dataset=d,\n"
                    "                     max_seq_length=256)\n"),
            after=(SFT_HEAD.replace("from transformers import TrainingArguments\n", "")
                   + "args = SFTConfig(output_dir='o', bf16=False, max_length=256)\n"
                   "trainer = SFTTrainer(model=m, args=args, train_dataset=d)\n"),
            evidence="TypeError: SFTTrainer.__init__() got an unexpected keyword argument "
                     "'max_seq_length'",
            facts=(("keyword", "max_seq_length"), ("callable", "trl.SFTTrainer"),
                   ("moves_to", "trl.SFTConfig"), ("as", "max_length")),
        ),
        Example(  # l04: plain TrainingArguments: becomes SFTConfig, its defaults kept
            before=(SFT_HEAD.replace("SFTConfig, ", "")
                    + "targs = TrainingArguments('o', learning_rate=2e-3)\n"
                    "trainer = SFTTrainer(model=m, train_dataset=d, dataset_text_field='text',"
                    "\n                     args=targs)\n"),
            after=("from trl import SFTConfig, SFTTrainer\n"
                   "targs = SFTConfig('o', learning_rate=2e-3, bf16=False, "
                   "dataset_text_field='text')\n"
                   "trainer = SFTTrainer(model=m, train_dataset=d, args=targs)\n"),
            evidence="TypeError: SFTTrainer.__init__() got an unexpected keyword argument "
                     "'dataset_text_field'",
            facts=(("keyword", "dataset_text_field"), ("callable", "trl.SFTTrainer"),
                   ("moves_to", "trl.SFTConfig"), ("as", "dataset_text_field"),
                   ("keeps", "learning_rate=5e-05, bf16=False")),
        ),
        Example(  # l10: DPOTrainer(beta=) -> the DPOConfig built inline
            before=("from trl import DPOConfig, DPOTrainer\n"
                    "DPOTrainer(policy, ref, args=DPOConfig('o'), beta=0.1, train_dataset=d)\n"),
            after=("from trl import DPOConfig, DPOTrainer\n"
                   "DPOTrainer(policy, ref, args=DPOConfig('o', beta=0.1), train_dataset=d)\n"),
            evidence="TypeError: DPOTrainer.__init__() got an unexpected keyword argument "
                     "'beta'",
            facts=(("keyword", "beta"), ("callable", "trl.DPOTrainer"),
                   ("moves_to", "trl.DPOConfig"), ("as", "beta")),
        ),
        Example(  # no args at all: the trainer gets its configuration with the keyword
            before=("from trl import SFTTrainer\n"
                    "SFTTrainer(model, train_dataset=d, packing=True)\n"),
            after=("from trl import SFTConfig, SFTTrainer\n"
                   "SFTTrainer(model, train_dataset=d, args=SFTConfig(packing=True))\n"),
            evidence="TypeError: SFTTrainer.__init__() got an unexpected keyword argument "
                     "'packing'",
            facts=(("keyword", "packing"), ("callable", "trl.SFTTrainer"),
                   ("moves_to", "trl.SFTConfig"), ("as", "packing")),
        ),
        Example(  # a traceback of Trainer: tokenizer= -> processing_class=, the collator's kept
            before=("from transformers import DataCollatorWithPadding, Trainer\n"
                    "collator = DataCollatorWithPadding(tokenizer=tokenizer)\n"
                    "trainer = Trainer(model, args, tokenizer=tokenizer)\n"),
            after=("from transformers import DataCollatorWithPadding, Trainer\n"
                   "collator = DataCollatorWithPadding(tokenizer=tokenizer)\n"
                   "trainer = Trainer(model, args, processing_class=tokenizer)\n"),
            evidence="TypeError: __init__() got an unexpected keyword argument 'tokenizer'",
        ),
        Example(  # an old install wants tokenizer= (an aliased import)
            before=("from transformers import Trainer as T\n"
                    "T(model, args, processing_class=tok)\n"),
            after=("from transformers import Trainer as T\n"
                   "T(model, args, tokenizer=tok)\n"),
            versions={"transformers": "4.44.0"},
            evidence="TypeError: __init__() got an unexpected keyword argument "
                     "'processing_class'",
        ),
        Example(  # already right for 5.x
            before=("from transformers import Trainer\n"
                    "Trainer(model, args, processing_class=tok)\n"),
            evidence="TypeError: __init__() got an unexpected keyword argument 'tokenizer'",
        ),
        Example(  # the error is about another keyword than the one the file renames
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', evaluation_strategy='epoch')\n"),
            evidence="TypeError: __init__() got an unexpected keyword argument 'tokenizer'",
        ),
        Example(  # the configuration already sets it: the two values disagree
            before=("from trl import SFTConfig, SFTTrainer\n"
                    "args = SFTConfig(output_dir='o', max_length=512)\n"
                    "SFTTrainer(model=m, args=args, max_seq_length=256)\n"),
            evidence="TypeError: SFTTrainer.__init__() got an unexpected keyword argument "
                     "'max_seq_length'",
            facts=(("keyword", "max_seq_length"), ("callable", "trl.SFTTrainer"),
                   ("moves_to", "trl.SFTConfig"), ("as", "max_length")),
        ),
        Example(  # the configuration already sets it to the same value: dropped
            before=("from trl import SFTConfig, SFTTrainer\n"
                    "args = SFTConfig(output_dir='o', max_length=128)\n"
                    "SFTTrainer(model=m, args=args, max_seq_length=128)\n"),
            after=("from trl import SFTConfig, SFTTrainer\n"
                   "args = SFTConfig(output_dir='o', max_length=128)\n"
                   "SFTTrainer(model=m, args=args)\n"),
            evidence="TypeError: SFTTrainer.__init__() got an unexpected keyword argument "
                     "'max_seq_length'",
            facts=(("keyword", "max_seq_length"), ("callable", "trl.SFTTrainer"),
                   ("moves_to", "trl.SFTConfig"), ("as", "max_length")),
        ),
        Example(  # a constant as the moved value (False is a builtin, bound everywhere)
            before=("from trl import SFTConfig, SFTTrainer\n"
                    "args = SFTConfig(output_dir='o')\n"
                    "SFTTrainer(model=m, args=args, packing=False)\n"),
            after=("from trl import SFTConfig, SFTTrainer\n"
                   "args = SFTConfig(output_dir='o', packing=False)\n"
                   "SFTTrainer(model=m, args=args)\n"),
            evidence="TypeError: SFTTrainer.__init__() got an unexpected keyword argument "
                     "'packing'",
            facts=(("keyword", "packing"), ("callable", "trl.SFTTrainer"),
                   ("moves_to", "trl.SFTConfig"), ("as", "packing")),
        ),
        Example(  # the installed library takes it nowhere
            before=("from trl import DPOConfig, DPOTrainer\n"
                    "DPOTrainer(m, args=DPOConfig('o'), max_prompt_length=64)\n"),
            evidence="TypeError: DPOTrainer.__init__() got an unexpected keyword argument "
                     "'max_prompt_length'",
            facts=(("keyword", "max_prompt_length"), ("callable", "trl.DPOTrainer")),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        diag = self.rc.diagnosis
        named = named_class(diag.evidence)
        if named is None:
            raise OtherError("the error is not about an unexpected keyword argument")
        owner, kw = named
        kw = diag.fact("keyword") or kw
        target = diag.fact("callable")
        accepts, moves_to = diag.fact("accepts"), diag.fact("moves_to")
        takers = ""  # without facts: the callables a known rename applies to
        if not diag.facts:  # a traceback: a known rename only
            rename = rename_of(kw)
            if rename is None:
                raise NotApplicable(f"{kw}= is not a renamed keyword autofix knows (where a "
                                    "keyword moved is measured before the first run)")
            accepts, takers = rename.partner(kw), owner_calls(rename)
        calls = [c for c in self.program.calls
                 if self.library_call(c, target, owner) and keyword(c, kw) is not None
                 and (not takers or self.is_qualified(c.func, takers))]
        if not calls:
            raise NotApplicable(f"no call in this file passes {kw}= to "
                                f"{owner or target or 'the library'}")
        if accepts:
            for call in calls:
                if keyword(call, accepts) is not None:
                    raise NotApplicable(f"the call at line {self.program.line(call)} passes "
                                        f"both {kw}= and {accepts}=")
                self.plan_edit(call, _renamed(kw, accepts), f"{kw}= -> {accepts}= (the "
                               f"installed {owner or 'callable'} takes {accepts}=)")
            return
        if not moves_to:
            raise NotApplicable(f"the installed {owner or target} takes neither {kw}= nor a "
                                "renamed keyword, and its configuration class does not "
                                "take it either")
        self.moved: set[cst.Call] = set()
        for call in calls:
            self.move(call, kw, moves_to, diag.fact("as") or kw, diag.fact("keeps"))

    def move(self, call: cst.Call, kw: str, config: str, name: str, keeps: str) -> None:
        """Plan ``kw=`` of trainer ``call`` as ``name=`` of the ``config`` it receives."""
        arg = keyword(call, kw)
        assert arg is not None
        value = arg.value
        short = config.rsplit(".", 1)[1]
        built = self.args_constructions(call)
        if isinstance(built, str):
            raise NotApplicable(f"{built}: move {kw}= into that {short} as {name}=")
        if not built:
            module = config.rsplit(".", 1)[0]
            AddImportsVisitor.add_needed_import(self.context, module, short)
            new = cst.Call(cst.Name(short), [cst.Arg(
                value, keyword=cst.Name(name),
                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                      whitespace_after=cst.SimpleWhitespace("")))])

            def run(node: cst.CSTNode) -> cst.CSTNode:
                assert isinstance(node, cst.Call)
                return append_kw("args", new)(remove_keyword(node, kw))

            self.plan_edit(call, run, f"{kw}= moved into a new args={short}({name}=...) (the "
                                      f"trainer's output folder is then {short}'s default)")
            return
        same = [t for t in built if (given := keyword(t, name)) is not None
                and code(given.value) == code(value)]
        if same and len(same) == len(built):  # already there, with the same value
            self.plan_edit(call, _without(kw), f"dropped {kw}={code(value)} from "
                                               f"{code(call.func)}(...): its {short} already "
                                               f"sets {name}={code(value)}")
            return
        for target in built:
            if keyword(target, name) is not None:
                raise NotApplicable(f"the {code(target.func)}(...) at line "
                                    f"{self.program.line(target)} already sets {name}=, which "
                                    f"disagrees with the trainer's {kw}={code(value)}: keep "
                                    f"the value you want as {name}= there and drop {kw}= "
                                    f"from {code(call.func)}(...)")
            if not self.resolvable_at(value, target):
                raise NotApplicable(f"{code(value)} is not defined where the "
                                    f"{code(target.func)}(...) at line "
                                    f"{self.program.line(target)} is built")
        for target in built:
            if target in self.moved:
                continue
            self.moved.add(target)
            if not self.is_qualified(target.func, rf"{config.rsplit('.', 1)[0]}(\.[\w.]*)?"
                                                  rf"\.{short}"):
                swap, what = self.swap_class(target, config, keeps)
                self.plan_edit(target, swap, what)
            self.plan_edit(target, append_kw(name, value),
                           f"{kw}={code(value)} moved from the trainer into "
                           f"{short}({name}=...)")
        self.plan_edit(call, _without(kw), f"dropped {kw}= from {code(call.func)}(...)")
