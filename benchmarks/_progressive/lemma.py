"""Wrapped progressive sampling (Paramsearch, PSearch; old and race survival) vs exhaustive search, Dutch lemmas.

Data: two independent draws of ``--n-instances`` (default 20,000; ``--quick``: 6,000) Dutch word
forms (8 letter features; class = suffix transformation, ~1,900 classes):

- ``bundled``: the first of a fixed shuffle (``numpy.random.default_rng(seed).permutation``)
  of certa's ``load_nl_lemma`` (70,000 forms), as in every earlier run;
- ``lookup3`` (development draw for the constants of issue 14's rerun): the ``n`` forms after ``lookup2``;
  ``lookup4``, ``lookup5``, ...: the next slices of ``n`` (issue 24's draws for the survival-rule choice);
- ``lookup2``: a second draw from the same lookup table (``/work/shared/data/nl-lemma-lookup.tsv.gz``,
  or ``--lookup``), disjoint from the bundled 70,000: ``scripts/build_datasets.py`` filters the
  table to its 205,650 eligible pairs and orders them at random (seeded); the bundled set is the
  first 70,000 of that order, this draw the next ``n``.

One stratified 80/20 train/evaluation split (``SubsetPlan(seed)``) per draw is shared by every method:

- exhaustive: every setting trained on the whole training part, scored on the whole
  evaluation part (the reference ranking, ties share the best rank). The scores (and each
  setting's per-example correctness, packed) are cached in
  ``benchmarks/results/progressive_lemma_exhaustive.json`` (they do not depend on the survival
  rule); ``--reuse-exhaustive`` takes the ranking from there instead of recomputing it, and times
  every ``--sample-every``-th setting (default 10th) of the exhaustive search in the same job, so
  that both sides of the time shares are measured under the same load (the full run's time is
  kept in the JSON as ``full_run_wall_s``);
- ProgressiveSearchCV with ``schedule="paramsearch"`` and ``"psearch"``, each with its published
  survival rule (``"mean"``; PSearch with its 20 % floor) and with ``survival="race"`` (paired
  exact McNemar tests against the round's leader at ``--confidence``, Bonferroni over the
  settings compared, the learner's default setting kept to the end as the baseline);
- scikit-learn's ``HalvingGridSearchCV(resource="n_samples", factor=3)`` with
  ``cv=[(train part, evaluation part)]`` (it subsamples both parts, unstratified).

Per learner (k-NN in the spirit of TiMBL IB1, decision tree in the spirit of C4.5; grids in
``certa.learners``) it reports the exhaustive rank of each method's top 5 settings (the
PSearch paper's Tables 3/6), the error reduction of the chosen setting over the learner's
default setting, both scored as in the exhaustive search (Tables 4/7), wall time and summed
evaluation time against exhaustive (Tables 5/8), for the race rule whether the final round
showed the choice better than the default, and the rank and time of Halving's choice.

Run: ``nice python3 benchmarks/progressive.py lemma --n-jobs 1`` (both draws; about 30-40
minutes on a shared 2-core machine) or ``--quick``. Writes
``benchmarks/results/progressive_lemma{,_quick}{_tag}.{json,md}``.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.util
import itertools
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from _common import RESULTS, ROOT, save
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import HalvingGridSearchCV

from certa.datasets import (
    _nl_features,
    load_nl_lemma,
)
from certa.engine import EstimatorEvaluator, run
from certa.engine.candidates import candidates_from_grid
from certa.learners import (
    knn_default_params,
    knn_grid,
    knn_pipeline,
    tree_default_params,
    tree_grid,
    tree_pipeline,
)
from certa.search._common import rank_scores
from certa.search.progressive import ProgressiveSearchCV
from certa.strategies.progressive import ProgressiveSampling, SubsetPlan

LEARNERS = {"knn": (knn_pipeline, knn_grid, knn_default_params),
            "tree": (tree_pipeline, tree_grid, tree_default_params)}
DEFAULT_LOOKUP = Path("/work/shared/data")
CACHE = RESULTS / "progressive_lemma_exhaustive.json"
#: (label, schedule, survival) of every progressive run; "mean" is each schedule's published rule.
PROGRESSIVE = [("paramsearch", "paramsearch", "mean"), ("psearch", "psearch", "mean"),
               ("paramsearch+race", "paramsearch", "race"), ("psearch+race", "psearch", "race")]


def load_draw(name: str, n: int, seed: int, lookup_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of one draw of ``n`` instances (see the module docstring)."""
    if name == "bundled":
        X, y = load_nl_lemma(return_X_y=True)
        keep = np.random.default_rng(seed).permutation(len(y))[:n]
        return X[keep], y[keep]
    if name.startswith("lookup") and name[6:].isdigit() and int(name[6:]) >= 2:
        spec = importlib.util.spec_from_file_location("build_datasets", ROOT / "scripts" / "build_datasets.py")
        bd = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bd)
        bd.NL_N = 10 ** 9  # the whole random order of the eligible pairs, not only the bundled 70,000
        rng = np.random.default_rng(np.random.SeedSequence(bd.SEED).spawn(3)[2])
        rows, stats = bd.build_nl_lemma(lookup_dir, rng)
        bundled = load_nl_lemma()
        if [r[0] for r in rows[:len(bundled.forms)]] != list(bundled.forms):
            raise RuntimeError("the lookup table does not reproduce the bundled data set; wrong --lookup?")
        rest = rows[len(bundled.forms):]
        if len(rest) < n:
            raise ValueError(f"only {len(rest)} forms outside the bundled set, asked for {n}")
        # lookup2: the first n forms after the bundled 70,000; lookup3 (development draw for issue 14's
        # constants): the n after those; lookupK: the (K-1)-th slice of n
        start = (int(name[6:]) - 2) * n
        if len(rest) < start + n:
            raise ValueError(f"only {len(rest)} forms outside the bundled set, asked for {start + n}")
        take = rest[start:start + n]
        forms = np.array([r[0] for r in take], dtype=object)
        return _nl_features(forms), np.array([r[2] for r in take], dtype=object)
    raise ValueError(f"unknown draw {name!r}; expected 'bundled' or 'lookupK' (K >= 2)")


def _cap_arg(text: str):
    if text in ("auto", "budget"):
        return text
    return int(text) if text.isdigit() else float(text)


def _num_or_auto(text: str):
    return text if text == "auto" else float(text)


def _int_none_auto(text: str):
    return text if text == "auto" else None if text == "none" else int(text)


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _grid_token(cands) -> str:
    return hashlib.sha256("\n".join(c.name for c in cands).encode()).hexdigest()[:16]


def _pack(correct: np.ndarray) -> str:
    return base64.b64encode(np.packbits(correct.astype(bool))).decode()


def _unpack(text: str, n: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(base64.b64decode(text), dtype=np.uint8))[:n].astype(bool)


def exhaustive(est, grid, X, y, seed, n_jobs, cache_transformers):
    """Every setting on the whole training part, scored on the whole evaluation part."""
    plan = SubsetPlan(seed, 0.8, eval_fraction=None)
    n_train = plan.n_train(len(y))
    cands = candidates_from_grid(grid)
    load0 = list(os.getloadavg())
    t0 = time.perf_counter()
    sel = run(ProgressiveSampling(n_train, [n_train]),
              EstimatorEvaluator(est, X, y, plan, cache_transformers=cache_transformers, per_example=True),
              cands, random_state=seed, n_jobs=n_jobs)
    wall = time.perf_counter() - t0
    scores = np.asarray(sel.result["estimates"], dtype=float)
    _, test = plan.parts(y, len(y))
    correct = []
    for c in cands:
        key = [k for k in sel.payloads if f"/c{c.index}/" in k]
        pay = sel.payloads[key[0]]
        if not np.array_equal(pay["test_index"], test):
            raise RuntimeError("exhaustive evaluation part differs between settings")
        correct.append(np.asarray(pay["per_example"], dtype=bool))
    return {"settings": [c.name for c in cands], "grid": _grid_token(cands), "scores": scores.tolist(),
            "wall_s": wall, "eval_s": float(sel.evaluations["duration"].sum()), "n_jobs": n_jobs,
            "load_average_start": load0, "load_average_end": list(os.getloadavg()),
            "n_eval": len(test), "correct": [_pack(c) for c in correct],
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "unset"),
            "recorded_at": time.strftime("%Y-%m-%d %H:%M:%S %z")}


def time_exhaustive_sample(est, grid, X, y, seed, n_jobs, cache_transformers, every):
    """Time every ``every``-th setting (grid order) as the exhaustive search runs it; scaled to the grid.

    The exhaustive ranking comes from the cache; this puts the exhaustive side of the time
    shares in the same job as the progressive runs. With the grid's parameters varying fastest
    last, every 10th setting covers every value of the slowest parameters.
    """
    plan = SubsetPlan(seed, 0.8, eval_fraction=None)
    cands = candidates_from_grid(grid)
    sample = [dict(c.params) for c in cands[::every]]
    t0 = time.perf_counter()
    sel = run(ProgressiveSampling(plan.n_train(len(y)), [plan.n_train(len(y))]),
              EstimatorEvaluator(est, X, y, plan, cache_transformers=cache_transformers, per_example=True),
              sample, random_state=seed, n_jobs=n_jobs)
    wall = time.perf_counter() - t0
    scale = len(cands) / len(sample)
    return {"n_timed": len(sample), "every": every, "wall_s_timed": wall, "wall_s": wall * scale,
            "load_average_end": list(os.getloadavg()),
            "eval_s": float(sel.evaluations["duration"].sum()) * scale,
            "scores_timed": np.asarray(sel.result["estimates"], dtype=float).tolist()}


def cache_key(draw, learner, n, seed, quick, cache_transformers) -> str:
    return f"{draw}/{learner}/n{n}/seed{seed}/{'quick' if quick else 'full'}/cache{int(cache_transformers)}"


def read_cache() -> dict:
    return json.loads(CACHE.read_text()) if CACHE.exists() else {}


def write_cache(key: str, entry: dict) -> None:
    import fcntl

    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with open(CACHE.with_suffix(".lock"), "w") as lock:  # runs for different draws may share the file
        fcntl.flock(lock, fcntl.LOCK_EX)
        cache = read_cache()
        cache[key] = entry
        tmp = CACHE.with_suffix(".tmp")
        tmp.write_text(json.dumps(cache, indent=1, default=float))
        tmp.replace(CACHE)


def find_index(cands, params):
    for c in cands:
        if c.params == params:
            return c.index
    raise KeyError(f"setting {params} is not in the grid")


def get_exhaustive(name, draw, args, X, y):
    make, grid_fn, _ = LEARNERS[name]
    key = cache_key(draw, name, len(y), args.seed, args.quick, args.cache)
    cands = candidates_from_grid(grid_fn(args.quick))
    cached = read_cache().get(key)
    if args.reuse_exhaustive and cached is not None and cached["grid"] == _grid_token(cands):
        cached = dict(cached, reused=True)
        print(f"[{draw}/{name}] exhaustive: reused from {CACHE.name} ({cached['recorded_at']})", flush=True)
        return cands, cached
    entry = exhaustive(make(), grid_fn(args.quick), X, y, args.seed, args.n_jobs, args.cache)
    write_cache(key, entry)
    print(f"[{draw}/{name}] exhaustive: {len(cands)} settings, {entry['wall_s']:.0f} s", flush=True)
    return cands, dict(entry, reused=False)


def _chosen_vs_default(ex_correct, chosen, default):
    """Exhaustive-side accuracy difference chosen - default with a 95 % paired (Wald) interval."""
    a, b = ex_correct[chosen].astype(float), ex_correct[default].astype(float)
    d = a - b
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.nan
    return float(d.mean()), float(d.mean() - half), float(d.mean() + half)


def one_learner(name, draw, args, X, y):
    make, grid_fn, default_fn = LEARNERS[name]
    grid = grid_fn(args.quick)
    cands, ex = get_exhaustive(name, draw, args, X, y)
    ex_scores = np.asarray(ex["scores"], dtype=float)
    ex_rank = rank_scores(ex_scores)
    ex_correct = np.array([_unpack(t, ex["n_eval"]) for t in ex["correct"]])
    ex_wall, ex_cpu = ex["wall_s"], ex["eval_s"]
    timing = None
    if ex["reused"] and args.sample_every > 0:
        # the ranking is cached; the exhaustive side of the time shares is timed here, in this job
        timing = time_exhaustive_sample(make(), grid, X, y, args.seed, args.n_jobs, args.cache, args.sample_every)
        if not np.allclose(timing["scores_timed"], ex_scores[::args.sample_every]):
            raise RuntimeError("the cached exhaustive scores differ from a re-run of the same settings")
        ex_wall, ex_cpu = timing["wall_s"], timing["eval_s"]
        print(f"[{draw}/{name}] exhaustive time from {timing['n_timed']} settings timed here: "
              f"{timing['wall_s_timed']:.0f} s -> {ex_wall:.0f} s for the grid", flush=True)
    default = find_index(cands, default_fn())
    err_default = 1 - ex_scores[default]
    out = {"n_settings": len(cands), "exhaustive": {
        "wall_s": ex_wall, "eval_s": ex_cpu, "reused_from_cache": ex["reused"], "recorded_at": ex["recorded_at"],
        "full_run_wall_s": ex["wall_s"], "timed_sample": timing,
        "load_average_start": ex["load_average_start"], "load_average_end": ex["load_average_end"],
        "best": cands[int(np.argmin(ex_rank))].name, "best_accuracy": float(ex_scores.max()),
        "n_tied_best": int((ex_rank == 1).sum()), "top5_accuracy": sorted(ex_scores.tolist())[::-1][:5]},
        "default": {"setting": cands[default].name, "accuracy": float(ex_scores[default]),
                    "exhaustive_rank": int(ex_rank[default])}}
    for label, schedule, survival in PROGRESSIVE:
        if args.only and label not in args.only:
            continue
        kw = {"survival": survival}
        if survival == "race":
            kw.update(confidence=args.confidence, baseline=default_fn(), cap=args.cap, budget=args.budget,
                      confirm_folds=args.confirm_folds)
        t0 = time.perf_counter()
        search = ProgressiveSearchCV(make(), grid, schedule=schedule, random_state=args.seed, n_jobs=args.n_jobs,
                                     refit=False, cache_transformers=args.cache, **kw).fit(X, y)
        wall = time.perf_counter() - t0
        top5 = [int(c) for c in search.selection_.result["ranking"][:5]]
        chosen = top5[0]
        acc = float(ex_scores[chosen])
        diff, lo, hi = _chosen_vs_default(ex_correct, chosen, default)
        eval_s = float(search.selection_.evaluations["duration"].sum())
        row = {"schedule": schedule, "survival": survival,
               "wall_s": wall, "eval_s": eval_s,
               "time_vs_exhaustive_pct": 100 * wall / ex_wall,
               "eval_time_vs_exhaustive_pct": 100 * eval_s / ex_cpu,
               "chosen": cands[chosen].name, "chosen_accuracy": acc,
               "chosen_is_default": chosen == default,
               "error_reduction_vs_default_pct": 100 * (err_default - (1 - acc)) / err_default,
               "exhaustive_diff_vs_default": diff, "exhaustive_diff_vs_default_ci95": [lo, hi],
               "top5_exhaustive_ranks": [int(ex_rank[c]) for c in top5],
               "top5": [cands[c].name for c in top5],
               "rounds": search.round_summary_.to_dict(orient="records"),
               "n_evaluations": len(search.selection_.evaluations), "load_average_end": list(os.getloadavg())}
        vs = getattr(search, "vs_baseline_", None)
        if vs is not None:
            row["vs_baseline"] = {k: (cands[find_index(cands, v)].name if k in ("baseline", "choice", "challenger") and
                                      isinstance(v, dict) else v.item() if hasattr(v, "item") else v)
                                  for k, v in vs.items()}
            ev = search.selection_.evaluations
            folds = ev[ev["index"].map(len) == 3]
            row["confirmation_eval_s"] = float(folds["duration"].sum())
            row["confirmation_fits"] = len(folds)
        out[label] = row
        print(f"[{draw}/{name}] {label}: rank {row['top5_exhaustive_ranks']}, {wall:.0f} s "
              f"({row['time_vs_exhaustive_pct']:.1f} %)", flush=True)
    if not args.no_halving:
        plan = SubsetPlan(args.seed)
        train, test = plan.parts(y, len(y))
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            halving = HalvingGridSearchCV(make(), grid, resource="n_samples", factor=3, cv=[(train, test)],
                                          random_state=args.seed, n_jobs=args.n_jobs, refit=False,
                                          error_score=np.nan).fit(X, y)
        wall = time.perf_counter() - t0
        chosen = find_index(cands, halving.best_params_)
        acc = float(ex_scores[chosen])
        out["halving"] = {"wall_s": wall, "time_vs_exhaustive_pct": 100 * wall / ex_wall,
                          "chosen": cands[chosen].name, "chosen_accuracy": acc,
                          "exhaustive_rank": int(ex_rank[chosen]),
                          "error_reduction_vs_default_pct": 100 * (err_default - (1 - acc)) / err_default,
                          "n_iterations": int(halving.n_iterations_), "load_average_end": list(os.getloadavg()),
                          "n_resources": [int(r) for r in halving.n_resources_]}
        print(f"[{draw}/{name}] halving: rank {out['halving']['exhaustive_rank']}, {wall:.0f} s", flush=True)
    return out


def _fmt_ci(row):
    lo, hi = row["exhaustive_diff_vs_default_ci95"]
    return f"{100 * row['exhaustive_diff_vs_default']:+.2f} [{100 * lo:+.2f}, {100 * hi:+.2f}]"


def _load(row) -> str:
    la = row.get("load_average_end")
    return "-" if not la else f"{la[0]:.1f}"


def _parts_note(res) -> str:
    if not res.get("parts"):
        return ""
    timing = res.get("parts_timing")
    if not timing:  # older merges did not record when each part ran
        return (f" Merged from {len(res['parts'])} runs ({', '.join(res['parts'])}), one per draw and learner, run as "
                "separate processes at the same time (each compares its own methods under the same load; the load "
                "averages are the highest of the runs).")
    runs = "; ".join(f"`{t['tag']}`: " + (f"{t['started_at']} to {t['finished_at']}" if t["started_at"] else
                                          "times not recorded in its result file")
                     + f", 1-min load {t['load_average_start'][0]:.1f} -> {t['load_average_end'][0]:.1f}"
                     for t in timing)
    how = {True: "made at overlapping times", False: "made one after another, never two at once",
           None: "(whether they overlapped is not recorded in their result files)"}[res.get("parts_overlap")]
    return (f" Merged from {len(timing)} runs {how} (each compares its own methods "
            f"under the same load; the load averages above are the highest of the runs): {runs}.")


def markdown(res) -> str:
    lines = [f"# Progressive sampling on Dutch lemmatisation ({'quick' if res['quick'] else 'full'})", "",
             f"Two independent draws of {res['n_instances']} instances (`bundled`: first of a fixed shuffle of "
             f"`load_nl_lemma`, seed {res['seed']}; `lookup2`: the next {res['n_instances']} eligible forms of the "
             "lookup table after the bundled 70,000, see the script), each split once, stratified 80/20: "
             f"{res['n_train']} train / {res['n_eval']} evaluation; n_jobs={res['n_jobs']}, under `nice`, on a "
             f"shared 2-core machine (1-min load average {res['load_average_start'][0]:.1f} at the start, "
             f"{res['load_average_end'][0]:.1f} at the end), OMP_NUM_THREADS={res.get('omp_num_threads', 'unset')}. "
             f"cache_transformers={res['cache_transformers']} in every "
             "certa search. Ranks are in the exhaustive ranking (1 = best; ties share the best rank). Accuracy of "
             "every chosen setting is its exhaustive score (whole training part, whole evaluation part); error "
             "reduction is relative to the learner's default setting; 'vs default' is the exhaustive accuracy "
             "difference chosen - default in points with a 95 % paired interval over the evaluation examples. "
             f"Race: confidence {res['confidence']}, default setting as baseline, cap {res.get('race_cap', 0.5)}, "
             f"budget {res.get('race_budget', '-')}, confirmation folds {res.get('race_confirm_folds', 'none')} "
             "('auto': the front's defaults, cap='budget' with budget 2 and 5 folds)."
             + _parts_note(res), ""]
    head = ("| draw | learner | method | survival | exhaustive ranks of top 5 | chosen accuracy | error reduction vs default "
            "| vs default (exhaustive, points) | wall time (s) | % of exhaustive wall | % of exhaustive eval time "
            "| 1-min load after |")
    lines += [head, "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for draw, learners in res["draws"].items():
        for name, r in learners.items():
            ex = r["exhaustive"]
            d_acc = r["default"]["accuracy"]
            reused = "" if not ex["reused_from_cache"] else \
                " (ranking and time cached: another job)" if not ex["timed_sample"] else \
                f" (ranking cached; time: {ex['timed_sample']['n_timed']} settings timed in this job, scaled)"
            lines.append(f"| {draw} | {name} ({r['n_settings']}) | exhaustive{reused} | - | 1 | {ex['best_accuracy']:.4f} | "
                         f"{100 * ((1 - d_acc) - (1 - ex['best_accuracy'])) / (1 - d_acc):.1f} % | "
                         f"{100 * (ex['best_accuracy'] - d_acc):+.2f} | {ex['wall_s']:.0f} | 100 | 100 | "
                         f"{_load(ex['timed_sample'] if ex['timed_sample'] else ex)} |")
            for label, schedule, survival in PROGRESSIVE:
                if label not in r:
                    continue
                p = r[label]
                rule = survival + (" + 20 % floor" if schedule == "psearch" else "")
                lines.append(f"| {draw} | {name} | {schedule} | {rule} | {', '.join(map(str, p['top5_exhaustive_ranks']))} | "
                             f"{p['chosen_accuracy']:.4f}{' (default)' if p['chosen_is_default'] else ''} | "
                             f"{p['error_reduction_vs_default_pct']:.1f} % | {_fmt_ci(p)} | {p['wall_s']:.0f} | "
                             f"{p['time_vs_exhaustive_pct']:.1f} | {p['eval_time_vs_exhaustive_pct']:.1f} | {_load(p)} |")
            if "halving" in r:
                h = r["halving"]
                lines.append(f"| {draw} | {name} | HalvingGridSearchCV | - | {h['exhaustive_rank']} (choice only) | "
                             f"{h['chosen_accuracy']:.4f} | {h['error_reduction_vs_default_pct']:.1f} % | - | "
                             f"{h['wall_s']:.0f} | {h['time_vs_exhaustive_pct']:.1f} | - | {_load(h)} |")
    lines += ["", "Default settings (exhaustive accuracy, rank): " + "; ".join(
        f"{draw}/{k}: `{v['default']['setting']}` ({v['default']['accuracy']:.4f}, rank {v['default']['exhaustive_rank']})"
        for draw, learners in res["draws"].items() for k, v in learners.items()), ""]
    lines += ["## Race: the verdict on the default", "",
              "Evidence: 'final round' (the final round's examples, Bonferroni over the settings compared) or "
              "'K-fold CV' (the final round chooses the challenger; challenger and default are then scored by K-fold "
              "cross-validation over the training part, one one-sided test). Differences in points.", "",
              "| draw | learner | schedule | challenger | evidence | examples | difference to default | interval | "
              "p (one-sided) | beat default | final round: difference, p (uncorrected) | confirmation fits, time (s) |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for draw, learners in res["draws"].items():
        for name, r in learners.items():
            for label, schedule, survival in PROGRESSIVE:
                vs = r.get(label, {}).get("vs_baseline")
                if survival != "race" or not vs:
                    continue
                fr = vs.get("final_round") or {}
                ev = vs.get("evidence", "final round")
                ev = "K-fold CV".replace("K", ev.split("-")[0]) if "cross-validation" in ev else "final round"
                lines.append(f"| {draw} | {name} | {schedule} | `{vs.get('challenger')}` | {ev} | {vs['n_examples']} | "
                             f"{100 * vs['difference']:+.2f} | [{100 * vs['ci_low']:+.2f}, {100 * vs['ci_high']:+.2f}] | "
                             f"{vs['pvalue_adjusted']:.3g} | {vs['beat_baseline']} | "
                             + (f"{100 * fr['difference']:+.2f}, {fr['pvalue']:.3g}" if fr else "-") + " | "
                             + f"{r[label].get('confirmation_fits', 0)}, {r[label].get('confirmation_eval_s', 0):.1f} |")
    lines += ["", "## Rounds", ""]
    for draw, learners in res["draws"].items():
        for name, r in learners.items():
            for label, _, _ in PROGRESSIVE:
                if label not in r:
                    continue
                lines += [f"**{draw}, {name}, {label}** (chosen: `{r[label]['chosen']}`)", "",
                          "| round | size | eval size | evaluated | survived | added by floor | best score | eval time (s) |",
                          "|---|---|---|---|---|---|---|---|"]
                for row in r[label]["rounds"]:
                    lines.append(f"| {row['round']} | {row['size']} | {row['eval_size']} | {row['n_evaluated']} | "
                                 f"{row['n_survived']} | {row['n_added_by_floor']} | {row['best_score']:.4f} | "
                                 f"{row['time']:.1f} |")
                lines.append("")
    lines += ["## Acceptance", ""]
    for line in acceptance(res):
        lines.append(f"- {line}")
    return "\n".join(lines) + "\n"


def _time_source(ex) -> str:
    if not ex["reused_from_cache"]:
        return ""
    if ex.get("timed_sample"):
        return ", exhaustive time scaled from a sample timed in this job"
    return ", exhaustive time from the cached run: another job"


def acceptance(res) -> list[str]:
    out = []
    for draw, learners in res["draws"].items():
        for name, r in learners.items():
            for label, schedule, survival in PROGRESSIVE:
                if survival != "race" or label not in r:
                    continue
                p = r[label]
                rank = p["top5_exhaustive_ranks"][0]
                not_worse = p["chosen_accuracy"] >= r["default"]["accuracy"]
                line = (f"{draw}/{name}/{schedule}+race: choice rank {rank} ({'met' if rank <= 5 else 'NOT met'}: top 5), "
                        f"{'not worse' if not_worse else 'WORSE'} than the default "
                        f"({p['chosen_accuracy']:.4f} vs {r['default']['accuracy']:.4f})")
                if name == "knn" and schedule == "psearch":
                    line += (f"; time {p['time_vs_exhaustive_pct']:.1f} % of exhaustive "
                             f"({'met' if p['time_vs_exhaustive_pct'] <= 10 else 'NOT met'}: <= 10 %"
                             f"{_time_source(r['exhaustive'])})")
                out.append(line)
    return out


def combine(args) -> dict:
    """Merge the result files of several runs (same settings, different draws or learners) into one."""
    out = RESULTS
    parts = [json.loads((out / f"progressive_lemma{'_quick' if args.quick else ''}_{t}.json").read_text())
             for t in args.combine.split(",")]
    res = dict(parts[0], draws={}, parts=args.combine.split(","))
    res["load_average_start"] = [max(p["load_average_start"][i] for p in parts) for i in range(3)]
    res["load_average_end"] = [max(p["load_average_end"][i] for p in parts) for i in range(3)]
    res["total_wall_s"] = max(p["total_wall_s"] for p in parts)
    timing = []
    for tag, p in zip(args.combine.split(","), parts, strict=True):
        timing.append({"tag": tag, "started_at": p.get("started_at"), "finished_at": p.get("finished_at"),
                       "load_average_start": p["load_average_start"], "load_average_end": p["load_average_end"]})
    res["parts_timing"] = timing
    if all(t["started_at"] and t["finished_at"] for t in timing):
        timing.sort(key=lambda t: t["started_at"])
        res["parts_overlap"] = any(b["started_at"] < a["finished_at"] for a, b in itertools.pairwise(timing))
    else:  # runs made before the script recorded their times
        res["parts_overlap"] = None
    for p in parts:
        for draw, learners in p["draws"].items():
            for name, rows in learners.items():  # runs of the same learner add their method rows
                res["draws"].setdefault(draw, {}).setdefault(name, {}).update(rows)
    stem = "progressive_lemma" + ("_quick" if args.quick else "") + (f"_{args.tag}" if args.tag else "")
    save(stem, res, markdown(res), results_dir=out)
    print(markdown(res))
    return res


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="progressive.py lemma", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="6,000 instances and 36-setting grids")
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--n-instances", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--draws", default="bundled,lookup2")
    ap.add_argument("--learners", default="knn,tree")
    ap.add_argument("--only", default="", help="comma-separated progressive labels to run (default: all)")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--cap", default="auto", type=_cap_arg,
                    help="race cap: 'auto' (the front's default), 'budget', a fraction (0.5: the earlier runs) or a count")
    ap.add_argument("--budget", default="auto", type=_num_or_auto,
                    help="race with cap='budget': budget in units of the halving race's cost ('auto': the default)")
    ap.add_argument("--confirm-folds", default="auto", type=_int_none_auto,
                    help="race: folds of the final confirmation against the default ('none': the final round decides)")
    ap.add_argument("--lookup", type=Path, default=DEFAULT_LOOKUP, help="folder holding nl-lemma-lookup.tsv.gz")
    ap.add_argument("--exhaustive-only", action="store_true", help="compute and cache the exhaustive rankings only")
    ap.add_argument("--reuse-exhaustive", action="store_true",
                    help=f"take the exhaustive ranking from {CACHE.name} where it is there")
    ap.add_argument("--sample-every", type=int, default=10,
                    help="with --reuse-exhaustive: time every k-th setting of the exhaustive search in this job "
                         "(0: take the cached run's time)")
    ap.add_argument("--no-halving", action="store_true")
    ap.add_argument("--tag", default="", help="suffix of the result files (progressive_lemma<_quick><_tag>)")
    ap.add_argument("--no-cache", dest="cache", action="store_false",
                    help="refit the encoder for every setting (default: cache_transformers=True in the exhaustive "
                         "search and in every schedule alike)")
    ap.add_argument("--combine", default="",
                    help="comma-separated tags of finished runs (e.g. one per draw and learner, run in parallel) to "
                         "merge into the result files of --tag; runs nothing")
    args = ap.parse_args(argv)
    args.only = [s for s in args.only.split(",") if s]
    if args.combine:
        return combine(args)
    n_inst = args.n_instances or (6000 if args.quick else 20000)
    plan = SubsetPlan(args.seed)
    res = {"quick": args.quick, "n_instances": n_inst, "seed": args.seed, "n_jobs": args.n_jobs,
           "n_train": plan.n_train(n_inst), "n_eval": n_inst - plan.n_train(n_inst), "confidence": args.confidence,
           "race_cap": args.cap, "race_budget": args.budget, "race_confirm_folds": args.confirm_folds,
           "python": platform.python_version(), "cache_transformers": args.cache, "niceness": os.nice(0),
           "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "unset"),
           "load_average_start": list(os.getloadavg()), "started_at": _utc_now(), "draws": {}}
    t0 = time.perf_counter()
    for draw in args.draws.split(","):
        X, y = load_draw(draw, n_inst, args.seed, args.lookup)
        res["draws"][draw] = {}
        for name in args.learners.split(","):
            if args.exhaustive_only:
                get_exhaustive(name, draw, args, X, y)
                continue
            res["draws"][draw][name] = one_learner(name, draw, args, X, y)
    if args.exhaustive_only:
        return res
    res["total_wall_s"] = time.perf_counter() - t0
    res["load_average_end"] = list(os.getloadavg())
    res["finished_at"] = _utc_now()
    out = RESULTS
    out.mkdir(parents=True, exist_ok=True)
    stem = "progressive_lemma" + ("_quick" if args.quick else "") + (f"_{args.tag}" if args.tag else "")
    save(stem, res, markdown(res), results_dir=out)
    print(markdown(res))
    return res
