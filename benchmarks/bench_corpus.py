"""The case corpus through autofix: how many are fixed, misclassified, wrongly fixed.

Every case of ``sample_scripts/corpus/manifest.toml`` (and of
``sample_scripts/cases/manifest.toml`` when that folder and manifest exist) is copied with
``sample_scripts/data`` (as ``data/``; a case folder's own ``data/`` wins) into its own
scratch git repository and repaired by the real CLI (``--max-steps`` small). Per case:

- fixed: autofix exited 0 with status ``fixed`` (its last run trained: exit 0 or the step
  budget reached with a finite loss), or ``clean`` for a case expected healthy;
- advised: a case without a safe recipe ended with its expected category and no commit;
- misclassified: a commit was made for a category other than the manifest's by a recipe
  other than its fix (a recipe also fixing the expected category counts as right; for a
  healthy case: any commit), or an advice case ended in another category;
- wrong fixes kept: commits left on the branch whose recipe is not the manifest's fix.

A case whose ``script`` names a file in a folder (``d45_yaml_learning_rate_string/train.py``)
is a project: the whole folder is copied (its config files with it) and the script run from
the repository root. A case with ``max_steps`` (a training symptom: it shows only after
some steps, and its fix proves itself on a falling loss) runs with that budget instead of
``--max-steps``. A case with ``fix = "pending"`` is not handled yet: it runs and is
listed, but counts in none of the totals (only as pending).

Printed: one row per case, then the totals and the wall time.

Usage: nice -n 19 python benchmarks/bench_corpus.py [--only c01 c02] [--max-steps 5]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

ROOT = Path(__file__).resolve().parent.parent
CORPORA = (ROOT / "sample_scripts" / "corpus", ROOT / "sample_scripts" / "cases")
PYTHONS = {"pt": ROOT / ".venv" / "bin" / "python", "tf": ROOT / ".venv-v4" / "bin" / "python"}


@dataclass
class Outcome:
    case: str
    expected: str
    fix: str
    status: str
    exit_code: int
    categories: list[str]
    recipes: list[str]
    final: str
    seconds: float
    #: per fix: how many candidates its recipe's runs tried (1: one way, no trial)
    tried: list[int] = field(default_factory=list)
    #: the wall time of each run that tried a candidate (kept or not)
    candidate_seconds: list[float] = field(default_factory=list)

    @property
    def pending(self) -> bool:
        """Not handled yet (``fix = "pending"``): counted in no total."""
        return self.fix == "pending"

    @property
    def fixed(self) -> bool:
        if self.fix == "none":
            return self.exit_code == 0 and self.status == "clean"
        return self.exit_code == 0 and self.status == "fixed" and self.fix != "advice"

    @property
    def advised(self) -> bool:
        return self.fix == "advice" and not self.recipes and self.final == self.expected

    @property
    def misclassified(self) -> bool:
        if self.pending:
            return False
        if self.expected == "none":
            return bool(self.categories)
        # a commit's category is its recipe's; the manifest's recipe may fix the expected
        # category as its root cause's other face (``Recipe.also_fixes``)
        wrong_commit = any(c != self.expected and r != self.fix
                           for c, r in zip(self.categories, self.recipes, strict=False))
        wrong_advice = self.fix == "advice" and self.final not in (self.expected, "")
        return wrong_commit or wrong_advice

    @property
    def wrong_kept(self) -> int:
        if self.pending:
            return 0
        return sum(1 for r in self.recipes if r != self.fix)


def tiny_models(base: Path) -> dict[str, str]:
    """The tiny Llama of ``scripts/make_tiny_llm.py`` (with and without a chat template),
    built under ``base``: the environment the language-model cases read it from (a case's
    scratch repository has no ``scripts/`` to build it)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_tiny_llm import build

    return {"AUTOFIX_TINY_LLM": str(build(base / "tiny-llm")),
            "AUTOFIX_TINY_LLM_BASE": str(build(base / "tiny-llm-base", chat_template=False))}


def cases() -> list[tuple[Path, dict[str, str]]]:
    found = []
    for folder in CORPORA:
        manifest = folder / "manifest.toml"
        if manifest.is_file():
            found += [(folder, c) for c in tomllib.loads(manifest.read_text())["case"]]
    return found


def scratch(base: Path, folder: Path, script: str) -> Path:
    repo = base / "repo"
    repo.mkdir(parents=True)
    if len(Path(script).parts) > 1:  # a project in several files: its whole folder
        shutil.copytree((folder / script).parent, (repo / script).parent)
    else:
        shutil.copy(folder / script, repo / script)
    data = folder / "data" if (folder / "data").is_dir() else ROOT / "sample_scripts" / "data"
    shutil.copytree(data, repo / "data")
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "-c", "user.name=bench", "-c", "user.email=b@b", "commit", "-q",
                    "-m", "case"], check=True)
    return repo


def autofix_session(repo: Path, script: str, python: Path, max_steps: int, timeout: float,
                    models: dict[str, str] | None = None) -> tuple[int, dict[str, Any], float]:
    """One session of the real CLI on ``script`` in the scratch repository ``repo`` (branch
    ``bench``, offline, one thread): its exit code, its JSON report (``{}`` when none was
    written) and its wall time in seconds."""
    report = repo.parent / "report.json"
    env = {**(models or {}), **os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "autofix", script, "--branch", "bench",
         "--python", str(python), "--max-steps", str(max_steps),
         "--timeout", str(timeout), "--report", str(report)],
        cwd=repo, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    doc = json.loads(report.read_text()) if report.is_file() else {}
    return done.returncode, doc, seconds


def run_case(folder: Path, case: dict[str, str], max_steps: int, timeout: float,
             models: dict[str, str] | None = None) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        repo = scratch(Path(tmp), folder, case["script"])
        code, doc, seconds = autofix_session(repo, case["script"],
                                             PYTHONS[case.get("env", "pt")], max_steps,
                                             timeout, models)
    fixes = doc.get("fixes", [])
    runs = doc.get("runs", [])
    final = runs[-1].get("category") or "" if runs and doc.get("status") != "fixed" else ""
    return Outcome(case["id"], case["category"], case["fix"], doc.get("status", "error"),
                   code, [f["category"] for f in fixes],
                   [f["recipe"] for f in fixes], final, seconds,
                   *candidate_figures(doc))


def candidate_figures(doc: dict[str, Any]) -> tuple[list[int], list[float]]:
    """From a session's report: per fix the number of candidates tried (1 when its recipe
    offered one way), and the seconds of each run that tried a candidate."""
    seconds = {r.get("n"): float(r.get("seconds", 0.0)) for r in doc.get("runs", [])}
    tried, walls = [], []
    for fix in doc.get("fixes", []):
        candidates = fix.get("candidates") or []
        tried.append(max(1, len(candidates)))
        walls += [seconds[c["run"]] for c in candidates if c.get("run") in seconds]
    return tried, walls


def value_source_recipes() -> tuple[int, int]:
    """How many recipe modules reach their target through the value-source service or the
    shared edit operators (they import ``autofix.toolkit.values``, ``.sources`` or
    ``.operators``), of how many recipe modules."""
    shared = {"autofix.toolkit.values", "autofix.toolkit.sources", "autofix.toolkit.operators"}
    modules = [p for p in (ROOT / "recipes").rglob("*.py")
               if not any(part.startswith("_") for part in p.relative_to(ROOT / "recipes").parts)]
    using = 0
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        names |= {f"{n.module}.{a.name}" for n in ast.walk(tree)
                  if isinstance(n, ast.ImportFrom) and n.module for a in n.names}
        using += bool(names & shared)
    return using, len(modules)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="case ids to run")
    parser.add_argument("--max-steps", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300)
    opts = parser.parse_args()
    selected = [(f, c) for f, c in cases() if not opts.only or c["id"] in opts.only]
    start = time.perf_counter()
    results = []
    print(f"{'case':5} {'expected':28} {'status':8} {'exit':4} {'commits':40} {'s':>6}")
    models_dir = tempfile.TemporaryDirectory(prefix="bench-corpus-models-")
    models = tiny_models(Path(models_dir.name)) if any(
        "tiny_llm(" in (f / c["script"]).read_text(encoding="utf-8") for f, c in selected
        if (f / c["script"]).is_file()) else {}
    for folder, case in selected:
        # a training symptom needs steps to show: such a case names its own budget
        out = run_case(folder, case, int(case.get("max_steps", opts.max_steps)), opts.timeout,
                       models)
        results.append(out)
        marks = ("pending" if out.pending else "fixed" if out.fixed
                 else "advised" if out.advised else "-") + \
            (" MISCLASSIFIED" if out.misclassified else "") + \
            (f" WRONG-KEPT={out.wrong_kept}" if out.wrong_kept else "")
        print(f"{out.case:5} {out.expected:28} {out.status:8} {out.exit_code:4} "
              f"{','.join(out.recipes) or out.final or '-':40} {out.seconds:6.0f}  {marks}",
              flush=True)
    wall = time.perf_counter() - start
    with_recipe = [r for r in results if r.fix not in ("advice", "none", "pending")]
    advice = [r for r in results if r.fix == "advice"]
    healthy = [r for r in results if r.fix == "none"]
    print()
    pending = [r for r in results if r.pending]
    print(f"cases: {len(results)} ({len(with_recipe)} with a recipe, {len(advice)} advice, "
          f"{len(healthy)} healthy, {len(pending)} pending)")
    print(f"fixed: {sum(r.fixed for r in with_recipe)} of {len(with_recipe)}; "
          f"advised right: {sum(r.advised for r in advice)} of {len(advice)}; "
          f"healthy left clean: {sum(r.fixed for r in healthy)} of {len(healthy)}")
    print(f"misclassified: {sum(r.misclassified for r in results)}")
    print(f"wrong fixes kept: {sum(r.wrong_kept for r in results)}")
    tried = [n for r in results for n in r.tried]
    walls = sorted(w for r in results for w in r.candidate_seconds)
    several = sum(n > 1 for n in tried)
    if tried:
        print(f"candidates: {len(tried)} fixes, {sum(tried)} candidates tried "
              f"({sum(tried) / len(tried):.2f} a fix, at most {max(tried)}; {several} fixes "
              f"tried several), wall per candidate run: "
              + (f"median {walls[len(walls) // 2]:.1f} s, worst {walls[-1]:.1f} s"
                 if walls else "none run"))
    using, modules = value_source_recipes()
    print(f"recipes through the value-source service or the shared operators: {using} of "
          f"{modules}")
    median = sorted(r.seconds for r in results)[len(results) // 2] if results else 0.0
    print(f"time: {wall:.0f} s wall, median case {median:.0f} s")


if __name__ == "__main__":
    main()
