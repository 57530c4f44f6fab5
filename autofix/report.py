"""Console output (rich) and the ``--report`` JSON file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.status import Status as Spinner

from autofix.types import Diagnosis, RunRecord, SessionResult, Status

_STATUS_STYLE = {Status.FIXED: "bold green", Status.CLEAN: "green",
                 Status.GAVE_UP: "bold yellow", Status.ERROR: "bold red"}


class ConsoleObserver:
    """Shows a spinner with the script's last output line while it runs, then one line
    per run: number, category, evidence, recipe, commit, seconds."""

    def __init__(self, console: Console, script_name: str) -> None:
        self.console = console
        self.script_name = script_name
        self.spinner: Spinner | None = None
        self.n = 0

    def run_started(self, n: int, note: str) -> None:
        self.n = n
        label = f"run {n}: {self.script_name}" + (f" ({note})" if note else "")
        self.spinner = self.console.status(escape(label))
        self.spinner.start()

    def output_line(self, line: str) -> None:
        if self.spinner is not None:
            self.spinner.update(f"run {self.n}: [dim]{escape(line[-100:])}[/dim]")

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


def print_summary(console: Console, result: SessionResult, repo_dir: str = "") -> None:
    """The final summary: status, reason, each fix, and how to review the branch."""
    style = _STATUS_STYLE[result.status]
    label = "interrupted" if result.interrupted else result.status.value
    console.print(f"\n[{style}]{label}[/{style}]: {escape(result.reason)}")
    for fix in result.fixes:
        console.print(f"  {fix.commit[:8]}  [bold]{fix.category}[/bold]  "
                      f"{escape(fix.summary)}  [dim]{fix.file}:{fix.line}[/dim]")
    for finding in result.findings:  # not failures: what a person should know (issue 8)
        console.print(f"  finding [bold]{finding.kind}[/bold]: {escape(finding.evidence)}")
    diag = result.last_diagnosis
    if diag is not None and result.status is not Status.FIXED:
        for line in diag.details:
            console.print(f"    [dim]{escape(line)}[/dim]")
        if diag.hint:
            console.print(f"  hint: {escape(diag.hint)}")
    if result.fixes:
        prefix = f"git -C {repo_dir} " if repo_dir else "git "
        console.print(f"\nReview: [bold]{prefix}diff HEAD..{result.branch}[/bold]   "
                      f"merge: [bold]{prefix}merge {result.branch}[/bold]")


def write_report(path: Path, document: dict[str, Any]) -> None:
    """Write the JSON report (UTF-8, indented). Raises ``OSError`` when it cannot."""
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def error_report(message: str) -> dict[str, Any]:
    """The report for a session stopped by a usage or environment error."""
    return {"status": Status.ERROR.value, "branch": None, "reason": message,
            "interrupted": False, "runs": [], "fixes": []}
