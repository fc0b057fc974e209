"""The race survival rule of wrapped progressive sampling: drop only what the evidence can drop.

After a round every surviving setting has been scored on the same evaluation examples, so
each setting is compared with the round's leader *paired on those examples* (racing, as in
Maron & Moore's Hoeffding races and Birattari et al.'s F-race): a setting is dropped only
if a one-sided test at level ``1 - confidence``, Bonferroni-corrected over the settings
compared, shows it worse than the leader. The test is the exact McNemar test (binomial
test on the examples where exactly one of the two is right) when every per-example score
is 0 or 1 (accuracy), and a one-sided paired t-test on the per-example differences
otherwise. PSearch's floor adds back whole score bins when too few survive; a cap keeps at
most a given number (or fraction) of the round's settings, cutting by score.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats as sps

from ..stats._validation import t_interval

__all__ = ["check_cap", "compare_with_baseline", "paired_pvalues", "race_survivors"]


def _is_binary(x: np.ndarray) -> bool:
    finite = x[np.isfinite(x)]
    return bool(np.all((finite == 0) | (finite == 1)))


def paired_pvalues(per_example: np.ndarray, reference: int) -> np.ndarray:
    """One-sided p-values of "row ``reference`` scores higher than row ``j``", paired on the columns.

    Parameters
    ----------
    per_example : array of shape (n_settings, n_examples)
        Per-example scores of each setting on the same examples (a row of NaN: failed).
    reference : int
        Row of the reference setting (the round's leader).

    Returns
    -------
    ndarray of shape (n_settings,)
        For 0/1 scores: the exact one-sided McNemar p-value ``P(B >= b)``, ``B ~ Bin(b + c, 1/2)``,
        with ``b`` the examples only the reference gets right and ``c`` those only row ``j``
        gets right (1 when ``b + c = 0``); otherwise the one-sided paired t-test p-value
        (``n - 1`` df; zero spread: 0 if the common difference is positive, else 1).
        NaN for failed rows; 1 for the reference itself.

    Examples
    --------
    >>> x = np.array([[1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]])
    >>> paired_pvalues(x, 0).round(4).tolist()
    [1.0, 0.0312, 1.0]
    """
    X = np.asarray(per_example, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"per_example must be 2-D (settings x examples), got shape {X.shape}")
    ref = X[reference]
    if not np.isfinite(ref).all():
        raise ValueError("the reference setting has no per-example scores")
    failed = ~np.isfinite(X).all(axis=1)
    p = np.full(X.shape[0], np.nan)
    ok = ~failed
    if _is_binary(X[ok]):
        r = ref.astype(bool)
        Y = X[ok].astype(bool)
        b = (r & ~Y).sum(axis=1)
        c = (~r & Y).sum(axis=1)
        p[ok] = sps.binom.sf(b - 1, b + c, 0.5)
    else:
        d = ref - X[ok]
        n = X.shape[1]
        mean = d.mean(axis=1)
        sd = d.std(axis=1, ddof=1) if n > 1 else np.zeros(len(d))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = mean / (sd / math.sqrt(n))
        pt = sps.t.sf(t, n - 1) if n > 1 else np.ones(len(d))
        zero = ~(sd > 1e-12 * np.maximum(1.0, np.abs(d).max(axis=1)))
        pt[zero] = np.where(mean[zero] > 0, 0.0, 1.0)
        p[ok] = pt
    p[reference] = 1.0
    return np.minimum(p, 1.0)


def check_cap(cap: Any) -> float | int | None:
    """Validate a cap on survivors: a fraction in (0, 1], a count >= 1, or None."""
    if cap is None:
        return None
    if isinstance(cap, bool) or not isinstance(cap, (int, float, np.integer, np.floating)):
        raise TypeError(f"cap must be a fraction in (0, 1], a count >= 1 or None, got {cap!r}")
    if isinstance(cap, (int, np.integer)):
        if cap < 1:
            raise ValueError(f"cap as a count must be at least 1, got {cap}")
        return int(cap)
    if not 0 < cap <= 1:
        raise ValueError(f"cap as a fraction must be in (0, 1], got {cap}")
    return float(cap)


def _floor_bins(scores: np.ndarray, bin_width: float | None) -> np.ndarray:
    from .progressive import _bins  # one definition of the score bins for every rule

    return _bins(scores, bin_width)


def race_survivors(per_example: np.ndarray, *, confidence: float = 0.95, floor: float | None = None,
                   cap: float | None = None, bin_width: float | None = None,
                   protect: np.ndarray | None = None, tiebreak: np.ndarray | None = None) -> dict[str, Any]:
    """Which settings of one round survive the race.

    Parameters
    ----------
    per_example : array of shape (n_settings, n_examples)
        Per-example scores on the round's evaluation examples (NaN row: the evaluation
        failed; it never survives).
    confidence : float
        A setting is dropped when the one-sided test of :func:`paired_pvalues` against the
        leader (the highest mean; ties: lowest row) rejects at level ``1 - confidence``
        after multiplying its p-value by the number of settings compared (Bonferroni).
    floor : float or None
        If fewer than ``ceil(floor * n)`` survive, the next-best score bins are added back,
        a whole bin at a time (PSearch's rule, see :func:`~certa.strategies.progressive.survivors`).
    cap : float, int or None
        At most ``ceil(cap * n)`` (fraction) or ``cap`` (count) settings survive, not
        counting protected ones; beyond it the lowest-scoring are cut (ties broken by
        ``tiebreak``, higher first, then by row; the leader is never cut).
    bin_width : float or None
        Score-bin width for the floor (``None``: one bin per distinct score).
    protect : bool array or None
        Settings that survive whatever the evidence (the baseline).
    tiebreak : array or None
        Secondary key for the cap, higher first (the strategy passes the settings' mean
        score over earlier rounds plus a seeded random number below 1e-9, far below any
        score step, so that ties left after that are broken at random, not by grid order).

    Returns
    -------
    dict
        ``survived``, ``added_by_floor``, ``cut_by_cap`` (bool arrays), ``pvalues`` (raw),
        ``pvalues_adjusted`` (Bonferroni), ``leader`` (row) and ``scores`` (row means).

    Examples
    --------
    >>> x = np.array([[1] * 40, [1] * 38 + [0] * 2, [0] * 40])
    >>> race_survivors(x, confidence=0.95)["survived"].tolist()
    [True, True, False]
    """
    X = np.asarray(per_example, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"per_example must be a non-empty 2-D array (settings x examples), got shape {X.shape}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    n = X.shape[0]
    protect = np.zeros(n, dtype=bool) if protect is None else np.asarray(protect, dtype=bool)
    tiebreak = np.zeros(n) if tiebreak is None else np.nan_to_num(np.asarray(tiebreak, dtype=float), nan=-np.inf)
    finite = np.isfinite(X).all(axis=1)
    scores = np.where(finite, np.nanmean(np.where(finite[:, None], X, 0.0), axis=1), np.nan)
    out = {"survived": np.zeros(n, dtype=bool), "added_by_floor": np.zeros(n, dtype=bool),
           "cut_by_cap": np.zeros(n, dtype=bool), "pvalues": np.full(n, np.nan),
           "pvalues_adjusted": np.full(n, np.nan), "leader": -1, "scores": scores}
    if not finite.any():
        return out
    rows = np.arange(n)
    filled = np.where(finite, scores, -np.inf)
    leader = int(np.lexsort((rows, -filled))[0])
    p = paired_pvalues(X, leader)
    m = int(finite.sum()) - 1
    adj = np.minimum(1.0, p * max(m, 1))
    keep = finite & ~(adj < 1 - confidence)
    keep[leader] = True
    added = np.zeros(n, dtype=bool)
    if floor is not None:
        need = math.ceil(floor * n - 1e-9)
        bins = np.full(n, np.iinfo(np.int64).max)
        bins[finite] = _floor_bins(scores[finite], bin_width)
        for b in np.unique(bins[finite]):
            if keep.sum() >= need:
                break
            new = (bins == b) & ~keep
            added |= new
            keep |= new
    cut = np.zeros(n, dtype=bool)
    if cap is not None:
        limit = max(1, math.ceil(cap * n - 1e-9)) if isinstance(cap, float) else int(cap)
        free = keep & ~protect
        if free.sum() > limit:
            order = np.lexsort((rows, -tiebreak, -filled, rows != leader))  # never cut the leader
            ranked = [r for r in order if free[r]]
            for r in ranked[limit:]:
                cut[r] = True
            keep &= ~cut
            added &= keep
    keep |= protect & finite
    out.update(survived=keep, added_by_floor=added, cut_by_cap=cut, pvalues=p, pvalues_adjusted=adj, leader=leader)
    return out


def compare_with_baseline(per_example: np.ndarray, baseline: int, *, confidence: float = 0.95) -> dict[str, Any]:
    """The final round's decision: the baseline unless another setting is shown better than it.

    Every other setting with per-example scores is tested against the baseline with the
    one-sided test of :func:`paired_pvalues` (is it better?), Bonferroni-corrected over
    the settings compared. The choice is the highest-scoring setting (ties: lowest row)
    among those that pass; if none does, the baseline.

    Returns
    -------
    dict
        ``choice`` (row), ``beat_baseline`` (bool), ``challenger`` (the choice, or the
        highest-scoring other setting when the baseline is kept; -1 if there is none),
        ``difference`` (mean per-example score of the challenger minus the baseline's),
        ``ci_low``, ``ci_high`` (two-sided paired t interval of that difference at
        ``confidence``), ``pvalue`` (one-sided, raw) and ``pvalue_adjusted``
        (Bonferroni) of the challenger, ``n_compared`` and ``n_examples``.

    Examples
    --------
    >>> x = np.array([[1] * 30 + [0] * 10, [1] * 40, [1] * 31 + [0] * 9])
    >>> d = compare_with_baseline(x, 0)
    >>> d["choice"], d["beat_baseline"], d["challenger"]
    (1, True, 1)
    """
    X = np.asarray(per_example, dtype=float)
    n = X.shape[0]
    if not 0 <= baseline < n:
        raise ValueError(f"baseline must be a row of per_example, got {baseline}")
    finite = np.isfinite(X).all(axis=1)
    rows = np.arange(n)
    scores = np.where(finite, np.where(finite[:, None], X, 0.0).mean(axis=1), -np.inf)
    out: dict[str, Any] = {"choice": baseline, "beat_baseline": False, "challenger": -1, "difference": math.nan,
                           "ci_low": math.nan, "ci_high": math.nan, "pvalue": math.nan, "pvalue_adjusted": math.nan,
                           "n_compared": 0, "n_examples": int(X.shape[1]), "confidence": confidence}
    if not finite[baseline]:
        raise ValueError("the baseline has no per-example scores in the final round")
    others = finite & (rows != baseline)
    if not others.any():
        return out
    # p-values of "j better than the baseline": the baseline is row j's reference with the sign flipped
    p = np.array([paired_pvalues(X[[j, baseline]], 0)[1] if others[j] else np.nan for j in range(n)])
    m = int(others.sum())
    adj = np.minimum(1.0, p * m)
    winners = others & (adj < 1 - confidence)
    order = np.lexsort((rows, -scores))
    if winners.any():
        challenger = int(next(r for r in order if winners[r]))
        out.update(choice=challenger, beat_baseline=True)
    else:
        challenger = int(next(r for r in order if others[r]))
    d = X[challenger] - X[baseline]
    k = d.size
    mean = float(d.mean())
    if k > 1:
        se = float(d.std(ddof=1) / math.sqrt(k))
        lo, hi = t_interval(mean, se, k - 1, confidence, "two-sided") if se > 0 else (mean, mean)
    else:
        lo, hi = math.nan, math.nan
    out.update(challenger=challenger, difference=mean, ci_low=lo, ci_high=hi, pvalue=float(p[challenger]),
               pvalue_adjusted=float(adj[challenger]), n_compared=m)
    return out
