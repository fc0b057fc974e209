"""The repeated one-sided paired t-test's nominal level: a Pocock-type boundary for a known number of rows.

A pair of trials is compared after each row the later trial reports, ``n = 2, 3, ..., N`` rows (``N``:
the rows the complete trial has). At each look the one-sided t-test of the differences gives a
p-value ``p_n``; the boundary prunes at the first look with ``p_n <= a``. The nominal level ``a`` is
chosen so that, when the differences are i.i.d. Gaussian with mean 0 (any variance: the t-statistic
is pivotal), **some** look passes it with probability ``alpha``::

    P( min_{2 <= n <= N} p_n <= a ) = alpha

With a mean below 0 the probability is smaller (each ``p_n`` is stochastically larger), and looking
at fewer rows than every ``n`` only removes chances. ``a`` is the ``alpha``-quantile of the minimum
p-value over the looks, from ``PATHS`` simulated null sequences (seeded, so always the same), taken
conservatively: the order statistic ``alpha * PATHS - 2 sqrt(alpha * PATHS)`` (about two binomial
standard errors below), never below the union bound ``alpha / (N - 1)``, which holds without any
simulation and is used where fewer than ``MIN_EXCEEDANCES`` simulated sequences pass.

Compared with an e-process and Ville's inequality (certa's paired rule, valid at every ``n`` with
no horizon), the boundary spends exactly ``alpha`` on the ``N - 1`` looks a trial can have: at
``N = 30`` and ``alpha = 0.05`` the nominal level is 0.0063: at the last look a t-statistic of 2.66
(29 degrees of freedom), where the e-process (prior precision 1, one-sided) needs 3.05.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import stdtr

__all__ = ["MIN_EXCEEDANCES", "PATHS", "nominal_level", "one_sided_p"]

#: Simulated null sequences per number of rows.
PATHS = 200_000
#: Below this many simulated sequences at the level, the union bound ``alpha / (N - 1)`` is used.
MIN_EXCEEDANCES = 10
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


@functools.lru_cache(maxsize=32)
def _min_p_null(n_rows: int) -> np.ndarray:
    """Sorted minimum over the looks ``n = 2..n_rows`` of the null p-values, ``PATHS`` sequences."""
    rng = np.random.default_rng([_SEED, n_rows])
    n = np.arange(2, n_rows + 1, dtype=float)
    out = np.empty(PATHS)
    for i in range(0, PATHS, _CHUNK):
        x = rng.standard_normal((_CHUNK, n_rows))
        s = np.cumsum(x, axis=1)[:, 1:]
        ss = np.cumsum(x * x, axis=1)[:, 1:]
        mean = s / n
        var = np.maximum((ss - n * mean * mean) / (n - 1.0), 1e-300)
        out[i:i + _CHUNK] = one_sided_p(n, mean, var).min(axis=1)
    out.sort()
    return out


def nominal_level(n_rows: int, alpha: float) -> float:
    """The level ``a`` each look's p-value is compared with, so that some look of ``n_rows - 1``
    passes with probability at most ``alpha`` under the null (module documentation).

    Examples
    --------
    >>> nominal_level(2, 0.05)                       # one look: the level itself
    0.05
    >>> round(nominal_level(30, 0.05), 4)
    0.0063
    >>> nominal_level(30, 1e-6) == 1e-6 / 29         # too rare to simulate: the union bound
    True
    """
    if n_rows < 2:
        return 0.0
    if n_rows == 2:
        return float(alpha)
    union = alpha / (n_rows - 1)
    k = alpha * PATHS
    lo = int(math.floor(k - 2.0 * math.sqrt(k)))
    if lo < MIN_EXCEEDANCES:
        return union
    return max(float(_min_p_null(int(n_rows))[lo - 1]), union)
