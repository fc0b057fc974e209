"""The reference computation of FIESTA's belief, from the full score lists (as FIESTA does it).

certa's strategies keep running statistics instead (``certa/strategies/_posterior.py``,
``_sampling.py``): ``tests/test_fast_belief.py`` checks them against the functions here, and
``tests/test_belief.py`` checks these against closed forms, scipy and simulation.

* :func:`posterior` recomputes FIESTA's Student-t posterior (with certa's SD floor and logit
  clipping) from every candidate's scores;
* :func:`thompson_sample` and :func:`top_two_sample` validate their arguments and draw as
  FIESTA's TTTS does; the package's versions consume the generator in exactly the same way.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from certa.strategies._posterior import (
    _ZERO_SD_RTOL,
    DEFAULT_LOGIT_EPS,
    DEFAULT_SD_FLOOR_FRACTION,
    _as_param_arrays,
    p_best,
)
from certa.strategies._sampling import ids_leader_probability
from certa.strategies._validation import as_score_list

__all__ = ["posterior", "thompson_sample", "top_two_sample"]


def _as_generator(rng: Any) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (numbers.Integral, np.random.SeedSequence)) and not isinstance(
        rng, bool
    ):
        return np.random.default_rng(rng)
    raise TypeError(
        "rng must be a numpy.random.Generator, an int seed or a numpy.random.SeedSequence,"
        f" got {type(rng).__name__}"
    )


def _reference_sd(means: np.ndarray, sds: np.ndarray, counts: np.ndarray,
                  all_scores: np.ndarray) -> float:
    """Reference noise level for the SD floor (see :func:`posterior`)."""
    tiny = _ZERO_SD_RTOL * np.maximum(1.0, np.abs(means))
    varying = sds > tiny
    if varying.any():
        return float(np.sqrt(np.sum(counts[varying] * sds[varying] ** 2)
                             / np.sum(counts[varying])))
    spread = float(all_scores.max() - all_scores.min())
    if spread > _ZERO_SD_RTOL * max(1.0, float(np.abs(all_scores).max())):
        return spread
    magnitude = float(np.abs(all_scores).max())
    return magnitude if magnitude > 0 else 1.0


def posterior(
    scores_per_candidate: Sequence[Any],
    transform: str | None = None,
    *,
    logit_eps: float = DEFAULT_LOGIT_EPS,
    sd_floor_fraction: float = DEFAULT_SD_FLOOR_FRACTION,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Student-t posterior of every candidate's mean score, as in FIESTA.

    For candidate ``k`` with ``n_k >= 3`` scores (after the optional transform)::

        loc_k = mean(scores_k)
        scale_k = max(sd_k, floor) / sqrt(n_k - 2)      sd_k = std(scores_k, ddof=0)
        df_k = n_k - 2

    i.e. ``mean_k | data ~ loc_k + scale_k * T_{df_k}``, the posterior under a normal
    model with unknown mean and variance and the uniform prior of Honda & Takemura
    (2014) used by FIESTA (Moss et al. 2019). Without the floor this is exactly FIESTA's
    formula (``fiesta.util.belief_calc``), so results are comparable with the paper.

    **SD floor.** A candidate whose scores are all equal has ``sd = 0`` and FIESTA gives
    it a point-mass posterior: two identical constant candidates then each look certain
    to be best, and a constant candidate above a noisy one gets P(best) = 1 after three
    evaluations. Equal scores do not show that a candidate's noise is zero, only that it
    is below the resolution of the metric (e.g. one test-set item). The floor is
    ``sd_floor_fraction`` times a reference SD: the pooled within-candidate SD
    ``sqrt(sum n_k sd_k^2 / sum n_k)`` over the candidates whose scores vary (they
    measure the same metric on the same kind of splits, so their noise is the natural
    yardstick); if no candidate varies, the spread ``max - min`` of all scores; if all
    scores are equal, their magnitude (or 1 if all are 0). With the default fraction
    0.1 the floor is 1 % of the pooled variance, so it almost never binds for a
    candidate whose scores vary (results stay FIESTA's), while a constant candidate
    keeps a proper posterior: two identical constant candidates get P(best) = 1/2 each.

    Parameters
    ----------
    scores_per_candidate : sequence of 1-D array-like
        The observed scores of each candidate (higher is better), at least 3 each.
    transform : {None, "logit"}, default None
        ``"logit"`` maps bounded scores in [0, 1] (accuracy, F1) to the real line first,
        after clipping them to ``[logit_eps, 1 - logit_eps]`` so that 0 and 1 stay finite.
    logit_eps : float, default 1e-3
        Clipping margin of the logit transform, in (0, 0.5). 1e-3 is the continuity
        correction ``(k + 1/2) / (m + 1)`` of a perfect score on about m = 500 test items;
        use ``1 / (2 * (m + 1))`` for a test set of m items.
    sd_floor_fraction : float, default 0.1
        Floor on every candidate's score SD as a fraction of the reference SD; > 0.

    Returns
    -------
    loc, scale, df : ndarray of shape (n_candidates,)
        Location, scale and degrees of freedom of each posterior.

    Examples
    --------
    >>> loc, scale, df = posterior([[0.8, 0.82, 0.81, 0.79], [0.7, 0.7, 0.7]])
    >>> df.tolist()
    [2.0, 1.0]
    >>> round(float(loc[0]), 3)
    0.805
    """
    if transform not in (None, "logit"):
        raise ValueError(f'transform must be None or "logit", got {transform!r}')
    if not isinstance(logit_eps, numbers.Real) or not 0.0 < logit_eps < 0.5:
        raise ValueError(f"logit_eps must be a number in (0, 0.5), got {logit_eps!r}")
    if (not isinstance(sd_floor_fraction, numbers.Real) or isinstance(sd_floor_fraction, bool)
            or not np.isfinite(sd_floor_fraction) or sd_floor_fraction <= 0):
        raise ValueError(
            f"sd_floor_fraction must be a finite number > 0, got {sd_floor_fraction!r}"
        )
    scores = as_score_list(scores_per_candidate, min_n=3)
    if transform == "logit":
        for k, s in enumerate(scores):
            if (s < 0).any() or (s > 1).any():
                raise ValueError(
                    f'transform="logit" needs scores in [0, 1]; scores_per_candidate[{k}] '
                    f"has values outside, e.g. {s[(s < 0) | (s > 1)][0]!r}"
                )
        scores = [np.log(c / (1.0 - c)) for c in
                  (np.clip(s, logit_eps, 1.0 - logit_eps) for s in scores)]
    counts = np.array([s.size for s in scores], dtype=float)
    means = np.array([s.mean() for s in scores])
    sds = np.array([s.std(ddof=0) for s in scores])
    floor = sd_floor_fraction * _reference_sd(means, sds, counts, np.concatenate(scores))
    df = counts - 2.0
    scale = np.maximum(sds, floor) / np.sqrt(df)
    return means, scale, df


def _draw(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, rng: np.random.Generator,
          size: int | None = None) -> np.ndarray:
    shape = loc.shape if size is None else (size, loc.size)
    return loc + scale * rng.standard_t(df, size=shape)


def thompson_sample(loc: Any, scale: Any, df: Any, rng: Any) -> int:
    """Thompson sampling: the argmax of one draw from every candidate's posterior.

    Candidate ``i`` is returned with probability ``P_i`` of :func:`p_best`.

    Parameters
    ----------
    loc, scale, df : array-like of shape (n_candidates,)
        Posterior parameters (see :func:`posterior`).
    rng : numpy.random.Generator or int or numpy.random.SeedSequence
        Source of randomness (an int / SeedSequence seeds a new Generator).

    Returns
    -------
    int
        Index of the candidate to evaluate next.

    Examples
    --------
    >>> thompson_sample([0.0, 10.0], [1.0, 1.0], [5.0, 5.0], rng=0)
    1
    """
    loc_a, scale_a, df_a = _as_param_arrays(loc, scale, df)
    gen = _as_generator(rng)
    return int(np.argmax(_draw(loc_a, scale_a, df_a, gen)))


def top_two_sample(
    loc: Any,
    scale: Any,
    df: Any,
    beta: float | str,
    rng: Any,
    *,
    max_resamples: int = 10_000,
) -> int:
    """Top-two Thompson sampling (Russo 2016), as in FIESTA's ``TTTS``.

    Draw once from every posterior; the argmax is the *leader*. With probability
    ``beta`` return the leader; otherwise draw again from the posteriors until the
    argmax differs from the leader (the *challenger*) and return it. FIESTA samples the
    leader and challenger from its Monte Carlo P(best) vector ``pi`` instead
    (``np.random.choice(..., p=pi)`` until different), which has exactly the same
    distribution: leader ~ ``pi``, challenger ~ ``pi`` restricted to the others. FIESTA
    uses ``beta = 0.5``.

    The re-draws are made in vectorised batches and capped at ``max_resamples`` draws:
    when the leader is (nearly) certain, the challenger event has tiny probability and
    FIESTA's loop can run for a very long time. If no challenger appears within the
    cap, the fallback is the candidate with the highest P(best) other than the leader
    (:func:`p_best`), i.e. the most likely challenger.

    Parameters
    ----------
    loc, scale, df : array-like of shape (n_candidates,)
        Posterior parameters (see :func:`posterior`).
    beta : float or "ids"
        Probability of playing the leader, in [0, 1]; ``"ids"``: information-directed
        selection (:func:`ids_leader_probability`), for which the challenger is always
        drawn and then the leader played with that probability.
    rng : numpy.random.Generator or int or numpy.random.SeedSequence
        Source of randomness.
    max_resamples : int, default 10000
        Cap on the number of posterior re-draws spent looking for a challenger.

    Returns
    -------
    int
        Index of the candidate to evaluate next.

    Examples
    --------
    >>> top_two_sample([0.0, 10.0], [1.0, 1.0], [5.0, 5.0], beta=1.0, rng=0)
    1
    """
    loc_a, scale_a, df_a = _as_param_arrays(loc, scale, df)
    ids = isinstance(beta, str) and beta == "ids"
    if not ids and (not isinstance(beta, numbers.Real) or isinstance(beta, bool)
                    or not 0.0 <= beta <= 1.0):
        raise ValueError(f'beta must be a number in [0, 1] or "ids", got {beta!r}')
    if (not isinstance(max_resamples, numbers.Integral) or isinstance(max_resamples, bool)
            or max_resamples < 1):
        raise ValueError(f"max_resamples must be an integer >= 1, got {max_resamples!r}")
    gen = _as_generator(rng)
    leader = int(np.argmax(_draw(loc_a, scale_a, df_a, gen)))
    if loc_a.size == 1 or (not ids and gen.random() < beta):
        return leader
    challenger = _challenger(loc_a, scale_a, df_a, leader, gen, max_resamples)
    if ids and gen.random() < ids_leader_probability(scale_a, df_a, leader, challenger):
        return leader
    return challenger


def _challenger(loc_a: np.ndarray, scale_a: np.ndarray, df_a: np.ndarray, leader: int,
                gen: np.random.Generator, max_resamples: int) -> int:
    used, batch = 0, 16
    while used < max_resamples:
        size = min(batch, max_resamples - used)
        winners = np.argmax(_draw(loc_a, scale_a, df_a, gen, size=size), axis=1)
        other = np.flatnonzero(winners != leader)
        if other.size:
            return int(winners[other[0]])
        used += size
        batch = min(batch * 4, 4096)
    probs = p_best(loc_a, scale_a, df_a)
    probs[leader] = -np.inf
    return int(np.argmax(probs))
