"""Running untrusted submissions (``autofix batch --sandbox``): what a script may see and
use of the machine it runs on.

Each run of a sandboxed script gets (Linux):

- **files, network, processes**: bubblewrap (``bwrap``, the Debian package
  ``bubblewrap``, the sandbox Flatpak is built on) starts it in new mount, PID, network,
  IPC and UTS namespaces, with no capabilities and ``PR_SET_NO_NEW_PRIVS``, dying with the
  run (``--die-with-parent``). Its file system is built from nothing: the session's
  throwaway copy of the work tree and the run's own folder (read-write); ``/usr``, the
  training interpreter's installation (its ``sys.prefix``, the base Python it links to),
  the probe's code and the model caches (read-only); the few files of ``/etc`` the dynamic
  loader and the C library read; a private ``/tmp`` and home folder, a minimal ``/dev``
  and a new ``/proc``. Nothing else of the host: no home folder, no ``/etc/shadow``, no
  credential store, no other submission, no network (the host's 127.0.0.1 included).
- **environment**: variables that look like credentials are removed (:func:`scrub_env`:
  tokens, passwords, cloud keys, the SSH/GPG agents); ``--pass-env NAME`` keeps one.
- **memory**: ``RLIMIT_AS`` (address space, ``prlimit --as``): allocation past it raises
  ``MemoryError`` in the script. Address space, not resident memory: leave headroom.
- **CPU time**: ``RLIMIT_CPU`` (``prlimit --cpu``): the kernel kills the script past it.
- **processes**: a pids cgroup (v1 ``/sys/fs/cgroup/pids`` or v2 ``pids.max``) when
  autofix may create one (root), else ``RLIMIT_NPROC``, which counts every process of the
  user and is not enforced for root.

Where bubblewrap is missing or cannot make its namespaces (:func:`bubblewrap`), a run keeps
the scrubbed environment and the limits only: :func:`isolation` says what is then not
isolated, and ``Sandbox.require_isolation`` refuses to run (:func:`require_isolation`).
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from autofix.errors import AutofixError
from autofix.run import cgroups
from autofix.settings import Sandbox

__all__ = ["Sandbox", "Bubblewrap", "Confinement", "bubblewrap", "confine", "isolation",
           "not_isolated", "require_isolation", "scrub_env"]

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

#: How to get bubblewrap, for the messages that name it missing.
INSTALL_HINT = ("install bubblewrap (Debian, Ubuntu: `apt-get install bubblewrap` as root; "
                "Fedora: `dnf install bubblewrap`), which the full set-up, scripts/setup.sh, "
                "does")
#: The namespaces every sandboxed run gets (bwrap(1)): ``--unshare-pid`` with
#: ``--die-with-parent`` ends every process of the script with the run, ``--new-session``
#: keeps it off the terminal (TIOCSTI), ``--unshare-net`` leaves only a loopback of its own.
NAMESPACES = ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
              "--unshare-cgroup-try", "--die-with-parent", "--new-session")
#: The top-level folders of a merged-/usr system (links into /usr) or of an older layout.
_SYSTEM_FOLDERS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Files of /etc a Python interpreter and its native libraries read: the dynamic loader's
#: cache and configuration, the name-service switch, the time zone, library alternatives
#: (Debian's BLAS/LAPACK links) and fontconfig (matplotlib). /etc/passwd and /etc/group
#: are written for the sandbox (one user: the one running autofix); nothing else of /etc.
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/nsswitch.conf",
             "/etc/localtime", "/etc/timezone", "/etc/alternatives", "/etc/fonts")
#: Model caches a script may read (read-only): the folders these variables name, else
#: their defaults under the home folder. A datasets cache is never shared: ``datasets``
#: locks and writes its cache even to load a cached split, so each run gets an empty one
#: in its private home (``HF_DATASETS_CACHE``); a Hub dataset is read from the hub cache.
CACHE_VARIABLES = ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE",
                   "HF_ASSETS_CACHE", "TORCH_HOME", "SENTENCE_TRANSFORMERS_HOME")
DEFAULT_CACHES = (".cache/huggingface/hub", ".cache/torch")
#: Credential files huggingface_hub keeps in its home (``HF_HOME``), hidden in a bound cache.
CREDENTIAL_FILES = ("token", "stored_tokens")
#: The probe's code (``autofix/run/child``), which every run executes by path.
CHILD = Path(__file__).resolve().with_name("child")

_PREFIXES = ("import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, "
             "sys.exec_prefix, sys.base_exec_prefix]))")


def scrub_env(env: Mapping[str, str], keep: Sequence[str] = ()) -> dict[str, str]:
    """``env`` without the variables that look like credentials (``SECRET_WORDS``,
    ``SECRET_PREFIXES``), except the names in ``keep``."""
    return {k: v for k, v in env.items()
            if k in keep or not (SECRET_WORDS.search(k) or k.upper().startswith(SECRET_PREFIXES))}


@dataclass(frozen=True)
class Bubblewrap:
    """What :func:`bubblewrap` found: ``path`` of a working ``bwrap`` and its ``version``
    (``"bubblewrap 0.8.0"``), or ``problem``, why runs cannot be isolated by it."""

    path: str = ""
    version: str = ""
    problem: str = ""

    @property
    def usable(self) -> bool:
        return not self.problem


def _system() -> list[str]:
    """bwrap arguments for what every run reads of the system: ``/usr`` and the top-level
    folders that link into it (or are bound as they are), a minimal ``/dev`` (null, zero,
    random, tty, shm, pts), a new ``/proc``, the CPU topology (``/sys/devices/system/cpu``,
    read by torch's cpuinfo and OpenBLAS), NVIDIA's device nodes where there are some."""
    args = ["--ro-bind", "/usr", "/usr"]
    for folder in _SYSTEM_FOLDERS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    args += ["--dev", "/dev", "--proc", "/proc",
             "--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
    for node in sorted(Path("/dev").glob("nvidia*")):
        args += ["--dev-bind-try", str(node), str(node)]
    return args


def _probe(cmd: list[str]) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None


@cache
def bubblewrap() -> Bubblewrap:
    """Whether this machine can isolate runs with bubblewrap: ``bwrap`` on ``PATH``
    (``shutil.which``) that starts ``true`` in the namespaces every run gets (a container
    or a kernel may refuse them: unprivileged user namespaces off, seccomp). Cached."""
    path = shutil.which("bwrap")
    if path is None:
        return Bubblewrap(problem="bubblewrap (bwrap) is not installed")
    done = _probe([path, *NAMESPACES, *_system(), "--tmpfs", "/tmp", "true"])
    if done is None or done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [""])[-1] if done is not None else ""
        return Bubblewrap(path, problem="bubblewrap cannot make its namespaces here"
                                        + (f" ({said[:160]})" if said else ""))
    version = _probe([path, "--version"])
    return Bubblewrap(path, version.stdout.strip() if version is not None else "bubblewrap")


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
    """What this machine enforces for a sandboxed run: ``{"isolation", "files", "network",
    "processes", "memory", "cpu", "environment"}`` mapped to how, or to ``"not isolated"``
    / ``"not limited"`` (and why): a value starting ``"not "`` is an open door.
    ``isolation`` names the tool (``"bubblewrap 0.8.0"``) or what is missing (``"none:
    bubblewrap (bwrap) is not installed"``)."""
    bwrap = bubblewrap()
    has_prlimit = shutil.which("prlimit") is not None
    processes = "pids cgroup" if _pids_parent() else \
        ("RLIMIT_NPROC (per user; not enforced for root)" if has_prlimit else "not limited")
    if bwrap.usable:
        tool = bwrap.version
        files = ("its throwaway copy (read-write); the training environment, the model "
                 "caches and /usr (read-only); a private /tmp and home; nothing else of "
                 "the host")
        network = ("cut off (a new network namespace with a loopback of its own: the host, "
                   "its 127.0.0.1 included, is unreachable)")
        processes = f"a new PID namespace, ended with the run; {processes}"
    else:
        tool = f"none: {bwrap.problem}"
        files = ("not isolated: it runs in a throwaway copy, but reads and writes any file "
                 "the user running autofix can (home folder, other submissions)")
        network = "not isolated"
    return {
        "isolation": tool,
        "files": files,
        "network": network,
        "processes": processes,
        "memory": "RLIMIT_AS" if has_prlimit else "not limited",
        "cpu": "RLIMIT_CPU" if has_prlimit else "not limited",
        "environment": "credentials scrubbed",
    }


def not_isolated() -> list[str]:
    """The aspects of :func:`isolation` this machine leaves open (``["files", "network"]``
    without bubblewrap; ``["memory"]`` without ``prlimit``), in its order."""
    return [what for what, how in isolation().items() if how.startswith("not ")]


def require_isolation() -> None:
    """Raise :class:`AutofixError` (exit 2) naming what is missing and how to install it
    when bubblewrap cannot isolate runs here (``--require-isolation``)."""
    bwrap = bubblewrap()
    if not bwrap.usable:
        raise AutofixError(
            f"--require-isolation: {bwrap.problem}, so a sandboxed script could read your "
            f"files (home folder, /etc/shadow, other submissions) and reach the network; "
            f"nothing was run",
            hint=f"{INSTALL_HINT}; or leave out --require-isolation to run with the "
                 f"scrubbed environment and the resource limits only")


@cache
def interpreter_roots(python: str) -> tuple[str, ...]:
    """The folders the interpreter ``python`` needs to start and import its packages:
    its ``sys.prefix`` (a virtual environment), the base installation it links to
    (``sys.base_prefix``), their ``exec_prefix`` twins and the folder of the executable it
    resolves to, outermost only, ``/`` never. Asked of the interpreter itself (``-I``: no
    user site, no ``PYTHONPATH``); empty when it does not answer. Packages installed in
    editable mode from folders outside these are not seen in the sandbox."""
    python = shutil.which(python) or python
    done = _probe([python, "-I", "-c", _PREFIXES])
    found = {str(Path(python).resolve().parent)}
    if done is not None and done.returncode == 0:
        try:
            found |= {str(Path(p).resolve()) for p in json.loads(done.stdout)}
        except (ValueError, TypeError):
            pass
    python_folder = os.path.dirname(os.path.abspath(python))
    found.add(python_folder)
    return _outermost(found - {"/"})


def _outermost(paths: set[str]) -> tuple[str, ...]:
    """``paths`` without those inside another of them, sorted."""
    kept: list[str] = []
    for path in sorted(paths):
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return tuple(kept)


def _caches(env: Mapping[str, str], home: str) -> list[str]:
    """bwrap arguments binding the model caches read-only, credential files in them hidden
    behind ``/dev/null``."""
    folders = {env[v] for v in CACHE_VARIABLES if env.get(v, "").startswith("/")}
    if home.startswith("/"):
        folders |= {os.path.join(home, d) for d in DEFAULT_CACHES}
    args: list[str] = []
    for folder in _outermost({os.path.realpath(f) for f in folders if os.path.isdir(f)}):
        args += ["--ro-bind", folder, folder]
        for name in CREDENTIAL_FILES:
            if os.path.lexists(os.path.join(folder, name)):
                args += ["--ro-bind", "/dev/null", os.path.join(folder, name)]
    return args


def _identity(folder: Path, home: str) -> list[str]:
    """``/etc/passwd`` and ``/etc/group`` for the sandbox, written into ``folder``: the
    user running autofix (its name, the sandbox's home) and ``nobody``, nobody else."""
    uid, gid = os.getuid(), os.getgid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = "autofix"
    group = "root" if gid == 0 else user
    (folder / "passwd").write_text(f"{user}:x:{uid}:{gid}:{user}:{home}:/bin/sh\n"
                                   "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
    (folder / "group").write_text(f"{group}:x:{gid}:\nnogroup:x:65534:\n")
    return ["--ro-bind", str(folder / "passwd"), "/etc/passwd",
            "--ro-bind", str(folder / "group"), "/etc/group"]


def bwrap_command(cmd: Sequence[str], *, bwrap: str, python: str, env: Mapping[str, str],
                  cwd: Path, writable: Sequence[Path], etc: Path) -> list[str]:
    """``cmd`` (the child's argv) under bubblewrap (binary ``bwrap``): the namespaces of
    ``NAMESPACES``, no capabilities, the system read-only (:func:`_system`, ``ETC_FILES``,
    the passwd and group files written into ``etc``), a private ``/tmp`` and home folder
    (``env["HOME"]``, empty and writable; ``HOME=/tmp/home`` where it is unset or ``/``),
    the interpreter ``python``'s installation (:func:`interpreter_roots`), the model caches
    (:func:`_caches`) and the probe's code read-only, the folders ``writable`` read-write at
    their own paths, and ``cwd`` as its folder. Folders are mounted in that order, so a
    bound folder inside the home or ``/tmp`` stays visible."""
    home = env.get("HOME", "")
    args = [bwrap, *NAMESPACES]
    if os.getuid() == 0:
        args += ["--cap-drop", "ALL"]  # root in the sandbox could mknod and mount a disk
    args += _system()
    for path in ETC_FILES:
        args += ["--ro-bind-try", path, path]
    if not home.startswith("/") or home.rstrip("/") in ("", "/tmp"):
        home = "/tmp/home"
    args += [*_identity(etc, home), "--tmpfs", "/tmp", "--tmpfs", home,
             "--setenv", "HOME", home, "--setenv", "TMPDIR", "/tmp",
             "--setenv", "HF_DATASETS_CACHE", os.path.join(home, ".cache/huggingface/datasets")]
    for root in interpreter_roots(python):
        args += ["--ro-bind", root, root]
    args += _caches(env, env.get("HOME", ""))
    args += ["--ro-bind", str(CHILD), str(CHILD)]
    for folder in writable:
        args += ["--bind", str(folder), str(folder)]
    return [*args, "--chdir", str(cwd), "--", *cmd]


@dataclass
class Confinement:
    """A prepared sandboxed command: run ``cmd``, then call :meth:`close`. ``isolated``:
    whether bubblewrap confines it (else the limits alone do)."""

    cmd: list[str]
    cgroup: Path | None = None
    isolated: bool = False
    scratch: Path | None = None

    def close(self) -> None:
        """Remove the run's pids cgroup, killing any process still in it, and the files
        written for the sandbox."""
        cgroups.remove(self.cgroup, seconds=2.0)
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


def confine(cmd: Sequence[str], sandbox: Sandbox, *, python: str = "",
            env: Mapping[str, str] | None = None, cwd: Path | None = None,
            run_dir: Path | None = None) -> Confinement:
    """Wrap ``cmd`` (the child's argv, run with interpreter ``python`` in folder ``cwd``,
    its environment ``env``) so it runs under ``sandbox``'s limits and isolation.

    Order: join a fresh pids cgroup (a shell that then execs), ``prlimit`` sets the
    resource limits and execs bubblewrap (:func:`bwrap_command`), which execs the
    interpreter. The run's own folder ``run_dir`` (the patched source, the probe's events)
    and ``sandbox.workdir`` (else ``cwd``) are the folders it may write. Pieces this
    machine cannot do are left out (see :func:`isolation`); raises :class:`AutofixError`
    when bubblewrap is missing and ``sandbox.require_isolation`` is set.
    """
    if sandbox.require_isolation:
        require_isolation()
    inner = list(cmd)
    bwrap = bubblewrap()
    scratch = None
    if bwrap.usable:
        folder = Path(cwd or Path.cwd()).resolve()
        writable = [Path(sandbox.workdir).resolve() if sandbox.workdir else folder]
        writable += [run_dir.resolve()] if run_dir is not None else []
        scratch = Path(tempfile.mkdtemp(prefix="autofix-etc-"))
        inner = bwrap_command(inner, bwrap=bwrap.path, python=python or inner[0],
                              env=env if env is not None else os.environ, cwd=folder,
                              writable=writable, etc=scratch)
    limits = [f"--as={sandbox.memory_mb * 1024 * 1024}", f"--cpu={sandbox.cpu_seconds}"]
    parent = _pids_parent()
    cgroup = None
    if shutil.which("prlimit"):
        if parent is None:
            limits.append(f"--nproc={sandbox.max_processes}")
        inner = ["prlimit", *limits, "--", *inner]
    if parent is not None:
        cgroup = parent / f"autofix-{uuid.uuid4().hex[:12]}"
        try:
            cgroup.mkdir()
            (cgroup / "pids.max").write_text(str(sandbox.max_processes))
            inner = ["sh", "-c", f'echo $$ > "{cgroup}/cgroup.procs" && exec "$@"', "sh",
                     *inner]
        except OSError:
            cgroup = None
    return Confinement(inner, cgroup, bwrap.usable, scratch)
