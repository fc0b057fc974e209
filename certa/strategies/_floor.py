"""PSearch's floor, shared by the survival rules of progressive sampling (mean / median / race).

When too few settings of a round survive, the settings of the next-best score bins are added
back, a whole bin at a time (ties are never split), until at least ``ceil(floor * n)`` survive.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["add_back_bins", "score_bins"]


def score_bins(scores: np.ndarray, bin_width: float | None) -> np.ndarray:
    """Score-bin index of each finite score: 0 is the top bin, larger is worse.

    Examples
    --------
    >>> score_bins(np.array([0.9, 0.8, 0.9, 0.5]), None).tolist()
    [0, 1, 0, 2]
    """
    top = np.nanmax(scores)
    if bin_width is None:  # a bin per distinct score (accuracy on a finite set is discrete)
        distinct = np.unique(scores[np.isfinite(scores)])[::-1]
        return np.searchsorted(-distinct, -scores)
    # bins of width bin_width hanging down from the top score; a little slack keeps
    # scores that differ from a bin edge by rounding error in the upper bin
    return np.floor((top - scores) / bin_width + 1e-9).astype(int)


def add_back_bins(keep: np.ndarray, scores: np.ndarray, finite: np.ndarray, floor: float,
                  bin_width: float | None) -> np.ndarray:
    """Add whole score bins to ``keep`` (in place) until ``ceil(floor * n)`` survive; returns the added mask.

    ``scores`` are the round's ``n`` scores, ``finite`` marks the evaluations that did not fail
    (a failed one is never added back).

    Examples
    --------
    >>> scores = np.array([0.9, 0.5, 0.4, 0.4, 0.2])
    >>> keep = np.array([True, False, False, False, False])
    >>> add_back_bins(keep, scores, np.isfinite(scores), 0.6, None).tolist(), keep.tolist()
    ([False, True, True, True, False], [True, True, True, True, False])
    """
    added = np.zeros(scores.size, dtype=bool)
    need = math.ceil(floor * scores.size - 1e-9)
    bins = np.full(scores.size, np.iinfo(np.int64).max)
    bins[finite] = score_bins(scores[finite], bin_width)
    for b in np.unique(bins[finite]):
        if keep.sum() >= need:
            break
        new = (bins == b) & ~keep
        added |= new
        keep |= new
    return added
