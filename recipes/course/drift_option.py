"""api-drift: a renamed configuration field given to ``HfArgumentParser`` under the name the
installed transformers does not take, as a command-line option (``--evaluation_strategy
steps``) or as a key of the dict, JSON or YAML file the script parses.

The parser refuses it ("Some specified arguments are not used by the HfArgumentParser:
['--evaluation_strategy', 'steps']"); the name it refused and
:data:`autofix.categories.renames.KEYWORD_RENAMES` give the name to pass instead, in both
directions (transformers 4.40 refuses ``--eval_strategy``). Where the script spells the
refused name itself (an argument list given to ``parse_args_into_dataclasses(args=...)``,
a dict given to ``parse_dict``), that string is renamed, spelt as it was (dashes or
underscores, an ``=value`` kept). Where it comes from the command line or a config file,
no source edit can be right: the recipe declines and names the option to pass.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.categories.renames import RenamedOption, renamed_in_parser_refusal
from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.scope import Edit, PlannedEdits, string_value

PARSE = "(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n"
REFUSED = "ValueError: Some specified arguments are not used by the HfArgumentParser: "


def _respelt(new: str) -> Edit:
    def run(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.SimpleString)
        return node.with_changes(value=f"{node.prefix}{node.quote}{new}{node.quote}")
    return run


def _given_elsewhere(options: list[RenamedOption], args: tuple[str, ...]) -> str:
    """Why no edit of the script is right, naming what to pass instead (with the value the
    command line gave, when it gave one)."""
    first = options[0]
    why = f"{first.rename.library} renamed {first.rename.old} to {first.rename.new}"
    if not first.option:
        swaps = ", ".join(f"{o.replacement} for {o.given}" for o in options)
        return (f"the key {first.given} comes from the file or dict the script parses, not "
                f"its source: write {swaps} there ({why})")
    given = {o.given: o for o in options}
    on_line = [(given[a], args[i + 1] if "=" not in a and i + 1 < len(args)
                and not args[i + 1].startswith("-") else "")
               for i, a in enumerate(args) if a in given]
    if not on_line:
        swaps = ", ".join(f"{o.replacement} for {o.given}" for o in options)
        return (f"the option {first.given} is not in the script: pass {swaps} where its "
                f"command line is built ({why})")
    swaps = ", ".join(" ".join(filter(None, (o.replacement, v))) for o, v in on_line)
    return (f"the option {first.given} comes from the command line, not the script: run it "
            f"with {swaps} ({why})")


class RenameParserOption(PlannedEdits):
    id = "drift-option"
    category = "api-drift"
    title = "give HfArgumentParser a renamed field under the name the installed library takes"
    requires_words = (("HfArgumentParser",),)
    requires_imports = ("transformers",)

    examples = (
        Example(  # an argument list written in the script
            before=("from transformers import HfArgumentParser, TrainingArguments\n"
                    "parser = HfArgumentParser(TrainingArguments)\n"
                    "(args,) = parser.parse_args_into_dataclasses(\n"
                    "    args=['--output_dir', 'out', '--evaluation_strategy', 'steps'])\n"),
            after=("from transformers import HfArgumentParser, TrainingArguments\n"
                   "parser = HfArgumentParser(TrainingArguments)\n"
                   "(args,) = parser.parse_args_into_dataclasses(\n"
                   "    args=['--output_dir', 'out', '--eval_strategy', 'steps'])\n"),
            evidence=REFUSED + "['--evaluation_strategy', 'steps']",
        ),
        Example(  # transformers 4.40 wants the old name; dashes and =value kept
            before=("import sys\n"
                    "from transformers import HfArgumentParser, TrainingArguments\n"
                    "sys.argv += [\"--eval-strategy=epoch\"]\n"
                    + PARSE),
            after=("import sys\n"
                   "from transformers import HfArgumentParser, TrainingArguments\n"
                   "sys.argv += [\"--evaluation-strategy=epoch\"]\n"
                   + PARSE),
            versions={"transformers": "4.40.2"},
            evidence=REFUSED + "['--eval-strategy=epoch']",
        ),
        Example(  # a dict given to parse_dict: the key
            before=("from transformers import HfArgumentParser, TrainingArguments\n"
                    "config = {'output_dir': 'out', 'evaluation_strategy': 'epoch'}\n"
                    "(args,) = HfArgumentParser(TrainingArguments).parse_dict(config)\n"),
            after=("from transformers import HfArgumentParser, TrainingArguments\n"
                   "config = {'output_dir': 'out', 'eval_strategy': 'epoch'}\n"
                   "(args,) = HfArgumentParser(TrainingArguments).parse_dict(config)\n"),
            evidence="ValueError: Some keys are not used by the HfArgumentParser: "
                     "['evaluation_strategy']",
        ),
        Example(  # the option is on the command line: no edit, the option named
            before=("from transformers import HfArgumentParser, TrainingArguments\n"
                    + PARSE),
            evidence=REFUSED + "['--evaluation_strategy', 'steps']",
            args=("--output_dir", "out", "--evaluation_strategy", "steps"),
        ),
        Example(  # a refused option that is no renamed field: not this recipe's
            before=("from transformers import HfArgumentParser, TrainingArguments\n"
                    "(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(\n"
                    "    args=['--learning_rat', '1e-4'])\n"),
            evidence=REFUSED + "['--learning_rat', '1e-4']",
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        options = renamed_in_parser_refusal(self.rc.diagnosis.evidence)
        if not options:
            raise NotApplicable("the error is not HfArgumentParser refusing a renamed field")
        for node in m.findall(tree, m.SimpleString()):
            assert isinstance(node, cst.SimpleString)
            text = string_value(node)
            option = next((o for o in options if o.given == text), None)
            if option is None or (not option.option and not self._is_dict_key(node)):
                continue
            new = f"{node.quote}{option.replacement}{node.quote}"
            self.plan_edit(node, _respelt(option.replacement),
                           f"{code(node)} -> {new} (the installed {option.rename.library} "
                           f"takes {option.rename.partner(option.name)})")
        if not self.plan:
            raise NotApplicable(_given_elsewhere(options, self.rc.args))

    def _is_dict_key(self, node: cst.SimpleString) -> bool:
        parent = self.program.parent(node)
        return isinstance(parent, cst.DictElement) and parent.key is node
