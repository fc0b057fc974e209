"""Load-robust fit accounting: every ``fit`` of a timed estimator is one record with its thread CPU time.

A timed estimator is a subclass of the real one (``TimedSVC(SVC)``, ``TimedPipeline(Pipeline)``)
whose ``fit`` appends a record ``{"n": training size, "seconds": thread CPU time}`` to the current
:class:`FitLog`, and whose ``score`` and ``predict`` (what accuracy scoring calls) add their thread CPU time to the record of the fit they use. ``time.thread_time()`` counts the CPU
time of the calling thread only, so the sum does not grow when other jobs share the machine (the
searches run their fits in the calling thread: ``n_jobs=None`` for scikit-learn, certa's inline
executor, Optuna's ``n_jobs=1``), and BLAS/OpenMP pools are limited to one thread
(:func:`one_thread`) so that no fit's work runs in a thread the clock does not see.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sklearn.pipeline import Pipeline
from sklearn.svm import SVC

_STATE = threading.local()


class FitLog:
    """The fits of one method run: ``records`` (one per ``fit`` call), ``fits``, ``seconds``."""

    def __init__(self) -> None:
        self.records: list[dict[str, float]] = []

    @property
    def fits(self) -> int:
        return len(self.records)

    @property
    def seconds(self) -> float:
        return float(sum(r["seconds"] for r in self.records))

    def by_size(self) -> dict[int, int]:
        """Number of fits per training size."""
        out: dict[int, int] = {}
        for r in self.records:
            out[int(r["n"])] = out.get(int(r["n"]), 0) + 1
        return dict(sorted(out.items()))


_CURRENT: list[FitLog] = []


@contextmanager
def recording() -> Iterator[FitLog]:
    """``with recording() as log:`` every timed fit inside is counted in ``log``."""
    log = FitLog()
    _CURRENT.append(log)
    try:
        yield log
    finally:
        _CURRENT.remove(log)


@contextmanager
def one_thread() -> Iterator[None]:
    """Limit BLAS and OpenMP pools to one thread (the thread clock sees every fit's work)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def _n(X: Any) -> int:
    return int(X.shape[0]) if hasattr(X, "shape") else len(X)


class TimedMixin:
    """Put first in the bases of a subclass of an estimator: its fits are counted and timed."""

    def fit(self, X, y=None, **fit_params):
        if getattr(_STATE, "busy", False):   # a fit inside a timed call is part of that call
            return super().fit(X, y, **fit_params)
        _STATE.busy = True
        t0 = time.thread_time()
        try:
            out = super().fit(X, y, **fit_params)
        finally:
            _STATE.busy = False
            self.new_record(_n(X), time.thread_time() - t0)
        return out

    def new_record(self, n: int, seconds: float) -> None:
        """Count one fit on ``n`` samples that took ``seconds`` (later calls on it add theirs)."""
        rec = {"n": n, "seconds": seconds}
        for log in _CURRENT:
            log.records.append(rec)
        self._timing_record = rec

    def _timed(self, name: str, *args, **kwargs):
        method = getattr(super(), name)
        if getattr(_STATE, "busy", False):
            return method(*args, **kwargs)
        _STATE.busy = True
        t0 = time.thread_time()
        try:
            return method(*args, **kwargs)
        finally:
            _STATE.busy = False
            self.charge(time.thread_time() - t0)

    def charge(self, seconds: float) -> None:
        """Add ``seconds`` to the record of this estimator's last fit."""
        rec = getattr(self, "_timing_record", None)
        if rec is not None:
            rec["seconds"] += seconds

    def score(self, X, y=None, sample_weight=None):
        return self._timed("score", X, y, sample_weight=sample_weight)

    def predict(self, X, **kwargs):
        return self._timed("predict", X, **kwargs)


class TimedSVC(TimedMixin, SVC):
    """``sklearn.svm.SVC`` whose fits are counted and timed (same parameters)."""


class TimedPipeline(TimedMixin, Pipeline):
    """``sklearn.pipeline.Pipeline`` whose fits are counted and timed (same parameters)."""
