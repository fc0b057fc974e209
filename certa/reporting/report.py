"""``certa report``: one self-contained HTML page of a run (figures as embedded PNG, no network)."""
from __future__ import annotations

import base64
import html
import io
import json
import math
import os
from typing import Any

from ..engine.selection import Selection
from . import plot
from .summary import _ahead_words, bin_labels, display_selection, summarize

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 62em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }
th { background: #f3f3f3; } .num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.5em 0; } figcaption { color: #555; font-size: 0.9em; }
img { max-width: 100%; height: auto; } .note { color: #a60; } pre { white-space: pre-wrap; }
"""


def figure_png(fn: Any, selection: Selection, dpi: int = 100) -> bytes:
    """Draw ``fn(selection, ax)`` on a new figure (not registered with pyplot) and return it as PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    # taller for a key of short labels (long names, e.g. pipeline parameters) and for many candidates
    n_key = len(plot.short_labels(plot._selection(selection))[1])   # the drawn candidates' key
    extra = 0.3 * max(0, min(len(selection.candidates), plot.MAX_DRAWN) - 8) if fn is plot.scores else 0.0
    fig = Figure(figsize=(8.5, min(4.2 + 0.17 * n_key + extra, 30.0)))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    fn(selection, ax=ax)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")  # nothing cut: title, legend, key
    return buf.getvalue()


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return "-" if math.isnan(x) else f"{x:.4f}"
    return html.escape(str(x))


def _more(listed: int, total: int, what: str) -> str:
    """A note under a table that lists ``listed`` of ``total`` rows (nothing when it lists them all)."""
    if listed >= total:
        return ""
    return (f"<p class='note' data-rows-left-out='{total - listed}'>The first {listed:,} of {total:,} {what}; "
            "<code>certa report --all</code> (or <code>build_report(..., full=True)</code>) lists every one.</p>")


def _histogram_table(hist: dict[str, list], label: str) -> str:
    """A histogram of :func:`~certa.reporting.summary.histogram` as a two-column table."""
    cells = [(label, f"{c:,}") for label, c in zip(bin_labels(hist), hist["counts"])]
    if hist.get("missing"):
        cells.append(("none", f"{hist['missing']:,}"))
    return (f"<table class='histogram'><tr><th>{html.escape(label)}</th><th>candidates</th></tr>"
            + "".join(f"<tr><td>{a}</td><td class='num'>{b}</td></tr>" for a, b in cells) + "</table>")


def _candidates_table(summary: dict[str, Any]) -> str:
    has_p = any("p_best" in c for c in summary["candidates"])
    head = ["rank", "candidate", "parameters", "evaluations", "failed", "mean", "95% interval", "estimate"] + (
        ["posterior P(best)"] if has_p else [])
    rows = []
    for c in summary["candidates"]:
        iv = "-" if c["ci_low"] is None else f"[{c['ci_low']:.4f}, {c['ci_high']:.4f}]"
        params = html.escape(json.dumps(c["params"], default=repr))
        cells = [str(c["rank"]), _fmt(c["name"]), params, str(c["n_evaluations"]), str(c["n_failed"]),
                 _fmt(c["mean"]), iv, _fmt(c["estimate"])] + ([_fmt(c.get("p_best"))] if has_p else [])
        rows.append("<tr>" + "".join(f"<td>{v}</td>" for v in cells) + "</tr>")
    return ("<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(rows) + "</table>")


def _settings(spec: dict[str, Any], initial_evals: int | None) -> str:
    """The strategy's settings, with what applies where the strategy raises one (min_evals for the GLR rule)."""
    return ", ".join(f"{k}={v}" + (f" (raised to {initial_evals})" if k == "min_evals" and initial_evals else "")
                     for k, v in spec.items() if v is not None)


def _comparison_html(selection: Selection, full: bool = False) -> str:
    from ..analysis.comparison import comparison_table
    from .summary import TOP

    try:
        table = comparison_table(selection)
    except ValueError as exc:
        return f"<p class='note'>No comparison table: {html.escape(str(exc))}</p>"
    n_rows = len(table)
    if not full:
        table = table.iloc[:TOP]   # the closest competitors; p-values adjusted over every comparison
    head = ["vs", "design", "pairs", "mean (chosen)", "mean (other)", "difference", "95% interval", "test", "p",
            "p (Holm)"]
    rows = []
    for r in table.itertuples():
        iv = "-" if math.isnan(r.ci_low) else f"[{r.ci_low:.4f}, {r.ci_high:.4f}]"
        cells = [_fmt(r.name), _fmt(r.design), _fmt(r.n_pairs), _fmt(float(r.mean_best)), _fmt(float(r.mean_other)),
                 _fmt(float(r.mean_difference)), iv, _fmt(r.test), _fmt(float(r.pvalue)), _fmt(float(r.pvalue_holm))]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (f"<h2>{html.escape(selection.best.name)} against each other candidate</h2>"
            "<table id='comparison'><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(rows)
            + "</table>" + _more(len(table), n_rows, "comparisons, closest competitor first")
            + f"<p><small>p-values Holm-adjusted over the {n_rows:,} comparisons "
            "(certa.comparison_table).</small></p>")


def build_report(selection: Selection, title: str | None = None, full: bool = False) -> str:
    """The HTML page of a selection: summary, tables and the method's figures (see :data:`certa.reporting.plot.FIGURES`).

    A figure that does not apply to this run (e.g. the belief of a fixed-budget
    bandit run) is left out with a note saying why.

    Parameters
    ----------
    selection : Selection
    title : str, optional
    full : bool
        List every candidate, failed attempt and comparison in the tables (``certa report --all``).
        By default the tables list the best :data:`~certa.reporting.summary.TOP` candidates
        (comparisons: the closest competitors) and the first
        :data:`~certa.reporting.summary.FAILURES_SHOWN` failed attempts, say how many more
        there are, and, when candidates are left out, show histograms of every candidate's
        estimate and number of evaluations. The figures draw the best
        :data:`~certa.reporting.plot.MAX_DRAWN` candidates either way.
    """
    selection = display_selection(selection)  # names and errors from a store are shown truncated and escaped
    summary = summarize(selection, full=full)
    title = title or f"certa report: {summary.get('store') or 'selection'}"
    spec = dict(summary["strategy"])
    state = "finished" if summary["finished"] else "not finished (killed, or still running)"
    parts = [(f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
              f"<style>{_CSS}</style></head><body>"),
             f"<h1>{html.escape(title)}</h1>",
             (f"<p><b>Method</b>: {html.escape(str(summary['method']))} "
              f"({html.escape(str(spec.pop('strategy', '?')))}: "
              f"{html.escape(_settings(spec, summary.get('initial_evals')))}); <b>state</b>: {state}; "
              f"{summary['n_candidates']} candidates, {summary['n_evaluations']} evaluations "
              f"({summary['n_attempts']} attempts, {summary['n_failed']} failed{_ahead_words(summary)}); "
              f"seed {summary['seed']}; "
              f"evaluator {html.escape(str(summary['evaluator']))}.</p>")]
    if summary.get("evaluation_seconds") is not None:
        parts.append(f"<p>Time: {summary['evaluation_seconds']:.1f} s of evaluation"
                     + (f", {summary['wall_seconds']:.1f} s from start to the last record" if
                        summary.get("wall_seconds") is not None else "") + ".</p>")
    label = "Choice" if summary["finished"] else "Leader so far"
    leader = summary["choice"]["name"] if summary["finished"] else summary["candidates"][0]["name"]
    parts.append(f"<p><b>{label}</b>: {html.escape(leader)}. {html.escape(summary['statement'])}</p>")
    left_out = len(summary["candidates"]) < summary["n_candidates"]
    parts.append("<h2>Candidates</h2>" + _candidates_table(summary)
                 + _more(len(summary["candidates"]), summary["n_candidates"], "candidates, best first")
                 + "".join(f"<p><small>{html.escape(n)}</small></p>" for n in summary.get("notes", [])))
    if left_out:
        hists = summary["histograms"]
        parts.append("<h2>Every candidate</h2>" + _histogram_table(hists["estimate"], "estimate")
                     + _histogram_table(hists["n_evaluations"], "evaluations"))
    if "stability_text" in summary:
        parts.append(f"<h2>Stability</h2><pre>{html.escape(summary['stability_text'])}</pre>")
    if summary["failures"]:
        rows = "".join(f"<tr><td>{_fmt(f['name'])}</td><td>{_fmt(f['key'])}</td><td>{f['attempt']}</td>"
                       f"<td>{_fmt(f['status'])}</td><td>{_fmt(f['error'])}</td></tr>" for f in summary["failures"])
        parts.append("<h2>Failed attempts</h2><table><tr><th>candidate</th><th>draw</th><th>attempt</th>"
                     f"<th>status</th><th>error</th></tr>{rows}</table>"
                     + _more(len(summary["failures"]), summary["n_failed"], "failed attempts"))
    if len(selection.candidates) > 1:
        parts.append(_comparison_html(selection, full))
    parts.append("<h2>Figures</h2>")
    figures = list(plot.FIGURES.get(selection.method or "other", plot.FIGURES["other"]))
    if left_out:   # the spread of the candidates the tables and figures leave out
        figures.insert(1, plot.estimates)
    for fn in figures:
        if fn is plot.comparison:  # shown above as a table (the same numbers)
            continue
        if fn is plot.failures and not summary["failures"]:
            parts.append("<p data-figure-skipped='failures'>No failed attempts.</p>")
            continue
        doc = (fn.__doc__ or "").strip().split("\n")[0]
        try:
            png = figure_png(fn, selection)
        except ValueError as exc:
            parts.append(f"<p class='note' data-figure-skipped='{fn.__name__}'>{fn.__name__}: not shown "
                         f"({html.escape(str(exc))})</p>")
            continue
        data = base64.b64encode(png).decode("ascii")
        parts.append(f"<figure><img class='certa-figure' data-figure='{fn.__name__}' alt='{fn.__name__}' "
                     f"src='data:image/png;base64,{data}'><figcaption>{html.escape(doc)}</figcaption></figure>")
    parts.append("<p><small>Made by certa from the run's store; figures are also available as "
                 "<code>certa.reporting.plot.*</code>.</small></p></body></html>")
    return "\n".join(parts)


def write_report(selection: Selection, path: str | os.PathLike, title: str | None = None, full: bool = False) -> str:
    """Write :func:`build_report`'s page to ``path`` (``full``: every row in the tables); returns the path."""
    page = build_report(selection, title, full=full)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(page)
    return os.fspath(path)
