"""Shared shape of the keyword-rename API-drift recipes (not a recipe itself: the
registry skips modules whose name starts with ``_``)."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from autofix.toolkit import NotApplicable, Recipe
from autofix.toolkit.versions import at_least


class KeywordRename(Recipe):
    """Renames a keyword argument of calls matching ``CALL`` to the name the target
    environment's transformers wants: ``NEW`` from version ``SINCE`` on, ``OLD`` before.
    Applies only when the error names one of the two (``unexpected keyword argument``)."""

    abstract = True

    CALL: ClassVar[str] = ""
    OLD: ClassVar[str] = ""
    NEW: ClassVar[str] = ""
    SINCE: ClassVar[str] = ""

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if not any(f"argument '{n}'" in self.rc.diagnosis.evidence for n in (self.OLD,
                                                                              self.NEW)):
            raise NotApplicable(f"the error is not about {self.OLD}= / {self.NEW}=")
        version = self.rc.versions.get("transformers", "")
        self.wanted = self.NEW if at_least(version, self.SINCE) else self.OLD
        self.reason = f"the calls already use {self.wanted}="
        return super().transform_module_impl(tree)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, self.CALL):
            return updated_node
        args = []
        for arg in updated_node.args:
            if arg.keyword is not None and arg.keyword.value in (self.OLD, self.NEW) \
                    and arg.keyword.value != self.wanted:
                self.changed(original_node, f"{arg.keyword.value}= -> {self.wanted}=")
                arg = arg.with_changes(keyword=cst.Name(self.wanted))
            args.append(arg)
        return updated_node.with_changes(args=args)

    def summary(self) -> str:
        version = self.rc.versions.get("transformers", "unknown")
        return f"{self.edits[0]} (transformers {version})"
