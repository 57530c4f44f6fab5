"""A real two-node Ray cluster on this machine for the tests (one CPU per node).

Both nodes are ``ray start ... --block`` processes in their own process groups, with
ports and a temporary folder of their own, so another Ray on the machine is not touched
and killing node 2's group is a node dying. ``ray stop`` is never called (it would stop
every Ray on the machine).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

RAY = str(Path(sys.executable).parent / "ray")
OBJECT_STORE = str(80 * 1024 * 1024)


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _node_args() -> tuple[list[str], int]:
    p = free_ports(7)
    lo = random.randrange(20000, 60000, 100)  # a block of worker ports of its own
    return (["--node-ip-address=127.0.0.1", f"--node-manager-port={p[0]}",
             f"--object-manager-port={p[1]}",
             f"--dashboard-agent-listen-port={p[2]}", f"--dashboard-agent-grpc-port={p[3]}",
             f"--metrics-export-port={p[4]}", f"--runtime-env-agent-port={p[5]}",
             f"--min-worker-port={lo}", f"--max-worker-port={lo + 60}",
             "--num-cpus=1", f"--object-store-memory={OBJECT_STORE}",
             # one Python daemon fewer starting at once (it streams worker logs to drivers,
             # which the tests do not read): the raylet waits a bounded time for its agents
             "--include-log-monitor=false",
             "--disable-usage-stats", "--block"], p[0])


@dataclass
class Cluster:
    """The running cluster: ``address`` for ``ray.init``; node 2's node-manager port
    identifies it in ``ray.nodes()``."""

    address: str
    env: dict[str, str]
    temp: str
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    node2_port: int = 0

    def start_node2(self) -> None:
        args, self.node2_port = _node_args()
        for attempt in range(3):
            proc = _spawn([RAY, "start", f"--address={self.address}", *args], self.env,
                          Path(self.temp) / "node2.log")
            try:
                _wait_nodes(self.address, 2, self.env, proc, temp=self.temp)
                self.procs.append(proc)
                return
            except RuntimeError:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                if attempt == 2:
                    raise

    def kill_node2(self) -> None:
        """Node 2 dies: its whole process group (raylet, workers) gets SIGKILL."""
        os.killpg(self.procs[1].pid, signal.SIGKILL)
        self.procs[1].wait()

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 5  # then SIGKILL: a raylet can sit out SIGTERM
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.temp, ignore_errors=True)


def _raise_priority() -> None:
    """Ray's daemons start at nice -15 where allowed (root): on a loaded machine the raylet
    otherwise gives up waiting for its agents. Tasks drop back to nice 0 themselves
    (``autofix.batch.ray_backend``), so the scripts do not run at the raised priority."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -15)
    except OSError:
        pass


def _spawn(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=_raise_priority)


def _raylet_crashed(temp: str) -> bool:
    """A raylet of this cluster aborted (``ray start --block`` keeps running then)."""
    return any("Check failed" in p.read_text(errors="replace")
               for p in Path(temp).glob("session_*/logs/raylet*.out"))


def _wait_nodes(address: str, n: int, env: dict[str, str],
                proc: subprocess.Popen[bytes] | None = None, timeout: float = 240,
                temp: str = "") -> None:
    """Wait until ``n`` nodes are alive (a head takes 20 s and more on a busy machine)."""
    probe = ("import ray, time, sys\n"
             f"ray.init(address={address!r}, logging_level='ERROR')\n"
             "deadline = time.time() + 20\n"
             f"while sum(x['Alive'] for x in ray.nodes()) < {n}:\n"
             "    if time.time() > deadline: sys.exit(1)\n"
             "    time.sleep(0.5)\n")
    deadline = time.monotonic() + timeout
    while True:
        try:
            done = subprocess.run([sys.executable, "-c", probe], env=env, timeout=60,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True)
            if done.returncode == 0:
                return
            why = done.stderr[-2000:]
        except subprocess.TimeoutExpired:
            why = "ray.init did not answer within 60 s"
        if time.monotonic() > deadline or (proc is not None and proc.poll() is not None) \
                or (temp and _raylet_crashed(temp)):
            raise RuntimeError(f"Ray at {address} has not {n} node(s): {why}")
        time.sleep(2)


def start_cluster(root: Path, nodes: int = 2, attempts: int = 3) -> Cluster:
    """Start a head (and a second node when ``nodes == 2``); workers import autofix from
    ``root``. Node deaths are noticed within a few seconds (health checks every 1 s).

    On a loaded machine Ray 2.60's raylet can give up waiting (about 15 s) for its
    dashboard agent to start; a failed start leaves nothing behind and is tried again,
    up to ``attempts`` times."""
    for attempt in range(attempts):
        try:
            return _start(root, nodes)
        except RuntimeError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def _start(root: Path, nodes: int) -> Cluster:
    temp = tempfile.mkdtemp(prefix="afray-", dir="/tmp")  # short: Ray puts sockets there
    env = {**os.environ, "PYTHONPATH": str(root), "RAY_health_check_period_ms": "1000",
           "RAY_health_check_timeout_ms": "1000", "RAY_health_check_failure_threshold": "3",
           "RAY_USAGE_STATS_ENABLED": "0", "OMP_NUM_THREADS": "1",
           "RAY_agent_register_timeout_ms": "180000", "RAY_raylet_start_wait_time_s": "180",
           # a private loopback cluster: no token auth. Ray 2.60 turns it on when
           # ~/.ray/auth_token exists (any earlier local ray.init writes one) and the head
           # then refused this test's own drivers ("InvalidAuthToken")
           "RAY_AUTH_MODE": "disabled"}
    port, client, dash = free_ports(3)
    args, _ = _node_args()
    head = _spawn([RAY, "start", "--head", f"--port={port}", f"--temp-dir={temp}",
                   f"--ray-client-server-port={client}", f"--dashboard-port={dash}",
                   "--include-dashboard=false", *args], env, Path(temp) / "head.log")
    cluster = Cluster(f"127.0.0.1:{port}", env, temp, [head])
    try:
        _wait_nodes(cluster.address, 1, env, head, temp=temp)
        if nodes == 2:
            cluster.start_node2()
    except BaseException:
        cluster.stop()
        raise
    return cluster
