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
    - **fresh split per evaluation** (bandit strategies: every evaluation of
      every candidate on its own split, so nothing is paired): Welch's
      unpaired t-test on the two candidates' scores, said so in ``design``;
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
    if len(kinds) > 1:
        raise ValueError(f"the selection mixes evaluation kinds {sorted(kinds)}; compare within one design")
    kind = kinds.pop() if kinds else "full"
    deciding = _deciding_round(selection, ok) if kind == "subset" else None
    rows = []
    for c in selection.candidates:
        if c.index == best:
            continue
        row: dict[str, Any] = {"candidate": c.index, "name": c.name}
        a = ok[ok["candidate"] == best]
        b = ok[ok["candidate"] == c.index]
        if kind == "fold":
            merged = a.merge(b, on="index", suffixes=("_best", "_other"))
            merged = merged.sort_values("index")
            J = len({i[0] for i in ev["index"]})
            K = len({i[1] for i in ev["index"]})
            n = len(merged)
            row.update(design=f"paired by fold ({J}x{K}-fold)", n_pairs=n)
            if n >= 2:
                n_train = merged["n_train_best"].mean() if "n_train_best" in merged else None
                n_test = merged["n_test_best"].mean() if "n_test_best" in merged else None
                if n == J * K:
                    res = corrected_repeated_kfold_ttest(merged["score_best"].to_numpy(), merged["score_other"].to_numpy(),
                                                         J, K, n_train, n_test, confidence=confidence)
                    row.update(test="corrected repeated k-fold t-test (Bouckaert & Frank 2004)",
                               statistic=res.statistic, pvalue=res.pvalue, ci_low=res.ci[0], ci_high=res.ci[1])
                else:
                    row.update(test=_missing_folds(ev, best, c.index, n, J * K))
            row.update(mean_best=a["score"].mean(), mean_other=b["score"].mean())
            row["mean_difference"] = (merged["score_best"] - merged["score_other"]).mean() if n else math.nan
        elif kind == "split":
            row.update(design="unpaired: independent split and seed per evaluation", n_pairs=0,
                       mean_best=a["score"].mean(), mean_other=b["score"].mean())
            row["mean_difference"] = row["mean_best"] - row["mean_other"]
            if len(a) >= 2 and len(b) >= 2:
                row.update(_welch(a["score"].to_numpy(), b["score"].to_numpy(), confidence))
        elif kind == "subset" and deciding is not None:
            r, ex_best = deciding
            ex_other = _per_example(selection, ok, c.index, r)
            if ex_other is None:
                continue  # not evaluated in the deciding round: dropped earlier (see the strategy's rounds)
            row.update(design=f"paired by example (round {r}, {len(ex_best)} evaluation examples)",
                       n_pairs=len(ex_best), mean_best=float(ex_best.mean()), mean_other=float(ex_other.mean()))
            row.update(_paired_examples(ex_best, ex_other, confidence))
        elif kind == "subset":
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
        else:
            row.update(design="one evaluation per candidate", n_pairs=0, mean_best=a["score"].mean(),
                       mean_other=b["score"].mean(), test="none: one evaluation per candidate")
            row["mean_difference"] = row["mean_best"] - row["mean_other"]
        rows.append(row)
    table = pd.DataFrame(rows)
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


def _missing_folds(ev: pd.DataFrame, best: int, other: int, n: int, total: int) -> str:
    """Why a J-K-fold comparison has fewer than J*K pairs: failed evaluations, or a run not finished."""
    two = ev[ev["candidate"].isin([best, other])]
    failed = int((two["status"] != "ok").sum())
    if failed:
        return f"none: {total - n} of {total} folds missing ({failed} failed evaluation(s))"
    return f"none: {total - n} of {total} folds not scored yet (run not finished)"
