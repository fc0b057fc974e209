"""Helpers shared by several test files: a small run kept in a store, counting or altering a store's rows,
and running code in fresh interpreters."""
from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import threading
from concurrent.futures import Executor, Future
from pathlib import Path

import numpy as np

from certa import FunctionEvaluator, TopTwoThompson, run

ROOT = Path(__file__).resolve().parents[1]


def small_run(path, fn=None):
    """Two candidates, a top-two run of at most 12 evaluations kept in the store ``path``."""
    fn = fn or (lambda p, s: {"score": float(p["x"]), "payload": {"idx": np.arange(3)}})
    return run(TopTwoThompson(0.9, max_evals=12), FunctionEvaluator(fn), {"x": [1, 2]}, random_state=0, store=path)


def stored_rows(path) -> int:
    """Rows (evaluations) recorded so far in the store ``path``, read-only; 0 before it has any."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.OperationalError:
        return 0
    try:
        return con.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def write_sql(path, sql: str, params=(), resign: bool = True) -> None:
    """Run one statement on the SQLite file ``path`` and commit (to tamper with a store as a user or an attacker could).

    With ``resign`` the rows' checksums (and the run identity's) are computed again afterwards, as
    an attacker could: the edit then reaches certa's field-by-field checks instead of being set
    apart as damage (``resign=False``).
    """
    con = sqlite3.connect(path)
    con.execute(sql, params)
    con.commit()
    con.close()
    if resign:
        resign_store(path)


def resign_store(path) -> None:
    """Give every row of the store ``path`` (and its run identity) the checksum of what it now holds."""
    from certa.engine.store_rows import SELECT_CHECKED, checksum, meta_checksum

    con = sqlite3.connect(path)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "evaluations" in tables and "checksum" in {r[1] for r in con.execute("PRAGMA table_info(evaluations)")}:
        rows = con.execute(f"SELECT seq, {SELECT_CHECKED} FROM evaluations").fetchall()
        con.executemany("UPDATE evaluations SET checksum=? WHERE seq=?", [(checksum(r[1:]), r[0]) for r in rows])
    if "meta" in tables:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        if "checksum" in meta:
            con.execute("UPDATE meta SET value=? WHERE key='checksum'",
                        (meta_checksum(meta.get("fingerprint", ""), meta.get("description", "")),))
    con.commit()
    con.close()


def outputs_under_hash_seeds(code: str, *args: str) -> list[str]:
    """The standard output (stripped) of ``python -c code *args`` under ``PYTHONHASHSEED`` 1 and 2, certa importable."""
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        outs.append(subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                                   text=True, check=True).stdout.strip())
    return outs


class ShuffledExecutor(Executor):
    """Runs submitted tasks one at a time in a background thread, always picking a random one of
    those waiting: futures complete in an order unrelated to the order submitted."""

    def __init__(self, n_workers: int, seed: int) -> None:
        self._max_workers = n_workers              # what certa reads as the worker count
        self._rng = random.Random(seed)
        self._tasks: list = []
        self._cond = threading.Condition()
        self.submitted: list[Future] = []
        self.completed: list[Future] = []
        self._stop = False
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def submit(self, fn, /, *args, **kwargs):
        fut: Future = Future()
        with self._cond:
            self._tasks.append((fut, fn, args, kwargs))
            self.submitted.append(fut)
            self._cond.notify()
        return fut

    def _loop(self):
        while True:
            with self._cond:
                while not self._tasks and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                # let the runner submit what it asks now (as many as there are workers), then pick
                self._cond.wait_for(lambda: len(self._tasks) >= self._max_workers or self._stop, timeout=0.002)
                fut, fn, args, kwargs = self._tasks.pop(self._rng.randrange(len(self._tasks)))
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # noqa: BLE001 - passed on through the future
                    fut.set_exception(exc)
                self.completed.append(fut)

    def shutdown(self, wait=True, *, cancel_futures=False):
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if wait:
            self._thread.join()


def run_on_rows(strat, matrix, n_candidates: int | None = None, failed=()):
    """Drive a paired strategy over a fixed score matrix (``matrix[row, candidate]``): ask every draw it
    offers, tell each its cell (a failure for the ``(row, candidate)`` cells in ``failed``), until it
    finishes; with ``n_candidates``, ``start`` it first (seed 0)."""
    from certa.engine.draws import Outcome

    if n_candidates is not None:
        strat.start(n_candidates, 0)
    while not strat.finished:
        draws = []
        while (d := strat.ask()) is not None:
            draws.append(d)
        for d in draws:
            cell = (d.index[0], d.candidate)
            strat.tell(d, Outcome(float("nan"), status="failed") if cell in failed
                       else Outcome(float(matrix[cell])))
    return strat.result()
