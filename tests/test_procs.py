"""One home for a run's process tree (issue 40, item 3): ``autofix/run/child/procs.py``
scans ``/proc`` and exits like a command, standard library only; the supervisor and the
zygote, both executed by path, load that one file and scan nothing themselves."""

from __future__ import annotations

import ast
import signal
import subprocess
import sys
import textwrap

import pytest

from .conftest import ROOT

CHILD = ROOT / "autofix" / "run" / "child"
PROCS = CHILD / "procs.py"
OWNERS = (ROOT / "autofix" / "run" / "supervisor.py", CHILD / "zygote.py")


def _top_level_imports(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_procs_is_standard_library_only() -> None:
    imported = _top_level_imports(PROCS.read_text(encoding="utf-8")) - {"__future__"}
    assert imported and imported <= set(sys.stdlib_module_names), imported


def test_the_supervisor_and_the_zygote_load_procs_and_scan_nothing_themselves() -> None:
    for owner in OWNERS:
        source = owner.read_text(encoding="utf-8")
        assert '"_autofix_procs"' in source and "procs.py" in source, owner
        assert "scandir" not in source and "/stat" not in source, owner  # no scan of its own
        assert "def exit_like" not in source or "PROCS.exit_like(status)" in source, owner


def _run(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh ``python -I`` with ``procs.py`` loaded by path as ``procs``."""
    loader = textwrap.dedent(f"""
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("_autofix_procs", {str(PROCS)!r})
        procs = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(procs)
    """)
    return subprocess.run([sys.executable, "-I", "-c", loader + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.process
def test_descendants_are_children_and_theirs() -> None:
    """A child and the grandchild it starts in a session of its own are both found; a
    process that is not below this one is not."""
    done = _run("""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c",
            "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
            "'import time; time.sleep(30)'], start_new_session=True); time.sleep(30)"])
        for _ in range(200):
            found = procs.descendants()
            if len(found) >= 2:
                break
            time.sleep(0.05)
        print(child.pid in found, len(found), os.getppid() in found, os.getpid() in found)
        for pid in found:
            os.kill(pid, 9)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "2", "False", "False"]


@pytest.mark.process
def test_exit_like_ends_with_the_commands_code_or_signal() -> None:
    """A wait status's exit code is the exit code; a signal is the same signal (no core
    dump of its own), as a shell sees a command that ended so."""
    code = _run("""
        import os
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        procs.exit_like(os.waitpid(pid, 0)[1])
    """)
    assert code.returncode == 7, code.stderr
    killed = _run("""
        import os, signal
        pid = os.fork()
        if pid == 0:
            os.kill(os.getpid(), signal.SIGTERM)
        procs.exit_like(os.waitpid(pid, 0)[1])
    """)
    assert killed.returncode == -signal.SIGTERM, killed.stderr
    unknown = _run("procs.exit_like(None)")
    assert unknown.returncode == 1


@pytest.mark.process
def test_children_of_reads_the_parent_from_stat() -> None:
    """The scanning process is among its parent's children, not among its own (``comm``
    in ``/proc/PID/stat`` may hold spaces and parentheses, so the parent is read after the
    last one)."""
    done = _run("""
        import os
        print(os.getpid() in procs.children_of({os.getppid()}),
              os.getpid() in procs.children_of({os.getpid()}))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]
