"""The session's warm interpreter: one zygote per session, each run a fork of it.

A cold run starts a fresh ``--python`` interpreter that imports torch, transformers and
datasets again (seconds to tens of seconds). :class:`WarmInterpreter` starts, once per
session and in the background, ``autofix/run/child/zygote.py`` in that interpreter, under
the run supervisor (it dies with autofix, even a ``kill -9``): it loads the probe and those
libraries and waits. A run then starts, under its own supervisor as before, the zygote's
small client instead of the interpreter; the zygote forks, and the fork becomes the run
with the run's argv, cwd, environment, standard streams, session and cgroup
(:mod:`autofix.run.child.zygote` says how). The runner's timeouts, kills and the probe's
events work as for a cold run.

A run goes cold (today's fresh interpreter), silently, whenever the fork could differ
from it or the zygote fails: ``--cold``, a launcher (torchrun, accelerate), a sandbox, an
environment variable other than autofix's own that differs from the zygote's (a library
may have read it at import), a file in the script's folder named like a module the zygote
loaded (the script would import its own), a zygote that did not start, whose imports failed
or left threads behind, or that died before or during the run (the run is then redone
cold).
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autofix.run import cgroups
from autofix.settings import Settings

ZYGOTE = Path(__file__).with_name("child") / "zygote.py"
#: Seconds the zygote may take to import the libraries (a loaded machine: 40 s measured
#: for torch + transformers' trainer + datasets on 2 busy cores).
START_SECONDS = 300.0
#: Seconds the zygote may take to clean up after a run and answer again.
SETTLE_SECONDS = 20.0
#: Environment variables that may differ between the zygote and a run: autofix's own
#: switches (read by the probe after the fork, never by a library) and pytest's name of
#: the test running (it changes with every test of a module sharing one session).
RUN_VARIABLES = ("AUTOFIX_", "PYTEST_CURRENT_TEST")


def comparable(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the variables a run may change (:data:`RUN_VARIABLES`)."""
    return {k: v for k, v in env.items() if not k.startswith(RUN_VARIABLES)}


#: An import of TensorFlow or Keras on a line of a script or a notebook's cell source (a
#: notebook's JSON quotes each line).
_TF_IMPORT = re.compile(r'^[\s"]*(?:import|from)\s+(?:tensorflow|tf_keras|keras)\b', re.M)


def imports_tensorflow(script: Path) -> bool:
    """True when ``script`` (a ``.py`` file or a notebook) imports TensorFlow or Keras: its
    runs gain nothing from the zygote, which never imports TensorFlow (its runtime starts
    threads at import), and would carry torch beside it."""
    try:
        return _TF_IMPORT.search(script.read_text(errors="replace")) is not None
    except OSError:
        return False


def shadowing(folder: Path, modules: Sequence[str]) -> list[str]:
    """The names of ``modules`` (top-level module names) that a file or package in
    ``folder`` would shadow for a script there (``sys.path[0]``): ``name.py``, a compiled
    module, ``name/__init__.py``. A folder without ``__init__`` never shadows an installed
    package (a namespace package loses to it)."""
    suffixes = tuple(importlib.machinery.all_suffixes())
    names = set()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        if entry.is_dir():
            if any(Path(entry.path, f"__init__{s}").exists() for s in suffixes):
                names.add(entry.name)
        elif entry.name.endswith(suffixes):
            names.add(entry.name.split(".", 1)[0])
    return sorted(names & set(modules))


@dataclass
class WarmRun:
    """One run started through the zygote: the supervised command and its status file."""

    cmd: list[str]
    status: Path

    def lines(self) -> list[str]:
        try:
            return self.status.read_text().splitlines()
        except OSError:
            return []

    def ran(self) -> bool:
        """The zygote forked the run and did not die under it: its result is the run's."""
        lines = self.lines()
        return any(ln.startswith("forked ") for ln in lines) and "lost" not in lines


class WarmInterpreter:
    """The zygote of one session (``settings``): started by :meth:`start` (in the
    background), used by the runner through :meth:`prepare` and :meth:`settle`, ended by
    :meth:`close`. Every failure turns it off for the rest of the session (runs go cold)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.env = comparable(self.base_env(settings))
        self.folder = Path(tempfile.mkdtemp(prefix="autofix-warm-"))
        self.socket = self.folder / "zygote.sock"
        self.log = self.folder / "zygote.log"
        self.modules: list[str] = []
        self.reason = ""  # why runs go cold ("" while the zygote serves)
        self.proc: subprocess.Popen[bytes] | None = None
        self.watch = -1
        self.cgroup: Path | None = None
        self.ready = threading.Event()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.closed = False
        self.forks = 0  # runs handed to the zygote

    @staticmethod
    def base_env(settings: Settings) -> dict[str, str]:
        """The environment every run of ``settings`` starts from (as the runner builds it)."""
        env = {**os.environ, **settings.env}
        env.setdefault("PYTHONUNBUFFERED", "1")
        return env

    @staticmethod
    def applies(settings: Settings, script: Path | None = None) -> bool:
        """Whether runs of ``script`` with ``settings`` may use a zygote at all: not with
        ``--cold``, a launcher or a sandbox; by default (``warm`` ``None``) not for a script
        that imports TensorFlow or Keras (:func:`imports_tensorflow`)."""
        if settings.warm is False or settings.launcher or settings.sandbox is not None:
            return False
        return settings.warm is True or script is None or not imports_tensorflow(script)

    # starting -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the zygote in the background (once)."""
        with self.lock:
            if self.thread is not None or self.closed:
                return
            self.thread = threading.Thread(target=self._launch, name="autofix-zygote",
                                           daemon=True)
            self.thread.start()

    def _launch(self) -> None:
        from autofix.run.runner import release, supervised

        try:
            if shutil.which(self.settings.python) is None:
                raise OSError(f"no interpreter {self.settings.python}")
            argv, read, cgroup = supervised([self.settings.python, str(ZYGOTE), "serve",
                                             str(self.socket), str(self.log)])
            with open(self.log, "wb") as log:
                try:
                    with self.lock:
                        if self.closed:
                            raise OSError("closed")
                        self.proc = subprocess.Popen(
                            argv, cwd=self.settings.cwd, env=self.base_env(self.settings),
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                            start_new_session=True, pass_fds=(read,))
                        self.watch, self.cgroup = read, cgroup
                except BaseException:
                    release(read)
                    cgroups.remove(cgroup)
                    raise
            hello = self._ping(START_SECONDS, wait_for_socket=True)
            if hello.get("error"):
                raise OSError(str(hello["error"]))
            self.modules = [str(m) for m in hello.get("modules", [])]
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            self.reason = self.reason or f"the warm interpreter did not start: {exc}"
            self.close()
        finally:
            self.ready.set()

    def _ping(self, seconds: float, wait_for_socket: bool = False) -> dict[str, Any]:
        """Ask the zygote for its hello once every earlier run is cleaned up."""
        deadline = time.monotonic() + seconds
        while True:
            proc = self.proc
            if proc is None or proc.poll() is not None:
                raise OSError("the zygote has exited")
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.settimeout(max(0.1, deadline - time.monotonic()))
                    sock.connect(str(self.socket))
                    ping = json.dumps({"ping": True}).encode()  # zygote.py's framing
                    sock.sendall(struct.pack("!I", len(ping)) + ping)
                    data = b""
                    while not data.endswith(b"\n"):
                        more = sock.recv(1 << 20)
                        if not more:
                            raise OSError("the zygote closed the connection")
                        data += more
                    answer: dict[str, Any] = json.loads(data)
                    return answer
            except (FileNotFoundError, ConnectionRefusedError):
                if not wait_for_socket or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    # runs -----------------------------------------------------------------------------

    def prepare(self, script: Path, cmd: Sequence[str], env: Mapping[str, str],
                folder: Path) -> WarmRun | None:
        """The command that runs ``cmd`` (the cold child's argv: interpreter, bootstrap,
        its arguments) as a fork of the zygote, or ``None``: run it cold."""
        if self.reason or self.closed or list(cmd[:2]) != [self.settings.python,
                                                           str(_bootstrap())]:
            return None
        self.start()
        self.ready.wait()
        if self.reason or comparable(env) != self.env or shadowing(script.parent,
                                                                   self.modules):
            return None
        status = folder / "zygote.status"
        self.forks += 1
        return WarmRun([sys.executable, "-I", str(ZYGOTE), "run", str(self.socket),
                        str(status), "--", *cmd[2:]], status)

    def serves(self) -> bool:
        """Wait for the zygote's start; True when runs (and tools) can be forked from it."""
        if self.reason or self.closed:
            return False
        self.start()
        self.ready.wait()
        return not self.reason and not self.closed

    def tool(self, script: Path, input: str, timeout: float
             ) -> subprocess.CompletedProcess[str] | None:
        """Run ``script`` (a standard-library script of autofix's, reading ``input`` on its
        standard input) as a fork of the zygote, on the libraries it has imported, with
        the probes' patches undone: its completed process, or ``None`` when the zygote
        could not run it (the caller runs it in a fresh interpreter). Raises
        ``subprocess.TimeoutExpired`` past ``timeout`` seconds (the fork is killed)."""
        from autofix.run.runner import contained_run

        if not self.serves():
            return None
        status = self.folder / f"tool-{time.monotonic_ns()}.status"
        done = contained_run([sys.executable, "-I", str(ZYGOTE), "tool", str(self.socket),
                              str(status), str(script)], input=input, timeout=timeout)
        return done if WarmRun([], status).ran() else None

    def settle(self) -> None:
        """Wait until the zygote has killed and reaped everything of the last run; a
        zygote that does not answer is ended (later runs go cold)."""
        if self.reason or self.proc is None:
            return
        try:
            self._ping(SETTLE_SECONDS)
        except (OSError, ValueError):
            self.reason = "the warm interpreter stopped answering"
            self.close()

    def close(self) -> None:
        """End the zygote and everything it started; remove its folder."""
        from autofix.run.runner import kill_group, release

        with self.lock:
            self.closed = True
            proc, self.proc = self.proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                kill_group(proc, self.cgroup)
            release(self.watch)
        shutil.rmtree(self.folder, ignore_errors=True)


def _bootstrap() -> Path:
    from autofix.run.probe_events import BOOTSTRAP

    return BOOTSTRAP
