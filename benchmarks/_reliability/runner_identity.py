"""The runner's behaviour dumped to files, to compare two versions of certa draw for draw (issue 35).

``python benchmarks/_reliability/runner_identity.py OUT_DIR [PART ...]`` runs the paired
(default), J-K-fold, progressive, halving, top-two and batch Thompson fronts and the screening
front (``screen=True``, since issue 33) inline and with 2 and 4 workers (threads and
processes), a fault-injected run (retries, NaN, a dying worker, a timeout, a candidate dropped,
stop-on-failure, every candidate failing), an interrupted run and a SIGKILLed run each resumed, and two processes sharing one store. For each it writes the store's
rows (every column but the times and checksums: with one worker in recording order, with more
sorted by draw and attempt, since the order they finish in is the clock's), the store's
metadata, the selection (result, evaluations, counts), the callbacks' record and any warnings or
error, one JSON file per scenario; and the virtual clock's runs (``certa.planning.clock``, which
plays the runner's loop on simulated time). PARTs: ``fronts``, ``screen``, ``faults``, ``kills``,
``shared``, ``clock`` (default: all). Run it on two commits and ``diff -r`` the directories: no
difference means the runner kept every store row and every result.

Every score is a function of the draw's seed (simulated data, stated as such), so nothing
depends on timing but the recording order of concurrent runs, which the dump leaves out, and one
documented exception: with several workers, a candidate that keeps failing is dropped after
``max_failures`` failures told in a row, and whether its next draw was asked before the drop (then
evaluated and told) depends on the workers' timing. ``faults-halving-*`` with 2 or 4 workers may
then differ by one told failure from run to run of the same commit (4 runs each of 93b1dbe and of
its refactored runner, 2 processes: 40, 39, 39, 40 and 39, 40, 40, 39 evaluations told).

Since issue 32's rounds ahead, sequential halving and progressive sampling ask later rounds ahead
for their likely survivors when workers idle: their results gain ``evaluations_ahead`` (0 with one
worker; left out with more, as the paired default's), the told order with several workers follows
the workers' timing (so the evaluations and the callbacks' events are compared sorted by draw key),
and the clock's halving runs take less simulated wall time, with more evaluations started; the
choice, the rounds and the evaluations each candidate gets are unchanged.
"""
from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from certa import Callback

MUS = [0.50, 0.56, 0.60, 0.66, 0.45]
CANDS = [{"mu": m} for m in MUS]
WORKERS = [("inline", 1), ("threads", 2), ("threads", 4), ("processes", 2), ("processes", 4)]


def noisy(candidate, train, test, seed):
    """A simulated score: the candidate's mean plus noise from the draw's seed."""
    return float(candidate["mu"] + np.random.default_rng(seed).normal(0, 0.05))


class Faulty:
    """Fails by the draw: first attempts of some seeds raise, one candidate always raises,
    some return NaN, one kills its worker once, one sleeps past the timeout once."""

    def __init__(self, marker_dir: str, kill: bool = False, sleep: bool = False) -> None:
        self.marker_dir, self.kill, self.sleep = marker_dir, kill, sleep

    def _first_time(self, tag: str) -> bool:
        path = os.path.join(self.marker_dir, tag)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return False
        os.close(fd)
        return True

    def __call__(self, candidate, train, test, seed):
        mu = candidate["mu"]
        if mu == 0.45:
            raise ValueError("candidate 0.45 is broken")
        if mu == 0.56 and seed % 7 == 0:
            return float("nan")
        tag = f"{mu}-{seed}"
        if mu == 0.60 and seed % 3 == 0 and self._first_time(tag):
            raise RuntimeError(f"flaky first attempt of {tag}")
        if self.kill and mu == 0.66 and seed % 5 == 1 and self._first_time("kill-" + tag):
            os._exit(3)
        if self.sleep and mu == 0.50 and seed % 4 == 2 and self._first_time("sleep-" + tag):
            time.sleep(3.0)
        return noisy(candidate, train, test, seed)


def killing(candidate, train, test, seed):
    """Scores like :func:`noisy`; with ``RUNNER_IDENTITY_KILL=DIR:AT:HOW`` set, the ``AT``-th
    evaluation (counted in DIR) ends the run: SIGKILL of the process evaluating it (``kill``) or
    a KeyboardInterrupt, as Ctrl-C (``interrupt``). The same function resumes (same fingerprint)."""
    spec = os.environ.get("RUNNER_IDENTITY_KILL")
    if spec:
        where, at, how = spec.split(":")
        with open(os.path.join(where, "count"), "a") as f:
            f.write("x")
        if os.path.getsize(os.path.join(where, "count")) == int(at):
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise KeyboardInterrupt
    return noisy(candidate, train, test, seed)


# -- what is compared ------------------------------------------------------------------------

def plain(value):
    """A JSON-able copy (numpy arrays and scalars as lists and numbers, NaN kept as NaN)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _untimed(details: str | None) -> str | None:
    """A row's details without the times an evaluator measured (fit and score times)."""
    if not details:
        return details
    return json.dumps({k: v for k, v in json.loads(details).items() if "time" not in k}, sort_keys=True)


def settle(out: dict, ordered: bool, keep: set | None = None) -> dict:
    """With several workers, leave out what depends on the workers' timing: the draws asked
    ahead and not used (or still running at the stop), and the told order (its numbering, and,
    since halving and progressive sampling ask later rounds ahead for the likely survivors, the
    order itself: the evaluations and the callbacks' events are sorted by draw key).

    Kept: the rows and the callbacks' events of the evaluations the selection used (or, without
    a selection, of those told), and the results without ``evaluations_ahead``.
    """
    if ordered:
        return out
    sel = out.get("selection") or {}
    if keep is None:
        keep = set(sel["evaluations"]["key"]) if sel.get("evaluations") else \
            {e[2] for e in out.get("callbacks", []) if e[0] == "evaluation"}
    if out.get("store"):
        out["store"]["rows"] = [r for r in out["store"]["rows"] if r[0] in keep]
    events = [e if e[0] != "evaluation" else [e[0], *e[2:9]] for e in out.get("callbacks", [])
              if e[0] != "evaluation" or e[2] in keep]
    told = iter(sorted((e for e in events if e[0] == "evaluation"), key=lambda e: (e[1], json.dumps(e))))
    out["callbacks"] = [next(told) if e[0] == "evaluation" else e for e in events]
    for d in (sel, out.get("load") or {}):
        ev = d.get("evaluations")
        if ev and ev.get("key"):
            rank = sorted(range(len(ev["key"])), key=lambda i: ev["key"][i])
            d["evaluations"] = {k: [v[i] for i in rank] for k, v in ev.items() if k != "order"}
    for d in (sel, out.get("load") or {}):
        d.get("result", {}).pop("evaluations_ahead", None)
    return out


def store_dump(path: str | None, ordered: bool) -> dict:
    if path is None or not os.path.exists(path):
        return {}
    con = sqlite3.connect(path)
    try:
        if not con.execute("SELECT name FROM sqlite_master WHERE name = 'evaluations'").fetchall():
            return {}
        rows = con.execute("SELECT seq, draw_key, draw, candidate, attempt, status, score, error, details, "
                           "hex(payload) FROM evaluations ORDER BY seq").fetchall()
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    finally:
        con.close()
    rows = [[*r[1:8], _untimed(r[8]), r[9]] for r in rows]
    if not ordered:
        rows.sort(key=lambda r: (r[0], r[3]))
    meta.pop("created_at", None)
    return {"rows": rows, "meta": meta}


class Record(Callback):
    """A callback recording what it is told (in told order: the same whatever the workers)."""

    def __init__(self) -> None:
        self.events: list = []

    def on_run_start(self, run) -> None:
        self.events.append(["start", len(run.candidates)])

    def on_evaluation(self, run, ev) -> None:
        o = ev.outcome
        self.events.append(["evaluation", ev.order, ev.draw.key, ev.candidate.name, ev.reused, o.status, plain(o.score), o.error,
                            o.attempt, run.n_evaluations, run.n_reused])

    def on_run_end(self, run, selection, error=None) -> None:
        self.events.append(["end", selection is not None and bool(selection.finished),
                            None if error is None else type(error).__name__])


def _timeless(value):
    """``value`` without the entries whose key names a time (``"time"``, ``"fit_time"``, ``"seconds"``)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if "time" not in str(k) and "second" not in str(k)}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def selection_dump(sel) -> dict:
    if sel is None:
        return {}
    ev = sel.evaluations
    cols = [c for c in ev.columns if "duration" not in c and "time" not in c]
    return {"best": plain(sel.best_index) if hasattr(sel, "best_index") else None,
            "result": _timeless(plain(sel.result)),
            "evaluations": plain(ev[cols].to_dict(orient="list")), "n_reused": sel.n_reused,
            "finished": bool(getattr(sel, "finished", True)), "dropped": plain(sel.dropped),
            "n_evaluations": sel.n_evaluations}


def scenario(fn, store: str | None, ordered: bool) -> dict:
    """Run ``fn(callbacks)`` and collect what it left: store rows, selection, callbacks, warnings, error."""
    record = Record()
    out: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            sel = fn(record)
            out["selection"] = selection_dump(getattr(sel, "selection_", sel))
        except BaseException as exc:  # noqa: BLE001 - the error is part of the behaviour
            out["error"] = [type(exc).__name__, str(exc)]
            out["selection"] = selection_dump(getattr(exc, "selection", None))
    out["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught
                              if not issubclass(w.category, (DeprecationWarning, ResourceWarning))})
    out["callbacks"] = record.events
    out["store"] = store_dump(store, ordered)
    return settle(out, ordered)


def executor_args(mode: str, n: int) -> dict:
    if mode == "inline":
        return {"n_jobs": 1}
    if mode == "threads":
        return {"executor": ThreadPoolExecutor(n)}
    return {"n_jobs": n}


# -- the fronts --------------------------------------------------------------------------------

def _iris():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    return X, y


def _digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X[:900], y[:900]


def front(name: str, store: str, cb, **kw):
    import certa

    if name == "jkfold":
        from sklearn.linear_model import LogisticRegression

        X, y = _iris()
        return certa.JKFoldSearchCV(LogisticRegression(max_iter=200), {"C": [0.01, 0.1, 1.0]}, n_splits=3,
                                    n_repeats=2, random_state=0, store=store, refit=False, callbacks=cb,
                                    progress=False, **kw).fit(X, y)
    if name == "progressive":
        from sklearn.tree import DecisionTreeClassifier

        X, y = _digits()
        return certa.ProgressiveSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [2, 4, 8, None]},
                                         random_state=0, store=store, refit=False, callbacks=cb, progress=False,
                                         **kw).fit(X, y)
    options = {"paired": {}, "halving": {"strategy": "sequential_halving", "budget": 60, "confidence": None},
               "top_two": {"strategy": "top_two", "confidence": 0.9},
               "batch": {"strategy": "batch", "n_workers": 3, "confidence": 0.9}}[name]
    return certa.bandit_select(noisy, CANDS, random_state=0, store=store, callbacks=cb, progress=False,
                               **options, **kw)


def run_fronts(out_dir: str, tmp: str, fronts: list[str], workers: list[tuple[str, int]]) -> None:
    import certa

    for name in fronts:
        for mode, n in workers:
            store = os.path.join(tmp, f"{name}-{mode}-{n}.sqlite")
            args = executor_args(mode, n)
            result = scenario(lambda cb: front(name, store, cb, **args), store, ordered=n == 1)
            if "executor" in args:
                args["executor"].shutdown()
            result["load"] = selection_dump(certa.load(store))
            settle(result, n == 1)
            write(out_dir, f"front-{name}-{mode}{n}", result)


def run_screen(out_dir: str, tmp: str, workers: list[tuple[str, int]]) -> None:
    """The screening front (BanditSearchCV(screen=True): rungs on growing subsets, then the race)."""
    from sklearn.tree import DecisionTreeClassifier

    import certa

    X, y = _digits()
    grid = {"max_depth": [1, 2, 3, 4, 6, 8, None], "min_samples_leaf": [1, 5, 20]}
    for mode, n in workers:
        store = os.path.join(tmp, f"screen-{mode}-{n}.sqlite")
        args = executor_args(mode, n)
        result = scenario(lambda cb: certa.BanditSearchCV(DecisionTreeClassifier(random_state=0), grid, screen=True,
                                                          random_state=0, store=store, refit=False, callbacks=cb,
                                                          progress=False, **args).fit(X, y), store, ordered=n == 1)
        if "executor" in args:
            args["executor"].shutdown()
        if os.path.exists(store):
            result["load"] = selection_dump(certa.load(store))
        settle(result, n == 1)
        write(out_dir, f"front-screen-{mode}{n}", result)


def run_faults(out_dir: str, tmp: str, workers: list[tuple[str, int]]) -> None:
    import certa
    from certa.engine.evaluators import FunctionEvaluator
    from certa.strategies import EqualAllocation

    for mode, n in workers:
        markers = _markers(f"faults-paired-{mode}{n}")
        store = os.path.join(tmp, f"faults-{mode}-{n}.sqlite")
        args = executor_args(mode, n)
        processes = mode != "threads"
        evaluate = Faulty(markers, kill=mode == "processes", sleep=processes)
        result = scenario(lambda cb: certa.bandit_select(
            evaluate, CANDS, random_state=1, store=store, callbacks=cb, progress=False, retries=1,
            timeout=1.0 if processes else None, confidence=0.9, **args), store, ordered=n == 1)
        write(out_dir, f"faults-paired-{mode}{n}", result)
        markers = _markers(f"faults-halving-{mode}{n}")
        store = os.path.join(tmp, f"faults-halving-{mode}-{n}.sqlite")
        evaluate = Faulty(markers)
        result = scenario(lambda cb: certa.bandit_select(
            evaluate, CANDS, random_state=2, store=store, callbacks=cb, progress=False, retries=0,
            strategy="sequential_halving", budget=60, confidence=None, max_failures=3, **args), store, ordered=n == 1)
        write(out_dir, f"faults-halving-{mode}{n}", result)
        # every candidate fails alike: the run stops early
        store = os.path.join(tmp, f"allfail-{mode}-{n}.sqlite")
        result = scenario(lambda cb: certa.run(EqualAllocation(40), FunctionEvaluator(_always_fails), CANDS,
                                               random_state=0, store=store, callbacks=cb, progress=False,
                                               **executor_args(mode, n)), store, ordered=n == 1)
        write(out_dir, f"allfail-{mode}{n}", result)
        if "executor" in args:
            args["executor"].shutdown()
    # stop at the first failure (one worker: what runs before it does not depend on timing)
    store = os.path.join(tmp, "stop.sqlite")
    result = scenario(lambda cb: certa.run(EqualAllocation(40), FunctionEvaluator(_fails_late), CANDS,
                                           random_state=0, store=store, callbacks=cb, progress=False,
                                           stop_on_failure=True), store, ordered=True)
    write(out_dir, "stop-on-failure-inline1", result)


def _markers(name: str) -> str:
    """An empty directory for a scenario's markers, at the same path in every run: the faulty
    evaluator holds the path, and the run's identity (the store's fingerprint) with it."""
    import shutil

    path = os.path.join(tempfile.gettempdir(), "certa_runner_identity", name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def _always_fails(params, seed):
    raise ValueError("no data")


def _fails_late(params, seed):
    if params["mu"] == 0.66 and seed % 3 == 0:
        raise ValueError(f"bad seed {seed % 1000}")
    return float(params["mu"])


def run_kills(out_dir: str, tmp: str) -> None:
    import certa

    for how, at in (("interrupt", 17), ("kill", 23)):
        for strategy in ("paired", "top_two"):
            markers = tempfile.mkdtemp(dir=tmp)
            store = os.path.join(tmp, f"{how}-{strategy}.sqlite")
            opts = {} if strategy == "paired" else {"strategy": "top_two", "confidence": 0.9}
            first: dict = {}
            os.environ["RUNNER_IDENTITY_KILL"] = f"{markers}:{at}:{how}"
            try:
                if how == "interrupt":
                    first = scenario(lambda cb: certa.bandit_select(killing, CANDS, random_state=3, store=store,
                                                                    callbacks=cb, progress=False, **opts),
                                     store, ordered=True)
                else:
                    proc = subprocess.run([sys.executable, __file__, "--child-kill", store, strategy],
                                          capture_output=True, text=True)
                    first = {"returncode": proc.returncode, "store": store_dump(store, True)}
            finally:
                del os.environ["RUNNER_IDENTITY_KILL"]
            for mode, n in (("inline", 1), ("threads", 2)):
                copy = os.path.join(tmp, f"{how}-{strategy}-{mode}{n}.sqlite")
                _copy_store(store, copy)
                args = executor_args(mode, n)
                resumed = scenario(lambda cb: certa.bandit_select(killing, CANDS, random_state=3, store=copy,
                                                                  callbacks=cb, progress=False, **opts, **args),
                                   copy, ordered=n == 1)
                if "executor" in args:
                    args["executor"].shutdown()
                loaded = selection_dump(certa.load(copy))
                if n > 1:
                    loaded["result"].pop("evaluations_ahead", None)
                write(out_dir, f"{how}-{strategy}-resume-{mode}{n}", {"first": first, "resumed": resumed,
                                                                     "load": loaded})


def _copy_store(src: str, dst: str) -> None:
    con = sqlite3.connect(src)
    try:
        con.execute("VACUUM INTO ?", (dst,))
    finally:
        con.close()


def run_shared(out_dir: str, tmp: str) -> None:
    """Two processes on one store at once: each draw evaluated once; the same rows and result."""
    import certa

    for strategy in ("paired", "jkfold"):
        store = os.path.join(tmp, f"shared-{strategy}.sqlite")
        procs = [subprocess.Popen([sys.executable, __file__, "--child-shared", store, strategy],
                                  stdout=subprocess.PIPE, text=True) for _ in range(2)]
        children = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
        loaded = selection_dump(certa.load(store))
        out = settle({"children": children, "store": store_dump(store, False), "load": loaded}, False,
                     keep=set(loaded["evaluations"]["key"]))
        write(out_dir, f"shared-{strategy}", out)


def _child_shared(store: str, strategy: str) -> None:
    if strategy == "jkfold":
        sel = front("jkfold", store, None).selection_
    else:
        sel = front("paired", store, None, n_jobs=1)
    d = selection_dump(sel)
    d.pop("n_reused")  # how the work was shared between the two depends on timing
    d["evaluations"].pop("reused", None)
    d["result"].pop("evaluations_ahead", None)
    print(json.dumps(d, sort_keys=True))


def run_clock(out_dir: str) -> None:
    """The virtual clock (certa.planning.clock), which plays the runner's loop on simulated time."""
    from certa.planning.clock import clock_run
    from certa.planning.simulate import GaussianScores
    from certa.strategies import (
        BatchThompson,
        EqualAllocation,
        JKFoldGrid,
        PairedElimination,
        SequentialHalving,
        TopTwoThompson,
    )

    strategies = {"paired": lambda: PairedElimination(0.95), "jkfold": lambda: JKFoldGrid(3, 2),
                  "halving": lambda: SequentialHalving(60), "top_two": lambda: TopTwoThompson(0.9),
                  "batch": lambda: BatchThompson(0.9, n_workers=3), "equal": lambda: EqualAllocation(40)}
    scores = GaussianScores(MUS, [0.05] * len(MUS))
    for name, make in strategies.items():
        runs = {}
        for workers in (1, 2, 4, 16):
            for seed in (0, 1):
                r = clock_run(make(), scores, len(MUS), workers=workers, durations="lognormal:1,0.5", seed=seed)
                runs[f"W{workers}-seed{seed}"] = plain({**{k: v for k, v in vars(r).items() if k != "result"},
                                                        "result": r.result})
        write(out_dir, f"clock-{name}", runs)


def write(out_dir: str, name: str, payload: dict) -> None:
    text = json.dumps(payload, indent=1, sort_keys=True, default=repr)
    text = re.sub(r"/tmp/\w+", "TMP", text)  # store paths in messages: a fresh directory each run
    with open(os.path.join(out_dir, name + ".json"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print(name, flush=True)


FRONTS = ["paired", "jkfold", "progressive", "halving", "top_two", "batch"]


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "--child-kill":
        import certa

        store, strategy = argv[1:]
        opts = {} if strategy == "paired" else {"strategy": "top_two", "confidence": 0.9}
        certa.bandit_select(killing, CANDS, random_state=3, store=store, progress=False,
                            **opts)
        return
    if argv and argv[0] == "--child-shared":
        _child_shared(argv[1], argv[2])
        return
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return
    out_dir = argv[0]
    parts = set(argv[1:]) or {"fronts", "screen", "faults", "kills", "shared", "clock"}
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        if "fronts" in parts:
            run_fronts(out_dir, tmp, FRONTS, WORKERS)
        if "screen" in parts:
            run_screen(out_dir, tmp, WORKERS)
        if "faults" in parts:
            run_faults(out_dir, tmp, WORKERS)
        if "kills" in parts:
            run_kills(out_dir, tmp)
        if "shared" in parts:
            run_shared(out_dir, tmp)
        if "clock" in parts:
            run_clock(out_dir)
    print(f"done in {time.perf_counter() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
