"""The first thing a local worker process runs: the watch that makes it die with the main process.

:class:`~certa.engine.executors.LocalProcessExecutor` starts each worker with this file, run by
``runpy.run_path`` as the pool's initializer, instead of a function of certa: unpickling a function
of certa would import certa, numpy and scikit-learn, seconds on a busy machine, before any of the
worker's code runs. This file needs the standard library only, so the watch starts within
milliseconds of the worker's start, and the slow part of the start-up (importing certa, loading
the run's evaluator) is watched as the running worker is: a main process killed while its pool
starts takes its workers with it at once (issue 31 item 7; they used to linger until their
start-up ended, 7-10 s).

Imports nothing outside the standard library at its top (its reason to exist); certa's
evaluators are imported by :func:`start`, once the watch runs.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time

#: The ``__name__`` the pool's initializer gives this file, so that running it (not importing it) starts a worker.
RUN_NAME = "__certa_worker_start__"


def watch_parent(parent_pid: int) -> None:
    """Die with the main process, let SIGTERM kill at once, ignore Ctrl-C.

    ``PR_SET_PDEATHSIG`` (Linux) makes the kernel send SIGKILL when the process that
    started the worker dies, even while the worker is stuck in C code (or still importing);
    a watcher thread that polls the main process covers other systems (and a forkserver
    parent). The default SIGTERM action (instead of pebble's Python handler, which runs only
    when C code returns) lets a timed-out worker be stopped at once.
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Ctrl-C reaches the whole process group: only the main process acts on it (it records the
    # evaluations finished so far and stops the workers), so an evaluation cut by it is never
    # recorded as a failure
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except Exception:  # noqa: BLE001 - the watcher thread below still works
            pass

    def watch() -> None:
        while True:
            try:
                os.kill(parent_pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True, name="certa-parent-watch").start()
    try:  # the main process died before the kernel's watch was set
        os.kill(parent_pid, 0)
    except ProcessLookupError:
        os._exit(1)


def start(parent_pid: int, threads: int, preload: tuple[str, bytes] | None) -> None:
    """Start a worker: the watch first, then the slow part: the run's evaluator (certa, its data, the
    user's code), loaded before any task's timeout starts, and the BLAS thread limits."""
    watch_parent(parent_pid)
    # certa (numpy, scikit-learn) is imported here, in every worker at once, as the initializer of
    # a function of certa did: left to the first task, it would be imported while the worker holds
    # the pool's task channel, one worker after another
    from certa.engine.evaluators import keep_evaluator

    if preload is not None:
        keep_evaluator(*preload)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    except Exception:  # noqa: BLE001 - a performance hint only
        pass


if __name__ == RUN_NAME:  # runpy.run_path(this file, {"WORKER": (parent_pid, threads, preload)}, RUN_NAME)
    start(*globals()["WORKER"])
