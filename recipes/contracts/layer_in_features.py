"""layer-size-mismatch: a linear layer built for another input size than the one it gets.

A head written for BERT-base (``nn.Linear(768, num_classes)``) on a 384-wide MiniLM
encoder raises "mat1 and mat2 shapes cannot be multiplied (16x384 and 768x3)". The facts
at the failure name the real objects (``autofix/run/child/layers.py``): the layer that
raised, its ``in_features``/``out_features``, the shape of its input, its qualified name in
the model (``head``, ``classifier.2``), the class that holds it and the model's pretrained
encoders with their ``config.hidden_size``.

The fix is made where the script builds that layer: the ``nn.Linear(...)`` call is found
from the layer's name (``self.<name> = ...`` in the class that holds it, a slot of the
``nn.Sequential(...)`` it sits in, the model's own assignment), and checked against the
layer's recorded sizes. Its ``in_features`` becomes the size the input has: when that is
the hidden size of one pretrained encoder the script holds in a name at the call
(``self.encoder`` set earlier in the same method, or a variable bound before the call),
``<encoder>.config.hidden_size``, so the head follows the checkpoint; else the observed
int, written where the value is defined (a literal, a constant, an attribute, a default,
a ``**kwargs`` entry: :mod:`autofix.toolkit.values`), or at the call when that definition
also feeds other code.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.categories.catalogue.contracts import linear_mismatch
from autofix.categories.failure import LayerAtFailure, layer_at_failure
from autofix.toolkit import Example, NotApplicable, code, patterns
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.scope import PlannedEdits, replace_with
from autofix.toolkit.values import UNKNOWN, CallOwner, Values
from autofix.types import ExceptionInfo


def _failure(built: int, given: int, out: int = 3, path: str = "head",
             owner: str = "__main__.Classifier", encoders: tuple[tuple[str, int, str], ...]
             = (("encoder", 384, ""),)) -> ExceptionInfo:
    return example_failure(
        "RuntimeError", f"mat1 and mat2 shapes cannot be multiplied (16x{given} and "
                        f"{built}x{out})", user={},
        library={"self": {"kind": "model", "type": "torch.nn.modules.linear.Linear",
                          "layer": {"in_features": built, "out_features": out},
                          "placed": {"path": path, "owner": owner,
                                     "root": "__main__.Classifier", "root_names": ["model"],
                                     "encoders": [{"path": p, "type": "BertModel",
                                                   "hidden_size": h,
                                                   "names": [n] if n else []}
                                                  for p, h, n in encoders]}},
                 "input": {"kind": "tensor", "dtype": "torch.float32",
                           "shape": [16, given]}},
        library_file="torch/nn/modules/linear.py", library_function="forward")


_CLASS = ("import torch\nfrom torch import nn\nfrom transformers import AutoModel\n"
          "class Classifier(nn.Module):\n"
          "    def __init__(self, checkpoint, num_classes=3):\n"
          "        super().__init__()\n"
          "        self.encoder = AutoModel.from_pretrained(checkpoint)\n")


class LayerInFeatures(PlannedEdits):
    id = "layer-in-features"
    category = "layer-size-mismatch"
    title = "build the linear layer with the input size it gets (an encoder's hidden size)"
    requires_imports = ("torch",)
    subject_from_change = True
    nothing_to_do = "no nn.Linear(...) call builds the layer that refused its input"

    examples = (
        Example(  # a head on a pretrained encoder: sized from its config
            before=_CLASS + "        self.head = nn.Linear(768, num_classes)\n",
            after=_CLASS + "        self.head = nn.Linear(self.encoder.config.hidden_size, "
                           "num_classes)\n",
            failure=_failure(768, 384),
        ),
        Example(  # a constant, no encoder: the observed size where it is defined
            before=("import torch.nn as nn\nHIDDEN = 256\n"
                    "model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(),\n"
                    "                      nn.Linear(HIDDEN, 10))\n"),
            after=("import torch.nn as nn\nHIDDEN = 128\n"
                   "model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(),\n"
                   "                      nn.Linear(HIDDEN, 10))\n"),
            failure=_failure(256, 128, 10, "2", "torch.nn.modules.container.Sequential", ()),
        ),
        Example(  # the size written as arithmetic of literals: one number in its place
            before=("import torch.nn as nn\n"
                    "model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(),\n"
                    "                      nn.Linear(16 * 4 * 4, 10))\n"),
            after=("import torch.nn as nn\n"
                   "model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(),\n"
                   "                      nn.Linear(128, 10))\n"),
            failure=_failure(256, 128, 10, "2", "torch.nn.modules.container.Sequential", ()),
        ),
        Example(  # a constant read elsewhere too: the size changed at the call
            before=("import torch.nn as nn\nHIDDEN = 256\n"
                    "model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(HIDDEN, 10))\n"
                    "print('hidden', HIDDEN)\n"),
            after=("import torch.nn as nn\nHIDDEN = 256\n"
                   "model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))\n"
                   "print('hidden', HIDDEN)\n"),
            failure=_failure(256, 128, 10, "2", "torch.nn.modules.container.Sequential", ()),
        ),
        Example(  # a keyword in_features in a module-level Sequential inside a class
            before=("import torch\nclass Net(torch.nn.Module):\n"
                    "    def __init__(self):\n        super().__init__()\n"
                    "        self.body = torch.nn.Linear(20, 64)\n"
                    "        self.classifier = torch.nn.Sequential(torch.nn.Dropout(0.1),\n"
                    "            torch.nn.Linear(in_features=32, out_features=2))\n"),
            after=("import torch\nclass Net(torch.nn.Module):\n"
                   "    def __init__(self):\n        super().__init__()\n"
                   "        self.body = torch.nn.Linear(20, 64)\n"
                   "        self.classifier = torch.nn.Sequential(torch.nn.Dropout(0.1),\n"
                   "            torch.nn.Linear(in_features=64, out_features=2))\n"),
            failure=_failure(32, 64, 2, "classifier.1", "torch.nn.modules.container.Sequential",
                             ()),
        ),
        Example(  # the encoder held in a variable bound before the head is built
            before=("import torch\nfrom transformers import AutoModel\n"
                    "encoder = AutoModel.from_pretrained('m')\nDIM = 768\n"
                    "head = torch.nn.Linear(DIM, 3)\n"),
            after=("import torch\nfrom transformers import AutoModel\n"
                   "encoder = AutoModel.from_pretrained('m')\nDIM = 768\n"
                   "head = torch.nn.Linear(encoder.config.hidden_size, 3)\n"),
            failure=_failure(768, 384, path="head", owner="__main__.Classifier",
                             encoders=(("encoder", 384, "encoder"),)),
        ),
        Example(  # the layer's sizes are not those of the call found: another layer
            before=_CLASS + "        self.head = nn.Linear(512, num_classes)\n",
            failure=_failure(768, 384),
        ),
        Example(  # the sizes agree: another fault
            before=_CLASS + "        self.head = nn.Linear(768, num_classes)\n",
            failure=_failure(768, 768),
        ),
        Example(  # no facts: no claim about the sizes
            before=_CLASS + "        self.head = nn.Linear(768, num_classes)\n",
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        failure = failure_of(self.rc)
        layer = layer_at_failure(failure) if failure is not None else None
        sizes = linear_mismatch(layer)
        if layer is None or sizes is None:
            raise NotApplicable("the facts at the failure show no linear layer given "
                                "another input size than its in_features")
        built, given = sizes
        self.values = Values(self)
        calls = [c for c in self._built_at(layer.path, layer, layer.owner)
                 if self._sized(c, layer, built)]
        if not calls:
            calls = [c for c in self.values.calls(patterns.LINEAR) if self._sized(c, layer, built)]
        if len(calls) != 1:
            name = layer.path or "the layer"
            raise NotApplicable(self.reason or (
                f"{len(calls)} nn.Linear(...) calls could have built {name} (in_features="
                f"{built}): which one is not clear" if calls else self.nothing_to_do))
        self._resize(calls[0], layer, built, given)

    # -- which call built the layer ----------------------------------------------------

    def _built_at(self, path: str, layer: LayerAtFailure, holder: str) -> list[cst.Call]:
        """The calls that build the module at ``path`` of the model (``""``: the model),
        whose parent module is of the class ``holder`` ("" unknown)."""
        if not path:
            return [c for name in layer.root_names for c in self._module_calls(name)]
        parent, _, leaf = path.rpartition(".")
        if leaf.isdigit():
            found: list[cst.Call] = []
            above = layer.root if "." not in parent else ""
            for seq in self._built_at(parent, layer, above):
                if not self.is_qualified(seq.func, patterns.SEQUENTIAL) or \
                        any(a.star or a.keyword is not None for a in seq.args):
                    continue
                if int(leaf) < len(seq.args):
                    found += self._calls_of(seq.args[int(leaf)].value)
            return found
        owner = holder.rsplit(".", 1)[-1]
        classes = [self.program.classes[owner]] if owner in self.program.classes else \
            list(self.program.classes.values())
        found = []
        for cls in classes:
            for assign in m.findall(cls, m.Assign(targets=[m.AssignTarget(
                    target=m.Attribute(value=m.Name("self"), attr=m.Name(leaf)))])):
                assert isinstance(assign, cst.Assign)
                found += self._calls_of(assign.value)
        if not found and not parent:  # model.head = nn.Linear(...) on the model's name
            for name in layer.root_names:
                for assign in m.findall(self.program.tree, m.Assign(targets=[m.AssignTarget(
                        target=m.Attribute(value=m.Name(name), attr=m.Name(leaf)))])):
                    assert isinstance(assign, cst.Assign)
                    found += self._calls_of(assign.value)
        return found

    def _module_calls(self, name: str) -> list[cst.Call]:
        found: list[cst.Call] = []
        for assign in m.findall(self.program.tree, m.Assign(targets=[m.AssignTarget(
                target=m.Name(name))])):
            assert isinstance(assign, cst.Assign)
            found += self._calls_of(assign.value)
        return found

    def _calls_of(self, expr: cst.BaseExpression) -> list[cst.Call]:
        return [v for v in self.values.origins(expr) if isinstance(v, cst.Call)]

    def _sized(self, call: cst.Call, layer: LayerAtFailure, built: int) -> bool:
        """``call`` is an ``nn.Linear(...)`` whose sizes, where the script states them as
        literals, are the layer's (``in_features`` ``built``, its ``out_features``)."""
        if not self.is_qualified(call.func, patterns.LINEAR):
            return False
        owner = CallOwner(self.values, call)
        for name, position, want in (("in_features", 0, built),
                                     ("out_features", 1, layer.size("out_features"))):
            found = owner.get(name, position=position)
            if found.present and found.value is not UNKNOWN and want is not None \
                    and found.value != want:
                self.reason = self.reason or (
                    f"{code(call)} has {name}={found.value}, the layer that failed "
                    f"{want}: not the call that built it")
                return False
        return True

    # -- the edit --------------------------------------------------------------------

    def _resize(self, call: cst.Call, layer: LayerAtFailure, built: int, given: int) -> None:
        owner = CallOwner(self.values, call)
        expr, holder = owner.expression("in_features", position=0)
        if expr is None:
            raise NotApplicable(f"{code(call.func)}(...) gives no in_features")
        encoder = self._encoder_expression(call, layer, given)
        why = f"the input has {given} features, not {built}"
        if encoder is not None and not holder:
            self.plan_edit(expr, replace_with(encoder),
                           f"in_features={code(encoder)} ({why}: the encoder's hidden size)")
            return
        found = owner.get("in_features", position=0)
        if found.node is not None and found.node is not expr and self._shared(found.node):
            self.plan_edit(expr, replace_with(cst.Integer(str(given))),
                           f"in_features={given} at the call ({why}; {code(found.node)} at "
                           f"line {found.line} is read elsewhere too)")
            return
        owner.set("in_features", given, why, position=0)

    def _shared(self, literal: cst.CSTNode) -> bool:
        """The literal is bound to a name (a constant ``HIDDEN = 768``, a parameter's
        default) that is read more than once: rewriting it would resize other code too."""
        parent = self.program.parent(literal)
        target: cst.CSTNode | None = None
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
        elif isinstance(parent, cst.AnnAssign):
            target = parent.target
        elif isinstance(parent, cst.Param):
            target = parent.name
        if not isinstance(target, cst.Name):
            return False
        name = target
        scope = self.program.scope(name)
        if scope is None:
            return False
        reads = {r.node for a in scope.assignments[name.value] if getattr(a, "node", None)
                 is name for r in a.references}
        return len(reads) > 1

    def _encoder_expression(self, call: cst.Call, layer: LayerAtFailure, given: int
                            ) -> cst.BaseExpression | None:
        """``<encoder>.config.hidden_size`` for the one pretrained encoder of ``given``
        hidden size, when a name holds it at ``call``: ``self.<path>`` with ``self.<first
        part>`` assigned earlier in the same method of the model's class, or a name the
        user's frames bound to it that resolves at the call on an earlier line."""
        encoder = layer.encoder_of(given)
        if encoder is None:
            return None
        line = self.program.line(call)
        func = self.program.function_of(call)
        cls = self.program.class_of(call)
        root = layer.root.rsplit(".", 1)[-1]
        if encoder.path and func is not None and cls is not None and cls.name.value == root:
            first = encoder.path.split(".")[0]
            earlier = [a for a in m.findall(func, m.Assign(targets=[m.AssignTarget(
                target=m.Attribute(value=m.Name("self"), attr=m.Name(first)))]))
                if self.program.line(a) < line]
            if earlier:
                return cst.parse_expression(f"self.{encoder.path}.config.hidden_size")
        for name in encoder.names:
            bound = self.program.resolve(name, call)
            if bound and all(self.program.line(b) < line for b in bound) \
                    and self.program.resolves(name, call):
                return cst.parse_expression(f"{name}.config.hidden_size")
        return None
