"""The confidence reached for a recommendation, from the scores alone (any strategy, any time).

The GLR statistic of :mod:`._glr` compares per-candidate e-processes, which stay valid
whatever chose the evaluations and whenever one looks: ``1 - glr_delta_reached(min_j
Z_best,j)`` is a frequentist confidence (for Gaussian scores) that the recommended candidate is
the best, at any time of any run. Fixed-budget strategies (sequential halving, equal
allocation) report it for their choice, so every bandit result states the confidence reached.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ._glr import glr_delta_reached
from ._guarantee import _fmt_conf, guarantee_text
from ._stopping import glr_min_statistic


def anytime_confidence(scores: Sequence[Sequence[float]], best: int,
                       dropped: Mapping[int, str] | None = None, budget: int | None = None) -> dict:
    """``confidence`` (GLR, anytime-valid), ``guarantee`` in words and ``stopping`` for ``best``.

    With ``budget`` (a fixed-budget strategy's) the words say what such a run can claim: the
    choice after that budget, the confidence its scores reach (often 0: candidates eliminated
    after a few scores cannot be ruled out), and that no confidence level is set in advance.

    Candidates dropped or without scores are left out; the confidence is 0 when another
    candidate has a higher mean (the statistic then cannot rule it out) and ``nan`` when
    ``best`` has no score or no other candidate has one.

    Examples
    --------
    >>> r = anytime_confidence([[1.0, 1.2, 0.9] * 10, [0.0, 0.2, -0.1] * 10], 0)
    >>> r["confidence"] > 0.999, r["stopping"]
    (True, 'glr')
    >>> anytime_confidence([[1.0, 1.2, 0.9], [2.0, 2.1, 1.9]], 0)["confidence"]
    0.0
    """
    dropped = dropped or {}
    live = [c for c in range(len(scores)) if c not in dropped and len(scores[c]) > 0]
    conf = float("nan")
    if best in live and len(live) >= 2:
        arr = [np.asarray(scores[c], dtype=float) for c in live]
        mean = np.array([a.mean() for a in arr])
        var = np.array([a.var() for a in arr])
        n = np.array([a.size for a in arr], dtype=float)
        top, zmin = glr_min_statistic(mean, var, n)
        conf = 1.0 - glr_delta_reached(zmin, len(live)) if live[top] == best and mean[top] > np.delete(
            mean, top).max() else 0.0
    words = guarantee_text(conf, 0.0, "glr") if budget is None else fixed_budget_text(
        conf, budget, min((len(scores[c]) for c in live), default=0))
    return {"confidence": conf, "guarantee": words, "stopping": "glr"}


def fixed_budget_text(confidence: float, budget: int, fewest: int) -> str:
    """What a fixed-budget run can claim, in words (``fewest``: the fewest scores of a candidate).

    Examples
    --------
    >>> fixed_budget_text(0.0, 50, 3)[:60]
    'chosen after a fixed budget of 50 evaluations; its scores re'
    """
    what = f"chosen after a fixed budget of {budget} evaluations; "
    if not np.isfinite(confidence):
        what += "its scores are too few for any confidence"
    else:
        what += (f"its scores reach confidence {_fmt_conf(confidence)} that it is the best (anytime GLR, frequentist "
                 "for Gaussian scores)")
        if confidence < 0.5:
            what += f": too few to rule out the others (some have only {fewest} scores)"
    return (what + ". A fixed budget guarantees no confidence level: how often it chooses the best depends on "
            "the unknown gaps between candidates (estimate it with certa simulate), or use a fixed-confidence "
            "strategy")
