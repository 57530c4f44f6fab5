"""conv-input-layout: a convolution given inputs whose channels are not on axis 1: images
kept channels-last (``(N, H, W, C)`` from numpy or PIL: ``Given groups=1, weight of size
[8, 3, 3, 3], expected input[16, 32, 32, 3] to have 3 channels, but got 32 channels``), or
a one-channel batch without its channel axis (``(N, H, W)``).

The child read the input's shape against the layer's ``in_channels`` and confirmed the
layout on the real tensors: the same layer passes on ``input.permute(0, 3, 1, 2)`` (or on
``input.unsqueeze(1)``). The recipe puts the channels on axis 1 where the script makes
the tensor (``torch.tensor(images).permute(0, 3, 1, 2)``), else where the model gets it.
"""

from __future__ import annotations

from autofix.categories.breaches import CallBreach
from autofix.toolkit import Example
from autofix.toolkit.provenance import Provenance
from autofix.toolkit.scope import Option
from autofix.toolkit.source_ops import method_options

from ._breach import BreachRecipe, breach_failure


def _breach(line: int, name: str, operator: str) -> dict[str, object]:
    return {"contract": "conv-input-layout", "category": "conv-input-layout",
            "api": "torch.nn.Conv2d", "argument": "input",
            "says": "inputs with their channels on axis 1", "property": "layout",
            "observed": "inputs of shape (16, 32, 32, 3)", "expected": "(batch, 3, ...)",
            "facts": {"shape": [16, 32, 32, 3], "in_channels": 3},
            "trial": {"operator": operator, "change": ""},
            "holders": [{"file": "script.py", "line": line, "function": "<module>",
                         "name": name, "key": ""}]}


_IMAGES = (
    "import numpy as np\n"
    "import torch\n"
    "raw = np.random.rand(64, 32, 32, 3)\n"
    "images = torch.tensor(raw, dtype=torch.float32)\n"
    "for i in range(0, 64, 16):\n"
    "    out = net(images[i:i + 16])\n"
)
_GRAY = (
    "import torch\n"
    "digits = torch.rand(64, 28, 28)\n"
    "for xb in digits.split(16):\n"
    "    out = net(xb)\n"
)


class PermuteChannels(BreachRecipe):
    id = "permute-channels"
    category = "conv-input-layout"
    title = "put the channels of the convolution's inputs on axis 1 where they are made"
    requires_imports = ("torch",)
    operators = ("channels-first", "add-channel-axis")
    subject_from_change = True
    restores = ("conv-input-layout",)
    nothing_to_do = "the convolution's input was not followed to where the script makes it"

    examples = (
        Example(before=_IMAGES, after=_IMAGES.replace(
                    "dtype=torch.float32)\n", "dtype=torch.float32).permute(0, 3, 1, 2)\n"),
                failure=breach_failure("expected input to have 3 channels",
                                       _breach(6, "images", "channels-first"), 6)),
        Example(before=_GRAY, after=_GRAY.replace("torch.rand(64, 28, 28)",
                                                  "torch.rand(64, 28, 28).unsqueeze(1)"),
                failure=breach_failure("expected input to have 1 channels",
                                       _breach(4, "xb", "add-channel-axis"), 4)),
        Example(  # the chain puts the channels first already: not this value
            before=_IMAGES.replace("dtype=torch.float32)\n",
                                   "dtype=torch.float32).permute(0, 3, 1, 2)\n"),
            failure=breach_failure("expected input to have 3 channels",
                                   _breach(6, "images", "channels-first"), 6)),
    )

    def candidates(self, breach: CallBreach, provenance: Provenance) -> list[Option]:
        starts = self.starts(breach, provenance)
        if (breach.operator or next(iter(breach.repairs), "")) == "add-channel-axis":
            return method_options(self, starts, "unsqueeze", (1,),
                                  "the one channel's axis added")
        rank = len(breach.facts.get("shape") or (0, 0, 0, 0))
        return method_options(self, starts, "permute", (0, rank - 1, *range(1, rank - 1)),
                              "the channels on axis 1, where the convolution reads them")
