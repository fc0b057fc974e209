"""What ``certa show`` prints and ``certa report`` shows: a run's summary as plain data."""
from __future__ import annotations

import copy
import datetime
import math
import re
from typing import Any

import numpy as np
import pandas as pd

from ..engine.selection import Selection

# C0 and C1 control characters, DEL, and the invisible or reordering marks (zero width, bidi
# overrides) a store could use to hide or rearrange what a terminal shows
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
#: Longest name, and longest error, any output shows (the rest is counted, not printed).
NAME_LIMIT, ERROR_LIMIT = 120, 300


def display_text(value: Any, limit: int = NAME_LIMIT) -> str:
    r"""``value`` as text safe to print: at most ``limit`` characters, control characters escaped.

    A store may come from anyone: a candidate name of 10 MB or holding terminal escape
    sequences (``"\\x1b[31m"``) must neither hang an output nor reach the terminal raw.
    Every output of a run (``certa show``, ``certa report``, the plots, the CLI) shows names
    and errors through this function (via :func:`display_selection`).

    Examples
    --------
    >>> display_text("C=1\x1b[31m")
    'C=1\\x1b[31m'
    >>> display_text("x" * 1000, limit=5)
    'xxxxx… (1,000 characters)'
    """
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text):,} characters)"
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _display_value(value: Any) -> Any:
    """Parameter values for display: strings through :func:`display_text`, containers recursively."""
    if isinstance(value, str):
        return display_text(value)
    if isinstance(value, dict):
        return {display_text(k): _display_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_display_value(v) for v in value[:50]] + ([f"… ({len(value):,} items)"] if len(value) > 50 else [])
    return value


def _display_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` for display (:func:`_display_value`); numbers under short, safe names are kept as they are."""
    if all(type(v) in (int, float, bool) or v is None for v in params.values()) and all(
            type(k) is str and len(k) <= NAME_LIMIT and not _UNSAFE.search(k) for k in params):
        return dict(params)
    return _display_value(dict(params))


def _params_text(params: dict[str, Any]) -> str:
    """``{C: 1, kernel: 'rbf'}``: parameters as shown after a repeated name."""
    return "{" + ", ".join(f"{k}: {v!r}" for k, v in params.items()) + "}"


def display_names(candidates: list) -> list[str]:
    """The name each output shows for each candidate: its name, safe to print (:func:`display_text`).

    Where names repeat, the parameters follow the name (``same {C: 1}``), and where name and
    parameters both repeat, the candidate's index (``same {C: 1} (candidate 7)``), so every
    row of a table, and every label of a figure, tells its candidate apart.

    Examples
    --------
    >>> from certa.engine.candidates import Candidate
    >>> display_names([Candidate(0, "same", {"C": 1}), Candidate(1, "same", {"C": 2}), Candidate(2, "x", {})])
    ['same {C: 1}', 'same {C: 2}', 'x']
    """
    from collections import Counter

    counts = Counter(c.name for c in candidates)
    if len(counts) == len(candidates):
        return _display_all([c.name for c in candidates])
    # the name and the parameters truncated each on their own, so that both show
    shown = dict(zip(counts, _display_all(list(counts))))   # each distinct name once
    names = [shown[c.name] if counts[c.name] == 1
             else f"{shown[c.name]} {display_text(_params_text(c.params))}" for c in candidates]
    again = Counter(names)
    if len(again) < len(names):
        names = [n if again[n] == 1 else f"{n} (candidate {c.index})" for n, c in zip(names, candidates)]
    return names


def _display_all(texts: list[str]) -> list[str]:
    """:func:`display_text` of each text; one scan when every text is short and safe already."""
    if all(type(t) is str for t in texts) and max(map(len, texts), default=0) <= NAME_LIMIT \
            and not _UNSAFE.search("".join(texts)):
        return list(texts)
    return [display_text(t) for t in texts]


def display_selection(selection: Selection) -> Selection:
    """A shallow copy of ``selection`` whose names, parameters and errors are safe to print (:func:`display_text`).

    The scores, indices and decisions are the same objects; only what is shown changes. Repeated
    names are told apart by their parameters (:func:`display_names`).
    """
    if getattr(selection, "_display_safe", False):
        return selection
    from ..engine.candidates import Candidate

    shown = copy.copy(selection)
    names = display_names(selection.candidates)
    shown.candidates = [Candidate(c.index, name, _display_params(c.params))
                        for c, name in zip(selection.candidates, names)]
    labels = np.asarray(names + ["?"], dtype=object)
    for attr in ("evaluations", "attempts"):
        frame = getattr(selection, attr, None)
        if isinstance(frame, pd.DataFrame) and len(frame):
            frame = frame.copy()
            if "name" in frame:  # by candidate index: the same (told apart) name as in every table
                cand = pd.to_numeric(frame["candidate"], errors="coerce").to_numpy(dtype=float)
                known = np.isfinite(cand) & (cand >= 0) & (cand < len(names))
                frame["name"] = labels[np.where(known, cand, len(names)).astype(np.intp)]
            for col, limit in (("error", ERROR_LIMIT), ("key", NAME_LIMIT)):
                if col in frame:
                    frame[col] = _display_column(frame[col], limit)
            setattr(shown, attr, frame)
    shown.info = {k: display_text(v, 500) if isinstance(v, str) else v for k, v in selection.info.items()}
    shown._display_safe = True
    return shown


def _display_column(column: pd.Series, limit: int) -> list:
    """:func:`display_text` of each text of a column, missing values kept as they are."""
    values = column.tolist()
    texts = [v for v in values if isinstance(v, str)]
    if len(texts) + sum(v is None or (isinstance(v, float) and math.isnan(v)) for v in values) == len(values) \
            and max(map(len, texts), default=0) <= limit and not _UNSAFE.search("".join(texts)):
        return values   # every text is short and safe already (one scan of the whole column)
    return [v if v is None or (isinstance(v, float) and math.isnan(v)) else display_text(v, limit) for v in values]


def _finite(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def candidate_intervals(selection: Selection, confidence: float = 0.95) -> pd.DataFrame:
    """Per candidate: mean of its successful scores and a t interval of that mean.

    Scores of evaluations on overlapping training sets (J-K-fold folds, fresh
    random splits) are not independent: when the evaluations record their
    training and test sizes the interval uses the Nadeau-Bengio corrected
    variance ``(1/n + n_test/n_train) s^2`` (as ``certa demo``); otherwise the
    plain ``s^2 / n``. Progressive sampling (scores at different training sizes)
    and one evaluation per candidate give no interval.
    """
    from scipy.special import stdtrit  # the t quantile (scipy.stats.t.ppf is stdtrit), without scipy.stats' import

    ev = selection.evaluations
    n_cand = len(selection.candidates)
    n_ok = np.zeros(n_cand, dtype=int)
    mean = np.full(n_cand, np.nan)
    var = np.full(n_cand, np.nan)
    factor = np.full(n_cand, np.nan)
    corrected = np.zeros(n_cand, dtype=bool)
    if len(ev):   # one pass, grouped by candidate (no per-candidate filtering of the table)
        ok = (ev["status"] == "ok").to_numpy(dtype=bool)
        cand = ev["candidate"].to_numpy(dtype=np.intp)[ok]
        x = pd.to_numeric(ev["score"], errors="coerce").to_numpy(dtype=float)[ok]
        n_ok = np.bincount(cand, minlength=n_cand)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n_ok > 0, np.bincount(cand, weights=x, minlength=n_cand) / np.maximum(n_ok, 1), np.nan)
            dev = x - mean[cand]
            var = np.bincount(cand, weights=dev * dev, minlength=n_cand) / np.maximum(n_ok - 1, 1)
            other_kind = np.bincount(cand[~ev["kind"].isin(["fold", "split"]).to_numpy(dtype=bool)[ok]],
                                     minlength=n_cand) > 0
            factor = 1.0 / np.maximum(n_ok, 1)
            if "n_train" in ev and "n_test" in ev:
                n_train = pd.to_numeric(ev["n_train"], errors="coerce").to_numpy(dtype=float)[ok]
                n_test = pd.to_numeric(ev["n_test"], errors="coerce").to_numpy(dtype=float)[ok]
                missing = np.bincount(cand[np.isnan(n_train) | np.isnan(n_test)], minlength=n_cand)
                corrected = (missing == 0) & (n_ok > 0)
                ratio = (np.bincount(cand, weights=np.nan_to_num(n_test), minlength=n_cand)
                         / np.bincount(cand, weights=np.nan_to_num(n_train), minlength=n_cand))
                factor = np.where(corrected, factor + ratio, factor)
        has = (n_ok >= 2) & ~other_kind
    else:
        has = np.zeros(n_cand, dtype=bool)
    low = np.full(n_cand, np.nan)
    high = np.full(n_cand, np.nan)
    if has.any():
        half = stdtrit(n_ok[has] - 1, 0.5 + confidence / 2) * np.sqrt(var[has] * factor[has])
        low[has], high[has] = mean[has] - half, mean[has] + half
    how = np.where(~has, "none", np.where(corrected, "corrected t (Nadeau-Bengio)", "t"))
    return pd.DataFrame({"candidate": np.arange(n_cand), "mean": mean, "ci_low": low, "ci_high": high,
                         "interval": how}).set_index("candidate")


def _ahead_words(summary: dict[str, Any]) -> str:
    """", N spent ahead": evaluations asked ahead of the decision and not used (rows ahead)."""
    n = summary.get("n_spent_ahead") or 0
    return f", {n} spent ahead and not used" if n else ""


def ranked_table(selection: Selection) -> pd.DataFrame:
    """Candidates best first: name, parameters, evaluations, failures, mean, interval, estimate, P(best)."""
    summ = selection.summary()
    iv = candidate_intervals(selection)
    table = summ.join(iv[["ci_low", "ci_high", "interval"]])
    table["params"] = [c.params for c in selection.candidates]
    if selection.finished and "rank" in selection.result:
        order = np.argsort(np.asarray(selection.result["rank"]), kind="stable")
    else:
        key = table["estimate"] if selection.finished else table["mean"]
        filled = key.to_numpy(dtype=float).copy()
        filled[~np.isfinite(filled)] = -np.inf
        order = np.lexsort((np.arange(len(filled)), -filled))
        if selection.finished or _anytime(selection):  # the strategy's choice first, whatever its estimate
            order = [selection.best_index] + [i for i in order if i != selection.best_index]
    table = table.iloc[list(order)].copy()
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    return table


def _anytime(selection: Selection) -> bool:
    """Whether the run's result states a confidence for its recommendation (every bandit does)."""
    return selection.method == "bandit" and "confidence" in selection.result


def _statement(selection: Selection, rep: Any = None) -> str:
    res, spec, method = selection.result, selection.strategy, selection.method
    name = selection.best.name
    target = spec.get("confidence")
    if not selection.finished and _anytime(selection):
        n = selection.n_evaluations
        return (f"run not finished (stopped early, killed or interrupted) after {n} evaluations; "
                f"recommended so far: {name}: {res.get('guarantee', '')}"
                + (f"; target {target} not reached" if target is not None else "")
                + "; run the same command or call with the same store to resume")
    if not selection.finished:
        n = selection.n_evaluations
        total = selection.info.get("total_draws")
        return (f"run not finished: {n} evaluations told" + (f" of {total} planned" if total else "")
                + "; the leader so far is the candidate with the highest mean, not a decision")
    if method == "bandit" and "confidence" in res and target is None:   # a fixed budget
        words = res.get("guarantee", "")
        if not words.startswith("chosen after a fixed budget"):   # a store written before the wording changed
            words = f"chosen after a fixed budget of {spec.get('budget')} evaluations: {words}"
        return f"{name} ({spec.get('strategy')}) {words}"
    if method == "bandit" and res.get("stop_reason") == "budget":   # the best for a budget: its planned end
        return (f"{name} chosen: {res.get('guarantee', '')} (the best for a budget: the race stopped at its budget "
                f"of {res.get('race_budget') or res.get('budget')} evaluations and states the tolerance it certified)")
    if method == "bandit" and "confidence" in res and not res.get("target_reached", True):
        return (f"{name} chosen: {res.get('guarantee', '')} (target {target} not reached: "
                f"stop: {res.get('stop_reason')})")
    if method == "bandit" and "confidence" in res:
        rule = res.get("stopping", spec.get("stopping"))
        what = ("posterior P(best) under independent Student-t beliefs (FIESTA's rule: a Bayesian statement, "
                "not a frequentist guarantee)" if rule == "bayes"
                else "GLR stopping rule: wrong with probability at most 1 - confidence for Gaussian scores")
        if "guarantee" in res:   # the confidence reached, whatever ended the run, in words
            return (f"{name} chosen; " + ("posterior" if rule == "bayes" else "guarantee") + f": {res['guarantee']}"
                    + (f"; target {target}, stop: {res.get('stop_reason')}" if target is not None else ""))
        return (f"{name} chosen with P(best) = {float(res['confidence']):.3f}"
                + (f" (target {target}, stop: {res.get('stop_reason')})" if target is not None else "") + f"; {what}")
    if method == "bandit":
        return f"{name} chosen by {spec.get('strategy')} after a fixed budget of {spec.get('budget')} evaluations"
    if res.get("compared_on", "all folds") != "all folds":   # J-K-fold: failures left candidates with different folds
        return f"{name} chosen by the mean over {res['compared_on']}"
    if method == "jkfold":
        rep = rep if rep is not None else stability(selection)
        if rep is None:
            return f"{name} chosen by the mean over all folds"
        J = rep.n_partitions
        return (f"{name} chosen by the mean over {J}x{spec.get('n_splits')} folds; plain K-fold CV on each of the "
                f"{J} partitions would choose it {rep.agreement:.0%} of the time"
                + (f"; tied with {len(rep.best_tied) - 1} other(s)" if len(rep.best_tied) > 1 else ""))
    if method == "progressive":
        rounds = res.get("rounds", [])
        return (f"{name} chosen by progressive sampling after {len(rounds)} round(s), last training size "
                f"{rounds[-1]['size'] if rounds else '?'}")
    if method == "quantification":
        return (f"{name} chosen by the quantification bound on unlabeled data (one training per candidate)"
                + _not_separated(res, spec))
    if method == "nested":
        return "nested CV: the outer folds estimate how well the whole tuning procedure does on new data"
    return f"{name} chosen"


def _not_separated(res: dict[str, Any], spec: dict[str, Any]) -> str:
    """For a quantification run: what :func:`certa.quantification.separation` says, when the bounds do not separate."""
    from ..quantification.separation import separation

    details = [d or {} for d in res.get("details", [])]
    n_unlabeled = next((d["n_unlabeled"] for d in details if d.get("n_unlabeled")), None)
    if not details or n_unlabeled is None:
        return ""
    guarantees = [float(d.get("bound", np.nan)) for d in details]
    sep = separation(guarantees, int(res["best"]), res.get("tied", [res["best"]]),
                     res.get("tie_values", [np.nan] * len(details)), int(n_unlabeled),
                     "plugin" if spec.get("tie_break") else "order")
    if sep["separated"]:
        return ""
    return (f"; the bounds do not separate it from {len(sep['contenders']) - 1} other candidate(s) (guarantees "
            f"within 1/|S| or clipped at 1; decided by: {sep['decided_by']}): make the final choice on labelled "
            "data (hold-out or cross-validation)")


def stability(selection: Selection):
    """The J-K-fold stability report of a finished J-K-fold selection, else ``None``."""
    from ..analysis.stability import stability_report

    scores = selection.result.get("scores")
    if selection.method != "jkfold" or scores is None or np.ndim(scores) != 3 or np.isnan(scores).all():
        return None
    return stability_report(np.asarray(scores), selection.candidates, random_state=selection.seed)


def _iso(t: float | None) -> str | None:
    if t is None or not math.isfinite(t):
        return None
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat(timespec="seconds")


#: Candidates ``certa show`` and ``certa report`` list unless asked for all (``--all``, ``full=True``),
#: and failed attempts they list.
TOP, FAILURES_SHOWN = 20, 50


def histogram(values: Any, bins: int = 10) -> dict[str, list]:
    """Counts of the finite ``values`` in at most ``bins`` equal bins: ``{"edges": [...], "counts": [...]}``.

    Whole numbers (evaluations per candidate) get one bin per value when there are at most
    ``bins`` of them. Values that are not finite (a candidate without a score) are counted in
    ``"missing"``.

    Examples
    --------
    >>> histogram([2, 2, 3])
    {'edges': [2.0, 3.0, 4.0], 'counts': [2, 1], 'missing': 0}
    >>> histogram([0.0, 0.5, 1.0, float("nan")], bins=2)
    {'edges': [0.0, 0.5, 1.0], 'counts': [1, 2], 'missing': 1}
    """
    x = np.asarray(values, dtype=float)
    finite = x[np.isfinite(x)]
    missing = int(x.size - finite.size)
    if not finite.size:
        return {"edges": [], "counts": [], "missing": missing}
    lo, hi = float(finite.min()), float(finite.max())
    if np.all(finite == np.round(finite)) and hi - lo < bins:
        edges = np.arange(lo, hi + 2.0)
    else:
        edges = np.histogram_bin_edges(finite, bins=bins if hi > lo else 1)
    counts, edges = np.histogram(finite, bins=edges)
    return {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts], "missing": missing}


def _candidate_rows(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of :func:`ranked_table` as JSON-able dicts (column by column: fast for any number of rows)."""
    cols = {k: table[k].tolist() for k in ("rank", "name", "params", "n_evaluations", "n_failed", "mean", "ci_low",
                                            "ci_high", "interval", "estimate") + (("p_best",) if "p_best" in table else ())}
    rows = []
    for j, i in enumerate(table.index.tolist()):
        row = {"rank": int(cols["rank"][j]), "candidate": int(i), "name": cols["name"][j],
               "params": cols["params"][j], "n_evaluations": int(cols["n_evaluations"][j]),
               "n_failed": int(cols["n_failed"][j]), "mean": _finite(cols["mean"][j]),
               "ci_low": _finite(cols["ci_low"][j]), "ci_high": _finite(cols["ci_high"][j]),
               "interval": cols["interval"][j], "estimate": _finite(cols["estimate"][j])}
        if "p_best" in cols:
            row["p_best"] = _finite(cols["p_best"][j])
        rows.append(row)
    return rows


def summarize(selection: Selection, full: bool = False) -> dict[str, Any]:
    """Everything ``certa show`` prints, as JSON-able data (names and errors through :func:`display_text`).

    Parameters
    ----------
    selection : Selection
    full : bool
        List every candidate and every failed attempt (``certa show --all``). By default the
        :data:`TOP` best candidates and the first :data:`FAILURES_SHOWN` failed attempts are
        listed; ``n_candidates`` and ``n_failed`` count them all, and ``histograms`` give the
        spread of every candidate's estimate and number of evaluations.
    """
    selection = display_selection(selection)
    info = selection.info
    table = ranked_table(selection)
    shown = table if full else table.iloc[:TOP]
    fail = selection.attempts if hasattr(selection, "attempts") else selection.evaluations
    fail = fail[fail["status"] != "ok"]
    fail_shown = fail if full else fail.iloc[:FAILURES_SHOWN]
    rep = stability(selection) if selection.finished else None
    out: dict[str, Any] = {
        "store": info.get("store"), "method": selection.method, "finished": bool(selection.finished),
        "strategy": selection.strategy, "evaluator": info.get("evaluator"), "seed": selection.seed,
        "n_candidates": len(selection.candidates), "n_evaluations": selection.n_evaluations,
        "n_attempts": info.get("n_attempts", selection.n_evaluations), "n_planned": info.get("total_draws"),
        "n_failed": len(fail), "n_spent_ahead": int(selection.result.get("evaluations_ahead") or 0),
        "created_at": _iso(info.get("created_at")),
        "last_recorded_at": _iso(info.get("last_recorded_at")),
        "evaluation_seconds": _finite(info.get("evaluation_seconds")),
        "wall_seconds": _finite(info.get("wall_seconds")),
        "choice": {"candidate": selection.best_index, "name": selection.best.name, "params": selection.best_params,
                   "estimate": _finite(selection.best_score)},
        "statement": _statement(selection, rep),
        "n_candidates_listed": len(shown),
        "candidates": _candidate_rows(shown),
        "histograms": {"estimate": histogram(table["estimate"]), "n_evaluations": histogram(table["n_evaluations"])},
        "failures": [{"name": name, "key": key, "attempt": int(attempt), "status": status, "error": error}
                     for name, key, attempt, status, error in zip(
                         fail_shown["name"], fail_shown["key"],
                         fail_shown["attempt" if "attempt" in fail_shown else "attempts"],  # run() has no attempts
                         fail_shown["status"], fail_shown["error"])],
    }
    out["notes"] = _notes(selection, out)
    res = selection.result
    if selection.method == "bandit":
        out["bandit"] = {k: _plain(res[k]) for k in ("confidence", "target_confidence", "target_reached",
                                                     "stop_reason", "stopping", "tolerance", "certified_tolerance",
                                                     "race_budget", "guarantee")
                         if k in res}
    if rep is not None:
        out["stability"] = _plain(rep.to_dict())
        out["stability_text"] = str(rep)
    if selection.method == "progressive" and "rounds" in res:
        out["rounds"] = [{"round": r["round"], "size": r["size"], "n_evaluated": r["n_evaluated"],
                          "n_survived": r["n_survived"]} for r in res["rounds"]]
    if selection.method == "quantification":
        ev = selection.evaluations
        if not full:   # the bounds of the candidates listed
            ev = ev[ev["candidate"].isin(shown.index)]
        out["bounds"] = [{"name": r["name"], "bound": _finite(r.get("bound")), "value": _finite(r.get("value")),
                          "plugin": _finite(r.get("plugin"))}
                         for _, r in ev.iterrows()] if "bound" in ev else []
    if selection.method == "nested":
        ev = selection.evaluations
        ok = ev[ev["status"] == "ok"]
        out["nested"] = {"outer_mean": _finite(ok["score"].mean()) if len(ok) else None,
                         "outer_sd": _finite(ok["score"].std(ddof=1)) if len(ok) > 1 else None,
                         "inner_best_mean": _finite(ok["inner_best_score"].mean()) if "inner_best_score" in ok else None,
                         "chosen": list(ok["chosen"]) if "chosen" in ok else []}
    return out


_ESTIMATE = {
    "jkfold": "estimate: the mean over every fold of every partition, which the choice is made on",
    "bandit": "estimate: the strategy's estimate of the candidate's score (the mean of its scores), which ranks "
              "the candidates",
    "progressive": "estimate: the candidate's score in the last (largest) round it reached, which ranks the "
                   "candidates; mean: over every round, at every training size",
    "quantification": "estimate: the quantification bound the choice is made on (not a score)",
}


def _notes(selection: Selection, out: dict[str, Any]) -> list[str]:
    """One line per column or number a reader could misread (what the estimate is, P(best) is not the guarantee)."""
    notes = [_ESTIMATE.get(selection.method or "", "estimate: the strategy's estimate of the candidate's score")]
    res = selection.result
    if "p_best" in res:
        rule = res.get("stopping", selection.strategy.get("stopping"))
        notes.append("posterior P(best): the Bayesian belief (independent Student-t posteriors) that each candidate "
                     "is the best; " + ("with stopping=bayes the stated confidence is this number for the choice "
                                        "(not a frequentist guarantee)" if rule == "bayes" else
                                        "it is not the stated confidence, which is the GLR rule's frequentist "
                                        "guarantee (wrong at most 1 - confidence of the time, Gaussian scores)"))
    spec = selection.strategy
    if spec.get("min_evals") and spec.get("confidence") \
            and spec.get("stopping", "glr") == "glr":
        from ..strategies._glr import min_count

        need = min_count(1.0 - float(spec["confidence"]), len(selection.candidates))
        if need > int(spec["min_evals"]):
            out["initial_evals"] = need
            notes.append(f"min_evals={spec['min_evals']} is raised to {need}: the GLR rule cannot rule a candidate "
                         f"out with fewer scores at confidence {spec['confidence']} with {len(selection.candidates)} "
                         "candidates, so each is evaluated that often first")
    return notes


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, pd.DataFrame):
        return _plain(value.to_dict(orient="records"))
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def print_summary(summary: dict[str, Any], console: Any = None) -> None:
    """Print a summary (from :func:`summarize`) on a rich console."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    if console is None:
        import os
        import sys

        # piped or redirected (no terminal, no COLUMNS): wide lines, one table row per candidate,
        # instead of rich's 80 columns that fold every cell
        piped = not sys.stdout.isatty() and "COLUMNS" not in os.environ
        console = Console(width=160) if piped else Console()
    state = "[green]finished[/green]" if summary["finished"] else "[yellow]not finished[/yellow]"
    spec = dict(summary["strategy"])
    name = spec.pop("strategy", "?")
    settings = ", ".join(f"{k}={v}" + (f" (raised to {summary['initial_evals']})" if k == "min_evals"
                                       and summary.get("initial_evals") else "")
                         for k, v in spec.items() if k not in ("sizes",) and v is not None)
    where = f"[bold]{escape(str(summary['store']))}[/bold]: " if summary.get("store") else ""
    console.print(f"{where}{summary['method']} run ({escape(str(name))}: {escape(settings)}), {state}"
                  + ("" if summary.get("store") else " (not kept: no store)"), soft_wrap=True)
    planned = f" of {summary['n_planned']} planned" if summary.get("n_planned") else ""
    t_eval, t_wall = summary.get("evaluation_seconds"), summary.get("wall_seconds")
    console.print(f"{summary['n_candidates']} candidates, {summary['n_evaluations']} evaluations{planned} "
                  f"({summary['n_attempts']} attempts, {summary['n_failed']} failed{_ahead_words(summary)}), "
                  f"seed {summary['seed']}"
                  + (f", evaluator {escape(str(summary['evaluator']))}" if summary.get("evaluator") else "")
                  + (f"; {summary['n_reused_from_store']} reused from the store (resumed)"
                     if summary.get("n_reused_from_store") else ""), soft_wrap=True)
    if t_eval is not None:
        console.print(f"time: {t_eval:.1f} s of evaluation" + (f", {t_wall:.1f} s from start to last record"
                                                                if t_wall is not None else "")
                      + (f" (started {summary['created_at']})" if summary.get("created_at") else ""))
    has_p = any("p_best" in c for c in summary["candidates"])
    cols = ["rank", "candidate", "evals", "failed", "mean", "95% interval", "estimate"] + (
        ["posterior P(best)"] if has_p else [])

    def fmt(x: float | None) -> str:
        return "-" if x is None else f"{x:.4f}"

    rows = [[str(c["rank"]), c["name"], str(c["n_evaluations"]), str(c["n_failed"]), fmt(c["mean"]),
             "-" if c["ci_low"] is None else f"[{c['ci_low']:.4f}, {c['ci_high']:.4f}]", fmt(c["estimate"])]
            + ([fmt(c.get("p_best"))] if has_p else []) for c in summary["candidates"]]
    n_all, n_listed = summary["n_candidates"], len(rows)
    title = ("Candidates, best first" if n_listed == n_all
             else f"The {n_listed:,} best of {n_all:,} candidates")
    if n_listed <= RICH_ROWS:
        table = Table(title=title)
        for col in cols:
            table.add_column(col, overflow="fold")
        for row in rows:
            table.add_row(*[escape(v) for v in row])
        console.print(table)
    else:   # rich lays out each cell (milliseconds a row): a long table as plain columns
        console.file.write(plain_table(title, cols, rows))
    if n_listed < n_all:
        console.print(f"{n_all - n_listed:,} more candidates not listed ('certa show --all' lists every one)",
                      highlight=False, markup=False, soft_wrap=True)
        for what, label in (("estimate", "estimates"), ("n_evaluations", "evaluations per candidate")):
            hist = summary.get("histograms", {}).get(what)
            if hist and hist["counts"]:
                console.print(text_histogram(hist, f"{label} of the {n_all:,} candidates",
                                             integer=what == "n_evaluations"),
                              highlight=False, markup=False, soft_wrap=True)
    intervals = {c["interval"] for c in summary["candidates"] if c["interval"] != "none"}
    if intervals:
        console.print(f"interval of the mean: {', '.join(sorted(intervals))}", highlight=False, soft_wrap=True)
    for note in summary.get("notes", []):
        console.print(note, highlight=False, markup=False, soft_wrap=True)
    if summary["finished"]:
        console.print(f"[bold green]Choice[/bold green]: {escape(summary['choice']['name'])}", highlight=False)
    elif "confidence" in summary.get("bandit", {}):
        console.print(f"[bold yellow]Recommended so far[/bold yellow]: {escape(summary['choice']['name'])}",
                      highlight=False)
    else:
        leader = summary["candidates"][0]["name"] if summary["n_evaluations"] else "none yet"
        console.print(f"[bold yellow]Leader so far[/bold yellow]: {escape(leader)}", highlight=False)
    console.print(summary["statement"], highlight=False, markup=False, soft_wrap=True)
    if "stability_text" in summary:
        console.print("[bold]How stable is this choice?[/bold]")
        console.print(summary["stability_text"], highlight=False, markup=False, soft_wrap=True)
    if summary.get("rounds"):
        console.print("rounds (size: evaluated -> survived): " + "; ".join(
            f"{r['size']}: {r['n_evaluated']} -> {r['n_survived']}" for r in summary["rounds"]), highlight=False)
    if summary.get("nested"):
        n = summary["nested"]
        console.print(f"outer score {fmt(n['outer_mean'])} (SD {fmt(n['outer_sd'])}), inner best "
                      f"{fmt(n['inner_best_mean'])}; chosen per outer fold: {n['chosen']}", highlight=False,
                      markup=False)
    if summary["failures"]:
        n_failed = max(summary.get("n_failed", 0), len(summary["failures"]))
        console.print(f"[red]{n_failed:,} failed attempt(s)[/red]:")
        listed = summary["failures"] if len(summary["failures"]) == n_failed else summary["failures"][:10]
        for f in listed:
            console.print(f"  {f['name']} {f['key']} attempt {f['attempt']}: {f['status']}: {f['error']}",
                          highlight=False, markup=False)
        if n_failed > len(listed):
            console.print(f"  ... and {n_failed - len(listed):,} more ('certa show --all' lists all)",
                          highlight=False)


#: Longest table ``print_summary`` draws with rich; a longer one (``--all``) is written as plain columns.
RICH_ROWS = 200


def plain_table(title: str, header: list[str], rows: list[list[str]]) -> str:
    """``rows`` as left-aligned columns under ``title`` and ``header``, one line per row (any number of rows).

    Examples
    --------
    >>> print(plain_table("T", ["a", "bb"], [["1", "x"], ["22", "y"]]), end="")
    T
    a   bb
    1   x
    22  y
    """
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines) + "\n"


def bin_labels(hist: dict[str, list], integer: bool = True) -> list[str]:
    """A label per bin of a :func:`histogram`: the value (whole numbers, one per bin), else ``[low, high)``.

    Examples
    --------
    >>> bin_labels(histogram([2, 2, 3]))
    ['2', '3']
    >>> bin_labels(histogram([0.0, 0.5, 1.0], bins=2))
    ['[0.0000, 0.5000)', '[0.5000, 1.0000]']
    """
    from itertools import pairwise

    edges, last = hist["edges"], len(hist["edges"]) - 2
    if integer and all(float(e).is_integer() for e in edges) and all(b - a == 1 for a, b in pairwise(edges)):
        return [f"{int(a)}" for a in edges[:-1]]
    return [f"[{a:.4f}, {b:.4f}" + ("]" if i == last else ")") for i, (a, b) in enumerate(pairwise(edges))]


def text_histogram(hist: dict[str, list], label: str, width: int = 40, integer: bool = False) -> str:
    """A :func:`histogram` as text lines: each bin, its count and a bar of ``#``.

    Examples
    --------
    >>> print(text_histogram(histogram([2, 2, 3]), "evaluations", width=4, integer=True))
    evaluations:
      2  2  ####
      3  1  ##
    """
    counts = hist["counts"]
    top = max(counts) if counts else 0
    bins = bin_labels(hist, integer)
    wide = max(len(b) for b in bins) if bins else 0
    size = max(len(f"{c:,}") for c in counts) if counts else 0
    lines = [f"{label}:"] + [f"  {b.rjust(wide)}  {c:>{size},}  " + "#" * (round(width * c / top) if top else 0)
                             for b, c in zip(bins, counts)]
    if hist.get("missing"):
        lines.append(f"  {'none'.rjust(wide)}  {hist['missing']:>{size},}  (no score)")
    return "\n".join(line.rstrip() for line in lines)
