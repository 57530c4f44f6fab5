"""Console output (rich) and the ``--report`` JSON file."""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.padding import Padding
from rich.status import Status as Spinner
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from autofix.reports.formats import (
    covered_text,
    metrics_text,
    sparkline,
    status_label,
    training_runs,
    verifying_run,
)
from autofix.run.child.symptoms import extended_budget
from autofix.types import Diagnosis, DirtyFile, MergeAdvice, RunRecord, SessionResult, Status
from autofix.words import plural, run_verdict


def print_table(console: Console, table: Table) -> None:
    """Print ``table`` so that it fits: on a terminal at the terminal's width (its text
    columns wrap), elsewhere (a pipe, a log) at its natural width, one line per row, so
    nothing is squeezed or wrapped at an assumed 80 columns."""
    if console.is_terminal:
        console.print(table)
        return
    natural = Measurement.get(console, console.options.update(max_width=10_000), table)
    saved = console.width
    console.width = max(saved, natural.maximum)
    try:
        console.print(table)
    finally:
        console.width = saved


_STATUS_STYLE = {Status.FIXED: "bold green", Status.CLEAN: "green",
                 Status.FINDINGS: "bold yellow", Status.GAVE_UP: "bold yellow",
                 Status.ERROR: "bold red"}


class ConsoleObserver:
    """Says what autofix is doing while a run goes on: on a terminal a status line with
    autofix's own step counter from the probe ("run 3: verifying the fixes, step 23,
    stopping at step 60 of the script's 150"), off a terminal one line per run start and
    end and one per 10 steps; then one line per run: number, category, evidence, recipe,
    commit, seconds."""

    def __init__(self, console: Console, script_name: str, max_steps: int = 0) -> None:
        self.console = console
        self.script_name = script_name
        self.max_steps = max_steps
        self.spinner: Spinner | None = None
        self.n = 0
        self.doing = ""
        self.steps = 0
        self.loss: float | None = None
        self.script_total = 0  # the script's own length in steps, from the probe (0: unknown)
        self.last_line = ""

    def run_started(self, n: int, note: str) -> None:
        self.n, self.steps, self.loss, self.script_total, self.last_line = n, 0, None, 0, ""
        self.doing = note or ("running the script" if n == 1 else "verifying the fixes")
        if self.console.is_terminal:
            self.spinner = self.console.status(escape(self.status_text()))
            self.spinner.start()
        else:
            self.console.print(f"run {n}: {escape(self.script_name)}: {escape(self.doing)}"
                               f"{self._budget()}")

    def _budget(self) -> str:
        """The budget in force: ``--max-steps``, or the extended budget once the run is past
        it (an unclear run trains on before its verdict), or the script's own end when its
        length, read by the probe from the trainer or the loop, is shorter than that."""
        if not self.max_steps:
            return ", to the script's end (--full)"
        limit = self.max_steps
        if self.steps > limit:
            limit = extended_budget(limit)
            extended = f" (extended from {self.max_steps}: no verdict yet)"
        else:
            extended = ""
        known = self.script_total if self.script_total >= self.steps else 0  # never contradicted
        if known and known <= limit:
            return f", to the script's end at step {known} (budget {limit})"
        total = f" of the script's {known}" if known else ""
        return f", stopping at step {limit}{total}{extended}"

    def status_text(self) -> str:
        """The status line: what autofix does, its step counter, the script's last line."""
        step = f", step {self.steps}" if self.steps else ""
        loss = f" (loss {self.loss:.3f})" if self.loss is not None else ""
        text = f"run {self.n}: {self.doing}{step}{loss}{self._budget()}"
        if self.last_line:
            text += f"  [dim]{escape(self.last_line[-60:])}[/dim]"
        return text

    def output_line(self, line: str) -> None:
        self.last_line = line
        if self.spinner is not None:
            self.spinner.update(self.status_text())

    def step(self, n: int, loss: float | None, total: int = 0) -> None:
        """One optimizer step recorded by the probe (called live, from the runner), with
        the script's own length in steps as the probe read it (0: unknown)."""
        self.steps, self.loss, self.script_total = n, loss, total
        if self.spinner is not None:
            self.spinner.update(self.status_text())
        elif n % 10 == 0:
            shown = f"{loss:.4f}" if loss is not None else "n/a"
            self.console.print(f"run {self.n}: step {n}, loss {shown}{self._budget()}")

    def run_finished(self, record: RunRecord, diagnosis: Diagnosis | None) -> None:
        if self.spinner is not None:
            self.spinner.stop()
            self.spinner = None
        self.console.print(run_line(record, diagnosis))

    def close(self) -> None:
        if self.spinner is not None:
            self.spinner.stop()
            self.spinner = None



def run_line(record: RunRecord, diagnosis: Diagnosis | None) -> str:
    """One run as rich markup: ``run N``, its verdict (a word of
    :data:`autofix.words.RUN_VERDICTS`, or the category of its fault), the evidence, the
    failing line, each fix committed after it (``→ recipe commit``, one per fix), or the
    candidate not kept, or ``→ no fix``, and its seconds. A field with nothing to say is
    left out, never printed empty."""
    if diagnosis is None:
        verdict = f"[green]{run_verdict(record.outcome, len(record.steps))}[/green]"
        evidence, where = record.evidence, ""
    else:
        via = f" (via {diagnosis.via})" if diagnosis.via else ""
        verdict = f"[bold]{escape(diagnosis.category)}[/bold]{escape(via)}"
        evidence = diagnosis.evidence
        where = f"{Path(diagnosis.file).name}:{diagnosis.line}" if diagnosis.line else ""
    fields = [f"run {record.n}", verdict]
    if evidence:
        fields.append(escape(clipped(evidence)))
    if where:
        fields.append(f"[dim]{escape(where)}[/dim]")
    fix = fixes_text(record)
    if fix or diagnosis is not None:
        fields.append(fix or "→ [yellow]no fix[/yellow]")
    fields.append(f"{record.seconds:.1f}s")
    return "  ".join(fields)


def fixes_text(record: RunRecord) -> str:
    """What was done after ``record``'s run, as rich markup: each fix committed with its
    commit (``→ a 1a2b3c4d, b 5e6f7a8b``), a candidate tried and not kept, or "" when
    nothing was tried."""
    recipes = record.recipe.split(", ") if record.recipe else []
    commits = record.commits or ([record.commit] if record.commit else [])
    if commits and len(commits) == len(recipes):
        return "→ " + ", ".join(f"[cyan]{escape(r)}[/cyan] [magenta]{c[:8]}[/magenta]"
                                for r, c in zip(recipes, commits, strict=True))
    if commits:  # recipes and commits that do not pair up: each said once
        return (f"→ [cyan]{escape(record.recipe)}[/cyan] "
                + " ".join(f"[magenta]{c[:8]}[/magenta]" for c in commits))
    if recipes:
        return f"→ [yellow]{escape(record.recipe)} not kept[/yellow]"
    return ""


def clipped(text: str, width: int = 120) -> str:
    """``text`` cut at a word to at most ``width`` characters, ending in "…" when cut (the
    run line; the whole message is in the summary and the report)."""
    return textwrap.shorten(text, width, placeholder=" …", break_on_hyphens=False,
                                       break_long_words=False) if len(text) > width else text


def said_in(hint: str, reason: str) -> bool:
    """Whether ``reason`` already says what ``hint`` says: the hint's first clause (up to
    its first " (", ": " or "; ") appears in it, as when a recipe's decline names the same
    change as the category's advice ("transformers renamed evaluation_strategy to
    eval_strategy")."""
    lead = re.split(r" \(|: |; ", hint, maxsplit=1)[0].strip()
    return len(lead) >= 20 and lead in reason


def print_hint(console: Console, text: str, indent: int = 2, label: str = "hint: ") -> None:
    """``hint: text``: on a terminal wrapped to its width under an indent, elsewhere (a
    pipe, a log) one line, never wrapped at an assumed width."""
    line = Text(" " * indent + label + text)
    if console.is_terminal:
        console.print(Padding(Text(label + text), (0, 0, 0, indent)), soft_wrap=False)
    else:
        console.print(line, soft_wrap=True)


def print_tree_state(console: Console, dirty: list[DirtyFile], scripts: list[str]) -> None:
    """What autofix does with each uncommitted file, said before the first run: the
    script is run as it is and snapshotted on the branch; other files are read as they
    are and never committed (unless a fix edits one: then its snapshot comes first)."""
    if not dirty:
        return
    def inside(path: str) -> bool:
        return any(s == path or s.startswith(path.rstrip("/") + "/") for s in scripts)

    own = [d for d in dirty if inside(d.path)]
    other = [d for d in dirty if not inside(d.path)]
    for d in own:
        print_hint(console, f"{d.path} ({d.state}) is run as you have it; the branch's first "
                            "commit will be a snapshot of it, the fixes follow on top",
                   indent=0, label="uncommitted: ")
    if other:
        shown = ", ".join(f"{d.path} ({d.state})" for d in other[:5])
        more = f" and {len(other) - 5} more" if len(other) > 5 else ""
        print_hint(console, f"{shown}{more}: read by the runs as they are, never committed "
                            "(unless a fix edits one: then its snapshot comes first)",
                   indent=0, label="uncommitted: ")
    console.print("  your working tree and index stay as they are (--clean-tree refuses to "
                  "start with uncommitted changes)", soft_wrap=not console.is_terminal)


def print_summary(console: Console, result: SessionResult, repo_dir: str = "",
                  merge: MergeAdvice | None = None) -> None:
    """The final summary: status, reason, each fix, a loss sparkline per training run, the
    branch's diff stat, how to see the whole diff and how to merge it (a dry run prints
    the diffs). ``merge`` gives the commands that work for the working tree as it is
    (default: a plain ``git merge BRANCH``)."""
    style = _STATUS_STYLE[result.status]
    label = status_label(result)
    if result.dry_run:
        label += " (dry run: nothing committed)"
    console.print(f"\n[{style}]{label}[/{style}]: {escape(result.reason)}")
    for fix in result.fixes:
        sha = "dry-run " if result.dry_run else fix.commit[:8]
        where = f"{fix.file}:{fix.line}" if fix.line else fix.file
        console.print("  ".join(part for part in (
            f"  {sha}", f"[bold]{fix.category}[/bold]", escape(fix.summary),
            f"[dim]{escape(where)}[/dim]" if where else "") if part))
    for finding in result.findings:  # not failures: what a person should know (issue 8)
        said = f": {escape(finding.evidence)}" if finding.evidence else ""
        console.print(f"  finding [bold]{finding.kind}[/bold]{said}")
    diag = result.last_diagnosis
    if diag is not None and result.status is not Status.FIXED:
        for line in diag.details:
            console.print(f"    [dim]{escape(line)}[/dim]")
        if diag.hint and not said_in(diag.hint, result.reason):
            print_hint(console, diag.hint)
    for dropped in result.dropped:
        console.print(f"  [yellow]dropped[/yellow] {dropped.commit[:8]}  {dropped.recipe}: "
                      f"{escape(dropped.reason)}")
    for warning in result.warnings:
        console.print(f"  [yellow]warning:[/yellow] {escape(warning)}")
    for run in training_runs(result):
        losses = [v for _, v in run.steps if v is not None]
        finite = [v for v in losses if math.isfinite(v)]
        if finite:
            console.print(f"  run {run.n} loss [cyan]{sparkline(losses)}[/cyan] "
                          f"{finite[0]:.3f} → {finite[-1]:.3f} "
                          f"(first → last of {plural(len(run.steps), 'step')})")
    verifying = verifying_run(result)
    if verifying is not None and metrics_text(verifying.metrics):
        at = f", step {verifying.eval_step}" if verifying.eval_step else ""
        console.print(f"  evaluation (run {verifying.n}{at}): "
                      f"{escape(metrics_text(verifying.metrics))}")
    if result.runs and covered_text(result.runs[-1]):
        console.print(f"  covered (run {result.runs[-1].n}): "
                      f"{escape(covered_text(result.runs[-1]))}")
    prefix = f"git -C {repo_dir} " if repo_dir else "git "
    if result.dry_run:
        for fix in result.fixes:
            console.print(f"\n[bold]{escape(fix.summary)}[/bold] "
                          f"({escape(fix_origin(result, fix.run))})")
            console.print(Syntax(fix.diff, "diff", theme="ansi_dark", background_color="default"))
        if result.diff_stat:
            console.print(f"\n{escape(result.diff_stat.rstrip())}")
        return
    if not result.diff_stat:
        return
    if result.earlier_fixes and not result.fixes:
        console.print(f"\nThe branch {result.branch} already holds "
                      f"{plural(result.earlier_fixes, 'autofix commit')} from earlier "
                      f"sessions (`autofix log {result.branch}`).")
    console.print(f"\n{escape(result.diff_stat.rstrip())}")
    console.print(f"Whole diff: [bold]{prefix}diff {result.base[:8]}..{result.branch}[/bold]"
                  f"   commits: [bold]autofix log {result.branch}[/bold]")
    if result.mergeable or (result.status is Status.FIXED and not result.interrupted):
        _print_merge(console, result.branch, prefix, merge)
    elif result.fixes:  # gave up or interrupted: the branch does not train yet
        console.print("Partial fixes: the script does not train yet; do not merge as is.")


def _print_merge(console: Console, branch: str, prefix: str, merge: MergeAdvice | None) -> None:
    """The merge commands that work for the working tree as it is (never one that fails:
    a plain ``git merge`` refuses to overwrite the uncommitted files the branch changes)."""
    if merge is None or not merge.blocking:
        console.print(f"merge: [bold]{escape(prefix)}merge {escape(branch)}[/bold]")
        return
    files = ", ".join(merge.blocking)
    if merge.edited_since:
        edited = ", ".join(merge.edited_since)
        print_hint(console, f"you changed {edited} after autofix ran it; commit your "
                            f"changes first, then {prefix}merge {branch} (git shows where "
                            "both changed a line)", indent=0, label="merge: ")
        return
    print_hint(console, f"the branch holds your uncommitted edits of {files} (its first "
                        f"commit snapshots them), so a plain `git merge {branch}` would "
                        "refuse to overwrite them. To merge the commits:", indent=0,
               label="merge: ")
    console.print(f"    [bold]{escape(merge.merge)}[/bold]")
    console.print(f"  or take the fixed files without the history: "
                  f"[bold]{escape(merge.take)}[/bold]")


def fix_origin(result: SessionResult, n: int) -> str:
    """Where a fix's evidence comes from: ``run N: <its evidence>``, or for a fix made
    before the first run (``n == 0``, the API check) ``before the first run: ...``."""
    if n:
        found = next((r.evidence for r in result.runs if r.n == n), "")
        return f"run {n}: {found}" if found else f"run {n}"
    evidence = next((f.evidence for f in result.fixes if f.run == 0 and f.evidence), "")
    return f"before the first run: {evidence}" if evidence else "before the first run"


def write_report(path: Path, document: dict[str, Any]) -> None:
    """Write the JSON report (UTF-8, indented). Raises ``OSError`` when it cannot."""
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
