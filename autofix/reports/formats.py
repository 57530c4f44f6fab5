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

from autofix.run.child.symptoms import MIN_STEPS, STALL_RATIO, STALL_RULE, WINDOW
from autofix.types import MergeAdvice, RunRecord, SessionResult, Status
from autofix.words import plural

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")
SCHEMA_ID = "https://autofix.invalid/report.schema.json"
SPARK = "▁▂▃▄▅▆▇█"


def _number(value: float | None) -> float | str | None:
    """A loss for JSON: finite numbers as they are, NaN/inf as ``"nan"``/``"inf"``."""
    if value is None or math.isfinite(value):
        return value
    return str(value)


def status_label(result: SessionResult) -> str:
    """The word a person reads for how the session ended: ``fixed`` only when the last run
    trained (``ran``: the fixes let the script run to its end, but nothing trained),
    ``interrupted`` after Ctrl-C, else the status (``clean``, ``gave_up``, ``error``)."""
    if result.interrupted:
        return "interrupted"
    if result.status is Status.FIXED and not result.trained:
        return "ran"
    return result.status.value


def run_json(run: RunRecord, dry_run: bool = False) -> dict[str, Any]:
    """One run of the report (see the schema's ``run``; a dry run names no commit)."""
    chance = run_chance(run)
    return {
        "n": run.n, "outcome": run.outcome, "category": run.category,
        "evidence": run.evidence, "seconds": round(run.seconds, 2), "note": run.note,
        "recipe": run.recipe, "commit": "" if dry_run else run.commit,
        "max_steps": run.max_steps,
        "num_classes": run.num_classes,
        "chance_loss": round(chance, 6) if chance else None,
        "chance_label": chance_name(run) if chance else "",
        "symptom_step": run.symptom_step,
        "steps": [{"step": s, "loss": _number(loss)} for s, loss in run.steps],
        "eval_step": run.eval_step,
        "metrics": dict(run.metrics),
        "total_steps": run.total_steps,
        "phases": [{"kind": p.kind, "step": p.step, "what": p.what, "metrics": dict(p.metrics)}
                   for p in run.phases],
        "covered": covered_text(run),
    }


def covered_text(run: RunRecord) -> str:
    """What ``run`` covered, in words (issue 52: a clean verdict says what it is about):
    ``32 of 32 training steps; 2 evaluations (steps 16, 32; the last after the final
    step: held_out_accuracy 1); saved (torch.save)``; ``""`` for a run that took no step
    and reached nothing."""
    steps = len(run.steps)
    parts = []
    if steps or run.total_steps:
        of = f" of {run.total_steps}" if run.total_steps else ""
        parts.append(f"{steps}{of} training steps")
    evals = [p for p in run.phases if p.kind == "evaluate"]
    if evals:
        at = ", ".join(str(p.step) for p in evals[:6]) + (", ..." if len(evals) > 6 else "")
        final = evals[-1].step >= steps > 0 and not any(
            p.step > evals[-1].step for p in run.phases)
        scored = next((p.metrics for p in reversed(evals) if p.metrics), {})
        shown = ", ".join(f"{k} {v:.4g}" for k, v in scored.items() if k != "held_out_rows")
        tail = "; the last after the final step" if final else ""
        parts.append(f"{plural(len(evals), 'evaluation')} (step{'s' if len(evals) > 1 else ''} "
                     f"{at}{tail}{': ' + shown if shown else ''})")
    elif steps:
        parts.append("no evaluation")
    for kind, word in (("save", "saved"), ("reload", "reloaded"), ("predict", "predicted")):
        whats = list(dict.fromkeys(p.what for p in run.phases if p.kind == kind))
        if whats:
            parts.append(f"{word} ({', '.join(whats)})")
    return "; ".join(parts)


def run_chance(run: RunRecord) -> float | None:
    """The chance level ``run`` was judged against (nats), ``None`` when it had none."""
    if run.chance:
        return run.chance
    return math.log(run.num_classes) if run.num_classes and run.num_classes > 1 else None


def chance_name(run: RunRecord) -> str:
    """How the reports name ``run``'s chance level (``"ln 3"``, ``"H"``)."""
    return run.chance_label or (f"ln {run.num_classes}" if run.num_classes else "")


def merge_json(merge: MergeAdvice | None) -> dict[str, Any] | None:
    """The report's ``merge`` field (see the schema)."""
    if merge is None:
        return None
    return {"merge": merge.merge, "take": merge.take, "blocking": list(merge.blocking),
            "edited_since": list(merge.edited_since)}


def session_json(result: SessionResult, merge: MergeAdvice | None = None) -> dict[str, Any]:
    """The ``--report`` JSON document of one session, valid against the schema; ``merge``:
    the merge commands for the working tree as it was at the end."""
    return {
        "$schema": SCHEMA_ID,
        "status": result.status.value,
        "branch": result.branch if (result.fixes or result.earlier_fixes)
        and not result.dry_run else None,
        "reason": result.reason,
        "hint": result.last_diagnosis.hint if result.last_diagnosis is not None
        and result.status is Status.GAVE_UP else "",
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
             "line": f.line, "summary": f.summary, "run": f.run, "diff": f.diff,
             "candidates": [{"label": c.label, "run": c.run, "kept": c.kept}
                            for c in f.candidates]}
            for f in result.fixes
        ],
        "dropped": [{"commit": d.commit, "recipe": d.recipe, "category": d.category,
                     "reason": d.reason} for d in result.dropped],
        "warnings": list(result.warnings),
        "findings": [{"kind": f.kind, "step": f.step, "evidence": f.evidence}
                     for f in result.findings],
        "trained": result.trained,
        "command": result.command,
        "seconds": round(result.seconds, 2),
        "merge": merge_json(merge if result.mergeable and not result.dry_run else None),
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
    ln C dashed, the stall line (``STALL_RATIO`` x ln C) dotted and the stall window
    shaded: from step ``MIN_STEPS - WINDOW + 1`` (the first verdict, at step
    ``MIN_STEPS``, reads the last ``WINDOW`` steps) on. Empty bytes when no run recorded
    a loss."""
    runs = training_runs(result)
    if not runs:
        return b""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.2), dpi=100)
    ax = fig.add_subplot()
    last_step = 1
    chance, name = None, ""
    for run in runs:
        pts = [(s, v) for s, v in run.steps if v is not None and math.isfinite(v)]
        if not pts:
            continue
        last_step = max(last_step, pts[-1][0])
        if chance is None and run_chance(run):
            chance, name = run_chance(run), chance_name(run)
        label = f"run {run.n}: {run.category or run.outcome}"
        if run.recipe:
            label += f" → {run.recipe}"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], linewidth=2, label=label)
    if chance:
        ax.axhline(chance, color="black", linestyle="--", linewidth=1,
                   label=f"chance {name} = {chance:.3f}")
        ax.axhline(STALL_RATIO * chance, color="grey", linestyle=":", linewidth=1,
                   label=f"stall line {STALL_RATIO} × {name}")
    if last_step >= MIN_STEPS:  # the first verdict reads steps MIN_STEPS-WINDOW+1..MIN_STEPS
        ax.axvspan(MIN_STEPS - WINDOW + 1, last_step, color="#f4c7a1", alpha=0.35,
                   label=f"stall window: a stall is {STALL_RULE}")
    ax.set_xlabel("optimizer step (autofix's probe)")
    ax.set_ylabel("training loss")
    ax.set_title("Loss per training run")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def diff_html(diff: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import DiffLexer

    return str(highlight(diff, DiffLexer(), HtmlFormatter(noclasses=True, nowrap=False)))


#: The banner of a session whose branch must not be merged as it is.
DO_NOT_MERGE = "Do not merge as is"
PAGE_STYLE = ("body{font-family:sans-serif;max-width:60em;margin:1em auto;}"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;"
          "text-align:left;vertical-align:top}code,pre{font-size:90%}"
          ".banner{border:2px solid #b03a2e;background:#fdecea;padding:.5em 1em;margin:1em 0}"
          ".note{border:2px solid #b7950b;background:#fef9e7;padding:.5em 1em;margin:1em 0}")


def banner(result: SessionResult) -> tuple[str, str]:
    """``(kind, text)`` of the box at the top of a report: ``"banner"`` for a session that
    gave up, was interrupted or stopped on an error (do not merge, and what to do next),
    ``"note"`` for one whose script trained nothing, ``("", "")`` otherwise."""
    diag = result.last_diagnosis
    hint = diag.hint if diag is not None and diag.hint else ""
    if result.interrupted:
        return "banner", (f"{DO_NOT_MERGE}: the session was interrupted; the branch holds the "
                          "fixes committed so far and the script does not train yet. "
                          "Continue it with --resume --branch " + result.branch + ".")
    if result.status is Status.GAVE_UP:
        partial = " The branch holds partial fixes; the script does not train yet." \
            if result.fixes else ""
        return "banner", (f"{DO_NOT_MERGE}: autofix gave up.{partial}"
                          + (f" Hint: {hint}" if hint else ""))
    if result.status is Status.ERROR:
        return "banner", f"{DO_NOT_MERGE}: the session stopped on an error: {result.reason}"
    if not result.trained and result.status in (Status.FIXED, Status.CLEAN) and result.runs:
        return "note", ("Nothing trained: the script ran to its end without an optimizer "
                        "step, so autofix could not check that it trains.")
    return "", ""


def fix_run_label(n: int) -> str:
    """How a report names the run a fix answers: ``run N``, or for a fix made before any
    run (the API check, ``n == 0``) ``before the first run``."""
    return f"run {n}" if n else "before the first run"


def minutes(seconds: float) -> str:
    """``42.0 s``, ``3 min 5 s``: a duration for people."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"


#: Metric names that time the evaluation rather than measure the model (left out of the
#: one-line form; the report's table shows them).
TIMING_METRICS = ("_runtime", "_per_second", "_preparation_time")


def metrics_text(metrics: dict[str, float]) -> str:
    """``eval_loss 0.5213, eval_accuracy 0.8125``: a run's evaluation metrics in a line,
    timings left out."""
    return ", ".join(f"{k} {v:.4g}" for k, v in metrics.items()
                     if not k.endswith(TIMING_METRICS))


def verifying_run(result: SessionResult) -> RunRecord | None:
    """The last run, which judged the branch as it is, when it evaluated (else ``None``)."""
    if result.runs and result.runs[-1].metrics:
        return result.runs[-1]
    return None


def html_report(result: SessionResult, merge: MergeAdvice | None = None) -> str:
    """A self-contained HTML page: status, a do-not-merge banner with the hint for a
    session that gave up or was interrupted, the command line and total time, the merge
    commands, the verifying run's evaluation metrics, the loss curves (embedded PNG),
    per run its evidence and timing (fixes made before the first run on a row of their
    own), each fix's highlighted diff, and the versions."""
    doc = session_json(result, merge)
    e = html.escape
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>autofix report</title>",
           f"<style>{PAGE_STYLE}</style></head><body>",
           f"<h1>autofix: {e(status_label(result))}</h1>"]
    kind, text = banner(result)
    if kind:
        out.append(f"<div class='{kind}' id='{kind}'>{e(text)}</div>")
    out.append(f"<p>{e(result.reason)}</p>")
    if result.dry_run:
        out.append("<p><b>Dry run</b>: nothing was committed; the diffs show what would be.</p>")
    facts = []
    if result.command:
        facts.append(f"<tr><th>command</th><td><code>{e(result.command)}</code></td></tr>")
    facts.append(f"<tr><th>total time</th><td>{e(minutes(result.seconds))} "
                 f"({plural(len(result.runs), 'run')})</td></tr>")
    out += ["<table id='session'>", *facts, "</table>"]
    if doc["branch"]:
        out.append(f"<p>Branch <code>{e(doc['branch'])}</code>: review with "
                   f"<code>git diff {e(result.base[:8])}..{e(doc['branch'])}</code></p>")
        out += _merge_html(result, merge)
    verifying = verifying_run(result)
    if verifying is not None:
        at = f", at step {verifying.eval_step}" if verifying.eval_step else ""
        out += [f"<h2>Evaluation of the verifying run (run {verifying.n}{at})</h2>",
                "<table id='metrics'><tr><th>metric</th><th>value</th></tr>"]
        out += [f"<tr><td>{e(k)}</td><td>{v:.4g}</td></tr>"
                for k, v in verifying.metrics.items()]
        out.append("</table>")
    if result.runs and covered_text(result.runs[-1]):
        out.append(f"<p id='covered'>What the last run (run {result.runs[-1].n}) covered: "
                   f"{e(covered_text(result.runs[-1]))}</p>")
    png = loss_png(result)
    if png:
        data = base64.b64encode(png).decode("ascii")
        out += ["<h2>Loss curves</h2>",
                f"<img id='loss-curve' alt='loss per training run' "
                f"src='data:image/png;base64,{data}'>",
                f"<p>Shaded: the stall window (a stall is {e(STALL_RULE)}); dashed: chance "
                f"ln C; dotted: the stall line {STALL_RATIO} x ln C.</p>"]
    out += ["<h2>Runs</h2>", "<table id='runs'><tr><th>run</th><th>outcome</th>"
            "<th>category</th><th>evidence</th><th>steps</th><th>seconds</th><th>fix</th></tr>"]
    early = [f for f in doc["fixes"] if f["run"] == 0]
    if early:
        out.append(
            "<tr><td>before the first run</td><td>API check</td>"
            f"<td>{e(', '.join(dict.fromkeys(f['category'] for f in early)))}</td>"
            f"<td>{'<br>'.join(e(_fix_evidence(result, f['commit'], f['recipe'])) for f in early)}"
            "</td><td>-</td><td>-</td>"
            f"<td>{'<br>'.join(e(f['recipe'] + ' ' + (f['commit'] or '')[:8]) for f in early)}"
            "</td></tr>")
    for run in doc["runs"]:
        note = f"<br><i>{e(run['note'])}</i>" if run["note"] else ""
        fixes = "<br>".join(e(f) for f in run_fixes(result, run["n"])) \
            or e(run["recipe"]) or "-"
        out.append(f"<tr><td>{run['n']}</td><td>{e(run['outcome'])}</td>"
                   f"<td>{e(run['category'] or '-')}</td>"
                   f"<td>{e(run['evidence'] or '-')}{note}</td>"
                   f"<td>{len(run['steps'])}</td><td>{run['seconds']:.1f}</td>"
                   f"<td>{fixes}</td></tr>")
    out.append("</table>")
    for fix in doc["fixes"]:
        out += [f"<h2>Fix: {e(fix['summary'])}</h2>",
                f"<p>category <code>{e(fix['category'])}</code>, recipe "
                f"<code>{e(fix['recipe'])}</code>, {e(fix_run_label(fix['run']))}, "
                f"<code>{e(fix['file'])}:{fix['line']}</code>"
                + (f", commit <code>{e(fix['commit'][:8])}</code>" if fix["commit"] else "")
                + "</p>", diff_html(fix["diff"])]
    if result.last_diagnosis is not None and result.last_diagnosis.details:
        out += ["<h2>Key lines of the last failure</h2>",
                "<pre>" + e("\n".join(result.last_diagnosis.details)) + "</pre>"]
    if doc["versions"]:
        out += ["<h2>Versions</h2><table>"]
        out += [f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in doc["versions"].items()]
        out += ["</table>"]
    out += ["</body></html>"]
    return "\n".join(out) + "\n"


def run_fixes(result: SessionResult, n: int) -> list[str]:
    """The fixes committed after run ``n``, one ``recipe commit`` each (``recipe`` alone in
    a dry run), in the order they were made."""
    return [f"{f.recipe} {f.commit[:8]}" if f.commit and not result.dry_run else f.recipe
            for f in result.fixes if f.run == n]


def _fix_evidence(result: SessionResult, commit: str | None, recipe: str) -> str:
    for fix in result.fixes:
        if fix.recipe == recipe and (commit is None or fix.commit == commit):
            return fix.evidence
    return ""


def _merge_html(result: SessionResult, merge: MergeAdvice | None) -> list[str]:
    """The merge commands that work for the working tree as it was (HTML paragraphs)."""
    e = html.escape
    if not result.mergeable or result.dry_run:
        return []
    if merge is None or not merge.blocking:
        return [f"<p>Merge: <code>git merge {e(result.branch)}</code></p>"]
    if merge.edited_since:
        return [f"<p>Merge: you changed {e(', '.join(merge.edited_since))} after autofix ran "
                f"it; commit your changes first, then <code>git merge {e(result.branch)}</code>."
                "</p>"]
    return [f"<p>Merge: the branch holds your uncommitted edits of "
            f"{e(', '.join(merge.blocking))}, so a plain git merge would refuse to overwrite "
            f"them: <code>{e(merge.merge)}</code>, or take the fixed files without the "
            f"history: <code>{e(merge.take)}</code></p>"]


def markdown_report(result: SessionResult, png_name: str = "",
                    merge: MergeAdvice | None = None) -> str:
    """The same report in Markdown; the loss curves are the PNG ``png_name`` next to it."""
    doc = session_json(result, merge)
    out = [f"# autofix: {status_label(result)}", ""]
    kind, text = banner(result)
    if kind:
        out += [f"> **{text}**" if kind == "banner" else f"> {text}", ""]
    out.append(result.reason)
    if result.dry_run:
        out += ["", "**Dry run**: nothing was committed; the diffs show what would be."]
    out += [""]
    if result.command:
        out.append(f"Command: `{result.command}`  ")
    out.append(f"Total time: {minutes(result.seconds)} ({plural(len(result.runs), 'run')})")
    if doc["branch"] and doc["merge"]:
        out += ["", f"Merge: `{doc['merge']['merge']}`"]
    verifying = verifying_run(result)
    if verifying is not None and metrics_text(verifying.metrics):
        out += ["", f"Evaluation of the verifying run (run {verifying.n}): "
                    f"{metrics_text(verifying.metrics)}"]
    if result.runs and covered_text(result.runs[-1]):
        out += ["", f"What the last run (run {result.runs[-1].n}) covered: "
                    f"{covered_text(result.runs[-1])}"]
    if png_name:
        out += ["", f"![loss per training run]({png_name})"]
    out += ["", "| run | outcome | category | evidence | steps | seconds | loss | fixes |",
            "|---|---|---|---|---|---|---|---|"]
    early = [f for f in result.fixes if f.run == 0]
    if early:
        text = "; ".join(f.evidence for f in early).replace("|", "\\|")[:160]
        out.append(f"| before the first run | API check | "
                   f"{', '.join(dict.fromkeys(f.category for f in early))} | {text} | - | - | "
                   f"- | {', '.join(run_fixes(result, 0))} |")
    for run, rec in zip(doc["runs"], result.runs, strict=True):
        spark = sparkline([v for _, v in rec.steps if v is not None]) or "-"
        text = run["evidence"].replace("|", "\\|")[:160] or "-"
        fixes = ", ".join(run_fixes(result, run["n"])) or run["recipe"] or "-"
        out.append(f"| {run['n']} | {run['outcome']} | {run['category'] or '-'} | {text} | "
                   f"{len(run['steps'])} | {run['seconds']:.1f} | {spark} | {fixes} |")
    for fix in doc["fixes"]:
        out += ["", f"## {fix['summary']}", "",
                f"`{fix['category']}` by `{fix['recipe']}` ({fix_run_label(fix['run'])}, "
                f"`{fix['file']}:{fix['line']}`)", "", "```diff", fix["diff"].rstrip("\n"),
                "```"]
    if doc["versions"]:
        out += ["", "Versions: " + ", ".join(f"{k} {v}" for k, v in doc["versions"].items())]
    return "\n".join(out) + "\n"


def write_session_report(path: Path, result: SessionResult,
                         merge: MergeAdvice | None = None) -> list[Path]:
    """Write the report at ``path`` in the format its suffix names (``.html``/``.htm``,
    ``.md``, else JSON); returns the files written (a Markdown report gets its loss PNG
    next to it). ``merge``: the merge commands for the working tree as it was at the end.
    Raises ``OSError`` when a file cannot be written."""
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        path.write_text(html_report(result, merge), encoding="utf-8")
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
        path.write_text(markdown_report(result, name, merge), encoding="utf-8")
        return written
    path.write_text(json.dumps(session_json(result, merge), indent=2) + "\n", encoding="utf-8")
    return [path]
