"""trainer-setup: the trainer is asked to evaluate but was given no evaluation data.

``Trainer.get_eval_dataloader`` (transformers 5.24, 4.57.6) raises ``Trainer: evaluation
requires an eval_dataset.`` when ``trainer.evaluate()`` (or TRL's GRPO trainer, which
names ``eval_dataset`` the same way) runs with ``eval_dataset=None``. The message names the
argument; the value is the script's own: an evaluation split of the training data in
scope (``tokenized["validation"]`` beside ``tokenized["train"]``, or a variable holding it)
is passed to the trainer. With none in scope no edit is safe (evaluating on the training
data would report the wrong thing), and the advice says what to pass.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from autofix.categories.advice import Advice
from autofix.toolkit import Example, NotApplicable, argument, code
from autofix.toolkit.scope import append_kw

from ._advice import AdviceRecipe, flat

_EVIDENCE = "ValueError: Trainer: evaluation requires an eval_dataset."
_LOAD = ("from datasets import load_dataset\n"
         "from transformers import Trainer, TrainingArguments\n"
         "raw = load_dataset('json', data_files={'train': 't.jsonl', 'test': 'v.jsonl'})\n"
         "enc = raw.map(encode, batched=True)\n")


class PassEvalDataset(AdviceRecipe):
    id = "eval-dataset-for-evaluate"
    category = "trainer-setup"
    title = "give the trainer the script's evaluation split, which evaluation requires"
    requires_words = (("eval_dataset", "evaluate"),)
    nothing_to_do = "no trainer call without eval_dataset"

    examples = (
        Example(
            before=_LOAD + "trainer = Trainer(model=model, args=TrainingArguments('o'),\n"
                           "                  train_dataset=enc['train'].select(range(32)))\n"
                           "trainer.train()\n"
                           "print(trainer.evaluate())\n",
            after=_LOAD + "trainer = Trainer(model=model, args=TrainingArguments('o'),\n"
                          "                  train_dataset=enc['train'].select(range(32)),\n"
                          "                  eval_dataset=enc[\"test\"])\n"
                          "trainer.train()\n"
                          "print(trainer.evaluate())\n",
            evidence=_EVIDENCE,
        ),
        Example(  # no evaluation split in scope: advice only
            before="from transformers import Trainer, TrainingArguments\n"
                   "trainer = Trainer(model=model, args=TrainingArguments('o'), "
                   "train_dataset=train)\n"
                   "trainer.evaluate()\n",
            evidence=_EVIDENCE,
        ),
    )

    @classmethod
    def handles(cls, advice: Sequence[Advice], message: str) -> bool:
        found = flat(advice)
        return any(a.kind == "pass" and a.target == "eval_dataset" for a in found) and \
            not any(a.target in ("eval_strategy", "evaluation_strategy") for a in found)

    def make(self, tree: cst.Module) -> None:
        trainers = [t for t in self.at_failure(self.trainer_calls())
                    if argument(t, "eval_dataset", 4) is None]
        if len(trainers) != 1:
            raise NotApplicable(f"{len(trainers)} trainer calls without eval_dataset could "
                                "be the one that evaluates")
        split = self.eval_split(trainers[0])
        if split is None:
            raise NotApplicable("no evaluation split of the training data is in scope: pass "
                                "evaluation data as eval_dataset to the trainer (or to "
                                "trainer.evaluate(eval_dataset=...))")
        self.plan_edit(trainers[0], append_kw("eval_dataset", split),
                       f"eval_dataset={code(split)}, the evaluation split in scope, as "
                       "evaluation requires")
