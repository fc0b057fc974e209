"""Calibration and price of the delta-correct stopping rule (issue 12).

Sections (run separately, then ``--report`` writes ``benchmarks/results/calibration.md``):

* ``families --delta D --runs R``: wrong-choice rate and mean evaluations of
  ``TopTwoThompson(1 - D, beta, stopping="glr")`` with and without tolerance on every
  family (simulated scores, :mod:`certa.planning.batch`), the one-sided binomial test of
  "rate <= delta" at level 0.01, and the ratio to ``T* kl(delta, 1 - delta)``.
  ``--tolerance-rows`` reruns only the rows with tolerance (same seeds) into the stored file.
* ``tolerance --delta D --runs R --runs-plain P``: the near-ties family with tolerance 0.2
  (cap 20,000 evaluations), against ``T*_eps kl`` and against the same family without
  tolerance (``P`` runs, capped runs counted at the cap).
* ``tdsa --runs R``: the real strategy (``certa.planning.simulate.simulate``, the ask/tell loop) on
  the FIESTA TDSA replay at 0.95, glr against bayes with the same sampling rule and seeds.
* ``paired --delta D --runs R``: the paired rule (``PairedElimination``, the default) on the
  Gaussian families' means and SDs with correlation 0, 0.5 and 0.9 between the candidates of a
  row, and on the TDSA replay with whole rows (paired) and with independent rows
  (:func:`certa.planning.batch.simulate_paired_batch`), with and without tolerance.
* ``gk16 --delta D --runs R``: the opt-in ``stopping="gk16"`` (the unknown-variance GLR with
  Garivier & Kaufmann's heuristic threshold ``log((1 + log t)/delta)``, not proven) with the same
  top-two sampling on all seven families (its statistic is the library's
  :func:`certa.strategies._gk16.gk16_statistic_batch`).
* ``paired-contrast --runs R``: the paired rule's contrast: evaluations relative to no contrast on
  the paired families, for the rows before the partner is fixed and its share of delta.
* ``overhead``: decision time per evaluation at 8, 100 and 1,000 candidates.
* ``decomposition --delta D --runs R``: where the price against ``T* kl`` goes, on the
  Gaussian families, every rule with the same sampling rule and seeds (see
  :func:`section_decomposition`).
"""
from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any

import numpy as np
from _common import (
    RESULTS,
    TDSA_MODELS8,
    binom_greater_p,
    loadavg,
    machine_info,
    md_section,
    tdsa_table,
    time_decisions,
)
from scipy.special import lambertw

from certa.planning.batch import (
    AccuracySampler,
    CorrelatedGaussianRows,
    GaussianSampler,
    ReplayRows,
    ReplaySampler,
    StudentTSampler,
    simulate_paired_batch,
    simulate_top_two_batch,
)
from certa.planning.lower_bound import (
    bernoulli_kl,
    characteristic_time,
    characteristic_time_unknown_variance,
)
from certa.strategies import _glr


def families() -> dict[str, dict[str, Any]]:
    """name -> sampler, tolerance used in the "with tolerance" rows, SDs (Gaussian only, for T*)."""
    t3_scale = 1 / math.sqrt(3.0)   # Student t with 3 df has variance 3: scale for SD 1
    return {
        "two_close (Gaussian, gap 1 SD)": dict(sampler=GaussianSampler([0.0, -1.0], [1.0, 1.0]), eps=0.1,
                                               gaussian=True),
        "five_spread (Gaussian, gaps 1.5 SD)": dict(sampler=GaussianSampler([0.0, -1.5, -3.0, -4.5, -6.0], 1.0),
                                                    eps=0.1, gaussian=True),
        "best_plus_9_near_ties (Gaussian, gap 2 SD)": dict(
            sampler=GaussianSampler([0.0] + [-2.0 - 0.02 * k for k in range(9)], 1.0), eps=0.1, gaussian=True),
        "variances 4x (Gaussian, SDs 1 and 2)": dict(
            sampler=GaussianSampler([0.0, -1.0, -1.5, -2.0], [2.0, 1.0, 2.0, 1.0]), eps=0.1, gaussian=True),
        "bounded (accuracy on 100 items, p 0.80/0.75/0.72/0.70)": dict(
            sampler=AccuracySampler([0.80, 0.75, 0.72, 0.70], 100), eps=0.01, gaussian=False),
        "heavy tails (Student t3, SD 1, gaps 1 SD)": dict(
            sampler=StudentTSampler([0.0, -1.0, -2.0], t3_scale, df=3.0), eps=0.1, gaussian=False),
        "TDSA replay (8 models, FIESTA data)": dict(sampler=ReplaySampler(tdsa_table(TDSA_MODELS8)), eps=0.005,
                                                    gaussian=False),
    }


def _lower(sampler, delta: float, eps: float) -> float | None:
    if not isinstance(sampler, (GaussianSampler, CorrelatedGaussianRows)):
        return None
    t, _ = characteristic_time(sampler.means, sampler.sds, eps)
    return float(t * bernoulli_kl(delta, 1 - delta))


def _top_two_rows(delta: float, runs: int, beta: Any, seed: int, tolerance_only: bool = False,
                  part: str | None = None, stop_rule=None) -> list[dict[str, Any]]:
    """Top-two sampling on every family (part ``i/n`` of them), without and with its tolerance."""
    rows = []
    i_part, n_parts = (int(x) for x in part.split("/")) if part else (0, 1)
    for k, (name, fam) in enumerate(families().items()):
        if k % n_parts != i_part:
            continue
        for eps in ((fam["eps"],) if tolerance_only else (0.0, fam["eps"])):
            t0 = time.process_time()
            kw = {} if stop_rule is None else {"stop_rule": stop_rule(delta, eps)}
            rep = simulate_top_two_batch(fam["sampler"], confidence=1 - delta, beta=beta, tolerance=eps,
                                         n_runs=runs, max_evals=100_000, random_state=seed + 100 * k + (eps > 0),
                                         **kw)
            d = rep.to_dict()
            lb = _lower(fam["sampler"], delta, eps)
            d.update(family=name, delta=delta, tolerance=eps, beta=beta, cpu_s=time.process_time() - t0,
                     binom_p=binom_greater_p(d["wrong"], runs, delta), lower_bound=lb,
                     ratio=None if lb is None else d["evaluations_mean"] / lb)
            print(json.dumps(d), flush=True)
            rows.append(d)
    return rows


def section_families(delta: float, runs: int, beta: Any, seed: int, tolerance_only: bool = False) -> dict[str, Any]:
    rows = _top_two_rows(delta, runs, beta, seed, tolerance_only)
    return {"delta": delta, "runs": runs, "beta": beta, "seed": seed, "rows": rows}


TOL_MEANS = [-0.02 * k for k in range(10)] + [-1.0] * 5

CORRELATIONS = (0.0, 0.5, 0.9)


def paired_families() -> dict[str, dict[str, Any]]:
    """The Gaussian families' means and SDs with correlated rows, and the TDSA replay by rows."""
    out = {}
    for name, fam in families().items():
        if fam["gaussian"]:
            smp = fam["sampler"]
            for r in CORRELATIONS:
                out[f"{name}, correlation {r:g}"] = dict(sampler=CorrelatedGaussianRows(smp.means, smp.sds, r),
                                                        eps=fam["eps"])
    out["TDSA replay, paired rows"] = dict(sampler=ReplayRows(tdsa_table(TDSA_MODELS8), paired=True), eps=0.005)
    out["TDSA replay, independent rows"] = dict(sampler=ReplayRows(tdsa_table(TDSA_MODELS8), paired=False), eps=0.005)
    return out


def gk16_stop_rule(delta: float, eps: float):
    """The shipped ``stopping="gk16"`` decision for the batch driver (library statistic and threshold)."""
    from certa.strategies._gk16 import gk16_statistic_batch

    def rule(mean, v, n, evals):
        best, g = gk16_statistic_batch(mean, v, n, eps)
        limit = np.log((1.0 + np.log(np.maximum(evals, 1))) / delta)
        return g > limit, best
    return rule


def section_gk16(delta: float, runs: int, beta: Any, seed: int, part: str | None = None) -> dict[str, Any]:
    rows = _top_two_rows(delta, runs, beta, seed, part=part, stop_rule=gk16_stop_rule)
    return {"delta": delta, "runs": runs, "beta": beta, "seed": seed,
            "rule": "TopTwoThompson(stopping='gk16'): heuristic threshold, not proven", "rows": rows}


def section_paired(delta: float, runs: int, seed: int, tolerance: bool = True, part: str | None = None
                   ) -> dict[str, Any]:
    rows = []
    i_part, n_parts = (int(x) for x in part.split("/")) if part else (0, 1)
    for k, (name, fam) in enumerate(paired_families().items()):
        if k % n_parts != i_part:
            continue
        for eps in ((0.0, fam["eps"]) if tolerance else (0.0,)):
            t0 = time.process_time()
            rep = simulate_paired_batch(fam["sampler"], confidence=1 - delta, tolerance=eps, n_runs=runs,
                                        max_evals=100_000, random_state=seed + 100 * k + (eps > 0))
            d = rep.to_dict()
            lb = _lower(fam["sampler"], delta, eps) if isinstance(fam["sampler"], CorrelatedGaussianRows) \
                and fam["sampler"].correlation == 0 else None
            d.update(family=name, delta=delta, tolerance=eps, cpu_s=time.process_time() - t0,
                     binom_p=binom_greater_p(d["wrong"], runs, delta), lower_bound_independent=lb)
            print(json.dumps(d), flush=True)
            rows.append(d)
    return {"delta": delta, "runs": runs, "seed": seed, "rule": "PairedElimination (paired e-process)",
            "rows": rows}


def section_paired_contrast(delta: float, runs: int, seed: int) -> dict[str, Any]:
    """The paired rule's contrast (issue 23): evaluations relative to no contrast, per family, for
    the rows before the partner is fixed and the share of delta it gets (same seeds)."""
    import certa.strategies._paired as paired_rule

    fams = {n: f for n, f in paired_families().items() if "independent" not in n}
    base = {n: simulate_paired_batch(f["sampler"], confidence=1 - delta, n_runs=runs, random_state=seed,
                                     contrast_share=0.0) for n, f in fams.items()}
    shipped = paired_rule.CONTRAST_ROWS
    variants = []
    try:
        for rows_before, share in ((1, 0.5), (2, 0.5), (3, 0.5), (1, 0.3), (2, 0.3)):
            paired_rule.CONTRAST_ROWS = rows_before
            ratios, wrong = {}, {}
            for n, f in fams.items():
                rep = simulate_paired_batch(f["sampler"], confidence=1 - delta, n_runs=runs, random_state=seed,
                                            contrast_share=share, rank_power=math.inf)   # issue 23: one partner
                ratios[n] = float(rep.evaluations.mean() / base[n].evaluations.mean())
                wrong[n] = int(rep.wrong.sum())
            geo = float(np.exp(np.mean(np.log(list(ratios.values())))))
            variants.append({"rows_before_partner": rows_before, "share": share, "ratio": ratios, "wrong": wrong,
                             "geometric_mean_ratio": geo})
            print(json.dumps(variants[-1]), flush=True)
    finally:
        paired_rule.CONTRAST_ROWS = shipped
    return {"delta": delta, "runs": runs, "seed": seed, "shipped": {"rows_before_partner": shipped,
                                                                    "share": paired_rule.CONTRAST_SHARE},
            "no_contrast_evaluations": {n: float(r.evaluations.mean()) for n, r in base.items()},
            "variants": variants}


def contrast_table(out: dict[str, Any]) -> str:
    fams = list(out["no_contrast_evaluations"])

    def label(f: str) -> str:
        short = f.split(" (")[0].replace("best_plus_9_near_ties", "near ties").replace("variances 4x", "4x var")
        return short + (" r " + f.split("correlation ")[1] if "correlation" in f else "")

    head = ["rows before the partner, share"] + [label(f) for f in fams] + ["geometric mean"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
             "| no contrast: evaluations | " + " | ".join(f"{out['no_contrast_evaluations'][f]:.1f}" for f in fams)
             + " | |"]
    for v in out["variants"]:
        lines.append(f"| {v['rows_before_partner']}, {v['share']:g} | " + " | ".join(f"{v['ratio'][f]:.3f}" for f in fams)
                     + f" | **{v['geometric_mean_ratio']:.3f}** |")
    lines += ["", f"Evaluations with the contrast / without it, same seeds, {out['runs']} runs per cell, delta "
              f"{out['delta']}; r = correlation between candidates; generated by benchmarks/adaptive.py "
              "calibration paired-contrast."]
    return "\n".join(lines) + "\n"


def section_tolerance(delta: float, runs: int, runs_plain: int, beta: Any, seed: int, cap: int) -> dict[str, Any]:
    sampler = GaussianSampler(TOL_MEANS, 1.0)
    out: dict[str, Any] = {"delta": delta, "beta": beta, "seed": seed, "cap": cap, "means": TOL_MEANS}
    for label, eps, n in (("with tolerance 0.2", 0.2, runs), ("without tolerance", 0.0, runs_plain)):
        t0 = time.process_time()
        rep = simulate_top_two_batch(sampler, confidence=1 - delta, beta=beta, tolerance=eps, n_runs=n,
                                     max_evals=cap, random_state=seed)   # same seeds: the first runs are paired
        d = rep.to_dict()
        d.update(tolerance=eps, cpu_s=time.process_time() - t0, binom_p=binom_greater_p(d["wrong"], n, delta),
                 evaluations=rep.evaluations.tolist())
        out[label] = d
        print(label, json.dumps({k: v for k, v in d.items() if k != "evaluations"}), flush=True)
    t_eps, _ = characteristic_time(TOL_MEANS, 1.0, 0.2)
    kl = bernoulli_kl(delta, 1 - delta)
    out["T_eps"] = t_eps
    out["lower_bound_eps"] = t_eps * kl
    with_tol = np.array(out["with tolerance 0.2"]["evaluations"])
    plain = np.array(out["without tolerance"]["evaluations"])
    m = min(with_tol.size, plain.size)
    out["ratio_to_lower_bound"] = float(with_tol.mean() / (t_eps * kl))
    out["share_of_plain_same_runs"] = float(with_tol[:m].mean() / plain[:m].mean())
    return out


def section_tdsa(runs: int, seed: int, n_jobs: int) -> dict[str, Any]:
    from certa.planning.simulate import simulate
    from certa.strategies import TopTwoThompson

    table = tdsa_table(TDSA_MODELS8)
    rows = []
    for beta in ("ids", 0.5):
        for stopping in ("glr", "bayes"):
            t0 = time.time()
            rep = simulate(TopTwoThompson(0.95, beta, stopping=stopping), table=table, n_runs=runs,
                           random_state=seed, n_jobs=n_jobs)
            rep.to_dict()
            ev = rep.evaluations
            row = {"beta": beta, "stopping": stopping, "mean": float(ev.mean()),
                   "se": float(ev.std(ddof=1) / math.sqrt(ev.size)), "p_correct": rep.p_correct,
                   "min": int(ev.min()), "max": int(ev.max()), "wall_s": time.time() - t0,
                   "evaluations": ev.tolist()}
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "evaluations"}), flush=True)
    return {"runs": runs, "seed": seed, "rows": rows}


def _pair_min(stat: np.ndarray, best: np.ndarray) -> np.ndarray:
    stat = stat.copy()
    stat[np.arange(best.size), best] = np.inf
    return stat.min(axis=1)


def known_variance_mixture_rule(sds: np.ndarray, delta: float, eps: float):
    """The shipped construction with the variances KNOWN (an oracle, for the decomposition).

    Per candidate Robbins' normal mixture e-process (a Gaussian ``N(0, 1/c)`` mixture over
    the standardised effect, ``c`` = :data:`certa.strategies._glr.PRIOR_PRECISION`):
    ``log M_N(u) = (1/2) log(c/(N+c)) + N^2 (m - u)^2 / (2 sigma^2 (N + c))``, a
    nonnegative martingale at the true mean, so the product/union argument of
    :mod:`certa.strategies._glr` applies unchanged with the same threshold: proven
    delta-correct when the SDs are known. The pair infimum over ``u_j = u_i + eps`` of
    ``A_i (m_i - u_i)^2 + A_j (m_j - u_j)^2`` is ``A_i A_j / (A_i + A_j) D^2``.
    """
    c = _glr.PRIOR_PRECISION
    limit = _glr.glr_threshold(delta, sds.size)
    var = sds ** 2

    def rule(mean, _v, n, _evals):
        best = np.argmax(mean, axis=1)
        r = np.arange(mean.shape[0])
        a = n ** 2 / (2 * var * (n + c))
        base = 0.5 * np.log(c / (n + c))
        ab, bb, mb = a[r, best][:, None], base[r, best][:, None], mean[r, best][:, None]
        d = np.maximum(mb - mean + eps, 0.0)
        z = bb + base + ab * a / (ab + a) * d ** 2
        return _pair_min(z, best) > limit, best
    return rule


def shipped_rule_without_union(delta: float, eps: float):
    """The shipped statistic with the K = 2 threshold (no union over candidates): NOT delta-correct
    for K > 2; it measures what the union bound costs."""
    limit = _glr.glr_threshold(delta, 2)

    def rule(mean, v, n, _evals):
        stop = np.zeros(mean.shape[0], dtype=bool)
        best = np.argmax(mean, axis=1)
        for i in range(mean.shape[0]):
            _, z = _glr._screened_min(mean[i], v[i], n[i], eps, limit)
            stop[i] = z > limit
        return stop, best
    return rule


def heuristic_rule(delta: float, eps: float, sds: np.ndarray | None, grid: int = 129):
    """GLR with the heuristic threshold ``log((1 + log t) / delta)`` (t = evaluations so far), the
    exploration rate of Garivier & Kaufmann's experiments (``explo(t,n,delta)=log((log(t)+1)/delta)``
    in EmilieKaufmann/BAI_epsBAI_code, mainBAI.jl). NOT proven delta-correct: a reference only.

    ``sds`` given: the known-variance GLR ``D^2 / (2 (s_i^2/N_i + s_j^2/N_j))``; ``None``: the
    unknown-variance GLR of Jourdan, Degenne & Kaufmann (ALT 2023),
    ``inf_u N_i/2 log(1 + (m_i - u)^2/v_i) + N_j/2 log(1 + (m_j - u - eps)^2/v_j)`` (on a grid).
    """
    def rule(mean, v, n, evals):
        best = np.argmax(mean, axis=1)
        r = np.arange(mean.shape[0])
        mb, nb = mean[r, best][:, None], n[r, best][:, None]
        d = np.maximum(mb - mean + eps, 0.0)
        if sds is not None:
            var = sds ** 2
            z = d ** 2 / (2 * (var[best][:, None] / nb + var / n))
        else:
            vb = v[r, best][:, None]
            s = np.linspace(0.0, 1.0, grid)
            u = (mean - eps)[..., None] + d[..., None] * s          # u_i from m_j - eps to m_i
            z = (0.5 * nb[..., None] * np.log1p((mb[..., None] - u) ** 2 / vb[..., None])
                 + 0.5 * n[..., None] * np.log1p((mean[..., None] - eps - u) ** 2 / v[..., None])).min(axis=-1)
        limit = np.log((1.0 + np.log(evals)) / delta)
        return _pair_min(z, best) > limit, best
    return rule


GAUSSIAN_FAMILIES = ("two_close (Gaussian, gap 1 SD)", "five_spread (Gaussian, gaps 1.5 SD)",
                     "best_plus_9_near_ties (Gaussian, gap 2 SD)", "variances 4x (Gaussian, SDs 1 and 2)",
                     "TDSA replay (8 models, FIESTA data)")


def section_decomposition(delta: float, runs: int, beta: Any, seed: int) -> dict[str, Any]:
    """Where the price against ``T* kl(delta, 1 - delta)`` goes, per Gaussian family.

    Same sampling rule (top-two, ``beta``) and seeds for every stopping rule:
    (i) the unknown-variance bound ``T*_u kl`` (Jourdan et al. 2023) against ``T* kl``;
    (ii) the shipped construction with the variances known (proven, oracle);
    (iii) the share of forced evaluations (first round and count-limited) of the shipped rule;
    (iv) the shipped rule without the union bound over candidates (K = 2 threshold; not
    delta-correct for K > 2) and the thresholds themselves;
    (v) the heuristic threshold ``log((1 + log t)/delta)`` on the GLR with known and with
    unknown variances (not proven, reference only).
    The TDSA replay is included with the SDs of its stored scores standing in for the known SDs
    (its scores are not Gaussian, so its "bounds" are the Gaussian ones at those means and SDs).
    """
    fams = families()
    kl = bernoulli_kl(delta, 1 - delta)
    rows = []
    for k, name in enumerate(GAUSSIAN_FAMILIES):
        sampler = fams[name]["sampler"]
        if isinstance(sampler, ReplaySampler):
            means = sampler.true_means
            sds = np.array([row.std() for row in sampler.table])
        else:
            means, sds = sampler.means, sampler.sds
        t_known, _ = characteristic_time(means, sds)
        t_unknown, _ = characteristic_time_unknown_variance(means, sds)
        K = means.size
        row: dict[str, Any] = {
            "family": name, "delta": delta, "runs": runs, "K": K,
            "T_known_kl": t_known * kl, "T_unknown_kl": t_unknown * kl,
            "threshold": _glr.glr_threshold(delta, K),
            "threshold_pairwise_union": float(-np.real(lambertw(-delta / (K - 1) / math.e, -1)) - 1.0),
            "threshold_no_union": _glr.glr_threshold(delta, 2), "kl": kl,
            "min_count": _glr.min_count(delta, K), "rules": {}}
        rules = {
            "shipped (unknown variances, proven)": None,
            "same construction, variances known (proven, oracle)": known_variance_mixture_rule(sds, delta, 0.0),
            "shipped statistic, no union bound (not delta-correct)": shipped_rule_without_union(delta, 0.0),
            "GLR unknown variances, heuristic threshold (not proven)": heuristic_rule(delta, 0.0, None),
            "GLR known variances, heuristic threshold (not proven)": heuristic_rule(delta, 0.0, sds),
        }
        for label, rule in rules.items():
            if K == 2 and rule is not None and "no union" in label:
                continue
            t0 = time.process_time()
            rep = simulate_top_two_batch(sampler, confidence=1 - delta, beta=beta, n_runs=runs, max_evals=100_000,
                                         random_state=seed + 100 * k, stop_rule=rule)
            d = rep.to_dict()
            d.update(cpu_s=time.process_time() - t0, ratio_known=d["evaluations_mean"] / row["T_known_kl"],
                     ratio_unknown=d["evaluations_mean"] / row["T_unknown_kl"],
                     binom_p=binom_greater_p(d["wrong"], runs, delta))
            row["rules"][label] = d
            print(name, label, json.dumps(d), flush=True)
        rows.append(row)
    return {"delta": delta, "runs": runs, "beta": beta, "seed": seed, "rows": rows}


def section_loser_scores(delta: float, runs: int, seed: int) -> dict[str, Any]:
    """How many scores a clearly worse candidate needs before the proven rule can rule it out.

    best_plus_9's shape: K = 10, a loser 2 SD below a leader with 40 scores (mean 0, ddof-0
    variance 1). For each count N of the loser's own scores, the share of ``runs`` simulated
    Gaussian score sets whose exact pair statistic passes the shipped threshold, for several
    mixture precisions ``c``. The leader cannot help: the infimum puts the common mean near
    the leader's, so the loser's own e-process must carry the evidence (module doc of _glr).
    """
    K, gap, n_leader = 10, 2.0, 40
    limit = _glr.glr_threshold(delta, K)
    rng = np.random.default_rng(seed)
    counts = list(range(6, 21, 2))
    sets = {n: rng.normal(-gap, 1.0, (runs, n)) for n in counts}
    rows = []
    for c in (0.1, 0.25, 1.0, 4.0):
        share = {}
        for n in counts:
            x = sets[n]
            z = _glr.pair_statistic(n_leader, 0.0, 1.0, n, x.mean(axis=1), x.var(axis=1), c=c)
            share[n] = float(np.mean(np.asarray(z) > limit))
        rows.append({"c": c, "shipped": c == _glr.PRIOR_PRECISION, "pass_share": share})
        print(json.dumps(rows[-1]), flush=True)
    return {"delta": delta, "K": K, "gap_sd": gap, "n_leader": n_leader, "threshold": limit, "runs": runs,
            "seed": seed, "counts": counts, "rows": rows}


def section_overhead(seed: int) -> dict[str, Any]:
    """Decision time per evaluation (ask + tell, no evaluation cost) for glr and bayes stopping."""
    from certa.strategies import TopTwoThompson

    rows = []
    for k in (8, 100, 1000):
        rng = np.random.default_rng(seed)
        means = np.linspace(0.0, -1.0, k)
        for stopping in ("glr", "bayes"):
            strat = TopTwoThompson(0.95, "ids", stopping=stopping)
            strat._track_belief = False
            strat.start(k, seed)
            n_init = strat._initial_evals() * k   # glr: min_count per candidate (10-11 at 100-1,000)
            times, _ = time_decisions(strat, means, rng, n_init, n_init + 300)
            rows.append({"candidates": k, "stopping": stopping, "evaluations_timed": len(times),
                         "median_ms": 1e3 * float(np.median(times)), "mean_ms": 1e3 * float(np.mean(times)),
                         "load": loadavg()})
            print(json.dumps(rows[-1]), flush=True)
    return {"rows": rows, "seed": seed}


def _fmt(x, digits=1):
    return "" if x is None else f"{x:.{digits}f}"


#: The columns :func:`_rate` fills: wrong choices (their rate), the binomial test, mean evaluations.
RATE = ["wrong (rate)", "binom p", "mean evals (SE)"]


def _rate(x: dict[str, Any]) -> list[str]:
    return [f"{x['wrong']} ({x['wrong_rate']:.4f})", f"{x['binom_p']:.2f}",
            f"{x['evaluations_mean']:.1f} ({x['evaluations_se']:.1f})"]


def report() -> str:
    lines = ["# Calibration of the delta-correct stopping rule (benchmarks/adaptive.py calibration)", ""]
    fam_files = sorted(RESULTS.glob("calibration_families_*.json"))
    if fam_files:
        lines += md_section(
            "Wrong-choice rate and price, TopTwoThompson(stopping=\"glr\")",
            "Simulated scores (certa.planning.batch); TDSA = replay of the FIESTA paper's scores. "
            "binom p = one-sided binomial test of \"rate <= delta\" (rejects at < 0.01). Lower bound = "
            "T*(mu) kl(delta, 1 - delta) (T*_eps with tolerance), Gaussian families only.",
            ["family", "delta", "tolerance", "beta", "runs", *RATE, "capped", "lower bound", "ratio"],
            [[r["family"], r["delta"], f"{r['tolerance']:g}", r["beta"], r["n_runs"], *_rate(r), r["capped"],
              _fmt(r["lower_bound"]), _fmt(r["ratio"], 2)]
             for f in fam_files for r in json.loads(f.read_text())["rows"]])
    tol_files = sorted(RESULTS.glob("calibration_tolerance_*.json"))
    if tol_files:
        lines += ["## Tolerance 0.2 on near ties (sd 1; means 0, -0.02, ..., -0.18 and five at -1)", "",
                  "| delta | runs | wrong | binom p | mean evals (SE) | max | capped | T*_eps kl | ratio | "
                  "without tolerance (runs, mean, capped) | share of the same runs |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for f in tol_files:
            r = json.loads(f.read_text())
            a, b = r["with tolerance 0.2"], r["without tolerance"]
            lines.append(f"| {r['delta']} | {a['n_runs']} | {a['wrong']} | {a['binom_p']:.2f} | "
                         f"{a['evaluations_mean']:.0f} ({a['evaluations_se']:.0f}) | {a['evaluations_max']} | "
                         f"{a['capped']} | {r['lower_bound_eps']:.0f} | {r['ratio_to_lower_bound']:.2f} | "
                         f"{b['n_runs']}, {b['evaluations_mean']:.0f}, {b['capped']} capped at {r['cap']} | "
                         f"{r['share_of_plain_same_runs']:.3f} |")
        lines.append("")
    tdsa = RESULTS / "calibration_tdsa.json"
    if tdsa.exists():
        r = json.loads(tdsa.read_text())
        lines += md_section("TDSA replay at confidence 0.95: glr against bayes, same sampling rule and seeds",
                            f"{r['runs']} runs each of certa.simulate (the strategy's own ask/tell loop).",
                            ["beta", "stopping", "mean evals (SE)", "min", "max", "% correct"],
                            [[x["beta"], x["stopping"], f"{x['mean']:.1f} ({x['se']:.1f})", x["min"], x["max"],
                              f"{100 * x['p_correct']:.1f}"] for x in r["rows"]])[:-1]
        by = {(x["beta"], x["stopping"]): x for x in r["rows"]}
        for beta in ("ids", 0.5):
            g, b = by.get((beta, "glr")), by.get((beta, "bayes"))
            if g and b:
                lines.append(f"\nbeta={beta}: glr / bayes = {g['mean'] / b['mean']:.2f}")
        lines.append("")
    dec_files = sorted(RESULTS.glob("calibration_decomposition_*.json"))
    for f in dec_files:
        r = json.loads(f.read_text())
        labels = ["shipped (unknown variances, proven)", "same construction, variances known (proven, oracle)",
                  "shipped statistic, no union bound (not delta-correct)",
                  "GLR unknown variances, heuristic threshold (not proven)",
                  "GLR known variances, heuristic threshold (not proven)"]
        short = ["shipped", "known SD, proven", "no union", "heuristic, unknown SD", "heuristic, known SD"]
        lines += [f"## Where the price goes: delta {r['delta']}, {r['runs']} runs per rule", "",
                  "Same top-two sampling rule (beta=" + str(r["beta"]) + ") and seeds for every stopping rule. "
                  "Cells: mean evaluations (ratio to T* kl; ratio to T*_u kl) [wrong]. T*_u = unknown-variance "
                  "characteristic time (Jourdan, Degenne & Kaufmann 2023). forced = share of the shipped rule's "
                  "evaluations not chosen by the top-two rule (first round of min_count per candidate and "
                  "count-limited ones). Only the first two rules are proven delta-correct (the second needs "
                  "the true SDs).", "",
                  "| family | K | T* kl | T*_u kl | " + " | ".join(short) + " | forced |",
                  "|---|---|---|---|" + "---|" * len(short) + "---|"]
        for row in r["rows"]:
            cells = []
            for lab in labels:
                d = row["rules"].get(lab)
                cells.append("" if d is None else f"{d['evaluations_mean']:.1f} ({d['ratio_known']:.2f}; "
                             f"{d['ratio_unknown']:.2f}) [{d['wrong']}]")
            sh = row["rules"][labels[0]]
            lines.append(f"| {row['family']} | {row['K']} | {row['T_known_kl']:.1f} | {row['T_unknown_kl']:.1f} | "
                         + " | ".join(cells) + f" | {sh['forced_mean'] / sh['evaluations_mean']:.2f} |")
        lines += ["", "Thresholds (nats): | family | log z_delta (shipped) | pairwise union (previous) | "
                  "no union (K = 2) | kl(delta, 1 - delta) | min_count |", "|---|---|---|---|---|---|"]
        for row in r["rows"]:
            lines.append(f"| {row['family']} | {row['threshold']:.2f} | {row['threshold_pairwise_union']:.2f} | "
                         f"{row['threshold_no_union']:.2f} | {row['kl']:.2f} | {row['min_count']} |")
        lines.append("")
    for f in sorted(RESULTS.glob("calibration_gk16_*.json")):
        r = json.loads(f.read_text())
        lines += md_section(
            f"Opt-in stopping=\"gk16\" (heuristic threshold, NOT proven): delta {r['delta']}, {r['runs']} runs per row",
            "TopTwoThompson(beta=" + str(r["beta"]) + ", stopping=\"gk16\"): the unknown-variance GLR with "
            "log((1 + log t)/delta). binom p = one-sided binomial test of \"rate <= delta\" (rejects at "
            "< 0.01). The rate is what backs this rule's stated confidence: a simulation, not a theorem.",
            ["family", "tolerance", *RATE, "capped", "lower bound", "ratio"],
            [[x["family"], f"{x['tolerance']:g}", *_rate(x), x["capped"], _fmt(x["lower_bound"]), _fmt(x["ratio"], 2)]
             for x in r["rows"]])
    for f in sorted(RESULTS.glob("calibration_paired_*.json")):
        r = json.loads(f.read_text())
        lines += md_section(
            f"Paired rule (PairedElimination, the default): delta {r['delta']}, {r['runs']} runs per row",
            "Rows of correlated Gaussian scores (the families' means and SDs; correlation between every "
            "two candidates of a row) and the TDSA replay by whole rows or independent rows "
            "(certa.planning.batch.simulate_paired_batch). binom p = one-sided binomial test of "
            "\"rate <= delta\" (rejects at < 0.01). T* kl: the independent-scores lower bound, for "
            "correlation 0.",
            ["family", "tolerance", *RATE, "max", "capped", "T* kl"],
            [[x["family"], f"{x['tolerance']:g}", *_rate(x), x["evaluations_max"], x["capped"],
              _fmt(x.get("lower_bound_independent"))] for x in r["rows"]])
    ov = RESULTS / "calibration_overhead.json"
    if ov.exists():
        r = json.loads(ov.read_text())
        lines += md_section("Decision overhead per evaluation (TopTwoThompson beta=\"ids\", ask + tell)", None,
                            ["candidates", "stopping", "evaluations timed", "median ms", "mean ms", "load"],
                            [[x["candidates"], x["stopping"], x["evaluations_timed"], f"{x['median_ms']:.3f}",
                              f"{x['mean_ms']:.3f}", x["load"]] for x in r["rows"]])
    text = "\n".join(lines)
    (RESULTS / "calibration.md").write_text(text)
    return text


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="adaptive.py calibration", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("section", choices=["families", "tolerance", "tdsa", "overhead", "decomposition", "report",
                                        "paired-contrast", "paired-contrast-table",
                                        "from-log", "loser-scores", "paired", "gk16"])
    ap.add_argument("--log", help="from-log: a families section's printed rows (one JSON per line), saved as a "
                    "partial result when the section could not finish")
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--runs-plain", type=int, default=100)
    ap.add_argument("--cap", type=int, default=20_000)
    ap.add_argument("--beta", default="ids")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--part", default=None, help="paired, gk16: run part i/n of the families (merged into the "
                    "stored section), to keep each job short")
    ap.add_argument("--tolerance-rows", action="store_true",
                    help="families: rerun only the rows with tolerance and replace them in the stored section")
    a = ap.parse_args(argv)
    beta: Any = a.beta if a.beta == "ids" else float(a.beta)
    if a.section == "report":
        print(report())
        return
    if a.section == "from-log":
        with open(a.log) as fh:
            rows = [json.loads(line) for line in fh if line.startswith("{")]
        out = {"delta": a.delta, "runs": a.runs, "beta": beta, "seed": a.seed, "rows": rows,
               "partial": "rows printed before the section was stopped (machine shared by 5 jobs)"}
        (RESULTS / f"calibration_families_{a.delta}.json").write_text(json.dumps(out, indent=1, default=float))
        return
    t0 = time.time()
    if a.section == "families":
        name = f"calibration_families_{a.delta}"
        out = section_families(a.delta, a.runs, beta, a.seed, a.tolerance_rows)
        if a.tolerance_rows:   # replace the rows with tolerance in the stored section, keep the others
            old = json.loads((RESULTS / f"{name}.json").read_text())
            new = {r["family"]: r for r in out["rows"]}
            old["rows"] = [new.get(r["family"], r) if r["tolerance"] > 0 else r for r in old["rows"]]
            old["tolerance_rows"] = {"rerun": "rows with tolerance rerun with EB-TC_eps sampling (same seeds)",
                                     "machine": machine_info(), "wall_s": time.time() - t0, "load_end": loadavg()}
            (RESULTS / f"{name}.json").write_text(json.dumps(old, indent=1, default=float))
            return
    elif a.section == "tolerance":
        out = section_tolerance(a.delta, a.runs, a.runs_plain, beta, a.seed, a.cap)
        name = f"calibration_tolerance_{a.delta}"
    elif a.section == "decomposition":
        out = section_decomposition(a.delta, a.runs, beta, a.seed)
        name = f"calibration_decomposition_{a.delta}"
    elif a.section == "loser-scores":
        out = section_loser_scores(a.delta, min(a.runs, 2000), a.seed)
        name = f"calibration_loser_scores_{a.delta}"
    elif a.section in ("gk16", "paired"):
        if a.section == "gk16":
            out = section_gk16(a.delta, a.runs, beta, a.seed, a.part)
        else:
            out = section_paired(a.delta, a.runs, a.seed, part=a.part)
        name = f"calibration_{a.section}_{a.delta}"
        if a.part:   # merge this part's rows into the stored section (rows keyed by family and tolerance)
            path = RESULTS / f"{name}.json"
            old = json.loads(path.read_text()) if path.exists() else {**out, "rows": [], "parts": {}}
            keep = {(r["family"], r["tolerance"]) for r in out["rows"]}
            order = {n: i for i, n in enumerate(paired_families() if a.section == "paired" else families())}
            rows = [r for r in old["rows"] if (r["family"], r["tolerance"]) not in keep] + out["rows"]
            old["rows"] = sorted(rows, key=lambda r: (order.get(r["family"], 99), r["tolerance"]))
            old.setdefault("parts", {})[a.part] = {"machine": machine_info(), "wall_s": time.time() - t0,
                                                   "load_end": loadavg()}
            path.write_text(json.dumps(old, indent=1, default=float))
            return
    elif a.section == "paired-contrast":
        out = section_paired_contrast(a.delta, min(a.runs, 1000), a.seed)
        name = f"contrast_paired_{a.delta}"
        (RESULTS / f"{name}.md").write_text(contrast_table(out))
    elif a.section == "paired-contrast-table":   # the table again from the stored JSON
        name = "contrast_paired_0.05"
        (RESULTS / f"{name}.md").write_text(contrast_table(json.loads((RESULTS / f"{name}.json").read_text())))
        return
    elif a.section == "tdsa":
        out = section_tdsa(a.runs, a.seed, a.n_jobs)
        name = "calibration_tdsa"
    else:
        out = section_overhead(a.seed)
        name = "calibration_overhead"
    out["machine"] = machine_info()
    out["wall_s"] = time.time() - t0
    out["load_end"] = loadavg()
    (RESULTS / f"{name}.json").write_text(json.dumps(out, indent=1, default=float))
