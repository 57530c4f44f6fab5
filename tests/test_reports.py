"""The report a reviewer opens (issue 11, items 2 and 9): JSON valid against the schema,
Markdown with its PNG, HTML rendered in headless Chromium with the loss curves visible."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import jsonschema
import pytest
from matplotlib import image

from autofix.batch.jobs import Row
from autofix.reports.batch import fault_counts, write_batch_reports
from autofix.reports.formats import (
    SCHEMA_PATH,
    html_report,
    loss_png,
    markdown_report,
    session_json,
    sparkline,
    write_session_report,
)
from autofix.types import Diagnosis, FixRecord, RunRecord, SessionResult, Status

from .conftest import chromium

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
    return SessionResult(Status.FIXED, "autofix/train", "the script trains after 1 fix",
                         runs=runs, fixes=fixes, versions={"torch": "2.13.0"},
                         base="b" * 40, diff_stat=" train.py | 2 +-\n", trained=True)


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
    browser = chromium()
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
    browser = chromium()
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


# --- issue 27, point 5: what a reviewer and a teacher act on ----------------------------


def _gave_up() -> SessionResult:
    result = _result()
    result.status, result.trained = Status.GAVE_UP, False
    result.reason = "label-out-of-range: recipe not applicable"
    result.last_diagnosis = Diagnosis("label-out-of-range", "Target 2 is out of bounds.",
                                      hint="set num_labels to the number of classes")
    return result


def test_the_page_says_do_not_merge_for_a_session_that_gave_up_or_was_interrupted() -> None:
    page = html_report(_gave_up())
    assert "<div class='banner' id='banner'>Do not merge as is: autofix gave up. The branch " \
           "holds partial fixes; the script does not train yet. Hint: set num_labels to " \
           "the number of classes</div>" in page
    interrupted = _result()
    interrupted.interrupted = True
    page = html_report(interrupted)
    assert "Do not merge as is: the session was interrupted" in page
    assert "--resume --branch autofix/train" in page and "<h1>autofix: interrupted" in page
    assert "id='banner'" not in html_report(_result())
    assert "**Do not merge as is: autofix gave up." in markdown_report(_gave_up())


def test_the_page_has_the_command_line_the_total_time_and_the_eval_metrics() -> None:
    result = _result()
    result.command, result.seconds, result.trained = "autofix train.py --max-steps 60", 95.5, True
    result.runs[-1].eval_step = 60
    result.runs[-1].metrics = {"eval_loss": 0.5213, "eval_accuracy": 0.8125,
                               "eval_runtime": 0.18}
    page = html_report(result)
    assert "<tr><th>command</th><td><code>autofix train.py --max-steps 60</code></td></tr>" \
        in page
    assert "<tr><th>total time</th><td>1 min 35 s (2 runs)</td></tr>" in page
    assert "<h2>Evaluation of the verifying run (run 2, at step 60)</h2>" in page
    assert "<tr><td>eval_accuracy</td><td>0.8125</td></tr>" in page
    doc = session_json(result)
    jsonschema.validate(doc, SCHEMA)
    assert doc["runs"][1]["metrics"]["eval_accuracy"] == 0.8125 and doc["seconds"] == 95.5
    text = markdown_report(result)
    assert "Command: `autofix train.py --max-steps 60`" in text
    assert "Evaluation of the verifying run (run 2): eval_loss 0.5213, eval_accuracy 0.8125" \
        in text  # timings only in the table


def test_fixes_made_before_the_first_run_have_their_own_row() -> None:
    result = _result()
    result.fixes.insert(0, FixRecord("api-drift", "drift-adamw", "c" * 40, "train.py", 1,
                                     "import AdamW from torch.optim", 0, diff=DIFF,
                                     evidence="ImportError: cannot import name 'AdamW'"))
    page = html_report(result)
    assert ("<tr><td>before the first run</td><td>API check</td><td>api-drift</td><td>"
            "ImportError: cannot import name &#x27;AdamW&#x27;</td><td>-</td><td>-</td>"
            "<td>drift-adamw cccccccc</td></tr>") in page
    assert "run 0" not in page and ", before the first run, <code>train.py:1</code>" in page
    assert "| before the first run | API check | api-drift |" in markdown_report(result)


@pytest.mark.process
def test_the_banner_is_visible_in_chromium(tmp_path: Path) -> None:
    page = write_session_report(tmp_path / "gave-up.html", _gave_up())[0]
    shot = screenshot(page, tmp_path / "gave-up.png")
    assert _colour_pixels(shot, (176, 58, 46), tol=30) > 1000  # the banner's red border
    assert _colour_pixels(shot, (253, 236, 234), tol=12) > 20_000  # its background


def _row(path: str, result: SessionResult, status: str = "") -> Row:
    return Row(path, f"autofix/{path}", status=status or result.status.value,
               seconds=sum(r.seconds for r in result.runs), result=result,
               fixes=len(result.fixes))


def _batch() -> list[Row]:
    second = _result()
    second.fixes = [FixRecord("raw-dataset", "raw-dataset", "d" * 40, "ex2.py", 9,
                              "pass the tokenized datasets to Trainer", 1, diff=DIFF),
                    *second.fixes]
    clean = SessionResult(Status.CLEAN, "autofix/ex3.py", "the script ran without a fault; "
                          "nothing to fix", runs=[RunRecord(1, "budget", "", "60 steps", 3.0,
                                                            steps=[(1, 1.0), (2, 0.9)])],
                          trained=True)
    return [_row("ex1.py", _result()), _row("ex2.py", second), _row("ex3.py", clean),
            _row("ex4.py", _gave_up()),
            Row("ex5.py", "autofix/ex5.py", status="error", error="no such file")]


def test_the_batch_reports_count_the_faults_across_scripts(tmp_path: Path) -> None:
    rows = _batch()
    faults = {f["category"]: f for f in fault_counts(rows)}
    assert faults["lr-too-high"] == {"category": "lr-too-high", "scripts": 3, "fixed": 3,
                                     "left": 0}
    assert faults["label-out-of-range"]["left"] == 1
    assert faults["raw-dataset"]["scripts"] == 1
    for name, people in (("x.html", "x.html"), ("x.md", "x.md"), ("x.json", "x.md")):
        folder = tmp_path / name.replace(".", "-")
        folder.mkdir()
        written = write_batch_reports(folder / name, rows, "autofix batch ex", 42.0)
        assert [p.name for p in written] == [name, people if name.endswith(".json")
                                             else "x.json"]
        assert sorted(p.name for p in folder.iterdir()) == sorted({name, people, "x.json"})
        doc = json.loads((folder / "x.json").read_text())
        jsonschema.validate(doc, SCHEMA)
        assert doc["command"] == "autofix batch ex" and len(doc["scripts"]) == 5
    markdown = (tmp_path / "x-md" / "x.md").read_text()
    assert "| `lr-too-high` | 3 | 3 | 0 |" in markdown and "```diff" in markdown
    assert "> **Do not merge as is**: the script does not train yet." in markdown


@pytest.mark.process
def test_the_teachers_page_in_chromium(tmp_path: Path) -> None:
    """The batch page: the summary table, the faults across scripts, per script its
    fixes, diffs and loss curves; rendered headless, each script's curve visible."""
    page = write_batch_reports(tmp_path / "class.html", _batch(), "autofix batch ex", 42.0)[0]
    text = page.read_text()
    assert text.count("<img class='loss-curve'") == 4
    assert "<table id='faults'>" in text and "<table id='summary'>" in text
    assert "<a href='#script-1'>ex2.py</a>" in text and "id='script-1'" in text
    assert text.count('<span style="color: #A00000">-opt = Adam(lr=1e-3)</span>') == 4
    assert "autofix could not run it: no such file" in text
    assert "<div class='banner'>Do not merge as is" in text
    shot = tmp_path / "class.png"
    browser = chromium()
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--hide-scrollbars",
                    f"--screenshot={shot}", "--window-size=1000,6000", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    print(f"screenshot: {shot}")
    assert blue_pixels(shot) > 4 * 300  # run 1's curve of each of the four scripts


def test_a_hint_the_reason_already_says_is_not_repeated() -> None:
    from autofix.reports.terminal import said_in

    reason = ("api-drift: recipe not applicable (drift-option: the option --evaluation_strategy "
              "comes from the command line, not the script: run it with --eval_strategy steps "
              "(transformers renamed evaluation_strategy to eval_strategy))")
    hint = ("transformers renamed evaluation_strategy to eval_strategy (TrainingArguments, "
            "transformers 4.41): pass --eval_strategy for --evaluation_strategy")
    assert said_in(hint, reason)
    assert not said_in("pass num_labels=3 to from_pretrained", reason)
    assert not said_in("short", "a short reason")  # too short a clause to judge by


def test_the_run_line_cuts_a_long_message_at_a_word_and_says_so() -> None:
    from autofix.reports.terminal import clipped

    message = ("ValueError: Some specified arguments are not used by the HfArgumentParser: "
               "['--output_dir', 'out', '--evaluation_strategy', 'steps', '--eval_steps', '50']")
    short = clipped(message)
    assert len(short) <= 120 and short.endswith(" …")
    kept = short[:-2]
    assert message.startswith(kept) and message[len(kept)] == " "  # cut between words
    assert clipped("TypeError: short") == "TypeError: short"
