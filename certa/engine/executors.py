"""Where evaluations run: inline, local processes (loky), Dask, Ray, or any concurrent.futures.Executor."""
from __future__ import annotations

import os
from concurrent.futures import Executor, Future
from typing import Any, Callable


class InlineExecutor(Executor):
    """Runs each task at submission, in the calling process (``n_jobs=1``)."""

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - passed on to the caller through the future
            fut.set_exception(exc)
        return fut


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


def _effective_workers(n_jobs: int | None) -> int:
    if n_jobs is None:
        return 1
    if not isinstance(n_jobs, (int,)) or isinstance(n_jobs, bool):
        raise TypeError(f"n_jobs must be an int or None, got {type(n_jobs).__name__}")
    if n_jobs == 0:
        raise ValueError("n_jobs must not be 0 (use 1 for serial, -1 for all cores)")
    cores = os.cpu_count() or 1
    return max(1, cores + 1 + n_jobs) if n_jobs < 0 else n_jobs


def resolve_executor(executor: Any = None, n_jobs: int | None = 1) -> tuple[Executor, int, bool]:
    """Return ``(executor, n_workers, owned)`` for the given ``executor`` / ``n_jobs``.

    ``executor`` may be ``None`` (inline for one job, loky processes otherwise),
    a ``concurrent.futures.Executor``, a ``dask.distributed.Client`` (wrapped
    with ``client.get_executor(pure=False)``: Dask's default ``pure=True`` would
    merge identical repeated calls), or the string ``"ray"``.
    """
    n_workers = _effective_workers(n_jobs)
    if executor is None:
        if n_workers == 1:
            return InlineExecutor(), 1, True
        from loky import get_reusable_executor

        threads = str(max(1, (os.cpu_count() or 1) // n_workers))
        env = {v: threads for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
        return get_reusable_executor(max_workers=n_workers, timeout=300, env=env), n_workers, False
    if isinstance(executor, str):
        if executor == "ray":  # n_jobs is ignored: the cluster's CPUs set the concurrency
            ray_pool = RayExecutor()
            return ray_pool, ray_pool._max_workers, True
        raise ValueError(f"executor must be an Executor, a dask Client or 'ray', got {executor!r}")
    if type(executor).__name__ == "Client" and hasattr(executor, "get_executor"):
        try:
            workers = max(1, sum(executor.nthreads().values()))
        except Exception:  # noqa: BLE001 - a best-effort count only
            workers = n_workers
        return executor.get_executor(pure=False), workers, True
    if isinstance(executor, Executor):
        workers = getattr(executor, "_max_workers", None) or n_workers
        return executor, int(workers), False
    raise TypeError(
        "executor must be None, a concurrent.futures.Executor, a dask.distributed.Client or 'ray', "
        f"got {type(executor).__name__}")
