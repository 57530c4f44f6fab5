"""Wording from one source of truth (issue 27, point 4): the stall rule's step and window
from the constants of ``autofix/run/child/symptoms.py`` in ``fix -h``, the README and the
report's legend; "fixed" only when the last run trained; plurals; the restart of run 1
after the API check explained on its line; help metavars; ``undo`` on a branch autofix
did not make. Engine sessions are replayed (no process), the CLI checks start autofix
but train nothing."""

from __future__ import annotations

import io
import json
import re
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from autofix.loop import engine
from autofix.reports.formats import html_report, session_json, status_label
from autofix.reports.terminal import ConsoleObserver, print_summary
from autofix.run.child.symptoms import MIN_STEPS, STALL_RULE, WINDOW
from autofix.types import Diagnosis, ProbeReport, RunOutcome, RunResult, Status
from autofix.words import NOTHING_TRAINED, plural

from .conftest import AUTOFIX, ROOT, make_repo, run_autofix
from .test_engine import LEARNING, VERSIONS, Replay, healthy, installed, no_drift, ragged_run
from .test_engine import repair as replay_repair
from .test_engine import setup as engine_setup


def _text(result: object) -> str:
    out = io.StringIO()
    print_summary(Console(file=out, width=200, highlight=False), result)  # type: ignore[arg-type]
    return out.getvalue()


def ran_to_the_end() -> RunResult:
    """A run that ended by itself, exit 0, without one optimizer step."""
    return RunResult(RunOutcome.OK, 0, 0.3, "done\n", 5, ProbeReport(versions=VERSIONS))


def test_the_stall_rule_has_one_wording() -> None:
    assert STALL_RULE == f"judged from step {MIN_STEPS} on, over the last {WINDOW} steps"
    readme = (ROOT / "README.md").read_text()
    how = (ROOT / "docs" / "how-it-works.md").read_text()
    assert STALL_RULE in readme and STALL_RULE in how
    assert f"No verdict before step {MIN_STEPS}." in how
    for page in (readme, how):  # no other step is named as the first verdict
        for found in re.findall(r"judged from step (\d+)", page):
            assert int(found) == MIN_STEPS
    done = subprocess.run([*AUTOFIX, "fix", "-h"], capture_output=True, text=True,
                          env={"COLUMNS": "1000", "PATH": "/usr/bin:/bin"})
    assert STALL_RULE in " ".join(done.stdout.split())
    result = replay_result()
    assert f"a stall is {STALL_RULE}" in html_report(result)


def replay_result() -> object:
    from .test_reports import _result

    return _result()


def test_fixed_only_when_the_last_run_trained(tmp_path: Path) -> None:
    _, case = engine_setup(tmp_path / "a")
    result = replay_repair(case, runner=Replay(ragged_run(case.script), healthy(LEARNING)))
    assert result.status is Status.FIXED and result.trained
    assert result.reason == "the script trains after 1 fix"
    assert status_label(result) == "fixed" and _text(result).startswith("\nfixed: ")

    _, case = engine_setup(tmp_path / "b")
    result = replay_repair(case, runner=Replay(ragged_run(case.script), ran_to_the_end()))
    assert result.status is Status.FIXED and not result.trained
    assert status_label(result) == "ran"
    assert result.reason.startswith("after 1 fix the script runs to its end without an "
                                    "error, but nothing trained")
    assert "trains after" not in result.reason and "fixed:" not in _text(result)
    assert session_json(result)["trained"] is False


def test_a_script_that_trains_nothing_is_clean_and_says_so(tmp_path: Path) -> None:
    _, case = engine_setup(tmp_path)
    result = replay_repair(case, runner=Replay(ran_to_the_end()))
    assert result.status is Status.CLEAN and not result.trained
    assert NOTHING_TRAINED in result.reason and "training was not checked" in result.reason


@pytest.mark.process
def test_an_empty_file_ends_clean_with_the_word_that_nothing_trained(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"empty.py": ""})
    done = run_autofix(["empty.py", "--report", "../r.json"], Path(str(repo.working_tree_dir)))
    assert done.returncode == 0, done.stderr
    assert "clean: the script ran to its end without an error, but nothing trained" \
        in done.stdout
    assert json.loads((tmp_path / "r.json").read_text())["trained"] is False


def test_plurals() -> None:
    assert [plural(n, "fix") for n in (0, 1, 2)] == ["0 fixes", "1 fix", "2 fixes"]
    assert plural(1, "run") == "1 run" and plural(3, "step") == "3 steps"
    assert plural(2, "branch") == "2 branches"
    words = r"\b(fix|commit|finding|recipe|branch|run|step|file|script)\((s|es)\)"
    for path in sorted((ROOT / "autofix").rglob("*.py")):  # no "fix(es)" left in any output
        assert not re.search(words, path.read_text()), path


def test_two_fixes_read_two_fixes(tmp_path: Path) -> None:
    from .test_engine import raw_dataset_run

    _, case = engine_setup(tmp_path)
    result = replay_repair(case, runner=Replay(raw_dataset_run(case.script),
                                               ragged_run(case.script), healthy(LEARNING)))
    assert len(result.fixes) == 2 and result.reason == "the script trains after 2 fixes"


class _Notes(ConsoleObserver):
    def __init__(self) -> None:
        super().__init__(Console(file=io.StringIO(), width=200), "train.py", 60)
        self.notes: list[tuple[int, str]] = []

    def run_started(self, n: int, note: str) -> None:
        self.notes.append((n, note))
        super().run_started(n, note)


def test_the_restart_of_run_1_after_the_api_check_says_why(tmp_path: Path) -> None:
    source = "from transformers import AdamW\nprint('ok')\n"
    _, case = engine_setup(tmp_path, source=source)

    def drift(source: str, python: str, versions: dict[str, str], **where: object
              ) -> list[Diagnosis]:
        return [Diagnosis("api-drift", "ImportError: cannot import name 'AdamW' from "
                          "'transformers'", line=1, line_text=source.splitlines()[0],
                          via="api-preflight")]

    observer = _Notes()
    result = engine.repair(case.script, case.settings, observer=observer,
                           runner=Replay(ran_to_the_end(), healthy(LEARNING)),
                           api_check=drift, versions=installed)
    assert [n for n, _ in observer.notes] == [1, 1]
    assert observer.notes[0][1] == ""
    assert observer.notes[1][1] == ("restarted: the API check found drift, 1 fix committed "
                                    "before the first run")
    lines = observer.console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert "run 1: train.py: restarted: the API check found drift" in lines[1]
    assert [r.n for r in result.runs] == [1] and result.fixes[0].run == 0
    assert result.reason == "the script trains after 1 fix"
    page = html_report(result)
    assert "<tr><td>before the first run</td><td>API check</td><td>api-drift</td>" in page
    assert "run 0" not in page and "before the first run" in page


def test_no_drift_replays_keep_their_first_run_note(tmp_path: Path) -> None:
    _, case = engine_setup(tmp_path)
    observer = _Notes()
    engine.repair(case.script, case.settings, observer=observer, api_check=no_drift,
                  versions=installed, runner=Replay(healthy(LEARNING)))
    assert observer.notes == [(1, "")]


@pytest.mark.process
@pytest.mark.parametrize("command", ["fix", "batch"])
def test_help_metavars_say_what_goes_there(command: str) -> None:
    done = subprocess.run([*AUTOFIX, command, "-h"], capture_output=True, text=True,
                          env={"COLUMNS": "120", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0
    help_text = done.stdout
    for typer_word in ("<str>", "<int", "<float", "<list", "<path>", "{", "TEXT", "INTEGER"):
        assert typer_word not in help_text, typer_word
    assert "--python PATH" in help_text and "--report PATH" in help_text
    assert "--launcher <torchrun|accelerate>" in help_text
    if command == "fix":
        assert "Usage: autofix fix [OPTIONS] SCRIPT [-- SCRIPT_ARGS...]" in help_text
        assert "--branch NAME" in help_text and "--clean-tree" in help_text
    else:
        assert "Usage: autofix batch [OPTIONS] PATHS..." in help_text
        for shown in ("--jobs N", "--backend <thread|ray>", "--ship <auto|shared|upload>",
                      "--memory-mb MIB", "--pass-env NAME", "--branch-prefix PREFIX"):
            assert shown in help_text, shown


@pytest.mark.process
def test_undo_on_a_branch_autofix_did_not_make_says_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": "print(1)\n"})
    done = run_autofix(["undo", "main"], Path(str(repo.working_tree_dir)))
    assert done.returncode == 2
    assert "error: main is not an autofix branch" in done.stderr
    assert "checked out" not in done.stderr


def test_a_drift_commit_subject_says_its_change() -> None:
    """The drift-keyword fixes of one session each name their keyword in the subject (the
    recipe's title is the same for all of them); a long clause falls back to the title."""
    from autofix.loop.messages import SUBJECT_WIDTH, subject
    from autofix.toolkit.discovery import all_recipes
    from autofix.types import Applied

    drift = next(r for r in all_recipes() if r.id == "drift-keyword")
    moved = Applied("", "packing=False moved from the trainer into SFTConfig(packing=...); "
                        "dropped packing= from SFTTrainer(...)")
    assert subject(drift, moved) == "packing=False moved from the trainer into " \
                                    "SFTConfig(packing=...)"
    renamed = Applied("", "evaluation_strategy= -> eval_strategy= (the installed "
                          "TrainingArguments takes eval_strategy=)")
    assert subject(drift, renamed) == "evaluation_strategy= -> eval_strategy="
    assert subject(drift, Applied("", "x" * (SUBJECT_WIDTH + 1))) == drift.title
    other = next(r for r in all_recipes() if r.id == "lm-collator")
    assert subject(other, moved) == other.title  # the title, unless a recipe asks
