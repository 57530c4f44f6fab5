"""Running untrusted submissions (``autofix batch --sandbox``): scrubbed environment,
resource limits, no network, no way into the repository.

What each run of a sandboxed script gets, and how it is enforced (Linux):

- **environment**: variables that look like credentials are removed (:func:`scrub_env`:
  tokens, passwords, cloud keys, the SSH/GPG agents); ``--pass-env NAME`` keeps one.
- **memory**: ``RLIMIT_AS`` (address space, ``prlimit --as``): allocation past it raises
  ``MemoryError`` in the script. Address space, not resident memory: leave headroom.
- **CPU time**: ``RLIMIT_CPU`` (``prlimit --cpu``): the kernel kills the script past it.
- **processes**: a pids cgroup (v1 ``/sys/fs/cgroup/pids`` or v2 ``pids.max``) when
  autofix may create one (root), else ``RLIMIT_NPROC``, which counts every process of the
  user and is not enforced for root: :func:`isolation` says which one holds.
- **network**: a new network namespace (``unshare --net``, root) holds only a loopback
  that is down, so even 127.0.0.1 is unreachable; without it the run is reported as
  "network not isolated".
- **files**: the session runs on a throwaway copy of the work tree (``batch`` makes it),
  and as root a mount namespace makes the repository read-only for the script, so an
  absolute path into ``.git`` fails too. The script's PID namespace dies with the run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from autofix.run import cgroups

#: Variable names that look like credentials (matched case-insensitively, anywhere).
SECRET_WORDS = re.compile(
    r"TOKEN|SECRET|PASSW|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|AUTH|SESSION|COOKIE",
    re.IGNORECASE)
#: Prefixes of cloud, agent and service configuration variables.
SECRET_PREFIXES = ("AWS_", "AZURE_", "GOOGLE_", "GCP_", "GCLOUD_", "CLOUDSDK_", "SSH_",
                   "GPG_", "KUBE", "DOCKER_", "VAULT_", "NETRC", "PGPASS", "GH_", "GITHUB_",
                   "GITLAB_", "WANDB_", "COMET_", "NEPTUNE_", "MLFLOW_TRACKING_")
_PIDS_V1 = Path("/sys/fs/cgroup/pids")
_CGROUP_V2 = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class Sandbox:
    """Limits for each run of a sandboxed script.

    ``memory_mb``: address-space limit in MiB; ``cpu_seconds``: CPU-time limit;
    ``max_processes``: processes and threads at once; ``pass_env``: variable names kept
    although they look like credentials; ``readonly``: paths the script may not write
    (the repository), enforced where a mount namespace can be made.
    """

    memory_mb: int = 8192
    cpu_seconds: int = 3600
    max_processes: int = 512
    pass_env: tuple[str, ...] = ()
    readonly: tuple[str, ...] = field(default_factory=tuple)


def scrub_env(env: Mapping[str, str], keep: Sequence[str] = ()) -> dict[str, str]:
    """``env`` without the variables that look like credentials (``SECRET_WORDS``,
    ``SECRET_PREFIXES``), except the names in ``keep``."""
    return {k: v for k, v in env.items()
            if k in keep or not (SECRET_WORDS.search(k) or k.upper().startswith(SECRET_PREFIXES))}


def _probe(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=20,
                              stdin=subprocess.DEVNULL).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@cache
def _can_unshare() -> bool:
    return shutil.which("unshare") is not None and _probe(
        ["unshare", "--net", "--mount", "--pid", "--fork", "--kill-child", "true"])


def _pids_parent() -> Path | None:
    """A folder where a pids cgroup can be created (v1 hierarchy, or v2 with the pids
    controller), or None."""
    if _PIDS_V1.is_dir() and os.access(_PIDS_V1, os.W_OK):
        return _PIDS_V1
    controllers = _CGROUP_V2 / "cgroup.subtree_control"
    if controllers.is_file() and "pids" in controllers.read_text() \
            and os.access(_CGROUP_V2, os.W_OK):
        return _CGROUP_V2
    return None


@cache
def isolation() -> dict[str, str]:
    """What this machine enforces for a sandboxed run: ``{"network", "processes",
    "memory", "cpu", "files"}`` mapped to how (or ``"not isolated"``)."""
    ns = _can_unshare()
    has_prlimit = shutil.which("prlimit") is not None
    return {
        "network": "network namespace (no interface up)" if ns else "not isolated",
        "processes": "pids cgroup" if _pids_parent() else
                     ("RLIMIT_NPROC (per user; not enforced for root)" if has_prlimit
                      else "not limited"),
        "memory": "RLIMIT_AS" if has_prlimit else "not limited",
        "cpu": "RLIMIT_CPU" if has_prlimit else "not limited",
        "files": "throwaway copy; repository read-only (mount namespace)" if ns
                 else "throwaway copy",
    }


@dataclass
class Confinement:
    """A prepared sandboxed command: run ``cmd``, then call :meth:`close`."""

    cmd: list[str]
    cgroup: Path | None = None

    def close(self) -> None:
        """Remove the run's pids cgroup, killing any process still in it."""
        cgroups.remove(self.cgroup, seconds=2.0)


def confine(cmd: Sequence[str], sandbox: Sandbox) -> Confinement:
    """Wrap ``cmd`` (the child's argv) so it runs under ``sandbox``'s limits.

    Order: join a fresh pids cgroup (a shell that then execs), new network, mount and PID
    namespaces (``unshare``; the PID namespace dies with its first process), the
    repository bind-mounted read-only, then ``prlimit`` sets the resource limits and
    execs the interpreter. Pieces this machine cannot do are left out (see
    :func:`isolation`).
    """
    inner = list(cmd)
    limits = [f"--as={sandbox.memory_mb * 1024 * 1024}", f"--cpu={sandbox.cpu_seconds}"]
    parent = _pids_parent()
    cgroup = None
    if shutil.which("prlimit"):
        if parent is None:
            limits.append(f"--nproc={sandbox.max_processes}")
        inner = ["prlimit", *limits, "--", *inner]
    if _can_unshare():
        mounts = "".join(f'mount --bind "{p}" "{p}" && mount -o remount,bind,ro "{p}" "{p}" '
                         "&& " for p in sandbox.readonly if Path(p).exists())
        inner = ["unshare", "--net", "--mount", "--pid", "--fork", "--kill-child",
                 "sh", "-c", mounts + 'exec "$@"', "sh", *inner]
    if parent is not None:
        cgroup = parent / f"autofix-{uuid.uuid4().hex[:12]}"
        try:
            cgroup.mkdir()
            (cgroup / "pids.max").write_text(str(sandbox.max_processes))
            inner = ["sh", "-c", f'echo $$ > "{cgroup}/cgroup.procs" && exec "$@"', "sh",
                     *inner]
        except OSError:
            cgroup = None
    return Confinement(inner, cgroup)
