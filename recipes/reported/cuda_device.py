"""cuda-unavailable: the script asks for a CUDA device on a machine without one.

Public report: karpathy/nanoGPT#281 ("AssertionError: Torch not compiled with CUDA
enabled" from ``.to("cuda")`` on a CPU-only machine). Fix: choose the device at run time,
``"cuda" if torch.cuda.is_available() else "cpu"``, wherever the literal ``"cuda"`` (or
``"cuda:0"``) is given to ``torch.device(...)`` or to a ``.to(...)`` call. ``torch`` must
already be imported under that name (nothing else is added).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, Recipe, patterns

_CUDA = m.SimpleString('"cuda"') | m.SimpleString("'cuda'") | m.SimpleString('"cuda:0"') \
    | m.SimpleString("'cuda:0'")
_CHOICE = '"cuda" if torch.cuda.is_available() else "cpu"'


class RuntimeDevice(Recipe):
    id = "cuda-device"
    category = "cuda-unavailable"
    requires_words = (("cuda",),)
    title = "use CUDA only when it is available (else the CPU)"
    nothing_to_do = 'no torch.device("cuda") or .to("cuda") with a literal device'

    examples = (
        Example(
            before='import torch\ndevice = torch.device("cuda")\nmodel.to(device)\n',
            after=('import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() '
                   'else "cpu")\nmodel.to(device)\n'),
        ),
        Example(
            before="import torch\nmodel = model.to('cuda')\n",
            after='import torch\nmodel = model.to("cuda" if torch.cuda.is_available() '
                  'else "cpu")\n',
        ),
        Example(  # torch is not imported under its own name: leave it
            before='import torch as T\ndevice = T.device("cuda")\n',
        ),
        Example(  # already guarded
            before=('import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() '
                    'else "cpu")\n'),
        ),
    )

    def visit_Module(self, node: cst.Module) -> bool:
        imported = any(m.matches(s, m.SimpleStatementLine(body=[m.Import(names=[
            m.ZeroOrMore(), m.ImportAlias(name=m.Name("torch"), asname=None), m.ZeroOrMore()])]))
            for s in node.body)
        if not imported:
            self.reason = "torch is not imported as `import torch`"
        return imported

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not updated_node.args or not m.matches(updated_node.args[0].value, _CUDA) \
                or updated_node.args[0].keyword is not None:
            return updated_node
        is_device = self.is_qualified(original_node.func, patterns.TORCH_DEVICE)
        is_to = m.matches(original_node.func, m.Attribute(attr=m.Name("to")))
        if not (is_device or is_to):
            return updated_node
        self.changed(original_node, f"device {_CHOICE}")
        first = updated_node.args[0].with_changes(value=cst.parse_expression(_CHOICE))
        return updated_node.with_changes(args=[first, *updated_node.args[1:]])
