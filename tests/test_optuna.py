"""certa.integrations.optuna against real Optuna studies: the top trials, the sign of the objective,
a lucky best_trial overturned, and the stated confidence checked by simulation."""
from __future__ import annotations

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")  # the test extra installs it
from optuna.distributions import CategoricalDistribution, FloatDistribution

from certa.integrations.optuna import confirm_best, top_trials

optuna.logging.set_verbosity(optuna.logging.WARNING)
TRUE = {0: 0.50, 1: 0.60, 2: 0.56, 3: 0.40}   # true mean score of each setting of "x"
SD = 0.05


def study_with(values: list[tuple[int, float]], direction: str = "maximize"):
    """A real study whose trials have the given (x, observed value): the observed values are noisy."""
    study = optuna.create_study(direction=direction)
    dist = {"x": CategoricalDistribution([0, 1, 2, 3])}
    for x, value in values:
        study.add_trial(optuna.trial.create_trial(params={"x": x}, distributions=dist, value=value))
    return study


def score(params, train, test, seed):
    # noise independent between settings even on one (paired) row: the hardest case for pairing
    return TRUE[params["x"]] + np.random.default_rng([seed, params["x"]]).normal(0, SD)


def loss(params, train, test, seed):
    return 1.0 - score(params, train, test, seed)


# x=0 got a lucky draw (0.72 against its true 0.50): the study's best trial is not the best setting
LUCKY = [(0, 0.72), (1, 0.63), (2, 0.61), (3, 0.45), (1, 0.58), (0, 0.49)]


def test_top_trials_distinct_parameters_in_the_study_direction():
    study = study_with(LUCKY)
    assert [t.params["x"] for t in top_trials(study, 3)] == [0, 1, 2]
    assert [t.number for t in top_trials(study, 4)] == [0, 1, 2, 3]   # trial 4 repeats x=1, trial 5 x=0
    low = study_with([(x, 1 - v) for x, v in LUCKY], direction="minimize")
    assert [t.params["x"] for t in top_trials(low, 3)] == [0, 1, 2]


def test_a_lucky_best_trial_is_overturned_with_a_stated_confidence():
    study = study_with(LUCKY)
    c = confirm_best(study, score, top_k=3, confidence=0.95, random_state=0)
    assert study.best_trial.params == {"x": 0}
    assert c.best_params == {"x": 1} and c.best_trial.number == 1 and not c.agrees_with_study
    assert c.target_reached and c.confidence >= 0.95 and c.tolerance == 0.0
    assert "with confidence" in c.guarantee
    assert c.n_evaluations == len(c.selection.evaluations) == c.table["n_evaluations"].sum()
    row = c.table.set_index("trial").loc[1]
    assert row["chosen"] and not row["study_best"] and row["study_value"] == 0.63
    # the table's means are the confirmation's own scores, not the study's values
    ev = c.selection.evaluations
    assert row["mean"] == pytest.approx(ev.loc[ev["name"] == "trial 1", "score"].mean())


def test_paired_by_default_unpaired_on_request():
    study = study_with(LUCKY)
    paired = confirm_best(study, score, top_k=3, random_state=0)
    unpaired = confirm_best(study, score, top_k=3, paired=False, random_state=0)
    assert paired.selection.strategy["strategy"] == "PairedElimination"
    assert unpaired.selection.strategy["strategy"] == "TopTwoThompson"
    ev = paired.selection.evaluations
    # paired: every candidate still running is evaluated on the same seed (split) per row
    rows = ev.groupby("index")["seed"].nunique()
    assert (rows == 1).all()
    assert paired.best_params == unpaired.best_params == {"x": 1}


def test_minimizing_study():
    study = study_with([(x, 1 - v) for x, v in LUCKY], direction="minimize")
    c = confirm_best(study, loss, top_k=3, confidence=0.9, random_state=1)
    assert c.best_params == {"x": 1} and c.target_reached
    # means are losses again (lower is better), close to the true 1 - 0.60
    assert c.table.set_index("trial").loc[1, "mean"] == pytest.approx(0.40, abs=3 * SD)
    assert c.table["mean"].min() == c.table.set_index("trial").loc[1, "mean"]


def test_tolerance_stops_a_near_tie_early():
    near = {0: 0.600, 1: 0.601, 2: 0.40}

    def ev(params, train, test, seed):
        return near[params["x"]] + np.random.default_rng(seed).normal(0, SD)

    study = study_with([(0, 0.65), (1, 0.62), (2, 0.41)])
    c = confirm_best(study, ev, top_k=3, confidence=0.9, tolerance=0.05, random_state=0)
    assert c.target_reached and c.best_params["x"] in (0, 1) and c.tolerance == 0.05
    assert c.n_evaluations < 200


def test_stated_confidence_holds_in_simulation():
    """Over 60 studies with a lucky best trial, confirm_best at confidence 0.9 picks a setting more
    than the tolerance below the best in at most 10 % (+ 3 binomial SE) of them."""
    wrong, n = 0, 60
    for seed in range(n):
        rng = np.random.default_rng(seed)
        values = [(x, TRUE[x] + rng.normal(0, SD)) for x in (0, 1, 2, 3)]
        c = confirm_best(study_with(values), score, top_k=3, confidence=0.9, tolerance=0.02, random_state=seed)
        wrong += TRUE[c.best_params["x"]] < 0.60 - 0.02   # (x=1, the best, is in every top 3 here)
    assert wrong / n <= 0.1 + 3 * np.sqrt(0.1 * 0.9 / n)


def test_arguments_are_checked():
    study = study_with(LUCKY)
    with pytest.raises(TypeError, match="optuna.Study"):
        confirm_best("study", score)
    with pytest.raises(ValueError, match="top_k"):
        confirm_best(study, score, top_k=1)
    with pytest.raises(ValueError, match="fixed-confidence"):
        confirm_best(study, score, strategy="sequential_halving")
    with pytest.raises(ValueError, match="at least 2"):
        confirm_best(study_with([(0, 0.5), (0, 0.6)]), score)
    multi = optuna.create_study(directions=["maximize", "minimize"])
    multi.add_trial(optuna.trial.create_trial(params={"a": 0.1}, distributions={"a": FloatDistribution(0, 1)},
                                              values=[0.1, 0.2]))
    with pytest.raises(ValueError, match="single-objective"):
        confirm_best(multi, score)
