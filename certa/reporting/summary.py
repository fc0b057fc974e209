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
    """``value`` as text safe to print: at most ``limit`` characters, control characters escaped.

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


def display_selection(selection: Selection) -> Selection:
    """A shallow copy of ``selection`` whose names, parameters and errors are safe to print (:func:`display_text`).

    The scores, indices and decisions are the same objects; only what is shown changes.
    """
    if getattr(selection, "_display_safe", False):
        return selection
    from ..engine.candidates import Candidate

    shown = copy.copy(selection)
    shown.candidates = [Candidate(c.index, display_text(c.name), _display_value(dict(c.params)))
                        for c in selection.candidates]
    for attr in ("evaluations", "attempts"):
        frame = getattr(selection, attr, None)
        if isinstance(frame, pd.DataFrame) and len(frame):
            frame = frame.copy()
            if "name" in frame:
                frame["name"] = [display_text(v) for v in frame["name"]]
            for col, limit in (("error", ERROR_LIMIT), ("key", NAME_LIMIT)):
                if col in frame:
                    frame[col] = [v if v is None or (isinstance(v, float) and math.isnan(v)) else display_text(v, limit)
                                  for v in frame[col]]
            setattr(shown, attr, frame)
    shown.info = {k: display_text(v, 500) if isinstance(v, str) else v for k, v in selection.info.items()}
    shown._display_safe = True
    return shown


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
    from scipy import stats as sps

    ev = selection.evaluations
    rows = []
    for c in selection.candidates:
        sub = ev[(ev["candidate"] == c.index) & (ev["status"] == "ok")] if len(ev) else ev
        x = sub["score"].to_numpy(dtype=float) if len(sub) else np.array([])
        row = {"candidate": c.index, "mean": float(x.mean()) if x.size else math.nan,
               "ci_low": math.nan, "ci_high": math.nan, "interval": "none"}
        kinds = set(sub["kind"]) if len(sub) else set()
        if x.size >= 2 and kinds <= {"fold", "split"}:
            factor = 1.0 / x.size
            how = "t"
            if "n_train" in sub and "n_test" in sub and sub["n_train"].notna().all() and sub["n_test"].notna().all():
                factor += float(sub["n_test"].mean()) / float(sub["n_train"].mean())
                how = "corrected t (Nadeau-Bengio)"
            se = math.sqrt(np.var(x, ddof=1) * factor)
            half = float(sps.t.ppf(0.5 + confidence / 2, x.size - 1)) * se
            row.update(ci_low=row["mean"] - half, ci_high=row["mean"] + half, interval=how)
        rows.append(row)
    return pd.DataFrame(rows).set_index("candidate")


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


def _statement(selection: Selection) -> str:
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
        rep = stability(selection)
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


def summarize(selection: Selection) -> dict[str, Any]:
    """Everything ``certa show`` prints, as JSON-able data (names and errors through :func:`display_text`)."""
    selection = display_selection(selection)
    info = selection.info
    table = ranked_table(selection)
    fail = selection.attempts if hasattr(selection, "attempts") else selection.evaluations
    fail = fail[fail["status"] != "ok"]
    out: dict[str, Any] = {
        "store": info.get("store"), "method": selection.method, "finished": bool(selection.finished),
        "strategy": selection.strategy, "evaluator": info.get("evaluator"), "seed": selection.seed,
        "n_candidates": len(selection.candidates), "n_evaluations": selection.n_evaluations,
        "n_attempts": info.get("n_attempts", selection.n_evaluations), "n_planned": info.get("total_draws"),
        "n_failed": len(fail), "created_at": _iso(info.get("created_at")),
        "last_recorded_at": _iso(info.get("last_recorded_at")),
        "evaluation_seconds": _finite(info.get("evaluation_seconds")),
        "wall_seconds": _finite(info.get("wall_seconds")),
        "choice": {"candidate": selection.best_index, "name": selection.best.name, "params": selection.best_params,
                   "estimate": _finite(selection.best_score)},
        "statement": _statement(selection),
        "candidates": [{"rank": int(r["rank"]), "candidate": int(i), "name": r["name"], "params": r["params"],
                        "n_evaluations": int(r["n_evaluations"]), "n_failed": int(r["n_failed"]),
                        "mean": _finite(r["mean"]), "ci_low": _finite(r["ci_low"]), "ci_high": _finite(r["ci_high"]),
                        "interval": r["interval"], "estimate": _finite(r["estimate"]),
                        **({"p_best": _finite(r["p_best"])} if "p_best" in r else {})}
                       for i, r in table.iterrows()],
        "failures": [{"name": r["name"], "key": r["key"],
                      "attempt": int(r["attempt"] if "attempt" in r else r["attempts"]),  # run() has no attempts
                      "status": r["status"], "error": r["error"]} for _, r in fail.iterrows()],
    }
    out["notes"] = _notes(selection, out)
    res = selection.result
    if selection.method == "bandit":
        out["bandit"] = {k: _plain(res[k]) for k in ("confidence", "target_confidence", "target_reached",
                                                     "stop_reason", "stopping", "tolerance", "guarantee")
                         if k in res}
    rep = stability(selection) if selection.finished else None
    if rep is not None:
        out["stability"] = _plain(rep.to_dict())
        out["stability_text"] = str(rep)
    if selection.method == "progressive" and "rounds" in res:
        out["rounds"] = [{"round": r["round"], "size": r["size"], "n_evaluated": r["n_evaluated"],
                          "n_survived": r["n_survived"]} for r in res["rounds"]]
    if selection.method == "quantification":
        ev = selection.evaluations
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
                  f"({summary['n_attempts']} attempts, {summary['n_failed']} failed), seed {summary['seed']}"
                  + (f", evaluator {escape(str(summary['evaluator']))}" if summary.get("evaluator") else "")
                  + (f"; {summary['n_reused_from_store']} reused from the store (resumed)"
                     if summary.get("n_reused_from_store") else ""), soft_wrap=True)
    if t_eval is not None:
        console.print(f"time: {t_eval:.1f} s of evaluation" + (f", {t_wall:.1f} s from start to last record"
                                                                if t_wall is not None else "")
                      + (f" (started {summary['created_at']})" if summary.get("created_at") else ""))
    table = Table(title="Candidates, best first")
    has_p = any("p_best" in c for c in summary["candidates"])
    cols = ["rank", "candidate", "evals", "failed", "mean", "95% interval", "estimate"] + (
        ["posterior P(best)"] if has_p else [])
    for col in cols:
        table.add_column(col, overflow="fold")

    def fmt(x: float | None) -> str:
        return "-" if x is None else f"{x:.4f}"

    for c in summary["candidates"]:
        iv = "-" if c["ci_low"] is None else f"[{c['ci_low']:.4f}, {c['ci_high']:.4f}]"
        row = [str(c["rank"]), escape(c["name"]), str(c["n_evaluations"]), str(c["n_failed"]), fmt(c["mean"]), iv,
               fmt(c["estimate"])] + ([fmt(c.get("p_best"))] if has_p else [])
        table.add_row(*row)
    console.print(table)
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
        console.print(f"[red]{len(summary['failures'])} failed attempt(s)[/red]:")
        for f in summary["failures"][:10]:
            console.print(f"  {f['name']} {f['key']} attempt {f['attempt']}: {f['status']}: {f['error']}",
                          highlight=False, markup=False)
        if len(summary["failures"]) > 10:
            console.print(f"  ... and {len(summary['failures']) - 10} more (--json lists all)")
