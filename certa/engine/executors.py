"""Where evaluations run: inline, local processes (pebble), Dask, Ray, or any concurrent.futures.Executor."""
from __future__ import annotations

import atexit
import math
import os
import runpy
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from . import worker_start


class InlineExecutor(Executor):
    """Runs each task at submission, in the calling process (``n_jobs=1``)."""

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - passed on to the caller through the future
            fut.set_exception(exc)
        return fut


class WorkerDied(RuntimeError):
    """The worker process running an evaluation ended abnormally (``os._exit``, abort, segfault, OOM kill)."""


class EvaluationTimeout(RuntimeError):
    """An evaluation ran past its timeout; its worker process was killed and replaced."""


class LocalProcessExecutor(Executor):
    """Local worker processes (:class:`pebble.ProcessPool`) that survive a dying task.

    Unlike a ``ProcessPoolExecutor`` or loky, whose pools break as a whole when one
    worker dies, each task's future fails on its own: a worker that dies (``os._exit``,
    ``abort``, a segfault) fails only the task it was running with :class:`WorkerDied`,
    and is replaced. With ``timeout``, a task still running after ``timeout`` seconds has
    its worker killed (also inside C code) and fails with :class:`EvaluationTimeout`.
    Workers exit when the main process dies, even if it is killed with SIGKILL.

    Parameters
    ----------
    max_workers : int
    timeout : float or None
        Hard limit in seconds per task.
    """

    def __init__(self, max_workers: int, timeout: float | None = None) -> None:
        self._max_workers = int(max_workers)
        self.timeout = timeout
        self.preloaded: str | None = None
        self._preload: tuple[str, bytes] | None = None
        self._pool: Any = None

    def preload(self, token: str, blob: bytes) -> None:
        """Have every worker (also one started to replace a killed one) load this pickled
        evaluator when it starts, so a task's timeout counts the evaluation only."""
        if self._pool is not None:
            raise RuntimeError("preload() must come before the first task")
        self._preload, self.preloaded = (token, blob), token

    def _start(self) -> Any:
        from pebble import ProcessPool

        threads = max(1, (os.cpu_count() or 1) // self._max_workers)
        # Workers are started as fresh interpreters by loky's process launcher (fork + exec):
        # not a bare fork, which hangs when the parent has used OpenMP or holds locks in other
        # threads; and unlike multiprocessing's spawn / forkserver, it does not re-run the
        # user's __main__ module in each worker (a script without a main guard works).
        # joblib's own copy of loky, not the standalone package: importing the latter re-registers
        # multiprocessing's "loky" context, so joblib (GridSearchCV(n_jobs=2) later in the same
        # process) would start its workers with the other copy's resource tracker and print
        # KeyError tracebacks and "leaked file objects" warnings (issue 25 item 9).
        from joblib.externals.loky.backend.context import get_context

        ctx = get_context("loky")
        # The initializer is a file run by runpy (standard library only), not a function of certa,
        # which the worker could call only after importing certa (seconds): the first thing a worker
        # does is watch the main process, so one killed while its pool starts takes the workers with it.
        return ProcessPool(max_workers=self._max_workers, initializer=runpy.run_path,
                           initargs=(worker_start.__file__, {"WORKER": (os.getpid(), threads, self._preload)},
                                     worker_start.RUN_NAME), context=ctx)

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        from concurrent.futures import TimeoutError as FuturesTimeout

        from pebble import ProcessExpired

        if self._pool is None:
            self._pool = self._start()
        inner = self._pool.schedule(fn, args=args, kwargs=kwargs, timeout=self.timeout)
        outer: Future = Future()

        def relay(f: Future) -> None:
            if f.cancelled():
                outer.cancel()
                return
            exc = f.exception()
            if isinstance(exc, ProcessExpired):
                code = exc.exitcode
                how = f"signal {-code} ({signal.Signals(-code).name})" if isinstance(code, int) and code < 0 \
                    and -code in signal.Signals._value2member_map_ else f"exit code {code}"
                exc = WorkerDied(f"the worker process running this evaluation died ({how})")
            elif isinstance(exc, FuturesTimeout):
                exc = EvaluationTimeout(f"evaluation exceeded the timeout of {self.timeout} s; its worker was killed")
            if exc is not None:
                outer.set_exception(exc)
            else:
                outer.set_result(f.result())

        outer.set_running_or_notify_cancel()
        inner.add_done_callback(relay)
        outer._certa_inner = inner  # type: ignore[attr-defined]  # cancel() below reaches the pebble task
        return outer

    @staticmethod
    def cancel(future: Future) -> None:
        """Cancel a task that has not started (a running one is left to finish: killing its
        worker would cost the next run a fresh worker)."""
        inner = getattr(future, "_certa_inner", None)
        if inner is not None and not inner.running():
            inner.cancel()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._pool is None:
            return
        if wait and not cancel_futures:
            self._pool.close()
            self._pool.join()
        else:
            self._pool.stop()
            self._pool.join()


_LOCAL_POOL: dict[str, LocalProcessExecutor] = {}


def local_executor(n_workers: int, timeout: float | None) -> LocalProcessExecutor:
    """A reusable :class:`LocalProcessExecutor` (kept across runs, like loky's reusable executor)."""
    pool = _LOCAL_POOL.get("pool")
    if pool is not None and (pool._max_workers != n_workers or (pool._pool is not None and not pool._pool.active)):
        pool.shutdown(wait=False)
        pool = None
    if pool is None:
        pool = LocalProcessExecutor(n_workers)
        _LOCAL_POOL["pool"] = pool
    pool.timeout = timeout
    return pool


@atexit.register
def _stop_local_pool() -> None:
    pool = _LOCAL_POOL.pop("pool", None)
    if pool is not None:
        pool.shutdown(wait=False)


def check_timeout(timeout: Any) -> float | None:
    """``timeout`` validated: a finite positive number of seconds, or ``None`` (no limit)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, got {type(timeout).__name__}")
    if not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"timeout must be a finite positive number of seconds, or None for no limit; got {timeout!r}")
    return float(timeout)


class RayExecutor(Executor):
    """A thin ``concurrent.futures`` face over Ray: ``ray.remote(fn).remote(...).future()``.

    Connects to the Ray instance of this process (``ray.init(address=...)`` first to use
    an existing cluster); without one it starts a local instance, as Ray does on its
    first task. As many evaluations run at once as the cluster has CPUs
    (``_max_workers``), whatever ``n_jobs`` says.
    """

    def __init__(self, **remote_options: Any) -> None:
        import ray  # imported lazily: Ray is optional

        if not ray.is_initialized():
            ray.init()
        self._options = remote_options
        self._max_workers = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        import ray

        remote = ray.remote(fn)
        if self._options:
            remote = remote.options(**self._options)
        return remote.remote(*args, **kwargs).future()


class ClusterLostError(RuntimeError):
    """The distributed cluster has had no workers for longer than its grace period."""


#: Seconds a Dask cluster may have no workers before the run stops with :class:`ClusterLostError`
#: (a nanny or an autoscaler usually brings workers back within seconds).
DASK_NO_WORKER_GRACE = 120.0


# In a Dask worker process: task key -> (worker address, time.time() when its evaluation started),
# also written to a small file per process (see _dask_running_file) that the worker's nanny reads: a
# worker stuck in C code holding the GIL cannot answer, its nanny (another process) can.
_DASK_RUNNING: dict[str, tuple[str, float]] = {}
_DASK_LOCK = threading.Lock()
#: Seconds between two looks at the Dask workers for evaluations past their timeout.
DASK_TIMEOUT_POLL = 0.25


def _dask_running_file(pid: int) -> str:
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"certa-dask-running-{pid}.json")


def _dask_note_running() -> None:
    import json

    path = _dask_running_file(os.getpid())
    with _DASK_LOCK:
        if not _DASK_RUNNING:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            return
        tmp = f"{path}.{threading.get_ident()}"
        with open(tmp, "w") as fh:
            json.dump({key: t for key, (_, t) in _DASK_RUNNING.items()}, fh)
        os.replace(tmp, path)


def _dask_task(fn: Callable, *args: Any) -> Any:
    """Runs on a Dask worker: ``fn(*args)``, noting when it started so the client can enforce a timeout.

    A shipped evaluator is unpickled first, with the modules it needs (its first task on a fresh
    worker): the timeout counts the evaluation only, as the local workers' preload makes it.
    """
    from .evaluators import execute_shipped, keep_shipped

    if fn is execute_shipped:
        keep_shipped(*args[:2])
    try:
        from distributed import get_worker

        worker = get_worker()
        key, address = str(worker.get_current_task()), str(worker.address)
    except Exception:  # noqa: BLE001 - not in a worker (a test calling it directly): no watch
        key = address = None
    if key is not None:
        _DASK_RUNNING[key] = (address, time.time())
        _dask_note_running()
    try:
        return fn(*args)
    finally:
        if key is not None:
            _DASK_RUNNING.pop(key, None)
            _dask_note_running()


def _dask_running(dask_worker: Any = None) -> dict[str, float]:
    """Runs on a Dask worker (``client.run``): seconds each of its evaluations has been running, by task key."""
    now = time.time()
    address = None if dask_worker is None else str(dask_worker.address)
    return {key: now - t for key, (addr, t) in list(_DASK_RUNNING.items()) if address is None or addr == address}


def _dask_running_by_nanny(dask_worker: Any = None) -> dict[str, float]:
    """Runs on a worker's nanny (``client.run(nanny=True)``): what its worker process noted as running."""
    import json

    pid = getattr(getattr(getattr(dask_worker, "process", None), "process", None), "pid", None)
    if pid is None:
        raise RuntimeError("this nanny has no worker process")
    try:
        with open(_dask_running_file(pid)) as fh:
            started = json.load(fh)
    except (FileNotFoundError, ValueError):  # nothing running (or the file is being replaced)
        return {}
    now = time.time()
    return {key: now - t for key, t in started.items()}


class DaskExecutor(Executor):
    """A ``dask.distributed.Client`` as an executor, with a watch on its workers.

    Tasks go to ``client.get_executor(pure=False)`` (Dask's default ``pure=True`` would
    merge identical repeated calls). Dask keeps a task pending while the cluster has no
    workers, however long that lasts; :meth:`check_alive`, called by the runner while it
    waits, raises :class:`ClusterLostError` once the cluster has had no workers for
    ``no_worker_grace`` seconds, so a run on a cluster that lost every worker stops with a
    clear error instead of waiting forever (the evaluations already finished are recorded;
    with a store, run again to resume).

    A per-evaluation ``timeout`` (``run(timeout=...)``) is enforced on the workers: each task
    notes when its evaluation starts (in memory and in a small file its nanny can read);
    :meth:`check_alive` asks the nannies of the busy workers (``client.run(nanny=True)``,
    every :data:`DASK_TIMEOUT_POLL` s) how long their evaluations have been running, which works
    even while an evaluation holds the worker's GIL in C code, and an evaluation past its limit
    is recorded with status ``"timeout"``, its task cancelled and its worker restarted
    (``client.restart_workers``) to stop it. Other tasks that were running on that worker are
    rerun by Dask. This needs workers with a nanny (the default of ``LocalCluster`` and ``dask
    worker``); a worker without one (threads in the client's process, ``processes=False``) is
    asked directly and cannot be restarted: its evaluation is recorded as timed out but keeps its
    thread until it returns.

    Parameters
    ----------
    client : dask.distributed.Client
    no_worker_grace : float, default :data:`DASK_NO_WORKER_GRACE`
        Seconds without any worker before the run stops (> 0).

    Examples
    --------
    >>> from certa.engine.executors import DaskExecutor   # doctest: +SKIP
    >>> run(strategy, evaluator, grid, executor=DaskExecutor(client, no_worker_grace=600))  # doctest: +SKIP
    """

    def __init__(self, client: Any, no_worker_grace: float = DASK_NO_WORKER_GRACE) -> None:
        if not (type(client).__name__ == "Client" and hasattr(client, "get_executor")):
            raise TypeError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
        if (isinstance(no_worker_grace, bool) or not isinstance(no_worker_grace, (int, float))
                or not math.isfinite(no_worker_grace) or no_worker_grace <= 0):
            raise ValueError(f"no_worker_grace must be a finite number of seconds > 0, got {no_worker_grace!r}")
        self.client = client
        self.no_worker_grace = float(no_worker_grace)
        self._inner = client.get_executor(pure=False)
        self._empty_since: float | None = None
        self.timeout: float | None = None  # set by the runner (resolve_executor) for a run with timeout=
        self._tasks: dict[str, tuple[Any, Future]] = {}
        self._started: dict[str, tuple[str, float]] = {}  # task key -> (worker, client clock at its start)
        self._last_look = -math.inf
        self.restarted: list[str] = []  # workers restarted to stop an evaluation past its timeout
        self._restarts: list[threading.Thread] = []

    @property
    def n_threads(self) -> int:
        """Worker threads of the cluster now (at least 1)."""
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001 - a best-effort count only
            return 1

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        if self.timeout is None:
            return self._inner.submit(fn, *args, **kwargs)
        task = self.client.submit(_dask_task, fn, *args, pure=False, **kwargs)
        outer: Future = Future()
        key = str(task.key)
        self._tasks[key] = (task, outer)

        def finished(done: Any) -> None:
            self._tasks.pop(key, None)
            if outer.done():
                return
            try:
                result = done.result()
            except BaseException as exc:  # noqa: BLE001 - passed on to the runner through the future
                _settle(outer, exc=exc)
            else:
                _settle(outer, result=result)

        task.add_done_callback(finished)
        outer.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)
        return outer

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        for restart in self._restarts:  # the cluster is whole again when the run returns
            restart.join(timeout=60)
        self._inner.shutdown(wait=wait)

    def enforce_timeouts(self) -> None:
        """Fail evaluations running past ``timeout`` with :class:`EvaluationTimeout`, and restart their workers.

        Each worker with tasks of this run is asked, through its nanny, how long its evaluations
        have been running (the worker notes them in a file the nanny reads: a worker stuck in C
        code holding the GIL cannot answer itself); a worker without a nanny is asked directly.
        """
        if self.timeout is None or not self._tasks:
            return
        now = time.monotonic()
        if now - self._last_look < DASK_TIMEOUT_POLL:
            return
        self._last_look = now
        try:
            processing = self.client.processing()
        except Exception:  # noqa: BLE001 - the scheduler is busy or going away: look again next time
            return
        for address, keys in processing.items():
            if not any(str(k) in self._tasks for k in keys):
                continue
            running = None
            for fn, nanny in ((_dask_running_by_nanny, True), (_dask_running, False)):
                try:
                    answer = self.client.sync(self.client._run, fn, nanny=nanny, workers=[address],
                                              callback_timeout=2.0)
                    running = next(iter(answer.values()), {})
                    break
                except BaseException:  # noqa: BLE001, S112 - no nanny, or no answer: the worker, then next time
                    continue
            if running is None:
                continue
            for key, secs in running.items():
                if key in self._tasks:
                    self._started[key] = (address, now - secs)
        late: dict[str, list[tuple[str, float]]] = {}
        for key, (address, t0) in list(self._started.items()):
            if key not in self._tasks:
                del self._started[key]
            elif now - t0 > self.timeout:
                late.setdefault(address, []).append((key, now - t0))
        for address, items in late.items():
            for key, secs in items:
                del self._started[key]
                task, outer = self._tasks.pop(key)
                _settle(outer, exc=EvaluationTimeout(
                    f"evaluation exceeded the timeout of {self.timeout} s (running {secs:.1f} s on Dask worker "
                    f"{address}, which is restarted to stop it)"))
                task.cancel()
            # in the background: the timeout is recorded now, while the nanny takes seconds to stop a
            # worker stuck in C code
            restart = threading.Thread(target=self._restart, args=(address,), daemon=True)
            restart.start()
            self._restarts.append(restart)

    def _restart(self, address: str) -> None:
        try:
            self.client.restart_workers([address], raise_for_error=False)
            self.restarted.append(address)
        except BaseException:  # noqa: BLE001 - no nanny (the evaluation keeps its thread, see the class
            # docstring), or the client closed meanwhile (asyncio.CancelledError)
            pass

    def check_alive(self, now: float | None = None) -> None:
        """Raise :class:`ClusterLostError` if the cluster has had no workers for the grace period.

        Also enforces the timeout (:meth:`enforce_timeouts`) when the run has one.
        """
        self.enforce_timeouts()
        now = time.monotonic() if now is None else now
        try:
            n = len(self.client.scheduler_info().get("workers", {}))
        except Exception:  # noqa: BLE001 - a scheduler that cannot be reached has no usable workers
            n = 0
        if n:
            self._empty_since = None
            return
        if self._empty_since is None:
            self._empty_since = now
        elif now - self._empty_since >= self.no_worker_grace:
            raise ClusterLostError(
                f"the Dask cluster has had no workers for {now - self._empty_since:.0f} s "
                f"(no_worker_grace={self.no_worker_grace:g} s); the evaluations that finished are recorded: "
                "start workers and run again with the same store to resume")


def _settle(future: Future, result: Any = None, exc: BaseException | None = None) -> None:
    """Set a future's result or exception unless it is already done (cancelled, or timed out first)."""
    from concurrent.futures import InvalidStateError

    try:
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)
    except InvalidStateError:
        pass


def _effective_workers(n_jobs: int | None) -> int:
    if n_jobs is None:
        return 1
    if not isinstance(n_jobs, (int,)) or isinstance(n_jobs, bool):
        raise TypeError(f"n_jobs must be an int or None, got {type(n_jobs).__name__}")
    if n_jobs == 0:
        raise ValueError("n_jobs must not be 0 (use 1 for serial, -1 for all cores)")
    cores = os.cpu_count() or 1
    return max(1, cores + 1 + n_jobs) if n_jobs < 0 else n_jobs


def resolve_executor(executor: Any = None, n_jobs: int | None = 1,
                     timeout: float | None = None) -> tuple[Executor, int, bool]:
    """Return ``(executor, n_workers, owned)`` for the given ``executor`` / ``n_jobs``.

    ``executor`` may be ``None`` (inline for one job without a timeout, local
    :class:`LocalProcessExecutor` processes otherwise: a timeout is enforced by killing
    the worker, so it needs one even for ``n_jobs=1``), a
    ``concurrent.futures.Executor``, a ``dask.distributed.Client`` (wrapped in a
    :class:`DaskExecutor`, which also stops a run whose cluster has lost every worker;
    pass a ``DaskExecutor`` to set its grace period), or the string ``"ray"``. ``timeout`` is
    enforced on Dask by restarting the worker of an evaluation past it (see :class:`DaskExecutor`),
    and refused for Ray, which cannot stop a running task.
    """
    n_workers = _effective_workers(n_jobs)
    timeout = check_timeout(timeout)
    if executor is None:
        if timeout is not None:  # a pool for this run: its workers preload the evaluator (see runner)
            return LocalProcessExecutor(n_workers, timeout), n_workers, True
        if n_workers == 1:
            return InlineExecutor(), 1, True
        return local_executor(n_workers, None), n_workers, False
    if isinstance(executor, str):
        if executor == "ray":  # n_jobs is ignored: the cluster's CPUs set the concurrency
            if timeout is not None:
                raise ValueError("timeout= is not supported with executor='ray' (Ray cannot stop a running task); "
                                 "use the local executor (executor=None) for a hard timeout")
            ray_pool = RayExecutor()
            return ray_pool, ray_pool._max_workers, True
        raise ValueError(f"executor must be an Executor, a dask Client or 'ray', got {executor!r}")
    is_client = type(executor).__name__ == "Client" and hasattr(executor, "get_executor")
    if is_client or isinstance(executor, DaskExecutor):
        dask_pool = DaskExecutor(executor) if is_client else executor
        dask_pool.timeout = timeout
        return dask_pool, dask_pool.n_threads, is_client
    if isinstance(executor, Executor):
        workers = getattr(executor, "_max_workers", None) or n_workers
        return executor, int(workers), False
    raise TypeError(
        "executor must be None, a concurrent.futures.Executor, a dask.distributed.Client or 'ray', "
        f"got {type(executor).__name__}")
