"""Figures of a selection, for notebooks and ``certa report``.

Every function takes a :class:`~certa.Selection` (from a run, a fitted search's
``selection_``, or :func:`certa.load`) and an optional matplotlib ``Axes``, draws
on it and returns it. Nothing global is changed: no backend switch, no
``rcParams``; without ``ax`` a new figure is made with ``matplotlib.pyplot``.

Which figures fit which method:

- every method: :func:`scores` (candidates ranked, mean and interval; the best
  :data:`MAX_DRAWN` when there are more, with :func:`estimates`, the histogram of every
  candidate's estimate),
  :func:`comparison` (the chosen one against each other, Holm-adjusted
  p-values), :func:`failures`;
- J-K-fold: :func:`partition_choices`, :func:`stability`;
- bandits: :func:`evaluations_over_time`, :func:`belief` (FIESTA's figure 2),
  :func:`score_distributions` (its figure 3; its figure 4, correct choices against the budget,
  is a simulation: :func:`certa.simulate`);
- progressive sampling: :func:`learning_curves`, :func:`survivors`;
- quantification bounds: :func:`bounds`;
- nested CV: :func:`nested_folds`.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from ..engine.selection import Selection


def _selection(selection: Any) -> Selection:
    if hasattr(selection, "selection_"):
        selection = selection.selection_
    if not isinstance(selection, Selection):
        raise TypeError(f"selection must be a certa Selection or a fitted certa search, got {type(selection).__name__}")
    from ..engine.candidates import Candidate
    from .summary import display_selection

    shown = display_selection(selection)  # names from a store: truncated and escaped, as every output shows them
    if any("$" in c.name for c in shown.candidates):  # matplotlib would read $...$ as mathtext
        shown = copy.copy(shown)
        shown.candidates = [Candidate(c.index, c.name.replace("$", r"\$"), c.params) for c in shown.candidates]
    return shown


#: Candidate names longer than this are replaced by short labels (#1, #2, ... by rank) with a key.
LABEL_WIDTH = 24
#: Most candidates a figure draws one by one (the best by rank); the others are counted in the title.
MAX_DRAWN = 20


def _rank_order(sel: Selection) -> list[int]:
    from .summary import ranked_table

    return [int(i) for i in ranked_table(sel).index]


def top_candidates(sel: Selection, limit: int | None = MAX_DRAWN) -> list[int]:
    """The indices of the ``limit`` best candidates by rank (as in the ranked table), best first; all with ``None``."""
    order = _rank_order(sel)
    return order if limit is None else order[:limit]


def _of(shown: list[int], sel: Selection) -> str:
    """`` (the 20 best of 100,000)`` when a figure leaves candidates out, else nothing."""
    n = len(sel.candidates)
    return "" if len(shown) >= n else f" (the {len(shown):,} best of {n:,})"


def short_labels(sel: Selection, shown: list[int] | None = None) -> tuple[dict[int, str], list[str]]:
    """Labels for the figures: the names if all are short, else ``#rank`` (as in the ranked table) with a key.

    Returns ``({candidate index: label}, key lines)``; the key is empty when the names are the labels,
    and lists the candidates of ``shown`` only (default: the :data:`MAX_DRAWN` best).
    """
    names = {c.index: c.name for c in sel.candidates}
    if max((len(n) for n in names.values()), default=0) <= LABEL_WIDTH:
        return names, []
    order = _rank_order(sel)
    labels = {c: f"#{r}" for r, c in enumerate(order, 1)}
    shown = order[:MAX_DRAWN] if shown is None else shown
    return labels, [f"{labels[c]}  {names[c]}" for c in shown]


def _draw_key(ax: Any, key: list[str], below: float) -> None:
    """The key of short labels, under the axes (``below``: its top, in axes coordinates), in the layout."""
    if key:
        ax.text(0.0, below, "\n".join(key), transform=ax.transAxes, ha="left", va="top", fontsize="x-small",
                family="monospace")


def _legend_outside(ax: Any) -> None:
    """The legend to the right of the axes, where it hides no curve."""
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def _axes(ax: Any, size: tuple[float, float] = (7, 4)):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=size)[1]


def scores(selection: Any, ax: Any = None):
    """Candidates ranked best first (top): the mean score as a point, its 95 % interval as a bar.

    The interval is :func:`certa.reporting.summary.candidate_intervals`'s (corrected t where
    training sets overlap); candidates with a single evaluation show the point only.
    The chosen candidate is drawn in another colour.
    """
    from .summary import ranked_table

    sel = _selection(selection)
    table = ranked_table(sel).iloc[:MAX_DRAWN]
    labels, key = short_labels(sel, [int(i) for i in table.index])
    ax = _axes(ax, (7, max(2.5, 0.35 * len(table) + 1.5 + 0.15 * len(key))))
    y = np.arange(len(table))[::-1]
    mean = table["mean"].to_numpy(dtype=float)
    lo, hi = table["ci_low"].to_numpy(dtype=float), table["ci_high"].to_numpy(dtype=float)
    has = np.isfinite(lo)
    ax.errorbar(mean[has], y[has], xerr=np.vstack([mean[has] - lo[has], hi[has] - mean[has]]), fmt="none",
                ecolor="grey", capsize=3, label="95% interval")
    chosen = table.index.to_numpy() == sel.best_index
    ax.plot(mean[~chosen], y[~chosen], "o", color="tab:blue", label="mean score")
    ax.plot(mean[chosen], y[chosen], "D", color="tab:red", label="chosen" if sel.finished else "leader so far")
    ax.set_yticks(y)
    ax.set_yticklabels([labels[int(i)] for i in table.index])
    ax.set_xlabel("score (mean over successful evaluations)")
    ax.set_title("Scores per candidate, best first" + _of(list(table.index), sel), fontsize="medium")
    # the legend above the plot, outside it: it covers neither points nor labels
    ax.legend(fontsize="x-small", loc="lower left", bbox_to_anchor=(0.0, 1.08), ncol=3, frameon=False)
    _draw_key(ax, key, -0.18)
    return ax


def estimates(selection: Any, ax: Any = None, bins: int = 30):
    """Every candidate's estimate (what ranks them) as a histogram, the choice marked.

    What the ranked table and :func:`scores` leave out when there are more candidates than
    they list: how the estimates of all of them spread, and where the choice stands.
    """
    sel = _selection(selection)
    est = np.asarray(sel.result["estimates"], dtype=float)
    finite = est[np.isfinite(est)]
    ax = _axes(ax)
    if finite.size:
        ax.hist(finite, bins=bins if finite.min() < finite.max() else 1, color="tab:blue", alpha=0.8)
    if np.isfinite(est[sel.best_index]):
        ax.axvline(est[sel.best_index], color="tab:red", linestyle="--",
                   label="chosen" if sel.finished else "leader so far")
        ax.legend(fontsize="small")
    ax.set_xlabel("estimate")
    ax.set_ylabel("candidates")
    missing = est.size - finite.size
    ax.set_title(f"Estimates of all {est.size:,} candidates" + (f" ({missing:,} without one)" if missing else ""),
                 fontsize="medium")
    return ax


def comparison(selection: Any, ax: Any = None, confidence: float = 0.95):
    """The comparison table (chosen candidate against each other one) drawn as a table.

    Columns: candidate, mean difference (chosen - other) with its interval where a
    test gives one, the test, p and the Holm-adjusted p (:func:`certa.comparison_table`).
    """
    from ..analysis.comparison import comparison_table

    sel = _selection(selection)
    table = comparison_table(sel, confidence=confidence)
    n_rows = len(table)
    table = table.iloc[:MAX_DRAWN]   # the closest competitors (p-values adjusted over all comparisons)
    ax = _axes(ax, (9, max(1.5, 0.35 * len(table) + 1)))
    ax.set_axis_off()

    def f(x: float) -> str:
        return "-" if not np.isfinite(x) else f"{x:.4f}"

    cells = [[r.name, f(r.mean_difference),
              "-" if not np.isfinite(r.ci_low) else f"[{r.ci_low:.4f}, {r.ci_high:.4f}]",
              str(r.test)[:40], f(r.pvalue), f(r.pvalue_holm)] for r in table.itertuples()]
    if not cells:
        ax.text(0.5, 0.5, "one candidate: nothing to compare", ha="center", va="center")
        return ax
    tab = ax.table(cellText=cells, colLabels=["vs", "difference", f"{confidence:.0%} interval", "test", "p",
                                              "p (Holm)"], loc="center", cellLoc="left")
    tab.auto_set_font_size(False)
    tab.set_fontsize(8)
    tab.auto_set_column_width(list(range(6)))
    ax.set_title(f"{sel.best.name} against each other candidate"
                 + ("" if n_rows <= len(table) else f" (the {len(table)} closest of {n_rows:,})"), fontsize="medium")
    return ax


def failures(selection: Any, ax: Any = None):
    """Failed attempts per candidate, by status (failed, timeout, ...), from every recorded attempt."""
    sel = _selection(selection)
    attempts = getattr(sel, "attempts", None)
    frame = attempts if attempts is not None else sel.evaluations
    bad = frame[frame["status"] != "ok"] if len(frame) else frame
    statuses = sorted(set(bad["status"])) if len(bad) else []
    # counted once (candidate x status); drawn: the candidates with the most failed attempts
    counts = pd.crosstab(bad["candidate"], bad["status"]) if len(bad) else pd.DataFrame()
    if len(sel.candidates) <= MAX_DRAWN:
        drawn = [c.index for c in sel.candidates]
    else:
        drawn = list(counts.sum(axis=1).sort_values(ascending=False, kind="stable").index[:MAX_DRAWN]) \
            if len(counts) else []
    counts = counts.reindex(index=drawn, columns=statuses, fill_value=0)
    names = [sel.candidates[c].name for c in drawn]
    ax = _axes(ax, (7, max(2.5, 0.35 * len(names) + 1)))
    y = np.arange(len(names))[::-1]
    left = np.zeros(len(names))
    for status in statuses:
        col = counts[status].to_numpy(dtype=float) if len(names) else np.zeros(0)
        ax.barh(y, col, left=left, label=status)
        left += col
    ax.set_yticks(y)
    ax.set_yticklabels(names)
    ax.set_xlabel("failed attempts")
    more = "" if len(drawn) >= len(sel.candidates) else \
        f" (the {len(drawn):,} with the most, of {len(sel.candidates):,} candidates)"
    ax.set_title(("Failures per candidate" + more) if statuses else "Failures per candidate: none")
    if statuses:
        ax.legend(fontsize="small")
    ax.set_xlim(0, max(1, (left.max() if left.size else 0) + 0.5))
    return ax


def _jk_scores(sel: Selection) -> np.ndarray:
    scores_ = sel.result.get("scores")
    if scores_ is None or np.ndim(scores_) != 3:
        raise ValueError("this selection has no J-K-fold scores (not a J-K-fold run)")
    return np.asarray(scores_, dtype=float)


def _complete_partitions(scores_: np.ndarray, minimum: int = 1) -> np.ndarray:
    """Partitions every fold of which was scored for every candidate (a run cut short has fewer)."""
    done = ~np.isnan(scores_).any(axis=(0, 2))
    if done.sum() < minimum:
        raise ValueError(f"needs at least {minimum} partition(s) with every fold scored; this run has "
                         f"{int(done.sum())} (it was stopped early, or evaluations failed)")
    return done


def partition_choices(selection: Any, ax: Any = None):
    """J-K-fold: each candidate's mean score on each partition (lines), the choice of each partition circled.

    The circled point of partition j is the candidate plain K-fold CV on that
    partition would choose (COLING 2018's instability of K-fold choices).
    """
    from ..strategies.grid import choose_best

    sel = _selection(selection)
    s = _jk_scores(sel)
    done = _complete_partitions(s)
    part = s[:, done, :].mean(axis=2)  # (C, complete partitions)
    J = part.shape[1]
    ax = _axes(ax)
    x = np.flatnonzero(done) + 1
    labels, key = short_labels(sel)
    picks = [choose_best(np.where(np.isnan(part[:, j]), -np.inf, part[:, j]))[0] for j in range(J)]
    # named in the legend: the J-K-fold choice and every partition's choice (at most 10); the rest grey
    named = list(dict.fromkeys([sel.best_index] + [int(p) for p in picks]))[:10]
    others = False
    for c in sorted(set(named) | set(top_candidates(sel))):   # the others in grey: the best by rank only
        if c in named:
            ax.plot(x, part[c], marker=".", linewidth=1.5, label=labels[c])
        else:
            ax.plot(x, part[c], marker=".", linewidth=0.8, color="lightgrey",
                    label=None if others else "other candidates")
            others = True
    ax.plot(x, [part[picks[j], j] for j in range(J)], "o", markersize=12, markerfacecolor="none",
            markeredgecolor="black", label="choice of the partition")
    ax.set_xticks(x)
    ax.set_xlabel("partition j")
    ax.set_ylabel("mean score over the K folds")
    ax.set_title("Choice per partition" + _of(top_candidates(sel), sel), fontsize="medium")
    _legend_outside(ax)
    _draw_key(ax, [k for k in key if k.split("  ", 1)[0] in {labels[c] for c in named}], -0.16)
    return ax


def stability(selection: Any, ax: Any = None):
    """J-K-fold: how often J' < J partitions would choose differently from all J (COLING 2018)."""
    from ..analysis.stability import stability_report

    sel = _selection(selection)
    s = _jk_scores(sel)
    rep = stability_report(s[:, _complete_partitions(s, 2), :], sel.candidates, random_state=sel.seed)
    ax = _axes(ax)
    jp = sorted(rep.subsample_disagreement)
    ax.bar(jp, [rep.subsample_disagreement[j] for j in jp], color="tab:orange")
    ax.set_xlabel("partitions used (J')")
    ax.set_ylabel(f"share choosing differently from J={rep.n_partitions}")
    ax.set_ylim(0, 1)
    ax.set_title(f"Stability: agreement of single partitions {rep.agreement:.0%}")
    if jp:
        ax.set_xticks(jp)
    return ax


def evaluations_over_time(selection: Any, ax: Any = None, share: bool = False):
    """Bandits: evaluations of each candidate as the run goes on (the lines of FIESTA's figure 2).

    x is the evaluation number in the order the strategy was told, y how many
    evaluations each candidate had by then, or with ``share=True`` their share of
    all evaluations so far (as FIESTA draws it).
    """
    sel = _selection(selection)
    ev = sel.evaluations
    ax = _axes(ax)
    x = np.arange(1, len(ev) + 1)
    shown = top_candidates(sel)
    labels, key = short_labels(sel, shown)
    cand = ev["candidate"].to_numpy()
    for c in sorted(shown):
        counts = np.cumsum(cand == c)
        ax.step(x, counts / x if share else counts, where="post", label=labels[c])
    ax.set_xlabel("evaluations so far")
    ax.set_ylabel("share of the evaluations" if share else "evaluations of the candidate")
    ax.set_title("Evaluations per candidate over the run" + _of(shown, sel), fontsize="medium")
    _legend_outside(ax)
    _draw_key(ax, key, -0.16)
    return ax


def score_distributions(selection: Any, ax: Any = None):
    """Every successful score of each candidate, as a box plot with the scores as points (FIESTA's figure 3)."""
    sel = _selection(selection)
    ev = sel.evaluations
    ok = ev[ev["status"] == "ok"] if len(ev) else ev
    ax = _axes(ax)
    shown = sorted(top_candidates(sel))   # in candidate order, as with few candidates
    by = {int(c): g.to_numpy(dtype=float) for c, g in ok[ok["candidate"].isin(shown)].groupby("candidate")["score"]}
    data = [by.get(c, np.zeros(0)) for c in shown]
    positions = np.arange(1, len(data) + 1)
    ax.boxplot([d for d in data if d.size], positions=positions[[d.size > 0 for d in data]], widths=0.5,
               showfliers=False)
    for pos, d in zip(positions, data):
        ax.plot(np.full(d.size, pos, dtype=float), d, ".", color="tab:blue", alpha=0.6)
    labels, key = short_labels(sel, shown)
    ax.set_xticks(positions)
    ax.set_xticklabels([labels[c] for c in shown], rotation=30 if len(data) > 4 else 0, ha="right"
                       if len(data) > 4 else "center", fontsize="small")
    ax.set_ylabel("score")
    ax.set_title("Scores of every evaluation per candidate" + _of(shown, sel), fontsize="medium")
    _draw_key(ax, key, -0.22)
    return ax


def belief(selection: Any, ax: Any = None):
    """Bandits with a confidence target: posterior P(best) of each candidate as evaluations accumulate (FIESTA's figure 2).

    The posterior P(best) is a Bayesian belief, not the run's guarantee. With ``stopping="glr"``
    the curves are drawn thin, and the GLR rule's confidence in its recommendation (the
    frequentist guarantee, what decides the stop) in black.
    """
    sel = _selection(selection)
    from .loading import belief_history

    hist = belief_history(sel)
    ax = _axes(ax)
    start = int(np.sum(sel.result["evaluations"])) - len(hist) + 1
    x = np.arange(start, start + len(hist))
    reached = sel.result.get("confidence_history")
    shown = top_candidates(sel)
    labels, key = short_labels(sel, shown)
    for c in sorted(shown):
        ax.plot(x, hist[:, c], label=f"posterior P(best): {labels[c]}", linewidth=1 if reached is not None else 1.5)
    if reached is not None:
        ax.plot(x, reached, color="black", linewidth=2, label="guarantee: GLR confidence of the choice")
    conf = sel.strategy.get("confidence")
    if conf:
        ax.axhline(conf, color="grey", linestyle="--", linewidth=1, label=f"target confidence {conf}")
    ax.set_xlabel("evaluations")
    ax.set_ylabel("posterior P(best)" if reached is None else "posterior P(best) (thin); guarantee (black)")
    ax.set_ylim(0, 1.02)
    ax.set_title("Posterior P(best) per candidate" + _of(shown, sel)
                 + (" and the GLR guarantee" if reached is not None else ""), fontsize="medium")
    _legend_outside(ax)
    _draw_key(ax, key, -0.16)
    return ax


def learning_curves(selection: Any, ax: Any = None):
    """Progressive sampling: each setting's score against the training size of the rounds it reached."""
    sel = _selection(selection)
    ev = sel.evaluations
    ev = ev[ev["kind"] == "subset"] if len(ev) else ev
    if not len(ev):
        raise ValueError("this selection has no progressive-sampling evaluations")
    ax = _axes(ax)
    shown = top_candidates(sel)
    labels, key = short_labels(sel, shown)
    for c, sub in ev[ev["candidate"].isin(shown)].groupby("candidate"):
        sub = sub.sort_values("size")
        ax.plot(sub["size"].to_numpy(dtype=float), sub["score"].to_numpy(dtype=float), marker=".",
                label=labels[int(c)], linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("training size")
    ax.set_ylabel("score")
    ax.set_title("Score against training size per setting" + _of(shown, sel), fontsize="medium")
    if len(sel.candidates) <= 12:
        _legend_outside(ax)
        _draw_key(ax, key, -0.16)
    return ax


def survivors(selection: Any, ax: Any = None):
    """Progressive sampling: settings evaluated and surviving in each round."""
    sel = _selection(selection)
    rounds = sel.result.get("rounds")
    if not rounds:
        raise ValueError("this selection has no rounds (not a finished progressive-sampling run)")
    ax = _axes(ax)
    x = np.arange(len(rounds))
    ax.bar(x - 0.2, [r["n_evaluated"] for r in rounds], width=0.4, label="evaluated")
    ax.bar(x + 0.2, [r["n_survived"] for r in rounds], width=0.4, label="survived")
    ax.set_xticks(x)
    ax.set_xticklabels([str(r["size"]) for r in rounds])
    ax.set_xlabel("training size of the round")
    ax.set_ylabel("settings")
    ax.set_title("Survivors per round")
    ax.legend(fontsize="small")
    return ax


def bounds(selection: Any, ax: Any = None, test_scores: Any = None, param: str | None = None):
    """Quantification bounds: the bound (and the plug-in value) per candidate, and test scores if given.

    Parameters
    ----------
    test_scores : sequence of float, optional
        Each candidate's score on labelled test data, where labels exist.
    param : str, optional
        Numeric parameter for the x axis (e.g. the regularisation ``lambda`` or
        ``C``); by default the only parameter that varies, if numeric, on a log
        scale when all values are positive; else the candidates in order.
    """
    sel = _selection(selection)
    ev = sel.evaluations
    if "bound" not in ev:
        raise ValueError("this selection has no bounds (not a quantification-bound run)")
    C = len(sel.candidates)
    bound = np.full(C, np.nan)
    plugin = np.full(C, np.nan)
    for r in ev.itertuples():
        bound[r.candidate] = getattr(r, "bound", np.nan)
        plugin[r.candidate] = getattr(r, "plugin", np.nan)
    if param is None:
        varying = [k for k in sorted({k for c in sel.candidates for k in c.params})
                   if len({repr(c.params.get(k)) for c in sel.candidates}) > 1]
        param = varying[0] if len(varying) == 1 else None
    values = [c.params.get(param) for c in sel.candidates] if param else None
    numeric = values is not None and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    x = np.asarray(values, dtype=float) if numeric else np.arange(C, dtype=float)
    order = np.argsort(x, kind="stable")
    ax = _axes(ax)
    ax.plot(x[order], bound[order], "o-", label="bound")
    ax.plot(x[order], plugin[order], "s--", label="plug-in value")
    if "value" in ev:  # the unclipped bound the search ranks (Theorem 1's can exceed 1)
        value = np.full(C, np.nan)
        for r in ev.itertuples():
            value[r.candidate] = getattr(r, "value", np.nan)
        if not np.allclose(value, bound, equal_nan=True):
            ax.plot(x[order], value[order], "d:", label="bound before clipping at 1 (ranked)")
    if test_scores is not None:
        t = np.asarray(test_scores, dtype=float)
        if t.shape != (C,):
            raise ValueError(f"test_scores must have one score per candidate ({C}), got shape {t.shape}")
        ax.plot(x[order], t[order], "^-", label="test score")
    ax.axvline(x[sel.best_index], color="grey", linestyle=":", label="chosen")
    if numeric:
        if (x > 0).all():
            ax.set_xscale("log")
        ax.set_xlabel(param)
    elif C <= MAX_DRAWN:
        ax.set_xticks(x)
        ax.set_xticklabels([c.name for c in sel.candidates], rotation=30, ha="right", fontsize="small")
    else:   # too many names to write under the axis
        ax.set_xlabel("candidate (index)")
    ax.set_ylabel("value")
    ax.set_title("Quantification bound per candidate")
    ax.legend(fontsize="small")
    return ax


def nested_folds(selection: Any, ax: Any = None):
    """Nested CV: each outer fold's test score and the inner search's best score."""
    sel = _selection(selection)
    ev = sel.evaluations
    ok = ev[ev["status"] == "ok"]
    if "inner_best_score" not in ok:
        raise ValueError("this selection is not a nested cross-validation")
    ax = _axes(ax)
    x = np.arange(1, len(ok) + 1)
    ax.plot(x, ok["score"].to_numpy(dtype=float), "o", label="outer test score")
    ax.plot(x, ok["inner_best_score"].to_numpy(dtype=float), "x", label="inner best score")
    ax.set_xticks(x)
    ax.set_xlabel("outer fold")
    ax.set_ylabel("score")
    ax.set_title("Nested CV: outer score against the inner estimate")
    ax.legend(fontsize="small")
    return ax


#: Figures per method, in the order ``certa report`` shows them.
FIGURES = {
    "jkfold": [scores, comparison, partition_choices, stability, failures],
    "bandit": [scores, comparison, evaluations_over_time, belief, score_distributions, failures],
    "progressive": [scores, comparison, learning_curves, survivors, failures],
    "quantification": [scores, comparison, bounds, failures],
    "nested": [scores, nested_folds, failures],
    "other": [scores, comparison, failures],
}
