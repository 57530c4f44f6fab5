"""The batch report: JSON for tools, Markdown for a teacher reading a folder's repairs."""

from __future__ import annotations

import re
from typing import Any

from autofix.batch.jobs import Row
from autofix.reports.formats import session_json


def batch_json(rows: list[Row]) -> dict[str, Any]:
    """The ``--report`` document: ``{"scripts": [{"path", "status", "branch", "fixes",
    "runs", "seconds", ...}]}`` with the single-script report's statuses."""
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
            **({"nodes": row.nodes, "overhead": round(row.overhead, 2)} if row.nodes else {}),
        })
    return {"scripts": scripts}


def _code(text: str) -> str:
    """``text`` as a Markdown code span, fenced with more backticks than it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def batch_markdown(rows: list[Row], title: str = "autofix batch report") -> str:
    """A report a teacher can read: a summary table, then per script its fixes with the
    evidence, the runs and the time."""
    out = [f"# {title}", "", "| script | status | fixes | runs | seconds |",
           "|---|---|---|---|---|"]
    for row in rows:
        runs = len(row.result.runs) if row.result else 0
        fixes = len(row.result.fixes) if row.result else row.fixes  # preflight fixes too
        out.append(f"| `{row.path}` | {row.status} | {fixes} | {runs} | "
                   f"{row.seconds:.0f} |")
    for row in rows:
        out += ["", f"## `{row.path}`: {row.status}", ""]
        result = row.result
        if row.error or result is None:
            out.append(f"autofix could not run it: {row.error or 'not started'}")
            continue
        out.append(result.reason[:1].upper() + result.reason[1:] + ".")
        if result.fixes:
            out += ["", f"Branch `{row.branch}` (review: `git diff HEAD..{row.branch}`):", ""]
        by_number = {r.n: r for r in result.runs}
        for fix in result.fixes:
            run = by_number.get(fix.run)
            why = f" (run {run.n}: {_code(run.evidence)})" if run else \
                f" (before the first run: {_code(fix.evidence)})" if fix.evidence else ""
            out.append(f"- **{fix.category}**: {fix.summary}{why}, commit `{fix.commit[:8]}`")
        if result.skipped:
            out += ["", "Not run (IPython magics and shell lines): "
                    + ", ".join(_code(s) for s in result.skipped)]
        out += ["", "| run | outcome | category | evidence | seconds |",
                "|---|---|---|---|---|"]
        for r in result.runs:
            text = r.evidence.replace("|", "\\|")[:120]
            out.append(f"| {r.n} | {r.outcome} | {r.category or '-'} | {text} | "
                       f"{r.seconds:.1f} |")
    return "\n".join(out) + "\n"
