"""The probe's event contract: names and payload fields defined once in
``autofix/run/child/contract.py``, emitted by the child, read by ``autofix/run/probe_events.py``."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from autofix.run.child import events
from autofix.run.child.contract import EVENTS, Event
from autofix.run.probe_events import READERS, read_probe

CHILD = Path(events.__file__).parent


def emitted() -> list[tuple[str, str, set[str], bool]]:
    """(file:line, event name, keyword fields, has **kwargs) of every emit(...) call."""
    found = []
    for path in sorted(CHILD.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "emit" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant):
                    name = str(first.value)
                else:
                    assert isinstance(first, ast.Attribute), ast.dump(first)
                    name = getattr(Event, first.attr)
                fields = {k.arg for k in node.keywords if k.arg is not None}
                spread = any(k.arg is None for k in node.keywords)
                found.append((f"{path.name}:{node.lineno}", name, fields, spread))
    return found


def test_every_emitted_event_and_field_is_declared() -> None:
    calls = emitted()
    assert len(calls) >= 15
    for where, name, fields, _ in calls:
        assert name in EVENTS, f"{where}: event {name!r} is not declared in events.EVENTS"
        assert fields <= set(EVENTS[name]), \
            f"{where}: {sorted(fields - set(EVENTS[name]))} not declared for {name!r}"


def test_every_declared_event_has_a_reader() -> None:
    assert set(READERS) == set(EVENTS)
    assert {v for k, v in vars(Event).items() if k.isupper()} == set(EVENTS)


def test_probe_error_is_read(tmp_path: Path) -> None:
    path = tmp_path / "probe.jsonl"
    lines = [{"event": Event.STEP, "step": 1, "loss": "nan", "lr": 1e-3},
             {"event": Event.PROBE_ERROR, "where": "trainer_facts", "message": "KeyError('x')"},
             {"event": "from_a_newer_child", "x": 1},
             {"event": Event.EXIT, "code": 0}]
    path.write_text("\n".join(json.dumps(e) for e in lines) + '\n{"event": "st')
    report = read_probe(path)
    assert report.probe_errors == ["trainer_facts: KeyError('x')"]
    assert report.exit_code == 0 and len(report.steps) == 1 and report.steps[0].lr == 1e-3
