"""launcher-env-missing: a launcher's variable read in a process started without one.

Public report: The-AI-Summer/pytorch-ddp#2 (``KeyError: 'LOCAL_RANK'`` when a script
written for ``torchrun`` is started with ``python train.py``). torchrun and ``accelerate
launch`` set ``LOCAL_RANK``, ``RANK``, ``WORLD_SIZE`` (and ``LOCAL_WORLD_SIZE``,
``GROUP_RANK``) in every process; for a single process they would be 0, 0 and 1. Fix:
each ``os.environ["VAR"]`` of those variables becomes ``os.environ.get("VAR", "<the
single-process value>")``, so the script runs alone as it runs under a launcher with one
process, and unchanged under a launcher.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider

from autofix.categories.catalogue.checkpoints import LAUNCHER_VARIABLES
from autofix.toolkit import Example, Recipe, patterns
from autofix.toolkit.scope import string_value


class LauncherEnvDefaults(Recipe):
    id = "launcher-env-defaults"
    category = "launcher-env-missing"
    requires_words = (("environ",),)
    requires_imports = ("os",)
    title = "read the launcher's rank variables with their single-process defaults"
    nothing_to_do = 'no os.environ["LOCAL_RANK"] (or RANK, WORLD_SIZE...) read'

    examples = (
        Example(
            before=(
                "import os\n"
                'local_rank = int(os.environ["LOCAL_RANK"])\n'
                "world = int(os.environ['WORLD_SIZE'])\n"
            ),
            after=(
                "import os\n"
                'local_rank = int(os.environ.get("LOCAL_RANK", "0"))\n'
                "world = int(os.environ.get('WORLD_SIZE', '1'))\n"
            ),
        ),
        Example(  # already read with a default; another variable is the user's own
            before=(
                "import os\n"
                'rank = int(os.environ.get("RANK", 0))\n'
                'token = os.environ["MY_TOKEN"]\n'
            ),
        ),
    )

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript
                        ) -> cst.BaseExpression:
        if not self.is_qualified(original_node.value, patterns.OS_ENVIRON) or \
                len(original_node.slice) != 1:
            return updated_node
        index = original_node.slice[0].slice
        if not isinstance(index, cst.Index) or not isinstance(index.value, cst.SimpleString):
            return updated_node
        name = string_value(index.value)
        if name not in LAUNCHER_VARIABLES or isinstance(self._parent(original_node),
                                                        cst.AssignTarget):
            return updated_node  # os.environ["RANK"] = "0" sets it
        quote = index.value.quote
        default = cst.SimpleString(f"{quote}{LAUNCHER_VARIABLES[name]}{quote}")
        self.changed(original_node, f'os.environ["{name}"] -> os.environ.get("{name}", '
                                    f'"{LAUNCHER_VARIABLES[name]}")')
        return cst.Call(func=cst.Attribute(value=updated_node.value, attr=cst.Name("get")),
                        args=[cst.Arg(index.value,
                                      comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                              cst.Arg(default)])

    def _parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        parent: cst.CSTNode | None = self.get_metadata(ParentNodeProvider, node, None)
        return parent
