"""The engine: runner, store, evaluators, failures, resume after SIGKILL."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from _gate import gate_env, wait_until
from _helpers import stored_rows

from certa import FunctionEvaluator, JKFoldGrid, SQLiteStore, run
from certa.engine import Draw, Outcome, derive_seed
from certa.engine.candidates import as_candidates, candidates_from_grid


def noisy_score(params, seed):
    return params["x"] + np.random.default_rng(seed).normal(0, 0.1)


def test_derive_seed_depends_only_on_path():
    assert derive_seed(1, 2, 3) == derive_seed(1, 2, 3)
    assert len({derive_seed(1, 2, 3), derive_seed(1, 3, 2), derive_seed(2, 2, 3), derive_seed(1, 2)}) == 4
    assert derive_seed(0, 5) == int(np.random.SeedSequence(0, spawn_key=(5,)).generate_state(1)[0])


def test_function_evaluator_scores_match_direct_computation():
    sel = run(JKFoldGrid(n_splits=2, n_repeats=3), FunctionEvaluator(noisy_score), {"x": [0.0, 1.0]}, random_state=5)
    ev = sel.evaluations
    assert len(ev) == 12
    for row in ev.itertuples():
        assert row.score == noisy_score({"x": [0.0, 1.0][row.candidate]}, derive_seed(5, *row.index))
    assert sel.best_index == 1
    means = ev.groupby("candidate")["score"].mean().to_numpy()
    np.testing.assert_allclose(sel.result["estimates"], means, atol=1e-12)


def test_candidates_forms():
    assert [c.params for c in as_candidates([{"a": 1}, {"a": 2}])] == [{"a": 1}, {"a": 2}]
    named = as_candidates({"first": object(), "second": object()})
    assert [c.name for c in named] == ["first", "second"] and "model" in named[0].params
    assert [c.name for c in candidates_from_grid([{"a": [1, 2]}, {"b": ["u"]}])] == ["a=1", "a=2", "b='u'"]


def _flaky(params, seed):
    if params["x"] == 1:
        return float("nan")
    if params["x"] == 2:
        raise ValueError("boom")
    return 0.5


def test_nan_and_exceptions_are_recorded_with_retries():
    sel = run(JKFoldGrid(2, 1), FunctionEvaluator(_flaky), {"x": [0, 1, 2]}, random_state=0, retries=2)
    f = sel.failures
    assert sorted(f["candidate"].tolist()) == [1, 1, 2, 2]
    assert f[f.candidate == 1]["error"].str.contains("non-finite").all()
    assert f[f.candidate == 2]["error"].str.contains("ValueError: boom").all()
    assert (f["attempts"] == 3).all()
    assert sel.best_index == 0


def test_every_attempt_is_in_the_store(tmp_path):
    path = tmp_path / "s.sqlite"
    run(JKFoldGrid(2, 1), FunctionEvaluator(_flaky), {"x": [0, 2]}, random_state=0, retries=1, store=path)
    rows = sqlite3.connect(path).execute("SELECT candidate, attempt, status FROM evaluations ORDER BY seq").fetchall()
    assert sorted(rows) == [(0, 1, "ok"), (0, 1, "ok"), (1, 1, "failed"), (1, 1, "failed"),
                            (1, 2, "failed"), (1, 2, "failed")]


def _slow(params, seed):
    time.sleep(params["t"])
    return 1.0


def test_timeout_is_recorded():
    sel = run(JKFoldGrid(2, 1), FunctionEvaluator(_slow), {"t": [0.0, 5.0]}, random_state=0, timeout=0.3)
    f = sel.failures
    assert set(f["candidate"]) == {1} and (f["status"] == "timeout").all()
    assert (f["duration"] < 2.0).all()


def test_bad_runner_arguments():
    ev = FunctionEvaluator(noisy_score)
    with pytest.raises(ValueError, match="retries"):
        run(JKFoldGrid(2, 1), ev, {"x": [0.0]}, retries=-1)
    with pytest.raises(ValueError, match="timeout"):
        run(JKFoldGrid(2, 1), ev, {"x": [0.0]}, timeout=0)
    with pytest.raises(TypeError, match="random_state"):
        run(JKFoldGrid(2, 1), ev, {"x": [0.0]}, random_state=1.5)
    with pytest.raises(ValueError, match="n_jobs"):
        run(JKFoldGrid(2, 1), ev, {"x": [0.0]}, n_jobs=0)
    with pytest.raises(TypeError, match="executor"):
        run(JKFoldGrid(2, 1), ev, {"x": [0.0]}, executor=42)
    with pytest.raises(TypeError, match="fn must be callable"):
        FunctionEvaluator(3)


def test_store_rejects_non_database_file(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello, this is not sqlite" * 100)
    with pytest.raises(ValueError, match="not a certa SQLite store"):
        SQLiteStore(p)
    assert p.read_text().startswith("hello")


def test_store_roundtrip(tmp_path):
    s = SQLiteStore(tmp_path / "s.sqlite")
    s.bind("abc", {})
    d = Draw(3, "fold", (1, 2), seed=99)
    s.record(d, Outcome(0.75, details={"fit_time": 0.1}, payload={"y_pred": np.arange(3)}))
    s.record(Draw(1, "split", (0,), 5), Outcome.failure("x"))
    rows = SQLiteStore(tmp_path / "s.sqlite").load()
    assert rows[0].draw == d and rows[0].outcome.score == 0.75 and rows[0].outcome.details == {"fit_time": 0.1}
    np.testing.assert_array_equal(rows[0].outcome.payload["y_pred"], np.arange(3))
    assert np.isnan(rows[1].outcome.score) and rows[1].outcome.status == "failed"


SCRIPT = textwrap.dedent('''
    import json, sys, time
    import numpy as np
    from _gate import gate
    from certa import FunctionEvaluator, JKFoldGrid, run

    def slow_score(params, seed):
        gate()  # with CERTA_TEST_GATE set (tests/_gate.py): the evaluations after the N-th wait to be killed
        time.sleep(0.04)
        return params["x"] + np.random.default_rng(seed).normal(0, 0.3)

    if __name__ == "__main__":
        store = sys.argv[1] if sys.argv[1] != "-" else None
        sel = run(JKFoldGrid(n_splits=4, n_repeats=4), FunctionEvaluator(slow_score),
                  {"x": [0.0, 0.1, 0.2, 0.3]}, random_state=11, n_jobs=int(sys.argv[2]), store=store)
        print(json.dumps({"best": sel.best_index, "estimates": list(map(float, sel.result["estimates"])),
                          "scores": sel.evaluations.sort_values("key")["score"].tolist(),
                          "reused": sel.n_reused}))
''')


def test_resume_after_sigkill(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    store = tmp_path / "run.sqlite"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, str(script), str(store), "2"], env=gate_env(tmp_path, 12, env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    wait_until(lambda: stored_rows(store) >= 12, "12 evaluations recorded", proc)  # the 13th on wait to be killed
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = sqlite3.connect(store).execute("SELECT draw_key, score FROM evaluations").fetchall()
    assert 12 <= len(before) < 64, "the run must be killed mid-way"

    out = subprocess.run([sys.executable, str(script), str(store), "1"], env=env, capture_output=True,
                         text=True, timeout=300, check=True)
    resumed = json.loads(out.stdout.strip().splitlines()[-1])
    after = sqlite3.connect(store).execute("SELECT draw_key, score FROM evaluations").fetchall()
    keys = [k for k, _ in after]
    assert len(keys) == len(set(keys)) == 64, "every draw exactly once: nothing lost, nothing repeated"
    assert set(before) <= set(after), "finished evaluations survive the kill unchanged"
    assert resumed["reused"] == len(before)

    clean = subprocess.run([sys.executable, str(script), "-", "1"], env=env, capture_output=True, text=True,
                           timeout=300, check=True)
    uninterrupted = json.loads(clean.stdout.strip().splitlines()[-1])
    assert resumed["best"] == uninterrupted["best"]
    assert resumed["estimates"] == uninterrupted["estimates"]
    assert resumed["scores"] == uninterrupted["scores"]


class _CountingEvaluator(FunctionEvaluator):
    """Records in which process each evaluation ran."""

    def evaluate(self, params, draw):
        return {"score": 0.5, "pid": os.getpid()}


def test_evaluator_is_shipped_once_per_worker_and_results_are_complete():
    import certa.engine.evaluators as ev

    sel = run(JKFoldGrid(4, 5), _CountingEvaluator(noisy_score), {"x": list(range(10))}, random_state=0, n_jobs=2)
    assert sel.n_evaluations == 200 and len(sel.failures) == 0
    assert sel.evaluations["pid"].nunique() <= 2 and os.getpid() not in set(sel.evaluations["pid"])
    # a worker that lacks the evaluator answers MISSING_EVALUATOR instead of failing
    out = ev.execute_shipped("no-such-token", None, {"x": 1}, Draw(0, "fold", (0, 0)), 1, None)
    assert out is ev.MISSING_EVALUATOR
