"""The warm interpreter: a fork server (zygote) that has torch, transformers and datasets
imported once per session, and the client a run's supervisor starts instead of a fresh
interpreter.

Standard library only, executed by path, in two roles:

``python zygote.py serve SOCKET LOG`` (the user's interpreter, ``--python``; started once
per session by :mod:`autofix.run.warm`, under the run supervisor): loads the probe (the
bootstrap and its package), installs the post-import hooks of every probe whose patch does
not depend on the run's switches, imports :data:`PRELOAD` (those installed; TensorFlow is
never preloaded), runs no tensor operation and no user code, then listens on the Unix
socket ``SOCKET``, one connection at a time. It is a child subreaper (orphans of a run come
back to it) and dies with its parent (``PR_SET_PDEATHSIG``); its supervisor kills it with
autofix.

``python -I zygote.py run SOCKET STATUS -- PATCHED ORIGINAL [ARGS...]`` (autofix's own
interpreter, the command a run's supervisor starts): sends its argv, cwd, environment and
its standard input, output and error (``SCM_RIGHTS``) to the zygote, which forks. The fork
(the run) starts a session of its own, moves into the client's cgroup, takes those
descriptors, cwd and environment, replays what the preload printed, applies the deferred
probes (:data:`CONDITIONAL`) with the run's switches, and runs the bootstrap exactly as a
cold child does. The client passes ``SIGTERM`` on (the zygote sends it to every process of
the run), and exits as the run did (its code, or its signal). When the run ends, or the
client dies, the zygote kills and reaps every process the run left before it serves the
next connection. ``STATUS`` gets one line per stage: ``forked PID``, then ``exit STATUS``;
``cold REASON`` (nothing was forked) or ``lost`` (the zygote died under the run) tell the
runner to run the script cold instead.

``python -I zygote.py tool SOCKET STATUS SCRIPT`` (autofix's interpreter): the same, but
the fork undoes the probes' patches and import hooks (:func:`probes.unpatch`) and runs
``SCRIPT`` (a standard-library script of autofix's, such as the API check) as
``__main__``: it sees the libraries as installed, already imported.

``{"ping": true}`` on the socket is answered ``{"pong": ...}`` (its top-level modules,
whether forking is safe) once every earlier run is cleaned up.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import gc
import importlib.util
import json
import os
import runpy
import select
import signal
import socket
import struct
import sys
import time
import types
import warnings
from typing import Any

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PR_SET_CHILD_SUBREAPER = 36
#: Libraries imported once in the zygote, when installed (TensorFlow is not: its runtime
#: starts threads at import).
PRELOAD = ("torch", "transformers", "datasets")
#: transformers' lazily loaded names most fine-tuning scripts take (each loads its
#: submodules: the trainer, accelerate, the auto classes).
TRANSFORMERS_NAMES = ("Trainer", "TrainingArguments", "AutoConfig", "AutoTokenizer",
                      "AutoModelForSequenceClassification", "DataCollatorWithPadding")
#: Native threads the preload may leave that survive a fork safely (jemalloc, pyarrow's
#: allocator, re-initialises itself in the child through its own ``pthread_atfork``).
FORK_SAFE_THREADS = ("jemalloc_bg_thd",)
#: The exit code of a client that did not get a run (the runner then runs cold).
NO_RUN = 250
_LENGTH = struct.Struct("!I")
PROCS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "procs.py")


def _load_procs() -> types.ModuleType:
    """``child/procs.py`` (what a run's processes are, and how to exit like one), loaded
    by path as ``_autofix_procs``: this file is executed by path too."""
    if "_autofix_procs" in sys.modules:
        return sys.modules["_autofix_procs"]
    spec = importlib.util.spec_from_file_location("_autofix_procs", PROCS_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


PROCS = _load_procs()


# --- the wire: one length-prefixed JSON message with descriptors, then JSON lines ---------


def send_request(sock: socket.socket, message: dict[str, Any], fds: list[int]) -> None:
    data = json.dumps(message).encode()
    payload = _LENGTH.pack(len(data)) + data
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    sent = sock.sendmsg([payload], ancillary)
    if sent < len(payload):
        sock.sendall(payload[sent:])


def recv_request(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, ancdata, _, _ = sock.recvmsg(1 << 16, socket.CMSG_SPACE(8 * array.array("i").itemsize))
    fds = array.array("i")
    for level, kind, raw in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(raw[:len(raw) - len(raw) % fds.itemsize])
    while len(data) < _LENGTH.size:
        more = sock.recv(1 << 16)
        if not more:
            raise ConnectionError("short request")
        data += more
    (size,) = _LENGTH.unpack(data[:_LENGTH.size])
    while len(data) < _LENGTH.size + size:
        more = sock.recv(1 << 20)
        if not more:
            raise ConnectionError("short request")
        data += more
    return json.loads(data[_LENGTH.size:_LENGTH.size + size]), list(fds)


def send_line(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


#: What OpenBLAS builds call their thread count (plain, 64-bit, numpy's scipy-openblas).
OPENBLAS_COUNTS = ("openblas_get_num_threads", "openblas_get_num_threads64_",
                   "scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads")


def openblas_workers() -> int:
    """Worker threads of the OpenBLAS libraries loaded in this process (numpy's: it starts
    one fewer than its thread count at import, ``OMP_NUM_THREADS`` or the cores). They are
    fork-safe: OpenBLAS's own ``pthread_atfork`` handler stops them before a fork and
    starts them again when next needed."""
    try:
        with open("/proc/self/maps") as fh:
            paths = {ln.split()[-1] for ln in fh if "openblas" in ln.lower()}
        libs = sorted(p for p in paths if ".so" in os.path.basename(p))
    except OSError:
        return 0
    workers = 0
    for lib in libs:
        try:
            handle = ctypes.CDLL(lib)
        except OSError:
            continue
        for name in OPENBLAS_COUNTS:
            count = getattr(handle, name, None)
            if count is not None:
                workers += max(0, int(count()) - 1)
                break
    return workers


def _prctl(option: int, value: int) -> bool:
    try:
        return int(ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


# --- the zygote -------------------------------------------------------------------------


#: The probes whose patch reads the run's switches (preflight on, rows sampled) when the
#: module is imported: every probe of their modules is applied in the fork instead, in
#: the probes' order, once the run's switches are set (``tests/test_zygote.py`` checks
#: that this names every such patch).
CONDITIONAL = ("preflight.patch_map", "preflight.patch_models", "preflight.patch_optimizers",
               "preflight.patch_loader", "preflight.patch_sft", "sampling.patch_load",
               "sampling.patch_constructors")


class Zygote:
    """The zygote's state: the probe's modules, what the preload printed, the socket."""

    def __init__(self, log: str) -> None:
        self.log = log
        self.preload_output = b""
        self.error = ""
        self.bootstrap: Any = None
        self.deferred: set[str] = set()

    # preload ------------------------------------------------------------------------

    def load(self) -> None:
        here = os.path.dirname(os.path.abspath(__file__))
        spec = importlib.util.spec_from_file_location("_autofix_bootstrap",
                                                      os.path.join(here, "bootstrap.py"))
        assert spec is not None and spec.loader is not None
        self.bootstrap = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.bootstrap)  # loads the package _autofix_child
        from _autofix_child import probes

        names = {f"{p.__module__.rsplit('.', 1)[-1]}.{p.__name__}" for _, p in probes.HOOKS}
        self.deferred = {name for name, patch in probes.HOOKS
                         if f"{patch.__module__.rsplit('.', 1)[-1]}.{patch.__name__}"
                         in CONDITIONAL}
        assert set(CONDITIONAL) <= names, set(CONDITIONAL) - names
        probes.Replaced.RECORD = True  # a tool's fork undoes them (Job.run)
        probes.install(lambda name: name not in self.deferred)
        # The user's folder is not on the path while libraries load (the runner checks
        # that it shadows none of the modules loaded here); the fork's bootstrap sets it.
        sys.path[0] = os.path.join(here, "__preload__")
        try:
            for name in PRELOAD:
                if importlib.util.find_spec(name) is None:
                    continue
                module = importlib.import_module(name)
                if name == "transformers":
                    for attr in TRANSFORMERS_NAMES:
                        getattr(module, attr)
        except BaseException as exc:  # noqa: BLE001 - a library that fails: runs go cold
            self.error = f"preload failed: {type(exc).__name__}: {exc}"[:300]
        sys.stdout.flush()
        sys.stderr.flush()
        with contextlib.suppress(OSError), open(self.log, "rb") as fh:
            self.preload_output = fh.read()
        if not self.error:
            self.error = self.unsafe_threads()
        # What is loaded now lives as long as the zygote: out of the collector's sight, a
        # fork neither copies its pages to count it nor walks it again at exit (an exit
        # with these libraries loaded: 10 s down to 2-3 s on a busy 2-core machine).
        gc.freeze()

    @staticmethod
    def unsafe_threads() -> str:
        """Why forking now would not be safe ("" when it is): threads the imports left."""
        import threading

        if threading.active_count() > 1:
            return f"{threading.active_count() - 1} Python threads started by the imports"
        others = []
        pool = openblas_workers()
        for tid in os.listdir("/proc/self/task"):
            if int(tid) == os.getpid():
                continue
            try:
                with open(f"/proc/self/task/{tid}/comm") as fh:
                    name = fh.read().strip()
            except OSError:
                continue
            if name not in FORK_SAFE_THREADS:
                others.append(name)
        if len(others) <= pool:  # numpy's OpenBLAS pool (it inherits the name "python")
            others = []
        return f"native threads started by the imports: {', '.join(others)}" if others else ""

    def hello(self) -> dict[str, Any]:
        tops = sorted({name.split(".")[0] for name in list(sys.modules)})
        return {"pong": True, "pid": os.getpid(), "modules": tops, "error": self.error}

    # serving --------------------------------------------------------------------------

    def serve(self, path: str) -> Job | None:
        """Answer connections until killed; returns (in the fork only) the run to do."""
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(16)
        while True:
            conn, _ = server.accept()
            try:
                job = self.handle(conn, server)
            except (OSError, ValueError, ConnectionError):
                job = None
            if job is not None:
                return job
            with contextlib.suppress(OSError):
                conn.close()

    def handle(self, conn: socket.socket, server: socket.socket) -> Job | None:
        message, fds = recv_request(conn)
        if message.get("ping") or self.error:
            for fd in fds:
                os.close(fd)
            send_line(conn, self.hello() if message.get("ping") else {"cold": self.error})
            return None
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        client = struct.unpack("3i", creds)[0]
        sys.stdout.flush()
        sys.stderr.flush()
        with warnings.catch_warnings():  # 3.12 warns of forking with (jemalloc's) threads
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            server.close()
            conn.close()
            return Job(self, message, fds, client)
        for fd in fds:
            os.close(fd)
        send_line(conn, {"pid": pid})
        send_line(conn, {"status": self.watch(conn, pid)})
        return None

    def watch(self, conn: socket.socket, pid: int) -> int:
        """Wait for the run ``pid``: a ``term`` from the client sends SIGTERM to every
        process of the run, the client's end (killed) kills them all; returns the run's
        wait status once it and everything it left are reaped."""
        status: int | None = None
        gone = False  # the client is gone (killed): so is the run
        while status is None:
            if gone:
                signal_tree(signal.SIGKILL)
                time.sleep(0.01)
            else:
                try:
                    ready, _, _ = select.select([conn], [], [], 0.05)
                except InterruptedError:
                    ready = []
                if ready:
                    try:
                        data = conn.recv(4096)
                    except OSError:
                        data = b""
                    if not data:
                        gone = True
                    elif b"term" in data:
                        signal_tree(signal.SIGTERM)
            status = reap(pid, status)
        sweep()
        return status

    # in the fork ----------------------------------------------------------------------


class Job:
    """The run a fork was made for: set up as a cold child is, then run the bootstrap."""

    def __init__(self, zygote: Zygote, message: dict[str, Any], fds: list[int],
                 client: int) -> None:
        self.zygote = zygote
        self.message = message
        self.fds = fds
        self.client = client

    def prepare(self) -> None:
        os.setsid()
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the zygote gone: the run goes too
        join_cgroup_of(self.client)
        for target, fd in enumerate(self.fds[:3]):
            os.dup2(fd, target)
        for fd in self.fds:
            if fd > 2:
                os.close(fd)
        for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGUSR1, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as Python starts every interpreter
        os.chdir(self.message["cwd"])
        os.environ.clear()
        os.environ.update(self.message["env"])
        if self.zygote.preload_output:
            with contextlib.suppress(OSError):
                os.write(2, self.zygote.preload_output)
        numpy = sys.modules.get("numpy")
        if numpy is not None:  # a fresh interpreter seeds numpy's global state afresh
            with contextlib.suppress(Exception):
                numpy.random.seed()

    def probes(self) -> None:
        """The deferred probes, with the run's switches: their modules' probes applied now
        when the preload imported them (names they replaced rebound wherever the old object
        was bound, as an import after the hook would have), else hooked for their import."""
        from _autofix_child import probes

        grouped: dict[str, list[Any]] = {}
        for name, patch in probes.HOOKS:
            if name in self.zygote.deferred:
                grouped.setdefault(name, []).append(patch)
        later = set()
        for name, patches in grouped.items():
            module = sys.modules.get(name)
            if module is None:
                later.add(name)
                continue
            before = dict(vars(module))
            probes._chain(patches)(module)
            rebind(module, before)
        probes.install(lambda name: name in later)

    def run(self) -> int:
        tool = self.message.get("tool")
        if tool:  # a standard-library script of autofix's, on the libraries as installed
            from _autofix_child import probes

            probes.unpatch()
            sys.argv = [tool]
            sys.path[0] = os.path.dirname(tool)
            runpy.run_path(tool, run_name="__main__")
            return 0
        argv = self.message["argv"]
        result: int = self.zygote.bootstrap.run(argv[0], argv[1], argv[2:], probes=self.probes)
        return result


def rebind(module: types.ModuleType, before: dict[str, Any]) -> None:
    """Where ``module``'s names changed from ``before``, bind the new object in every
    loaded module of its package that held the old one (``datasets`` binds
    ``datasets.load.load_dataset`` right after the hook, when the probe is installed before
    the import)."""
    now = vars(module)
    changed = {id(old): (old, now[name]) for name, old in before.items()
               if name in now and now[name] is not old}
    if not changed:
        return
    top = module.__name__.split(".")[0]
    for name, other in list(sys.modules.items()):
        space = getattr(other, "__dict__", None)
        if other is module or not isinstance(space, dict) or name.split(".")[0] != top:
            continue
        for key, value in list(space.items()):
            hit = changed.get(id(value))
            if hit is not None and hit[0] is value:
                space[key] = hit[1]


def join_cgroup_of(pid: int) -> None:
    """Move this process into the cgroup (v2) of process ``pid`` when it is another one."""
    try:
        with open(f"/proc/{pid}/cgroup") as fh:
            theirs = next(ln[3:].strip() for ln in fh if ln.startswith("0::"))
        with open("/proc/self/cgroup") as fh:
            mine = next(ln[3:].strip() for ln in fh if ln.startswith("0::"))
        if theirs == mine:
            return
        with open("/proc/self/mountinfo") as fh:
            mount = next(ln.split()[4] for ln in fh if ln.partition(" - ")[2].startswith(
                "cgroup2 "))
        with open(os.path.join(mount, theirs.lstrip("/"), "cgroup.procs"), "w") as fh:
            fh.write("0")
    except (OSError, StopIteration):
        pass


# --- processes of a run (the zygote's descendants) ---------------------------------------


def signal_tree(sig: int) -> set[int]:
    """Send ``sig`` to every descendant of this process (the run and all it started)."""
    seen: set[int] = PROCS.descendants()
    for pid in seen:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)
    return seen


def reap(run: int, status: int | None) -> int | None:
    """Collect every child that has ended; the run's wait status once it has."""
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == run:
            status = code


def sweep(seconds: float = 10.0) -> None:
    """Kill and reap every descendant until none is left (or ``seconds``)."""
    deadline = time.monotonic() + seconds
    while signal_tree(signal.SIGKILL) and time.monotonic() < deadline:
        reap(-1, None)
        time.sleep(0.01)
    reap(-1, None)


def serve(path: str, log: str) -> Job | None:
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    zygote = Zygote(log)
    zygote.load()
    return zygote.serve(path)


# --- the client (autofix's interpreter, under the run supervisor) ------------------------


class _Client:
    stop = False
    sock: socket.socket | None = None


def client(path: str, status: str, argv: list[str], tool: str = "") -> int:
    """Have the zygote run ``argv`` (or, with ``tool``, that script of autofix's on the
    unpatched libraries); returns the exit code to end with (or exits by the run's
    signal)."""
    def note(line: str) -> None:
        with open(status, "a") as fh:
            fh.write(line + "\n")

    def on_term(*_: Any) -> None:
        _Client.stop = True
        if _Client.sock is not None:
            with contextlib.suppress(OSError):
                _Client.sock.send(b"term\n")

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, lambda *_: None)  # as the supervisor: SIGTERM stops a run
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        send_request(sock, {"argv": argv, "tool": tool, "cwd": os.getcwd(),
                            "env": dict(os.environ)}, [0, 1, 2])
    except OSError as exc:
        note(f"cold cannot reach the zygote: {exc}")
        return NO_RUN
    _Client.sock = sock
    buffer = b""
    while True:
        try:
            data = sock.recv(4096)
        except InterruptedError:
            continue
        except OSError:
            data = b""
        if not data:
            note("stopped" if _Client.stop else "lost")
            return NO_RUN
        buffer += data
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            message = json.loads(line)
            if "cold" in message:
                note(f"cold {message['cold']}")
                return NO_RUN
            if "pid" in message:
                note(f"forked {message['pid']}")
                if _Client.stop:
                    on_term()
            if "status" in message:
                note(f"exit {message['status']}")
                exit_like(int(message["status"]))


def exit_like(status: int) -> None:
    """End this process as the run ended: the same exit code, or the same signal."""
    PROCS.exit_like(status)


def main(argv: list[str]) -> None:
    if len(argv) >= 4 and argv[1] == "serve":
        job = serve(argv[2], argv[3])
        if job is None:
            os._exit(0)
        job.prepare()  # from here on this process is the run, as a cold child would be
        sys.exit(job.run())
    if len(argv) >= 5 and argv[1] == "run":
        rest = argv[5:] if argv[4] == "--" else argv[4:]
        os._exit(client(argv[2], argv[3], rest))
    if len(argv) == 5 and argv[1] == "tool":
        os._exit(client(argv[2], argv[3], [], tool=argv[4]))
    sys.stderr.write("usage: zygote.py serve SOCKET LOG | run SOCKET STATUS -- ARGV... | "
                     "tool SOCKET STATUS SCRIPT\n")
    os._exit(2)


if __name__ == "__main__":
    main(sys.argv)
