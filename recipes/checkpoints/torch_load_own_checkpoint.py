"""weights-only-unpickling: ``torch.load`` refuses the checkpoint the script itself saved.

Public report: GET-Foundation/get_model#23 (``Weights only load failed ... Unsupported
global: GLOBAL numpy._core.multiarray.scalar``): since PyTorch 2.6 ``torch.load`` defaults
to ``weights_only=True``, which refuses anything but tensors and plain containers, such as
a NumPy accuracy stored next to the weights. PyTorch's own message gives the fix for a
trusted file: ``weights_only=False``. A file the same script wrote with ``torch.save`` is
trusted, so exactly then the recipe adds ``weights_only=False`` to ``torch.load``; a
checkpoint from elsewhere is left to the user (allowlist its globals with
``torch.serialization.add_safe_globals``).
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, code, keyword, patterns
from autofix.toolkit.scope import PlannedEdits, append_kw


def _path(call: cst.Call, position: int, name: str) -> cst.BaseExpression | None:
    arg = keyword(call, name)
    if arg is not None:
        return arg.value
    plain = [a for a in call.args if a.keyword is None and not a.star]
    return plain[position].value if len(plain) > position else None


class TorchLoadOwnCheckpoint(PlannedEdits):
    id = "torch-load-own-checkpoint"
    category = "weights-only-unpickling"
    requires_words = (("load",), ("save",))
    requires_imports = ("torch",)
    title = "load the script's own checkpoint with weights_only=False"
    nothing_to_do = "no torch.load of a file this script saves with torch.save"

    examples = (
        Example(
            before=(
                "import torch\n"
                "ckpt = 'last.pt'\n"
                "for epoch in range(2):\n"
                "    if epoch:\n"
                "        state = torch.load(ckpt)\n"
                "    torch.save({'model': model.state_dict(), 'best': best}, ckpt)\n"
            ),
            after=(
                "import torch\n"
                "ckpt = 'last.pt'\n"
                "for epoch in range(2):\n"
                "    if epoch:\n"
                "        state = torch.load(ckpt, weights_only=False)\n"
                "    torch.save({'model': model.state_dict(), 'best': best}, ckpt)\n"
            ),
        ),
        Example(  # a checkpoint from elsewhere: not the script's to trust
            before="import torch\nstate = torch.load('downloaded.pt')\n",
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        program = self.program
        saves = [c for c in program.calls if self.is_qualified(c.func, patterns.TORCH_SAVE)]
        saved = [p for p in (_path(c, 1, "f") for c in saves) if p is not None]
        for call in program.calls:
            if not self.is_qualified(call.func, patterns.TORCH_LOAD) or \
                    keyword(call, "weights_only"):
                continue
            path = _path(call, 0, "f")
            if path is None:
                continue
            if not any(program.same_value(path, other) or code(path) == code(other)
                       and isinstance(path, cst.SimpleString) for other in saved):
                self.reason = (f"torch.load({code(path)}) reads a file this script does not "
                               "save: allowlist its globals (torch.serialization."
                               "add_safe_globals) or pass weights_only=False only if you trust "
                               "it")
                continue
            self.plan_edit(call, append_kw("weights_only", cst.Name("False")),
                           f"torch.load({code(path)}, weights_only=False) at line "
                           f"{program.line(call)}: the checkpoint this script saves")
