"""Issue 32, rows ahead: the paired rule asks the next rows when workers idle, and decides the
same whatever the number of workers and the order in which evaluations finish.

Scores are simulated (Gaussian rows with a shared row effect, the shape of FIESTA's TDSA table:
two candidates close to the best, five far below it)."""
from __future__ import annotations

import io
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from _helpers import ShuffledExecutor
from rich.console import Console

from certa import FunctionEvaluator, run
from certa.engine.runner import RunInterrupted
from certa.planning.clock import clock_run
from certa.planning.simulate import run_direct
from certa.strategies import PairedElimination

MEANS = [0.0, -0.55, -0.6, -1.6, -1.5, -2.1, -2.2, -3.0]
CANDS = [{"c": i} for i in range(len(MEANS))]


def tdsa_like(params, seed):
    """Simulated: a row effect shared by the row's candidates plus each candidate's own noise."""
    shared = np.random.default_rng(seed).normal(0, 1.0)
    return MEANS[params["c"]] + shared + np.random.default_rng([seed, params["c"]]).normal(0, 1.0)


def _decision(sel):
    r = sel.result
    return {"best": r["best"], "confidence": r["confidence"], "rows": r["rows"], "stop": r["stop_reason"],
            "eliminated": r["eliminated"], "history": list(r["confidence_history"]),
            "used": r["evaluations"].tolist(), "keys": sorted(sel.evaluations["key"])}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_decisions_are_identical_for_1_2_8_workers_and_shuffled_completion_orders(seed):
    ev = FunctionEvaluator(tdsa_like)
    one = run(PairedElimination(0.95), ev, CANDS, random_state=seed, progress=False)
    ref = _decision(one)
    assert one.result["evaluations_ahead"] == 0 and ref["stop"] == "confident"
    assert len(ref["eliminated"]) == len(MEANS) - 1
    shuffled_somewhere = False
    for w in (2, 8):
        with ThreadPoolExecutor(w) as pool:
            sel = run(PairedElimination(0.95), ev, CANDS, random_state=seed, executor=pool, progress=False)
        assert _decision(sel) == ref, f"{w} threads"
        pool = ShuffledExecutor(w, seed)
        try:
            sel = run(PairedElimination(0.95), ev, CANDS, random_state=seed, executor=pool, progress=False)
        finally:
            pool.shutdown()
        assert _decision(sel) == ref, f"{w} workers, shuffled completions"
        order = [pool.submitted.index(f) for f in pool.completed]
        shuffled_somewhere |= order != sorted(order)
        # the spent ahead are those asked and not used: every evaluation asked is one or the other
        assert len(pool.submitted) >= int(np.sum(sel.result["evaluations"])) + 0
        assert len(pool.submitted) == int(np.sum(sel.result["evaluations"])) + sel.result["evaluations_ahead"]
    assert shuffled_somewhere
    # whether 8 real threads leave rows asked ahead unused depends on their timing: the asks
    # ahead are checked on the virtual clock (test_many_seeds_same_decisions_with_rows_ahead_on_the_virtual_clock)


def _row_counts(draws):
    out: dict[int, int] = {}
    for d in draws:
        out[d.index[0]] = out.get(d.index[0], 0) + 1
    return out


def test_rows_ahead_fill_the_workers_within_the_bound():
    # 2 survivors and 8 workers: the row being decided plus ceil(2 x 8 / 2) = 8 rows ahead
    strat = PairedElimination(0.95)
    strat.set_workers(8)
    strat.start(2, 0)
    draws = []
    while (d := strat.ask()) is not None:
        draws.append(d)
    assert _row_counts(draws) == {r: 2 for r in range(9)}
    # one worker: the row only, as before rows ahead
    one = PairedElimination(0.95)
    one.start(2, 0)
    assert [d.key for d in iter(one.ask, None)] == [d.key for d in draws[:2]]
    # no more than 3 x n_workers asked and not told, however many survive
    many = PairedElimination(0.95)
    many.set_workers(3)
    many.start(20, 0)
    assert len(list(iter(many.ask, None))) == 20          # a row is always asked whole
    few = PairedElimination(0.95)
    few.set_workers(3)
    few.start(4, 0)
    assert _row_counts(iter(few.ask, None)) == {0: 4, 1: 4, 2: 1}   # 3 x 3 = 9 (2 rows ahead allowed)


_RUNNING = {"now": 0, "peak": 0}
_LOCK = threading.Lock()


def _counting(params, seed):
    with _LOCK:
        _RUNNING["now"] += 1
        _RUNNING["peak"] = max(_RUNNING["peak"], _RUNNING["now"])
    try:
        return tdsa_like(params, seed)
    finally:
        with _LOCK:
            _RUNNING["now"] -= 1


def test_runner_keeps_at_most_n_workers_running():
    """A strategy that asks ahead gets at most n_workers evaluations submitted at once (a
    ShuffledExecutor's queue would hold more if the runner submitted more)."""
    pool = ShuffledExecutor(3, 0)
    submitted_peak = [0]
    real_submit = pool.submit

    def submit(fn, /, *args, **kwargs):
        fut = real_submit(fn, *args, **kwargs)
        submitted_peak[0] = max(submitted_peak[0], sum(not f.done() for f in pool.submitted))
        return fut

    pool.submit = submit
    try:
        sel = run(PairedElimination(0.95), FunctionEvaluator(tdsa_like), CANDS, random_state=0, executor=pool,
                  progress=False)
    finally:
        pool.shutdown()
    assert sel.result["stop_reason"] == "confident"
    assert submitted_peak[0] == 3


def test_many_seeds_same_decisions_with_rows_ahead_on_the_virtual_clock():
    """The sequential strategy and the same strategy asking rows ahead for W workers, whose
    evaluations take random times (so they finish out of order), decide alike: seeds x families."""
    families = {"tdsa-like": MEANS, "two close": [0.0, -0.3], "one far": [0.0, -0.2, -0.25, -2.0, -2.0]}
    aheads = []
    for name, means in families.items():
        def score(params, seed, means=means):
            shared = np.random.default_rng(seed).normal(0, 1.0)
            return means[params["candidate"]] + shared + np.random.default_rng([seed, params["candidate"]]).normal()

        ev = FunctionEvaluator(score)
        for seed in range(10):
            base = run_direct(PairedElimination(0.9), ev, len(means), seed)
            for w in (3, 8):
                got = clock_run(PairedElimination(0.9), ev, len(means), workers=w, durations="lognormal:1,0.8",
                                seed=seed)
                r = got.result
                for k in ("best", "confidence", "rows", "eliminated", "stop_reason"):
                    assert r[k] == base[k], (name, seed, w, k)
                assert r["evaluations"].tolist() == base["evaluations"].tolist()
                aheads.append((w, got.ahead))
    # seeded, so fixed: with 8 workers every run asked rows ahead and left some unused at its stop
    assert all(a > 0 for w, a in aheads if w == 8) and len(aheads) == 60


def test_tolerance_and_a_cap_that_does_not_bind_keep_the_decisions():
    ev = FunctionEvaluator(tdsa_like)
    for tolerance in (0.0, 0.3):
        one = run(PairedElimination(0.95, tolerance=tolerance, max_evals=2000), ev, CANDS, random_state=4,
                  progress=False)
        with ThreadPoolExecutor(6) as pool:
            six = run(PairedElimination(0.95, tolerance=tolerance, max_evals=2000), ev, CANDS, random_state=4,
                      executor=pool, progress=False)
        assert _decision(six) == _decision(one)


def test_a_binding_cap_counts_the_evaluations_spent_ahead():
    ev = FunctionEvaluator(tdsa_like)
    with ThreadPoolExecutor(8) as pool:
        sel = run(PairedElimination(0.95, max_evals=60), ev, CANDS, random_state=0, executor=pool, progress=False)
    r = sel.result
    assert r["stop_reason"] == "max_evals"
    assert int(np.sum(r["evaluations"])) + r["evaluations_ahead"] <= 60


_CUT = {"store": None, "row": None, "candidate": None, "hold": False}


def _stored_rows_past(path, row):
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as con:
            keys = [k for (k,) in con.execute("SELECT draw_key FROM evaluations")]
    except sqlite3.OperationalError:   # being written: look again
        return 0
    return sum(int(k.rsplit("/", 1)[1]) > row for k in keys)


def _cut_at_a_row(params, seed):
    """Waits in candidate ``_CUT["candidate"]``'s evaluation of row ``_CUT["row"]`` until the store
    holds an evaluation of a later row (asked ahead meanwhile), then raises KeyboardInterrupt, or
    with ``_CUT["hold"]`` returns its score (a state to wait for, not a time)."""
    if _CUT["store"] is not None and params["c"] == _CUT["candidate"] and seed == _CUT["seed"]:
        deadline = time.monotonic() + 60
        while _stored_rows_past(_CUT["store"], _CUT["row"]) == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        if not _CUT["hold"]:
            raise KeyboardInterrupt
    return tdsa_like(params, seed)


def test_draws_asked_ahead_are_kept_in_the_store_and_reused_on_resume(tmp_path):
    """Rows asked ahead are stored under the paired (candidate, row) keys: a resumed run that asks
    the same draws reuses them, and the result is the uninterrupted run's."""
    from certa import load
    from certa.engine.draws import split_draw

    ev = FunctionEvaluator(_cut_at_a_row)
    clean = run(PairedElimination(0.95), ev, CANDS, random_state=3, progress=False)
    # a whole run with 8 workers: the evaluations spent ahead that finished are in the store,
    # not in the selection's evaluations; certa.load reads the same selection back. The best's
    # evaluation of the stopping row waits until a later row's evaluation is stored, so at least
    # one is spent ahead however the threads are scheduled.
    res = clean.result
    full = tmp_path / "full.sqlite"
    last = res["rows"] - 1
    _CUT.update(store=full, row=last, candidate=res["best"], hold=True,
                seed=split_draw(3, res["best"], last, paired=True).seed)
    try:
        with ThreadPoolExecutor(8) as pool:
            sel = run(PairedElimination(0.95), ev, CANDS, random_state=3, executor=pool, store=full,
                      progress=False)
    finally:
        _CUT.update(store=None, hold=False)
    assert _decision(sel) == _decision(clean)
    stored = {k for (k,) in sqlite3.connect(full).execute("SELECT draw_key FROM evaluations")}
    used = set(sel.evaluations["key"])
    assert used <= stored and 0 < len(stored - used) <= sel.result["evaluations_ahead"]
    back = load(full)
    assert sorted(back.evaluations["key"]) == sorted(used) and back.result["best"] == sel.result["best"]
    assert back.result["confidence"] == sel.result["confidence"]
    # certa show and the report say how many were spent ahead (recorded, not used)
    from certa.reporting.report import build_report
    from certa.reporting.summary import print_summary, summarize

    summary = summarize(back)
    assert summary["n_spent_ahead"] == back.result["evaluations_ahead"] == len(stored - used)
    text = io.StringIO()
    print_summary(summary, Console(file=text, width=200))
    assert f"{len(stored - used)} spent ahead and not used" in text.getvalue()
    assert f"{len(stored - used)} spent ahead and not used" in build_report(back)

    # cut with 8 workers at a row followed by 6 rows without an elimination, once a later row's
    # evaluation is stored; resumed with one worker: the draws asked ahead are reused
    gone = set(res["eliminated"].values())
    row = next(r for r in range(10, res["rows"]) if not gone & set(range(r, r + 6)))
    store = tmp_path / "ahead.sqlite"
    _CUT.update(store=store, row=row, candidate=res["best"], seed=split_draw(3, res["best"], row, paired=True).seed)
    try:
        with ThreadPoolExecutor(8) as pool, pytest.raises(RunInterrupted):
            run(PairedElimination(0.95), ev, CANDS, random_state=3, executor=pool, store=store, progress=False)
    finally:
        _CUT["store"] = None
    stored = {k for (k,) in sqlite3.connect(store).execute("SELECT draw_key FROM evaluations")}
    ahead_stored = {k for k in stored if int(k.rsplit("/", 1)[1]) > row}
    assert ahead_stored
    resumed = run(PairedElimination(0.95), ev, CANDS, random_state=3, store=store, progress=False)
    assert _decision(resumed) == _decision(clean)
    used = set(resumed.evaluations["key"])
    assert resumed.n_reused == len(stored & used)
    assert ahead_stored <= used   # the rows asked ahead are used by the resumed run, not evaluated again


def test_a_batch_strategy_keeps_its_own_in_flight_count_apart_from_the_executors_workers():
    """BatchThompson's (and UniformUntilConfident's) ``n_workers`` argument is how many draws it keeps
    in flight (``in_flight``, its spec's ``n_workers``); ``n_workers`` is the executor's workers, as
    on every strategy, and does not change what it asks."""
    from certa.reporting.loading import rebuild_strategy
    from certa.strategies import BatchThompson, UniformUntilConfident

    ev = FunctionEvaluator(tdsa_like)
    with ThreadPoolExecutor(2) as pool:
        threads = BatchThompson(0.9, n_workers=3, max_evals=30)
        on_threads = run(threads, ev, CANDS[:3], random_state=0, executor=pool, progress=False)
    assert (threads.in_flight, threads.max_pending, threads.n_workers) == (3, 3, 2)
    assert threads.spec()["n_workers"] == 3 and "in_flight" not in threads.spec()
    assert rebuild_strategy(threads.spec()).in_flight == 3          # a store's spec rebuilds it (certa.load)
    inline = run(BatchThompson(0.9, n_workers=3, max_evals=30), ev, CANDS[:3], random_state=0, progress=False)
    assert list(inline.evaluations["key"]) == list(on_threads.evaluations["key"])
    uniform = UniformUntilConfident(0.9, n_workers=2)
    assert (uniform.in_flight, uniform.max_pending, uniform.n_workers, uniform.spec()["n_workers"]) == (2, 2, 1, 2)


def test_the_strategy_learns_its_workers_from_the_executor():
    ev = FunctionEvaluator(tdsa_like)
    inline = PairedElimination(0.95)
    run(inline, ev, CANDS[:3], random_state=0, progress=False)
    assert inline.n_workers == 1
    with ThreadPoolExecutor(5) as pool:
        threads = PairedElimination(0.95)
        run(threads, ev, CANDS[:3], random_state=0, executor=pool, progress=False)
    assert threads.n_workers == 5
    pool = ShuffledExecutor(3, 0)
    try:
        other = PairedElimination(0.95)
        run(other, ev, CANDS[:3], random_state=0, executor=pool, progress=False)
    finally:
        pool.shutdown()
    assert other.n_workers == 3
    assert other.spec() == inline.spec()   # not part of the run's identity: a resume may use other workers
