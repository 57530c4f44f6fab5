"""The runner and probe on real child processes (no ML libraries needed here)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from autofix.run.runner import OUTPUT_TAIL_BYTES, RunSpec, run_script, target_versions
from autofix.settings import Settings
from autofix.types import RunOutcome

from .conftest import TEST_SCRIPTS

#: These start processes (the CLI, a child, a sandbox) and train nothing.
pytestmark = pytest.mark.process


def spec_for(script: Path, cwd: Path, **kw: object) -> RunSpec:
    settings = Settings(python=sys.executable, cwd=cwd, **kw)  # type: ignore[arg-type]
    return RunSpec(script, settings)


def test_child_sees_user_path_args_and_cwd_and_patched_lines(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("# the user's file: never executed as is\n")
    source = (TEST_SCRIPTS / "echo_context.py").read_text()
    cwd = tmp_path / "work"
    cwd.mkdir()
    result = run_script(spec_for(script, cwd, args=("--epochs", "1")), source)
    seen = json.loads(next(ln for ln in result.output_tail.splitlines() if ln.startswith("{")))
    assert seen == {"argv": [str(script), "--epochs", "1"], "file": str(script),
                    "cwd": str(cwd), "name": "__main__"}
    assert result.outcome is RunOutcome.FAILED and result.returncode == 1
    exc = result.probe.exception
    assert exc is not None and exc.type == "builtins.ValueError"
    assert exc.message == "boom at line 7"
    # the traceback points at the patched source's line, shown from the patched text
    assert (exc.frames[-1].file, exc.frames[-1].line) == (str(script), 7)
    assert exc.frames[-1].text == 'raise ValueError("boom at line 7")'
    assert f'File "{script}", line 7' in result.output_tail
    assert "bootstrap.py" not in result.output_tail
    assert script.read_text() == "# the user's file: never executed as is\n"


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    script = tmp_path / "hang.py"
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    result = run_script(spec_for(script, tmp_path, args=(str(pid_file),), timeout=3.0),
                        (TEST_SCRIPTS / "hang_with_child.py").read_text())
    assert result.outcome is RunOutcome.TIMEOUT
    assert time.monotonic() - started < 3.0 + 10
    child = int(pid_file.read_text())
    time.sleep(0.2)
    assert not alive(child)  # the grandchild is gone too


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def test_output_is_bounded_but_counted(tmp_path: Path) -> None:
    result = run_script(spec_for(tmp_path / "loud.py", tmp_path),
                        (TEST_SCRIPTS / "loud.py").read_text())
    assert result.output_bytes > 20 * 1024 * 1024
    assert len(result.output_tail.encode()) <= OUTPUT_TAIL_BYTES
    assert "RuntimeError: done printing" in result.output_tail
    assert result.probe.exception is not None


def test_stdin_is_closed_so_input_gets_eof(tmp_path: Path) -> None:
    result = run_script(spec_for(tmp_path / "ask.py", tmp_path, timeout=30.0),
                        (TEST_SCRIPTS / "reads_stdin.py").read_text())
    assert result.outcome is RunOutcome.FAILED
    assert result.probe.exception is not None
    assert result.probe.exception.type == "builtins.EOFError"


def test_last_line_callback_sees_progress(tmp_path: Path) -> None:
    lines: list[str] = []
    source = "import time\nfor i in range(3):\n    print(f'step {i}', flush=True)\n"
    result = run_script(spec_for(tmp_path / "s.py", tmp_path), source, lines.append)
    assert result.outcome is RunOutcome.OK
    assert lines and lines[-1] == "step 2"


def test_syntax_error_reported_with_location(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    result = run_script(spec_for(script, tmp_path), (TEST_SCRIPTS / "syntax_error.py").read_text())
    exc = result.probe.exception
    assert exc is not None and exc.short_type == "SyntaxError"
    assert (exc.frames[-1].file, exc.frames[-1].line) == (str(script), 4)


def test_target_versions_of_this_interpreter() -> None:
    versions = target_versions(sys.executable)
    assert versions["python"] == "%d.%d.%d" % sys.version_info[:3]
    assert versions["transformers"].startswith("5.")


def test_step_tail_reports_rank_0_only(tmp_path: Path) -> None:
    """A distributed launch writes every rank's steps to the probe file: the live step
    counter follows rank 0 (one progress line per step, not one per rank), and a
    single-process run (no rank) as before; a torn last line waits for the next poll."""
    from autofix.run.runner import _StepTail

    probe = tmp_path / "probe.jsonl"
    seen: list[tuple[int, float | None]] = []
    tail = _StepTail(probe, lambda step, loss, total: seen.append((step, loss)))
    lines = [{"event": "step", "rank": 1, "step": 1, "loss": 1.5},
             {"event": "step", "rank": 0, "step": 1, "loss": 1.25},
             {"event": "step", "step": 2, "loss": None},
             {"event": "exit", "rank": 0, "code": 0}]
    probe.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"event": "st')
    tail.poll()
    assert seen == [(1, 1.25), (2, None)]
    with probe.open("a") as fh:
        fh.write('ep", "rank": 0, "step": 3, "loss": 0.5}\n')
    tail.poll()
    assert seen[-1] == (3, 0.5)


def test_the_version_check_imports_nothing_of_the_folder_autofix_runs_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `python -c` puts its folder first on sys.path: a json.py there would run outside
    # any sandbox, before the first run
    (tmp_path / "json.py").write_text("raise SystemExit('the folder was imported')\n")
    monkeypatch.chdir(tmp_path)
    assert target_versions(sys.executable)["python"].count(".") == 2
