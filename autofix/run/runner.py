"""Runs a (patched) script in a child interpreter, under the probe, with bounded output.

The child runs ``autofix/run/child/bootstrap.py`` with the user's interpreter (``--python``):
the patched source lives in a private temporary directory, while ``__file__``, ``sys.argv[0]``
and tracebacks name the user's original path and the cwd is the user's.

Every process a run starts ends with the run, whatever session or process group it is in,
and none outlives autofix, even a ``kill -9`` of it: the child runs under the supervisor
(``autofix/run/supervisor.py``: a child subreaper that watches a pipe only autofix holds)
and, where this machine allows, in a cgroup of its own (:mod:`autofix.run.cgroups`).
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from autofix.errors import AutofixError
from autofix.run import cgroups
from autofix.run.child.contract import Env
from autofix.run.probe_events import BOOTSTRAP, read_probe
from autofix.run.sandbox import Confinement, confine, scrub_env
from autofix.settings import LAUNCHERS, Settings
from autofix.types import ProbeReport, RunOutcome, RunResult

#: Bytes of the child's combined stdout/stderr kept (the tail); the rest is only counted.
OUTPUT_TAIL_BYTES = 256 * 1024
#: Seconds between SIGTERM and SIGKILL when a run is stopped.
KILL_GRACE_SECONDS = 3.0
#: The supervisor every run's command is started under (executed by path).
SUPERVISOR = Path(__file__).with_name("supervisor.py")

_VERSIONS_SNIPPET = (
    "import json, sys, importlib.metadata as m\n"
    "out = {'python': '%d.%d.%d' % sys.version_info[:3]}\n"
    "for d in ('torch', 'transformers', 'datasets', 'accelerate', 'tensorflow', 'tf-keras',"
    " 'keras'):\n"
    "    try: out[d] = m.version(d)\n"
    "    except m.PackageNotFoundError: pass\n"
    "print(json.dumps(out))\n"
)


class WarmStart(Protocol):
    """A run started through the warm interpreter (:class:`autofix.run.warm.WarmRun`)."""

    cmd: list[str]

    def ran(self) -> bool: ...


class WarmRuns(Protocol):
    """What the runner asks of a session's warm interpreter (:mod:`autofix.run.warm`)."""

    def prepare(self, script: Path, cmd: Sequence[str], env: Mapping[str, str],
                folder: Path) -> WarmStart | None: ...

    def settle(self) -> None: ...


@dataclass(frozen=True)
class RunSpec:
    """One run: the script (its real path), the session's :class:`Settings` (interpreter,
    arguments, folder, timeout, step budget, launcher, sandbox, extra environment), this
    run's own extra environment on top of ``settings.env`` (the preflight switches, a
    rerun's CUDA variables) and the event that cancels it (Ctrl-C, drift found)."""

    script: Path
    settings: Settings = field(default_factory=Settings)
    env: Mapping[str, str] = field(default_factory=dict)
    cancel: threading.Event | None = None
    #: The user's modules as they are on the fix branch (absolute path -> text): the child
    #: imports these instead of the files on disk (``autofix/run/child/modules.py``).
    modules: Mapping[str, str] = field(default_factory=dict)
    #: The session's warm interpreter (:class:`autofix.run.warm.WarmInterpreter`): the run
    #: is a fork of it where it can be, else a fresh interpreter (``None``: always).
    warm: WarmRuns | None = field(default=None, compare=False)

    @property
    def environment(self) -> dict[str, str]:
        """The extra environment of this run: the session's, then the run's own."""
        return {**self.settings.env, **self.env}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def launch_command(spec: RunSpec, patched: Path) -> list[str]:
    """The child's argv: the bootstrap directly, or the bootstrap as the script that
    ``torchrun`` / ``accelerate launch`` starts once per rank (so the probe runs in every
    rank). ``torchrun --standalone`` and accelerate's ``--main_process_port`` get a free
    local port, so concurrent runs do not collide. Raises :class:`AutofixError` for an
    unknown launcher."""
    s = spec.settings
    boot = [str(BOOTSTRAP), str(patched), str(spec.script), *s.args]
    n = str(s.nproc_per_node)
    if s.launcher == "torchrun":
        return [s.python, "-m", "torch.distributed.run", "--standalone",
                f"--nproc-per-node={n}", *boot]
    if s.launcher == "accelerate":  # --multi_gpu starts N processes (gloo on CPU)
        return [s.python, "-m", "accelerate.commands.launch", "--num_processes", n,
                "--num_machines", "1", "--multi_gpu", "--mixed_precision", "no",
                "--dynamo_backend", "no", "--main_process_port", str(_free_port()), *boot]
    if s.launcher:
        raise AutofixError(f"unknown launcher {s.launcher!r}",
                           hint=f"--launcher is one of {', '.join(LAUNCHERS)}")
    return [s.python, *boot]


def target_versions(python: str) -> dict[str, str]:
    """Versions of Python and the ML libraries installed for interpreter ``python``.

    Returns e.g. ``{"python": "3.11.7", "transformers": "5.24.0", ...}``.
    Raises :class:`AutofixError` (one line, no hint) when ``python`` cannot be started, is
    not a Python interpreter (``/bin/ls``), or fails. Run from an empty folder, so no file
    of the folder autofix runs in is imported by it.
    """
    try:  # from an empty folder: `python -c` puts its folder first on sys.path, and a
        # json.py or torch.py in the user's folder must not run outside the sandbox
        with tempfile.TemporaryDirectory(prefix="autofix-versions-") as empty:
            done = contained_run([python, "-c", _VERSIONS_SNIPPET], timeout=60,
                                 cwd=Path(empty))
    except OSError as exc:
        raise AutofixError(f"--python {python} cannot be run: "
                           f"{exc.strerror or exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise AutofixError(f"--python {python} gave no answer in 60 s to `python -c`") \
            from exc
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
        if not isinstance(data, dict) or "python" not in data:
            raise ValueError(data)
    except (ValueError, IndexError):
        raise AutofixError(_not_python(python, done)) from None
    return {str(k): str(v) for k, v in data.items()}


def _not_python(python: str, done: subprocess.CompletedProcess[str]) -> str:
    """The one-line error for an interpreter that did not answer the version program."""
    lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
    if any(ln.startswith("Traceback") for ln in lines) or \
            any(ln.startswith(("SyntaxError", "ImportError", "ModuleNotFoundError"))
                for ln in lines):
        return f"--python {python} is a Python that fails to start: {lines[-1][:160]}"
    return (f"--python {python} is not a Python 3 interpreter (it did not run "
            f"`python -c`; exit code {done.returncode})")


class _OutputPump(threading.Thread):
    """Drains the child's pipe, keeping a bounded tail and reporting the last line."""

    def __init__(self, stream: object, on_line: Callable[[str], None] | None) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.on_line = on_line
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.total = 0

    def run(self) -> None:
        read = self.stream.read1  # type: ignore[attr-defined]
        while chunk := read(65536):
            self.total += len(chunk)
            self.tail.append(chunk)
            self.tail_size += len(chunk)
            while self.tail_size - len(self.tail[0]) >= OUTPUT_TAIL_BYTES:
                self.tail_size -= len(self.tail.popleft())
            if self.on_line is not None:
                pieces = chunk.replace(b"\r", b"\n").split(b"\n")
                last = next((p for p in reversed(pieces) if p.strip()), b"")
                if last:
                    self.on_line(last.decode("utf-8", "replace").strip())

    def text(self) -> str:
        data = b"".join(self.tail)[-OUTPUT_TAIL_BYTES:]
        return data.decode("utf-8", "replace")


def kill_group(proc: subprocess.Popen[Any], cgroup: Path | None = None) -> None:
    """Stop a supervised run: SIGTERM to the supervisor's process group (the supervisor
    passes it to every process of the run, waits its grace, then kills what is left),
    SIGUSR1 (kill at once) when it takes longer, SIGKILL to the group as the last resort,
    and the run's cgroup emptied and removed.

    A second Ctrl-C during the grace cuts it short: everything is still killed before the
    interrupt propagates, so no process of the run outlives autofix.
    """
    interrupted = False
    try:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=KILL_GRACE_SECONDS + 2)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if proc.poll() is None:
            try:
                os.kill(proc.pid, signal.SIGUSR1)
                proc.wait(timeout=2)
            except (ProcessLookupError, subprocess.TimeoutExpired, KeyboardInterrupt):
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        cgroups.remove(cgroup)
    if interrupted:
        raise KeyboardInterrupt


def supervised(cmd: list[str]) -> tuple[list[str], int, Path | None]:
    """``cmd`` under the supervisor: the argv to start, the fd to pass it (the read end of
    the pipe autofix holds the write end of: close it once the process is started, and
    the write end, :func:`release`, when the run is over) and the run's cgroup."""
    read, write = os.pipe()
    _WRITE_ENDS[read] = write
    cgroup = cgroups.make()
    return ([sys.executable, "-I", str(SUPERVISOR), str(read), str(cgroup or ""),
             str(KILL_GRACE_SECONDS), "--", *cmd], read, cgroup)


#: The write end of each supervisor's watch pipe, by its read end (closed by release()).
_WRITE_ENDS: dict[int, int] = {}


def release(read: int) -> None:
    """Close both ends of the watch pipe of a supervisor that has ended."""
    for fd in (read, _WRITE_ENDS.pop(read, -1)):
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass


def contained_run(cmd: list[str], input: str | None = None, timeout: float | None = None,
                  cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """:func:`subprocess.run` (text, output captured) under the supervisor: the process and
    any it starts end with it, at the timeout, and with autofix. Raises ``OSError`` when
    ``cmd[0]`` cannot be found, ``subprocess.TimeoutExpired`` past ``timeout``."""
    if shutil.which(cmd[0]) is None:
        raise FileNotFoundError(2, "no such executable file", cmd[0])
    argv, read, cgroup = supervised(cmd)
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if input is not None
                                else subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, pass_fds=(read,),
                                start_new_session=True, cwd=cwd)
    except BaseException:
        release(read)
        cgroups.remove(cgroup)
        raise
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except BaseException:
        kill_group(proc, cgroup)
        proc.communicate()
        raise
    finally:
        release(read)
    cgroups.remove(cgroup)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


class _StepTail:
    """Follows the probe file while the child runs and reports each ``step`` event
    (``on_step(step, loss, total)``, total: the script's own length in steps as the probe
    read it, 0 when unknown) as it arrives: autofix's own step counter, live. In a
    distributed launch only rank 0's steps are reported (every rank steps alike; one
    progress line per step, not one per rank)."""

    def __init__(self, path: Path,
                 on_step: Callable[[int, float | None, int], None] | None) -> None:
        self.path = path
        self.on_step = on_step
        self.offset = 0

    def poll(self) -> None:
        if self.on_step is None or not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            data = fh.read()
        end = data.rfind(b"\n") + 1  # only whole lines; a torn one waits for the next poll
        self.offset += end
        for raw in data[:end].splitlines():
            try:
                event = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if event.get("event") == "step" and event.get("rank") in (None, 0):
                loss = event.get("loss")
                try:
                    value = None if loss is None else float(loss)
                except (TypeError, ValueError):
                    value = None
                total = event.get("total")
                self.on_step(int(event.get("step", 0)), value,
                             total if isinstance(total, int) and total > 0 else 0)


def run_script(
    spec: RunSpec, source: str, on_line: Callable[[str], None] | None = None,
    on_step: Callable[[int, float | None, int], None] | None = None,
) -> RunResult:
    """Run ``source`` as if it were ``spec.script`` and return what happened.

    ``on_line`` gets the child's latest output line, ``on_step(step, loss, total)`` each
    optimizer step the probe records (total: the script's own length in steps, 0 when
    unknown), both while the child runs (from this thread or the pump's).

    Standard input is closed (``/dev/null``) so a script that reads it gets EOF instead of
    hanging. Raises ``KeyboardInterrupt`` after killing the child when the user interrupts;
    never raises for the script's own failures (those are in the result).
    """
    with tempfile.TemporaryDirectory(prefix="autofix-run-") as tmp:
        patched = Path(tmp) / spec.script.name
        patched.write_bytes(source.encode("utf-8"))  # line endings kept as they are
        probe_file = Path(tmp) / "probe.jsonl"
        sandbox = spec.settings.sandbox
        env = {**os.environ, **spec.environment}
        if sandbox is not None:
            env = scrub_env(env, sandbox.pass_env)
        env[Env.PROBE_FILE] = str(probe_file)
        env[Env.MAX_STEPS] = str(spec.settings.max_steps)
        if spec.modules:
            env[Env.PATCHED_MODULES] = json.dumps(_write_modules(spec.modules, Path(tmp)))
        env.setdefault("PYTHONUNBUFFERED", "1")
        cmd = launch_command(spec, patched)
        started = time.monotonic()
        if spec.warm is not None and sandbox is None:  # a fork of the session's zygote
            warm = spec.warm.prepare(spec.script, cmd, env, Path(tmp))
            if warm is not None:
                try:
                    result = _supervise(spec, warm.cmd, env, probe_file, started, on_line,
                                        _StepTail(probe_file, on_step))
                finally:
                    spec.warm.settle()
                if warm.ran():
                    return result
                probe_file.unlink(missing_ok=True)  # the zygote failed: run it cold
                started = time.monotonic()
        confined = confine(cmd, sandbox, python=spec.settings.python, env=env,
                           cwd=spec.settings.cwd, run_dir=Path(tmp)) \
            if sandbox else Confinement(cmd)
        try:
            return _supervise(spec, confined.cmd, env, probe_file, started, on_line,
                             _StepTail(probe_file, on_step))
        finally:
            confined.close()


def _write_modules(modules: Mapping[str, str], folder: Path) -> dict[str, str]:
    """Write each patched module into ``folder``; ``{real path: patched file}``."""
    out = {}
    for n, (real, text) in enumerate(sorted(modules.items())):
        patched = folder / f"module{n}-{Path(real).name}"
        patched.write_bytes(text.encode("utf-8"))
        out[real] = str(patched)
    return out


def _supervise(spec: RunSpec, cmd: list[str], env: dict[str, str], probe_file: Path,
               started: float, on_line: Callable[[str], None] | None,
               steps: _StepTail) -> RunResult:
    """Start ``cmd``, enforce the timeout and cancel, and collect the result."""
    if shutil.which(cmd[0]) is None:
        raise AutofixError(f"cannot start {spec.settings.python!r}: no such file")
    argv, read, cgroup = supervised(cmd)
    try:
        proc = subprocess.Popen(
            argv, cwd=spec.settings.cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            pass_fds=(read,),
        )
    except OSError as exc:
        release(read)
        cgroups.remove(cgroup)
        raise AutofixError(f"cannot start {spec.settings.python!r}: {exc}") from exc
    pump = _OutputPump(proc.stdout, on_line)
    outcome: RunOutcome | None = None
    try:  # whatever interrupts autofix from here on, every process of the run dies first
        pump.start()
        ticks = 0
        while proc.poll() is None:
            ticks += 1
            if ticks % 5 == 0:  # every 0.25 s
                steps.poll()
            timeout = spec.settings.timeout
            if timeout is not None and time.monotonic() - started > timeout:
                outcome = RunOutcome.TIMEOUT
                break
            if spec.cancel is not None and spec.cancel.is_set():
                raise KeyboardInterrupt
            time.sleep(0.05)
    except BaseException:
        kill_group(proc, cgroup)
        release(read)
        pump.join(timeout=5)
        raise
    kill_group(proc, cgroup)  # the supervisor has killed what the script left behind
    release(read)
    pump.join(timeout=10)
    seconds = time.monotonic() - started
    steps.poll()
    probe = read_probe(probe_file)
    teardown = ""
    if outcome is None:
        teardown = teardown_failure(spec.settings, proc.returncode, probe)
        if proc.returncode == 0 or teardown:
            outcome = RunOutcome.BUDGET if probe.budget_reached else RunOutcome.OK
        else:
            outcome = RunOutcome.FAILED
    return RunResult(
        outcome=outcome,
        returncode=proc.returncode,
        seconds=seconds,
        output_tail=pump.text(),
        output_bytes=pump.total,
        probe=probe,
        env_overrides=spec.environment,
        teardown=teardown,
    )


def teardown_failure(settings: Settings, returncode: int | None, probe: ProbeReport) -> str:
    """Why a distributed launch's non-zero exit is not the script's failure, or ``""``.

    It is not when every one of the ``nproc_per_node`` ranks' probes saw the script end
    with code 0 (its last event, written after the script's own code returned) and no
    rank raised: a process then failed at exit. Measured on a 2-rank gloo ``accelerate
    launch`` of a Trainer stopped at the step budget, in about 1 run of 10: both ranks'
    ``exit`` events with code 0, then rank 1 aborts in the interpreter's teardown
    (``terminate called without an active exception``, SIGABRT: a native thread still
    running when the process ends), the launcher sends SIGTERM to rank 0 and raises
    ``ChildFailedError``; pytorch/gloo#168 calls such failures "a destruction time
    problem that is only triggered every so often". Returns the reason, worded for the
    report's warnings.
    """
    if not settings.launcher or returncode in (0, None) or probe.exception is not None:
        return ""
    ranks = settings.nproc_per_node
    if sorted(probe.exits) != list(range(ranks)) or any(probe.exits.values()):
        return ""
    return (f"the launcher exited with code {returncode} after the script had ended "
            f"cleanly in all {ranks} ranks: a process failed at exit, after the script's "
            f"code returned (the distributed backend's teardown, or an atexit handler); "
            f"the run counts as trained")


