"""Honest progress (issue 11, item 5): the status line, the batch table's live seconds and
unwrapped last line (unit tests of the renderers; the CLI lines are in test_e2e_review)."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

from rich.console import Console

from autofix.batch.local import Row
from autofix.cli.batch import rows_table as _rows_table
from autofix.reports.terminal import ConsoleObserver


def test_status_line_names_the_step_budget_and_the_scripts_total() -> None:
    """The script's length is the probe's (read from the trainer or the loop), never a
    progress bar the script prints (a map over 103 rows, an evaluation of 10 batches)."""
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    observer = ConsoleObserver(console, "train.py", max_steps=60)
    observer.run_started(3, "")
    observer.output_line("Map: 100%|██████████| 103/103 [00:00<00:00, 3.5it/s]")
    observer.step(23, 0.9, 150)
    text = observer.status_text()
    observer.close()
    assert text.startswith("run 3: verifying the fixes, step 23 (loss 0.900), stopping at "
                           "step 60 of the script's 150")
    assert "103" not in text.split("[dim]")[0]  # the script's own line is shown as is


def test_a_total_the_steps_have_passed_is_not_named() -> None:
    """A length the run has already passed is not the script's: nothing is said of it."""
    console = Console(file=io.StringIO(), force_terminal=False)
    observer = ConsoleObserver(console, "train.py", max_steps=60)
    observer.run_started(2, "")
    observer.step(10, 0.5, 10)
    observer.step(20, 0.4, 10)
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines[1:] == ["run 2: step 10, loss 0.5000, to the script's end at step 10 "
                         "(budget 60)", "run 2: step 20, loss 0.4000, stopping at step 60"]


def test_first_run_and_full_runs_say_so() -> None:
    console = Console(file=io.StringIO(), force_terminal=False)
    observer = ConsoleObserver(console, "train.py", max_steps=0)
    observer.run_started(1, "")
    for n in range(1, 21):
        observer.step(n, 1.0)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert out.splitlines() == [
        "run 1: train.py: running the script, to the script's end (--full)",
        "run 1: step 10, loss 1.0000, to the script's end (--full)",
        "run 1: step 20, loss 1.0000, to the script's end (--full)"]


def test_batch_rows_tick_and_never_wrap() -> None:
    running = Row("course/ex01.py", "autofix/course/ex01", status="running", run=2,
                  note="UserWarning: " + "a very long warning " * 20,
                  started=time.monotonic() - 42)
    done = Row("course/ex02.py", "autofix/course/ex02", status="fixed", seconds=7.0)
    console = Console(file=io.StringIO(), width=80)
    console.print(_rows_table([running, done], 80))
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    body = [ln for ln in lines if "course/" in ln]
    assert len(body) == 2  # one line per row: the warning is cut, not wrapped
    assert body[0].rstrip(" │").endswith("42") and "…" in body[0]
    assert body[1].rstrip(" │").endswith("7")


def test_summary_suggests_merge_only_when_fixed() -> None:
    from autofix.reports.terminal import print_summary
    from autofix.types import SessionResult, Status

    for status, merge in ((Status.FIXED, True), (Status.GAVE_UP, False)):
        console = Console(file=io.StringIO(), width=200)
        result = SessionResult(status, "autofix/t", "why", base="c" * 40,
                               diff_stat=" t.py | 2 +-\n 1 file changed\n")
        print_summary(console, result)
        out = console.file.getvalue()  # type: ignore[attr-defined]
        assert " 1 file changed" in out and "Whole diff: git diff cccccccc..autofix/t" in out
        assert ("merge: git merge autofix/t" in out) is merge


def test_status_line_states_the_extended_budget_and_a_shorter_script() -> None:
    """Past --max-steps the run was extended (an unclear loss trains on before its verdict):
    the line names the extended budget; a script shorter than the budget ends first."""
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    observer = ConsoleObserver(console, "train.py", max_steps=60)
    observer.run_started(2, "")
    observer.step(70, 1.1, 150)
    assert ("step 70 (loss 1.100), stopping at step 120 of the script's 150 (extended from "
            "60: no verdict yet)") in observer.status_text()
    observer.run_started(3, "")
    observer.step(20, 0.7, 40)
    text = observer.status_text()
    observer.close()
    assert "stopping at step 60" not in text
    assert "step 20 (loss 0.700), to the script's end at step 40 (budget 60)" in text


def _frame_in(tmp_path: Path, source: str, **names: object) -> object:
    """The frame of ``here()`` called inside ``source``'s ``run([1, 2])``, as a user file."""
    path = tmp_path / f"user{len(list(tmp_path.iterdir()))}.py"  # linecache keeps each
    path.write_text(source)
    scope: dict[str, object] = {"here": lambda: sys._getframe(1), **names}
    exec(compile(source, str(path), "exec"), scope)
    return scope["run"]([1, 2])  # type: ignore[operator]


TRAIN = ("def train(loader):\n"
         "    for batch in loader:\n"
         "        return here()\n")


def test_the_epoch_loop_is_read_from_the_users_frames(tmp_path: Path) -> None:
    """The loops around the data loop, in the user's frames from the step outward: a
    ``range`` of names and arithmetic counts its epochs; a ``while``, a loop over other
    things makes the length unknown (0)."""
    from autofix.run.child import plan

    frame = _frame_in(tmp_path, TRAIN + "def run(loader):\n"
                      "    for epoch in range(1, n + 1):\n"
                      "        return train(loader)\n", n=3)
    loops = plan.enclosing_loops(frame)
    assert [(type(loop).__name__, loop.lineno) for loop, _ in loops] == [("For", 2),
                                                                          ("For", 5)]
    assert plan.hand_loop_total(range(30), frame) == 90
    frame = _frame_in(tmp_path, TRAIN + "def run(loader):\n"
                      "    for epoch in tqdm(range(n // 2)):\n"
                      "        return train(loader)\n", n=9, tqdm=iter)
    assert plan.hand_loop_total(range(30), frame) == 120
    frame = _frame_in(tmp_path, TRAIN + "def run(loader):\n"
                      "    while True:\n"
                      "        return train(loader)\n")
    assert plan.hand_loop_total(range(30), frame) == 0
    frame = _frame_in(tmp_path, TRAIN + "def run(loader):\n"
                      "    for fold in folds:\n"
                      "        return train(loader)\n", folds=[1])
    assert plan.hand_loop_total(range(30), frame) == 0


def test_the_trainer_and_keras_lengths() -> None:
    from types import SimpleNamespace

    from autofix.run.child import plan

    assert plan.trainer_total(SimpleNamespace(gradient_accumulation_steps=2),
                              SimpleNamespace(max_steps=45)) == 90  # one per micro-batch
    assert plan.trainer_total(SimpleNamespace(), SimpleNamespace(max_steps=-1)) == 0
    assert plan.keras_total({"steps": 30, "epochs": 3}) == 90
    assert plan.keras_total({"steps": None, "epochs": 3}) == 0
