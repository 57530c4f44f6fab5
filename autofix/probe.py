"""Reads the probe's JSON-lines events (written by ``autofix/child/bootstrap.py``)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from autofix.types import (
    DatasetFacts,
    ExceptionInfo,
    Finding,
    Frame,
    KerasFacts,
    ProbeReport,
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


def read_probe(path: Path) -> ProbeReport:
    """Parse the probe file at ``path``; a missing file or a torn last line is tolerated.

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
        kind = event.get("event")
        if kind == "versions":
            report.versions = {str(k): str(v) for k, v in event.get("versions", {}).items()}
        elif kind == "exception":
            report.exception = exception_from_json(event)
        elif kind == "trainer":
            report.trainers.append(_trainer(event))
        elif kind == "dataset":
            report.datasets.append(_dataset(event))
        elif kind == "keras":
            report.keras.append(_keras(event))
        elif kind == "step":
            report.steps.append(StepRecord(int(event.get("step", 0)), _loss(event.get("loss")),
                                           _loss(event.get("lr"))))
        elif kind in ("symptom", "would_stop"):  # would_stop: record-only benchmark mode
            report.symptom = report.symptom or _symptom(event)
        elif kind == "finding":
            report.findings.append(Finding(str(event.get("kind", "")),
                                           int(event.get("step", 0) or 0),
                                           str(event.get("evidence", ""))))
        elif kind == "budget_extended":
            report.extended_to = int(event.get("limit", 0)) or None
        elif kind == "train_facts":
            report.facts.update({k: v for k, v in event.items() if k != "event"})
        elif kind == "num_classes":
            report.num_classes = int(event.get("value", 0)) or None
        elif kind == "budget_reached":
            report.budget_reached = True
        elif kind == "exit":
            report.exit_code = int(event.get("code", 0))
    return report


def losses_finite(report: ProbeReport) -> bool:
    """True when every recorded step loss is a finite number (vacuously true with none)."""
    return all(s.loss is None or math.isfinite(s.loss) for s in report.steps)
