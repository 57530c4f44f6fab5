"""Sorts a failed run into a fault category (:mod:`autofix.categories`): the exception
and where it was raised, refined by the run's facts, with the category's advice."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from autofix.categories import (
    TIMEOUT,
    UNKNOWN,
    Category,
    all_categories,
    get_category,
    is_category,
)
from autofix.categories.breaches import breach_of, failing_call
from autofix.categories.failure import Failure
from autofix.categories.sites import all_frames, frame_keys, raised_site
from autofix.categories.tracebacks import inner_message, parse_traceback
from autofix.toolkit.discovery import plugins
from autofix.types import (
    Diagnosis,
    ExceptionInfo,
    Frame,
    ProbeReport,
    RunOutcome,
    RunResult,
)


def classify(exc: ExceptionInfo, probe: ProbeReport | None = None) -> Category:
    """The first category whose patterns match ``exc`` or an exception it was chained from.

    The exception itself is tried against every category before its chain, so a wrapper's
    own message wins over its cause's, unless a category matching anywhere in the chain
    ``overrides`` it (``too many dimensions 'str'`` under "Unable to create tensor" is
    ``string-labels``, not ``ragged-batch``). Where the error was raised is part of the
    match (:func:`autofix.categories.sites.raised_site`): "Unable to create tensor" from a
    collator is ``ragged-batch``, from a ``Dataset.map`` function ``map-return-tensors``.
    The facts at the failure (the objects in the failing frames, ``exc.facts``, and the
    run's ``probe`` report) are part of the match too (``Category.check``): a category
    they refute does not fire (``Target -1 is out of bounds`` is not a head too small),
    and one that needs them fires only when they show it. When no category matches, the
    input contract the failing call's real arguments broke names it (its ``category``:
    :mod:`autofix.categories.breaches`), whatever the message says. Plugins' categories
    take part once loaded. Returns :data:`UNKNOWN` when nothing matches.
    """
    plugins()  # a plugin's categories join the registry when it loads
    chain = (exc, *exc.chain)
    categories = all_categories()
    failure = failure_of(exc, probe)
    site, frames = failure.site, failure.frames

    def matches(category: Category, candidate: ExceptionInfo) -> bool:
        return category.matches(candidate.short_type, candidate.message, site, frames) \
            and category.fits(failure)

    found = next((category for candidate in chain for category in categories
                  if matches(category, candidate)), UNKNOWN)
    breach = breach_of(exc)
    if found is UNKNOWN and breach is not None and is_category(breach.category):
        return get_category(breach.category)  # no message known: the contract measured
    for category in categories:
        if found.id in category.overrides and any(matches(category, c) for c in chain):
            return category
    return found


def failure_of(exc: ExceptionInfo, probe: ProbeReport | None = None) -> Failure:
    """``exc`` as the categories see it: where it was raised, the frames of its whole chain
    and the run's ``probe`` report (:class:`~autofix.categories.failure.Failure`)."""
    frames = tuple(key for candidate in (exc, *exc.chain)
                   for key in frame_keys(all_frames(candidate)))
    return Failure(exc, raised_site(exc), frames, probe or ProbeReport())


def in_repository(file: str, script: Path, root: str = "") -> bool:
    """``file`` (a frame's path) is the user's: the script, or a file of the repository
    ``root`` outside installed packages and environments (``.venv``, ``site-packages``)."""
    if file == str(script):
        return True
    if not root or not file or file.startswith("<"):
        return False
    path = Path(file)
    try:
        rel = path.relative_to(root) if path.is_absolute() else path
    except ValueError:
        return False
    return not any(part.startswith(".") or part in ("site-packages", "dist-packages")
                   for part in rel.parts[:-1])


def user_frame(exc: ExceptionInfo, script: Path, root: str = "") -> Frame | None:
    """The innermost frame in the user's files (the script, or a module of the repository
    ``root``), or ``None`` when none appears."""
    for frame in reversed(exc.frames):
        if in_repository(frame.file, script, root):
            return frame
    for inner in exc.chain:
        found = user_frame(inner, script, root)
        if found is not None:
            return found
    return None


def key_lines(exc: ExceptionInfo, script: Path, limit: int = 6, root: str = ""
              ) -> tuple[str, ...]:
    """The traceback lines a person reads first: the frames in the user's files (the
    script's and those of the repository's own modules, named relative to it), the
    innermost library frame, then the error line."""
    def name(file: str) -> str:
        if root and file != str(script):
            try:
                return Path(file).relative_to(root).as_posix()
            except ValueError:
                pass
        return Path(file).name

    lines = [
        f"{name(f.file)}:{f.line} in {f.function}: {f.text}".rstrip(": ")
        for f in exc.frames
        if in_repository(f.file, script, root)
    ][-(limit - 2):]
    if exc.frames and not in_repository(exc.frames[-1].file, script, root):
        last = exc.frames[-1]
        lines.append(f"{last.file}:{last.line} in {last.function}: {last.text}".rstrip(": "))
    lines.append(exc.headline())
    return tuple(lines)


def exception_of(run: RunResult) -> ExceptionInfo | None:
    """The run's exception: the probe's report, else parsed from the output tail."""
    return run.probe.exception or parse_traceback(run.output_tail)


#: The fact (:meth:`Diagnosis.fact`) naming the preflight check that found a run's fault
#: before its first training step.
PREFLIGHT_CHECK = "preflight_check"


def preflight_check(exc: ExceptionInfo, probe: ProbeReport) -> str:
    """The preflight check (``"labels"``, ``"collate"``, ``"loader-labels"``...) whose
    finding ``exc`` is: the first of the run's ``preflight`` events with its type and
    message (the run raises the first finding where training would have failed, at
    ``trainer.train()``, Keras ``fit`` or the loop's first batch); "" when no check found
    it."""
    return next((check for check, found in probe.preflight if check
                 and found.type == exc.type and found.message == exc.message), "")


def found_by_preflight(check: str) -> str:
    """The line of a diagnosis's details that names the preflight ``check`` that found it."""
    return f"found by the preflight check '{check}' before the first training step"


def with_last_output(evidence: str, run: RunResult) -> str:
    """``evidence; last output: LINE`` with the run's last output line (at most 200
    characters), or ``evidence`` alone when the run printed nothing."""
    line = run.last_line.strip()[:200]
    return f"{evidence}; last output: {line}" if line else evidence


def diagnose(run: RunResult, script: Path, root: str = "") -> Diagnosis:
    """Diagnose a run that did not succeed.

    ``script`` is the absolute path the child ran as (frames are matched against it);
    ``root`` the repository, whose own modules are the user's too (``""``: the script only).
    A timeout gives ``timeout``; an exception its category; anything else ``unknown``
    with the last output line as evidence (a run that printed nothing names no last
    output). The hint is the category's, or its advice from the facts: a failure with a
    specific hint has a category of its own, so ``unknown`` never comes with one. Never
    raises for odd output.
    """
    if run.outcome is RunOutcome.TIMEOUT:
        return Diagnosis(category=TIMEOUT.id, hint=TIMEOUT.hint,
                         evidence=with_last_output(f"killed after {run.seconds:.0f} s", run))
    exc = exception_of(run)
    if exc is None:
        return Diagnosis(category=UNKNOWN.id, hint=UNKNOWN.hint,
                         evidence=with_last_output(f"exit code {run.returncode}", run))
    return diagnose_exception(exc, run.probe, script, root)


def diagnose_exception(exc: ExceptionInfo, probe: ProbeReport, script: Path, root: str = ""
                       ) -> Diagnosis:
    """The diagnosis of the exception ``exc`` as the probe report ``probe`` saw it (its
    ``exception`` is ``exc``: the run's own, or a preflight finding's), against ``script``
    and the repository ``root`` as in :func:`diagnose`: the category its message, site and
    facts match, refined by the run's facts, with the user's frame, the key traceback
    lines, the preflight check that found it and the category's advice."""
    matched = classify(exc, probe)
    category = matched
    refined = matched.refine(probe) if matched.refine else ""
    if refined:  # the same message, another cause: the run's facts decide
        category = get_category(refined)
    frame = user_frame(exc, script, root)
    evidence = exc.headline()
    quoted = matched.matching_line(exc.message)  # the line of the message that matched
    inner = inner_message(exc.message)  # TF graph mode: the real error inside the message
    if quoted and quoted not in evidence:
        evidence = f"{exc.short_type}: {quoted}"
    elif inner and not quoted:
        evidence = inner if re.match(r"\w+(Error|Exception):", inner) \
            else f"{exc.short_type}: {inner}"
    check = preflight_check(exc, probe)
    diagnosis = Diagnosis(
        category=category.id,
        evidence=evidence[:300],
        file=frame.file if frame else "",
        line=frame.line if frame else 0,
        line_text=frame.text if frame else "",
        details=(*key_lines(exc, script, root=root), *([found_by_preflight(check)] if check
                                                        else [])),
        hint=category.hint,
        error_type=exc.short_type,
        failure=exc,
        message=exc.message[:4000],
        facts=((PREFLIGHT_CHECK, check),) if check else (),
    )
    failure = failure_of(exc, probe)
    if frame is not None:
        failure = dataclasses.replace(failure, user_line=(Path(frame.file).name, frame.line,
                                                          frame.text))
    advice = category.advise(failure) if category.advise else ""
    if not advice and category.advice:
        advice = category.advice(probe)  # what the facts say
    breach = breach_of(exc)
    call = failing_call(exc) if category is UNKNOWN else ""
    if call:  # no category: still the failing call and its inputs as measured
        diagnosis = dataclasses.replace(diagnosis, details=(
            *diagnosis.details, f"the failing call: {call}"))
    if breach is not None:  # the failing call's contract, measured on its arguments
        diagnosis = dataclasses.replace(diagnosis, details=(
            *diagnosis.details, f"contract broken: {breach.sentence()}"))
        if not advice and breach.category == category.id:
            advice = breach.advice(failure.lead())
    return dataclasses.replace(diagnosis, hint=advice) if advice else diagnosis


def diagnose_symptom(run: RunResult) -> Diagnosis | None:
    """Name the root cause of the symptom the probe confirmed (``None``: no symptom).

    First a category that claims the symptom from its own evidence
    (``Category.symptom_cause``: like the course, the first bad batch's per-sample losses
    against its labels and ``num_labels``; labels outside the head mean
    ``label-out-of-range``), in registration order; then the symptom's own analysis
    (``Category.symptom_diagnosis``: the causes autofix can fix, found in the run's facts,
    all listed in ``causes``). A symptom no category analyses is named as it was reported.
    """
    symptom = run.probe.symptom
    if symptom is None:
        return None
    for category in all_categories():
        if category.symptom_cause is not None:
            claimed = category.symptom_cause(symptom)
            if claimed is not None:
                return claimed
    own = get_category(symptom.kind) if is_category(symptom.kind) else None
    if own is None or own.symptom_diagnosis is None:
        return Diagnosis(category=symptom.kind, evidence=symptom.evidence)
    return own.symptom_diagnosis(run)
