"""Runs through the warm interpreter against cold ones, on real processes: the same
result, a timeout that leaves nothing behind, a zygote that dies (before or under a run)
replaced by a cold run, and nothing left once the session closes. One zygote for the
module (its imports are the cost)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from autofix.run.runner import RunSpec, run_script
from autofix.run.warm import ZYGOTE, WarmInterpreter
from autofix.settings import Settings
from autofix.types import RunOutcome

pytestmark = pytest.mark.e2e

LOOP = """\
import os, sys
import torch
print("args", sys.argv[1:], "cwd", os.path.basename(os.getcwd()), "var", os.environ.get("MYVAR"))
torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
for step in range(4):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
print("loss", round(loss.item(), 4))
raise SystemExit(int(os.environ.get("CODE", "0")))
"""

HANG = """\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
escaped = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                           start_new_session=True)
with open("pids.txt", "w") as fh:
    fh.write(f"{os.getpid()} {child.pid} {escaped.pid}")
print("started", flush=True)
time.sleep(300)
"""

#: Kills the process it was forked from when that is the zygote (a zygote dying under a
#: run); a cold run is left alone.
KILL_PARENT = """\
import os, time
with open(f"/proc/{os.getppid()}/cmdline", "rb") as fh:
    parent = fh.read()
if b"zygote.py" in parent:
    os.kill(os.getppid(), 9)
    time.sleep(30)
print("cold ran it")
"""


#: numpy's threaded matrix product (OpenBLAS), and the thread count it runs with.
BLAS = """\
import os
import numpy as np
a = np.arange(250000, dtype=np.float64).reshape(500, 500) / 250000
print("blas", os.environ["OMP_NUM_THREADS"], round(float((a @ a).sum()), 6))
"""

#: Prints what the zygote's thread check says before and after a native thread starts.
ZYGOTE_THREAD = """\
import ctypes, importlib.util, time
spec = importlib.util.spec_from_file_location("zygote", {zygote!r})
zygote = importlib.util.module_from_spec(spec); spec.loader.exec_module(zygote)
import numpy
print("before", repr(zygote.Zygote.unsafe_threads()))
libc = ctypes.CDLL(None)
SLEEP = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(lambda _: libc.sleep(30))
handle = ctypes.c_ulong()
libc.pthread_create(ctypes.byref(handle), None, SLEEP, None)
time.sleep(0.5)
print("after", repr(zygote.Zygote.unsafe_threads()))
"""

#: Prints whether ``Trainer.__init__`` shows its real parameters or the probe's
#: ``(*args, **kwargs)``, whether it takes ``**kwargs``, and its standard input.
SIGNATURE = """\
import inspect, sys
import transformers
params = inspect.signature(transformers.Trainer.__init__, follow_wrapped=False).parameters
print("processing_class" if "processing_class" in params else "varargs",
      any(p.kind is p.VAR_KEYWORD for p in params.values()),
      sys.stdin.read() if not sys.stdin.isatty() else "")
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("zygote")
    for name, text in (("loop.py", LOOP), ("hang.py", HANG), ("kill_parent.py", KILL_PARENT),
                       ("blas.py", BLAS)):
        (path / name).write_text(text)
    return path


@pytest.fixture(scope="module")
def settings(folder: Path) -> Settings:
    offline = {k: "1" for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",
                                "TRANSFORMERS_OFFLINE")}  # as the tests' own fixture sets
    return Settings(python=sys.executable, cwd=folder, env={"MYVAR": "7", "CODE": "3",
                                                           "OMP_NUM_THREADS": "1",
                                                           **offline},
                    args=("--a", "b"), timeout=60)


@pytest.fixture(scope="module")
def warm(settings: Settings) -> Iterator[WarmInterpreter]:
    interpreter = WarmInterpreter(settings)
    interpreter.start()
    yield interpreter
    interpreter.close()


def run(folder: Path, settings: Settings, name: str, warm: WarmInterpreter | None,
        env: dict[str, str] | None = None) -> tuple[object, ...]:
    script = folder / name
    spec = RunSpec(script, settings, env={"AUTOFIX_PREFLIGHT": "1", **(env or {})},
                   warm=warm)
    result = run_script(spec, script.read_text())
    return (result.outcome, result.returncode, result.output_tail,
            [(s.step, round(s.loss or 0, 4)) for s in result.probe.steps],
            result.probe.exit_code, result.probe.versions.get("torch"))


def test_a_fork_gives_what_a_cold_run_gives(folder: Path, settings: Settings,
                                            warm: WarmInterpreter) -> None:
    cold = run(folder, settings, "loop.py", None)
    forked = run(folder, settings, "loop.py", warm)
    assert not warm.reason and "torch" in warm.modules and warm.forks == 1
    assert forked == cold
    assert cold[0] is RunOutcome.FAILED and cold[1] == 3
    assert "args ['--a', 'b'] cwd zygote" in str(cold[2]) and "var 7" in str(cold[2])
    assert len(cold[3]) == 4  # type: ignore[arg-type]  # the probe's steps, through the fork too


def test_a_timeout_kills_every_process_of_a_forked_run(folder: Path, settings: Settings,
                                                       warm: WarmInterpreter) -> None:
    import dataclasses

    (folder / "pids.txt").unlink(missing_ok=True)
    short = dataclasses.replace(settings, timeout=8)
    forks = warm.forks
    outcome = run(folder, short, "hang.py", warm)[0]
    assert outcome is RunOutcome.TIMEOUT and warm.forks == forks + 1
    pids = [int(p) for p in (folder / "pids.txt").read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [p for p in pids if alive(p)] == []  # the run, its child, the escaped one
    assert not warm.reason  # the zygote still serves


def test_a_zygote_dying_under_a_run_and_before_one_falls_back_cold(
        folder: Path, settings: Settings, warm: WarmInterpreter) -> None:
    forks = warm.forks
    result = run(folder, settings, "kill_parent.py", warm)
    assert warm.forks == forks + 1
    assert result[0] is RunOutcome.OK and "cold ran it" in str(result[2]), result
    assert warm.reason  # off for the rest of the session
    assert run(folder, settings, "loop.py", warm)[1] == 3


def test_nothing_is_left_once_the_session_closes(settings: Settings) -> None:
    interpreter = WarmInterpreter(settings)
    interpreter.start()
    interpreter.ready.wait()
    assert interpreter.proc is not None and not interpreter.reason
    supervisor = interpreter.proc.pid
    zygotes = [int(p) for p in os.listdir("/proc") if p.isdigit() and alive(int(p))
               and _parent(int(p)) == supervisor]
    interpreter.close()
    assert zygotes and not any(alive(p) for p in [supervisor, *zygotes])
    assert not interpreter.folder.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(supervisor, signal.SIGKILL)


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return -1


def test_numpys_blas_pool_does_not_keep_runs_cold(folder: Path) -> None:
    """``import numpy`` with OpenBLAS free to use 2 cores leaves its worker thread (named
    "python"): OpenBLAS stops it before a fork, so the zygote serves, and the fork's
    threaded matrix products give what a cold run gives."""
    settings = Settings(python=sys.executable, cwd=folder, env={"OMP_NUM_THREADS": "2"},
                        timeout=120)
    interpreter = WarmInterpreter(settings)
    interpreter.start()
    try:
        cold = run(folder, settings, "blas.py", None)
        forked = run(folder, settings, "blas.py", interpreter)
        assert not interpreter.reason and interpreter.forks == 1
        assert forked[:3] == cold[:3] and "blas 2 " in str(cold[2]), cold
    finally:
        interpreter.close()


def test_a_thread_that_is_not_blas_keeps_runs_cold() -> None:
    """A native thread the imports left beside OpenBLAS's pool: forking is not safe, the
    zygote says why."""
    code = ZYGOTE_THREAD.format(zygote=str(ZYGOTE))
    for omp in ("1", "2"):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env={**os.environ, "OMP_NUM_THREADS": omp}, timeout=120)
        before, after = done.stdout.splitlines()[-2:]
        assert before == "before ''", done.stdout + done.stderr
        assert after.startswith("after 'native threads started by the imports: python"), after


def test_a_tool_sees_the_libraries_unpatched(folder: Path, settings: Settings) -> None:
    """A tool forked from the zygote (the API check) sees ``Trainer.__init__``'s real
    signature and reads its standard input; a run forked from it next still has the
    probe's patch. (A zygote of its own: another test kills the module's.)"""
    script = folder / "signature.py"
    script.write_text(SIGNATURE)
    warm = WarmInterpreter(settings)
    warm.start()
    try:
        done = warm.tool(script, "request", 60)
        assert done is not None and done.returncode == 0, (done, warm.reason)
        assert done.stdout.split() == ["processing_class", "False", "request"]
        patched = run(folder, settings, "signature.py", warm)
        assert "varargs True" in str(patched[2]) and warm.forks == 1, patched
    finally:
        warm.close()
