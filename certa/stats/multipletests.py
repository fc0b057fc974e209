"""Family-wise error control for several comparisons: Bonferroni and Holm."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from certa.stats._validation import as_float_array

__all__ = ["bonferroni", "holm"]

_SECTIONS = """Parameters
    ----------
    pvalues : array-like of shape (m,)
        Raw p-values in ``[0, 1]``.

    Returns
    -------
    ndarray of shape (m,)
        Adjusted p-values, in the input order."""


def _with_sections(adjust: Callable) -> Callable:
    """Put the Parameters and Returns sections both adjustments share at ``{sections}`` in the docstring."""
    if adjust.__doc__:  # None under python -OO
        adjust.__doc__ = adjust.__doc__.replace("{sections}", _SECTIONS)
    return adjust


def _check_pvalues(pvalues: Any) -> np.ndarray:
    p = as_float_array(pvalues, "pvalues must be a 1-D array-like of numbers")
    if p.ndim != 1:
        raise ValueError(f"pvalues must be 1-D, got shape {p.shape}")
    if np.isnan(p).any():
        raise ValueError("pvalues contains NaN")
    bad = (p < 0) | (p > 1)
    if bad.any():
        raise ValueError(f"pvalues must lie in [0, 1], got e.g. {p[bad][0]!r}")
    return p


@_with_sections
def bonferroni(pvalues: Any) -> np.ndarray:
    """Bonferroni-adjusted p-values ``min(1, m * p_i)`` for ``m`` tests.

    Reject hypothesis ``i`` at family-wise level ``alpha`` when the adjusted value is
    ``<= alpha``. Valid under any dependence between the tests.

    {sections}

    Examples
    --------
    >>> bonferroni([0.01, 0.04, 0.3]).tolist()
    [0.03, 0.12, 0.8999999999999999]
    """
    p = _check_pvalues(pvalues)
    return np.minimum(1.0, p * p.size)


@_with_sections
def holm(pvalues: Any) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values.

    With the p-values sorted ascending, ``p_(1) <= ... <= p_(m)``, the adjusted value
    of the ``k``-th smallest is ``max_{j <= k} min(1, (m - j + 1) p_(j))`` (the running
    maximum keeps the adjusted values monotone). Uniformly more powerful than
    Bonferroni, same family-wise guarantee, valid under any dependence.

    {sections}

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    p = _check_pvalues(pvalues)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    factors = m - np.arange(m)  # m, m-1, ..., 1
    stepped = np.maximum.accumulate(np.minimum(1.0, factors * p[order]))
    out = np.empty(m)
    out[order] = stepped
    return out
