"""What the user asked for, once: the one settings object every layer reads.

The CLI builds a :class:`Settings` from its options, the engine (:func:`autofix.loop.
engine.repair`) reads it, the runner reads it for every run (:class:`autofix.run.runner.
RunSpec` carries it whole), and batch mode gives the same object to every script (a Ray
task gets it pickled). No layer copies its fields by hand. Collaborators (an observer, a
cancel event, a branch writer, the base commit) are not settings: they are passed to
``repair()`` as keyword arguments.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: Launchers ``--launcher`` accepts (:func:`autofix.run.runner.launch_command`).
LAUNCHERS = ("torchrun", "accelerate")

#: Defaults, shared by the CLI's help, the README and the settings below.
DEFAULT_TIMEOUT = 600.0
DEFAULT_MAX_STEPS = 60
DEFAULT_MAX_ITERATIONS = 8
DEFAULT_SAMPLE_ROWS = 2000


@dataclass(frozen=True)
class Sandbox:
    """Limits and isolation for each run of an untrusted script (``autofix batch
    --sandbox``), enforced by :func:`autofix.run.sandbox.confine`.

    ``memory_mb``: address-space limit in MiB (``RLIMIT_AS``); ``cpu_seconds``: CPU-time
    limit (``RLIMIT_CPU``); ``max_processes``: processes and threads at once (a pids
    cgroup, else ``RLIMIT_NPROC``); ``pass_env``: variable names kept although they look
    like credentials; ``workdir``: the throwaway copy of the work tree the session runs on,
    the one folder of the host the script may write (``""``: the folder it runs in);
    ``require_isolation``: refuse to run (:class:`autofix.errors.AutofixError`, exit 2)
    where bubblewrap cannot isolate the run, instead of running it with the limits alone.
    """

    memory_mb: int = 8192
    cpu_seconds: int = 3600
    max_processes: int = 512
    pass_env: tuple[str, ...] = ()
    workdir: str = ""
    require_isolation: bool = False


@dataclass(frozen=True)
class Settings:
    """Every option of a repair session; the defaults are the CLI's.

    ``python``: the training environment's interpreter (default: autofix's own).
    ``args``: the script's arguments. ``branch``: the fix branch (``None``:
    ``autofix/<script stem>``). ``cwd``: the folder the script runs in. ``timeout``:
    seconds per run (``None``: no limit). ``max_steps``: optimizer steps per healthy
    run (``0``: ``--full``). ``max_iterations``: most fixes tried. ``resume``/``init``/
    ``dry_run``: see ``autofix fix -h``. ``only``/``skip``: recipe ids allowed / never
    applied. ``launcher``/``nproc_per_node``: a distributed launch. ``sample_rows``: rows
    per split in diagnosis runs (``0``: off). ``one_at_a_time``: no API check before run
    1, no preflight checks. ``clean_tree``: refuse to start when the work tree has
    uncommitted changes (:func:`autofix.vcs.tree.require_clean`). ``env``: extra
    environment of every run. ``sandbox``: limits and isolation of every run (untrusted
    scripts, :class:`Sandbox`). ``warm``: runs are forks of the session's warm
    interpreter (:mod:`autofix.run.warm`) where they can be (``True``, ``--warm``;
    ``False``, ``--cold``: every run a fresh interpreter; ``None``, the default: warm
    unless the script imports TensorFlow or Keras, whose runs the zygote cannot shorten:
    it never imports TensorFlow).
    """

    python: str = field(default_factory=lambda: sys.executable)
    args: tuple[str, ...] = ()
    branch: str | None = None
    cwd: Path = field(default_factory=Path.cwd)
    timeout: float | None = DEFAULT_TIMEOUT
    max_steps: int = DEFAULT_MAX_STEPS
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    resume: bool = False
    init: bool = False
    dry_run: bool = False
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    launcher: str = ""
    nproc_per_node: int = 1
    sample_rows: int = DEFAULT_SAMPLE_ROWS
    one_at_a_time: bool = False
    clean_tree: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    sandbox: Sandbox | None = None
    warm: bool | None = None

    def __post_init__(self) -> None:
        if self.launcher and self.launcher not in LAUNCHERS:
            raise ValueError(f"launcher {self.launcher!r} is not one of {', '.join(LAUNCHERS)}")
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "only", tuple(self.only))
        object.__setattr__(self, "skip", tuple(self.skip))
        object.__setattr__(self, "env", dict(self.env))

    def allows(self, recipe_id: str) -> bool:
        """``--only`` / ``--skip``: may the recipe ``recipe_id`` be applied?"""
        return (not self.only or recipe_id in self.only) and recipe_id not in self.skip
