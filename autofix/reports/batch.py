"""The batch report: JSON for tools, and for a teacher reading a folder's repairs a page
(HTML) or Markdown: the summary table, the faults counted across scripts, and per script
its fixes with their evidence, diffs and loss curves.

``autofix batch --report PATH`` writes PATH in the format its suffix names (``.html``,
``.md``, else JSON) and, next to it, the JSON for tools (``.json``) or, for a JSON PATH,
the Markdown for people (``.md``): :func:`write_batch_reports`.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from autofix.batch.jobs import Row
from autofix.reports.formats import (
    DO_NOT_MERGE,
    PAGE_STYLE,
    SCHEMA_ID,
    diff_html,
    fix_run_label,
    loss_png,
    metrics_text,
    minutes,
    session_json,
    sparkline,
    status_label,
    verifying_run,
)
from autofix.types import SessionResult, Status
from autofix.words import plural


def row_label(row: Row) -> str:
    """The word a person reads for a row: the session's label (``fixed`` only when its
    last run trained, else ``ran``), or the row's status (``error``, ``interrupted``)."""
    if row.result is not None and row.status in (Status.FIXED.value, Status.CLEAN.value):
        return status_label(row.result)
    return row.status


def fault_counts(rows: list[Row]) -> list[dict[str, Any]]:
    """The fault categories met across the scripts, most frequent first:
    ``{"category", "scripts", "fixed", "left"}``: in how many scripts it was found, in how
    many a fix for it is kept on the branch, in how many it was left (the session gave up
    on it, or it has advice and no recipe)."""
    found: Counter[str] = Counter()
    fixed: Counter[str] = Counter()
    left: Counter[str] = Counter()
    for row in rows:
        result = row.result
        if result is None:
            continue
        kept = {f.category for f in result.fixes}
        seen = set(kept) | {d.category for d in result.dropped}
        diag = result.last_diagnosis
        unfixed = diag.category if diag is not None and result.status is Status.GAVE_UP \
            else ""
        if unfixed:
            seen.add(unfixed)
        for category in seen:
            found[category] += 1
            fixed[category] += category in kept
            left[category] += category == unfixed and category not in kept
    return [{"category": c, "scripts": n, "fixed": fixed[c], "left": left[c]}
            for c, n in sorted(found.items(), key=lambda item: (-item[1], item[0]))]


def batch_json(rows: list[Row], command: str = "", seconds: float = 0.0,
               isolation: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``--report`` document: ``{"scripts": [{"path", "status", "branch", "fixes",
    "runs", "seconds", ...}], "faults": [...], "command", "seconds"}`` with the
    single-script report's statuses; under ``--sandbox``, ``"sandbox"``: ``isolation``
    (what this machine enforces, :func:`autofix.run.sandbox.isolation`) and each script's
    ``"isolation"``, what its runs had where they ran."""
    scripts = []
    for row in rows:
        single = session_json(row.result) if row.result else {}
        scripts.append({
            "path": row.path, "status": row.status,
            "branch": row.branch if single.get("fixes") else None,
            "fixes": single.get("fixes", []), "runs": single.get("runs", []),
            "seconds": round(row.seconds, 2),
            "reason": row.error or single.get("reason", ""),
            "skipped": single.get("skipped", []),
            "trained": bool(single.get("trained", False)),
            **({"nodes": row.nodes, "overhead": round(row.overhead, 2)} if row.nodes else {}),
            **({"isolation": row.isolation} if row.isolation else {}),
        })
    return {"$schema": SCHEMA_ID, "scripts": scripts, "faults": fault_counts(rows),
            "command": command, "seconds": round(seconds, 2),
            **({"sandbox": isolation} if isolation else {})}


def isolation_line(row: Row) -> str:
    """One line on a sandboxed row's isolation (``""`` without a sandbox): the tool, or
    what its runs were not isolated from."""
    if not row.isolation:
        return ""
    tool = row.isolation.get("isolation", "")
    if tool.startswith("none"):
        missing = [k for k, v in row.isolation.items() if v.startswith("not ")]
        return f"Not isolated ({tool[len('none: '):]}): {', '.join(missing)}"
    return f"Isolated by {tool}"


def _code(text: str) -> str:
    """``text`` as a Markdown code span, fenced with more backticks than it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fixes_of(row: Row) -> int:
    return len(row.result.fixes) if row.result else row.fixes  # preflight fixes too


def _why(result: SessionResult, run_n: int, evidence: str) -> str:
    run = next((r for r in result.runs if r.n == run_n), None)
    if run is not None:
        return f"run {run.n}: {run.evidence}"
    return f"before the first run: {evidence}" if evidence else ""


def batch_markdown(rows: list[Row], title: str = "autofix batch report", command: str = "",
                   seconds: float = 0.0, isolation: dict[str, str] | None = None) -> str:
    """A report a teacher can read: the summary table, the sandbox's ``isolation`` (what
    isolated the runs, how), the faults counted across scripts, then per script its
    isolation, its fixes with the evidence and the diffs, the runs (with a loss sparkline)
    and the time."""
    out = [f"# {title}", ""]
    if command:
        out.append(f"Command: {_code(command)}  ")
    out += [f"{plural(len(rows), 'script')}, {minutes(seconds)} in all", "",
            "| script | status | fixes | runs | seconds |", "|---|---|---|---|---|"]
    for row in rows:
        runs = len(row.result.runs) if row.result else 0
        out.append(f"| `{row.path}` | {row_label(row)} | {_fixes_of(row)} | {runs} | "
                   f"{row.seconds:.0f} |")
    if isolation:
        out += ["", "## Sandbox", "", "| what | how |", "|---|---|"]
        out += [f"| {what} | {how.replace('|', '/')} |" for what, how in isolation.items()]
    faults = fault_counts(rows)
    if faults:
        out += ["", "## Faults across the scripts", "",
                "| fault | scripts | fixed | left |", "|---|---|---|---|"]
        out += [f"| `{f['category']}` | {f['scripts']} | {f['fixed']} | {f['left']} |"
                for f in faults]
    for row in rows:
        out += ["", f"## `{row.path}`: {row_label(row)}", ""]
        if row.isolation:
            out += [isolation_line(row) + ".", ""]
        result = row.result
        if row.error or result is None:
            out.append(f"autofix could not run it: {row.error or 'not started'}")
            continue
        if row.status in (Status.GAVE_UP.value, "interrupted") and result.fixes:
            out += [f"> **{DO_NOT_MERGE}**: the script does not train yet.", ""]
        out.append(result.reason[:1].upper() + result.reason[1:] + ".")
        if result.fixes:
            out += ["", f"Branch `{row.branch}` (review: `git diff HEAD..{row.branch}`):", ""]
        for fix in result.fixes:
            why = _why(result, fix.run, fix.evidence)
            out.append(f"- **{fix.category}**: {fix.summary}"
                       + (f" ({why.split(': ', 1)[0]}: {_code(why.split(': ', 1)[1])})"
                          if ": " in why else "") + f", commit `{fix.commit[:8]}`")
        for fix in result.fixes:
            out += ["", f"`{fix.recipe}` ({fix_run_label(fix.run)}):", "", "```diff",
                    fix.diff.rstrip("\n"), "```"]
        if result.skipped:
            out += ["", "Not run (IPython magics and shell lines): "
                    + ", ".join(_code(s) for s in result.skipped)]
        verifying = verifying_run(result)
        if verifying is not None:
            out += ["", f"Evaluation (run {verifying.n}): {metrics_text(verifying.metrics)}"]
        out += ["", "| run | outcome | category | evidence | seconds | loss |",
                "|---|---|---|---|---|---|"]
        for r in result.runs:
            text = r.evidence.replace("|", "\\|")[:120]
            spark = sparkline([v for _, v in r.steps if v is not None])
            out.append(f"| {r.n} | {r.outcome} | {r.category or '-'} | {text} | "
                       f"{r.seconds:.1f} | {spark} |")
    return "\n".join(out) + "\n"


def batch_html(rows: list[Row], title: str = "autofix batch report", command: str = "",
               seconds: float = 0.0, isolation: dict[str, str] | None = None) -> str:
    """The teacher's page, self-contained: the command and total time, the summary table
    (each script linked to its section), the sandbox's ``isolation``, the faults counted
    across scripts, then per script its isolation, its status (a do-not-merge banner for
    a partial branch), its fixes with the evidence and the highlighted diffs, its
    evaluation metrics, its runs and its loss curves (an embedded PNG)."""
    e = html.escape
    out = ["<!doctype html><html><head><meta charset='utf-8'>",
           f"<title>{e(title)}</title><style>{PAGE_STYLE}</style></head><body>",
           f"<h1>{e(title)}</h1>", "<table id='session'>"]
    if command:
        out.append(f"<tr><th>command</th><td><code>{e(command)}</code></td></tr>")
    out += [f"<tr><th>total time</th><td>{e(minutes(seconds))} "
            f"({plural(len(rows), 'script')})</td></tr>", "</table>",
            "<h2>Scripts</h2>", "<table id='summary'><tr><th>script</th><th>status</th>"
            "<th>fixes</th><th>runs</th><th>seconds</th><th>branch</th></tr>"]
    for n, row in enumerate(rows):
        runs = len(row.result.runs) if row.result else 0
        branch = row.branch if row.result and row.result.fixes else ""
        out.append(f"<tr><td><a href='#script-{n}'>{e(row.path)}</a></td>"
                   f"<td>{e(row_label(row))}</td><td>{_fixes_of(row)}</td><td>{runs}</td>"
                   f"<td>{row.seconds:.0f}</td><td><code>{e(branch)}</code></td></tr>")
    out.append("</table>")
    if isolation:
        out += ["<h2>Sandbox</h2>", "<table id='sandbox'><tr><th>what</th><th>how</th></tr>"]
        out += [f"<tr><td>{e(what)}</td><td>{e(how)}</td></tr>"
                for what, how in isolation.items()]
        out.append("</table>")
    faults = fault_counts(rows)
    if faults:
        out += ["<h2>Faults across the scripts</h2>", "<table id='faults'><tr><th>fault</th>"
                "<th>scripts</th><th>fixed</th><th>left</th></tr>"]
        out += [f"<tr><td><code>{e(f['category'])}</code></td><td>{f['scripts']}</td>"
                f"<td>{f['fixed']}</td><td>{f['left']}</td></tr>" for f in faults]
        out.append("</table>")
    for n, row in enumerate(rows):
        out += _script_html(n, row)
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _script_html(n: int, row: Row) -> list[str]:
    e = html.escape
    out = [f"<h2 id='script-{n}'>{e(row.path)}: {e(row_label(row))}</h2>"]
    if row.isolation:
        out.append(f"<p class='isolation'>{e(isolation_line(row))}</p>")
    result = row.result
    if row.error or result is None:
        return [*out, f"<p>autofix could not run it: {e(row.error or 'not started')}</p>"]
    if row.status in (Status.GAVE_UP.value, "interrupted") and result.fixes:
        hint = result.last_diagnosis.hint if result.last_diagnosis is not None else ""
        out.append(f"<div class='banner'>{DO_NOT_MERGE}: the script does not train yet; the "
                   f"branch holds partial fixes.{e(' Hint: ' + hint) if hint else ''}</div>")
    out.append(f"<p>{e(result.reason)}</p>")
    if result.fixes:
        out.append(f"<p>Branch <code>{e(row.branch)}</code>: review with "
                   f"<code>git diff HEAD..{e(row.branch)}</code></p>")
    for fix in result.fixes:
        out += [f"<h3>Fix: {e(fix.summary)}</h3>",
                f"<p><code>{e(fix.category)}</code> by <code>{e(fix.recipe)}</code> "
                f"({e(_why(result, fix.run, fix.evidence))}), <code>{e(fix.file)}:{fix.line}"
                f"</code>, commit <code>{e(fix.commit[:8])}</code></p>", diff_html(fix.diff)]
    verifying = verifying_run(result)
    if verifying is not None:
        out.append(f"<p>Evaluation (run {verifying.n}): {e(metrics_text(verifying.metrics))}"
                   "</p>")
    out += ["<table><tr><th>run</th><th>outcome</th><th>category</th><th>evidence</th>"
            "<th>steps</th><th>seconds</th></tr>"]
    out += [f"<tr><td>{r.n}</td><td>{e(r.outcome)}</td><td>{e(r.category or '-')}</td>"
            f"<td>{e(r.evidence)}</td><td>{len(r.steps)}</td><td>{r.seconds:.1f}</td></tr>"
            for r in result.runs]
    out.append("</table>")
    png = loss_png(result)
    if png:
        data = base64.b64encode(png).decode("ascii")
        out.append(f"<img class='loss-curve' alt='loss per training run of {e(row.path)}' "
                   f"src='data:image/png;base64,{data}'>")
    return out


def write_batch_reports(path: Path, rows: list[Row], command: str = "", seconds: float = 0.0,
                        isolation: dict[str, str] | None = None) -> list[Path]:
    """Write the batch reports for ``--report PATH``: PATH in the format its suffix names
    (``.html``/``.htm``, ``.md``, else JSON), and next to it the JSON (``.json``) or, for a
    JSON PATH, the Markdown (``.md``). Each file is written once; returns them in order.
    ``isolation``: ``--sandbox``'s, stated in each (:func:`batch_json`). Raises
    ``OSError``."""
    document = batch_json(rows, command, seconds, isolation)
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        people, text = path, batch_html(rows, command=command, seconds=seconds,
                                        isolation=isolation)
        tools = path.with_suffix(".json")
    elif suffix == ".md":
        people, text = path, batch_markdown(rows, command=command, seconds=seconds,
                                            isolation=isolation)
        tools = path.with_suffix(".json")
    else:
        tools = path
        people = path.with_name(path.name + ".md") if not suffix else path.with_suffix(".md")
        text = batch_markdown(rows, command=command, seconds=seconds, isolation=isolation)
    tools.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    people.write_text(text, encoding="utf-8")
    return [path, people if path == tools else tools]
