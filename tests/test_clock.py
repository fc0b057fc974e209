"""The virtual clock (issue 32, item 2): exact wall times, the runner's rules, determinism, store durations."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from certa.cli import main
from certa.engine.draws import Draw, Outcome, split_draw
from certa.engine.evaluators import FunctionEvaluator
from certa.engine.scheduling import UNBOUNDED_PENDING, scheduling_limits
from certa.engine.store import SQLiteStore
from certa.planning.clock import (
    ConstantDurations,
    RecordedDurations,
    as_durations,
    clock_run,
    durations_from_store,
    parse_duration,
)
from certa.planning.simulate import GaussianScores, ReplayScores, run_direct, simulate
from certa.strategies import BatchThompson, EqualAllocation, PairedElimination, TopTwoThompson


def _zero(params, seed):
    return 0.0


@pytest.mark.parametrize("n,workers,d", [(10, 4, 2.0), (8, 4, 0.5), (3, 8, 1.0), (17, 1, 0.25), (64, 16, 3.0),
                                          (65, 16, 3.0)])
def test_a_fixed_plan_of_constant_evaluations_takes_ceil_n_over_w_rounds(n, workers, d):
    r = clock_run(EqualAllocation(n), _zero, 2 if n >= 2 else 1, workers=workers, durations=d)
    rounds = math.ceil(n / workers)
    assert r.wall == pytest.approx(rounds * d, rel=1e-12)
    assert r.occupancy == pytest.approx(n / (workers * rounds), rel=1e-12)
    assert (r.evaluations, r.started, r.told, r.ahead) == (n, n, n, 0)


def test_max_in_flight_bounds_a_fixed_plan_as_in_the_runner():
    # 4 workers but at most 2 submitted at once: 2 run at a time
    r = clock_run(EqualAllocation(9), _zero, 3, workers=4, durations=1.0, max_in_flight=2)
    assert r.wall == pytest.approx(5.0)
    assert r.occupancy == pytest.approx(9 / (4 * 5))
    assert scheduling_limits(None, 4, 2) == (UNBOUNDED_PENDING, 2)
    assert scheduling_limits(None, 4) == (UNBOUNDED_PENDING, 8)
    assert scheduling_limits(1, 16) == (1, 1)


@pytest.mark.parametrize("workers", [1, 3, 8])
def test_a_sequential_strategy_keeps_one_worker_busy(workers):
    r = clock_run(TopTwoThompson(0.9), GaussianScores([0.0, 0.8], [1.0, 1.0]), 2, workers=workers, durations=0.5,
                  seed=4)
    assert r.occupancy == pytest.approx(1 / workers)
    assert r.wall == pytest.approx(0.5 * r.evaluations)
    assert r.told == r.evaluations and r.ahead == 0


def test_a_paired_row_of_constant_evaluations_takes_ceil_survivors_over_w():
    """Every survivor on each row, the next row once the current one is told: with constant times
    row k takes ceil(survivors_k / W) * d. Rows asked ahead (a strategy reporting
    ``evaluations_ahead``) can only shorten that: a row's draws are submitted before any later row's."""
    means = [0.0, 0.1, 0.2, 1.5, 2.5]
    r = clock_run(PairedElimination(0.9), GaussianScores(means, [1.0] * 5), 5, workers=2, durations=1.0, seed=3)
    asked = np.asarray(r.result["evaluations"])
    assert r.evaluations == int(asked.sum())
    rows = int(asked.max())
    blocks = sum(math.ceil(int((asked > k).sum()) / 2) for k in range(rows))  # row k's survivors: asked > k times
    assert rows >= 3 and (asked < rows).any()  # several rows, some candidates eliminated: not a trivial case
    if "evaluations_ahead" not in r.result:
        assert r.wall == pytest.approx(blocks)
    else:
        assert r.wall <= blocks + 1e-9


@pytest.mark.parametrize("make", [lambda: PairedElimination(0.95), lambda: BatchThompson(0.95, 4),
                                  lambda: TopTwoThompson(0.95)])
def test_the_decision_is_the_direct_drivers_for_any_number_of_workers(make):
    """Same seed, same asks and tells: the choice, the confidence and the evaluations do not depend
    on the workers or on random durations (which reorder completions)."""
    src = GaussianScores([0.0, 0.6, 1.0, 1.8], [1.0, 1.0, 1.0, 1.0])
    ref = run_direct(make(), FunctionEvaluator(src), 4, seed=11)
    for workers in (1, 3, 64):
        r = clock_run(make(), src, 4, workers=workers, durations="lognormal:1.0,0.8", seed=11)
        assert r.result["best"] == ref["best"]
        assert r.result.get("confidence") == ref.get("confidence")
        assert list(r.result["evaluations"]) == list(ref["evaluations"])


def test_same_seed_same_clock_and_a_draw_lasts_the_same_on_any_workers():
    src = ReplayScores({"a": [0.1, 0.5, 0.3], "b": [0.2, 0.4, 0.6], "c": [0.0, 0.9, 0.2]}, paired=True)
    runs = [clock_run(PairedElimination(0.9, max_evals=60), src, 3, workers=2, durations="exponential:1", seed=5)
            for _ in range(2)]
    assert (runs[0].wall, runs[0].busy, runs[0].started) == (runs[1].wall, runs[1].busy, runs[1].started)
    other = clock_run(PairedElimination(0.9, max_evals=60), src, 3, workers=2, durations="exponential:1", seed=6)
    assert other.wall != runs[0].wall
    model = parse_duration("exponential:1")
    d = split_draw(5, 1, 4, paired=True)
    assert model.for_draw(d, 5) == model.for_draw(d, 5) != model.for_draw(d, 6)
    # on one worker the wall time is the sum of the draws' durations, whatever the order
    one = clock_run(PairedElimination(0.9, max_evals=60), src, 3, workers=1, durations=model, seed=5)
    asked = one.result["evaluations"]
    total = sum(model.for_draw(split_draw(5, c, row, paired=True), 5) for c in range(3) for row in range(asked[c]))
    assert one.wall == pytest.approx(total, rel=1e-12)


def test_simulate_with_workers_reports_wall_time_and_keeps_the_decisions():
    kw = dict(means=[0.0, 1.0, 2.0], sds=[1.0, 1.0, 1.0], n_runs=8, random_state=2)
    plain = simulate(PairedElimination(0.9), **kw)
    timed = simulate(PairedElimination(0.9), **kw, workers=2, durations=0.25)
    again = simulate(PairedElimination(0.9), **kw, workers=2, durations=0.25, n_jobs=2)
    assert (plain.evaluations == timed.evaluations).all() and (plain.chosen == timed.chosen).all()
    assert np.array_equal(timed.wall, again.wall) and np.array_equal(timed.occupancy, again.occupancy)
    d = timed.to_dict()
    assert d["workers"] == 2 and d["wall_mean"] == pytest.approx(timed.wall.mean())
    assert d["busy_workers_mean"] == pytest.approx(2 * np.mean(timed.occupancy))
    # constant times: busy time is 0.25 per evaluation started
    assert np.allclose(timed.occupancy * 2 * timed.wall, 0.25 * timed.clock.started)
    assert "workers busy" in str(timed) and plain.wall is None


def test_durations_from_a_store_are_the_recorded_times_per_candidate(tmp_path, capsys):
    path = tmp_path / "run.sqlite"
    store = SQLiteStore(path)
    store.bind("fp", {"candidates": ["a", "b"]})
    store.record(Draw(0, "split", (0,), seed=1), Outcome(score=0.5, duration=2.0))
    store.record(Draw(1, "split", (0,), seed=1), Outcome.failure("boom", duration=9.0))  # failed: not a time
    store.record(Draw(1, "split", (0,), seed=1, ), Outcome(score=0.4, duration=3.0, attempt=2))
    store.close()
    model = durations_from_store(path)
    assert {k: v.tolist() for k, v in model.times.items()} == {"a": [2.0], "b": [3.0]}
    # a, b, a, b on one worker: 2 + 3 + 2 + 3
    r = clock_run(EqualAllocation(4), _zero, 2, workers=1, durations=model, names=["a", "b"])
    assert r.wall == pytest.approx(10.0)
    # a candidate the store has no time for takes one of all the recorded times
    bound = model.bind(["a", "z"])
    rng = np.random.default_rng(0)
    assert {bound.sample(1, rng) for _ in range(50)} == {2.0, 3.0}
    with pytest.raises(ValueError, match="none of the candidates"):
        model.bind(["x", "y"])
    # the CLI: the same wall time
    assert main(["simulate", "--means", "0,1", "--sds", "1", "--names", "a,b", "--strategy", "equal", "--budget", "4",
                 "--runs", "3", "--workers", "1", "--durations-from", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["wall_min"], out["wall_max"]) == pytest.approx((10.0, 10.0)) and out["occupancy_mean"] == 1.0
    assert out["durations"].startswith(f"recorded in {path}")


def test_cli_prints_the_clock(capsys):
    assert main(["simulate", "--means", "0,1", "--sds", "1", "--strategy", "equal", "--budget", "10", "--runs", "2",
                 "--workers", "4", "--duration", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["wall_mean"] == pytest.approx(6.0) and out["occupancy_mean"] == pytest.approx(10 / 12)
    assert out["ahead_mean"] == 0 and out["workers"] == 4
    assert main(["simulate", "--means", "0,1", "--sds", "1", "--strategy", "equal", "--budget", "10", "--runs", "2",
                 "--workers", "4"]) == 0
    text = capsys.readouterr().out
    assert "on 4 workers" in text and "wall time: mean 3" in text and "83.3%" in text


@pytest.mark.parametrize("argv,message", [
    (["--duration", "0.5"], "give --workers"),
    (["--workers", "2", "--duration", "-1"], "> 0"),
    (["--workers", "2", "--duration", "lognormal:1"], "2 finite"),
    (["--workers", "2", "--duration", "gamma:1,2"], "unknown distribution"),
    (["--workers", "2", "--duration", "uniform:2,1"], "LOW < HIGH"),
])
def test_cli_refuses_bad_durations_clearly(capsys, argv, message):
    assert main(["simulate", "--means", "0,1", "--sds", "1", "--runs", "2", *argv]) == 2
    assert message in capsys.readouterr().err


def test_duration_models():
    d = parse_duration("lognormal:2,0.5")
    assert d.dist.mean() == pytest.approx(2.0) and d.dist.std() == pytest.approx(0.5)
    assert isinstance(parse_duration("lognormal:2,0"), ConstantDurations)
    u = parse_duration("uniform:1,3")
    assert (u.dist.mean(), u.dist.std()) == pytest.approx((2.0, 2 / math.sqrt(12)))
    assert as_durations(stats.gamma(2.0, scale=0.5)).description.startswith("gamma")
    f = as_durations(lambda c, rng: 1.0 + c)
    assert f.for_draw(Draw(3, "split", (0,), seed=0), 0) == 4.0
    rec = as_durations([[1.0], [2.0, 2.0]]).bind(["p", "q"])
    assert rec.for_draw(Draw(1, "split", (0,), seed=0), 0) == 2.0
    assert isinstance(as_durations({"a": [1.0]}), RecordedDurations)


def test_bad_inputs_are_refused_naming_the_argument():
    with pytest.raises(ValueError, match="workers must be a positive int"):
        clock_run(EqualAllocation(2), _zero, 2, workers=0)
    with pytest.raises(ValueError, match="> 0"):
        as_durations(0.0)
    with pytest.raises(TypeError, match="durations must be"):
        as_durations(True)
    with pytest.raises(TypeError, match="durations must be"):
        as_durations(object())
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        clock_run(EqualAllocation(2), _zero, 2, workers=1, durations=lambda c, rng: -1.0)
    with pytest.raises(ValueError, match="no recorded time for candidates"):
        clock_run(EqualAllocation(2), _zero, 2, workers=1, durations={"c0": [1.0]})
    with pytest.raises(ValueError, match="give workers too"):
        simulate(EqualAllocation(2), means=[0, 1], sds=[1, 1], n_runs=1, durations=1.0)
    with pytest.raises(ValueError, match="workers must be a positive int"):
        simulate(EqualAllocation(2), means=[0, 1], sds=[1, 1], n_runs=1, workers=0)
    with pytest.raises(ValueError, match="its own driver"):
        simulate(EqualAllocation(2), means=[0, 1], sds=[1, 1], n_runs=1, workers=2, driver="runner")
    with pytest.raises(ValueError, match="max_in_flight"):
        clock_run(EqualAllocation(2), _zero, 2, workers=1, max_in_flight=0)


def test_spent_ahead_is_the_strategys_when_it_reports_one():
    class Reports(EqualAllocation):
        def result(self):
            return {**super().result(), "evaluations_ahead": 3}

    assert clock_run(Reports(4), _zero, 2, workers=2).ahead == 3
    # otherwise: the draws asked but never told (BatchThompson stops with some in flight)
    r = clock_run(BatchThompson(0.9, 4), GaussianScores([0.0, 2.0], [1.0, 1.0]), 2, workers=4, seed=1)
    assert r.ahead == r.evaluations - r.told >= 0
