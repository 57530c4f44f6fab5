"""label-out-of-range: the classification head has fewer outputs than there are classes.

Course (chapter 8): labels range over 0..2 but ``from_pretrained`` built a head with the
default ``num_labels=2``; fix "by adding num_labels=3 when we create the model".
N is counted from every source the probe saw, the largest wins:

- the training data given to ``Trainer``, a ``DataLoader`` or ``to_tf_dataset``: the
  ``ClassLabel`` feature's ``num_classes``, else max label + 1 over the whole split (per-token
  label lists of a token-classification set too);
- the facts at the failure: the largest target the loss read, + 1 (the error's own
  ``Target 3 is out of bounds``), raised to the range of an integer column of a pandas
  ``DataFrame`` in the user's frames that holds every target of the batch (the labels of a
  torch ``Dataset`` subclass over a frame read by hand).

Labels that start at 1 need shifting, not a bigger head, so the recipe declines them (the
recipe ``labels-from-zero`` shifts them). Where the value is set is the family's
(``recipes/_num_labels.py``): the config call when the model is given a config, the value's
source, or a count variable or config value in scope (whose definition is set).
"""

from __future__ import annotations

from autofix.toolkit import Example
from autofix.types import DatasetFacts, ExceptionInfo, FrameFacts, TrainerFacts

from ._num_labels import HeadSize, measured_num_labels


def _facts(label_max: float, classes: int | None = None, num_labels: int = 2,
           model: str = "BertForSequenceClassification", kind: str = "int") -> TrainerFacts:
    return TrainerFacts("Trainer", model, num_labels, (
        DatasetFacts("train", ("premise", "label"), 600, "label", kind, classes, 0, label_max),
    ))


def _target_at_loss(high: int, width: int = 2) -> ExceptionInfo:
    """An out-of-range failure as the child reports it: the loss frame's facts."""
    target = {"kind": "tensor", "dtype": "torch.int64", "shape": [16], "min": 0, "max": high,
              "negatives": 0, "ignored": 0, "distinct": [0, 1, high]}
    logits = {"kind": "tensor", "dtype": "torch.float32", "shape": [16, width]}
    return ExceptionInfo("builtins.IndexError", f"Target {high} is out of bounds.", facts=(
        FrameFacts("torch/nn/functional.py", 1, "cross_entropy", False,
                   {"input": logits, "target": target}),))


class SetNumLabels(HeadSize):
    id = "label-out-of-range"
    category = "label-out-of-range"
    requires_imports = ("transformers",)
    title = "set num_labels to the number of classes in the data"

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(checkpoint)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(checkpoint,"
                " num_labels=3)\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a wrong existing value, an alias, ClassLabel count wins
            before=(
                "import transformers as t\n"
                "net = t.BertForSequenceClassification.from_pretrained(\n"
                "    ckpt, num_labels=2  # head\n"
                ")\n"
            ),
            after=(
                "import transformers as t\n"
                "net = t.BertForSequenceClassification.from_pretrained(\n"
                "    ckpt, num_labels=5  # head\n"
                ")\n"
            ),
            trainers=(_facts(3, classes=5),),
        ),
        Example(  # labels 1..3: shifting is the fix, not num_labels
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "model = M.from_pretrained(checkpoint)\n"
            ),
            trainers=(TrainerFacts("Trainer", "X", 2, (
                DatasetFacts("train", ("label",), 9, "label", "int", None, 1, 3),)),),
        ),
        Example(  # no facts about the data: nothing measured, nothing changed
            before=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(checkpoint)\n"
            ),
        ),
        Example(  # fixed at the source: the dataclass field default, not the use site
            before=(
                "from dataclasses import dataclass\n"
                "from transformers import AutoModelForSequenceClassification as M\n"
                "@dataclass\n"
                "class Config:\n"
                "    num_labels: int = 2  # classes\n"
                "def parse() -> Config:\n"
                "    return Config()\n"
                "def main():\n"
                "    cfg = parse()\n"
                "    M.from_pretrained(ckpt, num_labels=cfg.num_labels)\n"
            ),
            after=(
                "from dataclasses import dataclass\n"
                "from transformers import AutoModelForSequenceClassification as M\n"
                "@dataclass\n"
                "class Config:\n"
                "    num_labels: int = 3  # classes\n"
                "def parse() -> Config:\n"
                "    return Config()\n"
                "def main():\n"
                "    cfg = parse()\n"
                "    M.from_pretrained(ckpt, num_labels=cfg.num_labels)\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a module constant, used through a function parameter
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "NUM_LABELS = 2\n"
                "def build(n):\n"
                "    return M.from_pretrained(ckpt, num_labels=n)\n"
                "model = build(NUM_LABELS)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "NUM_LABELS = 3\n"
                "def build(n):\n"
                "    return M.from_pretrained(ckpt, num_labels=n)\n"
                "model = build(NUM_LABELS)\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # an argparse default
            before=(
                "import argparse\n"
                "from transformers import AutoModelForSequenceClassification as M\n"
                "p = argparse.ArgumentParser()\n"
                "p.add_argument('--num-labels', type=int, default=2)\n"
                "args = p.parse_args()\n"
                "M.from_pretrained(ckpt, num_labels=args.num_labels)\n"
            ),
            after=(
                "import argparse\n"
                "from transformers import AutoModelForSequenceClassification as M\n"
                "p = argparse.ArgumentParser()\n"
                "p.add_argument('--num-labels', type=int, default=3)\n"
                "args = p.parse_args()\n"
                "M.from_pretrained(ckpt, num_labels=args.num_labels)\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a dict literal config
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "CONFIG = {'lr': 5e-5, 'num_labels': 2}\n"
                "M.from_pretrained(ckpt, num_labels=CONFIG['num_labels'])\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "CONFIG = {'lr': 5e-5, 'num_labels': 3}\n"
                "M.from_pretrained(ckpt, num_labels=CONFIG['num_labels'])\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a computed value: reported, not overwritten with a literal
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "M.from_pretrained(ckpt, num_labels=len(names))\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # the model is given a config: the config call decides the head
            before=(
                "from transformers import AutoConfig, AutoModelForSequenceClassification\n"
                "def main(label_list):\n"
                "    num_labels = len(label_list)\n"
                "    config = AutoConfig.from_pretrained(ckpt, num_labels=2, finetuning_task=t)\n"
                "    model = AutoModelForSequenceClassification.from_pretrained(\n"
                "        ckpt, config=config)\n"
            ),
            after=(
                "from transformers import AutoConfig, AutoModelForSequenceClassification\n"
                "def main(label_list):\n"
                "    num_labels = len(label_list)\n"
                "    config = AutoConfig.from_pretrained(ckpt, num_labels=num_labels, "
                "finetuning_task=t)\n"
                "    model = AutoModelForSequenceClassification.from_pretrained(\n"
                "        ckpt, config=config)\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a count variable in scope (a parameter): passed, not a literal
            before=(
                "from transformers import AutoModelForTokenClassification\n"
                "def build_model(num_labels):\n"
                "    return AutoModelForTokenClassification.from_pretrained(CKPT)\n"
            ),
            after=(
                "from transformers import AutoModelForTokenClassification\n"
                "def build_model(num_labels):\n"
                "    return AutoModelForTokenClassification.from_pretrained(CKPT, "
                "num_labels=num_labels)\n"
            ),
            trainers=(_facts(4, model="BertForTokenClassification", kind="int-list"),),
        ),
        Example(  # no dataset seen (a torch Dataset subclass): the error's own target
            before=(
                "from transformers import BertConfig, BertForSequenceClassification\n"
                "NUM_CLASSES = 2\n"
                "model = BertForSequenceClassification(BertConfig(num_labels=NUM_CLASSES))\n"
            ),
            after=(
                "from transformers import BertConfig, BertForSequenceClassification\n"
                "NUM_CLASSES = 4\n"
                "model = BertForSequenceClassification(BertConfig(num_labels=NUM_CLASSES))\n"
            ),
            failure=_target_at_loss(3),
        ),
        Example(  # a count variable in scope with a wrong value: set where it is defined
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "num_labels = 2\n"
                "model = M.from_pretrained(ckpt)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "num_labels = 3\n"
                "model = M.from_pretrained(ckpt, num_labels=num_labels)\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a literal at the call next to a constant in scope: the constant is set
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "NUM_CLASSES = 2\n"
                "def build():\n"
                "    return M.from_pretrained(ckpt, num_labels=2)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "NUM_CLASSES = 4\n"
                "def build():\n"
                "    return M.from_pretrained(ckpt, num_labels=NUM_CLASSES)\n"
            ),
            failure=_target_at_loss(3),
        ),
        Example(  # a config value read elsewhere: its entry is set and passed
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "CONFIG = {'lr': 5e-5, 'num_labels': 2}\n"
                "print('classes:', CONFIG['num_labels'])\n"
                "model = M.from_pretrained(ckpt)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "CONFIG = {'lr': 5e-5, 'num_labels': 3}\n"
                "print('classes:', CONFIG['num_labels'])\n"
                "model = M.from_pretrained(ckpt, num_labels=CONFIG['num_labels'])\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a config attribute set after the config is made
            before=(
                "import transformers\n"
                "cfg = transformers.BertConfig(hidden_size=32)\n"
                "cfg.num_labels = 2\n"
                "model = transformers.AutoModelForSequenceClassification.from_config(cfg)\n"
            ),
            after=(
                "import transformers\n"
                "cfg = transformers.BertConfig(hidden_size=32)\n"
                "cfg.num_labels = 3\n"
                "model = transformers.AutoModelForSequenceClassification.from_config(cfg)\n"
            ),
            trainers=(_facts(2),),
        ),
    )

    def wanted(self) -> int:
        return measured_num_labels(self.rc)

    def summary(self) -> str:
        return (f"set num_labels={self.num_labels}, the number of classes in the training "
                f"data{self.where()}")
