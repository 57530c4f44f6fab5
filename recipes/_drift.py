"""Shared shape of the API-drift recipes that act on a trainer, its arguments class and
their keywords (not a recipe itself: the registry skips modules whose name starts with
``_``): ``drift-keyword`` (a keyword renamed, or moved from a trainer into its
configuration class) and ``drift-args-class`` (a trainer given the plain
``TrainingArguments`` where it needs its own class).

What to change comes from the API check's facts (:attr:`Diagnosis.facts`, measured on the
installed library in the target interpreter: the keyword the callable takes instead, the
class a keyword moved to, the defaults a class swap keeps); the recipes find where the
script builds the objects involved (following a trainer's ``args`` to the call that builds
it, through assignments, helpers' returns and call sites: :class:`Program`) and edit there.
"""

from __future__ import annotations

import re

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from autofix.toolkit import NotApplicable, code, keyword, patterns
from autofix.toolkit.drift import CHECKED_LIBRARIES, top_level
from autofix.toolkit.scope import Edit, PlannedEdits, append_kw
from autofix.toolkit.values import Values

#: ``X.__init__() got an unexpected keyword argument 'k'`` (also ``__init__() ...`` and
#: ``f() ...``): the owner, the function, the keyword.
UNEXPECTED = re.compile(r"(?:\b(\w+)\.)?(\w+)\(\) got an unexpected keyword argument '(\w+)'")
_PARAM = re.compile(r"(\w+)=(.+)")


def named_class(evidence: str) -> tuple[str, str] | None:
    """``(class or function name, keyword)`` of an unexpected-keyword message ("" when the
    message names only ``__init__``)."""
    match = UNEXPECTED.search(evidence)
    if match is None:
        return None
    owner, func, kw = match.groups()
    return (owner or "") if func == "__init__" else func, kw


def keyword_pairs(text: str) -> list[tuple[str, str]]:
    """``[("bf16", "False"), ...]`` from the facts' ``"bf16=False, learning_rate=5e-05"``."""
    pairs = []
    for part in text.split(", "):
        match = _PARAM.fullmatch(part.strip())
        if match:
            pairs.append((match.group(1), match.group(2)))
    return pairs


class TrainerDrift(PlannedEdits):
    """A planned-edits recipe over trainer calls and the calls that build their ``args``
    (each recipe makes its run's value service, ``self.values``, first in ``prepare``)."""

    abstract = True
    values: Values

    def library_call(self, call: cst.Call, qualified: str, name: str) -> bool:
        """``call`` calls ``qualified`` (the check's target) or, without one, a class
        called ``name`` of a checked library ("": any checked library's callable)."""
        names = self.qualified(call.func)
        if qualified:
            return qualified in names
        return any(top_level(q) in CHECKED_LIBRARIES and (not name or q.endswith(f".{name}"))
                   for q in names)

    def is_trainer(self, call: cst.Call, pattern: str = patterns.ANY_TRAINER) -> bool:
        """``call`` builds a trainer matching ``pattern``, or a class of the module
        derived from one."""
        if self.is_qualified(call.func, pattern):
            return True
        cls = self.program.class_called(call)
        seen: set[str] = set()
        while cls is not None and cls.name.value not in seen:
            seen.add(cls.name.value)
            bases = [b.value for b in cls.bases]
            if any(self.is_qualified(b, pattern) for b in bases):
                return True
            cls = next((self.program.classes.get(b.value) for b in bases
                        if isinstance(b, cst.Name) and b.value in self.program.classes), None)
        return False

    def args_constructions(self, call: cst.Call) -> list[cst.Call] | str:
        """The calls that build what trainer ``call`` gets as ``args`` (``args=``, else the
        positional argument built by an arguments class); empty when it gets none; a
        reason when its value cannot be followed to such calls in this module."""
        given = keyword(call, "args")
        candidates = [given.value] if given is not None else \
            [a.value for a in call.args if a.keyword is None and not a.star]
        for expr in candidates:
            values = self.values.origins(expr)
            built = [v for v in values if isinstance(v, cst.Call)
                     and self.is_qualified(v.func, patterns.ANY_TRAINING_ARGS)]
            if built and len(built) == len(values):
                return built
            if given is not None:
                return (f"the args given at line {self.program.line(call)} ({code(expr)}) "
                        "are not built by an arguments class in this file")
        return []

    def resolvable_at(self, value: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """Every name ``value`` reads is bound where ``at`` runs."""
        names = [n for n in m.findall(value, m.Name()) if isinstance(n, cst.Name)]
        attrs = {id(a.attr) for a in m.findall(value, m.Attribute())
                 if isinstance(a, cst.Attribute)}
        return all(self.program.resolves(n.value, at) for n in names if id(n) not in attrs)

    def swap_class(self, call: cst.Call, qualified: str, keeps: str) -> tuple[Edit, str]:
        """The edit that makes ``call`` build ``qualified`` (``trl.SFTConfig``) with the same
        keywords, plus ``keeps`` (the old class's defaults that differ, ``name=value``
        pairs) for each it does not pass; and its description. Raises
        :class:`NotApplicable` for a call whose keywords are not all in the source."""
        if any(a.star == "**" for a in call.args) and keeps:
            raise NotApplicable(f"{code(call.func)}(**...) gets keywords the source does not "
                                "show: a class swap could not keep its defaults")
        module, name = qualified.rsplit(".", 1)
        func = call.func
        new_func: cst.BaseExpression
        if isinstance(func, cst.Attribute) and code(func.value) == module:
            new_func = func.with_changes(attr=cst.Name(name))
        else:
            new_func = cst.Name(name)
            AddImportsVisitor.add_needed_import(self.context, module, name)
            if isinstance(func, cst.Name):
                for old in self.qualified(func):
                    if "." in old:
                        old_module, old_name = old.rsplit(".", 1)
                        RemoveImportsVisitor.remove_unused_import(self.context, old_module,
                                                                  old_name)
        passed = {a.keyword.value for a in call.args if a.keyword is not None}
        kept = [(k, v) for k, v in keyword_pairs(keeps) if k not in passed]
        edits: list[Edit] = [lambda node: node.with_changes(func=new_func)]
        edits += [append_kw(k, cst.parse_expression(v)) for k, v in kept]

        def run(node: cst.CSTNode) -> cst.CSTNode:
            for edit in edits:
                node = edit(node)
            return node

        what = f"{code(func)}(...) -> {name}(...) with the same arguments"
        if kept:
            what += (f", keeping {code(func)}'s defaults where {name}'s differ: "
                     + ", ".join(f"{k}={v}" for k, v in kept))
        return run, what
