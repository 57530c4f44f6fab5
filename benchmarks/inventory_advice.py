"""Inventory of the error and warning messages of the training libraries, and of the advice
they carry (``set X to Y``, ``either A or B``, ``X has to be specified``...).

For each library file of interest (found through ``importlib.util.find_spec`` in the
interpreter that runs this script, never through a hard-coded site-packages path), the
module is parsed with :mod:`ast` and every message site is extracted:

* ``raise SomethingError(<message>)`` (the first positional argument), and
  ``assert cond, <message>`` (an ``AssertionError``, counted with the raises),
* ``warnings.warn(<message>, ...)`` / ``warn(...)``,
* ``logger.warning(...)``, ``logger.warning_once(...)``, ``logger.warn(...)``,
  ``logger.warning_advice(...)``.

Messages become *templates*: f-string fields, ``%`` specifiers, ``str.format`` fields and
any non-literal operand become ``{}``; concatenated literals are joined; a message held in
a local variable (``msg = ...; raise ValueError(msg)``) is followed to its assignments
(``=`` and ``+=``) in the same function.

A template is *advice-bearing* when it names a change to make (:data:`ADVICE_PATTERNS`)
and not only an environment change (an install, an upgrade: :data:`ENV_RX`). An
advice-bearing *raise* (a failure autofix sees) is *handled* when a real example of it is
saved in ``autofix/categories/examples/<category>/`` (``benchmarks/trigger_advice.py``
writes them; ``tests/test_diagnosis.py`` classifies every one) and autofix, on that real
traceback, gives a category and either a recipe that makes the named change (a recipe of
the category whose ``handles`` accepts the parsed advice) or the change as advice (the
category's ``advise`` names it from the parsed message). Warnings are counted apart: a run
that only warns does not fail, so no category sees them.

Some sites can only be reached with hardware or packages a CPU machine without DeepSpeed,
FSDP, Megatron, TPUs or vLLM does not have (:data:`NEEDS_RX`); the figure is printed over
every advice-bearing raise and over those reachable here.

Usage::

    .venv/bin/python benchmarks/inventory_advice.py            # totals per library and file
    .venv/bin/python benchmarks/inventory_advice.py --list     # every advice-bearing raise
    .venv/bin/python benchmarks/inventory_advice.py --list --unhandled
    .venv/bin/python benchmarks/inventory_advice.py --json out.json
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = "{}"
_HOLE = "\x00"  # placeholder while rendering, so that literal braces survive
OPT_START, OPT_END = "\x04", "\x05"  # around a part appended with ``+=`` (often conditional)

#: (distribution / top package, files relative to the package, glob allowed).
TARGETS: dict[str, tuple[str, ...]] = {
    "transformers": (
        "training_args.py",
        "training_args_seq2seq.py",
        "trainer.py",
        "trainer_seq2seq.py",
        "trainer_callback.py",
        "trainer_utils.py",
        "data/data_collator.py",
        "modeling_utils.py",
        "integrations/peft.py",
    ),
    "datasets": ("arrow_dataset.py", "dataset_dict.py"),
    "accelerate": ("accelerator.py",),
    "trl": (
        "trainer/base_config.py",
        "trainer/sft_config.py",
        "trainer/dpo_config.py",
        "trainer/grpo_config.py",
        "trainer/reward_config.py",
        "trainer/sft_trainer.py",
        "trainer/dpo_trainer.py",
        "trainer/grpo_trainer.py",
        "trainer/reward_trainer.py",
        "trainer/utils.py",
    ),
    "peft": (
        "tuners/lora/config.py",
        "tuners/tuners_utils.py",
        "mapping*.py",
        "peft_model.py",
    ),
}

#: Files only partly in scope: a site counts when its enclosing function's name matches.
SCOPES: dict[str, re.Pattern[str]] = {
    "transformers/modeling_utils.py": re.compile(
        r"from_pretrained|_from_config|^__init__$|post_init|_get_resolved_checkpoint_files"
        r"|_get_dtype|attn_implementation|_load_pretrained_model|_finalize_model_loading"
        r"|load_state_dict|get_init_context|local_torch_dtype"
    ),
}

_WARN_METHODS = {"warning", "warning_once", "warn", "warning_advice"}

_LEAD = (
    r"(?:^|[.:;!?(,]\s*|\b(?:please|either|or|and|then|should|must|can|could|need to|needs to|have to|"
    r"want to|in order to|only|try|consider|you may want to|make sure to|recommended to|instead|first|by|"
    r"fix,?|fix this,?|solve this,?|resolve this,?|e\.g\.,?|explicitly|simply|just|manually|also)\s+)"
)
_VERBS = (
    r"(?:set|pass|use|add|remove|provide|specify|define|choose|select|reduce|"
    r"increase|lower|adjust|change|rename|enable|disable|deactivate|activate|unset|drop|omit|"
    r"assign|apply|return|call|override|subclass|load|instantiate|materialize|edit|migrate|merge|"
    r"unmerge|switch|convert|initialize|turn off|turn on|leave|keep|only pass|only use)"
)
_GERUNDS = (
    r"(?:setting|passing|using|changing|converting|increasing|reducing|lowering|adding|removing|specifying|"
    r"enabling|disabling|calling|loading|installing|upgrading)"
)

#: Patterns that make a template advice-bearing (case-insensitive, whitespace-collapsed).
ADVICE_PATTERNS: dict[str, re.Pattern[str]] = {
    name: re.compile(rx, re.IGNORECASE)
    for name, rx in {
        "imperative": _LEAD + r"(?:only\s+)?" + _VERBS + r"\b(?!\s+(?:an issue|the documentation))",
        "gerund-advice": r"\b(?:try|consider|by|recommend(?:ed)?|suggest)\s+" + _GERUNDS + r"\b",
        "do-not-set": r"\b(?:do not|don't|never) (?:set|pass|use)\b",
        "set-eq": _LEAD + r"set\s+`?[\w.\-\[\]']+\s*=\s*\S",
        "setting-fixes": r"\bsetting\b[^.]{0,80}\b(?:will fix|fixes|can improve|to fix|is recommended)",
        "either-or": r"(?:^|[.:;!?,]\s*|\b(?:please|should|must|can|requires?|needs?|be|use|pass|specify|set|provide|contain|"
        r"expected|choose|you)\s+)either\b.{1,200}?\bor\b",
        "one-of": r"\b(?:at most|only|exactly|at least) one of\b|\bnot both\b|\bin only one place\b"
        r"|\bcan ?not (?:be )?both\b|\bcan't both\b|\bcannot both\b",
        "specify": r"\b(?:has|have|had|needs?|must|should) to be (?:specified|provided|set|passed|given|defined)\b"
        r"|\b(?:must|should|has to|have to|needs? to) (?:also )?be (?:specified|provided|passed|given|defined|set)\b(?! to)"
        r"|\bplease (?:specify|provide|define)\b|\b(?:you )?(?:must|need to|have to|should) "
        r"(?:specify|provide|define)\b|(?<!which )(?<!that )\b(?:is|are) required\b(?! for)|\bmust be supplied\b",
        "use-instead": r"\buse\b.{0,80}?\binstead\b|\binstead,? (?:use|pass|set)\b|\bconsider using\b"
        r"|\bprefer\b",
        "did-you-mean": r"\bdid you mean\b",
        "requires": r"\brequires?\b(?! the `?\w+`? library)|\bcan only be (?:set|used|true)\b|\bis useful only when\b"
        r"|\bonly (?:works|supported) (?:in|with|when)\b",
        "should-be": r"\bshould (?:be|lie) (?:set to|`|'|\"|true\b|false\b|none\b|\d|one of\b|at least\b|equal\b|"
        r"a multiple\b|positive\b|in\b|between\b|either\b)|\bshould (?:only )?be used\b",
        "must-be-value": r"\bmust (?:be|equal)\s+(?:set to\s+)?(?:`[^`]+`|'[^']+'|\"[^\"]+\"|true\b|false\b|none\b"
        r"|-?\d[\d.e-]*\b|one of\b|at least\b|at most\b|greater than\b|less than\b|smaller than\b|bigger than\b"
        r"|an integer\b|larger than\b|positive\b|non-negative\b|divisible by\b|a multiple of\b|equal to\b|between\b|>|<)"
        r"|\bcan be one of\b|\bexpected (?:value|either|one of)\b|\bsupported values are\b|\bchoose between\b"
        r"|\bcan only be `|\bset to an? (?:positive|non-zero|non-negative|valid)\b|\bpossible values are\b"
        r"|\bexpected (?:`|')",
        "deprecated-use": r"\bdeprecated\b.{0,200}?\b(?:use|pass|set|migrate)\b|\bhas been renamed to\b",
        "call": r"\b(?:call|run|first run)\s+`[^`]*\(|\bcannot be (?:`|')",
        "make-sure": r"\bmake sure\b|\bensure (?:that )?(?:you|your|the|`)",
        "recommended": r"\b(?:it is|it's) recommended to\b|\byou should\b|\byou can opt\b",
    }.items()
}

#: Kinds that name a script edit (as opposed to an environment change).
EDIT_KINDS = frozenset(ADVICE_PATTERNS) - {
    "make-sure",
    "recommended",
    "requires",
    "imperative",
    "use-instead",
}

#: Advice about the environment: packages, versions, hardware, launchers.
ENV_RX = re.compile(
    r"pip install|please install|\binstall (?:it|the)\b|\bis not installed\b|\bnot found on your system\b"
    r"|\bneeds? \w+ installed\b|\bplease (?:upgrade|update)\b|\bupgrade (?:your |the )?`?(?:torch|pytorch|accelerate|"
    r"peft|transformers|deepspeed|trl|vllm|datasets)|\brequires? `?(?:torch|pytorch|accelerate|peft|transformers|"
    r"deepspeed|torch_xla|trl|vllm|datasets)`?\s*(?:>=|>|version|\d)|\b(?:torch|pytorch|accelerate|peft|transformers|"
    r"deepspeed)\s*(?:>=|>)\s*\{?\d|\bversion must be\b|\bampere\b|\bgpu arch\b|cuda>=|\bupgrade \w+\b"
    r"|\blaunch (?:the|your) script\b|\btorchrun\b|\bis required when loading\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Site:
    """One message site in a library file."""

    library: str
    path: str  # relative to site-packages: "transformers/training_args.py"
    line: int
    kind: str  # "raise" | "warning"
    call: str  # "ValueError", "warnings.warn", "logger.warning_once"...
    function: str  # enclosing qualified name
    template: str  # "{}" for each non-literal part

    @property
    def id(self) -> str:
        """Stable-within-a-version id: ``pkg/path.py:LINE``."""
        return f"{self.path}:{self.line}"

    @property
    def text(self) -> str:
        """The template for reading: optional ``+=`` parts shown inline."""
        return self.template.replace(OPT_START, "").replace(OPT_END, "")

    @property
    def literal_chars(self) -> int:
        """Characters of the template that are not placeholders, optional parts or whitespace."""
        required = re.sub(f"{OPT_START}[^{OPT_END}]*{OPT_END}", "", self.template)
        return len(re.sub(r"\s+", "", required.replace(PLACEHOLDER, "")))


#: Requirements no CPU run with the installed packages meets (the site needs DeepSpeed, FSDP,
#: Megatron, a TPU, HPU or XLA device, TransformerEngine, MS-AMP, torchao, vLLM, several
#: processes for a parallelism plan, a vision model, or a GPU feature).
NEEDS_RX = re.compile(
    r"deepspeed|\bzero-?[123]\b|\bfsdp|megatron|\btpu\b|\bxla\b|\bhpu\b|transformer_?engine"
    r"|\bte\b|ms-amp|torchao|\bvllm\b|context parallel|\bcp_size\b|\bsp_size\b|tensor parallel"
    r"|tp_plan|\bdtensor|\bfp8\b|\bvision\b|image|pixel_values|multimodal|8-bit|4-bit"
    r"|quantiz|\bsweeps?\b|hotswap|device_map|mamba|torch\.compile|distributedconfig"
    r"|sharded at load|parallelism_config|\bddp\b|environment_factory|\benvironments?\b",
    re.IGNORECASE)


#: accelerate's preparation for one backend, called only when ``distributed_type`` is that
#: backend (``Accelerator.prepare``): every raise in it needs the backend. Argument
#: processing (``TrainingArguments._process_fsdp_args``) runs anywhere and is not matched.
BACKEND_PREPARE = re.compile(r"\._prepare_(?:deepspeed|megatron_lm|fsdp2?|te|ms_amp|msamp|tpu|xla)$")


@dataclass
class SiteReport:
    """A site with its classification."""

    site: Site
    advice: tuple[str, ...] = ()
    env: bool = False  # advice about the environment only
    vague: bool = False  # an advice pattern, but in sentences that name nothing
    parsed_template: bool = False
    example: str | None = None  # the saved example (path relative to the examples folder)
    category: str = ""  # what autofix classifies the example as
    fix: str = ""  # the recipe that makes the named change ("" : none)
    advised: str = ""  # the advice autofix gives ("" : none)

    @property
    def needs(self) -> bool:
        """Only reachable with hardware or packages this machine lacks (:data:`NEEDS_RX`):
        the message names them, or the function that raises it is that backend's own
        (accelerate's ``Accelerator._prepare_deepspeed`` runs only under DeepSpeed, its
        ``_prepare_megatron_lm`` only under Megatron-LM)."""
        return bool(NEEDS_RX.search(self.site.text) or BACKEND_PREPARE.search(self.site.function))

    @property
    def handled(self) -> bool:
        """A real example that autofix classifies and answers with the change (fix or advice)."""
        return self.example is not None and self.category not in ("", "unknown") \
            and bool(self.fix or self.advised)


# --------------------------------------------------------------------------- rendering


def _format_to_holes(fmt: str) -> str:
    """``"a {x!r} b {{c}}"`` -> ``"a \\0 b {c}"``."""
    out: list[str] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if fmt.startswith("{{", i) or fmt.startswith("}}", i):
            out.append(ch)
            i += 2
        elif ch == "{":
            depth, j = 1, i + 1
            while j < len(fmt) and depth:
                depth += {"{": 1, "}": -1}.get(fmt[j], 0)
                j += 1
            out.append(_HOLE)
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


_PERCENT_RX = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\d+|\*)?(?:\.\d+)?[sdrifgGxXeEcoaub]|%%")


def _percent_to_holes(fmt: str) -> str:
    return _PERCENT_RX.sub(lambda m: "%" if m.group(0) == "%%" else _HOLE, fmt)


class _Renderer:
    """Turns a message expression into a template, following local variables."""

    def __init__(self, func: ast.AST | None) -> None:
        self.func = func

    def render(self, node: ast.expr, before: int, depth: int = 0) -> str:
        if depth > 6:
            return _HOLE
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else _HOLE
        if isinstance(node, ast.JoinedStr):
            parts: list[str] = []
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    parts.append(value.value)
                else:
                    parts.append(_HOLE)
            return "".join(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.render(node.left, before, depth + 1) + self.render(
                node.right, before, depth + 1
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            left = self.render(node.left, before, depth + 1)
            return _percent_to_holes(left) if left != _HOLE else _HOLE
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "format":
                base = self.render(node.func.value, before, depth + 1)
                return _format_to_holes(base) if base != _HOLE else _HOLE
            if node.func.attr == "join" and isinstance(node.func.value, ast.Constant):
                return _HOLE
            if node.func.attr in {"strip", "rstrip", "lstrip"}:
                return self.render(node.func.value, before, depth + 1).strip()
        if isinstance(node, ast.Name):
            return self._resolve(node.id, before, depth)
        if isinstance(node, ast.IfExp):
            return self.render(node.body, before, depth + 1)
        return _HOLE

    def _resolve(self, name: str, before: int, depth: int) -> str:
        """Value of a local ``name`` at line ``before``: last ``=`` then later ``+=``."""
        if self.func is None:
            return _HOLE
        assigns: list[tuple[int, str, ast.expr]] = []
        for sub in ast.walk(self.func):
            if isinstance(sub, ast.Assign) and sub.lineno < before:
                if any(isinstance(t, ast.Name) and t.id == name for t in sub.targets):
                    assigns.append((sub.lineno, "=", sub.value))
            elif isinstance(sub, ast.AnnAssign) and sub.lineno < before and sub.value is not None:
                if isinstance(sub.target, ast.Name) and sub.target.id == name:
                    assigns.append((sub.lineno, "=", sub.value))
            elif (
                isinstance(sub, ast.AugAssign)
                and sub.lineno < before
                and isinstance(sub.op, ast.Add)
            ):
                if isinstance(sub.target, ast.Name) and sub.target.id == name:
                    assigns.append((sub.lineno, "+=", sub.value))
        assigns.sort(key=lambda a: a[0])
        last_set = max((i for i, a in enumerate(assigns) if a[1] == "="), default=None)
        if last_set is None:
            return _HOLE
        text = self.render(assigns[last_set][2], assigns[last_set][0], depth + 1)
        for line, _, value in assigns[last_set + 1 :]:
            text += OPT_START + self.render(value, line, depth + 1) + OPT_END
        return text


def _template(text: str) -> str:
    """Rendered text with each hole shown as ``{}``."""
    return text.replace(_HOLE, PLACEHOLDER)


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return f"{_call_name(func.value)}.{func.attr}"
    if isinstance(func, ast.Call):
        return _call_name(func.func) + "()"
    return "?"


def _is_warning_call(call: ast.Call) -> bool:
    name = _call_name(call.func)
    if name in {"warnings.warn", "warn"}:
        return True
    if isinstance(call.func, ast.Attribute) and call.func.attr in _WARN_METHODS:
        return "log" in _call_name(call.func.value).lower()
    return False


def extract_sites(source: str, library: str, relpath: str) -> list[Site]:
    """Every raise / warning site of one module's source."""
    tree = ast.parse(source)
    scope = SCOPES.get(relpath)
    sites: list[Site] = []

    def visit(node: ast.AST, stack: list[ast.AST]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, stack + [child])
                continue
            handle(child, stack)
            visit(child, stack)

    def handle(node: ast.AST, stack: list[ast.AST]) -> None:
        funcs = [s for s in stack if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        qual = ".".join(
            s.name
            for s in stack
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        )
        if scope is not None and not (funcs and scope.search(funcs[-1].name)):
            return
        func = funcs[-1] if funcs else None
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            call = node.exc
            name = _call_name(call.func)
            msg = call.args[0] if call.args else None
            if msg is None:
                for kw in call.keywords:
                    if kw.arg in {"msg", "message"}:
                        msg = kw.value
            text = _Renderer(func).render(msg, node.lineno) if msg is not None else ""
            sites.append(Site(library, relpath, node.lineno, "raise", name, qual, _template(text)))
        elif isinstance(node, ast.Assert) and node.msg is not None:
            text = _Renderer(func).render(node.msg, node.lineno)
            sites.append(
                Site(library, relpath, node.lineno, "raise", "assert", qual, _template(text))
            )
        elif isinstance(node, ast.Call) and _is_warning_call(node):
            msg = node.args[0] if node.args else None
            if msg is None:
                for kw in node.keywords:
                    if kw.arg in {"msg", "message"}:
                        msg = kw.value
            text = _Renderer(func).render(msg, node.lineno) if msg is not None else ""
            if (
                node.args
                and isinstance(node.args[0], ast.expr)
                and len(node.args) > 1
                and "%" in text
            ):
                text = _percent_to_holes(text)  # logger.warning("x %s", y)
            sites.append(
                Site(
                    library,
                    relpath,
                    node.lineno,
                    "warning",
                    _call_name(node.func),
                    qual,
                    _template(text),
                )
            )

    visit(tree, [])
    return sites


# --------------------------------------------------------------------------- locating


def site_packages_root(package: str) -> Path | None:
    """Folder that holds ``package`` (found with importlib, without importing it)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent


def iter_target_files(
    targets: dict[str, tuple[str, ...]] = TARGETS,
) -> Iterator[tuple[str, str, Path]]:
    """(library, path relative to site-packages, absolute path) for each target file."""
    for library, patterns in targets.items():
        root = site_packages_root(library)
        if root is None:
            continue
        pkg = root / library
        for pattern in patterns:
            for path in sorted(pkg.glob(pattern)):
                yield library, path.relative_to(root).as_posix(), path


def collect_sites(targets: dict[str, tuple[str, ...]] = TARGETS) -> list[Site]:
    """All sites of all target files that are installed."""
    sites: list[Site] = []
    for library, rel, path in iter_target_files(targets):
        sites.extend(extract_sites(path.read_text(encoding="utf-8"), library, rel))
    return sites


def library_versions() -> dict[str, str]:
    """Installed versions of the target libraries (``importlib.metadata``)."""
    from importlib import metadata

    out: dict[str, str] = {}
    for library in TARGETS:
        try:
            out[library] = metadata.version(library)
        except metadata.PackageNotFoundError:
            out[library] = "-"
    return out


# --------------------------------------------------------------------------- classifying


def normalise_ws(text: str) -> str:
    """Whitespace runs collapsed to one space, ends stripped."""
    return re.sub(r"\s+", " ", text).strip()


#: A name the advice can act on: a code span, an assignment, a snake_case or dotted name,
#: a ``--flag`` or a quoted value.
NAME_RX = re.compile(
    r"`[^`]+`|\b[A-Za-z_][\w.\[\]']*\s?=\s?[^\s=]|\b[a-z][a-z0-9]*_[a-z0-9_]+\b|(?<![\w-])--[a-z][\w-]*"
    r"|(?<!\w)'[^'\s]{1,40}'|\b[a-z_]+\.[a-z_]+\(?|\b[a-z]+\d+\b|^[A-Za-z][a-z]*_\w+"
    r"|^[a-z]\w* (?:must|should) be\b"
)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[a-z0-9`'\")\]}][.!?])\s+(?=[A-Z`'\"])", text) if s]


def advice_kinds(template: str, named_only: bool = True) -> tuple[str, ...]:
    """Names of the :data:`ADVICE_PATTERNS` that match ``template``.

    With ``named_only`` a pattern counts only in a sentence that names something to act
    on (:data:`NAME_RX`): "Please use a different name" is advice, but names nothing.
    """
    text = normalise_ws(template)
    kinds: list[str] = []
    sentences = _sentences(text) if named_only else [text]
    for i, sentence in enumerate(sentences):
        if named_only and not (NAME_RX.search(sentence) or i and NAME_RX.search(sentences[i - 1])):
            continue
        kinds.extend(
            name
            for name, rx in ADVICE_PATTERNS.items()
            if rx.search(sentence) and name not in kinds
        )
    return tuple(kinds)


def is_vague(template: str) -> bool:
    """Advice that names nothing to change (it matches a pattern only in unnamed sentences)."""
    return bool(advice_kinds(template, named_only=False)) and not advice_kinds(template)


def is_env_only(template: str, kinds: Sequence[str]) -> bool:
    """Advice about the environment (install, upgrade, hardware, launcher) and no script edit.

    A template with an env hint counts as env-only unless, with the env sentences taken
    out, some script-edit pattern still matches.
    """
    text = normalise_ws(template)
    if not ENV_RX.search(text):
        return False
    clauses = re.split(r"(?<=[.!?;])\s+|,?\s+\bor\b\s+", text)
    rest = ". ".join(c for c in clauses if not ENV_RX.search(c))
    return not advice_kinds(rest, named_only=False)


def template_regex(template: str) -> re.Pattern[str]:
    """Regex that a whitespace-collapsed real message of this template fully matches.

    ``{}`` matches anything; parts appended with ``+=`` are optional.
    """

    def literal(text: str) -> str:
        pieces = text.split(PLACEHOLDER)
        return "(.*?)".join(r"\s*".join(re.escape(w) for w in piece.split(" ")) for piece in pieces)

    chunks = re.split(f"[{OPT_START}{OPT_END}]", normalise_ws(template))
    parts = [
        f"(?:{literal(c.strip())})?" if i % 2 else literal(c.strip())
        for i, c in enumerate(chunks)
        if c.strip()
    ]
    return re.compile(r"\s*".join(parts), re.DOTALL)


class Matcher:
    """Finds the site a real message comes from (best literal coverage wins)."""

    def __init__(self, sites: Iterable[Site], min_literal: int = 12) -> None:
        self.entries = [
            (s, template_regex(s.template)) for s in sites if s.literal_chars >= min_literal
        ]

    def match(self, message: str, prefer_path: str | None = None) -> Site | None:
        text = normalise_ws(message)
        best: tuple[int, int, Site] | None = None
        for site, rx in self.entries:
            hit = rx.fullmatch(text) or rx.search(text)
            if hit is None:
                continue
            score = (
                site.literal_chars + (1000 if hit.re.fullmatch(text) else 0),
                1 if prefer_path and site.path == prefer_path else 0,
            )
            if best is None or score > best[:2]:
                best = (score[0], score[1], site)
        return best[2] if best else None


# --------------------------------------------------------------------------- reporting


def is_advice_bearing(template: str) -> bool:
    """The template names a change to make, not only an environment change."""
    kinds = advice_kinds(template)
    return bool(kinds) and not is_env_only(template, kinds)


def _example_site(text: str, sites: dict[tuple[str, int], Site], matcher: Matcher
                  ) -> tuple[Site | None, object]:
    """The site a saved example comes from (its header, else its innermost library frame
    with a site at that line, else its message's template) and the parsed exception."""
    sys.path.insert(0, str(ROOT))
    from autofix.categories.tracebacks import parse_traceback

    exc = parse_traceback(text)
    header = re.match(r"# trigger_advice: site (\S+)", text)
    by_id = {s.id: s for s in sites.values()}
    if header and header.group(1) in by_id:
        return by_id[header.group(1)], exc
    if exc is None:
        return None, exc
    for candidate in (exc, *exc.chain):
        for frame in reversed(candidate.frames):
            found = re.search(r"(?:site|dist)-packages/(.+)$", frame.file.replace("\\", "/"))
            if found and (found.group(1), frame.line) in sites:
                return sites[(found.group(1), frame.line)], exc
    return matcher.match(exc.message), exc


def build_report() -> list[SiteReport]:
    """Sites of the installed libraries, classified, with their saved real examples and
    what autofix makes of each example (category, recipe, advice)."""
    sys.path.insert(0, str(ROOT))
    from autofix.categories import EXAMPLES_DIR, get_category
    from autofix.categories.advice import parse_advice
    from autofix.categories.catalogue.advice import library_advice, message_of
    from autofix.loop.diagnosis import classify, failure_of
    from autofix.toolkit.discovery import recipes_for

    all_sites = collect_sites()
    reports: list[SiteReport] = []
    by_line = {(s.path, s.line): s for s in all_sites}
    matcher = Matcher(all_sites)
    for site in all_sites:
        kinds = advice_kinds(site.template)
        rep = SiteReport(site, kinds, env=is_env_only(site.template, kinds),
                         vague=is_vague(site.template))
        if kinds and not rep.env:
            rep.parsed_template = bool(parse_advice(site.template))
        reports.append(rep)
    by_id = {r.site.id: r for r in reports}
    for path in sorted(EXAMPLES_DIR.rglob("*.txt")):
        site, exc = _example_site(path.read_text(encoding="utf-8"), by_line, matcher)
        rep = by_id.get(site.id) if site is not None else None
        if rep is None or exc is None or rep.example is not None and rep.handled:
            continue
        category = classify(exc)  # type: ignore[arg-type]
        found = library_advice(exc)  # type: ignore[arg-type]
        rep.example = path.relative_to(EXAMPLES_DIR).as_posix()
        rep.category = category.id
        rep.advised = category.advise(failure_of(exc)) if category.advise else ""  # type: ignore[arg-type]
        recipes = recipes_for(category.id)
        if category.advise is not None:  # the advice family: a recipe says what it handles
            rep.fix = next((r.id for r in recipes if found is not None
                            and getattr(r, "handles", None) is not None
                            and r.handles(found.advice, message_of(found.exc))), "")
        else:  # a category that knows this message: its recipe, else its hint
            rep.fix = recipes[0].id if recipes else ""
            rep.advised = "" if recipes else get_category(category.id).hint
    return reports


def _is_advice(rep: SiteReport) -> bool:
    return bool(rep.advice) and not rep.env and rep.site.kind == "raise"


def summarise(
    reports: Sequence[SiteReport], key: Callable[[SiteReport], str]
) -> list[dict[str, object]]:
    """Counts per ``key`` (library or file)."""
    groups: dict[str, list[SiteReport]] = {}
    for rep in reports:
        groups.setdefault(key(rep), []).append(rep)
    rows: list[dict[str, object]] = []
    for name, reps in groups.items():
        adv = [r for r in reps if _is_advice(r)]
        handled = sum(r.handled for r in adv)
        here = [r for r in adv if not r.needs]
        handled_here = sum(r.handled for r in here)
        rows.append(
            {
                "name": name,
                "raise": sum(r.site.kind == "raise" for r in reps),
                "env": sum(r.env and r.site.kind == "raise" for r in reps),
                "advice": len(adv),
                "parsed": sum(r.parsed_template for r in adv),
                "example": sum(r.example is not None for r in adv),
                "fix": sum(r.handled and bool(r.fix) for r in adv),
                "handled": handled,
                "pct": round(100 * handled / len(adv), 1) if adv else 0.0,
                "here": len(here),
                "handled_h": handled_here,
                "pct_here": round(100 * handled_here / len(here), 1) if here else 0.0,
                "warn_adv": sum(bool(r.advice) and not r.env and r.site.kind == "warning"
                                for r in reps),
            }
        )
    return rows


_COLUMNS = ("raise", "env", "advice", "parsed", "example", "fix", "handled", "pct", "here",
            "handled_h", "pct_here", "warn_adv")


def _print_table(title: str, rows: list[dict[str, object]]) -> None:
    width = max([len(title)] + [len(str(r["name"])) for r in rows])
    print(f"{title:<{width}}  " + "  ".join(f"{c:>9}" for c in _COLUMNS))
    for row in rows:
        print(f"{row['name']!s:<{width}}  " + "  ".join(f"{row[c]!s:>9}" for c in _COLUMNS))
    print()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="print every advice-bearing raise")
    ap.add_argument("--unhandled", action="store_true", help="with --list: only the unhandled ones")
    ap.add_argument("--json", type=Path, help="write every site with its classification")
    args = ap.parse_args(argv)

    reports = build_report()
    print("versions:", ", ".join(f"{k} {v}" for k, v in library_versions().items()))
    print("columns: raise sites; env: environment-only advice; advice: advice-bearing raises;"
          " parsed: their template parses; example: a saved real example; fix: handled by a"
          " recipe; handled: category + fix or advice; here: advice-bearing raises reachable"
          " without DeepSpeed/FSDP/TPU/vLLM/vision...; warn_adv: advice-bearing warnings"
          " (not failures, outside the figure)")
    print()
    by_lib = summarise(reports, lambda r: r.site.library)
    total = summarise(reports, lambda r: "TOTAL")
    _print_table("library", by_lib + total)
    _print_table("file", summarise(reports, lambda r: r.site.path))
    row = total[0]
    print(f"handled: {row['handled']} of {row['advice']} advice-bearing raises ({row['pct']} %)"
          f", {row['fix']} of them with a fix; reachable on this machine: {row['handled_h']} of"
          f" {row['here']} ({row['pct_here']} %)")

    if args.list:
        for rep in reports:
            if not _is_advice(rep) or args.unhandled and rep.handled:
                continue
            state = ("FIX " + rep.fix if rep.handled and rep.fix else "ADVICE" if rep.handled
                     else f"example->{rep.category}" if rep.example else "no-example")
            needs = " [needs hardware/packages]" if rep.needs else ""
            print(f"{rep.site.id} [{rep.site.call}] {state}{needs} ({rep.category or '-'})")
            print("    " + normalise_ws(rep.site.text)[:300])
            if rep.advised:
                print("    -> " + rep.advised[:300])
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        **asdict(r.site),
                        "template": r.site.text,
                        "id": r.site.id,
                        "advice": r.advice,
                        "env": r.env,
                        "needs": r.needs,
                        "parsed_template": r.parsed_template,
                        "example": r.example,
                        "category": r.category,
                        "fix": r.fix,
                        "advised": r.advised,
                        "handled": r.handled,
                    }
                    for r in reports
                ],
                indent=1,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
