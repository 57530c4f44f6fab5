"""training-args-conflict: evaluation is scheduled but the trainer has no evaluation data.

``Trainer.__init__`` (transformers 5.24, 4.57.6) raises ``You have set `args.eval_strategy`
to IntervalStrategy.STEPS but you didn't pass an `eval_dataset` to `Trainer`. Either set
`args.eval_strategy` to `no` or pass an `eval_dataset`.`` The recipe chooses between the
two alternatives from what the script has: an evaluation split of the training data in
scope (``tokenized["validation"]`` beside ``tokenized["train"]``, or a variable holding it)
is passed as ``eval_dataset``; with none, evaluation is turned off (``eval_strategy="no"``,
at the place the strategy is defined) unless ``load_best_model_at_end`` needs evaluation to
choose the best model: then no edit is safe and the advice says so.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from autofix.categories.advice import Advice
from autofix.toolkit import Example, NotApplicable, argument, code
from autofix.toolkit.scope import append_kw

from ._advice import AdviceRecipe, flat

_EVIDENCE = ("ValueError: You have set `args.eval_strategy` to IntervalStrategy.STEPS but you "
             "didn't pass an `eval_dataset` to `Trainer`. Either set `args.eval_strategy` to "
             "`no` or pass an `eval_dataset`.")
_LOAD = ("from datasets import load_dataset\n"
         "from transformers import Trainer, TrainingArguments\n"
         "raw = load_dataset('json', data_files={'train': 'train.jsonl', "
         "'validation': 'dev.jsonl'})\n"
         "tokenized = raw.map(encode, batched=True)\n")


class PassEvalSplit(AdviceRecipe):
    id = "eval-dataset-for-strategy"
    category = "training-args-conflict"
    title = ("evaluate on the script's evaluation split, or schedule no evaluation when "
             "there is none")
    requires_words = (("eval_strategy", "evaluation_strategy"),)
    nothing_to_do = "no Trainer(...) without eval_dataset"

    examples = (
        Example(  # the validation split of the same dataset is in scope
            before=_LOAD + "args = TrainingArguments('out', eval_strategy='steps')\n"
                           "trainer = Trainer(model=model, args=args,\n"
                           "                  train_dataset=tokenized['train'])\n",
            after=_LOAD + "args = TrainingArguments('out', eval_strategy='steps')\n"
                          "trainer = Trainer(model=model, args=args,\n"
                          "                  train_dataset=tokenized['train'], "
                          "eval_dataset=tokenized[\"validation\"])\n",
            evidence=_EVIDENCE,
        ),
        Example(  # a variable holds the split; the training split is a selection
            before=_LOAD + "train_ds, val_ds = tokenized['train'], None\n"
                           "val_ds = tokenized['validation']\n"
                           "trainer = Trainer(model, TrainingArguments('o', "
                           "eval_strategy='epoch'),\n"
                           "                  train_dataset=tokenized['train'].select("
                           "range(100)))\n",
            after=_LOAD + "train_ds, val_ds = tokenized['train'], None\n"
                          "val_ds = tokenized['validation']\n"
                          "trainer = Trainer(model, TrainingArguments('o', "
                          "eval_strategy='epoch'),\n"
                          "                  train_dataset=tokenized['train'].select("
                          "range(100)),\n"
                          "                  eval_dataset=val_ds)\n",
            evidence=_EVIDENCE,
        ),
        Example(  # no evaluation split: evaluation is turned off, at its source
            before="from dataclasses import dataclass\n"
                   "from transformers import Trainer, TrainingArguments\n"
                   "@dataclass\n"
                   "class Config:\n"
                   "    strategy: str = 'steps'\n"
                   "cfg = Config()\n"
                   "args = TrainingArguments('out', eval_strategy=cfg.strategy, eval_steps=5)\n"
                   "Trainer(model=model, args=args, train_dataset=train)\n",
            after="from dataclasses import dataclass\n"
                  "from transformers import Trainer, TrainingArguments\n"
                  "@dataclass\n"
                  "class Config:\n"
                  "    strategy: str = 'no'\n"
                  "cfg = Config()\n"
                  "args = TrainingArguments('out', eval_strategy=cfg.strategy, eval_steps=5)\n"
                  "Trainer(model=model, args=args, train_dataset=train)\n",
            evidence=_EVIDENCE,
        ),
        Example(  # no split and the best model is chosen by evaluation: advice only
            before="from transformers import Trainer, TrainingArguments\n"
                   "args = TrainingArguments('out', eval_strategy='epoch', "
                   "save_strategy='epoch', load_best_model_at_end=True)\n"
                   "Trainer(model=model, args=args, train_dataset=train)\n",
            evidence=_EVIDENCE,
        ),
        Example(  # another message
            before=_LOAD + "Trainer(model=model, args=TrainingArguments('o', "
                           "eval_strategy='no'), train_dataset=tokenized['train'])\n",
            evidence="ValueError: Trainer: evaluation requires an eval_dataset.",
        ),
    )

    @classmethod
    def handles(cls, advice: Sequence[Advice], message: str) -> bool:
        found = {(a.kind, a.target) for a in flat(advice)}
        return ("pass", "eval_dataset") in found and ("set", "eval_strategy") in found

    def make(self, tree: cst.Module) -> None:
        trainers = [t for t in self.at_failure(self.trainer_calls())
                    if argument(t, "eval_dataset", 4) is None]
        if len(trainers) != 1:
            raise NotApplicable(f"{len(trainers)} trainer calls without eval_dataset could "
                                "be the failing one")
        trainer = trainers[0]
        split = self.eval_split(trainer)
        if split is not None:
            self.plan_edit(trainer, append_kw("eval_dataset", split),
                           f"eval_dataset={code(split)}, the evaluation split in scope")
            self.choice = f"pass eval_dataset={code(split)}, the evaluation split in scope"
            return
        args = self.the_args()
        if args.value("load_best_model_at_end", default=False) is True:
            raise NotApplicable(
                "no evaluation split of the training data is in scope, and "
                "load_best_model_at_end=True chooses the best model by evaluation: pass "
                "evaluation data as eval_dataset to the trainer, or turn "
                "load_best_model_at_end off")
        name = args.get("eval_strategy", "evaluation_strategy").name
        args.set(name, "no", "no evaluation split is in scope")
        self.choice = (f"{name}=\"no\": no evaluation split of the training data is in "
                       "scope")

    def summary(self) -> str:
        return f"{self.choice} (the library's advice: set eval_strategy to no, or pass an " \
               "eval_dataset)"
