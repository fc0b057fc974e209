"""Selecting lambda by quantification bounds vs hold-out and 5-fold CV on the Debian task.

Reproduces the design of Balikas et al. (IDA 2015), Tables 2 and 3, on certa's bundled
``load_debian_sections()`` (58 sections, power-law sizes; train / quantification (used
unlabelled) / test). For a linear SVM (``LinearSVC``, one-vs-rest) and one-vs-rest logistic
regression, lambda runs over Algorithm 1's grid 10^-4 .. 10^3 (8 values, C = 1 / lambda),
and lambda is chosen by

- **Bound_UN**: ``QuantificationBoundSearch(bound="theorem1", quantifier="cc")`` with
  ``X_unlabeled`` = the quantification part: each lambda fitted once on all training data,
  Theorem 1's inequality (1) (accuracy) or (3) (macro-F1), delta = 0.05, ranked on the
  unclipped values (Algorithm 1 step 10);
- **Bound_Test**: the same with ``X_unlabeled`` = the test inputs (transductive);
- extra rows from the same fitted models: Bound_UN with PCC (Algorithm 1 steps 3-6),
  and Bound_UN / Bound_Test with certa's own bounds (``bound="certa"``);
- **hold-out**: ``--splits`` random stratified 70/30 splits of the training part (the paper:
  10), the lambda with the best score on the 30 % (mean and SD over the splits of the test
  score of that lambda);
- **5-fold CV**: ``GridSearchCV`` with stratified 5-fold CV scoring accuracy and macro-F1 in
  one pass (``refit="accuracy"``);

each for accuracy and for macro-F1; the chosen lambda's model fitted on all training data is
scored on the test part (every method's "fitted on all training data" model is the same
model: ``random_state=0`` makes every fit deterministic, so the test scores come from one
table of the 8 full fits Bound_UN keeps; CV's refit is checked equal).

Macro-F1 on the test set is scikit-learn's ``f1_score(average="macro")`` (mean of per-class
F1), as in the earlier runs; Theorem 1 bounds the F1 of macro-P and macro-R, which is never
smaller.

Features: ``TfidfVectorizer(sublinear_tf=True, min_df=2)`` fitted ONCE on the training
texts, outside every search (a small leak shared by all methods; its time is in no method's).

Timing (acceptance: Bound_UN >= 3.5x faster than 5-fold CV): wall time of
``QuantificationBoundSearch(measure="accuracy").fit`` (8 fits + quantification, no refit)
against ``GridSearchCV.fit`` (40 fits + the refit), both with ``--n-jobs`` workers (default
1), alternating B, CV, B, CV, ... ``--timing-repeats`` times; the ratio of the medians is
reported with the load average before each timing (load from other jobs inflates both sides).

Table 2: PCC's ``Max_eps = max_y |p_bar_y - M_y/|S||`` on the quantification part at the
learners' default hyper-parameters (C = 1, i.e. lambda = 1), the SVM with the logistic slope
sigma in 1..10 of lowest Max_eps, LR with its own probabilities; also per lambda.

Run: ``OMP_NUM_THREADS=1 python3 benchmarks/quantification.py debian --n-jobs 1 --timing-repeats 3``;
``--learners svm`` for one learner and ``--out`` for another result path, ``--merge a.json b.json``
to combine per-learner runs into ``benchmarks/results/quantification_debian.{json,md}``;
``--subsample 10`` for a smoke run.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("PYTHONWARNINGS", "ignore")  # ConvergenceWarning spam from the workers

import numpy as np
from _common import RESULTS, _jsonable, loadavg, machine_info, timed
from joblib import Parallel, delayed
from scipy.special import expit
from sklearn.base import clone
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import LinearSVC

from certa.datasets import load_debian_sections
from certa.quantification import (
    bound_from_quantification,
    classify_and_count,
    predictions_from_decision,
    quantify_classifier,
)
from certa.search.quantification import QuantificationBoundSearch
from certa.strategies.one_shot import choose_one_shot

warnings.filterwarnings("ignore")
LAMBDAS = [1e-4, 1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3]  # Algorithm 1, step 1
DEFAULT_LAMBDA = 1.0  # C = 1, scikit-learn's default: the paper's Table 2 uses default hyper-parameters
SEED = 0
DELTA = 0.05
N_JOBS = 1

# The paper's numbers (Balikas et al. 2015), quoted for the side-by-side tables.
PAPER_DATASETS = ["dmoz250", "dmoz500", "dmoz1000", "dmoz1500", "dmoz2500",
                  "wiki250", "wiki500", "wiki1000", "wiki1500", "wiki2500"]
PAPER_TABLE2 = {
    "svm": [0.0728, 0.0967, 0.1067, 0.1125, 0.0345, 0.0287, 0.0754, 0.0310, 0.0425, 0.0365],
    "lr": [0.0942, 0.0674, 0.0889, 0.1111, 0.0530, 0.0219, 0.0517, 0.0481, 0.0310, 0.0294],
}
# dataset: (Bound_UN acc, MaF, Bound_Test acc, MaF, hold-out acc, sd, MaF, sd, 5-CV acc, MaF)
PAPER_TABLE3 = {
    "svm": {
        "wiki250": (.7747, .5889, .7747, .5927, .7663, .0158, .5746, .0183, .7747, .5927),
        "wiki500": (.7445, .5257, .7449, .5254, .7440, .0006, .5228, .0031, .7445, .5254),
        "wiki1000": (.7000, .4737, .6993, .4732, .6996, .0009, .4584, .0274, .7000, .4737),
        "wiki1500": (.6360, .4278, .6354, .4283, .6343, .0049, .4230, .0126, .6360, .4278),
        "wiki2500": (.5808, .3763, .5811, .3762, .5822, .0023, .3759, .0004, .5832, .3763),
        "dmoz250": (.8260, .6242, .8270, .6243, .8260, .0000, .6242, .0000, .8260, .6242),
        "dmoz500": (.7227, .5584, .7227, .5584, .7221, .0005, .5558, .0022, .7220, .5562),
        "dmoz1000": (.7302, .4883, .7302, .4892, .7301, .0001, .4835, .0155, .7299, .4883),
        "dmoz1500": (.7132, .4715, .7132, .4715, .6958, .0457, .4065, .0998, .7132, .4715),
        "dmoz2500": (.6352, .4301, .6350, .4306, .6350, .0001, .3949, .0686, .6352, .4301),
    },
    "lr": {
        "wiki250": (.7527, .5423, .7527, .5423, .7464, .0078, .5335, .0134, .7527, .5423),
        "wiki500": (.7302, .4709, .7302, .4709, .7266, .0056, .4633, .0116, .7302, .4709),
        "wiki1000": (.6836, .4354, .6836, .4354, .6836, .0000, .4354, .0000, .6836, .4354),
        "wiki1500": (.6166, .3801, .6166, .3801, .6166, .0000, .3801, .0000, .6166, .3801),
        "wiki2500": (.5802, .3506, .5802, .3506, .5802, .0000, .3506, .0000, .5802, .3506),
        "dmoz250": (.7742, .4724, .7742, .4724, .7718, .0047, .4692, .0096, .7742, .4724),
        "dmoz500": (.6608, .4513, .6608, .4513, .6586, .0064, .4488, .0076, .6608, .4513),
        "dmoz1000": (.6845, .3681, .6845, .3681, .6845, .0000, .3681, .0000, .6845, .3681),
        "dmoz1500": (.6678, .3616, .6678, .3616, .6678, .0000, .3616, .0000, .6678, .3616),
        "dmoz2500": (.5959, .3351, .5959, .3351, .5959, .0000, .3351, .0000, .5959, .3351),
    },
}


def learners() -> dict[str, tuple[object, str]]:
    # LogisticRegression: liblinear's primal (trust-region Newton) solver, one-vs-rest through
    # OneVsRestClassifier (scikit-learn >= 1.8 no longer runs liblinear on > 2 classes itself);
    # the dual solver stopped at max_iter on most sub-problems for small lambda (see the docs).
    return {
        "svm": (LinearSVC(random_state=SEED), "C"),
        "lr": (OneVsRestClassifier(LogisticRegression(solver="liblinear", random_state=SEED)), "estimator__C"),
    }


def _scores(model, X, y) -> tuple[float, float]:
    pred = model.predict(X)
    return float(accuracy_score(y, pred)), float(f1_score(y, pred, average="macro"))


def _holdout_task(est, key, C, X, y, train, val):
    m = clone(est).set_params(**{key: C}).fit(X[train], y[train])
    return _scores(m, X[val], y[val])


def _unnormalised_svm_max_eps(model, X) -> dict:
    """Max_eps with the per-class logistic outputs NOT renormalised over classes (sigma 1..10)."""
    scores = np.asarray(model.decision_function(X), dtype=float)
    cc = np.bincount(predictions_from_decision(scores), minlength=scores.shape[1]) / scores.shape[0]
    vals = [float(np.max(np.abs(expit(s * scores).mean(axis=0) - cc))) for s in range(1, 11)]
    return {"max_eps": min(vals), "sigma": float(1 + int(np.argmin(vals)))}


def _choose(values, points) -> int:
    return int(choose_one_shot(np.asarray(values, float), np.asarray(points, float))[0])


def run_learner(name, est, key, data, n_splits_holdout, timing_repeats: int, save=lambda out: None) -> dict:
    """One learner; ``save(out)`` is called after each stage (quality, each timing pair, hold-out)."""
    Xtr, ytr, Xq, Xte, yte = data
    grid = {key: [1.0 / lam for lam in LAMBDAS]}
    out: dict = {"learner": name, "estimator": repr(est), "param": key, "lambdas": LAMBDAS}
    cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED)
    n_lam = len(LAMBDAS)

    def bound_un():
        return QuantificationBoundSearch(est, grid, measure="accuracy", quantifier="cc", bound="theorem1",
                                         delta=DELTA, n_jobs=N_JOBS).fit(Xtr, ytr, Xq)

    def cv5():
        return GridSearchCV(est, grid, scoring={"accuracy": "accuracy", "macro_f1": "f1_macro"}, refit="accuracy",
                            cv=cv, n_jobs=N_JOBS).fit(Xtr, ytr)

    timing = {"bound_un_s": [], "cv_s": [], "load_before_bound_un": [], "load_before_cv": []}
    out["timing"] = timing

    def time_pair(r):
        res_b, tb, lb, _ = timed(bound_un)
        res_c, tc, lc, _ = timed(cv5)
        timing["bound_un_s"].append(tb), timing["cv_s"].append(tc)
        timing["load_before_bound_un"].append(lb), timing["load_before_cv"].append(lc)
        timing["speedup_per_pair"] = [c / b for b, c in zip(timing["bound_un_s"], timing["cv_s"])]
        timing["median_bound_un_s"] = float(np.median(timing["bound_un_s"]))
        timing["median_cv_s"] = float(np.median(timing["cv_s"]))
        timing["speedup_of_medians"] = timing["median_cv_s"] / timing["median_bound_un_s"]
        print(f"[{name}] pair {r + 1}: Bound_UN {tb:.1f}s (load {lb}), 5-fold CV {tc:.1f}s (load {lc})", flush=True)
        return res_b, res_c

    # --- stage 1: the first timed pair (B, CV) gives every model and CV score used below
    bun, gs = time_pair(0)
    models = {int(k.split("/c")[1].split("/")[0]): p["estimator"] for k, p in bun.selection_.transient.items()}
    table = [_scores(models[i], Xte, yte) for i in range(n_lam)]
    cv_acc, cv_f1 = gs.cv_results_["mean_test_accuracy"], gs.cv_results_["mean_test_macro_f1"]
    assert _scores(gs.best_estimator_, Xte, yte) == table[gs.best_index_], "CV refit differs from the full fit"

    # every bound of every kept model, on S = quantification part (UN) and S = test inputs (Test)
    quants = {(i, s, qn): quantify_classifier(models[i], X, ytr, qn)
              for i in range(n_lam) for s, X in (("un", Xq), ("test", Xte)) for qn in ("cc", "pcc")}
    bnd = {(i, s, qn, bt, m): bound_from_quantification(quants[(i, s, qn)], m, DELTA, bt)
           for (i, s, qn) in quants for bt in ("theorem1", "certa") for m in ("accuracy", "macro_f1")}
    # the search computed exactly these (same code path, checked)
    np.testing.assert_allclose(bun.bounds_["value_accuracy"].to_numpy(float),
                               [bnd[(i, "un", "cc", "theorem1", "accuracy")].value for i in range(n_lam)], rtol=0,
                               atol=1e-12)

    def pick(s, qn, bt, m):
        vals = [bnd[(i, s, qn, bt, m)].value for i in range(n_lam)]
        pts = [bnd[(i, s, qn, bt, m)].point_value for i in range(n_lam)]
        return _choose(vals, pts)

    choices = {
        "Bound_UN": {m: pick("un", "cc", "theorem1", m) for m in ("accuracy", "macro_f1")},
        "Bound_Test": {m: pick("test", "cc", "theorem1", m) for m in ("accuracy", "macro_f1")},
        "Bound_UN, PCC (Algorithm 1 steps 3-6)": {m: pick("un", "pcc", "theorem1", m) for m in ("accuracy", "macro_f1")},
        "Bound_UN, certa's bound": {m: pick("un", "cc", "certa", m) for m in ("accuracy", "macro_f1")},
        "Bound_Test, certa's bound": {m: pick("test", "cc", "certa", m) for m in ("accuracy", "macro_f1")},
        "5-fold CV": {"accuracy": int(np.argmax(cv_acc)), "macro_f1": int(np.argmax(cv_f1))},
    }
    assert choices["Bound_UN"]["accuracy"] == bun.best_index_, "search and direct choice differ"
    rows = {}
    for meth, ch in choices.items():
        rows[meth] = {m: {"lambda": LAMBDAS[ch[m]], "test": table[ch[m]][mi]}
                      for mi, m in enumerate(("accuracy", "macro_f1"))}
    best_acc, best_f1 = int(np.argmax([t[0] for t in table])), int(np.argmax([t[1] for t in table]))
    rows["oracle (best on test)"] = {"accuracy": {"lambda": LAMBDAS[best_acc], "test": table[best_acc][0]},
                                     "macro_f1": {"lambda": LAMBDAS[best_f1], "test": table[best_f1][1]}}
    out["table3"] = rows

    per = []
    for i, lam in enumerate(LAMBDAS):
        b = lambda s, qn, bt, m: bnd[(i, s, qn, bt, m)]
        pcc = b("un", "pcc", "theorem1", "accuracy")
        per.append({
            "lambda": lam, "test_accuracy": table[i][0], "test_macro_f1": table[i][1],
            "cv_accuracy": float(cv_acc[i]), "cv_macro_f1": float(cv_f1[i]),
            "B_A_un": b("un", "cc", "theorem1", "accuracy").point_value,
            "thm1_acc_un": b("un", "cc", "theorem1", "accuracy").value,
            "H_un": b("un", "cc", "theorem1", "macro_f1").point_value,
            "thm1_f1_un": b("un", "cc", "theorem1", "macro_f1").value,
            "thm1_acc_test": b("test", "cc", "theorem1", "accuracy").value,
            "thm1_f1_test": b("test", "cc", "theorem1", "macro_f1").value,
            "certa_acc_un": b("un", "cc", "certa", "accuracy").bound,
            "certa_acc_un_unclipped": b("un", "cc", "certa", "accuracy").value,
            "certa_f1_un": b("un", "cc", "certa", "macro_f1").bound,
            "pcc_max_eps_un": pcc.max_epsilon, "pcc_eps_step5_un": pcc.epsilon_raw,
            "pcc_fell_back_un": pcc.quantifier_used == "cc", "pcc_sigma": pcc.sigma,
            "thm1_acc_un_pcc": pcc.value, "thm1_f1_un_pcc": b("un", "pcc", "theorem1", "macro_f1").value,
            "fit_time_full": float(bun.bounds_["fit_time"][i]),
        })
    out["per_lambda"] = per
    t1 = bnd[(0, "un", "cc", "theorem1", "accuracy")]
    out["theorem1_t"] = t1.confidence_term
    out["theorem1_accuracy_term"] = len(t1.classes) * t1.confidence_term
    out["certa_lambda_l1"] = bnd[(0, "un", "cc", "certa", "accuracy")].confidence_term

    # Table 2: PCC's Max_eps at the default hyper-parameters (lambda = 1, C = 1)
    i_def = LAMBDAS.index(DEFAULT_LAMBDA)
    q_def = quants[(i_def, "un", "pcc")]
    t2 = {"lambda": DEFAULT_LAMBDA, "max_eps": bnd[(i_def, "un", "pcc", "theorem1", "accuracy")].max_epsilon,
          "sigma": q_def.sigma}
    t2["max_eps_over_mean_prior"] = t2["max_eps"] * len(q_def.classes)
    if name == "svm":
        t2["unnormalised_logistic"] = _unnormalised_svm_max_eps(models[i_def], Xq)
    out["table2"] = t2
    fit_full = bun.bounds_["fit_time"].to_numpy(float)
    fit80 = gs.cv_results_["mean_fit_time"]
    out["fit_time_diagnostics"] = {
        "sum_fit_full_s": float(fit_full.sum()), "sum_fit_80pct_mean_s": float(fit80.sum()),
        "ratio_80_over_full_total": float(fit80.sum() / fit_full.sum()),
        "cv_refit_s": float(gs.refit_time_),
        "predicted_speedup_from_fit_times": float((5 * fit80.sum() + gs.refit_time_) / fit_full.sum()),
    }

    # QuaPy check of CC / PCC on the Bound_UN winner's predictions
    try:
        from quapy.method import aggregative as qa

        m = models[bun.best_index_]
        pred = m.predict(Xq)
        ref_cc = qa.CC(m, fit_classifier=False).aggregate(pred)
        out["quapy_check"] = {"max_abs_diff_cc": float(np.abs(classify_and_count(pred, m.classes_)
                                                             - np.asarray(ref_cc)).max())}
        if hasattr(m, "predict_proba"):
            ref_pcc = qa.PCC(m, fit_classifier=False).aggregate(m.predict_proba(Xq))
            ours = quants[(bun.best_index_, "un", "pcc")].quantified_proportions
            out["quapy_check"]["max_abs_diff_pcc"] = float(np.abs(ours - np.asarray(ref_pcc)).max())
    except Exception as exc:  # noqa: BLE001 - report, do not lose the run
        out["quapy_check"] = {"error": f"{type(exc).__name__}: {exc}"}
    del bun, gs, quants
    save(out)

    # --- stage 2: the other timed pairs, alternating as before
    for r in range(1, timing_repeats):
        time_pair(r)
        save(out)

    # --- stage 3: hold-out 70/30
    if n_splits_holdout > 0:
        seeds = np.random.SeedSequence(SEED).generate_state(n_splits_holdout)
        idx = np.arange(len(ytr))
        strat = ytr if np.unique(ytr, return_counts=True)[1].min() >= 2 else None  # None only in smoke runs
        splits = [train_test_split(idx, test_size=0.3, stratify=strat, random_state=int(s)) for s in seeds]
        t0 = time.perf_counter()
        res = Parallel(n_jobs=N_JOBS)(delayed(_holdout_task)(est, key, 1.0 / lam, Xtr, ytr, tr, va)
                                      for tr, va in splits for lam in LAMBDAS)
        out["holdout_time_s"] = time.perf_counter() - t0
        print(f"[{name}] hold-out {out['holdout_time_s']:.1f}s", flush=True)
        res = np.array(res).reshape(n_splits_holdout, n_lam, 2)
        ho = {}
        for mi, meas in enumerate(("accuracy", "macro_f1")):
            picks = [int(np.argmax(res[s, :, mi])) for s in range(n_splits_holdout)]
            test = np.array([table[p][mi] for p in picks])
            ho[meas] = {"lambda": [LAMBDAS[p] for p in picks], "test": float(test.mean()),
                        "sd": float(test.std(ddof=1)) if len(test) > 1 else None}
        rows[f"hold-out ({n_splits_holdout} splits)"] = ho
        for i, p in enumerate(per):
            p["holdout_accuracy_mean"] = float(res[:, i, 0].mean())
            p["holdout_macro_f1_mean"] = float(res[:, i, 1].mean())
        save(out)
    return out


def main(argv: list[str] | None = None) -> None:
    global N_JOBS
    ap = argparse.ArgumentParser(prog="quantification.py debian", description=__doc__.split("\n")[0])
    ap.add_argument("--learners", default="svm,lr")
    ap.add_argument("--splits", type=int, default=10, help="hold-out splits (the paper: 10)")
    ap.add_argument("--subsample", type=int, default=1, help="keep every k-th document (smoke tests only)")
    ap.add_argument("--timing-repeats", type=int, default=3, help="alternating (Bound_UN, 5-fold CV) pairs")
    ap.add_argument("--n-jobs", type=int, default=N_JOBS)
    ap.add_argument("--out", default=str(RESULTS / "quantification_debian"))
    ap.add_argument("--merge", nargs="+", help="combine the 'learners' of these JSON results into --out")
    args = ap.parse_args(argv)
    N_JOBS = args.n_jobs
    if args.merge:
        parts = [json.loads(Path(p).read_text()) for p in args.merge]
        results = parts[0]
        results["runs"] = [{"command": p.get("command"), "machine": p.get("machine")} for p in parts]
        for p in parts[1:]:
            results["learners"].update(p["learners"])
        _write(args.out, results)
        print(markdown(results))
        return

    d = load_debian_sections()
    k = args.subsample
    d.X_train, d.y_train, d.X_quantification, d.X_test, d.y_test = (
        d.X_train[::k], d.y_train[::k], d.X_quantification[::k], d.X_test[::k], d.y_test[::k])
    t0 = time.perf_counter()
    vec = TfidfVectorizer(sublinear_tf=True, min_df=2)
    Xtr = vec.fit_transform(d.X_train)
    Xq, Xte = vec.transform(d.X_quantification), vec.transform(d.X_test)
    t_vec = time.perf_counter() - t0
    ytr, yte = np.asarray(d.y_train), np.asarray(d.y_test)
    # warm both pools so neither side pays start-up
    Parallel(n_jobs=N_JOBS)(delayed(abs)(i) for i in range(4))
    QuantificationBoundSearch(LinearSVC(), {"C": [1.0, 2.0]}, n_jobs=N_JOBS).fit(Xtr[:300], ytr[:300], Xq[:50])

    results = {"dataset": {"n_train": int(Xtr.shape[0]), "n_quantification": int(Xq.shape[0]),
                           "n_test": int(Xte.shape[0]), "n_features": int(Xtr.shape[1]),
                           "n_classes": int(np.unique(ytr).size), "vectorizer_time_s": t_vec},
               "config": {"lambdas": LAMBDAS, "n_jobs": N_JOBS, "seed": SEED, "holdout_splits": args.splits,
                          "delta": DELTA, "timing_repeats": args.timing_repeats, "subsample": k,
                          "omp_num_threads": os.environ.get("OMP_NUM_THREADS")},
               "command": " ".join(sys.argv),
               "machine": machine_info(), "learners": {}}
    data = (Xtr, ytr, Xq, Xte, yte)
    for name in args.learners.split(","):
        est, key = learners()[name]
        def save(out, name=name):  # after every stage: a long run leaves its finished part behind
            results["learners"][name] = out
            results["machine"]["loadavg_at_end"] = loadavg()
            _write(args.out, results)

        run_learner(name, est, key, data, args.splits, args.timing_repeats, save)
    print(markdown(results))


def _write(out: str, results: dict) -> None:
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out + ".json").write_text(json.dumps(_jsonable(results), indent=2) + "\n")
    Path(out + ".md").write_text(markdown(results))


def _fmt_lam(v) -> str:
    if isinstance(v, list):
        vals, counts = np.unique(v, return_counts=True)
        return ", ".join(f"{x:g}x{c}" for x, c in zip(vals, counts))
    return f"{v:g}"


def _paper_diffs(learner: str) -> tuple[float, float]:
    """Largest |Bound_UN - 5-CV| in the paper's Table 3 (accuracy, macro-F1) for a learner."""
    rows = PAPER_TABLE3[learner].values()
    return (max(abs(r[0] - r[8]) for r in rows), max(abs(r[1] - r[9]) for r in rows))


def markdown(r: dict) -> str:
    ds = r["dataset"]
    cfg = r["config"]
    lines = [
        "# Selecting lambda by quantification bounds on the Debian task (Balikas et al. 2015, Tables 2-3)",
        "",
        f"Debian sections: {ds['n_train']} training, {ds['n_quantification']} quantification (unlabelled), "
        f"{ds['n_test']} test documents, {ds['n_classes']} classes, {ds['n_features']} TF-IDF features. "
        f"lambda in {{{', '.join(f'{x:g}' for x in cfg['lambdas'])}}}, C = 1/lambda; delta = {cfg['delta']}; "
        f"n_jobs = {cfg['n_jobs']}; OMP_NUM_THREADS = {cfg.get('omp_num_threads')}. Estimators: "
        + "; ".join(f"{n}: `{' '.join(L['estimator'].split())}`" for n, L in r["learners"].items())
        + ". Generated by `benchmarks/quantification.py debian`.",
        "",
        "## Table 3: test scores of the chosen lambda",
        "",
        "Bound_UN / Bound_Test: Theorem 1, CC (eps = 0), ranked on the unclipped bound (inequality (1) for "
        "accuracy, (3) for macro-F1). Test macro-F1 is scikit-learn's `f1_score(average='macro')`.",
        "",
        "| learner | method | accuracy | lambda (acc) | macro-F1 | lambda (F1) |",
        "|---|---|---|---|---|---|",
    ]
    for name, L in r["learners"].items():
        for meth, row in L["table3"].items():
            a, f = row["accuracy"], row["macro_f1"]
            acc = f"{a['test']:.4f}" + (f" ± {a['sd']:.4f}" if a.get("sd") is not None else "")
            f1 = f"{f['test']:.4f}" + (f" ± {f['sd']:.4f}" if f.get("sd") is not None else "")
            lines.append(f"| {name} | {meth} | {acc} | {_fmt_lam(a['lambda'])} | {f1} | {_fmt_lam(f['lambda'])} |")
    lines += ["", "Hold-out: mean ± SD over the splits of the test score of each split's choice "
              "(lambda column: value x times chosen).", "",
              "The paper's Table 3 (its datasets; Bound_UN, Bound_Test, hold-out mean (SD), 5-CV; accuracy / MaF):",
              "", "| learner | dataset | Bound_UN | Bound_Test | hold-out | 5-CV |", "|---|---|---|---|---|---|"]
    for learner, rows in PAPER_TABLE3.items():
        for dsn, v in rows.items():
            lines.append(f"| {learner} | {dsn} | {v[0]:.4f} / {v[1]:.4f} | {v[2]:.4f} / {v[3]:.4f} | "
                         f"{v[4]:.4f} ({v[5]:.4f}) / {v[6]:.4f} ({v[7]:.4f}) | {v[8]:.4f} / {v[9]:.4f} |")
    lines += ["", "## Acceptance: Bound_UN (Theorem 1, CC) against 5-fold CV", "",
              "| learner | Bound_UN − CV accuracy | Bound_UN − CV macro-F1 | within 0.01 | paper's largest |diff| "
              "(acc / MaF) | timed pairs | Bound_UN time (median) | 5-fold CV time incl. refit (median) | speed-up "
              "(ratio of medians) | >= 3.5x |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, L in r["learners"].items():
        t3, tm = L["table3"], L["timing"]
        da = t3["Bound_UN"]["accuracy"]["test"] - t3["5-fold CV"]["accuracy"]["test"]
        df = t3["Bound_UN"]["macro_f1"]["test"] - t3["5-fold CV"]["macro_f1"]["test"]
        pa, pf = _paper_diffs(name)
        sp = tm["speedup_of_medians"]
        lines.append(f"| {name} | {da:+.4f} | {df:+.4f} | {'yes' if abs(da) <= 0.01 and abs(df) <= 0.01 else 'NO'} | "
                     f"{pa:.4f} / {pf:.4f} | {len(tm['bound_un_s'])} of {cfg.get('timing_repeats', '?')} | "
                     f"{tm['median_bound_un_s']:.1f} s | {tm['median_cv_s']:.1f} s | "
                     f"{sp:.2f}x | {'yes' if sp >= 3.5 else 'NO'} |")
    lines += ["", "Alternating timings (Bound_UN, CV, Bound_UN, CV, ...), with the 1-minute load average before "
              "each (2 cores shared with other jobs: load inflates both sides):", ""]
    for name, L in r["learners"].items():
        tm = L["timing"]
        pairs = "; ".join(f"{b:.1f} s (load {lb[0] if lb else 'n/a'}) / {c:.1f} s (load {lc[0] if lc else 'n/a'}) "
                          f"= {c / b:.2f}x" for b, c, lb, lc in zip(tm["bound_un_s"], tm["cv_s"],
                                                                    tm["load_before_bound_un"], tm["load_before_cv"]))
        f = L["fit_time_diagnostics"]
        lines.append(f"* {name}: {pairs}. Sum of the 8 full fits {f['sum_fit_full_s']:.1f} s, of the 8 mean 80 % "
                     f"fits {f['sum_fit_80pct_mean_s']:.1f} s (ratio {f['ratio_80_over_full_total']:.2f}), refit "
                     f"{f['cv_refit_s']:.1f} s: speed-up predicted from fit times alone "
                     f"{f['predicted_speedup_from_fit_times']:.2f}x.")
    lines += ["", "## Table 2: Max_eps of PCC on the quantification part (default hyper-parameters, lambda = 1)", "",
              "| learner | certa (Debian, 58 classes) | sigma | Max_eps x K | paper: " + ", ".join(PAPER_DATASETS) + " |",
              "|---|---|---|---|---|"]
    for name, L in r["learners"].items():
        t2 = L["table2"]
        extra = ""
        if "unnormalised_logistic" in t2:
            u = t2["unnormalised_logistic"]
            extra = f" (unnormalised logistic: {u['max_eps']:.4f}, sigma {u['sigma']:g})"
        sig = "—" if t2["sigma"] is None else f"{t2['sigma']:g}"
        lines.append(f"| {name} | {t2['max_eps']:.4f}{extra} | {sig} | {t2['max_eps_over_mean_prior']:.2f} | "
                     + ", ".join(f"{v:.4f}" for v in PAPER_TABLE2.get(name, [])) + " |")
    lines += ["", "Max_eps x K compares Max_eps with the mean class prior 1/K (the paper: the values are "
              "\"not negligible compared to the class prior probabilities, which are in the range of 1 divided "
              "by the number of classes\").", "", "## Per lambda", ""]
    for name, L in r["learners"].items():
        lines += [f"### {name}: Theorem 1's t = {L['theorem1_t']:.5f}, accuracy term K t = "
                  f"{L['theorem1_accuracy_term']:.4f}; certa's L1 radius = {L['certa_lambda_l1']:.4f}", "",
                  "| lambda | test acc | test F1 | CV acc | CV F1 | B_A (UN) | (1) UN | H(B_MaP,B_MaR) (UN) | (3) UN "
                  "| (1) Test | (3) Test | certa acc (UN) | certa F1 (UN) | PCC Max_eps | PCC eps step 5 | "
                  "PCC (1) UN | PCC (3) UN | fit s |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for p in L["per_lambda"]:
            eps5 = f"{p['pcc_eps_step5_un']:.4f}" + (" (→CC)" if p["pcc_fell_back_un"] else "")
            lines.append(
                f"| {p['lambda']:g} | {p['test_accuracy']:.4f} | {p['test_macro_f1']:.4f} | {p['cv_accuracy']:.4f} | "
                f"{p['cv_macro_f1']:.4f} | {p['B_A_un']:.4f} | {p['thm1_acc_un']:.4f} | {p['H_un']:.4f} | "
                f"{p['thm1_f1_un']:.4f} | {p['thm1_acc_test']:.4f} | {p['thm1_f1_test']:.4f} | "
                f"{p['certa_acc_un']:.4f} | {p['certa_f1_un']:.4f} | {p['pcc_max_eps_un']:.4f} | {eps5} | "
                f"{p['thm1_acc_un_pcc']:.4f} | {p['thm1_f1_un_pcc']:.4f} | {p['fit_time_full']:.2f} |")
        ho_t = L.get("holdout_time_s")
        lines += ["", (f"Hold-out time {ho_t:.1f} s. " if ho_t is not None else "Hold-out not run yet. ")
                  + f"QuaPy check: {L['quapy_check']}.", ""]
    m = r["machine"]
    lines += [f"Machine: Python {m.get('python')}, {m.get('cpu_count')} CPUs shared with other jobs; load average at "
              f"start {m.get('loadavg_at_start')}, at end {m.get('loadavg_at_end')}."]
    for run in r.get("runs", []):
        mm = run.get("machine") or {}
        lines.append(f"Run `{run.get('command')}`: load at start {mm.get('loadavg_at_start')}, "
                     f"at end {mm.get('loadavg_at_end')}.")
    return "\n".join(lines) + "\n"
