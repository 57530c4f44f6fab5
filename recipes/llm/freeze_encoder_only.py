"""freeze-encoder-only: a loop meant to freeze the pretrained encoder freezes the head too.

Feature extraction ("keep the pretrained encoder fixed, train the classifier only") is
written as ``for p in model.parameters(): p.requires_grad = False``, or
``model.requires_grad_(False)``; on a model with a head that freezes the head as well, and
the optimizer gets an empty parameter list (``ValueError: optimizer got an empty
parameter list``, public report lxztju/pytorch_classification#13) or the loss has no
``grad_fn``. The run's facts say no parameter requires grad (the category's check). The
fix narrows the loop's target to the encoder: ``model.base_model`` for a Transformers
model with a head (``PreTrainedModel.base_model``: the encoder without the head), or the
attribute of the script's own ``nn.Module`` that holds the pretrained encoder
(``self.encoder = AutoModel.from_pretrained(...)``). When several attributes could be the
encoder, each is a candidate, tried in order (the rerun keeps the one that trains).
"""

from __future__ import annotations

from functools import partial

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, code, patterns
from autofix.toolkit.operators import frozen_loop_variable, narrow_receiver, parameter_loop_call
from autofix.toolkit.scope import Option, PlannedEdits

_NO_GRAD = {"lm": {"params_trainable": 0, "params_total": 1000}}


class FreezeEncoderOnly(PlannedEdits):
    id = "freeze-encoder-only"
    category = "no-trainable-parameters"
    title = "freeze the pretrained encoder only (model.base_model), so the head trains"
    requires_words = (("requires_grad", "requires_grad_"),)
    requires_imports = ("transformers",)
    nothing_to_do = ("no loop freezing every parameter of a Transformers model or of a module "
                     "holding one")

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForSequenceClassification as Auto\n"
                "model = Auto.from_pretrained(CKPT, num_labels=3)\n"
                "for param in model.parameters():\n"
                "    param.requires_grad = False\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification as Auto\n"
                "model = Auto.from_pretrained(CKPT, num_labels=3)\n"
                "for param in model.base_model.parameters():\n"
                "    param.requires_grad = False\n"
            ),
            run_facts=_NO_GRAD,
        ),
        Example(  # requires_grad_ on the whole model
            before=(
                "import transformers\n"
                "net = transformers.BertForSequenceClassification(cfg)\n"
                "net.requires_grad_(False)\n"
            ),
            after=(
                "import transformers\n"
                "net = transformers.BertForSequenceClassification(cfg)\n"
                "net.base_model.requires_grad_(False)\n"
            ),
            run_facts=_NO_GRAD,
        ),
        Example(  # the script's own module: the attribute holding the encoder
            before=(
                "import torch.nn as nn\n"
                "from transformers import AutoModel\n"
                "class Classifier(nn.Module):\n"
                "    def __init__(self, ckpt, n):\n"
                "        super().__init__()\n"
                "        self.encoder = AutoModel.from_pretrained(ckpt)\n"
                "        self.head = nn.Linear(384, n)\n"
                "        for _, p in self.named_parameters():\n"
                "            p.requires_grad = False\n"
            ),
            after=(
                "import torch.nn as nn\n"
                "from transformers import AutoModel\n"
                "class Classifier(nn.Module):\n"
                "    def __init__(self, ckpt, n):\n"
                "        super().__init__()\n"
                "        self.encoder = AutoModel.from_pretrained(ckpt)\n"
                "        self.head = nn.Linear(384, n)\n"
                "        for _, p in self.encoder.named_parameters():\n"
                "            p.requires_grad = False\n"
            ),
            run_facts=_NO_GRAD,
        ),
        Example(  # an instance of it, frozen from outside
            before=(
                "import torch.nn as nn\n"
                "from transformers import AutoModel\n"
                "class Net(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.bert = AutoModel.from_pretrained('m')\n"
                "        self.out = nn.Linear(384, 2)\n"
                "net = Net()\n"
                "for p in net.parameters():\n"
                "    p.requires_grad_(False)\n"
            ),
            after=(
                "import torch.nn as nn\n"
                "from transformers import AutoModel\n"
                "class Net(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.bert = AutoModel.from_pretrained('m')\n"
                "        self.out = nn.Linear(384, 2)\n"
                "net = Net()\n"
                "for p in net.bert.parameters():\n"
                "    p.requires_grad_(False)\n"
            ),
            run_facts=_NO_GRAD,
        ),
        Example(  # a selective freeze is the script's choice
            before=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(CKPT)\n"
                "for name, p in model.named_parameters():\n"
                "    if 'classifier' not in name:\n"
                "        p.requires_grad = False\n"
            ),
            run_facts=_NO_GRAD,
        ),
        Example(  # a plain encoder has no head to keep: the script's choice
            before=(
                "from transformers import AutoModel\n"
                "model = AutoModel.from_pretrained(CKPT)\n"
                "for p in model.parameters():\n"
                "    p.requires_grad = False\n"
            ),
            run_facts=_NO_GRAD,
        ),
        Example(  # the run trained some parameters: not this fault
            before=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(CKPT)\n"
                "for p in model.parameters():\n"
                "    p.requires_grad = False\n"
            ),
            run_facts={"lm": {"params_trainable": 10, "params_total": 1000}},
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        lm = self.rc.facts.get("lm") or {}
        if lm.get("params_trainable"):
            raise NotApplicable("the run's facts show trainable parameters")
        freezes: list[tuple[cst.Call, list[str]]] = []
        for call in self._freezing_calls(tree):
            assert isinstance(call.func, cst.Attribute)
            encoders = self._encoders(call.func.value)
            if encoders:
                freezes.append((call, encoders))
        if not freezes:
            raise NotApplicable(self.reason or self.nothing_to_do)
        width = max(len(e) for _, e in freezes)
        options = []
        for rank in range(width):
            picks = [(call, e[min(rank, len(e) - 1)]) for call, e in freezes]
            label = "; ".join(f"{code(c.func.value)}.{a}"  # type: ignore[attr-defined]
                              for c, a in picks)
            options.append(Option(label, partial(self._narrow, picks)))
        self.choose(options)

    def _narrow(self, picks: list[tuple[cst.Call, str]]) -> None:
        for call, attr in picks:
            assert isinstance(call.func, cst.Attribute)
            what = code(call.func.value)
            narrow_receiver(self, call, attr, f"freeze {what}.{attr} only, not all of {what}:"
                                              f" its head trains (line {self.program.line(call)})")

    def _freezing_calls(self, tree: cst.Module) -> list[cst.Call]:
        """``m.parameters()`` of the loops that freeze every parameter they walk, and
        ``m.requires_grad_(False)`` statements."""
        found: list[cst.Call] = []
        for loop in m.findall(tree, m.For()):
            assert isinstance(loop, cst.For)
            call = parameter_loop_call(loop)
            if call is not None and frozen_loop_variable(loop) is not None:
                found.append(call)
        for expr in m.findall(tree, m.Expr(value=m.Call(
                func=m.Attribute(attr=m.Name("requires_grad_")),
                args=[m.Arg(value=m.Name("False"))]))):
            assert isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call)
            found.append(expr.value)
        return found

    def _encoders(self, model: cst.BaseExpression) -> list[str]:
        """The attributes of ``model`` that hold its pretrained encoder, best first:
        ``base_model`` for a Transformers model with a head, the attributes a module of
        the script's own sets to a Transformers model in ``__init__``."""
        program = self.program
        if isinstance(model, cst.Name) and model.value == "self":
            cls = program.class_of(model)
            return self._encoder_attributes(cls) if cls is not None else []
        out: list[str] = []
        for value in program.values(model):
            if not isinstance(value, cst.Call):
                continue
            if self.is_qualified(value.func, patterns.TASK_MODEL):
                out.append("base_model")
            elif self.is_qualified(value.func, patterns.ANY_MODEL):
                self.reason = (f"{code(model)} is a Transformers model without a head: "
                               "which of its layers should train is the script's choice")
            else:
                cls = program.class_called(value)
                if cls is not None:
                    out += self._encoder_attributes(cls)
        return list(dict.fromkeys(out))

    def _encoder_attributes(self, cls: cst.ClassDef) -> list[str]:
        init = self.program.init_of(cls)
        if init is None:
            return []
        found: list[str] = []
        for assign in m.findall(init, m.Assign(targets=[m.AssignTarget(
                target=m.Attribute(value=m.Name("self")))])):
            assert isinstance(assign, cst.Assign)
            target = assign.targets[0].target
            assert isinstance(target, cst.Attribute)
            if isinstance(assign.value, cst.Call) and self.is_qualified(assign.value.func,
                                                                        patterns.ANY_MODEL):
                found.append(target.attr.value)
        if not found:
            self.reason = f"no attribute of {cls.name.value} holds a Transformers model"
        return found
