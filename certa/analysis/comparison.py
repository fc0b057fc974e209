"""A comparison table for any finished selection: the chosen candidate against each other one."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..engine.selection import Selection
from ..stats import (
    corrected_repeated_kfold_ttest,
    holm,
    mcnemar_table,
    paired_permutation_test,
    paired_ttest,
)

COLUMNS = ["candidate", "name", "design", "n_pairs", "mean_best", "mean_other", "mean_difference", "ci_low",
           "ci_high", "test", "statistic", "pvalue", "pvalue_holm"]


def _welch(best: np.ndarray, other: np.ndarray, confidence: float) -> dict[str, Any]:
    res = sps.ttest_ind(best, other, equal_var=False)
    ci = res.confidence_interval(confidence)
    return {"test": "Welch's unpaired t-test", "statistic": float(res.statistic), "pvalue": float(res.pvalue),
            "ci_low": float(ci.low), "ci_high": float(ci.high)}


def _in_round(ok: pd.DataFrame, r: int) -> pd.Series:
    return ok["index"].map(lambda i: tuple(i) == (r,))


def _per_example(selection: Selection, ok: pd.DataFrame, candidate: int, r: int) -> np.ndarray | None:
    keys = ok.loc[(ok["candidate"] == candidate) & _in_round(ok, r), "key"]
    if not len(keys):
        return None
    pay = selection.payloads.get(keys.iloc[0])
    if not isinstance(pay, dict) or "per_example" not in pay:
        return None
    return np.asarray(pay["per_example"], dtype=float)


def _deciding_round(selection: Selection, ok: pd.DataFrame) -> tuple[int, np.ndarray] | None:
    """The last round in which the choice was scored next to another setting, with its per-example scores."""
    best = selection.best_index
    if not len(ok):
        return None
    rounds = sorted({i[0] for i in ok.loc[ok["candidate"] == best, "index"]}, reverse=True)
    for r in rounds:
        if _in_round(ok, r).sum() >= 2:
            ex = _per_example(selection, ok, best, r)
            return None if ex is None else (r, ex)
    return None


#: What a per-example p-value covers: two fitted models on one set of examples. With a learner whose fitted
#: model varies (seed, training sample), such tests say "better" more often than their level when the
#: settings are equal (pooled McNemar: 10-16 % at level 5 %, benchmarks/progressive.py confirmation-calibration).
FITTED_MODELS_ONLY = (" (compares the two fitted models; the p-value does not cover the learner's seed or "
                      "training sample)")


def _paired_examples(best: np.ndarray, other: np.ndarray, confidence: float) -> dict[str, Any]:
    """Two-sided exact McNemar (0/1 scores) or paired t-test (otherwise), paired t interval of the mean difference."""
    d = best - other
    out: dict[str, Any] = {"mean_difference": float(d.mean())}
    if len(d) >= 2:
        ci = paired_ttest(best, other, confidence=confidence).ci
        out.update(ci_low=ci[0], ci_high=ci[1])
    if np.isin(best, (0.0, 1.0)).all() and np.isin(other, (0.0, 1.0)).all():
        b, c = int(((best == 1) & (other == 0)).sum()), int(((best == 0) & (other == 1)).sum())
        res = mcnemar_table([[0, b], [c, 0]], method="exact")
        out.update(test="exact McNemar test over the evaluation examples" + FITTED_MODELS_ONLY,
                   statistic=res.statistic, pvalue=res.pvalue)
    elif len(d) >= 2:
        res = paired_ttest(best, other, confidence=confidence)
        out.update(test="paired t-test over the evaluation examples" + FITTED_MODELS_ONLY,
                   statistic=res.statistic, pvalue=res.pvalue)
    return out


def comparison_table(selection: Any, *, confidence: float = 0.95) -> pd.DataFrame:
    """Compare the chosen candidate with every other candidate on the evaluations they share.

    The design decides the test:

    - **J-K-fold** (every candidate on the same folds): pairs are the folds;
      the Nadeau-Bengio / Bouckaert-Frank corrected repeated k-fold t-test
      (training sets of different folds overlap, so the plain paired t-test
      over folds is too optimistic);
    - **paired rows** (the default ``BanditSearchCV`` / ``bandit_select``
      rule, ``cv=`` rows, and the race of screen-then-race): pairs are the
      rows a candidate shares with the choice; Nadeau & Bengio's corrected
      resampled t-test where the training and test sizes are recorded
      (random splits of one data set overlap in training data, so the plain
      paired t-test over rows is too optimistic), the plain paired t-test
      otherwise, said so in ``test``. After a screen, only the finalists have
      full-size rows; the candidates screened out on training subsets get a
      row without a test;
    - **unpaired bandit strategies** (``paired=False``: every candidate on its
      own split and seed): Welch's unpaired t-test on the two candidates'
      scores;
    - **progressive sampling with per-example scores** (``ProgressiveSearchCV``
      with accuracy or a per-example error, or any evaluator returning
      ``payload["per_example"]``): the deciding round, i.e. the last round in
      which the choice was scored next to other settings; one row per other
      setting of that round, paired over its evaluation examples: exact
      McNemar test for 0/1 scores (accuracy), paired t-test otherwise, and the
      paired t interval of the mean difference. Settings dropped earlier have
      no row (their evidence is in the strategy's per-round report). These
      tests compare the two *fitted models* on those examples; the ``test``
      column says that their p-values do not cover the learner's seed or
      training sample (with a seed-dependent learner and equal settings a
      pooled McNemar test said "better" in 10-16 % of null runs at level 5 %);
    - **progressive sampling without them** (one score per round, at growing
      sizes): pairs are the rounds both candidates were evaluated in; an exact
      paired permutation test of the mean difference (few pairs, no normality);
    - **one evaluation per candidate** (selection by bounds): no test is possible.

    p-values are Holm-adjusted over the comparisons made. Rows come closest competitor first
    (smallest mean difference from the choice).

    Parameters
    ----------
    selection : Selection or a fitted certa search (with ``selection_``)
    confidence : float
        Level of the confidence interval of the mean difference (best - other).

    Returns
    -------
    pandas.DataFrame
        One row per other candidate, by increasing ``mean_difference``: ``candidate, name, design, n_pairs,
        mean_best, mean_other, mean_difference, ci_low, ci_high, test,
        statistic, pvalue, pvalue_holm``.
    """
    if hasattr(selection, "selection_"):
        selection = selection.selection_
    if not isinstance(selection, Selection):
        raise TypeError(f"selection must be a certa Selection or a fitted certa search, got {type(selection).__name__}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    ev = selection.evaluations
    ok = ev[ev["status"] == "ok"]
    best = selection.best_index
    kinds = set(ok["kind"])
    screened_out: np.ndarray | None = None
    if kinds == {"split", "subset"}:
        # screen, then race: the race's full-size rows decide; the candidates screened out on training subsets
        # have no full-size evaluations to compare (their evidence is in the screen's rungs)
        full_size = ok["candidate"][ok["kind"] == "split"].to_numpy(dtype=np.intp)
        raced = np.zeros(len(selection.candidates), dtype=bool)
        raced[full_size] = True
        screened_out = np.flatnonzero(~raced)
        ev = ev[ev["kind"] != "subset"]
        ok = ok[ok["kind"] == "split"]
        kinds = {"split"}
    if len(kinds) > 1:
        raise ValueError(f"the selection mixes evaluation kinds {sorted(kinds)}; compare within one design")
    kind = kinds.pop() if kinds else "full"
    # every candidate's scores at once (one pass over the evaluations, whatever the number of candidates)
    stats = _Scores(selection, ev, ok)
    others = np.array([c.index for c in selection.candidates if c.index != best], dtype=np.intp)
    if screened_out is not None:
        others = np.setdiff1d(others, screened_out)
    if kind == "fold":
        table = _fold_rows(selection, stats, others, ev, ok, confidence)
    elif kind == "split":
        table = _row_pairs(selection, stats, others, ok, confidence)
        if table is None:
            table = _split_rows(stats, best, others, confidence)
    elif kind == "subset":
        table = pd.DataFrame(_subset_rows(selection, stats, ev, ok, confidence))
    else:
        table = pd.DataFrame({"candidate": others, "design": "one evaluation per candidate", "n_pairs": 0,
                              "mean_best": stats.mean[best], "mean_other": stats.mean[others],
                              "test": "none: one evaluation per candidate",
                              "mean_difference": stats.mean[best] - stats.mean[others]})
    if screened_out is not None and len(screened_out):
        table = pd.concat([table, pd.DataFrame({
            "candidate": screened_out, "design": "screened out on training subsets (no full-size row)",
            "n_pairs": 0, "test": "none: screened out before the race (see the screen's rungs)"})],
            ignore_index=True)
    if len(table):
        names = np.asarray([c.name for c in selection.candidates], dtype=object)
        table.insert(1, "name", names[table["candidate"].to_numpy(dtype=np.intp)])
    for col in COLUMNS:
        if col not in table:
            table[col] = np.nan if col not in ("test",) else "none: too few evaluations"
    table["test"] = table["test"].fillna("none: too few evaluations")
    p = table["pvalue"].to_numpy(dtype=float)
    adj = np.full_like(p, np.nan)
    tested = ~np.isnan(p)
    if tested.any():
        adj[tested] = holm(p[tested])
    table["pvalue_holm"] = adj
    # closest competitor first: the smallest difference from the choice (no difference: last)
    table = table.sort_values("mean_difference", kind="stable", na_position="last")
    return table[COLUMNS].reset_index(drop=True)


class _Scores:
    """Each candidate's successful scores, found by position (sorted by candidate once), their count and mean."""

    def __init__(self, selection: Selection, ev: pd.DataFrame, ok: pd.DataFrame) -> None:
        n = len(selection.candidates)
        cand = ok["candidate"].to_numpy(dtype=np.intp)
        self.score = pd.to_numeric(ok["score"], errors="coerce").to_numpy(dtype=float)
        self.order = np.argsort(cand, kind="stable")
        self.start = np.searchsorted(cand[self.order], np.arange(n + 1))
        self.count = np.diff(self.start)
        with np.errstate(invalid="ignore", divide="ignore"):
            sums = np.bincount(cand, weights=self.score, minlength=n)
            self.mean = np.where(self.count > 0, sums / np.maximum(self.count, 1), np.nan)
            dev = self.score - self.mean[cand]
            self.var = np.where(self.count > 1, np.bincount(cand, weights=dev * dev, minlength=n)
                                / np.maximum(self.count - 1, 1), np.nan)
        self.failed = np.bincount(ev.loc[ev["status"] != "ok", "candidate"].to_numpy(dtype=np.intp), minlength=n)

    def rows(self, c: int) -> np.ndarray:
        """Positions in ``ok`` of candidate ``c``'s successful evaluations, in recorded order."""
        return self.order[self.start[c]:self.start[c + 1]]


def _fold_rows(selection: Selection, stats: _Scores, others: np.ndarray, ev: pd.DataFrame, ok: pd.DataFrame,
               confidence: float) -> pd.DataFrame:
    """J-K-fold: the corrected repeated k-fold t-test of the choice against every other candidate at once."""
    best = selection.best_index
    J = len({i[0] for i in ev["index"]})
    K = len({i[1] for i in ev["index"]})
    j = np.fromiter((i[0] for i in ok["index"]), dtype=np.intp, count=len(ok))
    k = np.fromiter((i[1] for i in ok["index"]), dtype=np.intp, count=len(ok))
    width = int(k.max()) + 1 if len(k) else 1
    fold = j * width + k
    n_folds = int(fold.max()) + 1 if len(fold) else 0
    scores = np.full((len(selection.candidates), n_folds), np.nan)
    scores[ok["candidate"].to_numpy(dtype=np.intp), fold] = stats.score
    x = scores[best]
    y = scores[others]
    common = np.isfinite(y) & np.isfinite(x)[None, :]
    n = common.sum(axis=1)
    d = np.where(common, x[None, :] - np.where(common, y, 0.0), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_diff = np.where(n > 0, d.sum(axis=1) / np.maximum(n, 1), np.nan)
    table = pd.DataFrame({"candidate": others, "design": f"paired by fold ({J}x{K}-fold)", "n_pairs": n,
                          "mean_best": stats.mean[best], "mean_other": stats.mean[others],
                          "mean_difference": mean_diff, "test": None, "statistic": np.nan, "pvalue": np.nan,
                          "ci_low": np.nan, "ci_high": np.nan})
    total = J * K
    missing = (n >= 2) & (n != total)
    table.loc[missing, "test"] = [_missing_folds_text(int(stats.failed[best] + stats.failed[c]), int(m), total)
                                  for c, m in zip(others[missing], n[missing])]
    full = (n >= 2) & (n == total)
    if not full.any():
        return table
    best_rows = ok.iloc[stats.rows(best)]
    n_train = best_rows["n_train"].mean() if "n_train" in ok else None
    n_test = best_rows["n_test"].mean() if "n_test" in ok else None
    sizes_ok = (n_train is None and n_test is None) or (
        n_train is not None and n_test is not None and np.isfinite([n_train, n_test]).all()
        and n_train > 0 and n_test > 0)
    cols = np.isfinite(x)   # the folds the choice was scored on (every fold of a full row)
    xs, ys = x[cols][None, :], y[full][:, cols]
    if K < 2 or not sizes_ok or not np.isfinite(ys).all():
        # what the test itself says of these inputs (it raises, naming them)
        for r in np.flatnonzero(full):
            res = corrected_repeated_kfold_ttest(x[common[r]], y[r][common[r]], J, K, n_train, n_test,
                                                 confidence=confidence)
            table.loc[r, ["statistic", "pvalue", "ci_low", "ci_high"]] = [res.statistic, res.pvalue, *res.ci]
    else:
        ratio = 1.0 / (K - 1) if n_train is None else float(n_test) / float(n_train)
        d = xs - ys   # every fold of a full row: the masked test with every cell in (factor 1/total + ratio)
        res = _masked_t_rows(d, np.ones(d.shape, dtype=bool), np.maximum(np.abs(xs).max(), np.abs(ys).max(axis=1)),
                             ratio, confidence)
        for col, values in res.items():
            table.loc[full, col] = values
    table.loc[full, "test"] = "corrected repeated k-fold t-test (Bouckaert & Frank 2004)"
    return table


def _row_pairs(selection: Selection, stats: _Scores, others: np.ndarray, ok: pd.DataFrame,
               confidence: float) -> pd.DataFrame | None:
    """Paired rows (a row's split and seed shared by its candidates): per other candidate, the rows it shares
    with the choice; Nadeau & Bengio's corrected resampled t-test where the training and test sizes are known
    (rows are random splits of one data set, so their training sets overlap), the paired t-test otherwise.
    ``None`` where the choice shares no row with any other candidate (an unpaired design)."""
    best = selection.best_index
    cand = ok["candidate"].to_numpy(dtype=np.intp)
    codes, uniques = pd.factorize(ok["seed"])
    n_rows = len(uniques)
    cells = cand * max(n_rows, 1) + codes
    if (codes < 0).any() or np.unique(cells).size != cells.size:
        return None   # a candidate evaluated twice on one seed: not a row design
    is_best = cand == best
    if not np.isin(codes[~is_best], codes[is_best]).any():
        return None
    scores = np.full((len(selection.candidates), n_rows), np.nan)
    scores[cand, codes] = stats.score
    x, y = scores[best], scores[others]
    common = np.isfinite(y) & np.isfinite(x)[None, :]
    n = common.sum(axis=1)
    d = np.where(common, x[None, :] - np.where(common, y, 0.0), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_diff = np.where(n > 0, d.sum(axis=1) / np.maximum(n, 1), np.nan)
    table = pd.DataFrame({"candidate": others, "design": "paired by row (a shared split and seed)", "n_pairs": n,
                          "mean_best": stats.mean[best], "mean_other": stats.mean[others],
                          "mean_difference": mean_diff, "test": None, "statistic": np.nan, "pvalue": np.nan,
                          "ci_low": np.nan, "ci_high": np.nan})
    tested = n >= 2
    if not tested.any():
        return table
    ratio, test = 0.0, "paired t-test over rows (training sizes unknown: overlapping training sets not corrected for)"
    best_rows = ok[is_best]
    if "n_train" in ok and "n_test" in ok:
        sizes = (pd.to_numeric(best_rows["n_train"], errors="coerce").mean(),
                 pd.to_numeric(best_rows["n_test"], errors="coerce").mean())
        if np.isfinite(sizes).all() and min(sizes) > 0:
            ratio, test = float(sizes[1] / sizes[0]), "corrected resampled t-test (Nadeau & Bengio 2003)"
    res = _masked_t_rows(d[tested], common[tested], np.maximum(np.nanmax(np.abs(x)), np.nanmax(np.abs(y[tested]),
                         axis=1)), ratio, confidence)
    for col, values in res.items():
        table.loc[tested, col] = values
    table.loc[tested, "test"] = test
    return table


def _masked_t_rows(d: np.ndarray, mask: np.ndarray, scale: np.ndarray, ratio: float,
                   confidence: float) -> dict[str, np.ndarray]:
    """Two-sided t-tests of ``mean(d) = 0`` over the masked cells of each row of ``d`` (``n_i >= 2`` cells), with
    ``se = sqrt((1/n_i + ratio) var(d))`` and ``n_i - 1`` df: :func:`certa.stats.corrected_resampled_ttest`
    (``ratio = n_test/n_train``), :func:`certa.stats.corrected_repeated_kfold_ttest` (every cell of a J-K-fold
    row) or :func:`certa.stats.paired_ttest` (``ratio = 0``) row by row, zero spread
    included (all differences equal: t = 0 or +-inf, the interval the common difference)."""
    from ..stats._validation import ZERO_SPREAD_RTOL

    n = mask.sum(axis=1)
    mean = np.where(mask, d, 0.0).sum(axis=1) / n
    dev = np.where(mask, d - mean[:, None], 0.0)
    var = (dev * dev).sum(axis=1) / (n - 1)
    tiny = np.maximum(scale, np.finfo(float).tiny)
    spread = np.where(mask, d, -np.inf).max(axis=1) - np.where(mask, d, np.inf).min(axis=1)
    zero = spread <= ZERO_SPREAD_RTOL * tiny
    df = n - 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt((1.0 / n + ratio) * var)
        t = mean / se
    p = np.clip(2.0 * sps.t.sf(np.abs(t), df), 0.0, 1.0)
    q = sps.t.ppf(0.5 + confidence / 2.0, df)
    low, high = mean - q * se, mean + q * se
    none = zero & (np.abs(mean) <= ZERO_SPREAD_RTOL * tiny)
    t = np.where(zero, np.where(none, 0.0, np.copysign(np.inf, mean)), t)
    p = np.where(zero, np.where(none, 1.0, 0.0), p)
    low, high = np.where(zero, mean, low), np.where(zero, mean, high)
    return {"statistic": t, "pvalue": p, "ci_low": low, "ci_high": high}


def _split_rows(stats: _Scores, best: int, others: np.ndarray, confidence: float) -> pd.DataFrame:
    """Fresh splits: Welch's unpaired t-test of the choice against every other candidate at once."""
    mb, mo = stats.mean[best], stats.mean[others]
    table = pd.DataFrame({"candidate": others, "design": "unpaired: independent split and seed per evaluation",
                          "n_pairs": 0, "mean_best": mb, "mean_other": mo, "mean_difference": mb - mo,
                          "test": None, "statistic": np.nan, "pvalue": np.nan, "ci_low": np.nan, "ci_high": np.nan})
    nb, no = stats.count[best], stats.count[others]
    tested = (nb >= 2) & (no >= 2)
    if not tested.any():
        return table
    vb, vo = stats.var[best] / nb, stats.var[others] / no
    # (next to) no spread, where rounding decides the numbers: scipy's own answer, as the test itself gives it
    tiny = (1e-12 * np.maximum(np.abs(stats.mean), 1.0)) ** 2
    flat = tested & ((stats.var[best] <= tiny[best]) | (stats.var[others] <= tiny[others]))
    for r in np.flatnonzero(flat):
        res = _welch(stats.score[stats.rows(best)], stats.score[stats.rows(int(others[r]))], confidence)
        table.loc[r, list(res)] = list(res.values())
    rest = tested & ~flat
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(vb + vo[rest])
        df = (vb + vo[rest]) ** 2 / (vb ** 2 / (nb - 1) + vo[rest] ** 2 / (no[rest] - 1))
        diff = mb - mo[rest]
        t = diff / se
    q = sps.t.ppf(0.5 + confidence / 2.0, df)
    table.loc[rest, "statistic"] = t
    table.loc[rest, "pvalue"] = np.clip(2.0 * sps.t.sf(np.abs(t), df), 0.0, 1.0)
    table.loc[rest, "ci_low"] = diff - q * se
    table.loc[rest, "ci_high"] = diff + q * se
    table.loc[tested, "test"] = "Welch's unpaired t-test"
    return table


def _subset_rows(selection: Selection, stats: _Scores, ev: pd.DataFrame, ok: pd.DataFrame,
                 confidence: float) -> list[dict[str, Any]]:
    """Progressive sampling: per other candidate, paired by example in the deciding round, else by round."""
    best = selection.best_index
    deciding = _deciding_round(selection, ok)
    a = ok.iloc[stats.rows(best)]
    in_round: dict[int, str] = {}
    if deciding is not None:   # each candidate's evaluation in the deciding round, found once
        at = ok[_in_round(ok, deciding[0])]
        for c, k in zip(at["candidate"], at["key"]):
            in_round.setdefault(int(c), k)
    rows = []
    for c in selection.candidates:
        if c.index == best:
            continue
        row: dict[str, Any] = {"candidate": c.index}
        if deciding is not None:
            r, ex_best = deciding
            pay = selection.payloads.get(in_round[c.index]) if c.index in in_round else None
            ex_other = np.asarray(pay["per_example"], dtype=float) \
                if isinstance(pay, dict) and "per_example" in pay else None
            if ex_other is None:
                continue  # not evaluated in the deciding round: dropped earlier (see the strategy's rounds)
            row.update(design=f"paired by example (round {r}, {len(ex_best)} evaluation examples)",
                       n_pairs=len(ex_best), mean_best=float(ex_best.mean()), mean_other=float(ex_other.mean()))
            row.update(_paired_examples(ex_best, ex_other, confidence))
        else:
            b = ok.iloc[stats.rows(c.index)]
            merged = a.merge(b, on="index", suffixes=("_best", "_other"))
            n = len(merged)
            row.update(design="paired by round (progressive sampling)", n_pairs=n,
                       mean_best=merged["score_best"].mean() if n else math.nan,
                       mean_other=merged["score_other"].mean() if n else math.nan)
            d = (merged["score_best"] - merged["score_other"]).to_numpy()
            row["mean_difference"] = d.mean() if n else math.nan
            if n >= 2:
                res = paired_permutation_test(merged["score_best"].to_numpy(), merged["score_other"].to_numpy(),
                                              random_state=selection.seed)
                row.update(test="paired permutation test over shared rounds", statistic=res.statistic,
                           pvalue=res.pvalue)
        rows.append(row)
    return rows


def _missing_folds_text(failed: int, n: int, total: int) -> str:
    """Why a J-K-fold comparison has fewer than J*K pairs: failed evaluations, or a run not finished."""
    if failed:
        return f"none: {total - n} of {total} folds missing ({failed} failed evaluation(s))"
    return f"none: {total - n} of {total} folds not scored yet (run not finished)"
