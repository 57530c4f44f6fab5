"""What autofix says of a run, in the user's words: a failure with a specific hint has a
category (a script reading standard input), a field with nothing in it is not printed,
the run verdicts are one vocabulary the README documents, a fault a preflight check found
is said to be that check's in its commit, and a run line lists every commit made after
its run. Units on the functions and replayed sessions (fast), then the real CLI."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import git
import pytest
from rich.console import Console

from autofix.categories import UNKNOWN, get_category
from autofix.loop.diagnosis import diagnose
from autofix.reports.formats import html_report, markdown_report
from autofix.reports.terminal import print_summary, run_line
from autofix.types import (
    Diagnosis,
    ExceptionInfo,
    FixRecord,
    Frame,
    ProbeReport,
    RunOutcome,
    RunRecord,
    RunResult,
    SessionResult,
    Status,
)
from autofix.words import FIX_OUTCOMES, RUN_VERDICTS, run_verdict

from .conftest import ROOT, run_autofix
from .test_engine import LEARNING, TRAIN_LINE, Replay, course_trainer, healthy, repair, setup

Repo = Callable[[dict[str, str | Path]], git.Repo]


def plain(markup: str) -> str:
    """``markup`` as a console without colours prints it."""
    out = io.StringIO()
    Console(file=out, width=400, highlight=False).print(markup)
    return out.getvalue().rstrip("\n")


# -- standard input: a category, not "unknown" ----------------------------------------


def stdin_run(script: Path) -> RunResult:
    """A run whose script called ``input()`` with standard input closed, as the child
    reports it (the traceback saved in ``categories/examples/reads-stdin``)."""
    exc = ExceptionInfo("builtins.EOFError", "EOF when reading a line", (
        Frame(str(script), 5, "<module>", "num_train_epochs = ask_epochs()"),
        Frame(str(script), 2, "ask_epochs", 'return int(input("How many epochs? "))')))
    return RunResult(RunOutcome.FAILED, 1, 0.4, "How many epochs? ", 17,
                     ProbeReport(exception=exc))


def test_a_script_reading_stdin_has_its_category_and_hint(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    diag = diagnose(stdin_run(script), script)
    assert diag.category == "reads-stdin"
    assert diag.hint.startswith("the script reads standard input, which autofix closes; pass "
                                "values as arguments")
    assert (diag.line, diag.evidence) == (2, "EOFError: EOF when reading a line")
    assert "no category" not in get_category(diag.category).no_recipe


def test_another_eof_is_not_a_stdin_read(tmp_path: Path) -> None:
    """``pickle.load`` of an empty file raises EOFError too: not a question on stdin."""
    script = tmp_path / "train.py"
    exc = ExceptionInfo("builtins.EOFError", "Ran out of input",
                        (Frame(str(script), 3, "<module>", "state = pickle.load(f)"),))
    run = RunResult(RunOutcome.FAILED, 1, 0.4, "", 0, ProbeReport(exception=exc))
    assert diagnose(run, script).category != "reads-stdin"


def test_unknown_comes_with_its_own_hint_only(tmp_path: Path) -> None:
    """``unknown`` says autofix has no category: it never carries a specific hint (a
    failure with one has a category), so its hint is the category's and nothing derives
    another from the facts."""
    script = tmp_path / "train.py"
    exc = ExceptionInfo("mylib.OddError", "something odd",
                        (Frame(str(script), 3, "<module>", "run()"),))
    diag = diagnose(RunResult(RunOutcome.FAILED, 1, 0.4, "", 0, ProbeReport(exception=exc)),
                    script)
    assert diag.category == "unknown" and diag.hint == UNKNOWN.hint
    assert UNKNOWN.advise is None and UNKNOWN.advice is None and UNKNOWN.explain is None


# -- empty fields ----------------------------------------------------------------------


@pytest.mark.parametrize(("tail", "said"), [("", "killed after 3 s"),
                                             ("epoch 1\n", "killed after 3 s; last output: "
                                                           "epoch 1")])
def test_a_timeout_names_its_last_output_only_when_there_was_one(tmp_path: Path, tail: str,
                                                                said: str) -> None:
    run = RunResult(RunOutcome.TIMEOUT, None, 3.2, tail, len(tail), ProbeReport())
    diag = diagnose(run, tmp_path / "train.py")
    assert diag.evidence == said
    silent = RunResult(RunOutcome.FAILED, 1, 0.2, "", 0, ProbeReport())
    assert diagnose(silent, tmp_path / "train.py").evidence == "exit code 1"


def test_a_run_line_leaves_out_what_it_does_not_know() -> None:
    timeout = Diagnosis(category="timeout", evidence="killed after 3 s")
    line = plain(run_line(RunRecord(1, "timeout", "timeout", "killed after 3 s", 3.2), timeout))
    assert line == "run 1  timeout  killed after 3 s  → no fix  3.2s"
    quiet = plain(run_line(RunRecord(2, "ok", "", "", 0.4), None))
    assert quiet == "run 2  ran  0.4s"


def session(runs: list[RunRecord], fixes: list[FixRecord],
            status: Status = Status.FIXED) -> SessionResult:
    return SessionResult(status, "autofix/train", "the script trains after 3 fixes",
                         runs=runs, fixes=fixes, base="b" * 40, diff_stat=" train.py | 6 +-\n",
                         trained=True)


def test_the_reports_print_no_empty_field() -> None:
    """A run with no evidence, an evaluation of timings only: no empty cell, no label with
    nothing after it."""
    runs = [RunRecord(1, "timeout", "timeout", "killed after 3 s", 3.0),
            RunRecord(2, "ok", "", "", 0.4, metrics={"eval_runtime": 0.5})]
    result = session(runs, [], Status.GAVE_UP)
    markdown = markdown_report(result)
    assert "| 2 | ok | - | - | 0 | 0.4 | - | - |" in markdown
    assert "Evaluation of the verifying run" not in markdown
    assert "<td></td>" not in html_report(result)
    out = io.StringIO()
    print_summary(Console(file=out, width=200, highlight=False), result)
    assert not re.search(r": *$", out.getvalue(), re.M), out.getvalue()


# -- the run verdicts ------------------------------------------------------------------


def test_the_readme_documents_the_run_verdicts() -> None:
    """The README's table of run verdicts is the vocabulary of :mod:`autofix.words`, word
    for word."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- run-verdicts:start -->\n(.*?)<!-- run-verdicts:end -->", readme,
                      re.S)
    assert block is not None
    rows = dict(re.findall(r"^\| `(\w+)` \| (.*) \|$", block.group(1), re.M))
    assert rows == RUN_VERDICTS
    for outcome, meaning in FIX_OUTCOMES.items():
        assert f"`{outcome}` ({meaning})" in block.group(1)


@pytest.mark.parametrize(("outcome", "steps", "word"), [
    ("budget", 60, "trains"), ("ok", 40, "trained"), ("ok", 0, "ran")])
def test_a_healthy_run_line_says_a_documented_verdict(outcome: str, steps: int,
                                                       word: str) -> None:
    record = RunRecord(1, outcome, "", "", 2.0, steps=[(s, 1.0) for s in range(1, steps + 1)])
    assert run_verdict(outcome, steps) == word and word in RUN_VERDICTS
    assert plain(run_line(record, None)).split("  ")[1] == word


# -- preflight findings and several commits in one run ---------------------------------


def _raised(script: Path, type_: str, message: str, lib: Frame) -> ExceptionInfo:
    return ExceptionInfo(f"builtins.{type_}", message,
                         (Frame(str(script), TRAIN_LINE, "<module>", "trainer.train()"), lib))


def preflight_run(script: Path) -> RunResult:
    """Run 1 of the course script as the child reports it: three preflight checks failed
    at ``trainer.train()`` and the run raised the first one's error there."""
    site = "/venv/site-packages/"
    raw = _raised(script, "ValueError", "You must specify exactly one of input_ids or "
                  "inputs_embeds", Frame(site + "transformers/models/bert/modeling_bert.py",
                                         641, "forward", "raise ValueError"))
    ragged = _raised(script, "ValueError", "expected sequence of length 21 at dim 1 (got 19)",
                     Frame(site + "transformers/data/data_collator.py", 160,
                           "torch_default_data_collator", "batch[k] = torch.tensor(...)"))
    labels = _raised(script, "IndexError", "Target 2 is out of bounds.",
                     Frame(site + "torch/nn/functional.py", 3555, "cross_entropy",
                           "return torch._C._nn.cross_entropy_loss("))
    report = ProbeReport(
        versions={"transformers": "5.24.0", "torch": "2.13.0"}, exception=raw,
        trainers=[course_trainer(columns=("premise", "hypothesis", "label"))],
        preflight=[("forward", raw), ("collate-tokenized", ragged), ("labels", labels)])
    return RunResult(RunOutcome.FAILED, 1, 0.5, "ValueError: ...\n", 20, report)


@pytest.fixture(scope="module")
def preflight_session(tmp_path_factory: pytest.TempPathFactory
                      ) -> tuple[git.Repo, SessionResult]:
    repo, case = setup(tmp_path_factory.mktemp("preflight"))
    result = repair(case, runner=Replay(preflight_run(case.script.resolve()),
                                        healthy(LEARNING)))
    return repo, result


def test_each_preflight_finding_names_its_check_in_its_commit(
        preflight_session: tuple[git.Repo, SessionResult]) -> None:
    repo, result = preflight_session
    assert result.status is Status.FIXED, result.reason
    messages = {f.category: str(repo.commit(f.commit).message) for f in result.fixes}
    assert list(messages) == ["raw-dataset", "ragged-batch", "label-out-of-range"]
    for category, check in (("raw-dataset", "forward"), ("ragged-batch", "collate-tokenized"),
                            ("label-out-of-range", "labels")):
        message = messages[category]
        assert f"Run 1's preflight check '{check}' found, before the first training step:" \
            in message, message
        assert f"at train.py:{TRAIN_LINE}, where the check ran: trainer.train()" in message
        assert message.count("found by the preflight check") == 1, message
        assert "Run 1 failed with" not in message


def test_a_run_line_lists_every_commit_made_after_its_run(
        preflight_session: tuple[git.Repo, SessionResult]) -> None:
    _, result = preflight_session
    first = result.runs[0]
    assert first.commits == [f.commit for f in result.fixes] and len(first.commits) == 3
    line = plain(run_line(first, Diagnosis(category=first.category, evidence=first.evidence,
                                           file="train.py", line=TRAIN_LINE)))
    pairs = ", ".join(f"{f.recipe} {f.commit[:8]}" for f in result.fixes)
    assert f"→ {pairs}  " in line, line
    markdown = markdown_report(result)
    assert all(f"{f.recipe} {f.commit[:8]}" in markdown for f in result.fixes)


# -- through the real CLI ----------------------------------------------------------------

SILENT_HANG = "import time\n\ntime.sleep(600)\n"


@pytest.mark.process
def test_the_cli_gives_stdin_its_category_and_a_silent_timeout_no_empty_field(
        scratch_repo: Repo) -> None:
    repo = scratch_repo({"ask.py": ROOT / "tests" / "scripts" / "reads_stdin.py",
                         "hang.py": SILENT_HANG})
    cwd = Path(str(repo.working_tree_dir))
    asked = run_autofix(["ask.py", "--timeout", "60"], cwd)
    assert asked.returncode == 1, asked.stdout + asked.stderr
    assert "run 1  reads-stdin  EOFError: EOF when reading a line  ask.py:2  → no fix" \
        in asked.stdout
    assert "no category" not in asked.stdout
    assert "hint: the script reads standard input, which autofix closes" in asked.stdout
    hung = run_autofix(["hang.py", "--timeout", "3", "--report", "r.md"], cwd)
    assert hung.returncode == 1, hung.stdout + hung.stderr
    assert re.search(r"run 1  timeout  killed after 3 s  → no fix  \d", hung.stdout)
    assert "last output" not in hung.stdout + (cwd / "r.md").read_text()
