"""Reads the probe's JSON-lines events (written by ``autofix/run/child/bootstrap.py``)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autofix.run.child.contract import Event
from autofix.types import (
    ChanceLevel,
    DatasetFacts,
    ExceptionInfo,
    Finding,
    Frame,
    FrameFacts,
    KerasFacts,
    Phase,
    PreflightFault,
    ProbeReport,
    SampledSplit,
    SampleLoss,
    StepRecord,
    SymptomReport,
    TrainerFacts,
)

#: The file the child executes; it travels inside the autofix package.
BOOTSTRAP = Path(__file__).parent / "child" / "bootstrap.py"


def exception_from_json(data: dict[str, Any]) -> ExceptionInfo:
    """Build an :class:`ExceptionInfo` from the probe's ``exception`` event payload."""
    return ExceptionInfo(
        type=str(data.get("type", "")),
        message=str(data.get("message", "")),
        frames=tuple(
            Frame(str(f["file"]), int(f["line"]), str(f["function"]), str(f.get("text", "")))
            for f in data.get("frames", [])
        ),
        chain=tuple(exception_from_json(c) for c in data.get("chain", [])),
        facts=tuple(
            FrameFacts(str(f.get("file", "")), int(f.get("line", 0) or 0),
                       str(f.get("function", "")), bool(f.get("user", False)),
                       {str(k): v for k, v in (f.get("locals") or {}).items()
                        if isinstance(v, dict)})
            for f in data.get("facts", []) if isinstance(f, dict)
        ),
        contract=data["contract"] if isinstance(data.get("contract"), dict) else {},
        forward={str(k): bool(v) for k, v in data["forward"].items()}
        if isinstance(data.get("forward"), dict) else {},
    )


def _loss(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(value)  # "nan"/"inf" strings come back as floats too
    except (TypeError, ValueError):
        return None


def _dataset(d: dict[str, Any]) -> DatasetFacts:
    return DatasetFacts(
        role=str(d.get("role", "")),
        columns=tuple(d.get("columns", [])),
        num_rows=d.get("num_rows"),
        label_column=str(d.get("label_column", "")),
        label_kind=str(d.get("label_kind", "")),
        label_classes=d.get("label_classes"),
        label_min=d.get("label_min"),
        label_max=d.get("label_max"),
    )


def _trainer(data: dict[str, Any]) -> TrainerFacts:
    return TrainerFacts(
        trainer_class=str(data.get("trainer_class", "")),
        model_class=str(data.get("model_class", "")),
        num_labels=data.get("num_labels"),
        datasets=tuple(_dataset(d) for d in data.get("datasets", [])),
    )


def _keras(data: dict[str, Any]) -> KerasFacts:
    return KerasFacts(
        keras=str(data.get("keras", "")), model_class=str(data.get("model_class", "")),
        hf_model=bool(data.get("hf_model")), num_labels=data.get("num_labels"),
        optimizer=str(data.get("optimizer", "")), lr=_loss(data.get("lr")),
        loss=data.get("loss"), from_logits=data.get("from_logits"),
    )


def _symptom(data: dict[str, Any]) -> SymptomReport:
    return SymptomReport(
        kind=str(data.get("kind", "")), step=int(data.get("step", 0)),
        evidence=str(data.get("evidence", "")), num_classes=data.get("num_classes"),
        num_labels=data.get("num_labels"),
        samples=tuple(SampleLoss(int(s["index"]), int(s["label"]), _loss(s.get("loss")))
                      for s in data.get("samples", [])),
    )


def _sampled(data: dict[str, Any]) -> SampledSplit:
    return SampledSplit(
        origin=str(data.get("origin", "")), split=str(data.get("split", "")),
        rows=int(data.get("rows", 0)), kept=int(data.get("kept", 0)),
        label_column=str(data.get("label_column", "")),
        label_min=_loss(data.get("label_min")), label_max=_loss(data.get("label_max")))


def widen_to_full_splits(report: ProbeReport) -> None:
    """Put the whole-split label range of cut splits into the facts measured on the cut
    ones (``--sample-rows``): a class that the slice missed still counts for
    ``num_labels``. A dataset given to ``Trainer`` as ``train`` takes the range of the
    cut ``train`` split with the same label column (any split when there is one)."""
    if not report.sampled:
        return

    def widen(facts: DatasetFacts) -> DatasetFacts:
        role = facts.role.split(":")[0]
        same = [s for s in report.sampled if s.label_column == facts.label_column
                and s.label_max is not None]
        named = [s for s in same if s.split == role or (role == "eval" and s.split in (
            "validation", "test", "eval"))]
        pick = named or (same if len({s.split for s in same}) <= 1 else [])
        if not pick or facts.label_kind not in ("int", "float") or facts.label_classes:
            return facts
        lows = [s.label_min for s in pick if s.label_min is not None]
        highs = [s.label_max for s in pick if s.label_max is not None]
        return dataclasses.replace(
            facts,
            label_min=min([*lows, facts.label_min] if facts.label_min is not None else lows),
            label_max=max([*highs, facts.label_max] if facts.label_max is not None
                          else highs))

    report.trainers = [dataclasses.replace(t, datasets=tuple(widen(d) for d in t.datasets))
                       for t in report.trainers]
    report.datasets = [widen(d) for d in report.datasets]


def _exit(report: ProbeReport, event: dict[str, Any]) -> None:
    report.exit_code = int(event.get("code", 0))
    rank = event.get("rank")
    if isinstance(rank, int):
        report.exits[rank] = report.exit_code


def _probe_error(report: ProbeReport, event: dict[str, Any]) -> None:
    report.probe_errors.append(f"{event.get('where', '?')}: {event.get('message', '')}")


def _num_classes(report: ProbeReport, event: dict[str, Any]) -> None:
    report.num_classes = int(event.get("value", 0)) or None


def _chance(report: ProbeReport, event: dict[str, Any]) -> None:
    value, classes, tokens = event.get("value"), event.get("classes"), event.get("tokens")
    if not isinstance(value, (int, float)) or not value > 0:
        return
    report.chance = ChanceLevel(float(value), str(event.get("kind") or "classes"),
                                str(event.get("label") or ""),
                                classes if isinstance(classes, int) else None,
                                tokens if isinstance(tokens, int) else 0)


def _invariant(report: ProbeReport, event: dict[str, Any]) -> None:
    """A broken invariant of data or evaluation: a run finding of its kind, and the event
    kept under ``facts["invariants"]`` (where it showed, what was measured) for recipes."""
    kind = str(event.get("kind", ""))
    report.findings.append(Finding(kind, int(event.get("step", 0) or 0),
                                   str(event.get("evidence", ""))))
    report.facts.setdefault("invariants", []).append(
        {k: v for k, v in event.items() if k not in ("event", "rank")})


def _step(report: ProbeReport, event: dict[str, Any]) -> None:
    report.steps.append(StepRecord(int(event.get("step", 0)), _loss(event.get("loss")),
                                   _loss(event.get("lr"))))
    total = event.get("total")
    if isinstance(total, int) and total > 0:
        report.total_steps = total


def _phase(report: ProbeReport, event: dict[str, Any]) -> None:
    """One phase the run reached (evaluation, saving, reloading, prediction), with the
    held-out metrics the probe measured on a hand loop's evaluation."""
    metrics = event.get("metrics")
    metrics = metrics if isinstance(metrics, dict) else {}
    report.phases.append(Phase(
        str(event.get("kind", "")), int(event.get("step", 0) or 0), str(event.get("what", "")),
        {str(k): float(v) for k, v in metrics.items() if isinstance(v, (int, float))}))


#: How each event of the contract (``autofix/run/child/contract.py: EVENTS``) updates the
#: report; a test checks that every declared event has a reader here.
READERS: dict[str, Callable[[ProbeReport, dict[str, Any]], None]] = {
    Event.VERSIONS: lambda r, e: setattr(
        r, "versions", {str(k): str(v) for k, v in e.get("versions", {}).items()}),
    Event.EXCEPTION: lambda r, e: setattr(r, "exception", exception_from_json(e)),
    Event.TRAINER: lambda r, e: r.trainers.append(_trainer(e)),
    Event.DATASET: lambda r, e: r.datasets.append(_dataset(e)),
    Event.KERAS: lambda r, e: r.keras.append(_keras(e)),
    Event.STEP: _step,
    Event.SYMPTOM: lambda r, e: setattr(r, "symptom", _symptom(e)),
    Event.NUM_CLASSES: _num_classes,
    Event.CHANCE: _chance,
    Event.BUDGET_REACHED: lambda r, e: setattr(r, "budget_reached", True),
    Event.EARLY_EVAL: lambda r, e: None,  # progress only
    Event.LOOP_ENDED: lambda r, e: None,  # progress only: the budget ended a hand loop
    Event.PROBE_ERROR: _probe_error,
    Event.EXIT: _exit,
    Event.PREFLIGHT: lambda r, e: r.preflight.append(
        (str(e.get("check", "")), exception_from_json(e))),
    Event.FINDING: lambda r, e: r.findings.append(
        Finding(str(e.get("kind", "")), int(e.get("step", 0) or 0), str(e.get("evidence", "")))),
    Event.BUDGET_EXTENDED: lambda r, e: setattr(r, "extended_to", int(e.get("limit", 0)) or None),
    Event.TRAIN_FACTS: lambda r, e: r.facts.update({k: v for k, v in e.items()
                                                   if k not in ("event", "rank")}),
    Event.WOULD_STOP: lambda r, e: setattr(r, "symptom", r.symptom or _symptom(e)),
    Event.SAMPLED: lambda r, e: r.sampled.append(_sampled(e)),
    Event.STEP_EVIDENCE: lambda r, e: r.facts.setdefault("step_evidence", {}).update(
        {k: v for k, v in e.items() if k not in ("event", "rank")}),
    Event.LM_FACTS: lambda r, e: r.facts.setdefault("lm", {}).update(
        {k: v for k, v in e.items() if k not in ("event", "rank")}),
    Event.NUMERIC: lambda r, e: r.facts.setdefault("numeric", {}).update(
        {k: v for k, v in e.items() if k not in ("event", "rank")}),
    Event.PREFLIGHT_FAULT: lambda r, e: r.faults.append(PreflightFault(
        str(e.get("check", "")), str(e.get("category", "")), str(e.get("evidence", "")))),
    Event.INVARIANT: _invariant,
    Event.PHASE: _phase,
    Event.EVAL_METRICS: lambda r, e: r.evaluations.append(
        (int(e.get("step", 0) or 0), {str(k): float(v) for k, v in e["metrics"].items()})),
}


def read_probe(path: Path) -> ProbeReport:
    """Parse the probe file at ``path``; a missing file or a torn last line is tolerated,
    an event name outside the contract is ignored.

    Returns a :class:`ProbeReport`; an empty one when the child died before the probe ran.
    """
    report = ProbeReport()
    if not path.exists():
        return report
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(raw)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
        if not isinstance(event, dict):
            continue
        kind = event.get("event")
        rank = event.get("rank")
        if rank is not None and kind in ("step", "budget_reached") and rank != 0:
            continue  # ranks step together: rank 0's steps stand for all
        if kind == "exception" and rank is not None:
            if report.exception is None:  # the first failure is the root cause; later
                report.exception = exception_from_json(event)  # ranks fail because of it
                report.rank = int(rank)
            continue
        reader = READERS.get(str(kind))
        if reader is not None:
            try:
                reader(report, event)
            except (TypeError, ValueError, KeyError, AttributeError) as exc:
                report.probe_errors.append(f"unreadable {kind} event: {exc!r}")
    widen_to_full_splits(report)
    return report
