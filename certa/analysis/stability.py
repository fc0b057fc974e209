"""How stable a J-K-fold choice is, from the stored per-fold scores (no extra training).

This is the analysis of Moss, Leslie & Rayson (COLING 2018): the setting that
plain K-fold CV would pick on each of the J partitions, the SD of the chosen
parameter value and of the tuned model's score estimate across partitions,
and how often fewer partitions (J' < J) would have chosen differently.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from ..engine.candidates import Candidate
from ..strategies.grid import choose_best

TIE_RULE = ("exact ties in mean score are broken in favour of the candidate that comes first in "
            "grid order (the same rule as GridSearchCV's rank_test_score)")


@dataclass
class StabilityReport:
    """Stability of a J-K-fold choice. See :func:`stability_report`."""

    best: int
    best_tied: list[int]
    partition_choices: list[int]
    partition_ties: list[list[int]]
    partition_scores: np.ndarray
    choice_counts: pd.DataFrame
    chosen_param_sd: dict[str, float]
    tuned_score_sd: float
    subsample_disagreement: dict[int, float]
    candidates: list[Candidate] = field(repr=False)
    #: For each non-numeric parameter whose chosen value changed between partitions: value -> partitions.
    chosen_param_values: dict[str, dict[str, int]] = field(default_factory=dict)
    tie_rule: str = TIE_RULE

    @property
    def n_partitions(self) -> int:
        return len(self.partition_choices)

    @property
    def n_partitions_with_ties(self) -> int:
        return sum(len(t) > 1 for t in self.partition_ties)

    @property
    def agreement(self) -> float:
        """Share of partitions whose plain K-fold choice equals the J-K-fold choice."""
        return float(np.mean([c == self.best for c in self.partition_choices]))

    def to_dict(self) -> dict[str, Any]:
        name = lambda i: self.candidates[i].name
        return {
            "best": name(self.best), "best_tied_with": [name(i) for i in self.best_tied if i != self.best],
            "partition_choices": [name(i) for i in self.partition_choices],
            "partition_ties": [[name(i) for i in t] for t in self.partition_ties],
            "partition_scores": self.partition_scores.tolist(),
            "agreement": self.agreement,
            "chosen_param_sd": self.chosen_param_sd, "chosen_param_values": self.chosen_param_values,
            "tuned_score_sd": self.tuned_score_sd,
            "subsample_disagreement": {str(k): v for k, v in self.subsample_disagreement.items()},
            "tie_rule": self.tie_rule,
        }

    def __str__(self) -> str:
        J = self.n_partitions
        lines = [f"Choice on each of the {J} partitions (plain K-fold CV on that partition):"]
        for row in self.choice_counts.itertuples():
            lines.append(f"  {row.name:<40} chosen on {row.count:>3} of {J} partitions ({row.share:.0%})")
        lines.append(f"  agreement with the J-K-fold choice: {self.agreement:.0%}")
        for p, sd in self.chosen_param_sd.items():
            lines.append(f"SD of the chosen {p} across partitions: {sd:.4g}")
        for p, counts in self.chosen_param_values.items():
            said = ", ".join(f"{v} on {n}" for v, n in counts.items())
            lines.append(f"chosen {p} changed between partitions: {said} of {J}")
        lines.append(f"SD of the tuned model's score estimate across partitions: {self.tuned_score_sd:.4g}")
        if self.subsample_disagreement:
            lines.append(f"Fewer partitions: tuning on only J' of the {J} partitions (every set of J' of them, or "
                         f"random sets when there are many) gives another choice than all {J} this often; the "
                         f"lower, the less a rerun with other random partitions would change the choice:")
        for jp, rate in self.subsample_disagreement.items():
            lines.append(f"  {jp}-K-fold would choose differently from {J}-K-fold in {rate:.1%} of draws of {jp} "
                         "partitions")
        if len(self.best_tied) > 1:
            names = ", ".join(self.candidates[i].name for i in self.best_tied)
            lines.append(f"TIE at the top of the J-K-fold ranking: {names}")
        if self.n_partitions_with_ties:
            lines.append(f"Exact ties at the top on {self.n_partitions_with_ties} of {J} partitions")
        lines.append(f"Tie rule: {self.tie_rule}")
        return "\n".join(lines)


def _short_repr(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _sd(values: np.ndarray) -> float:
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def stability_report(scores: np.ndarray, candidates: list[Candidate], *, n_resamples: int = 2000,
                     random_state: int = 0) -> StabilityReport:
    """Stability of the J-K-fold choice from per-fold scores.

    Parameters
    ----------
    scores : ndarray of shape (n_candidates, J, K)
        Test score of each candidate on fold k of partition j.
    candidates : list of Candidate
    n_resamples : int
        For each J' < J, how many sets of J' partitions to draw (without
        replacement within a set); all combinations are used when there are
        no more than ``n_resamples`` of them.
    random_state : int
        Seed for that resampling.

    Returns
    -------
    StabilityReport
        SDs use ``ddof=1`` (the sample SD across partitions); they are NaN for J = 1.

    Examples
    --------
    >>> import numpy as np
    >>> from certa.engine.candidates import candidates_from_grid
    >>> s = np.array([[[0.8, 0.9]], [[0.7, 0.7]]])
    >>> stability_report(s, candidates_from_grid({"C": [1, 2]})).partition_choices
    [0]
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 3:
        raise ValueError(f"scores must have shape (n_candidates, J, K), got {scores.shape}")
    C, J, _K = scores.shape
    if len(candidates) != C:
        raise ValueError(f"candidates has {len(candidates)} entries but scores has {C} candidates")
    overall = np.average(scores.reshape(C, -1), axis=1)
    best, best_tied = choose_best(overall)
    part_means = np.average(scores, axis=2)  # (C, J)
    choices, ties = [], []
    for j in range(J):
        b, t = choose_best(part_means[:, j])
        choices.append(b)
        ties.append(t)
    tuned = np.array([part_means[choices[j], j] for j in range(J)])

    counts = pd.Series(choices).value_counts().sort_values(ascending=False, kind="stable")
    choice_counts = pd.DataFrame({"candidate": counts.index.astype(int),
                                  "name": [candidates[i].name for i in counts.index],
                                  "count": counts.to_numpy(), "share": counts.to_numpy() / J})

    param_sd: dict[str, float] = {}
    param_values: dict[str, dict[str, int]] = {}
    names = sorted({k for c in candidates for k in c.params})
    for p in names:
        vals = [candidates[i].params.get(p) for i in choices]
        if all(isinstance(v, Real) and not isinstance(v, bool) for v in vals):
            param_sd[p] = _sd(np.asarray(vals, dtype=float))
        elif len({repr(v) for v in vals}) > 1:   # a string, an estimator, None: count the values instead
            shown = pd.Series([_short_repr(v) for v in vals]).value_counts(sort=True)
            param_values[p] = {str(k): int(n) for k, n in shown.items()}

    rng = np.random.default_rng(random_state)
    disagreement: dict[int, float] = {}
    for jp in range(1, J):
        if math.comb(J, jp) <= n_resamples:
            subsets = [list(s) for s in itertools.combinations(range(J), jp)]
        else:
            subsets = [rng.choice(J, size=jp, replace=False) for _ in range(n_resamples)]
        differ = [choose_best(np.average(scores[:, s, :].reshape(C, -1), axis=1))[0] != best for s in subsets]
        disagreement[jp] = float(np.mean(differ))

    return StabilityReport(best=best, best_tied=best_tied, partition_choices=choices, partition_ties=ties,
                           partition_scores=tuned, choice_counts=choice_counts, chosen_param_sd=param_sd,
                           tuned_score_sd=_sd(tuned), subsample_disagreement=disagreement,
                           candidates=candidates, chosen_param_values=param_values)
