"""Runs a (patched) script in a child interpreter, under the probe, with bounded output.

The child runs ``autofix/run/child/bootstrap.py`` with the user's interpreter (``--python``):
the patched source lives in a private temporary directory, while ``__file__``, ``sys.argv[0]``
and tracebacks name the user's original path and the cwd is the user's. The child gets its
own process group, so a timeout or Ctrl-C kills the script and every process it started.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from autofix.errors import AutofixError
from autofix.run.child.contract import Env
from autofix.run.probe_events import BOOTSTRAP, read_probe
from autofix.run.sandbox import Confinement, confine, scrub_env
from autofix.settings import LAUNCHERS, Settings
from autofix.types import RunOutcome, RunResult

#: Bytes of the child's combined stdout/stderr kept (the tail); the rest is only counted.
OUTPUT_TAIL_BYTES = 256 * 1024
#: Seconds between SIGTERM and SIGKILL when the process group is stopped.
KILL_GRACE_SECONDS = 3.0

_VERSIONS_SNIPPET = (
    "import json, sys, importlib.metadata as m\n"
    "out = {'python': '%d.%d.%d' % sys.version_info[:3]}\n"
    "for d in ('torch', 'transformers', 'datasets', 'accelerate', 'tensorflow', 'tf-keras',"
    " 'keras'):\n"
    "    try: out[d] = m.version(d)\n"
    "    except m.PackageNotFoundError: pass\n"
    "print(json.dumps(out))\n"
)


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
    Raises :class:`AutofixError` when the interpreter cannot be started.
    """
    try:
        done = subprocess.run(
            [python, "-c", _VERSIONS_SNIPPET],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AutofixError(
            f"cannot run the interpreter {python!r}: {exc}",
            hint="--python must name a Python executable (e.g. path/to/venv/bin/python)",
        ) from exc
    if done.returncode != 0:
        raise AutofixError(
            f"the interpreter {python!r} failed: {done.stderr.strip()[-300:]}",
            hint="--python must name a working Python 3 executable",
        )
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError) as exc:
        raise AutofixError(f"the interpreter {python!r} is not a usable Python 3") from exc
    return {str(k): str(v) for k, v in data.items()}


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


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's process group, then SIGKILL whatever is left after a grace.

    A second Ctrl-C during the grace cuts it short: the group is still SIGKILLed before
    the interrupt propagates, so no child outlives autofix.
    """
    interrupted = False
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=KILL_GRACE_SECONDS)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    except KeyboardInterrupt:
        interrupted = True
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    if interrupted:
        raise KeyboardInterrupt


class _StepTail:
    """Follows the probe file while the child runs and reports each ``step`` event
    (``on_step(step, loss)``) as it arrives: autofix's own step counter, live."""

    def __init__(self, path: Path, on_step: Callable[[int, float | None], None] | None) -> None:
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
            if event.get("event") == "step":
                loss = event.get("loss")
                try:
                    value = None if loss is None else float(loss)
                except (TypeError, ValueError):
                    value = None
                self.on_step(int(event.get("step", 0)), value)


def run_script(
    spec: RunSpec, source: str, on_line: Callable[[str], None] | None = None,
    on_step: Callable[[int, float | None], None] | None = None,
) -> RunResult:
    """Run ``source`` as if it were ``spec.script`` and return what happened.

    ``on_line`` gets the child's latest output line, ``on_step(step, loss)`` each optimizer
    step the probe records, both while the child runs (from this thread or the pump's).

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
        confined = confine(cmd, sandbox) if sandbox else Confinement(cmd)
        started = time.monotonic()
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
    try:
        proc = subprocess.Popen(
            cmd, cwd=spec.settings.cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )
    except OSError as exc:
        raise AutofixError(f"cannot start {spec.settings.python!r}: {exc}") from exc
    pump = _OutputPump(proc.stdout, on_line)
    outcome: RunOutcome | None = None
    try:  # whatever interrupts autofix from here on, the child's group dies first
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
        _kill_group(proc)
        pump.join(timeout=5)
        raise
    _kill_group(proc)  # also reaps grandchildren left behind by a finished script
    pump.join(timeout=10)
    seconds = time.monotonic() - started
    steps.poll()
    probe = read_probe(probe_file)
    if outcome is None:
        if proc.returncode == 0:
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
    )


