"""Which survival rule should each schedule run by default? (issue 24, #14)

Reads runs of ``benchmarks/progressive.py lemma`` (one result file per draw and learner, e.g.
``--tag rules24_<draw>_<learner>``) and the cached exhaustive results, and compares per schedule
(Paramsearch, PSearch) three rules on every (draw, learner) cell:

- **race + gate** (the default before issue 24): the race; the learner's default setting is kept
  unless the 5-fold confirmation's corrected k-fold t test shows the final round's challenger
  better (one-sided, level 5 %);
- **race + evidence**: the same run, but the choice is what the evidence favours: the challenger
  if its mean accuracy in the 5-fold confirmation is higher than the default's (ties: the
  default); the test is reported as a claim only. Derived from the same run's recorded
  confirmation (``vs_baseline.difference``), so both race rows rest on identical rounds;
  ``ProgressiveSearchCV(baseline_rule="evidence")`` makes exactly this choice (tested);
- **mean**: the schedule's published rule (PSearch with its 20 % floor), a separate run.

The target (issue 24): the choice is **never worse than the default** (its exhaustive accuracy,
whole training part, 4,000 held-out evaluation examples, at least the default's) and **not
significantly worse than the exhaustive best** (two-sided exact McNemar test of the choice
against the exhaustive best on the evaluation examples, level 5 %; a fixed pair of fitted models
on held-out examples, which is what this test is right for). Also: exhaustive rank, distance to
the best and to the default (points), time share of the exhaustive search.

Run: ``python benchmarks/progressive.py rule-choice --tags rules24_bundled_knn,...``; writes
``benchmarks/results/progressive_rule_choice.{json,md}``.
"""
from __future__ import annotations

import argparse
import json

import numpy as np
from _common import RESULTS, md_table, write_results
from scipy import stats

from _progressive.lemma import CACHE, _unpack, cache_key
from certa.search._common import rank_scores

SCHEDULES = ("paramsearch", "psearch")
RULES = ("race + gate", "race + evidence", "mean")
LEVEL = 0.05


def mcnemar_two_sided(a: np.ndarray, b: np.ndarray) -> float:
    n_a, n_b = int((a & ~b).sum()), int((~a & b).sum())
    return float(stats.binomtest(n_a, n_a + n_b, 0.5).pvalue) if n_a + n_b else 1.0


def cell_rows(res: dict, cache: dict, draw: str, learner: str) -> list[dict]:
    r = res["draws"][draw][learner]
    ex = cache[cache_key(draw, learner, res["n_instances"], res["seed"], res["quick"], res["cache_transformers"])]
    names = ex["settings"]
    index = {n: i for i, n in enumerate(names)}
    scores = np.asarray(ex["scores"], dtype=float)
    rank = rank_scores(scores)
    correct = np.array([_unpack(t, ex["n_eval"]) for t in ex["correct"]])
    best = int(np.argmin(rank))
    default = index[r["default"]["setting"]]
    out = []
    for schedule in SCHEDULES:
        race = r.get(f"{schedule}+race")
        mean = r.get(schedule)
        if race is None or mean is None:
            continue
        vs = race.get("vs_baseline") or {}
        chal = vs.get("challenger")
        evidence_choice = index[chal] if chal and (vs.get("difference") or 0) > 0 else default
        choices = {"race + gate": index[race["chosen"]], "race + evidence": evidence_choice,
                   "mean": index[mean["chosen"]]}
        times = {"race + gate": race["time_vs_exhaustive_pct"], "race + evidence": race["time_vs_exhaustive_pct"],
                 "mean": mean["time_vs_exhaustive_pct"]}
        for rule, c in choices.items():
            p_best = mcnemar_two_sided(correct[c], correct[best])
            out.append({"draw": draw, "learner": learner, "schedule": schedule, "rule": rule,
                        "choice": names[c], "is_default": c == default, "rank": int(rank[c]),
                        "accuracy": float(scores[c]), "vs_default": float(scores[c] - scores[default]),
                        "vs_best": float(scores[c] - scores[best]), "p_vs_best": p_best,
                        "not_worse_than_default": bool(scores[c] >= scores[default]),
                        "not_sig_worse_than_best": bool(not (p_best < LEVEL and scores[c] < scores[best])),
                        "time_pct": float(times[rule]),
                        "claim_beat_default": vs.get("beat_baseline") if rule != "mean" else None,
                        "confirmation_difference": vs.get("difference"), "confirmation_p": vs.get("pvalue"),
                        "default_rank": int(rank[default])})
    return out


def summary(rows: list[dict]) -> list[dict]:
    out = []
    for schedule in SCHEDULES:
        for rule in RULES:
            rs = [r for r in rows if r["schedule"] == schedule and r["rule"] == rule]
            if not rs:
                continue
            out.append({"schedule": schedule, "rule": rule, "cells": len(rs),
                        "both_targets": sum(r["not_worse_than_default"] and r["not_sig_worse_than_best"] for r in rs),
                        "not_worse_than_default": sum(r["not_worse_than_default"] for r in rs),
                        "not_sig_worse_than_best": sum(r["not_sig_worse_than_best"] for r in rs),
                        "mean_vs_best": float(np.mean([r["vs_best"] for r in rs])),
                        "mean_vs_default": float(np.mean([r["vs_default"] for r in rs])),
                        "worst_vs_default": float(np.min([r["vs_default"] for r in rs])),
                        "mean_rank": float(np.mean([r["rank"] for r in rs])),
                        "kept_default": sum(r["is_default"] for r in rs),
                        "mean_time_pct": float(np.mean([r["time_pct"] for r in rs]))})
    return out


#: Last tie-break: the gate must pay to be chosen (issue 24: "unless a benchmark shows the gate pays").
PREFERENCE = {"race + evidence": 0, "mean": 1, "race + gate": 2}


def choose(summ: list[dict]) -> dict[str, str]:
    """Per schedule: most cells meeting both targets, then the smaller mean distance to the best, then time,
    then :data:`PREFERENCE`."""
    out = {}
    for schedule in SCHEDULES:
        rs = [s for s in summ if s["schedule"] == schedule]
        if rs:
            out[schedule] = min(rs, key=lambda s: (-s["both_targets"], -round(s["mean_vs_best"], 9),
                                                   round(s["mean_time_pct"], 6), PREFERENCE[s["rule"]]))["rule"]
    return out


def markdown(res: dict) -> str:
    lines = ["# Survival rule per schedule (issue 24): race + gate, race + evidence, published mean rule", "",
             f"Cells: {', '.join(res['cells'])} (draw/learner; 20,000 instances, 16,000 train / 4,000 evaluation). "
             "Targets: never worse than the default (exhaustive accuracy), and not significantly worse than the "
             f"exhaustive best (two-sided exact McNemar on the evaluation examples, level {LEVEL}). Differences in "
             "points of exhaustive accuracy. Source runs: " + ", ".join(f"`{t}`" for t in res["tags"]) + ".", ""]
    lines += [md_table(["schedule", "rule", "both targets", "never worse than default", "not sig. worse than best",
                        "mean vs best", "mean vs default", "worst vs default", "mean rank", "kept the default",
                        "mean % of exhaustive time"],
                       [[s["schedule"], s["rule"], f"{s['both_targets']}/{s['cells']}",
                         f"{s['not_worse_than_default']}/{s['cells']}", f"{s['not_sig_worse_than_best']}/{s['cells']}",
                         f"{100 * s['mean_vs_best']:+.2f}", f"{100 * s['mean_vs_default']:+.2f}",
                         f"{100 * s['worst_vs_default']:+.2f}", f"{s['mean_rank']:.1f}",
                         f"{s['kept_default']}/{s['cells']}", f"{s['mean_time_pct']:.1f}"] for s in res["summary"]]),
              "", "Chosen default per schedule (most cells meeting both targets, then the smaller mean distance to "
              "the best, then less time, then evidence before mean before gate: the gate must pay to be chosen): " + ", ".join(f"**{k}: {v}**" for k, v in res["choice"].items()), "",
              "## Cells", ""]
    lines += [md_table(["draw", "learner", "schedule", "rule", "rank (default's)", "vs default", "vs best (p)",
                        "claim: beat default (confirmation diff, p)", "% time"],
                       [[r["draw"], r["learner"], r["schedule"], r["rule"], f"{r['rank']} ({r['default_rank']})",
                         f"{100 * r['vs_default']:+.2f}", f"{100 * r['vs_best']:+.2f} ({r['p_vs_best']:.3g})",
                         "-" if r["claim_beat_default"] is None else
                         f"{r['claim_beat_default']} ({100 * (r['confirmation_difference'] or 0):+.2f}, "
                         f"{r['confirmation_p'] if r['confirmation_p'] is not None else float('nan'):.3g})",
                         f"{r['time_pct']:.1f}"] for r in res["rows"]]), ""]
    return "\n".join(lines)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="progressive.py rule-choice", description=__doc__.split("\n")[0])
    ap.add_argument("--tags", required=True,
                    help="comma-separated progressive.py lemma result tags; 'tag:draw/learner' takes one cell")
    args = ap.parse_args(argv)
    cache = json.loads(CACHE.read_text())
    rows, cells, tags = [], [], args.tags.split(",")
    for entry in tags:
        tag, _, only = entry.partition(":")  # "tag:draw/learner" takes one cell of a run's file
        res = json.loads((RESULTS / f"progressive_lemma_{tag}.json").read_text())
        for draw, learners in res["draws"].items():
            for learner in learners:
                if only and only != f"{draw}/{learner}":
                    continue
                if f"{draw}/{learner}" in cells:
                    raise ValueError(f"cell {draw}/{learner} given twice")
                rows += cell_rows(res, cache, draw, learner)
                cells.append(f"{draw}/{learner}")
    summ = summary(rows)
    out = {"tags": tags, "cells": cells, "level": LEVEL, "rows": rows, "summary": summ, "choice": choose(summ)}
    write_results("progressive_rule_choice", out, markdown(out))
    print(markdown(out))
    return out
