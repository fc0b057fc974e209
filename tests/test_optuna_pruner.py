"""certa.integrations.optuna.PairedPruner inside real Optuna studies (in-memory and SQLite storage):
a clearly worse trial is pruned at the row an independent computation of the rule gives (scipy's
t-test, the nominal level checked by an independent simulation), the best is not, the tolerance
and the direction are honoured, and the stated error rate holds in simulated studies (tolerance
from their sample size)."""
from __future__ import annotations

import math

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")  # the test extra installs it
from scipy import stats

from certa.integrations._repeated_t import first_look, nominal_level
from certa.integrations.optuna import PairedPruner

optuna.logging.set_verbosity(optuna.logging.WARNING)
ROWS = 12
ROW_EFFECT = np.random.default_rng(1).normal(0, 0.1, ROWS)     # shared by every trial on a row
NOISE = np.random.default_rng(2).normal(0, 0.03, (4, ROWS))     # each trial's own noise per row


def scores(mean: float, k: int) -> np.ndarray:
    return mean + ROW_EFFECT + NOISE[k]


def reference_p(best: np.ndarray, worse: np.ndarray, tolerance: float = 0.0) -> float:
    """The one-sided paired t-test's p-value of ``mean(best - worse) <= tolerance`` on all their rows,
    from scipy, not certa's code (the variance floor checked not to decide)."""
    d = best - worse
    floor = 0.01 * 0.5 * (best.var() + worse.var())
    assert d.var(ddof=1) > floor                 # the variance floor is not what decides here
    return float(stats.ttest_1samp(d - tolerance, 0.0, alternative="greater").pvalue)


def reference_prune_row(best: np.ndarray, worse: np.ndarray, delta: float, tolerance: float = 0.0) -> int | None:
    """The row after which the rule prunes ``worse`` against one complete trial ``best`` (all its rows)."""
    level = nominal_level(len(best), delta)
    first = 3 if len(best) >= 4 else 2           # the looks start at 3 common rows with 4 or more rows
    for n in range(first, len(worse) + 1):
        if reference_p(best[:n], worse[:n], tolerance) < level:
            return n
    return None


def test_the_nominal_level_is_passed_by_some_look_with_probability_alpha():
    """An independent simulation (other seed, scipy's t) of Gaussian null sequences: the share in which
    some look n = n0..N (n0 = 3 with 4 rows or more, else 2) has a p-value at or below the level is
    alpha within 4 binomial SEs, at or below it (the level is a conservative quantile); bounds: the
    union bound over the looks <= level <= alpha."""
    rng = np.random.default_rng(2024)
    assert [first_look(n) for n in (2, 3, 4, 30)] == [2, 2, 3, 3]
    for n_rows, alpha in [(12, 0.2), (12, 0.05), (30, 0.05), (3, 0.1)]:
        a = nominal_level(n_rows, alpha)
        first = 3 if n_rows >= 4 else 2
        assert alpha / (n_rows - first + 1) <= a <= alpha
        paths = 20_000
        x = rng.standard_normal((paths, n_rows))
        passed = np.zeros(paths, dtype=bool)
        for n in range(first, n_rows + 1):
            passed |= stats.ttest_1samp(x[:, :n], 0.0, axis=1, alternative="greater").pvalue <= a
        se = math.sqrt(alpha * (1 - alpha) / paths)
        assert alpha - 4 * se <= passed.mean() <= alpha + 2 * se
    assert nominal_level(2, 0.05) == 0.05 and nominal_level(1, 0.05) == 0.0
    assert nominal_level(30, 1e-6) == pytest.approx(1e-6 / 28)          # too rare to simulate: union bound


def make_objective(table: dict[int, np.ndarray], sign: float = 1.0):
    def objective(trial):
        k = trial.suggest_categorical("k", sorted(table))
        for row, v in enumerate(table[k]):
            trial.report(sign * float(v), step=row)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return sign * float(np.mean(table[k]))
    return objective


def run_study(table, order, *, direction="maximize", storage=None, pruner=None):
    study = optuna.create_study(direction=direction, storage=storage, pruner=pruner or PairedPruner(0.95))
    for k in order:
        study.enqueue_trial({"k": k})
    study.optimize(make_objective(table, 1.0 if direction == "maximize" else -1.0), n_trials=len(order))
    return study


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
@pytest.mark.parametrize("use_sqlite", [False, True])
def test_a_clearly_worse_trial_is_pruned_at_the_reference_row(tmp_path, direction, use_sqlite):
    table = {0: scores(0.80, 0), 1: scores(0.75, 1)}
    expected = reference_prune_row(table[0], table[1], 0.05)
    assert expected is not None and 2 < expected < ROWS
    storage = f"sqlite:///{tmp_path / 'study.db'}" if use_sqlite else None
    study = run_study(table, [0, 1], direction=direction, storage=storage)
    first, second = study.trials
    assert first.state == optuna.trial.TrialState.COMPLETE
    assert second.state == optuna.trial.TrialState.PRUNED
    assert len(second.intermediate_values) == expected
    # the evidence at the pruning row, recomputed from the stored study, passes the level
    pruner = PairedPruner(0.95)
    w, against = pruner.evidence(study, second)
    level = nominal_level(ROWS, 0.05)
    assert against == 0 and w == pytest.approx(math.log(level / reference_p(table[0][:expected], table[1][:expected])))
    assert w > 0


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
def test_the_best_trial_is_not_pruned(direction):
    table = {0: scores(0.75, 1), 1: scores(0.80, 0)}    # the worse trial first, then the best
    study = run_study(table, [0, 1], direction=direction)
    assert [t.state for t in study.trials] == [optuna.trial.TrialState.COMPLETE] * 2
    assert study.best_trial.params == {"k": 1}


def test_the_direction_decides_which_trial_is_worse():
    losses = {0: 1 - scores(0.80, 0), 1: 1 - scores(0.75, 1)}   # trial k=1 has the higher loss
    expected = reference_prune_row(1 - losses[1], 1 - losses[0], 0.05)   # k=0's scores as the worse's
    for direction, loser in [("minimize", 1), ("maximize", 0)]:
        for order in ([0, 1], [1, 0]):
            study = optuna.create_study(direction=direction, pruner=PairedPruner(0.95))
            for k in order:
                study.enqueue_trial({"k": k})
            study.optimize(make_objective(losses), n_trials=2)       # losses reported as they are
            second = study.trials[1]
            if second.params["k"] == loser:
                assert second.state == optuna.trial.TrialState.PRUNED
                if direction == "minimize":
                    assert len(second.intermediate_values) == reference_prune_row(1 - losses[0], 1 - losses[1], 0.05)
                else:
                    assert len(second.intermediate_values) == reference_prune_row(losses[1], losses[0], 0.05)
            else:
                assert second.state == optuna.trial.TrialState.COMPLETE
    assert expected is None        # as scores, the lower-loss trial is never shown worse


def test_the_tolerance_protects_a_trial_within_it():
    table = {0: scores(0.80, 0), 1: scores(0.75, 1)}
    # 0.05 worse on average, tolerance 0.1: never pruned, with the reference agreeing
    assert reference_prune_row(table[0], table[1], 0.05, tolerance=0.1) is None
    study = run_study(table, [0, 1], pruner=PairedPruner(0.95, tolerance=0.1))
    assert study.trials[1].state == optuna.trial.TrialState.COMPLETE
    # a tolerance of 0.01 prunes it later than none does, at the reference's row
    late = run_study(table, [0, 1], pruner=PairedPruner(0.95, tolerance=0.01)).trials[1]
    assert late.state == optuna.trial.TrialState.PRUNED
    assert len(late.intermediate_values) == reference_prune_row(table[0], table[1], 0.05, tolerance=0.01)
    assert len(late.intermediate_values) > reference_prune_row(table[0], table[1], 0.05)


def test_delta_per_trial_and_per_study():
    assert PairedPruner(0.9).delta(5) == pytest.approx(0.1)
    assert PairedPruner(0.9, family="study").delta(3) == pytest.approx(0.1 * 6 / (math.pi ** 2 * 16))


def test_comparators_are_the_trials_complete_when_the_trial_started_with_equal_shares():
    table = {0: scores(0.80, 0), 1: scores(0.75, 1), 2: scores(0.76, 2)}
    study = optuna.create_study(direction="maximize", pruner=PairedPruner(0.95))
    dist = {"k": optuna.distributions.CategoricalDistribution([0, 1, 2])}

    def complete(k):
        study.add_trial(optuna.trial.create_trial(params={"k": k}, distributions=dist, value=float(np.mean(table[k])),
                                                  intermediate_values={r: float(v) for r, v in enumerate(table[k])}))

    def running():
        trial = study.ask()
        for r, v in enumerate(table[1]):
            trial.report(float(v), step=r)
        return study.trials[trial.number]

    pruner = PairedPruner(0.95)
    complete(2)                                    # complete before the first trial starts
    first = running()
    complete(0)                                    # completes after it started: not its comparator
    assert [b.number for b in pruner.comparators(study, first)] == [0]
    w, against = pruner.evidence(study, first)
    assert against == 0
    assert w == pytest.approx(math.log(nominal_level(ROWS, 0.05) / reference_p(table[2], table[1])), abs=1e-9)
    # the same scores, started after both completed: a union over its two comparators
    second = running()
    assert sorted(b.number for b in pruner.comparators(study, second)) == [0, 2]
    w2, against2 = pruner.evidence(study, second)
    expected = math.log(nominal_level(ROWS, 0.05 / 2) / min(reference_p(table[0], table[1]),
                                                            reference_p(table[2], table[1])))
    assert against2 == 2 and w2 == pytest.approx(expected, abs=1e-9)
    assert pruner.prune(study, second) == (expected > 0)


def test_parallel_threads_prune_only_worse_trials_and_keep_the_best():
    # in memory: Optuna's SQLite storage with threads and enqueued trials races in Optuna itself
    # (a trial can start without its enqueued params); the pruner's reads of SQLite are tested above
    means = {k: 0.80 - 0.04 * k for k in range(4)}
    rng = np.random.default_rng(5)
    row_effect = rng.normal(0, 0.1, 20)
    table = {k: m + row_effect + rng.normal(0, 0.01, 20) for k, m in means.items()}
    study = optuna.create_study(direction="maximize", pruner=PairedPruner(0.95))
    for k in [3, 2, 0, 1, 3, 2, 1, 0]:
        study.enqueue_trial({"k": k})
    study.optimize(make_objective(table), n_trials=8, n_jobs=2)
    states = {(t.number, t.params["k"]): t.state for t in study.trials}
    assert all(s == optuna.trial.TrialState.COMPLETE for (_, k), s in states.items() if k == 0)
    assert any(s == optuna.trial.TrialState.PRUNED for s in states.values())
    assert study.best_trial.params == {"k": 0}


def _null_studies(n_studies: int, n_trials: int, rows: int, confidence: float, family: str) -> np.ndarray:
    """Studies whose trials all have the same true mean (every trial is 'the best'): which were pruned."""
    pruned = np.zeros((n_studies, n_trials), dtype=bool)
    for s in range(n_studies):
        rng = np.random.default_rng([34, s])
        row_effect = rng.normal(0, 1.0, rows)
        table = {k: row_effect + rng.normal(0, 0.5, rows) for k in range(n_trials)}
        study = optuna.create_study(direction="maximize", pruner=PairedPruner(confidence, family=family),
                                    sampler=optuna.samplers.GridSampler({"k": list(range(n_trials))}, seed=s))
        study.optimize(make_objective(table), n_trials=n_trials)
        pruned[s] = [t.state == optuna.trial.TrialState.PRUNED for t in study.trials]
    return pruned


def test_each_trial_as_good_as_the_best_is_pruned_at_most_delta():
    """Simulated Gaussian rows, all trials equal: every prune is wrong. delta = 0.2; the per-trial
    rate must not exceed it by more than 3 binomial SEs (300 trials of the last position)."""
    pruned = _null_studies(n_studies=300, n_trials=4, rows=15, confidence=0.8, family="trial")
    last = pruned[:, -1]                         # the trial with the most comparators
    delta, n = 0.2, len(last)
    assert last.mean() <= delta + 3 * math.sqrt(delta * (1 - delta) / n)
    assert pruned.mean() <= delta + 3 * math.sqrt(delta * (1 - delta) / pruned.size)
    # the study-wide family: no trial pruned in a study, with probability 1 - delta
    study_wide = _null_studies(n_studies=150, n_trials=4, rows=15, confidence=0.8, family="study").any(axis=1)
    assert study_wide.mean() <= delta + 3 * math.sqrt(delta * (1 - delta) / len(study_wide))


def test_trials_tied_with_the_best_among_narrowly_worse_ones_are_pruned_at_most_delta():
    """The comparators are the complete trials, a selection on their own scores that the proof does not
    cover (module documentation): simulated Gaussian rows, 2 trials at the best mean among 8 worse by
    0.57 of a difference SD per row (pruned about half the time, so which of them complete is
    decided by their noise). The tied trials' pruning rate at delta = 0.2 (measured 0.0525) must not
    exceed it by more than 3 binomial SEs."""
    n_studies, rows, confidence = 200, 15, 0.8
    pruned_best = []
    for s in range(n_studies):
        rng = np.random.default_rng([3434, s])
        row_effect = rng.normal(0, 1.0, rows)
        means = [0.0, 0.0] + [-0.4] * 8
        table = {k: m + row_effect + rng.normal(0, 0.5, rows) for k, m in enumerate(means)}
        study = optuna.create_study(direction="maximize", pruner=PairedPruner(confidence),
                                    sampler=optuna.samplers.GridSampler({"k": list(range(len(means)))}, seed=s))
        study.optimize(make_objective(table), n_trials=len(means))
        pruned_best += [t.state == optuna.trial.TrialState.PRUNED for t in study.trials if t.params["k"] < 2]
    delta, n = 1 - confidence, len(pruned_best)
    assert np.mean(pruned_best) <= delta + 3 * math.sqrt(delta * (1 - delta) / n)


@pytest.mark.parametrize("kwargs, match", [({"confidence": 1.0}, "confidence"), ({"confidence": True}, "confidence"),
                                           ({"tolerance": -0.1}, "tolerance"), ({"family": "pair"}, "family")])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PairedPruner(**kwargs)


def test_a_multi_objective_study_is_refused():
    study = optuna.create_study(directions=["maximize", "minimize"], pruner=PairedPruner())

    def objective(trial):
        trial.suggest_float("x", 0, 1)
        return 1.0, 2.0

    study.optimize(objective, n_trials=1)
    with pytest.raises(ValueError, match="single-objective"):
        PairedPruner().prune(study, study.trials[0])
