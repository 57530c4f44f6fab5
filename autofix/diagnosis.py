"""Sorts a failed run into a fault category (:mod:`autofix.categories`)."""

from __future__ import annotations

import math
import re
from pathlib import Path

from autofix.categories import CATEGORIES, LR_TOO_HIGH, TIMEOUT, UNKNOWN, Category, get_category
from autofix.registry import plugins
from autofix.traceback_text import parse_traceback
from autofix.types import (
    Diagnosis,
    ExceptionInfo,
    Frame,
    RunOutcome,
    RunResult,
    SampleLoss,
    SymptomReport,
)

_STDIN_HINT = (
    "the script reads standard input, which autofix closes; pass values as arguments "
    "(autofix SCRIPT -- ARGS) or environment variables"
)


#: Categories whose message alone is too common: they match only when, for each regex
#: here, some frame of the exception (``file: line text``) matches it (where it was raised).
FRAME_GUARDS: dict[str, tuple[re.Pattern[str], ...]] = {
    # a KeyError raised by pandas while the DataLoader fetches rows of the "dataset"
    "dataframe-to-trainer": (re.compile(r"[/\\]pandas[/\\]"), re.compile(r"fetch\.py: ")),
    # shape errors only where the embeddings add position / token-type vectors
    "longer-than-positions": (re.compile(r"modeling_\w+\.py: .*(position|token_type)"),),
}
#: Wrappers that hide the model's forward signature from Trainer.
_WRAPPERS = ("DataParallel", "DistributedDataParallel")


def _matches(category: Category, exc: ExceptionInfo) -> bool:
    """``category`` matches ``exc``'s type and message, and its frame guards (if any)."""
    if not category.matches(exc.short_type, exc.message):
        return False
    places = [f"{f.file}: {f.text}" for f in exc.frames]
    return all(any(g.search(p) for p in places) for g in FRAME_GUARDS.get(category.id, ()))


def classify(exc: ExceptionInfo) -> Category:
    """The first category whose patterns match ``exc`` or an exception it was chained from.

    The exception itself is tried against every category before its chain, so a wrapper's
    own message wins over its cause's, unless a category matching anywhere in the chain
    ``overrides`` it (``too many dimensions 'str'`` under "Unable to create tensor" is
    ``string-labels``, not ``ragged-batch``). Returns :data:`UNKNOWN` when nothing matches.
    """
    chain = (exc, *exc.chain)
    categories = (*CATEGORIES, *plugins().categories())
    found = next((category for candidate in chain for category in categories
                  if _matches(category, candidate)), UNKNOWN)
    for category in categories:
        if found.id in category.overrides and any(_matches(category, c) for c in chain):
            return category
    return found


def user_frame(exc: ExceptionInfo, script: Path) -> Frame | None:
    """The innermost frame inside the user's script, or ``None`` when it never appears."""
    target = str(script)
    for frame in reversed(exc.frames):
        if frame.file == target:
            return frame
    for inner in exc.chain:
        found = user_frame(inner, script)
        if found is not None:
            return found
    return None


def key_lines(exc: ExceptionInfo, script: Path, limit: int = 6) -> tuple[str, ...]:
    """The traceback lines a person reads first: the script's frames, the innermost
    library frame, then the error line."""
    lines = [
        f"{Path(f.file).name}:{f.line} in {f.function}: {f.text}".rstrip(": ")
        for f in exc.frames
        if f.file == str(script)
    ][-(limit - 2):]
    if exc.frames and exc.frames[-1].file != str(script):
        last = exc.frames[-1]
        lines.append(f"{last.file}:{last.line} in {last.function}: {last.text}".rstrip(": "))
    lines.append(exc.headline())
    return tuple(lines)


def exception_of(run: RunResult) -> ExceptionInfo | None:
    """The run's exception: the probe's report, else parsed from the output tail."""
    return run.probe.exception or parse_traceback(run.output_tail)


def diagnose(run: RunResult, script: Path) -> Diagnosis:
    """Diagnose a run that did not succeed.

    ``script`` is the absolute path the child ran as (frames are matched against it).
    A timeout gives ``timeout``; an exception its category; anything else ``unknown``
    with the last output line as evidence. Never raises for odd output.
    """
    if run.outcome is RunOutcome.TIMEOUT:
        return Diagnosis(
            category=TIMEOUT.id,
            evidence=f"killed after {run.seconds:.0f} s; last output: {run.last_line[:200]}",
            hint=TIMEOUT.hint,
        )
    exc = exception_of(run)
    if exc is None:
        return Diagnosis(
            category=UNKNOWN.id,
            evidence=f"exit code {run.returncode}; last output: {run.last_line[:200]}",
            hint=UNKNOWN.hint,
        )
    matched = classify(exc)
    category = matched
    seen = [d for t in run.probe.trainers for d in t.datasets] + run.probe.datasets
    if category.id == "ragged-batch" and any(d.label_kind == "str" for d in seen):
        category = get_category("string-labels")  # same message: the labels decide
    if category.id == "raw-dataset" and any(t.model_class in _WRAPPERS
                                            for t in run.probe.trainers):
        category = get_category("model-wrapped-dataparallel")  # the wrapper hid the columns
    frame = user_frame(exc, script)
    evidence = exc.headline()
    quoted = matched.matching_line(exc.message)  # the line of the message that matched
    if quoted and quoted not in evidence:
        evidence = f"{exc.short_type}: {quoted}"
    hint = category.hint
    if exc.short_type == "EOFError" and any(f.function == "<module>" or "input" in f.text
                                            for f in exc.frames):
        hint = _STDIN_HINT
    return Diagnosis(
        category=category.id,
        evidence=evidence[:300],
        file=str(script) if frame else "",
        line=frame.line if frame else 0,
        line_text=frame.text if frame else "",
        details=key_lines(exc, script),
        hint=hint,
    )


def diagnose_symptom(run: RunResult) -> Diagnosis | None:
    """Name the root cause of the symptom the probe confirmed (``None``: no symptom).

    ``nan-loss``: like the course, look at the first bad batch's per-sample losses against
    its labels and ``num_labels``; labels outside the head mean ``label-out-of-range``.
    ``stalled-loss``: the causes autofix can fix, found in the run's facts: a string Keras
    loss on a Hugging Face model (``keras-string-loss``) and a learning rate at or above
    1e-3 (``lr-too-high``); all found causes are listed in ``causes``.
    """
    symptom = run.probe.symptom
    if symptom is None:
        return None
    if symptom.kind == "nan-loss":
        return _nan_diagnosis(symptom)
    causes = []
    if any(k.hf_model and (isinstance(k.loss, str) or (k.loss and k.from_logits is False))
           for k in run.probe.keras):
        causes.append("keras-string-loss")
    rates = [s.lr for s in run.probe.steps if s.lr is not None]
    if rates and max(rates) >= LR_TOO_HIGH * (1 - 1e-6):  # float32 1e-3 is 0.0010000000475
        causes.append("lr-too-high")
    found = f"; root causes: {', '.join(causes)}" if causes else "; no known root cause"
    return Diagnosis(
        category=causes[0] if causes else "stalled-loss",
        evidence=symptom.evidence + found,
        details=(symptom.evidence, f"learning rate: {max(rates):g}" if rates else "lr unknown"),
        via="stalled-loss" if causes else "",
        causes=tuple(causes),
        hint=get_category("stalled-loss").hint,
    )


def _nan_diagnosis(symptom: SymptomReport) -> Diagnosis:
    samples, head = symptom.samples, symptom.num_labels
    outside = [s for s in samples if head is not None and (s.label >= head or -100 < s.label < 0)]
    if outside:
        labels = sorted({s.label for s in outside})
        return Diagnosis(
            category="label-out-of-range", via="nan-loss",
            evidence=f"{symptom.evidence}; labels {labels} of samples "
                     f"{[s.index for s in outside]} are outside num_labels={head}",
            details=tuple(_sample_lines(samples)),
        )
    parts = [symptom.evidence]
    ignored = [s for s in samples if s.label == -100]
    bad = [s for s in samples if s.loss is not None and not math.isfinite(s.loss)]
    if samples and len(ignored) == len(samples):
        parts.append(f"all {len(samples)} labels of that batch are -100 (ignored), so the mean "
                     "loss is taken over zero targets")
    elif bad:
        parts.append(f"non-finite per-sample losses at samples {[s.index for s in bad]} "
                     f"(labels {[s.label for s in bad]})")
    elif samples:
        parts.append("every per-sample loss of that batch is finite; the NaN comes from "
                     "elsewhere (fp16 overflow, a learning rate far too high, log(0))")
    return Diagnosis(category="nan-loss", evidence="; ".join(parts),
                     details=tuple(_sample_lines(samples)), hint=get_category("nan-loss").hint)


def _sample_lines(samples: tuple[SampleLoss, ...], limit: int = 8) -> list[str]:
    lines = [f"batch sample {s.index}: label {s.label}, loss "
             f"{'n/a' if s.loss is None else format(s.loss, '.4g')}" for s in samples[:limit]]
    if len(samples) > limit:
        lines.append(f"... {len(samples) - limit} more samples")
    return lines
