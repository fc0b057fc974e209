"""The repeated one-sided paired t-test's nominal level: a Pocock-type boundary for a known number of rows.

A pair of trials is compared after each row the later trial reports, ``n = n0, n0 + 1, ..., N`` rows
(``N``: the rows the complete trial has; ``n0 = first_look(N)``: 3 when ``N >= 4``, else 2). At each
look the one-sided t-test of the differences gives a p-value ``p_n``; the boundary prunes at the
first look with ``p_n <= a``. The nominal level ``a`` is chosen so that, when the differences are
i.i.d. Gaussian with mean 0 (any variance: the t-statistic is pivotal), **some** look passes it with
probability ``alpha``::

    P( min_{n0 <= n <= N} p_n <= a ) = alpha

With a mean below 0 the probability is smaller (each ``p_n`` is stochastically larger), and looking
at fewer rows than every ``n`` only removes chances. ``a`` is the ``alpha``-quantile of the minimum
p-value over the looks, from ``PATHS`` simulated null sequences (seeded, so always the same), taken
conservatively: the order statistic ``alpha * PATHS - 2 sqrt(alpha * PATHS)`` (about two binomial
standard errors below), never below the union bound ``alpha / (N - n0 + 1)``, which holds without
any simulation and is used where fewer than ``MIN_EXCEEDANCES`` simulated sequences pass.

Why the looks start at the 3rd row (with 4 rows or more): every look spends about ``a`` of
``alpha`` whatever the data (the p-value is uniform under the null), but at 2 rows the t-test has
one degree of freedom (Cauchy tails): the level of ten comparators at ``delta = 0.05`` with 30
rows (0.0004) asks there for a t-statistic above 770, so the look spent 8 % of ``alpha`` and
pruned almost nothing. At 3 rows (2 degrees of freedom) a trial far worse on every row can
already be stopped, and the looks there pay for themselves. Without the 2-row look, on the four
tasks of ``benchmarks/integrations.py optuna-pruner`` (30 rows) the fits fell on every task (TDSA
replay 141.9 -> 140.7, Debian 246.0 -> 243.7, digits 100.6 -> 100.6, lemma grid 1343 -> 1332),
whereas starting at the 4th row traded (Debian 242.5, lemma grid 1423).

Compared with an e-process and Ville's inequality (certa's paired rule, valid at every ``n`` with
no horizon), the boundary spends exactly ``alpha`` on the looks a trial can have: at ``N = 30``
and ``alpha = 0.05`` the nominal level is 0.0072, at the last look a t-statistic of 2.61 (29
degrees of freedom), where the e-process (prior precision 1, one-sided) needs 3.05.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import stdtr

__all__ = ["FIRST_LOOK", "MIN_EXCEEDANCES", "PATHS", "first_look", "nominal_level", "one_sided_p"]

#: Simulated null sequences per number of rows.
PATHS = 200_000
#: Below this many simulated sequences at the level, the union bound ``alpha / (N - 1)`` is used.
MIN_EXCEEDANCES = 10
#: The first look with ``FIRST_LOOK_FROM`` rows or more (2 degrees of freedom); with fewer rows, the 2nd row.
FIRST_LOOK = 3
FIRST_LOOK_FROM = 4
_SEED = 34
_CHUNK = 20_000


def one_sided_p(n, mean, var) -> np.ndarray:
    """Upper-tail p-value of the one-sided t-test of ``mean > 0`` from ``n`` values with sample mean
    ``mean`` and ``ddof=1`` variance ``var`` (broadcasts; ``var`` > 0, ``n`` >= 2).

    Examples
    --------
    >>> from scipy import stats
    >>> x = [0.3, 0.1, 0.5, -0.1, 0.4]
    >>> p = float(one_sided_p(5, np.mean(x), np.var(x, ddof=1)))
    >>> bool(abs(p - stats.ttest_1samp(x, 0, alternative="greater").pvalue) < 1e-12)
    True
    """
    n = np.asarray(n, dtype=float)
    t = np.asarray(mean, dtype=float) * np.sqrt(n / np.asarray(var, dtype=float))
    return stdtr(n - 1.0, -t)


def first_look(n_rows: int) -> int:
    """The number of common rows of a pair's first look, when the complete trial has ``n_rows`` rows:
    ``FIRST_LOOK`` (3) with ``FIRST_LOOK_FROM`` (4) rows or more, else 2 (module documentation).

    Examples
    --------
    >>> first_look(30), first_look(4), first_look(3), first_look(2)
    (3, 3, 2, 2)
    """
    return FIRST_LOOK if n_rows >= FIRST_LOOK_FROM else 2


@functools.lru_cache(maxsize=32)
def _min_p_null(n_rows: int) -> np.ndarray:
    """Sorted minimum over the looks ``n = first_look(n_rows)..n_rows`` of the null p-values, ``PATHS`` sequences."""
    rng = np.random.default_rng([_SEED, n_rows])
    n = np.arange(2, n_rows + 1, dtype=float)
    first = first_look(n_rows) - 2                 # the column of the first look
    out = np.empty(PATHS)
    for i in range(0, PATHS, _CHUNK):
        x = rng.standard_normal((_CHUNK, n_rows))
        s = np.cumsum(x, axis=1)[:, 1:]
        ss = np.cumsum(x * x, axis=1)[:, 1:]
        mean = s / n
        var = np.maximum((ss - n * mean * mean) / (n - 1.0), 1e-300)
        out[i:i + _CHUNK] = one_sided_p(n[first:], mean[:, first:], var[:, first:]).min(axis=1)
    out.sort()
    return out


def nominal_level(n_rows: int, alpha: float) -> float:
    """The level ``a`` each look's p-value is compared with, so that some look of the
    ``n_rows - first_look(n_rows) + 1`` passes with probability at most ``alpha`` under the null
    (module documentation).

    Examples
    --------
    >>> nominal_level(2, 0.05)                       # one look: the level itself
    0.05
    >>> round(nominal_level(30, 0.05), 4)
    0.0072
    >>> nominal_level(30, 1e-6) == 1e-6 / 28         # too rare to simulate: the union bound (looks 3..30)
    True
    """
    if n_rows < 2:
        return 0.0
    looks = n_rows - first_look(n_rows) + 1
    if looks == 1:
        return float(alpha)
    union = alpha / looks
    k = alpha * PATHS
    lo = int(math.floor(k - 2.0 * math.sqrt(k)))
    if lo < MIN_EXCEEDANCES:
        return union
    return max(float(_min_p_null(int(n_rows))[lo - 1]), union)
