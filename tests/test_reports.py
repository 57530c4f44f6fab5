"""The report a reviewer opens (issue 11, items 2 and 9): JSON valid against the schema,
Markdown with its PNG, HTML rendered in headless Chromium with the loss curves visible."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from matplotlib import image

from autofix.reports.formats import (
    SCHEMA_PATH,
    loss_png,
    session_json,
    sparkline,
    write_session_report,
)
from autofix.types import FixRecord, RunRecord, SessionResult, Status

SCHEMA = json.loads(SCHEMA_PATH.read_text())
DIFF = ("--- a/train.py\n+++ b/train.py\n@@ -1,2 +1,2 @@\n import torch\n"
        "-opt = Adam(lr=1e-3)\n+opt = Adam(lr=5e-5)\n")


def _result() -> SessionResult:
    """A stall fixed by lr-too-high: run 1 flat at ln 3 until step 40, run 2 learning."""
    flat = [(s, math.log(3) + 0.01 * math.sin(s)) for s in range(1, 41)]
    learning = [(s, math.log(3) * math.exp(-s / 20)) for s in range(1, 61)]
    runs = [RunRecord(1, "ok", "lr-too-high", "loss stalled at 1.10 from step 40", 12.5,
                      recipe="lr-too-high", commit="a" * 40, steps=flat, num_classes=3,
                      symptom_step=40, max_steps=60),
            RunRecord(2, "budget", "", "60 steps, loss 1.0 at step 1", 20.0,
                      steps=[*learning[:5], (6, float("nan")), *learning[6:]], num_classes=3,
                      max_steps=60)]
    fixes = [FixRecord("lr-too-high", "lr-too-high", "a" * 40, "train.py", 2,
                       "lower the learning rate to 5e-5", 1, diff=DIFF)]
    return SessionResult(Status.FIXED, "autofix/train", "the script trains after 1 fix(es)",
                         runs=runs, fixes=fixes, versions={"torch": "2.13.0"},
                         base="b" * 40, diff_stat=" train.py | 2 +-\n")


def test_json_report_is_valid_and_complete(tmp_path: Path) -> None:
    written = write_session_report(tmp_path / "r.json", _result())
    doc = json.loads(written[0].read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["runs"][0]["chance_loss"] == pytest.approx(math.log(3), abs=1e-6)
    assert len(doc["runs"][1]["steps"]) == 60 and doc["runs"][1]["steps"][5]["loss"] == "nan"
    assert doc["fixes"][0]["diff"] == DIFF
    assert doc["fixes"][0]["summary"] == "lower the learning rate to 5e-5"


def test_schema_rejects_a_report_without_runs() -> None:
    doc = session_json(_result())
    del doc["runs"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA)


def test_markdown_report_has_its_png(tmp_path: Path) -> None:
    written = write_session_report(tmp_path / "r.md", _result())
    text = written[0].read_text()
    assert [p.name for p in written] == ["r.md", "r-loss.png"]
    assert "![loss per training run](r-loss.png)" in text and "```diff" in text
    assert written[1].read_bytes()[:4] == b"\x89PNG"


def test_sparkline() -> None:
    assert sparkline([3.0, 2.0, 1.0, float("nan")]) == "█▄▁"
    assert sparkline([]) == ""


def _colour_pixels(png: Path, rgb: tuple[int, int, int], tol: int = 40) -> int:
    pixels = image.imread(str(png))[..., :3] * 255.0
    distance = abs(pixels - rgb).sum(axis=-1)
    return int((distance < tol).sum())


@pytest.mark.process
def test_html_report_shows_the_loss_curves_in_chromium(tmp_path: Path) -> None:
    """Rendered by the Debian ``chromium`` package headless; the screenshot is kept as a
    test artefact and must show both runs' curves (matplotlib's first two colours)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.fail("chromium is missing: scripts/setup.sh installs it (apt-get install "
                    "chromium)")
    page = write_session_report(tmp_path / "r.html", _result())[0]
    assert len(loss_png(_result())) > 10_000
    shot = tmp_path / "report-screenshot.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", f"--screenshot={shot}", "--window-size=1000,900",
                    page.as_uri()], check=True, capture_output=True, timeout=120)
    print(f"screenshot: {shot}")
    assert shot.exists()
    blue = _colour_pixels(shot, (31, 119, 180))  # run 1, matplotlib's C0
    orange = _colour_pixels(shot, (255, 127, 14))  # run 2, C1
    assert blue > 300 and orange > 300, (blue, orange)
    html = page.read_text()
    assert "<img id='loss-curve'" in html and "lower the learning rate" in html
    assert '<span style="color: #A00000">-opt = Adam(lr=1e-3)</span>' in html  # highlighted
    assert "<td>torch</td><td>2.13.0</td>" in html


def screenshot(page: Path, shot: Path) -> Path:
    """Render ``page`` in headless Chromium (the Debian package) into ``shot``."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.fail("chromium is missing: scripts/setup.sh installs it")
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", f"--screenshot={shot}", "--window-size=1000,900",
                    page.as_uri()], check=True, capture_output=True, timeout=120)
    print(f"screenshot: {shot}")
    return shot


def blue_pixels(shot: Path) -> int:
    """Pixels of matplotlib's first line colour (C0) in the screenshot."""
    return _colour_pixels(shot, (31, 119, 180))


def test_dry_run_report_names_no_branch_or_commit() -> None:
    result = _result()
    result.dry_run = True
    doc = session_json(result)
    jsonschema.validate(doc, SCHEMA)
    assert doc["branch"] is None and doc["dry_run"] is True
    assert doc["runs"][0]["commit"] == "" and doc["fixes"][0]["commit"] is None
    assert doc["fixes"][0]["diff"] == DIFF
