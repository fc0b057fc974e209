"""Issue 32, the other fronts: sequential halving and progressive sampling ask later rounds ahead
for the likely survivors while workers idle, and decide the same whatever the number of workers
and the order in which evaluations finish.

Scores are simulated (each candidate's mean plus Gaussian noise drawn from the draw's seed)."""
from __future__ import annotations

import io
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from _helpers import ShuffledExecutor
from rich.console import Console

from certa import FunctionEvaluator, run
from certa.engine.draws import Outcome
from certa.engine.runner import RunInterrupted
from certa.planning.clock import clock_run
from certa.planning.simulate import run_direct
from certa.strategies import ProgressiveSampling, SequentialHalving
from certa.strategies._ahead import AHEAD_PER_WORKER

MEANS = [0.0, -0.55, -0.6, -1.6, -1.5, -2.1, -2.2, -3.0]
CANDS = [{"c": i} for i in range(len(MEANS))]
MEANS16 = list(np.linspace(0.0, -3.0, 16))
CANDS16 = [{"c": i} for i in range(16)]


def noisy(params, seed):
    """Simulated: the candidate's mean plus its own Gaussian noise for this draw's seed."""
    c = params["c"] if "c" in params else params["candidate"]
    means = MEANS16 if params.get("k") == 16 else MEANS
    return means[c] + np.random.default_rng([seed, c]).normal(0, 1.0)


def noisy16(params, seed):
    return noisy({**params, "k": 16}, seed)


def _halving(sel):
    r = sel.result
    return {"best": r["best"], "rounds": r["rounds"], "used": r["evaluations"].tolist(),
            "confidence": r["confidence"], "keys": sorted(sel.evaluations["key"])}


def _progressive(sel):
    r = sel.result
    rounds = [{k: v for k, v in x.items() if k != "time"} for x in r["rounds"]]
    return {"best": r["best"], "rounds": rounds, "ranking": r["ranking"].tolist(),
            "keys": sorted(sel.evaluations["key"])}


FRONTS = {"halving": (lambda: SequentialHalving(160), noisy, CANDS, _halving),
          "progressive": (lambda: ProgressiveSampling(1000), noisy16, CANDS16, _progressive)}


@pytest.mark.parametrize("front", sorted(FRONTS))
@pytest.mark.parametrize("seed", [0, 1])
def test_decisions_are_identical_for_1_2_8_workers_and_shuffled_completion_orders(front, seed):
    make, fn, cands, decision = FRONTS[front]
    ev = FunctionEvaluator(fn)
    one = run(make(), ev, cands, random_state=seed, progress=False)
    ref = decision(one)
    assert one.result["evaluations_ahead"] == 0
    shuffled_somewhere = False
    for w in (2, 8):
        with ThreadPoolExecutor(w) as pool:
            sel = run(make(), ev, cands, random_state=seed, executor=pool, progress=False)
        assert decision(sel) == ref, f"{w} threads"
        pool = ShuffledExecutor(w, seed)
        try:
            sel = run(make(), ev, cands, random_state=seed, executor=pool, progress=False)
        finally:
            pool.shutdown()
        assert decision(sel) == ref, f"{w} workers, shuffled completions"
        order = [pool.submitted.index(f) for f in pool.completed]
        shuffled_somewhere |= order != sorted(order)
        # every evaluation asked is used by the decision or spent ahead
        assert len(pool.submitted) == len(sel.evaluations) + sel.result["evaluations_ahead"]
    assert shuffled_somewhere


def test_many_seeds_same_decisions_on_the_virtual_clock():
    """The sequential strategy and the same strategy with W workers whose evaluations take random
    times (so they finish out of order, and rounds are asked ahead) decide alike."""
    for front, (make, fn, cands, _) in FRONTS.items():
        ev = FunctionEvaluator(lambda p, s, fn=fn: fn({"c": p["candidate"]}, s))
        for seed in range(8):
            base = run_direct(make(), ev, len(cands), seed)
            for w in (3, 16):
                r = clock_run(make(), ev, len(cands), workers=w, durations="lognormal:1,0.8", seed=seed)
                res = r.result
                assert res["best"] == base["best"], (front, seed, w)
                if front == "halving":
                    assert res["rounds"] == base["rounds"] and res["evaluations"].tolist() == base["evaluations"].tolist()
                else:
                    strip = [[{k: v for k, v in x.items() if k != "time"} for x in rs["rounds"]] for rs in (res, base)]
                    assert strip[0] == strip[1] and res["ranking"].tolist() == base["ranking"].tolist()
                assert r.evaluations == int(np.sum(base["evaluations"] if front == "halving" else
                                                   [x["n_evaluated"] for x in base["rounds"]])) + r.ahead


def test_asking_ahead_keeps_more_workers_busy_on_the_virtual_clock():
    """Halving on 8 candidates and 16 workers (simulated time, so not a timing test): the rounds
    asked ahead raise the occupancy over the same runs without them, on every seed."""
    ev = FunctionEvaluator(lambda p, s: noisy({"c": p["candidate"]}, s))
    for seed in range(5):
        on = clock_run(SequentialHalving(160), ev, 8, workers=16, durations="lognormal:1,0.5", seed=seed)
        off = clock_run(SequentialHalving(160, ahead=False), ev, 8, workers=16, durations="lognormal:1,0.5", seed=seed)
        assert off.ahead == 0 and on.wall < off.wall and on.occupancy > off.occupancy


def _drive(strategy):
    """Every draw the strategy asks now."""
    return list(iter(strategy.ask, None))


def _ok(x):
    return Outcome(float(x))


def test_halving_asks_the_next_round_ahead_for_the_likely_survivors_within_the_bound():
    # round 0: 8 candidates x 6; candidates 0-3 lead until candidate 7's last score of the round
    def tell(s, draws):
        for d in draws:
            c, n = d.candidate, d.index[0]
            s.tell(d, _ok(100.0 if (c, n) == (7, 5) else [1.0, 0.9, 0.8, 0.7, 0, 0, 0, 0][c]))

    s = SequentialHalving(160)
    s.set_workers(4)
    s.start(8, 0)
    round0 = _drive(s)
    assert len(round0) == 48               # nothing told: nothing to guess from
    tell(s, round0[:46])
    ahead = _drive(s)
    # 2 x 4 workers asked ahead, of the next round (14 each) for the better half so far, round robin
    assert [(d.candidate, d.index[0]) for d in ahead] == [(c, n) for n in (6, 7) for c in (0, 1, 2, 3)]
    assert len(ahead) == AHEAD_PER_WORKER * 4
    tell(s, round0[46:])                   # candidate 7's 100 moves it to the top: 3 is not kept
    assert s._history[0]["kept"] == [7, 0, 1, 2]
    nxt = _drive(s)
    # round 1 asks its 4 x 14 draws but the 6 asked ahead for 0, 1 and 2, then round 2 ahead for 7 and 0
    assert len(nxt) == 4 * 14 - 6 + AHEAD_PER_WORKER * 4
    assert not {d.key for d in nxt} & {d.key for d in ahead}
    assert [(d.candidate, d.index[0]) for d in nxt[-8:]] == [(c, n) for n in (20, 21, 22, 23) for c in (7, 0)]
    tell(s, ahead)                         # told in the order asked: 3's are spent ahead
    assert s.spent_ahead() == ["split/c3/6", "split/c3/7"]
    while not s.finished:                  # on to the end: the decision of one worker on the same scores
        tell(s, nxt)
        nxt = _drive(s)
    one = SequentialHalving(160)
    one.start(8, 0)
    while not one.finished:
        tell(one, _drive(one))
    a, b = s.result(), one.result()
    assert (a["best"], a["rounds"], a["evaluations"].tolist()) == (b["best"], b["rounds"], b["evaluations"].tolist())
    assert b["evaluations_ahead"] == 0 and a["evaluations_ahead"] >= 2
    assert int(a["evaluations"].sum()) == 160   # the budget is what the decision used; spent ahead on top


def test_progressive_asks_later_rounds_ahead_nearest_first_within_the_bound():
    s = ProgressiveSampling(1000)
    s.set_workers(4)
    s.start(8, 0)
    first = _drive(s)
    assert [d.candidate for d in first] == list(range(8))   # one round: nothing told, nothing guessed
    scores = [0.5, 0.9, 0.1, 0.8, 0.3, 0.7, 0.6, 0.2]
    for d in first[:6]:
        s.tell(d, _ok(scores[d.candidate]))
    ahead = _drive(s)
    # round 1 for the best ceil(8 / 2) = 4 told so far, then round 2 for the best 2, then no round 3 (one left)
    assert [(d.candidate, d.index[0]) for d in ahead] == [(1, 1), (3, 1), (5, 1), (0, 1), (1, 2), (3, 2)]
    assert len(ahead) <= AHEAD_PER_WORKER * 4
    for d in first[6:]:
        s.tell(d, _ok(scores[d.candidate]))
    # the mean rule keeps 1, 3, 5, 6 (>= 0.5125): 0's round-1 draw is spent ahead, 1, 3, 5's are round 1's
    assert s._rounds[0]["survived"] == [False, True, False, True, False, True, True, False]
    nxt = _drive(s)
    assert [(d.candidate, d.index[0]) for d in nxt] == [(6, 1)]
    for d in ahead:
        s.tell(d, _ok(scores[d.candidate]))
    assert s.spent_ahead() == [ahead[3].key]
    assert s.result()["evaluations_ahead"] >= 1


def test_ahead_false_never_asks_ahead_and_ahead_is_not_part_of_the_identity():
    ev = FunctionEvaluator(noisy)
    with ThreadPoolExecutor(8) as pool:
        off = SequentialHalving(160, ahead=False)
        sel = run(off, ev, CANDS, random_state=0, executor=pool, progress=False)
    assert sel.result["evaluations_ahead"] == 0 and len(sel.evaluations) == 160
    assert off.spec() == SequentialHalving(160).spec() == {"strategy": "SequentialHalving", "budget": 160}
    with pytest.raises(TypeError, match="ahead must be a bool"):
        SequentialHalving(160, ahead="yes")


_CUT = {"store": None}


def _stored_keys(path):
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as con:
            return [k for (k,) in con.execute("SELECT draw_key FROM evaluations")]
    except sqlite3.OperationalError:   # being written (or not yet made): look again
        return []


def _cut_after_ahead(params, seed):
    """Raises KeyboardInterrupt in the last evaluation of halving's first round (candidate 7's 6th),
    once the store holds a draw of the next round (index >= 6, asked ahead)."""
    if _CUT["store"] is not None and params["c"] == 7 and seed == _CUT["seed"]:
        deadline = time.monotonic() + 60
        while not any(int(k.rsplit("/", 1)[1]) >= 6 for k in _stored_keys(_CUT["store"])) \
                and time.monotonic() < deadline:
            time.sleep(0.01)
        raise KeyboardInterrupt
    return noisy(params, seed)


def test_draws_asked_ahead_are_stored_reported_and_reused_on_resume(tmp_path):
    from certa import load
    from certa.engine.draws import derive_seed
    from certa.reporting.report import build_report
    from certa.reporting.summary import print_summary, summarize

    ev = FunctionEvaluator(_cut_after_ahead)
    clean = run(SequentialHalving(160), ev, CANDS, random_state=5, progress=False)
    # a whole run with 8 workers: what was spent ahead is in the store, not in the selection
    full = tmp_path / "full.sqlite"
    pool = ShuffledExecutor(8, 5)
    try:
        sel = run(SequentialHalving(160), ev, CANDS, random_state=5, executor=pool, store=full, progress=False)
    finally:
        pool.shutdown()
    stored, used = set(_stored_keys(full)), set(sel.evaluations["key"])
    assert used == set(clean.evaluations["key"]) and used <= stored
    assert len(stored - used) <= sel.result["evaluations_ahead"]
    back = load(full)
    assert sorted(back.evaluations["key"]) == sorted(used) and back.result["best"] == clean.result["best"]
    summary = summarize(back)
    assert summary["n_spent_ahead"] == back.result["evaluations_ahead"] == len(stored - used)
    if stored - used:
        text = io.StringIO()
        print_summary(summary, Console(file=text, width=200))
        assert f"{len(stored - used)} spent ahead and not used" in text.getvalue()
        assert f"{len(stored - used)} spent ahead and not used" in build_report(back)

    # cut with 8 workers in round 0's last evaluation once a draw asked ahead is stored; resumed
    # with one worker: the stored draws it asks are reused, and the decision is the clean run's
    store = tmp_path / "cut.sqlite"
    _CUT.update(store=store, seed=derive_seed(5, 7, 5))
    try:
        with ThreadPoolExecutor(8) as pool, pytest.raises(RunInterrupted):
            run(SequentialHalving(160), ev, CANDS, random_state=5, executor=pool, store=store, progress=False)
    finally:
        _CUT["store"] = None
    stored = set(_stored_keys(store))
    ahead_stored = {k for k in stored if int(k.rsplit("/", 1)[1]) >= 6}
    assert ahead_stored
    resumed = run(SequentialHalving(160), ev, CANDS, random_state=5, store=store, progress=False)
    assert _halving(resumed) == _halving(clean)
    used = set(resumed.evaluations["key"])
    assert resumed.n_reused == len(stored & used)
    assert ahead_stored & used and ahead_stored & used == ahead_stored & set(clean.evaluations["key"])


def _race_scores(params, seed):
    """Simulated per-example scores (60 Bernoulli examples), the race's evidence."""
    c = params["candidate"]
    ex = (np.random.default_rng([seed, c]).random(60) < np.linspace(0.8, 0.5, 16)[c]).astype(float)
    return {"score": float(ex.mean()), "payload": {"per_example": ex}}


@pytest.mark.parametrize("baseline", [None, 3])
def test_the_race_with_rounds_ahead_decides_as_the_sequential_race(baseline):
    """Progressive sampling's race (per-example tests, a cost cap; with a baseline kept in every round
    and a 5-fold confirmation) asks later rounds ahead and decides as without them."""
    ev = FunctionEvaluator(_race_scores)

    def rounds(r):
        return [{k: v for k, v in x.items() if k != "time"} for x in r["rounds"]]

    for seed in range(3):
        base = run_direct(ProgressiveSampling(1000, "psearch", "race", baseline=baseline), ev, 16, seed)
        for w in (3, 16):
            r = clock_run(ProgressiveSampling(1000, "psearch", "race", baseline=baseline), ev, 16, workers=w,
                          durations="lognormal:1,0.8", seed=seed)
            assert r.result["best"] == base["best"]
            assert str(rounds(r.result)) == str(rounds(base))   # NaN p-values compare as text
            assert str(r.result["baseline"]) == str(base["baseline"])
            assert w == 3 or r.ahead > 0


def test_progressive_asks_ahead_at_most_6_w_training_sets_of_the_current_round():
    """Later rounds train on more data: with sizes 10, 100, 1000 and 4 workers, the 8 draws the count
    bound allows would hold 800 training examples ahead; 3 x 2 x 4 x 10 = 240 allow two."""
    from certa.strategies.progressive import AHEAD_SIZE

    s = ProgressiveSampling(1000, [10, 100, 1000])
    s.set_workers(4)
    s.start(8, 0)
    first = _drive(s)
    for d, score in zip(first[:6], [0.5, 0.9, 0.1, 0.8, 0.3, 0.7]):
        s.tell(d, _ok(score))
    ahead = _drive(s)
    assert AHEAD_SIZE * AHEAD_PER_WORKER * 4 * 10 == 240
    assert [(d.candidate, d.index[0], d.size) for d in ahead] == [(1, 1, 100), (3, 1, 100)]
