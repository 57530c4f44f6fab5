"""Judging a fix by the run after it: did it move the script forward?

After each fix the next run is judged against it (issue 7): the same fault again, a new
error raised at or because of a line the fix changed (``NameError`` on a name it
inserted, ``TypeError`` on a call it edited, ``ImportError`` of an import it added,
``SyntaxError``), or, for a symptom fix, a run that does not prove learning, means the fix
did not help; the engine drops its commit and tries the next recipe.
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from dataclasses import dataclass, field

from autofix.categories import get_category, is_category, symptom_ids
from autofix.categories.breaches import breach_of
from autofix.categories.proofs import invariant_failure, learning_failure
from autofix.loop.verdicts import FINDING, finding_failure, owes_falling
from autofix.types import Diagnosis, FixRecord, Healthy, RunResult

#: Exception classes that, raised at a line a fix changed, mean the fix broke the code
#: (an undefined name, a wrong call, an import that does not exist, bad syntax).
BREAKING_TYPES = frozenset({"NameError", "UnboundLocalError", "TypeError", "ImportError",
                            "ModuleNotFoundError", "SyntaxError", "IndentationError",
                            "TabError"})
_SYNTAX = frozenset({"SyntaxError", "IndentationError", "TabError"})
_UNDEFINED = re.compile(r"name '(\w+)' is not defined|local variable '(\w+)'|"
                        r"cannot access local variable '(\w+)'")


def changed_lines(before: str, after: str) -> frozenset[int]:
    """1-based lines of ``after`` that a fix added or replaced (for a pure deletion, the
    line that now stands where the deleted ones were)."""
    old, new = before.splitlines(), after.splitlines()
    lines: set[int] = set()
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, old, new,
                                                         autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            lines.update(range(j1 + 1, j2 + 1))
        elif tag == "delete":
            lines.add(j1 + 1)
    return frozenset(lines)


def names_in(source: str, lines: frozenset[int]) -> frozenset[str]:
    """Identifiers written on ``lines`` of ``source`` (tokenized, so strings and
    comments do not count)."""
    names: set[str] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.NAME and tok.start[0] in lines:
                names.add(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return frozenset(names)


def statement_span(source: str, line: int) -> range:
    """The lines of the innermost statement of ``source`` that holds ``line`` (a call
    written over several lines is raised at its first line but edited on another);
    ``range(line, line + 1)`` when the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return range(line, line + 1)
    best = range(line, line + 1)
    size = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or line):
            span = (node.end_lineno or line) - node.lineno
            if size is None or span < size:
                best, size = range(node.lineno, (node.end_lineno or line) + 1), span
    return best


_UNEXPECTED_KW = re.compile(r"unexpected keyword argument '(\w+)'")


def _kept_keyword(evidence: str, before: str, after: str) -> bool:
    """An ``unexpected keyword argument 'x'`` whose ``x=`` the source passed before the fix
    as often as after it: the script's own next fault in the statement the fix changed
    (a second keyword of an old API), not one the fix wrote."""
    found = _UNEXPECTED_KW.search(evidence)
    if found is None:
        return False
    passed = re.compile(rf"\b{found.group(1)}\s*=(?!=)")
    return len(passed.findall(after)) <= len(passed.findall(before)) > 0


@dataclass
class FixGroup:
    """The fixes committed for one diagnosis, judged by the next run.

    ``run`` is the run the diagnosis came from (its probe facts let the next recipe be
    tried); ``before``/``after`` the sources around the fixes (absolute path -> text: the
    script's program first, then the user's modules on the branch); ``tried`` every recipe
    id applied for this diagnosis so far (dropped ones included).
    """

    diagnosis: Diagnosis
    run: RunResult
    run_n: int
    fixes: list[FixRecord]
    before: dict[str, str]
    after: dict[str, str]
    tried: set[str] = field(default_factory=set)
    #: Other diagnoses fixed in the same group (preflight findings of the same run).
    extra: list[Diagnosis] = field(default_factory=list)
    #: A trial on a healthy run that was not clearly learning
    #: (:func:`autofix.categories.catalogue.symptoms.slow_at_high_lr`): kept
    #: only when the next run proves it; when it does not, the session ends as it stood.
    tentative: bool = False
    #: Categories that break the contract the fixes claim to restore
    #: (:attr:`autofix.toolkit.recipe.Recipe.restores`): diagnosed on the next run, they
    #: fail the group.
    contracts: frozenset[str] = frozenset()

    @property
    def recipes(self) -> str:
        return ", ".join(f.recipe for f in self.fixes)

    @property
    def symptom(self) -> str:
        return symptom_of(self.diagnosis)

    def broke(self, diag: Diagnosis) -> str:
        """How ``diag`` (the next run's error) comes from a line the fixes changed, or "".
        """
        unparsable = is_category(diag.category) and get_category(diag.category).unparsable
        if diag.error_type not in BREAKING_TYPES and not unparsable:
            return ""
        # the file the error points at (the script when it names none the fixes touched)
        file = diag.file if diag.file in self.after else next(iter(self.after), "")
        before, after = self.before.get(file, ""), self.after.get(file, "")
        changed = changed_lines(before, after)
        if diag.error_type in _SYNTAX or unparsable:
            return f"{diag.evidence} after the fix (the script parsed before it)"
        undefined = _UNDEFINED.search(diag.evidence)
        name = next((g for g in undefined.groups() if g), "") if undefined else ""
        if name and any(name in names_in(self.after[f], changed_lines(self.before.get(f, ""),
                                                                      self.after[f]))
                        for f in self.after):
            return f"{diag.evidence}: the fix inserted {name!r}, which is not defined there"
        if diag.line and set(statement_span(after, diag.line)) & changed \
                and not _kept_keyword(diag.evidence, before, after):
            return f"{diag.evidence} at line {diag.line}, a statement the fix changed"
        return ""

    def same_call_fails(self, diag: Diagnosis) -> str:
        """For a fix of a broken call contract (the diagnosis came with one): the same
        line of the user's code failing again, or a line the fix changed failing, with no
        contract of its own broken (a cast made where the value is made that another use
        of it refuses, ``1 - mask`` on a bool mask), or "". A new contract broken there is
        the next fault, not this one."""
        if breach_of(self.diagnosis.failure) is None or not diag.line \
                or breach_of(diag.failure) is not None:
            return ""
        if (diag.file, diag.line) == (self.diagnosis.file, self.diagnosis.line):
            return f"{diag.evidence} at line {diag.line}, the line the contract failed at"
        file = diag.file if diag.file in self.after else next(iter(self.after), "")
        after = self.after.get(file, "")
        if set(statement_span(after, diag.line)) & changed_lines(self.before.get(file, ""),
                                                                   after):
            return f"{diag.evidence} at line {diag.line}, a statement the fix changed"
        return ""

    def failed_by(self, run: RunResult, verdict: Healthy | Diagnosis) -> str:
        """Why the next run shows these fixes did not move the script forward ("" when
        they did). An error fix fails when the same error comes back at the same place
        or a new error comes from a line it changed; a symptom fix must also prove
        itself (the same symptom again, or a healthy run whose loss is not clearly under
        the chance level, or for a non-finite loss one not finite and falling, fails it).
        A trial (``tentative``) owes the same proof, its category's (``Proof.falling``: a
        diverging loss). A silent fault's fix (``Proof.invariant``) must also show its
        invariant holding and the script's own evaluation no worse than before it
        (:func:`~autofix.categories.proofs.invariant_failure`)."""
        if isinstance(verdict, Diagnosis):
            again = next((d for d in (self.diagnosis, *self.extra) if verdict.same_fault(d)),
                         None)
            if again is not None:
                return (f"recipe {self.recipes} did not fix {again.category}: the "
                        "same error at the same place after its fix")
            if verdict.category in self.contracts:
                return (f"recipe {self.recipes} did not restore what it claims: "
                        f"{verdict.category} after it ({verdict.evidence})")
            broke = self.broke(verdict)
            if broke:
                return f"recipe {self.recipes} broke the script: {broke}"
            moved = self.same_call_fails(verdict)
            if moved:
                return f"recipe {self.recipes} did not make the call pass: {moved}"
            if self.symptom and symptom_of(verdict) == self.symptom:
                return (f"recipe {self.recipes} did not help: {self.symptom} again "
                        f"({verdict.evidence})")
            if self.tentative and symptom_of(verdict):
                return (f"recipe {self.recipes} did not help: {symptom_of(verdict)} after "
                        f"it ({verdict.evidence})")
            return ""
        category = self.diagnosis.category
        if self.diagnosis.via == FINDING:  # a finding's fix: the finding must be gone
            why = finding_failure(run, category)
        elif self.symptom or self.tentative:  # the proof of the symptom, else the trial's
            # a silent fault's cause behind the symptom owes its own proof (falling)
            why = learning_failure(run, owes_falling(self.symptom or category)
                                   or owes_falling(category))
        else:
            why = ""
        if not why and is_category(category):
            why = invariant_failure(get_category(category), self.run, run)
        if why:
            return f"recipe {self.recipes} did not help: {why}"
        return ""


def symptom_of(diag: Diagnosis) -> str:
    """The training symptom behind ``diag`` (``nan-loss``/``stalled-loss``), or ""."""
    ids = symptom_ids()
    return diag.via if diag.via in ids else (diag.category if diag.category in ids else "")
