"""The session report a reviewer opens: JSON (schema ``autofix/reports/report.schema.json``),
Markdown or HTML (chosen by the ``--report`` suffix), with each fix's diff and the loss
curve of every training run drawn by matplotlib (an embedded PNG).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path
from typing import Any

from autofix.run.child.symptoms import MIN_STEPS, STALL_RATIO, WINDOW
from autofix.types import RunRecord, SessionResult, Status

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")
SCHEMA_ID = "https://autofix.invalid/report.schema.json"
SPARK = "▁▂▃▄▅▆▇█"


def _number(value: float | None) -> float | str | None:
    """A loss for JSON: finite numbers as they are, NaN/inf as ``"nan"``/``"inf"``."""
    if value is None or math.isfinite(value):
        return value
    return str(value)


def run_json(run: RunRecord, dry_run: bool = False) -> dict[str, Any]:
    """One run of the report (see the schema's ``run``; a dry run names no commit)."""
    chance = math.log(run.num_classes) if run.num_classes and run.num_classes > 1 else None
    return {
        "n": run.n, "outcome": run.outcome, "category": run.category,
        "evidence": run.evidence, "seconds": round(run.seconds, 2), "note": run.note,
        "recipe": run.recipe, "commit": "" if dry_run else run.commit,
        "max_steps": run.max_steps,
        "num_classes": run.num_classes,
        "chance_loss": round(chance, 6) if chance else None,
        "symptom_step": run.symptom_step,
        "steps": [{"step": s, "loss": _number(loss)} for s, loss in run.steps],
    }


def session_json(result: SessionResult) -> dict[str, Any]:
    """The ``--report`` JSON document of one session, valid against the schema."""
    return {
        "$schema": SCHEMA_ID,
        "status": result.status.value,
        "branch": result.branch if (result.fixes or result.earlier_fixes)
        and not result.dry_run else None,
        "reason": result.reason,
        "interrupted": result.interrupted,
        "dry_run": result.dry_run,
        "skipped": list(result.skipped),
        "versions": dict(result.versions),
        "base": result.base,
        "diff_stat": result.diff_stat,
        "runs": [run_json(r, result.dry_run) for r in result.runs],
        "fixes": [
            {"category": f.category, "recipe": f.recipe,
             "commit": None if result.dry_run else f.commit, "file": f.file,
             "line": f.line, "summary": f.summary, "run": f.run, "diff": f.diff}
            for f in result.fixes
        ],
        "dropped": [{"commit": d.commit, "recipe": d.recipe, "category": d.category,
                     "reason": d.reason} for d in result.dropped],
        "warnings": list(result.warnings),
        "findings": [{"kind": f.kind, "step": f.step, "evidence": f.evidence}
                     for f in result.findings],
    }


def error_json(message: str) -> dict[str, Any]:
    """The report of a session stopped by a usage or environment error (no run made)."""
    return {"$schema": SCHEMA_ID, "status": Status.ERROR.value, "branch": None,
            "reason": message, "interrupted": False, "dry_run": False, "skipped": [],
            "versions": {}, "base": "", "diff_stat": "", "runs": [], "fixes": []}


def sparkline(losses: list[float], width: int = 40) -> str:
    """Unicode block sparkline of ``losses`` (finite ones; resampled to ``width``)."""
    values = [v for v in losses if math.isfinite(v)]
    if not values:
        return ""
    if len(values) > width:
        values = [values[int(i * len(values) / width)] for i in range(width)]
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    return "".join(SPARK[min(7, int((v - low) / span * 7.999))] for v in values)


def training_runs(result: SessionResult) -> list[RunRecord]:
    """The runs that recorded at least one loss."""
    return [r for r in result.runs if any(loss is not None for _, loss in r.steps)]


def loss_png(result: SessionResult) -> bytes:
    """The loss curves of every training run as a PNG: one line per run, the chance level
    ln C dashed, the stall line 0.9 x ln C dotted and the stall window (from step 40, the
    last 10 steps judged) shaded. Empty bytes when no run recorded a loss."""
    runs = training_runs(result)
    if not runs:
        return b""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.2), dpi=100)
    ax = fig.add_subplot()
    last_step = 1
    classes = None
    for run in runs:
        pts = [(s, v) for s, v in run.steps if v is not None and math.isfinite(v)]
        if not pts:
            continue
        last_step = max(last_step, pts[-1][0])
        classes = classes or run.num_classes
        label = f"run {run.n}: {run.category or run.outcome}"
        if run.recipe:
            label += f" → {run.recipe}"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], linewidth=2, label=label)
    if classes and classes > 1:
        chance = math.log(classes)
        ax.axhline(chance, color="black", linestyle="--", linewidth=1,
                   label=f"chance ln {classes} = {chance:.3f}")
        ax.axhline(STALL_RATIO * chance, color="grey", linestyle=":", linewidth=1,
                   label=f"stall line {STALL_RATIO} × ln {classes}")
    if last_step >= MIN_STEPS:
        ax.axvspan(MIN_STEPS - WINDOW + 1, last_step, color="#f4c7a1", alpha=0.35,
                   label=f"stall window (judged from step {MIN_STEPS}, last {WINDOW} steps)")
    ax.set_xlabel("optimizer step (autofix's probe)")
    ax.set_ylabel("training loss")
    ax.set_title("Loss per training run")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def _diff_html(diff: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import DiffLexer

    return str(highlight(diff, DiffLexer(), HtmlFormatter(noclasses=True, nowrap=False)))


def html_report(result: SessionResult) -> str:
    """A self-contained HTML page: status, versions, per run its evidence and timing, each
    fix's highlighted diff, and the loss curves (embedded PNG)."""
    doc = session_json(result)
    e = html.escape
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>autofix report</title>",
           "<style>body{font-family:sans-serif;max-width:60em;margin:1em auto;}"
           "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;"
           "text-align:left;vertical-align:top}code,pre{font-size:90%}</style></head><body>",
           f"<h1>autofix: {e(doc['status'])}</h1>", f"<p>{e(result.reason)}</p>"]
    if result.dry_run:
        out.append("<p><b>Dry run</b>: nothing was committed; the diffs show what would be.</p>")
    if doc["branch"]:
        out.append(f"<p>Branch <code>{e(doc['branch'])}</code>: review with "
                   f"<code>git diff {e(result.base[:8])}..{e(doc['branch'])}</code></p>")
    png = loss_png(result)
    if png:
        data = base64.b64encode(png).decode("ascii")
        out += ["<h2>Loss curves</h2>",
                f"<img id='loss-curve' alt='loss per training run' "
                f"src='data:image/png;base64,{data}'>"]
    out += ["<h2>Runs</h2>", "<table><tr><th>run</th><th>outcome</th><th>category</th>"
            "<th>evidence</th><th>steps</th><th>seconds</th><th>fix</th></tr>"]
    for run in doc["runs"]:
        out.append(f"<tr><td>{run['n']}</td><td>{e(run['outcome'])}</td>"
                   f"<td>{e(run['category'] or '-')}</td><td>{e(run['evidence'])}</td>"
                   f"<td>{len(run['steps'])}</td><td>{run['seconds']:.1f}</td>"
                   f"<td>{e(run['recipe'])} {e((run['commit'] or '')[:8])}</td></tr>")
    out.append("</table>")
    for fix in doc["fixes"]:
        out += [f"<h2>Fix: {e(fix['summary'])}</h2>",
                f"<p>category <code>{e(fix['category'])}</code>, recipe "
                f"<code>{e(fix['recipe'])}</code>, run {fix['run']}, "
                f"<code>{e(fix['file'])}:{fix['line']}</code>"
                + (f", commit <code>{e(fix['commit'][:8])}</code>" if fix["commit"] else "")
                + "</p>", _diff_html(fix["diff"])]
    if result.last_diagnosis is not None and result.last_diagnosis.details:
        out += ["<h2>Key lines of the last failure</h2>",
                "<pre>" + e("\n".join(result.last_diagnosis.details)) + "</pre>"]
    out += ["<h2>Versions</h2><table>"]
    out += [f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in doc["versions"].items()]
    out += ["</table></body></html>"]
    return "\n".join(out) + "\n"


def markdown_report(result: SessionResult, png_name: str = "") -> str:
    """The same report in Markdown; the loss curves are the PNG ``png_name`` next to it."""
    doc = session_json(result)
    out = [f"# autofix: {doc['status']}", "", result.reason]
    if result.dry_run:
        out += ["", "**Dry run**: nothing was committed; the diffs show what would be."]
    if png_name:
        out += ["", f"![loss per training run]({png_name})"]
    out += ["", "| run | outcome | category | evidence | steps | seconds | loss |",
            "|---|---|---|---|---|---|---|"]
    for run, rec in zip(doc["runs"], result.runs, strict=True):
        spark = sparkline([v for _, v in rec.steps if v is not None])
        text = run["evidence"].replace("|", "\\|")[:160]
        out.append(f"| {run['n']} | {run['outcome']} | {run['category'] or '-'} | {text} | "
                   f"{len(run['steps'])} | {run['seconds']:.1f} | {spark} |")
    for fix in doc["fixes"]:
        out += ["", f"## {fix['summary']}", "",
                f"`{fix['category']}` by `{fix['recipe']}` (run {fix['run']}, "
                f"`{fix['file']}:{fix['line']}`)", "", "```diff", fix["diff"].rstrip("\n"),
                "```"]
    out += ["", "Versions: " + ", ".join(f"{k} {v}" for k, v in doc["versions"].items())]
    return "\n".join(out) + "\n"


def write_session_report(path: Path, result: SessionResult) -> list[Path]:
    """Write the report at ``path`` in the format its suffix names (``.html``/``.htm``,
    ``.md``, else JSON); returns the files written (a Markdown report gets its loss PNG
    next to it). Raises ``OSError`` when a file cannot be written."""
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        path.write_text(html_report(result), encoding="utf-8")
        return [path]
    if suffix == ".md":
        png = loss_png(result)
        written = [path]
        name = ""
        if png:
            image = path.with_name(path.stem + "-loss.png")
            image.write_bytes(png)
            written.append(image)
            name = image.name
        path.write_text(markdown_report(result, name), encoding="utf-8")
        return written
    path.write_text(json.dumps(session_json(result), indent=2) + "\n", encoding="utf-8")
    return [path]
