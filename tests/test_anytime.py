"""Anytime answers (issue 12, item 3): whatever ends a bandit run, the recommendation and the
confidence reached for it, checked against an independent recomputation from the stored scores.

Endings: confidence reached, max_evals, a fixed budget (sequential halving), Ctrl-C in the Python
API (RunInterrupted), SIGKILL of ``certa select`` (then ``certa.load`` / ``certa show``), SIGINT and
SIGTERM of ``certa select`` (exit 130 / 143). The references: for ``stopping="glr"`` the e-process
statistic minimised by brute force over a fine grid from the raw scores (then the library's
threshold inversion ``glr_delta_reached``, tested on its own in test_glr.py); for ``"bayes"``
P(best) by quadrature on FIESTA's posterior of the raw scores.
"""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
from _gate import gate_env, wait_until
from _helpers import stored_rows
from _reference_belief import posterior
from scipy.optimize import minimize_scalar

import certa
from certa import FunctionEvaluator, RunInterrupted, SequentialHalving, TopTwoThompson, bandit_select, run
from certa.cli import main
from certa.strategies._glr import glr_delta_reached
from certa.strategies._guarantee import _fmt_conf
from certa.strategies._posterior import p_best


# ------------------------------------------------------------------------------------
# independent references
# ------------------------------------------------------------------------------------
def _log_m(n, mean, var, u, c=1.0):
    # log of the scale-invariant mixture e-process of one candidate (module doc of _glr)
    rho = c / (n + c)
    d2 = (mean - u) ** 2
    return 0.5 * np.log(rho) + 0.5 * n * np.log1p((1 - rho) * d2 / (var + rho * d2))


def glr_reference(scores: list[list[float]]) -> tuple[int, float]:
    """(recommendation, confidence) from raw scores: brute-force min over u of the pair objective."""
    arr = [np.asarray(s, dtype=float) for s in scores]
    n = np.array([a.size for a in arr], dtype=float)
    m = np.array([a.mean() for a in arr])
    v = np.array([a.var() for a in arr])
    vary = v > 1e-24
    pooled = np.sqrt(np.sum(n[vary] * v[vary]) / np.sum(n[vary]))
    v = np.maximum(v, (0.1 * pooled) ** 2)
    b = int(np.argmax(m))
    z = []
    for j in range(len(arr)):
        if j == b:
            continue

        def f(u, j=j):
            return _log_m(n[b], m[b], v[b], u) + _log_m(n[j], m[j], v[j], u)

        grid = np.linspace(m[j], m[b], 4001)
        k = int(np.argmin(f(grid)))
        lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
        best = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12}).fun if hi > lo \
            else f(grid[k])
        z.append(min(best, f(grid).min()))
    return b, 1.0 - glr_delta_reached(min(z), len(arr))


def bayes_reference(scores: list[list[float]]) -> tuple[int, float]:
    p = p_best(*posterior(scores))
    return int(np.argmax(p)), float(p.max())


def scores_of(selection) -> list[list[float]]:
    ev = selection.evaluations
    ok = ev[ev["status"] == "ok"]
    return [ok[ok["candidate"] == c.index]["score"].tolist() for c in selection.candidates]


def store_scores(path: str, n_candidates: int) -> list[list[float]]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT candidate, score FROM evaluations WHERE status='ok' ORDER BY seq").fetchall()
    out: list[list[float]] = [[] for _ in range(n_candidates)]
    for c, x in rows:
        out[c].append(x)
    return out


def check_anytime(result: dict, scores: list[list[float]], stopping: str) -> None:
    best, conf = (glr_reference if stopping == "glr" else bayes_reference)(scores)
    assert result["best"] == best
    assert result["confidence"] == pytest.approx(conf, abs=1e-6)
    assert f"confidence {_fmt_conf(result['confidence'])} " in result["guarantee"]


MEANS = {"a": 0.60, "b": 0.70, "c": 0.65}


def evaluate(mean, train, test, seed):
    return mean + np.random.default_rng(seed).normal(0, 0.05)


# ------------------------------------------------------------------------------------
# endings in the Python API
# ------------------------------------------------------------------------------------
@pytest.mark.parametrize("stopping", ["glr", "bayes"])
def test_confidence_reached(stopping):
    sel = bandit_select(evaluate, MEANS, confidence=0.9, stopping=stopping, random_state=1)
    res = sel.result
    assert res["stop_reason"] == "confident" and res["target_reached"] is True
    assert res["confidence"] >= 0.9
    check_anytime(res, scores_of(sel), stopping)


@pytest.mark.parametrize("stopping, max_evals", [("glr", 60), ("bayes", 40)])
def test_max_evals_reports_the_confidence_reached_not_the_target(stopping, max_evals, tmp_path, capsys):
    path = str(tmp_path / "capped.sqlite")
    sel = bandit_select(evaluate, MEANS, confidence=0.999, stopping=stopping, max_evals=max_evals, random_state=1,
                        store=path)
    res = sel.result
    assert res["stop_reason"] == "max_evals" and res["target_reached"] is False
    assert 0.5 < res["confidence"] < 0.999 and res["target_confidence"] == 0.999
    check_anytime(res, scores_of(sel), stopping)
    check_anytime(res, store_scores(path, 3), stopping)
    assert main(["show", path]) == 0
    out = capsys.readouterr().out
    assert "target 0.999 not reached" in out and "max_evals" in out


def test_fixed_budget_reports_the_glr_confidence_of_its_choice():
    sel = run(SequentialHalving(60), FunctionEvaluator(lambda p, seed: evaluate(p["m"], None, None, seed)),
              [{"m": m} for m in MEANS.values()], random_state=2)
    scores = scores_of(sel)
    best, conf = glr_reference(scores)
    assert sel.best_index == best == 1
    assert sel.result["confidence"] == pytest.approx(conf, abs=1e-6)
    assert sel.result["stopping"] == "glr" and "anytime GLR, frequentist" in sel.result["guarantee"]


class _InterruptAfter:
    """A user evaluation that is interrupted (Ctrl-C) at its n-th call."""

    def __init__(self, n: int) -> None:
        self.n, self.calls = n, 0

    def __call__(self, params, seed):
        self.calls += 1
        if self.calls == self.n:
            raise KeyboardInterrupt
        return evaluate(params["m"], None, None, seed)


@pytest.mark.parametrize("stopping", ["glr", "bayes"])
def test_ctrl_c_in_the_python_api_keeps_every_evaluation_and_gives_the_selection(stopping, tmp_path):
    path = str(tmp_path / "int.sqlite")
    strategy = TopTwoThompson(0.999, stopping=stopping)
    fn = _InterruptAfter(40)
    with pytest.raises(RunInterrupted) as info:
        run(strategy, FunctionEvaluator(fn), [{"m": m} for m in MEANS.values()], random_state=4, store=path)
    exc = info.value
    assert isinstance(exc, KeyboardInterrupt) and exc.store == path and path in str(exc)
    sel = exc.selection
    assert sel.finished is False and sel.n_evaluations == 39
    assert sel.result["target_reached"] is False
    check_anytime(sel.result, scores_of(sel), stopping)
    # the same evaluations are in the store, and certa.load gives the same answer without evaluating
    assert store_scores(path, 3) == scores_of(sel)
    loaded = certa.load(path)
    assert loaded.finished is False and loaded.best_index == sel.best_index
    assert loaded.result["confidence"] == pytest.approx(sel.result["confidence"], abs=1e-12)
    # without a store the evaluations are in the exception's selection only
    with pytest.raises(RunInterrupted) as info:
        run(TopTwoThompson(0.999, stopping=stopping), FunctionEvaluator(_InterruptAfter(40)),
            [{"m": m} for m in MEANS.values()], random_state=4)
    assert info.value.store is None and scores_of(info.value.selection) == scores_of(sel)


# ------------------------------------------------------------------------------------
# endings of certa select: SIGKILL, SIGINT, SIGTERM
# ------------------------------------------------------------------------------------
SLOW = """
import time
import numpy as np
from _gate import gate

def evaluate(params, seed):
    gate()
    time.sleep(0.05)
    return params["m"] + float(np.random.default_rng(seed).normal(0, 0.05))
"""

TOML = "".join(f"[candidates.{k}]\nm = {v}\n\n" for k, v in MEANS.items())


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "slow.py").write_text(SLOW)
    (tmp_path / "cands.toml").write_text(TOML)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _start_select(project, store: str, stopping: str, *extra: str, gate_at: int) -> subprocess.Popen:
    # evaluations after the gate_at-th block until the test's signal: the run is signalled in a known
    # state (gate_at recorded, none finishing), whatever the machine's speed
    env = gate_env(project, gate_at, {**os.environ,
                                      "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))})
    return subprocess.Popen([sys.executable, "-m", "certa.cli", "select", "--evaluate", "slow:evaluate",
                             "--candidates", "cands.toml", "--confidence", "0.9999", "--stopping", stopping,
                             "--store", store, "--json", "--no-progress", *extra],
                            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_default_sigint)  # noqa: PLW1509 (no lock taken)


def _default_sigint() -> None:
    # a test suite started in the background by a non-interactive shell inherits SIGINT ignored (POSIX:
    # asynchronous commands ignore SIGINT without job control), and Python keeps an ignored SIGINT: the
    # child would never see the test's Ctrl-C and hang. Restore the default, as a terminal gives it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_after(proc: subprocess.Popen, store, n_rows: int, sig: int) -> tuple[str, str]:
    wait_until(lambda: stored_rows(store) >= n_rows, f"{n_rows} evaluations recorded", proc)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return out, err


@pytest.mark.parametrize("stopping", ["glr", "bayes"])
def test_sigkill_then_load_and_show_give_the_anytime_answer(project, stopping, capsys):
    proc = _start_select(project, "killed.sqlite", stopping, gate_at=25)
    _signal_after(proc, project / "killed.sqlite", 25, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    scores = store_scores(str(project / "killed.sqlite"), 3)
    assert sum(map(len, scores)) >= 25
    sel = certa.load("killed.sqlite")   # read-only, nothing evaluated
    assert sel.finished is False and sel.result["target_reached"] is False
    check_anytime(sel.result, scores, stopping)
    assert main(["show", "killed.sqlite", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["choice"]["name"] == list(MEANS)[sel.best_index]
    assert shown["bandit"]["confidence"] == pytest.approx(sel.result["confidence"], abs=1e-12)
    assert "recommended so far" in shown["statement"] and "target 0.9999 not reached" in shown["statement"]
    assert stored_rows(project / "killed.sqlite") == sum(map(len, scores))   # show evaluated nothing


@pytest.mark.parametrize("sig, code, stopping", [(signal.SIGINT, 130, "glr"), (signal.SIGTERM, 143, "bayes")])
def test_sigint_and_sigterm_print_the_anytime_answer_and_exit_nonzero(project, sig, code, stopping):
    proc = _start_select(project, "cut.sqlite", stopping, gate_at=25)
    out, err = _signal_after(proc, project / "cut.sqlite", 25, sig)
    assert proc.returncode == code, err
    name = "SIGINT" if sig == signal.SIGINT else "SIGTERM"
    assert f"interrupted by {name}" in err and "cut.sqlite" in err
    summary = json.loads(out)
    scores = store_scores(str(project / "cut.sqlite"), 3)
    assert summary["n_evaluations"] == sum(map(len, scores)) == 25   # every finished evaluation kept
    best, conf = (glr_reference if stopping == "glr" else bayes_reference)(scores)
    assert summary["choice"]["name"] == list(MEANS)[best]
    assert summary["bandit"]["confidence"] == pytest.approx(conf, abs=1e-6)
    assert summary["bandit"]["target_reached"] is False and summary["finished"] is False


@pytest.mark.parametrize("stopping", ["glr", "bayes"])
def test_interrupt_before_three_scores_each_gives_the_highest_mean_and_no_confidence(stopping):
    with pytest.raises(RunInterrupted) as info:
        run(TopTwoThompson(0.99, stopping=stopping), FunctionEvaluator(_InterruptAfter(6)),
            [{"m": m} for m in MEANS.values()], random_state=4)
    sel = info.value.selection
    means = [np.mean(s) if s else -np.inf for s in scores_of(sel)]
    assert sel.n_evaluations == 5 and sel.best_index == int(np.argmax(means))
    assert np.isnan(sel.result["confidence"]) and np.isnan(sel.result["p_best"]).all()
    assert "no confidence yet" in sel.result["guarantee"] and sel.result["target_reached"] is False


def test_sequential_halving_cut_short_recommends_its_best_survivor_with_the_glr_confidence(tmp_path):
    path = str(tmp_path / "sh.sqlite")
    means = [0.60, 0.70, 0.65, 0.62]
    fn = _InterruptAfter(30)
    with pytest.raises(RunInterrupted) as info:
        run(SequentialHalving(60), FunctionEvaluator(fn), [{"m": m} for m in means], random_state=5, store=path)
    sel = info.value.selection
    scores = scores_of(sel)
    # round 1 (7 evaluations of each of the 4) is over, round 2 (the 2 survivors) has begun
    assert 28 <= sel.n_evaluations <= 29 and len(sel.result["rounds"]) == 1
    survivors = sel.result["rounds"][0]["kept"]
    mean = [np.mean(s) for s in scores]
    expected = max(survivors, key=lambda c: mean[c])
    assert len(survivors) == 2 and sel.best_index == expected
    best, conf = glr_reference(scores)
    assert sel.result["confidence"] == pytest.approx(conf if best == expected else 0.0, abs=1e-6)
    loaded = certa.load(path)
    assert loaded.finished is False and loaded.best_index == sel.best_index
    assert loaded.result["confidence"] == pytest.approx(sel.result["confidence"], abs=1e-12)


def test_ctrl_c_to_the_process_group_with_workers_records_no_failure(project):
    # a terminal's Ctrl-C reaches the workers too: they ignore it, the main process stops them,
    # so the evaluations they were running are not recorded as failed (a resume redoes them)
    proc = _start_select(project, "pg.sqlite", "glr", "--strategy", "batch", "--workers", "2", "-j", "2",
                         gate_at=10)
    wait_until(lambda: stored_rows(project / "pg.sqlite") >= 10, "10 evaluations recorded", proc)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    with sqlite3.connect(f"file:{project / 'pg.sqlite'}?mode=ro", uri=True) as conn:
        statuses = [r[0] for r in conn.execute("SELECT status FROM evaluations")]
    assert len(statuses) >= 10 and set(statuses) == {"ok"}
    summary = json.loads(out)
    assert summary["finished"] is False and summary["n_failed"] == 0
