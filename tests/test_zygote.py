"""The warm interpreter's rules without a process: when a run goes cold, the deferred
probes, the status a client leaves (``autofix/run/warm.py``, ``run/child/zygote.py``)."""

from __future__ import annotations

import inspect
import json
import sys
import threading
import types
from pathlib import Path

from autofix.run.child import probes, zygote
from autofix.run.probe_events import BOOTSTRAP
from autofix.run.warm import WarmInterpreter, WarmRun, comparable, shadowing
from autofix.settings import Sandbox, Settings


def test_a_file_or_package_named_like_a_loaded_module_shadows_it(tmp_path: Path) -> None:
    (tmp_path / "datasets.py").write_text("")
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("")
    (tmp_path / "transformers").mkdir()  # no __init__: a namespace folder loses
    (tmp_path / "train.py").write_text("")
    (tmp_path / "notes.txt").write_text("")
    assert shadowing(tmp_path, ["datasets", "torch", "transformers", "numpy"]) == \
        ["datasets", "torch"]
    assert shadowing(tmp_path / "missing", ["torch"]) == []


def test_only_autofix_own_variables_may_differ_between_zygote_and_run() -> None:
    assert comparable({"AUTOFIX_PREFLIGHT": "1", "AUTOFIX_PROBE_FILE": "/x", "HOME": "/h",
                       "PYTEST_CURRENT_TEST": "t",
                       "CUDA_VISIBLE_DEVICES": ""}) == {"HOME": "/h", "CUDA_VISIBLE_DEVICES": ""}


def test_launchers_sandboxes_and_cold_never_use_a_zygote(tmp_path: Path) -> None:
    torch_script, tf_script, notebook = (tmp_path / "pt.py", tmp_path / "tf.py",
                                         tmp_path / "nb.ipynb")
    torch_script.write_text("import torch\nfrom transformers import Trainer\n")
    tf_script.write_text("import os\n\nimport tensorflow as tf\n")
    notebook.write_text(json.dumps({"cells": [{"cell_type": "code", "source": [
        "import numpy as np\n", "from tf_keras import layers\n"]}]}, indent=1))
    assert WarmInterpreter.applies(Settings(warm=True))
    assert WarmInterpreter.applies(Settings(), torch_script)  # the default
    assert not WarmInterpreter.applies(Settings(), tf_script)
    assert not WarmInterpreter.applies(Settings(), notebook)
    assert WarmInterpreter.applies(Settings(warm=True), tf_script)  # asked for
    assert not WarmInterpreter.applies(Settings(warm=False), torch_script)  # --cold
    assert not WarmInterpreter.applies(Settings(warm=True, launcher="torchrun"))
    assert not WarmInterpreter.applies(Settings(warm=True, sandbox=Sandbox()))


def _ready(settings: Settings, modules: list[str]) -> WarmInterpreter:
    """A warm interpreter that believes its zygote answered (no process)."""
    warm = WarmInterpreter(settings)
    warm.thread = threading.current_thread()  # start() does nothing
    warm.modules = modules
    warm.ready.set()
    return warm


def test_a_run_goes_cold_where_a_fork_could_differ(tmp_path: Path) -> None:
    settings = Settings(python=sys.executable, cwd=tmp_path, env={"MYVAR": "1"})
    script = tmp_path / "train.py"
    script.write_text("")
    warm = _ready(settings, ["torch", "json"])
    cmd = [sys.executable, str(BOOTSTRAP), "/tmp/p/train.py", str(script), "--lr", "1"]
    env = {**WarmInterpreter.base_env(settings), "AUTOFIX_PREFLIGHT": "1"}
    run = warm.prepare(script, cmd, env, tmp_path)
    assert run is not None
    assert run.cmd[-5:] == ["--", "/tmp/p/train.py", str(script), "--lr", "1"]
    assert run.cmd[:2] == [sys.executable, "-I"]
    # a variable a library may read at import differs: cold
    assert warm.prepare(script, cmd, {**env, "CUDA_VISIBLE_DEVICES": ""}, tmp_path) is None
    # a launcher's command: cold
    assert warm.prepare(script, [sys.executable, "-m", "torch.distributed.run", *cmd[1:]],
                        env, tmp_path) is None
    # the script's folder holds a module named like one the zygote loaded: cold
    (tmp_path / "json.py").write_text("")
    assert warm.prepare(script, cmd, env, tmp_path) is None
    # a zygote that failed: cold from then on
    (tmp_path / "json.py").unlink()
    warm.reason = "the warm interpreter did not start"
    assert warm.prepare(script, cmd, env, tmp_path) is None
    warm.close()


def test_the_client_status_says_whether_the_fork_ran(tmp_path: Path) -> None:
    run = WarmRun([], tmp_path / "status")
    assert not run.ran()  # nothing written: the client never reached the zygote
    run.status.write_text("cold cannot reach the zygote\n")
    assert not run.ran()
    run.status.write_text("forked 12\nlost\n")
    assert not run.ran()  # the zygote died under the run: redone cold
    run.status.write_text("forked 12\nexit 0\n")
    assert run.ran()
    run.status.write_text("forked 12\n")
    assert run.ran()  # killed at the timeout: the run's own outcome


def _reads_switches_at_patch_time(patch: object) -> bool:
    """Whether a probe's patch reads the run's switches before its first nested def."""
    source = inspect.getsource(patch)  # type: ignore[arg-type]
    head = source.split("\n    def ", 1)[0].split("\n    @", 1)[0]
    return any(word in head for word in ("ENABLED", "SAMPLE_ROWS", "MAX_STEPS", "RECORD_ONLY",
                                         "PROBE_FILE"))


def test_every_patch_that_reads_the_run_switches_is_deferred_to_the_fork() -> None:
    """A patch that decides at import from the run's switches cannot run in the zygote
    (its switches are the next run's): zygote.CONDITIONAL must name each of them."""
    named = {f"{p.__module__.rsplit('.', 1)[-1]}.{p.__name__}" for _, p in probes.HOOKS}
    reading = {f"{p.__module__.rsplit('.', 1)[-1]}.{p.__name__}" for _, p in probes.HOOKS
               if _reads_switches_at_patch_time(p)}
    assert set(zygote.CONDITIONAL) <= named
    assert reading == set(zygote.CONDITIONAL)


def test_a_replaced_function_is_rebound_in_its_package(monkeypatch: object) -> None:
    def original() -> None: ...

    def wrapped() -> None: ...

    pkg = types.ModuleType("fakepkg_z")
    sub = types.ModuleType("fakepkg_z.load")
    other = types.ModuleType("otherpkg_z")
    for mod in (pkg, sub, other):
        mod.load = original  # type: ignore[attr-defined]
        sys.modules[mod.__name__] = mod
    try:
        before = dict(vars(sub))
        sub.load = wrapped  # type: ignore[attr-defined]
        zygote.rebind(sub, before)
        assert pkg.load is wrapped  # type: ignore[attr-defined]
        assert other.load is original  # type: ignore[attr-defined]  # another package's
    finally:
        for mod in (pkg, sub, other):
            sys.modules.pop(mod.__name__, None)
