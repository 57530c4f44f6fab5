"""The plain PyTorch set through autofix: false findings on the healthy scripts, detections
and repairs per fault kind.

Every script of ``sample_scripts/plain/manifest.toml`` is copied (with ``sample_scripts/data``
as ``data/``) into its own scratch git repository and repaired by the real CLI
(:func:`bench_corpus.autofix_session`). Per script:

- healthy: clean when autofix exits 0 with status ``clean``, no finding and no commit; a
  false finding is any finding or a category on a run; a false fix is any commit;
- fault: detected when the expected category is named (a commit's category, the last run's
  category, or a finding's kind); repaired when autofix exits 0 with status ``fixed`` and
  the branch it leaves trains (the script rerun on the branch with plain ``python`` exits 0);
  wrong category when a kept commit is of another category, or when, not repaired,
  another category was named; a detour when it was repaired under the right category
  after another category's fix was tried and dropped.

Printed: one row per script, then the healthy figure and a table per fault kind, and the
wall time.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/bench_plain.py \\
        [--only healthy | --only KIND ...] [--jobs 2] [--max-steps 60]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib
from bench_corpus import PYTHONS, ROOT, autofix_session, scratch

PLAIN = ROOT / "sample_scripts" / "plain"


@dataclass
class Row:
    path: str
    kind: str
    status: str
    exit_code: int
    named: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    branch_trains: bool = False
    seconds: float = 0.0
    kept: list[str] = field(default_factory=list)  # the categories of the kept commits

    @property
    def healthy(self) -> bool:
        return self.kind == "healthy"

    @property
    def clean(self) -> bool:
        return (self.exit_code == 0 and self.status == "clean" and not self.named
                and not self.commits)

    @property
    def detected(self) -> bool:
        return self.kind in self.named

    @property
    def repaired(self) -> bool:
        return self.exit_code == 0 and self.status == "fixed" and self.branch_trains

    @property
    def wrong(self) -> bool:
        """A kept commit of another category, or (not repaired) another category named."""
        if any(k != self.kind for k in self.kept):
            return True
        return not self.repaired and any(n != self.kind for n in self.named
                                         if n not in ("", "unknown"))

    @property
    def detour(self) -> bool:
        """Repaired under the right category after another category's fix was tried and
        dropped (a diverging loss: clipping tried before the learning rate)."""
        return self.repaired and not self.wrong and any(n != self.kind for n in self.named)


def entries() -> list[dict[str, str]]:
    return list(tomllib.loads((PLAIN / "manifest.toml").read_text())["script"])


def branch_trains(repo: Path, script: str, timeout: float) -> bool:
    """The script on the ``bench`` branch, run with plain ``python`` (no probe), exits 0."""
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-f", "bench"], check=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "OMP_NUM_THREADS": "1"}
    try:
        done = subprocess.run([str(PYTHONS["pt"]), script], cwd=repo, capture_output=True,
                              env=env, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def run_one(entry: dict[str, str], max_steps: int, timeout: float) -> Row:
    path = PLAIN / entry["path"]
    with tempfile.TemporaryDirectory(prefix="bench-plain-") as tmp:
        repo = scratch(Path(tmp), path.parent, path.name)
        code, doc, seconds = autofix_session(repo, path.name, PYTHONS["pt"], max_steps,
                                             timeout)
        fixes: list[dict[str, Any]] = doc.get("fixes", [])
        trains = bool(fixes) and doc.get("status") == "fixed" and branch_trains(
            repo, path.name, timeout)
    findings = [str(f.get("kind", "?")) for f in doc.get("findings", [])]
    named = [str(f["category"]) for f in fixes]
    named += [str(r["category"]) for r in doc.get("runs", []) if r.get("category")]
    named += findings
    return Row(entry["path"], entry["kind"], str(doc.get("status", "error")), code,
               sorted(set(named)), [str(f["recipe"]) for f in fixes], findings, trains,
               seconds, [str(f["category"]) for f in fixes])


def report(rows: list[Row]) -> None:
    healthy = [r for r in rows if r.healthy]
    if healthy:
        false_findings = [r for r in healthy if r.named]
        false_fixes = [r for r in healthy if r.commits]
        print(f"\nhealthy: {sum(r.clean for r in healthy)} of {len(healthy)} clean; "
              f"false findings {len(false_findings)}, false fixes {len(false_fixes)}")
        for r in false_findings + false_fixes:
            print(f"  {r.path}: {','.join(r.named)} {','.join(r.commits)}")
    kinds: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        if not r.healthy:
            kinds[r.kind].append(r)
    if kinds:
        print(f"\n{'kind':24} {'scripts':>7} {'detected':>8} {'repaired':>8} {'wrong':>5} "
              f"{'detour':>6}")
        for kind, group in [*sorted(kinds.items()),
                            ("all", [r for g in kinds.values() for r in g])]:
            print(f"{kind:24} {len(group):7} {sum(r.detected for r in group):8} "
                  f"{sum(r.repaired for r in group):8} {sum(r.wrong for r in group):5} "
                  f"{sum(r.detour for r in group):6}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None,
                        help="kinds to run (healthy or category ids) or script stems")
    parser.add_argument("--jobs", type=int, default=1, help="sessions at once")
    parser.add_argument("--max-steps", type=int, default=60)
    parser.add_argument("--timeout", type=float, default=300)
    opts = parser.parse_args()
    selected = [e for e in entries() if not opts.only or e["kind"] in opts.only
                or Path(e["path"]).stem in opts.only]
    start = time.perf_counter()
    print(f"{'script':48} {'kind':24} {'status':8} {'exit':4} {'named / commits':40}")
    rows = []
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = [pool.submit(run_one, e, opts.max_steps, opts.timeout) for e in selected]
        for future in futures:
            r = future.result()
            rows.append(r)
            mark = ("clean" if r.clean else "FALSE-FINDING") if r.healthy else \
                ("repaired" if r.repaired else "detected" if r.detected else "-") + \
                (" WRONG" if r.wrong else " detour" if r.detour else "")
            what = ",".join(r.named) + (" | " + ",".join(r.commits) if r.commits else "")
            print(f"{r.path:48} {r.kind:24} {r.status:8} {r.exit_code:4} {what or '-':40} "
                  f"{r.seconds:5.0f}s  {mark}", flush=True)
    report(rows)
    print(f"time: {time.perf_counter() - start:.0f} s wall")


if __name__ == "__main__":
    main()
