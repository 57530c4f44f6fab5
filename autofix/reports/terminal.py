"""Console output (rich) and the ``--report`` JSON file."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.status import Status as Spinner
from rich.syntax import Syntax

from autofix.reports.formats import sparkline, training_runs
from autofix.types import Diagnosis, RunRecord, SessionResult, Status

_STATUS_STYLE = {Status.FIXED: "bold green", Status.CLEAN: "green",
                 Status.GAVE_UP: "bold yellow", Status.ERROR: "bold red"}


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
        self.script_total = 0  # the script's own step count, read from its progress bar
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
        if not self.max_steps:
            return ", to the script's end (--full)"
        total = f" of the script's {self.script_total}" if self.script_total else ""
        return f", stopping at step {self.max_steps}{total}"

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
        match = _TQDM.search(line)
        if match and int(match.group(2)) > 1:
            self.script_total = int(match.group(2))
        if self.spinner is not None:
            self.spinner.update(self.status_text())

    def step(self, n: int, loss: float | None) -> None:
        """One optimizer step recorded by the probe (called live, from the runner)."""
        self.steps, self.loss = n, loss
        if self.spinner is not None:
            self.spinner.update(self.status_text())
        elif n % 10 == 0:
            shown = f"{loss:.4f}" if loss is not None else "n/a"
            self.console.print(f"run {self.n}: step {n}, loss {shown}{self._budget()}")

    def run_finished(self, record: RunRecord, diagnosis: Diagnosis | None) -> None:
        if self.spinner is not None:
            self.spinner.stop()
            self.spinner = None
        if diagnosis is None:
            what = "[green]trains[/green]" if record.outcome == "budget" else "[green]ok[/green]"
            self.console.print(f"run {record.n}  {what}  "
                               f"{escape(record.evidence[:100])}  {record.seconds:.1f}s")
            return
        where = f"{Path(diagnosis.file).name}:{diagnosis.line}" if diagnosis.line else ""
        fix = (f"→ [cyan]{record.recipe}[/cyan] [magenta]{record.commit[:8]}[/magenta]"
               if record.commit else "→ [yellow]no fix[/yellow]")
        via = f" (via {diagnosis.via})" if diagnosis.via else ""
        self.console.print(
            f"run {record.n}  [bold]{diagnosis.category}[/bold]{via}  "
            f"{escape(diagnosis.evidence[:100])}  [dim]{escape(where)}[/dim]  {fix}  "
            f"{record.seconds:.1f}s")

    def close(self) -> None:
        if self.spinner is not None:
            self.spinner.stop()
            self.spinner = None


_TQDM = re.compile(r"\b(\d+)/(\d+) \[")


def print_summary(console: Console, result: SessionResult, repo_dir: str = "") -> None:
    """The final summary: status, reason, each fix, a loss sparkline per training run, the
    branch's diff stat and how to see the whole diff (a dry run prints the diffs)."""
    style = _STATUS_STYLE[result.status]
    label = "interrupted" if result.interrupted else result.status.value
    if result.dry_run:
        label += " (dry run: nothing committed)"
    console.print(f"\n[{style}]{label}[/{style}]: {escape(result.reason)}")
    for fix in result.fixes:
        sha = "dry-run " if result.dry_run else fix.commit[:8]
        console.print(f"  {sha}  [bold]{fix.category}[/bold]  "
                      f"{escape(fix.summary)}  [dim]{fix.file}:{fix.line}[/dim]")
    for finding in result.findings:  # not failures: what a person should know (issue 8)
        console.print(f"  finding [bold]{finding.kind}[/bold]: {escape(finding.evidence)}")
    diag = result.last_diagnosis
    if diag is not None and result.status is not Status.FIXED:
        for line in diag.details:
            console.print(f"    [dim]{escape(line)}[/dim]")
        if diag.hint:
            console.print(f"  hint: {escape(diag.hint)}")
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
                          f"{finite[0]:.3f} → {finite[-1]:.3f} ({len(run.steps)} steps)")
    prefix = f"git -C {repo_dir} " if repo_dir else "git "
    if result.dry_run:
        for fix in result.fixes:
            console.print(f"\n[bold]{escape(fix.summary)}[/bold] (run {fix.run}: "
                          f"{escape(_evidence(result, fix.run))})")
            console.print(Syntax(fix.diff, "diff", theme="ansi_dark", background_color="default"))
        if result.diff_stat:
            console.print(f"\n{escape(result.diff_stat.rstrip())}")
        return
    if not result.diff_stat:
        return
    if result.earlier_fixes and not result.fixes:
        console.print(f"\nThe branch {result.branch} already holds {result.earlier_fixes} "
                      f"autofix commit(s) from earlier sessions (`autofix log {result.branch}`).")
    console.print(f"\n{escape(result.diff_stat.rstrip())}")
    console.print(f"Whole diff: [bold]{prefix}diff {result.base[:8]}..{result.branch}[/bold]"
                  f"   commits: [bold]autofix log {result.branch}[/bold]")
    if result.status is Status.FIXED and not result.interrupted:  # never a broken branch
        console.print(f"merge: [bold]{prefix}merge {result.branch}[/bold]")
    elif result.fixes:  # gave up or interrupted: the branch does not train yet
        console.print("Partial fixes: the script does not train yet; do not merge as is.")


def _evidence(result: SessionResult, n: int) -> str:
    found = next((r.evidence for r in result.runs if r.n == n), "")
    if found or n:
        return found
    return next((f"before the first run: {f.evidence}" for f in result.fixes
                 if f.run == 0 and f.evidence), "")


def write_report(path: Path, document: dict[str, Any]) -> None:
    """Write the JSON report (UTF-8, indented). Raises ``OSError`` when it cannot."""
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
