"""Crash safety: ``kill -9`` of autofix at random moments, and what it leaves behind.

Each session repairs a small project in a scratch repository through the real CLI and is
killed (SIGKILL, autofix's process alone, as the OOM killer or a closed laptop would) at a
random moment of its run: during a run of the script, a recipe, a commit; every fourth
session is a batch of 4 scripts with ``--jobs 4``. The script
(``tests/scripts/cuda_literal``: a stand-in for torch, so each session is a few seconds)
first starts a grandchild in its own session (``start_new_session=True``) that would
sleep for minutes. After each kill the benchmark checks:

- ``git fsck --strict`` is clean (broken refs or objects count as "broken");
- HEAD, the current branch, the index and every work-tree file are byte-identical
  ("changed files");
- no process of the session is left: the grandchildren (their pids are written outside
  the repository) and any process whose command line names the scratch folder ("stray");
- a ``--resume`` of the branch (when the kill left one) or a fresh session ends with
  exit 0 and the fix on the branch ("failed resumes").

Printed: sessions, kills, broken, changed files, stray processes, failed resumes (all but
the first two should be 0), and the kill moments.

Usage: nice python benchmarks/bench_kill.py [--sessions 50] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "tests" / "scripts" / "cuda_literal"
SPAWN = ("import os, subprocess, sys\n"
         "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],\n"
         "                     start_new_session=True)\n"
         "with open(os.environ['BENCH_PIDS'], 'a') as fh:\n"
         "    fh.write(f'{p.pid}\\n')\n")
SCRIPTS = ("a", "b", "c", "d")


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)


def scratch(base: Path, batch: bool) -> Path:
    repo = base / "repo"
    for folder in (SCRIPTS if batch else ("",)):
        (repo / folder).mkdir(parents=True, exist_ok=True)
        (repo / folder / "train.py").write_text(SPAWN + (PROJECT / "train.py").read_text())
        shutil.copy(PROJECT / "torch.py", repo / folder / "torch.py")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=bench", "-c", "user.email=b@b", "commit", "-q", "-m", "mine")
    return repo


def state(repo: Path) -> dict[str, bytes | str]:
    """HEAD, the checked-out branch, the index and every work-tree file."""
    found: dict[str, bytes | str] = {
        "HEAD": git(repo, "rev-parse", "HEAD").stdout,
        "branch": git(repo, "symbolic-ref", "HEAD").stdout,
        "index": (repo / ".git" / "index").read_bytes()}
    for path in sorted(repo.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(repo).parts:
            found[str(path.relative_to(repo))] = path.read_bytes()
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def strays(base: Path, pids: Path) -> list[int]:
    """Processes left: the grandchildren, and any naming ``base`` on its command line."""
    left = [int(p) for p in pids.read_text().split()] if pids.exists() else []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if str(base).encode() in cmdline:
                left.append(int(entry.name))
    return sorted(p for p in set(left) if alive(p))


def command(batch: bool) -> list[str]:
    base = [sys.executable, "-m", "autofix"]
    return [*base, "batch", *(f"{s}/train.py" for s in SCRIPTS), "--jobs", "4"] if batch \
        else [*base, "train.py"]


def session(n: int, delay: float, batch: bool, env: dict[str, str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix=f"bench-kill-{n}-") as tmp:
        base = Path(tmp)
        repo = scratch(base, batch)
        before = state(repo)
        pids = base / "pids"
        env = {**env, "BENCH_PIDS": str(pids)}
        proc = subprocess.Popen(command(batch), cwd=repo, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        killed = proc.poll() is None
        if killed:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10  # the supervisors see autofix's end and kill
        while strays(base, pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = strays(base, pids)
        for pid in left:  # clean up for the next session
            subprocess.run(["kill", "-9", str(pid)], capture_output=True)
        fsck = git(repo, "fsck", "--strict")
        broken = fsck.returncode != 0 or "error" in fsck.stderr.lower()
        after = state(repo)
        changed = [k for k in {**before, **after} if before.get(k) != after.get(k)]
        branches = git(repo, "for-each-ref", "--format=%(refname:short)",
                       "refs/heads/autofix").stdout.split()
        again = command(batch) + (["--resume"] if branches and not batch else [])
        if batch and branches:
            for branch in branches:  # a batch refuses existing branches: drop them
                git(repo, "branch", "-D", branch)
        done = subprocess.run(again, cwd=repo, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=600)
        wanted = [(f"autofix/{s}/train", f"{s}/train.py") for s in SCRIPTS] if batch \
            else [("autofix/train", "train.py")]
        fixed = all("is_available" in git(repo, "show", f"{branch}:{path}").stdout
                    for branch, path in wanted)
        for pid in strays(base, pids):
            subprocess.run(["kill", "-9", str(pid)], capture_output=True)
        return {"killed": killed, "broken": broken, "changed": changed, "stray": len(left),
                "resumed": done.returncode == 0 and fixed, "delay": delay, "code": done.returncode,
                "resume_out": done.stdout[-400:] + done.stderr[-400:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as tmp:  # how long an unkilled session takes
        repo = scratch(Path(tmp), False)
        started = time.monotonic()
        subprocess.run(command(False), cwd=repo, capture_output=True,
                       env={**env, "BENCH_PIDS": str(Path(tmp) / "pids")})
        length = time.monotonic() - started
    print(f"an unkilled session: {length:.1f} s; kills uniform in [0.1, {length:.1f}] s "
          "(batches: x 1.5)", flush=True)
    rng = random.Random(args.seed)
    results = []
    for n in range(args.sessions):
        batch = n % 4 == 3
        delay = rng.uniform(0.1, length * (1.5 if batch else 1.0))
        result = session(n, delay, batch, env)
        results.append(result)
        flag = "" if not (result["broken"] or result["changed"] or result["stray"]
                          or not result["resumed"]) else "  <-- " + str(
            {k: result[k] for k in ("broken", "changed", "stray", "resumed", "code", "resume_out")})
        print(f"session {n + 1:3d} {'batch ' if batch else 'single'} kill at "
              f"{delay:5.1f} s{'' if result['killed'] else ' (had ended)'}{flag}", flush=True)
    print(f"sessions {len(results)}, kills {sum(bool(r['killed']) for r in results)}, "
          f"broken {sum(bool(r['broken']) for r in results)}, "
          f"changed files {sum(len(r['changed']) for r in results)}, "  # type: ignore[arg-type]
          f"stray processes {sum(int(r['stray']) for r in results)}, "  # type: ignore[call-overload]
          f"failed resumes {sum(not r['resumed'] for r in results)}")


if __name__ == "__main__":
    main()
