"""Wait for a state, not a time: helpers for tests that signal or kill processes (issue 24, found item 3).

A test that kills a run "after N evaluations" must neither send its signal before the run got
there nor let the run finish first on a slow machine. So the run's evaluate function calls
:func:`gate`: with ``CERTA_TEST_GATE=N`` in its environment, every call is counted in the file
``CERTA_TEST_GATE_FILE`` (shared by worker processes) and every call after the N-th blocks until
the process is signalled. The test waits (:func:`wait_until`) until N evaluations are recorded,
a state, and then signals: no timing assumption is left. The guard of :func:`wait_until` only
turns a hang into a clear failure.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable


def gate() -> None:
    """Called at the start of an evaluation: blocks every call after the ``CERTA_TEST_GATE``-th (see above)."""
    limit = os.environ.get("CERTA_TEST_GATE")
    if not limit:
        return
    path = os.environ["CERTA_TEST_GATE_FILE"]
    with open(path, "a") as fh:  # O_APPEND: one line per call, whichever process makes it
        fh.write("call\n")
    with open(path) as fh:
        calls = sum(1 for _ in fh)
    if calls > int(limit):
        while True:  # until the test's signal ends this process (SIGINT/SIGTERM raise here)
            time.sleep(0.05)


def gate_env(directory: os.PathLike | str, n: int, env: dict | None = None) -> dict:
    """``env`` (default ``os.environ``) with the gate set to let ``n`` evaluations through."""
    tests = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), tests) if p)
    env["CERTA_TEST_GATE"] = str(n)
    env["CERTA_TEST_GATE_FILE"] = os.path.join(os.fspath(directory), "gate-calls.txt")
    return env


def wait_until(condition: Callable[[], bool], what: str, proc=None, guard: float = 600.0) -> None:
    """Poll ``condition`` until it holds; fail clearly if ``proc`` ends first or nothing happens in ``guard`` s."""
    import pytest

    end = time.monotonic() + guard
    while not condition():
        if proc is not None and proc.poll() is not None:
            err = proc.stderr.read() if getattr(proc, "stderr", None) else ""
            pytest.fail(f"the process ended (exit {proc.returncode}) before {what}: {str(err)[-2000:]}")
        if time.monotonic() > end:
            pytest.fail(f"{what}: not reached in {guard:.0f} s (a hang, not a slow machine)")
        time.sleep(0.02)
