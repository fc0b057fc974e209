"""The race survival rule of wrapped progressive sampling: drop only what the evidence can drop.

After a round every surviving setting has been scored on the same evaluation examples, so
each setting is compared with the round's leader *paired on those examples* (racing, as in
Maron & Moore's Hoeffding races and Birattari et al.'s F-race): a setting is dropped only
if a one-sided test at level ``1 - confidence``, Bonferroni-corrected over the settings
compared, shows it worse than the leader. The test is the exact McNemar test (binomial
test on the examples where exactly one of the two is right) when every per-example score
is 0 or 1 (accuracy), and a one-sided paired t-test on the per-example differences
otherwise. PSearch's floor adds back whole score bins when too few survive; a cap keeps at
most a given number (or fraction) of the round's settings, cutting by score. The default cap is
a cost budget (:func:`budget_limit`): a round keeps everything the test cannot drop as long as
the schedule's projected cost stays within a multiple of the halving race's cost. The final
decision against the baseline is confirmed on fresh paired evidence (:func:`confirm_vs_baseline`).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..stats._validation import t_interval
from ._floor import add_back_bins

__all__ = ["budget_limit", "check_cap", "compare_with_baseline", "confirm_vs_baseline", "confirm_vs_baseline_folds",
           "halving_counts",
           "paired_pvalues", "race_survivors"]


def _paired_interval(d: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Mean of the paired differences ``d`` and its two-sided paired t interval (NaN for one difference)."""
    k = d.size
    mean = float(d.mean())
    if k < 2:
        return mean, math.nan, math.nan
    se = float(d.std(ddof=1) / math.sqrt(k))
    lo, hi = t_interval(mean, se, k - 1, confidence, "two-sided") if se > 0 else (mean, mean)
    return mean, lo, hi


def _discordant(a: np.ndarray, b: np.ndarray) -> dict[str, int]:
    """Examples only ``a`` gets right and only ``b`` gets right (0/1 scores)."""
    return {"n_challenger_only": int(((a == 1) & (b == 0)).sum()), "n_baseline_only": int(((a == 0) & (b == 1)).sum())}


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
    from scipy import stats as sps  # here, not at the top: reading a store does not import scipy.stats

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


def check_cap(cap: Any) -> float | int | str | None:
    """Validate a cap on survivors: ``"budget"``, a fraction in (0, 1], a count >= 1, or None."""
    if cap is None:
        return None
    if isinstance(cap, str):
        if cap != "budget":
            raise ValueError(f"cap must be 'budget', a fraction in (0, 1], a count >= 1 or None, got {cap!r}")
        return cap
    if isinstance(cap, bool) or not isinstance(cap, (int, float, np.integer, np.floating)):
        raise TypeError(f"cap must be a fraction in (0, 1], a count >= 1 or None, got {cap!r}")
    if isinstance(cap, (int, np.integer)):
        if cap < 1:
            raise ValueError(f"cap as a count must be at least 1, got {cap}")
        return int(cap)
    if not 0 < cap <= 1:
        raise ValueError(f"cap as a fraction must be in (0, 1], got {cap}")
    return float(cap)


def halving_counts(n: int, n_rounds: int) -> list[int]:
    """Settings per round of the halving race: ``n``, then ``max(1, ceil(half))`` of the round before.

    >>> halving_counts(250, 8)
    [250, 125, 63, 32, 16, 8, 4, 2]
    """
    out = [int(n)]
    for _ in range(n_rounds - 1):
        out.append(max(1, math.ceil(out[-1] / 2)))
    return out


def _floor_path(k: int, reference: list[int], floor: float | None, protected: int) -> list[int]:
    """Counts of later rounds when ``k`` settings enter the first of them: the reference counts, or what
    the floor demands of the round before (``ceil(floor * (h + protected)) - protected``), whichever is more."""
    path = [k]
    for ref in reference[1:]:
        need = 0 if floor is None else math.ceil(floor * (path[-1] + protected) - 1e-9) - protected
        path.append(min(path[-1], max(ref, need)))
    return path


def budget_limit(sizes: list[int], r: int, spent: float, budget: float, reference: list[int],
                 floor: float | None = None, protected: int = 0) -> int:
    """How many (unprotected) settings may go on from round ``r`` to round ``r + 1`` under a cost budget.

    Cost model: a setting evaluated in round ``j`` costs ``sizes[j]`` (training examples; the
    evaluation set is a fixed fraction of it). ``spent`` is what rounds ``0..r`` cost;
    ``reference`` the halving race's counts (:func:`halving_counts`). The answer is the
    largest ``k`` such that ``k`` settings in round ``r + 1`` followed by the *projected*
    later counts (the reference counts, or more where the floor demands it of ``k``) cost at
    most ``budget - spent``; never fewer than ``reference[r + 1]`` (or the floor's share),
    which the budget always covers when it is at least the reference cost (by induction: a
    round that chose ``k`` left enough for the projected counts after it).

    Examples
    --------
    >>> sizes = [160, 320, 640, 800, 4800, 10400, 13600, 16000]
    >>> ref = halving_counts(250, 8)
    >>> budget = 2 * sum(c * s for c, s in zip(ref, sizes))
    >>> budget_limit(sizes, 0, 250 * 160, budget, ref)   # a cap: whatever round 0 keeps (at most 250) goes on
    1351
    >>> budget_limit(sizes, 0, 250 * 160, sum(c * s for c, s in zip(ref, sizes)), ref)  # budget = halving
    125
    """
    if r + 1 >= len(sizes):
        raise ValueError(f"round {r} is the last; nothing goes on")
    later = sizes[r + 1:]
    ref = list(reference[r + 1:])
    left = budget - spent

    def cost(k: int) -> float:
        return float(sum(h * s for h, s in zip(_floor_path(k, ref, floor, protected), later)))

    lo = _floor_path(ref[0], [ref[0]], None, protected)[0]
    if cost(lo) > left + 1e-9:
        return lo  # the budget is below the reference cost: the halving counts (never fewer)
    hi = lo
    while cost(hi * 2) <= left + 1e-9 and hi < 10 ** 9:
        hi *= 2
    top = hi * 2
    while top - hi > 1:  # largest k with cost(k) <= left (cost is non-decreasing in k)
        mid = (hi + top) // 2
        if cost(mid) <= left + 1e-9:
            hi = mid
        else:
            top = mid
    return hi


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
        added = add_back_bins(keep, scores, finite, floor, bin_width)
    cut = np.zeros(n, dtype=bool)
    if cap is not None:
        if isinstance(cap, str):
            raise ValueError("race_survivors takes the budget cap as a count (see budget_limit)")
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
    mean, lo, hi = _paired_interval(X[challenger] - X[baseline], confidence)
    out.update(challenger=challenger, difference=mean, ci_low=lo, ci_high=hi, pvalue=float(p[challenger]),
               pvalue_adjusted=float(adj[challenger]), n_compared=m)
    return out


def confirm_vs_baseline_folds(challenger: list[np.ndarray], baseline: list[np.ndarray], *, n_train: float,
                              confidence: float = 0.95) -> dict[str, Any]:
    """Is ``challenger`` better than ``baseline`` as a *setting*, judged by one K-fold cross-validation?

    The per-fold mean scores go into the corrected repeated k-fold cv t test of Bouckaert &
    Frank (2004) (:func:`certa.stats.ttests.corrected_repeated_kfold_ttest` with one repetition:
    ``t = mean(d) / sqrt((1/K + n_test/n_train) s^2)`` on ``K - 1`` df, one-sided), at level
    ``1 - confidence``. A test on the pooled per-example outcomes (exact McNemar) would judge the
    fold *models* actually fitted, not the settings: with learners whose fitted model varies
    (different seeds, different training folds) it rejects far more often than its level.
    Measured on the Dutch lemmatisation data with two trees that differ only in their seed
    (equal by symmetry; ``benchmarks/progressive.py confirmation-calibration``): pooled McNemar
    rejected 10.2 % (4,000 examples) and 15.5 % (16,000) of 400 runs at level 5 %, this test
    1.8 % at both sizes.

    Parameters
    ----------
    challenger, baseline : list of arrays
        Per-example scores of each fold (fold ``k`` of both on the same examples).
    n_train : float
        Size of the data that was cross-validated (the folds' training sets have
        ``n_train - n_test`` examples, ``n_test`` the mean fold size).
    confidence : float

    Returns
    -------
    dict
        ``beat_baseline``, ``difference`` (mean over folds of challenger - baseline), ``ci_low``,
        ``ci_high`` (two-sided corrected interval at ``confidence``), ``pvalue`` (one-sided),
        ``test``, ``n_folds``, ``n_examples``, and for 0/1 scores the pooled discordant counts
        ``n_challenger_only`` / ``n_baseline_only`` (for information).

    Examples
    --------
    >>> ch = [np.r_[np.ones(80), np.zeros(20)], np.r_[np.ones(82), np.zeros(18)], np.r_[np.ones(79), np.zeros(21)]]
    >>> base = [np.r_[np.ones(70), np.zeros(30)], np.r_[np.ones(71), np.zeros(29)], np.r_[np.ones(72), np.zeros(28)]]
    >>> d = confirm_vs_baseline_folds(ch, base, n_train=300)
    >>> d["beat_baseline"], round(d["difference"], 4)
    (True, 0.0933)
    """
    from ..stats.ttests import corrected_repeated_kfold_ttest

    if len(challenger) != len(baseline) or len(challenger) < 2:
        raise ValueError(f"challenger and baseline need the same K >= 2 folds, got {len(challenger)} and {len(baseline)}")
    a_folds = [np.asarray(f, dtype=float).ravel() for f in challenger]
    b_folds = [np.asarray(f, dtype=float).ravel() for f in baseline]
    if any(x.shape != y.shape or x.size == 0 for x, y in zip(a_folds, b_folds)):
        raise ValueError("each fold needs per-example scores of both settings on the same examples")
    a_all, b_all = np.concatenate(a_folds), np.concatenate(b_folds)
    if not (np.isfinite(a_all).all() and np.isfinite(b_all).all()):
        raise ValueError("per-example scores must be finite")
    K = len(a_folds)
    n_test = float(np.mean([f.size for f in a_folds]))
    if not n_train > n_test:
        raise ValueError(f"n_train ({n_train}) must exceed the mean fold size ({n_test})")
    a, b = [f.mean() for f in a_folds], [f.mean() for f in b_folds]
    kw = {"n_repeats": 1, "n_splits": K, "n_train": n_train - n_test, "n_test": n_test, "confidence": confidence}
    one = corrected_repeated_kfold_ttest(a, b, alternative="greater", **kw)
    two = corrected_repeated_kfold_ttest(a, b, alternative="two-sided", **kw)
    out = {"beat_baseline": bool(one.pvalue < 1 - confidence), "difference": float(np.mean(np.subtract(a, b))),
           "ci_low": float(two.ci[0]), "ci_high": float(two.ci[1]), "pvalue": float(one.pvalue), "test": one.test,
           "n_folds": K, "n_examples": int(a_all.size), "confidence": confidence}
    if _is_binary(np.r_[a_all, b_all]):
        out.update(_discordant(a_all, b_all))
    return out


def confirm_vs_baseline(challenger: np.ndarray, baseline: np.ndarray, *, confidence: float = 0.95) -> dict[str, Any]:
    """Is ``challenger`` better than ``baseline`` on paired per-example evidence it was not chosen on?

    One one-sided test (exact McNemar for 0/1 scores, else paired t; :func:`paired_pvalues`)
    of "the challenger scores higher", at level ``1 - confidence``; no multiplicity
    correction, because the challenger was chosen on other examples (the final round's) and
    only it is tested here.

    Returns
    -------
    dict
        ``beat_baseline``, ``difference`` (mean challenger - baseline), ``ci_low``, ``ci_high``
        (two-sided paired t interval at ``confidence``), ``pvalue`` (one-sided), ``n_examples``,
        ``n_challenger_only`` and ``n_baseline_only`` (discordant examples, 0/1 scores).

    Examples
    --------
    >>> d = confirm_vs_baseline(np.r_[np.ones(30), np.zeros(10)], np.r_[np.ones(20), np.zeros(20)])
    >>> d["beat_baseline"], round(d["pvalue"], 6)
    (True, 0.000977)
    """
    a = np.asarray(challenger, dtype=float).ravel()
    b = np.asarray(baseline, dtype=float).ravel()
    if a.shape != b.shape or a.size == 0:
        raise ValueError(f"challenger and baseline need per-example scores on the same examples, got {a.shape} "
                         f"and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("per-example scores must be finite")
    p = float(paired_pvalues(np.array([a, b]), 0)[1])  # "the reference row (challenger) scores higher"
    mean, lo, hi = _paired_interval(a - b, confidence)
    out = {"beat_baseline": bool(p < 1 - confidence), "difference": mean, "ci_low": lo, "ci_high": hi,
           "pvalue": p, "n_examples": int(a.size), "confidence": confidence}
    if _is_binary(np.r_[a, b]):
        out.update(_discordant(a, b))
    return out
