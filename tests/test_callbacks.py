"""Runner callbacks (certa.engine.callbacks): what they see, in which order, on resume, on the fronts."""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from certa import (
    BanditSearchCV,
    Callback,
    FunctionEvaluator,
    JKFoldSearchCV,
    ProgressiveSearchCV,
    bandit_select,
    run,
)
from certa.engine.runner import AllEvaluationsFailedError
from certa.strategies import BatchThompson, TopTwoThompson


def noisy(params, seed):
    return params["mu"] + np.random.default_rng(seed).normal(0, 0.05)


def slow_noisy(params, seed):
    # finishing times vary with the seed, so a thread pool finishes draws out of ask order
    time.sleep((seed % 7) * 0.002)
    return noisy(params, seed)


CANDS = [{"mu": 0.5}, {"mu": 0.6}, {"mu": 0.58}]


class Recorder(Callback):
    def __init__(self, read_result: bool = False, stop_after: int | None = None) -> None:
        self.read_result, self.stop_after = read_result, stop_after
        self.events: list[tuple] = []
        self.starts, self.ends = 0, []
        self.thread = None

    def on_run_start(self, run):
        self.starts += 1
        self.n_at_start = run.n_evaluations

    def on_evaluation(self, run, ev):
        self.thread = threading.current_thread()
        self.events.append((ev.order, ev.draw.key, ev.outcome.score, ev.outcome.status, ev.reused,
                            ev.candidate.name, run.n_evaluations, run.n_reused))
        if self.read_result:
            run.result()   # must not change what the run does
        if self.stop_after is not None and len(self.events) >= self.stop_after:
            raise RuntimeError("stop here")

    def on_run_end(self, run, selection, error=None):
        self.ends.append((selection, error))


def test_each_evaluation_in_told_order_then_the_selection():
    cb = Recorder()
    sel = run(TopTwoThompson(0.9, max_evals=60), FunctionEvaluator(noisy), CANDS, random_state=3, callbacks=[cb])
    ev = sel.evaluations
    assert cb.starts == 1 and cb.n_at_start == 0
    assert [e[0] for e in cb.events] == list(range(len(ev)))
    assert [e[1] for e in cb.events] == list(ev["key"])
    assert np.allclose([e[2] for e in cb.events], ev["score"])
    assert [e[5] for e in cb.events] == list(ev["name"])
    assert [e[6] for e in cb.events] == list(range(1, len(ev) + 1))   # the view counts what was told
    assert not any(e[4] for e in cb.events)
    assert len(cb.ends) == 1 and cb.ends[0][0] is sel and cb.ends[0][1] is None
    assert cb.thread is threading.main_thread()


def test_same_sequence_whatever_the_workers_and_reading_the_result_changes_nothing():
    """Callbacks see the ask order (deterministic) even when a pool finishes draws out of order;
    a callback that reads the strategy's current answer after every evaluation changes nothing."""
    plain = run(BatchThompson(0.9, n_workers=3, max_evals=45), FunctionEvaluator(slow_noisy), CANDS,
                random_state=5)
    cb_inline, cb_pool = Recorder(read_result=True), Recorder(read_result=True)
    inline = run(BatchThompson(0.9, n_workers=3, max_evals=45), FunctionEvaluator(slow_noisy), CANDS,
                 random_state=5, callbacks=cb_inline)
    with ThreadPoolExecutor(3) as pool:
        pooled = run(BatchThompson(0.9, n_workers=3, max_evals=45), FunctionEvaluator(slow_noisy), CANDS,
                     random_state=5, executor=pool, callbacks=[cb_pool])
    assert cb_inline.events == cb_pool.events
    for sel in (inline, pooled):
        assert list(sel.evaluations["key"]) == list(plain.evaluations["key"])
        assert sel.best_index == plain.best_index
        assert sel.result["confidence"] == plain.result["confidence"]


def test_view_result_is_the_anytime_answer():
    answers = []
    run(TopTwoThompson(0.9, max_evals=40), FunctionEvaluator(noisy), CANDS, random_state=1,
        callbacks=lambda r, ev: answers.append(r.result()))
    early, late = answers[0], answers[-1]
    assert early is not None and not np.isfinite(early["confidence"])   # one score: no confidence yet
    assert late["best"] == 1 and np.isfinite(late["confidence"])


def test_resume_passes_reused_evaluations_flagged(tmp_path):
    store = tmp_path / "run.sqlite"
    whole = run(TopTwoThompson(0.95, max_evals=50), FunctionEvaluator(noisy), CANDS, random_state=2)
    first = Recorder(stop_after=12)
    with pytest.raises(RuntimeError, match="stop here"):
        run(TopTwoThompson(0.95, max_evals=50), FunctionEvaluator(noisy), CANDS, random_state=2, store=store,
            callbacks=[first])
    assert first.ends[0][0] is None and "stop here" in str(first.ends[0][1])   # told why it ended
    second = Recorder()
    resumed = run(TopTwoThompson(0.95, max_evals=50), FunctionEvaluator(noisy), CANDS, random_state=2,
                  store=store, callbacks=[second])
    flags = [e[4] for e in second.events]
    assert flags == [True] * 12 + [False] * (len(flags) - 12)
    assert [e[1:4] for e in second.events[:12]] == [e[1:4] for e in first.events]
    assert second.events[-1][7] == 12 == resumed.n_reused
    assert list(resumed.evaluations["key"]) == list(whole.evaluations["key"])
    assert resumed.best_index == whole.best_index


def test_run_end_is_told_the_error():
    cb = Recorder()

    def broken(params, seed):
        raise ValueError("bad data")

    with pytest.raises(AllEvaluationsFailedError):
        run(TopTwoThompson(0.9), FunctionEvaluator(broken), CANDS, random_state=0, callbacks=[cb])
    (selection, error), = cb.ends
    assert selection is None and isinstance(error, AllEvaluationsFailedError)
    assert [e[3] for e in cb.events] == ["failed"] * 3   # failed evaluations are passed too


@pytest.mark.parametrize("bad", [5, "log", [print, 3]])
def test_bad_callbacks_are_refused(bad):
    with pytest.raises(TypeError, match="callbacks"):
        run(TopTwoThompson(0.9), FunctionEvaluator(noisy), CANDS, callbacks=bad)


def _count(counter):
    return lambda r, ev: counter.append(ev.draw.key)


def test_fronts_pass_callbacks():
    X, y = load_iris(return_X_y=True)
    seen: dict[str, list] = {k: [] for k in ("bandit", "jkfold", "progressive", "select")}
    s = BanditSearchCV(candidates={"tree": DecisionTreeClassifier(max_depth=1),
                                   "logreg": LogisticRegression(max_iter=300)},
                       confidence=0.9, max_evals=30, random_state=0, callbacks=_count(seen["bandit"])).fit(X, y)
    assert seen["bandit"] == list(s.selection_.evaluations["key"])
    j = JKFoldSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2]}, n_splits=3, n_repeats=2,
                       random_state=0, callbacks=[_count(seen["jkfold"])]).fit(X, y)
    assert len(seen["jkfold"]) == 12 and seen["jkfold"] == list(j.selection_.evaluations["key"])
    p = ProgressiveSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 3]}, schedule=[0.5, 1.0],
                            random_state=0, callbacks=_count(seen["progressive"])).fit(X, y)
    assert seen["progressive"] == list(p.selection_.evaluations["key"]) and seen["progressive"]
    sel = bandit_select(lambda m, tr, te, seed: m + np.random.default_rng(seed).normal(0, 0.01),
                        {"a": 0.5, "b": 0.7}, confidence=0.9, random_state=0, callbacks=[_count(seen["select"])])
    assert seen["select"] == list(sel.evaluations["key"])
