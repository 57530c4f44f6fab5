"""The API check of one session: drift between the script and the installed libraries,
found and fixed before run 1.

:class:`DriftCheck` runs the check (:func:`autofix.loop.api_check.api_diagnoses`, one
import of the libraries in the target interpreter) in a thread alongside run 1, since most
scripts have no drift and run 1 then has not waited for it; drift with a fix sets the
session's ``interrupt``, which stops run 1, and the loop starts run 1 again on the fixed
source. With a warm interpreter the check is a fork of it (the libraries already imported:
a second or two) and answers before run 1 starts (:attr:`Timing.FIRST`), so drift never
restarts run 1. What the check finds without an edit (a stale override) is reported with
the session; why the recipes declined a finding is said again if the run then raises it.
"""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass
from pathlib import Path

from autofix.loop.attempt import Fixed, Fixer, Verified
from autofix.loop.fixgroups import FixGroup
from autofix.loop.session import Session
from autofix.types import Diagnosis, Finding, ProbeReport, RunOutcome, RunResult

#: The run that stands for "no run yet": what the API check's diagnoses were found on.
NO_RUN = RunResult(RunOutcome.OK, None, 0.0, "", 0, ProbeReport())


class Timing(enum.Enum):
    """When the API check's answer is taken: not at all (``--one-at-a-time``, ``--resume``,
    or already taken), before run 1 (it answered first), or after run 1, which it may have
    stopped."""

    NONE = "none"
    FIRST = "first"
    ALONGSIDE = "alongside"


@dataclass(frozen=True)
class DriftFixes:
    """The drift fixes committed before run 1, as the group run 1 judges, and the run of
    a candidate kept among them (``None``: none was tried)."""

    group: FixGroup
    verified: Verified | None


class DriftCheck:
    """The API check of ``session``, whose fixes ``fixer`` applies (module docstring)."""

    def __init__(self, session: Session, fixer: Fixer) -> None:
        self.session = session
        self.fixer = fixer
        self.thread: threading.Thread | None = None
        self.found: list[list[Diagnosis]] = []  # the thread's answer, once it has one
        #: Why the recipes declined each finding (its message -> the reason).
        self.declined: dict[str, str] = {}

    def start(self) -> Timing:
        """Start the check in a thread (none with ``--one-at-a-time`` or ``--resume``);
        with a warm interpreter wait for it. Returns when its answer is to be taken."""
        session = self.session
        if session.o.one_at_a_time or session.o.resume:
            return Timing.NONE
        warm = session.parts.warm
        tool = warm.tool if warm is not None and warm.serves() else None
        extra = {"tool": tool} if tool is not None else {}
        source = session.program.source
        root = Path(session.branch.root)
        modules = {str(root / rel): session.branch.read(rel) for rel in session.modules()}

        def check() -> None:
            try:
                found = session.parts.api_check(source, session.o.python, session.versions,
                                                modules=modules, folder=session.script.parent,
                                                **extra)
            except Exception:  # noqa: BLE001 - a check that cannot run blocks nothing
                found = []
            self.found.append(found)
            if any(session.recipes(d.category) for d in found):  # drift with a fix: stop run 1
                session.interrupt.set()

        self.thread = threading.Thread(target=check, name="autofix-api-check", daemon=True)
        self.thread.start()
        if tool is not None:
            self.thread.join()
            return Timing.FIRST
        return Timing.ALONGSIDE

    @property
    def stopped_run(self) -> bool:
        """The check found drift with a fix and stopped the running child, and the user did
        not (the session's ``cancel``)."""
        cancel = self.session.parts.cancel
        return self.session.interrupt.is_set() and not (cancel is not None and cancel.is_set())

    def fixes(self) -> DriftFixes | None:
        """Wait for the check's answer and fix the drift it found (no training run needed):
        each finding with a recipe gets its fix, one without is kept as a finding of the
        session, one whose recipes declined has its reason kept (:meth:`declined_before`).
        ``None`` when nothing was fixed. The session's ``interrupt`` is cleared afterwards:
        run 1 may start again."""
        if self.thread is not None:
            self.thread.join()
        session = self.session
        before = session.sources()
        fixed = Fixed(())
        applied: list[Diagnosis] = []
        for diag in self.found[0] if self.found else []:
            if not session.recipes(diag.category):  # no edit for it (a stale override): said
                where = session.relative(diag.file) or session.branch.rel
                session.early_findings.append(Finding(diag.category, 0, f"{diag.evidence} "
                                                      f"({where}:{diag.line})"))
                continue
            outcome = self.fixer.apply(NO_RUN, diag, run_n=0)
            if isinstance(outcome, Fixed):
                fixed = fixed.then(outcome)
                applied.append(diag)
            else:
                self.declined[diag.evidence] = outcome.reason
        session.interrupt.clear()  # (a candidate run above would have been stopped)
        if not fixed.fixes:
            return None
        group = FixGroup(applied[0], NO_RUN, 0, list(fixed.fixes), before, session.sources(),
                         {f.recipe for f in fixed.fixes}, extra=applied[1:])
        return DriftFixes(group, fixed.verified)

    def declined_before(self, diag: Diagnosis, reason: str) -> str:
        """``reason``, or for an error the check found before the first run and whose
        recipes declined then (with its facts: which class takes the keyword, what the
        configuration already sets), that decline's reason."""
        return next((why for message, why in self.declined.items()
                     if message and message in diag.evidence), reason)
