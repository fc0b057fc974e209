"""Faults a real run meets (issue 11): a table per kind of fault, shared stores, kill-and-resume.

(a) Fault table: an evaluation that raises, returns NaN, hangs in C code (with a timeout),
    calls ``os._exit``, ``abort`` or segfaults, once per faulty draw, on the local executor
    and on a Dask ``LocalCluster``: does the run finish, with the fault-free result, when
    ``retries=1`` covers the fault? For a hang, how late after the limit was it recorded?
(b) Concurrency: 2 and 4 processes started together on one store with the same seed (and 3
    processes of which one is SIGKILLed mid-run): all finish, with the result of a single
    uninterrupted run; every evaluation that ran is logged, so duplicates are counted.
(c) Kill-and-resume: a front (JKFoldSearchCV, BanditSearchCV, ProgressiveSearchCV,
    certa.run) is SIGKILLed (with its workers) after a random number of stored evaluations
    and resumed from its store: same result as an uninterrupted run, nothing lost, nothing
    repeated.

The data are scikit-learn's bundled breast-cancer set (real data); scores of the function
evaluators are simulated (a candidate's value plus Gaussian noise from the draw's seed).

Run: ``nice python benchmarks/reliability.py faults [--quick]`` -> ``benchmarks/results/faults.{json,md}``.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import BENCHMARKS, fmt_load, loadavg, machine_info, md_table, write_results

from certa import FunctionEvaluator, JKFoldGrid, run
from certa.engine import SQLiteStore

#: the command that runs this module (its children run as ``reliability.py faults --child-...``)
COMMAND = [str(BENCHMARKS / "reliability.py"), "faults"]
GRID = {"x": [0.0, 0.1, 0.2, 0.3]}


def noisy(x: float, seed: int) -> float:
    return float(x) + float(np.random.default_rng(seed).normal(0, 0.3))


class FaultyEvaluator(FunctionEvaluator):
    """Candidates x > 0 fault once on fold 0 of each repeat (a marker file says it happened)."""

    def __init__(self, marker_dir: str, kind: str | None, sleep: float = 0.0, log: str | None = None) -> None:
        super().__init__(noisy)
        self.marker_dir, self.kind, self.sleep, self.log = marker_dir, kind, sleep, log

    def evaluate(self, params, draw):
        x = params["x"]
        if self.log:
            with open(self.log, "a") as fh:
                fh.write(f"{os.getpid()} {draw.key}\n")
        if self.sleep:
            time.sleep(self.sleep)
        marker = os.path.join(self.marker_dir, f"{x}-{draw.key.replace('/', '_')}")
        if self.kind and x > 0 and draw.index[-1] == 0 and not os.path.exists(marker):
            with open(marker, "w") as fh:
                fh.write(repr(time.time()))
            if self.kind == "exception":
                raise RuntimeError("injected fault")
            if self.kind == "nan":
                return float("nan")
            if self.kind == "hang":
                sum(range(10**12))  # stuck in C code: only killing the process stops it
            if self.kind == "os._exit":
                os._exit(3)
            if self.kind == "abort":
                os.abort()
            if self.kind == "segfault":
                import ctypes

                ctypes.string_at(0)
        return noisy(x, draw.seed)


# -- (a) fault table -----------------------------------------------------------------------------

KINDS = ("exception", "nan", "hang", "os._exit", "abort", "segfault")
TIMEOUT = 2.0


def fault_table(executors: list[str], limit: float = 1500.0) -> list[dict]:
    """Each row in a child process with a wall-clock limit, so a hang is seen as one."""
    rows = []
    for ex in executors:
        for kind in KINDS:
            t0 = time.perf_counter()
            try:
                out = subprocess.run([sys.executable, *COMMAND, "--child-fault", ex, kind], capture_output=True,
                                     text=True, timeout=limit)
                lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
                row = json.loads(lines[-1]) if lines else {
                    "executor": ex, "fault": kind, "finished": False, "error": f"child failed: {out.stderr[-300:]}"}
            except subprocess.TimeoutExpired:
                row = {"executor": ex, "fault": kind, "finished": False, "error": f"HUNG: no result after {limit} s"}
            row["seconds_with_startup"] = round(time.perf_counter() - t0, 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def fault_row(ex: str, kind: str) -> dict:
    clean = run(JKFoldGrid(2, 1), FunctionEvaluator(noisy_params), GRID, random_state=5)
    client = cluster = None
    if ex == "dask":
        import distributed

        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           host="127.0.0.1", dashboard_address=None)
        client = distributed.Client(cluster)
    if True:
        if True:
            with tempfile.TemporaryDirectory() as tmp:
                store = os.path.join(tmp, "s.sqlite")
                kw = {"executor": client} if ex == "dask" else {"n_jobs": 2}
                timeout = TIMEOUT if kind == "hang" else None
                row = {"executor": ex, "fault": kind, "retries": 1, "timeout": timeout}
                t0 = time.perf_counter()
                try:
                    sel = run(JKFoldGrid(2, 1), FaultyEvaluator(tmp, kind), GRID, random_state=5, store=store,
                              retries=1, timeout=timeout, **kw)
                except Exception as exc:  # noqa: BLE001 - reported in the table
                    row.update(finished=False, error=f"{type(exc).__name__}: {exc}"[:200])
                else:
                    row.update(finished=True,
                               same_result=bool(np.array_equal(sel.result["estimates"], clean.result["estimates"])
                                                and sel.best_index == clean.best_index),
                               failed_attempts=int(sqlite3.connect(store).execute(
                                   "SELECT COUNT(*) FROM evaluations WHERE status != 'ok'").fetchone()[0]),
                               faults_injected=len([f for f in os.listdir(tmp) if not f.startswith("s.sqlite")]))
                    if kind == "hang":
                        lags = []
                        for f in os.listdir(tmp):
                            if f.startswith("s.sqlite"):
                                continue
                            started = float(Path(tmp, f).read_text())
                            x, key = f.split("-", 1)
                            key = key.replace("_", "/")
                            rec = sqlite3.connect(store).execute(
                                "SELECT recorded_at FROM evaluations WHERE draw_key=? AND status='timeout'",
                                (key,)).fetchone()
                            if rec:
                                lags.append(rec[0] - started - TIMEOUT)
                        row["recorded_after_limit_s"] = [round(v, 3) for v in lags]
                row["seconds"] = round(time.perf_counter() - t0, 2)
    if client is not None:
        client.close()
        cluster.close()
    return row


def noisy_params(params, seed):
    return noisy(params["x"], seed)


# -- (b) concurrency ------------------------------------------------------------------------------

class Child:
    """A child process forked from this one (certa already imported: on a loaded machine a fresh
    interpreter spends 10-20 s importing it). It opens its own store connection, runs in its own
    session (so a SIGKILL of its group also reaches its workers) and prints one JSON line."""

    def __init__(self, fn, *args) -> None:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(r)
            os.setsid()
            code = 0
            try:
                out = fn(*args)
                os.write(w, (json.dumps(out) + "\n").encode())
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                os.write(w, (json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n").encode())
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        self.pid, self._r, self.returncode = pid, r, None

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def communicate(self) -> str:
        chunks = []
        while True:
            b = os.read(self._r, 65536)
            if not b:
                break
            chunks.append(b)
        os.close(self._r)
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return b"".join(chunks).decode()


def _child_shared(store: str, log: str, strategy: str, seed: int) -> dict:
    from certa.strategies import TopTwoThompson

    strat = JKFoldGrid(4, 2) if strategy == "grid" else TopTwoThompson(0.9, 0.5, stopping="bayes", max_evals=40)
    ev = FaultyEvaluator(os.path.dirname(log), None, sleep=0.05, log=log)
    sel = run(strat, ev, GRID, random_state=seed, store=store)
    return {"best": sel.best_index, "estimates": [float(v) for v in sel.result["estimates"]], "n": sel.n_evaluations}


def _clean_shared(strategy: str, seed: int) -> dict:
    from certa.strategies import TopTwoThompson

    strat = JKFoldGrid(4, 2) if strategy == "grid" else TopTwoThompson(0.9, 0.5, stopping="bayes", max_evals=40)
    sel = run(strat, FunctionEvaluator(noisy_params), GRID, random_state=seed)
    return {"best": sel.best_index, "estimates": [float(v) for v in sel.result["estimates"]], "n": sel.n_evaluations}


def concurrency_table(trials: int, configs: list[tuple[int, bool]]) -> list[dict]:
    rows = []
    for n_proc, kill_one in configs:
        for t in range(trials):
            strategy = "grid" if t % 2 == 0 else "top_two"
            seed = 100 + t
            with tempfile.TemporaryDirectory() as tmp:
                store, log = os.path.join(tmp, "s.sqlite"), os.path.join(tmp, "evals.log")
                SQLiteStore(store).close()
                procs = [Child(_child_shared, store, log, strategy, seed) for _ in range(n_proc)]
                killed_pid = None
                if kill_one:
                    deadline = time.time() + 300
                    while _rows(store) < 4 and time.time() < deadline:
                        time.sleep(0.02)
                    procs[0].kill()
                    killed_pid = procs[0].pid
                outs = [p.communicate() for p in procs]
                clean = _clean_shared(strategy, seed)
                survivors = [(p, o) for p, o in zip(procs, outs) if p.pid != killed_pid]
                ok = all(p.returncode == 0 for p, _ in survivors)
                same = ok and all(json.loads(o.strip().splitlines()[-1]) == clean for _, o in survivors)
                lines = [ln.split() for ln in Path(log).read_text().splitlines()] if os.path.exists(log) else []
                per_key: dict[str, list[int]] = {}
                for pid, key in lines:
                    per_key.setdefault(key, []).append(int(pid))
                dups = sum(len(v) - 1 for v in per_key.values())
                dups_killed = sum(len(v) - 1 for v in per_key.values() if killed_pid in v)
                stored = [k for (k,) in sqlite3.connect(store).execute("SELECT draw_key FROM evaluations")]
                row = {"processes": n_proc, "killed_one": kill_one, "trial": t, "strategy": strategy,
                       "all_finished": ok, "same_result": same, "evaluations": len(lines),
                       "draws": len(per_key), "duplicates": dups, "duplicates_of_killed_owner": dups_killed,
                       "stored_rows": len(stored), "stored_unique": len(set(stored))}
                if not ok:
                    row["stderr"] = [o[-500:] for p, o in survivors if p.returncode != 0]
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def _rows(path: str) -> int:
    try:
        con = sqlite3.connect(path, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


# -- (c) kill-and-resume over the fronts ----------------------------------------------------------

FRONTS = ("JKFoldSearchCV", "BanditSearchCV", "ProgressiveSearchCV", "certa.run")


def _slow_lr():
    from sklearn.linear_model import LogisticRegression

    class SlowLR(LogisticRegression):
        """LogisticRegression whose fit takes 40 ms longer, so a run lasts long enough to be killed."""

        def fit(self, X, y, sample_weight=None):
            time.sleep(0.04)
            return super().fit(X, y, sample_weight)

    return SlowLR


def run_front(front: str, store: str | None, n_jobs: int) -> dict:
    from sklearn.datasets import load_breast_cancer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from certa import BanditSearchCV, JKFoldSearchCV, ProgressiveSearchCV

    X, y = load_breast_cancer(return_X_y=True)
    SlowLR = _slow_lr()
    est = make_pipeline(StandardScaler(), SlowLR(max_iter=300))
    grid = {"slowlr__C": [0.001, 0.01, 0.1, 1.0, 10.0]}
    if front == "JKFoldSearchCV":
        s = JKFoldSearchCV(est, grid, n_splits=5, n_repeats=2, random_state=0, store=store, n_jobs=n_jobs,
                           refit=False).fit(X, y)
        return {"best": int(s.best_index_), "scores": [float(v) for v in s.cv_results_["mean_test_score"]]}
    if front == "BanditSearchCV":
        s = BanditSearchCV(est, grid, confidence=0.95, max_evals=60, random_state=0, store=store, n_jobs=n_jobs,
                           refit=False).fit(X, y)
        return {"best": int(s.best_index_), "scores": [float(v) for v in s.cv_results_["mean_test_score"]],
                "n": [int(v) for v in s.cv_results_["n_evaluations"]]}
    if front == "ProgressiveSearchCV":
        s = ProgressiveSearchCV(est, grid, schedule=[0.25, 0.5, 1.0], random_state=0, store=store, n_jobs=n_jobs,
                                refit=False).fit(X, y)
        return {"best": int(s.best_index_), "scores": [None if not np.isfinite(v) else float(v)
                                                       for v in s.cv_results_["mean_test_score"]]}
    sel = run(JKFoldGrid(5, 3), FaultyEvaluator(tempfile.gettempdir(), None, sleep=0.04), GRID, random_state=0,
              store=store, n_jobs=n_jobs)
    return {"best": sel.best_index, "scores": [float(v) for v in sel.result["estimates"]]}


def kill_resume_table(trials_per_front: int, fronts: tuple[str, ...] = FRONTS) -> list[dict]:
    rng = np.random.default_rng(2026)
    rows = []
    for front in fronts:
        clean = run_front(front, None, 1)
        for t in range(trials_per_front):
            n_jobs = 2 if t % 4 == 1 else 1  # local workers in a quarter of the trials
            with tempfile.TemporaryDirectory() as tmp:
                store = os.path.join(tmp, "s.sqlite")
                proc = Child(run_front, front, store, n_jobs)
                kill_at = int(rng.integers(2, 12))
                deadline = time.time() + 600
                while _rows(store) < kill_at and time.time() < deadline and proc.poll() is None:
                    time.sleep(0.01)
                finished_first = proc.poll() is not None
                proc.kill()
                proc.communicate()
                before = set(sqlite3.connect(store).execute("SELECT draw_key, attempt, score FROM evaluations"))
                resumed = run_front(front, store, 1)
                after = list(sqlite3.connect(store).execute("SELECT draw_key, attempt, score FROM evaluations"))
                keys = [(k, a) for k, a, _ in after]
                row = {"front": front, "trial": t, "n_jobs": n_jobs, "killed_after_rows": len(before),
                       "finished_before_kill": finished_first, "rows_after": len(after),
                       "nothing_lost": before <= set(after), "nothing_repeated": len(keys) == len(set(keys)),
                       "same_result": resumed == clean}
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="reliability.py faults", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer trials (a smoke test, not the published table)")
    ap.add_argument("--parts", default="abc")
    ap.add_argument("--child-shared", nargs=4)
    ap.add_argument("--child-front", nargs=3)
    ap.add_argument("--child-fault", nargs=2)
    ap.add_argument("--assemble", nargs="+", help="build the results from the JSON rows in these logs")
    ap.add_argument("--fronts", default=",".join(FRONTS))
    a = ap.parse_args(argv)
    if a.child_shared:
        store, log, strategy, seed = a.child_shared
        _child_shared(store, log, strategy, int(seed))
        return
    if a.child_fault:
        print(json.dumps(fault_row(*a.child_fault)), flush=True)
        return
    if a.child_front:
        front, store, n_jobs = a.child_front
        print(json.dumps(run_front(front, store, int(n_jobs))))
        return
    info = machine_info()
    t0 = time.time()
    payload: dict = {"machine": info, "quick": a.quick}
    if a.assemble:  # rows printed by earlier (partial) runs of this script
        rows = [json.loads(ln) for f in a.assemble for ln in Path(f).read_text().splitlines() if ln.startswith("{")]
        payload["faults"] = [r for r in rows if "fault" in r]
        payload["concurrency"] = [r for r in rows if "processes" in r]
        payload["kill_resume"] = [r for r in rows if "front" in r]
    else:
        if "a" in a.parts:
            payload["faults"] = fault_table(["local", "dask"])
        if "b" in a.parts:
            trials = 2 if a.quick else 10
            payload["concurrency"] = (concurrency_table(trials, [(2, False), (4, False)])
                                      + concurrency_table(max(2, trials // 3), [(3, True)]))
        if "c" in a.parts:
            payload["kill_resume"] = kill_resume_table(2 if a.quick else 10, tuple(a.fronts.split(",")))
    payload["seconds"] = round(time.time() - t0, 1)
    md = ["# Faults (benchmarks/reliability.py faults)", ""] + markdown(payload)
    md += [f"Machine: {info.get('cpu_count')} CPUs, load {fmt_load(loadavg())} at the end."]
    name = "faults" + ("" if a.parts == "abc" else f"_{a.parts}") + ("_quick" if a.quick else "")
    write_results(name, payload, "\n".join(md))


def markdown(payload: dict) -> list[str]:
    md: list[str] = []
    rows = payload.get("faults")
    if rows:
        md += ["## (a) Faults: JKFoldGrid(2 folds) x 4 candidates; each of the 3 candidates x > 0 faults once "
               f"(its first fold); retries=1; timeout={TIMEOUT} s for the hang (a loop in C code)", "",
               md_table(["executor", "fault", "finished", "fault-free result", "failed attempts recorded",
                         "hang recorded after the limit (s)", "seconds", "error"],
                        [[r["executor"], r["fault"], r["finished"], r.get("same_result", ""),
                          r.get("failed_attempts", ""),
                          ", ".join(f"{v:.2f}" for v in r.get("recorded_after_limit_s", [])),
                          r.get("seconds", ""), r.get("error", "")] for r in rows]), ""]
    rows = payload.get("concurrency")
    if rows:
        summary = []
        for n_proc, kill in ((2, False), (4, False), (3, True)):
            rs = [r for r in rows if r["processes"] == n_proc and r["killed_one"] == kill]
            if rs:
                summary.append([n_proc, "yes" if kill else "no", len(rs), sum(r["all_finished"] for r in rs),
                                sum(r["same_result"] for r in rs), sum(r["evaluations"] for r in rs),
                                sum(r["duplicates"] for r in rs), sum(r["duplicates_of_killed_owner"] for r in rs),
                                sum(r["stored_rows"] - r["stored_unique"] for r in rs)])
        md += ["## (b) Several processes on one store (same seed; trials alternate JKFoldGrid(4 folds x 2) and "
               "TopTwoThompson(max_evals=40), 4 candidates, 50 ms per evaluation; the processes are forked from "
               "the benchmark, each opens its own store)", "",
               md_table(["processes", "one SIGKILLed mid-run", "trials", "all (surviving) finished",
                         "same result as one run", "evaluations", "duplicate evaluations",
                         "of which the killed process's", "duplicate store rows"], summary), ""]
    rows = payload.get("kill_resume")
    if rows:
        summary = []
        for front in FRONTS:
            rs = [r for r in rows if r["front"] == front]
            if rs:
                summary.append([front, len(rs), sum(r["n_jobs"] == 2 for r in rs),
                                sum(not r["finished_before_kill"] for r in rs), sum(r["same_result"] for r in rs),
                                sum(r["nothing_lost"] for r in rs), sum(r["nothing_repeated"] for r in rs)])
        summary.append(["all", len(rows), sum(r["n_jobs"] == 2 for r in rows),
                        sum(not r["finished_before_kill"] for r in rows), sum(r["same_result"] for r in rows),
                        sum(r["nothing_lost"] for r in rows), sum(r["nothing_repeated"] for r in rows)])
        md += ["## (c) Kill-and-resume: SIGKILL of the run's process group after 2-11 stored evaluations, then "
               "resumed from the store", "",
               md_table(["front", "trials", "with 2 local workers", "killed mid-run", "same result",
                         "nothing lost", "nothing repeated"], summary), ""]
    return md
