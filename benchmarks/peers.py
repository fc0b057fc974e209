"""Peers, side by side (issue 23 item 3): certa's selection against Optuna 5 and scikit-learn.

Every peer runs with its own library, in one run, on the same scores:

* ``optuna-wilcoxon-N`` (N = 10, 20, 30): ``GridSampler`` over the candidates (one trial per
  candidate, the grid order shuffled by the run's seed) and ``WilcoxonPruner(p_threshold=0.1)``;
  each trial reports one split's score per step (the step is the split's id, so the pruner
  pairs the same split across trials), in its own shuffled order, over the run's N splits, and
  raises ``TrialPruned`` when told to; the choice is ``study.best_trial`` (complete trials only).
* ``optuna-5-fold`` / ``optuna-10-fold``: the same sampler, no pruner, each trial's value the mean
  of one 5-fold (10-fold) partition.
* ``GridSearchCV-5-fold`` / ``GridSearchCV-10x5``: scikit-learn's ``GridSearchCV`` with ``cv`` one
  5-fold partition / ten (repeated stratified 10x5).
* ``HalvingGridSearchCV``: scikit-learn's successive halving (factor 3) on a 5-fold partition with
  ``resource="n_samples"`` (real fits on subsamples; on the replay, where there is no training
  set, the resource is the number of rows a candidate is scored on, at most 30).
* ``certa-unpaired`` (top-two Thompson, IDS, the delta-correct ``stopping="glr"``, confidence
  0.95: certa's default before pairing), ``certa-fiesta`` (``strategy="fiesta"``: FIESTA's top-two
  with the Bayesian stopping rule), each evaluation a random fold, and ``certa-default`` (what
  ``make_strategy("auto")`` builds: the paired ``PairedElimination``, every survivor on the same
  fold per row).

Tasks:

* ``tdsa``: the FIESTA paper's TDSA replay (8 models x 500 macro-F1 scores; row i is one split and
  seed for every model); truth = the table's full means; a split = a row.
* ``debian``: real fits on the 3,000 bundled Debian descriptions (6 sections): 11 candidates, TF-IDF
  (vocabulary counted once over all texts, no labels; TF-IDF weights fitted per training part) +
  LinearSVC, logistic regression, ridge, SGD, naive Bayes, at several settings.
* ``digits``: real fits on scikit-learn's digits, 6 model families.
* ``lemma``: the 250-setting k-NN grid of ``ProgressiveSearchCV`` (``certa.learners.knn_grid``) on a
  draw of the bundled Dutch lemma data (``--lemma-n`` forms, default 6,000, seed 0 as in
  ``progressive.py lemma``); its folds are scored by one neighbour search per weighting and fold
  (the neighbours of every k are a prefix of those of the largest k: exactly the pipeline's
  predictions, checked in ``tests/test_peers.py``).

Real-fit tasks work on a pool of fits computed once and cached in
``benchmarks/results/peers_fits_<task>.json`` (``pool`` subcommand, in parts): every candidate on
every fold of a 20x5 repeated stratified 5-fold CV and of a 5x10 repeated stratified 10-fold CV
over the whole data. Truth = each candidate's mean over the 20x5 CV (100 folds; the issue asks for
10x5). The peers draw their partitions from the pool (a run's 5-fold partition is one of the 20,
its 10x5 ten of them, its Wilcoxon steps the folds of randomly ordered 5-fold partitions, certa's
evaluations random folds with replacement), as the replay draws rows from the table whose means
are the truth. Halving's subsample fits are real fits, cached by their indices. Costs are counted
in fits (one candidate trained on one training part and scored); fit seconds are the summed
recorded durations of the fits a run used; the library's own decision overhead is timed per run.

Usage (CPU-heavy parts under ``flock /tmp/certa-cpu.lock``)::

    python3 benchmarks/peers.py pool digits --part 0 --parts 2     # cached fits, in parts
    python3 benchmarks/peers.py run digits --runs 50 --halving-runs 20   # all peers, one run
    python3 benchmarks/peers.py report                             # docs table + figures
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import math
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from _common import (
    RESULTS,
    ROOT,
    TDSA_MODELS8,
    fmt_load,
    loadavg,
    machine_info,
    md_table,
    set_results_dir,
    tdsa_table,
    write_results,
)
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import GridSearchCV, HalvingGridSearchCV, RepeatedStratifiedKFold

from certa.engine.draws import derive_seed
from certa.engine.evaluators import FunctionEvaluator
from certa.planning.simulate import ReplayScores, run_direct
from certa.search.bandit import STRATEGIES, make_strategy

TDSA_MODELS = TDSA_MODELS8
TASKS = ("tdsa", "debian", "digits", "lemma")
REAL_TASKS = ("debian", "digits", "lemma")
FIGURES = ROOT / "docs" / "img"
POOL = {"5": (5, 20, 505), "10": (10, 5, 1010)}   # scheme -> (folds, repeats, random_state)
CONFIDENCE = 0.95
WILCOXON_STEPS = (10, 20, 30)
P_THRESHOLD = 0.1


# ----------------------------------------------------------------------------------------------
# tasks: candidates, data and one fit
# ----------------------------------------------------------------------------------------------

def _debian_candidates() -> dict[str, Any]:
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.linear_model import LogisticRegression, RidgeClassifier, SGDClassifier
    from sklearn.naive_bayes import ComplementNB, MultinomialNB
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    def tfidf(clf):
        return make_pipeline(TfidfTransformer(sublinear_tf=True), clf)

    return {"svc C=0.1": tfidf(LinearSVC(C=0.1)), "svc C=1": tfidf(LinearSVC(C=1.0)),
            "svc C=10": tfidf(LinearSVC(C=10.0)),
            "logreg C=10": tfidf(LogisticRegression(C=10.0, solver="saga", max_iter=200, tol=1e-3)),
            "logreg C=100": tfidf(LogisticRegression(C=100.0, solver="saga", max_iter=200, tol=1e-3)),
            "ridge a=1": tfidf(RidgeClassifier(alpha=1.0, solver="sparse_cg")),
            "ridge a=0.3": tfidf(RidgeClassifier(alpha=0.3, solver="sparse_cg")),
            "sgd hinge": tfidf(SGDClassifier(alpha=1e-4, random_state=0)),
            "sgd log a=1e-5": tfidf(SGDClassifier(loss="log_loss", alpha=1e-5, random_state=0)),
            "nb a=0.1": tfidf(MultinomialNB(alpha=0.1)), "cnb a=0.3": tfidf(ComplementNB(alpha=0.3))}


def _digits_candidates() -> dict[str, Any]:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    return {"svc rbf": SVC(), "knn": KNeighborsClassifier(),
            "logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
            "random forest": RandomForestClassifier(n_estimators=50, random_state=0),
            "gaussian nb": GaussianNB(), "tree": DecisionTreeClassifier(random_state=0)}


class Task:
    """Candidates and data of a real-fit task; ``fit_score(c, train, test)`` is one fit."""

    def __init__(self, name: str, lemma_n: int = 6000) -> None:
        self.name = name
        if name == "debian":
            from sklearn.feature_extraction.text import CountVectorizer

            from certa.datasets import load_debian_small

            texts, y = load_debian_small(return_X_y=True)
            # counts once over all texts (no labels used); TF-IDF weights are fitted per training part
            self.X, self.y = CountVectorizer().fit_transform(texts).tocsr(), np.asarray(y)
            self.models = _debian_candidates()
            self.names = list(self.models)
        elif name == "digits":
            from sklearn.datasets import load_digits

            self.X, self.y = load_digits(return_X_y=True)
            self.models = _digits_candidates()
            self.names = list(self.models)
        elif name == "lemma":
            from certa.engine.candidates import candidates_from_grid
            from certa.learners import knn_grid, knn_pipeline

            self.X, self.y = lemma_draw(lemma_n)
            self.cands = candidates_from_grid(knn_grid())
            self.names = [c.name for c in self.cands]
            self.pipeline = knn_pipeline()
        else:
            raise ValueError(f"task must be one of {REAL_TASKS}, got {name!r}")
        self.n = len(self.y)

    def estimator(self, c: int) -> Any:
        """The real scikit-learn estimator of candidate ``c``."""
        if self.name == "lemma":
            return clone(self.pipeline).set_params(**self.cands[c].params)
        return clone(self.models[self.names[c]])

    def fit_score(self, c: int, train: np.ndarray, test: np.ndarray) -> float:
        est = self.estimator(c)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(self.X[train], self.y[train])
        return float(est.score(self.X[test], self.y[test]))

    def fold_scores(self, train: np.ndarray, test: np.ndarray) -> list[float]:
        """Every candidate's score on one fold (the lemma grid from one neighbour search per weighting)."""
        if self.name != "lemma":
            return [self.fit_score(c, train, test) for c in range(len(self.names))]
        return knn_grid_scores(self.X[train], self.y[train], self.X[test], self.y[test], self.cands)


def lemma_draw(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` forms of ``progressive.py lemma``'s fixed shuffle of the bundled data (seed 0)."""
    from certa.datasets import load_nl_lemma

    X, y = load_nl_lemma(return_X_y=True)
    keep = np.random.default_rng(0).permutation(len(y))[:n]
    return X[keep], y[keep]


def knn_grid_scores(X_train, y_train, X_test, y_test, cands) -> list[float]:
    """Accuracy of every ``knn_pipeline`` setting in ``cands`` on one fold, one neighbour search per weighting.

    ``StableKNeighborsClassifier``'s k nearest are the first k of a stable sort by distance, so
    the neighbours (and distances) for every k are a prefix of those for the largest k; votes
    are then weighted and counted exactly as its ``predict_proba`` does.
    """
    from certa.learners import StableKNeighborsClassifier, SymbolicEncoder, _vote_weights

    out = [math.nan] * len(cands)
    by_weighting: dict[str, list] = {}
    for c in cands:
        by_weighting.setdefault(c.params["enc__weighting"], []).append(c)
    for weighting, group in by_weighting.items():
        enc = SymbolicEncoder("onehot", weighting).fit(X_train, y_train)
        kmax = max(c.params["knn__n_neighbors"] for c in group)
        knn = StableKNeighborsClassifier(n_neighbors=kmax, algorithm="brute").fit(enc.transform(X_train), y_train)
        dist_all, ind_all = knn.kneighbors(enc.transform(X_test))
        truth = np.asarray(y_test)
        for c in group:
            k = c.params["knn__n_neighbors"]
            dist, ind = dist_all[:, :k], ind_all[:, :k]
            w = _vote_weights(dist, c.params["knn__weights"])
            proba = np.zeros((ind.shape[0], len(knn.classes_)))
            np.add.at(proba, (np.repeat(np.arange(ind.shape[0]), ind.shape[1]), knn._y[ind].ravel()), w.ravel())
            proba /= proba.sum(axis=1, keepdims=True)
            out[c.index] = float(np.mean(knn.classes_[np.argmax(proba, axis=1)] == truth))
    return out


# ----------------------------------------------------------------------------------------------
# the pool of fits: every candidate on every fold of the 20x5 and 5x10 CV, cached
# ----------------------------------------------------------------------------------------------

def _h(idx: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(np.asarray(idx, dtype=np.int64)).tobytes()).hexdigest()[:16]


def pool_folds(y: np.ndarray, pool: dict[str, tuple[int, int, int]] | None = None) -> list[dict[str, Any]]:
    """The pool's folds: ``{"id", "scheme", "repeat", "fold", "train", "test"}`` in a fixed order.

    ``pool`` maps a scheme to ``(folds, repeats, random_state)`` of a ``RepeatedStratifiedKFold``
    (default :data:`POOL`).
    """
    folds = []
    for scheme, (k, repeats, seed) in (POOL if pool is None else pool).items():
        X0 = np.zeros((len(y), 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # lemma classes with fewer members than folds
            splits = list(RepeatedStratifiedKFold(n_splits=k, n_repeats=repeats, random_state=seed).split(X0, y))
        for i, (train, test) in enumerate(splits):
            folds.append({"id": f"{scheme}:{i // k}:{i % k}", "scheme": scheme, "repeat": i // k, "fold": i % k,
                          "train": train, "test": test})
    return folds


def fits_path(task: str) -> Path:
    return RESULTS / f"peers_fits_{task}.json"


class FitCache:
    """Scores of fits keyed by ``candidate|hash(train)|hash(test)``, with their durations; JSON-backed."""

    def __init__(self, task: str, lemma_n: int = 6000, path: Path | None = None) -> None:
        self.task_name = task
        self.lemma_n = lemma_n
        self.path = fits_path(task) if path is None else Path(path)
        data = json.loads(self.path.read_text()) if self.path.exists() else {}
        self.meta = data.get("meta", {})
        self.fits: dict[str, list[float]] = data.get("fits", {})
        self._task: Task | None = None
        self.new_fits = 0

    @property
    def task(self) -> Task:
        if self._task is None:
            self._task = Task(self.task_name, self.lemma_n)
        return self._task

    @staticmethod
    def key(c: int, train: np.ndarray, test: np.ndarray) -> str:
        return f"{c}|{_h(train)}|{_h(test)}"

    def score(self, c: int, train: np.ndarray, test: np.ndarray) -> float:
        k = self.key(c, train, test)
        if k not in self.fits:
            t0 = time.perf_counter()
            s = self.task.fit_score(c, train, test)
            self.fits[k] = [s, time.perf_counter() - t0]
            self.new_fits += 1
        return self.fits[k][0]

    def duration(self, c: int, train: np.ndarray, test: np.ndarray) -> float:
        return self.fits[self.key(c, train, test)][1]

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fits = {k: [v[0], float(f"{v[1]:.3g}")] for k, v in self.fits.items()}   # durations to 3 digits
        tmp.write_text(json.dumps({"meta": self.meta, "fits": fits}, separators=(",", ":")) + "\n")
        tmp.replace(self.path)


def build_pool(task: str, part: int, parts: int, lemma_n: int, save_every_s: float = 60.0) -> dict[str, Any]:
    """Score every candidate on folds ``part::parts`` of the pool (cached; a rerun is free)."""
    cache = FitCache(task, lemma_n)
    t = cache.task
    folds = pool_folds(t.y)
    cache.meta.update({"task": task, "n": t.n, "candidates": t.names, "pool": POOL,
                       "lemma_n": lemma_n if task == "lemma" else None})
    cache.meta.setdefault("loadavg", []).append(loadavg())
    t0 = last = time.perf_counter()
    done = 0
    for f in folds[part::parts]:
        keys = [cache.key(c, f["train"], f["test"]) for c in range(len(t.names))]
        if all(k in cache.fits for k in keys):
            continue
        if task == "lemma":   # the whole grid from one neighbour search per weighting; time shared evenly
            s0 = time.perf_counter()
            scores = t.fold_scores(f["train"], f["test"])
            per = (time.perf_counter() - s0) / len(keys)
            for k, s in zip(keys, scores, strict=True):
                cache.fits[k] = [s, per]
        else:
            for c, k in enumerate(keys):
                cache.score(c, f["train"], f["test"])
        done += 1
        if time.perf_counter() - last > save_every_s:
            cache.save()
            last = time.perf_counter()
            print(f"[{task}] {done} folds in {last - t0:.0f} s (load {fmt_load(loadavg())})", flush=True)
    cache.save()
    return {"folds_scored": done, "seconds": time.perf_counter() - t0}


class Pool:
    """A task's pool as arrays: ``scores[c, j]`` and ``seconds[c, j]`` on fold ``j`` of ``folds``."""

    def __init__(self, task: str, lemma_n: int = 6000) -> None:
        self.cache = FitCache(task, lemma_n)
        if not self.cache.fits:
            raise FileNotFoundError(f"no pool for {task}: run `peers.py pool {task}` first")
        self.names = list(self.cache.meta["candidates"])
        y = self._labels(task, lemma_n)
        self.folds = pool_folds(y)
        K = len(self.names)
        self.scores = np.full((K, len(self.folds)), np.nan)
        self.seconds = np.full((K, len(self.folds)), np.nan)
        for j, f in enumerate(self.folds):
            for c in range(K):
                hit = self.cache.fits.get(self.cache.key(c, f["train"], f["test"]))
                if hit is not None:
                    self.scores[c, j], self.seconds[c, j] = hit
        missing = int(np.isnan(self.scores).sum())
        if missing:
            raise RuntimeError(f"the {task} pool misses {missing} fits: run `peers.py pool {task}` (all parts)")
        self.five = [j for j, f in enumerate(self.folds) if f["scheme"] == "5"]
        self.ten = [j for j, f in enumerate(self.folds) if f["scheme"] == "10"]
        self.partitions = {s: [[j for j, f in enumerate(self.folds) if f["scheme"] == s and f["repeat"] == r]
                               for r in range(POOL[s][1])] for s in POOL}
        self.truth = self.scores[:, self.five].mean(axis=1)

    @staticmethod
    def _labels(task: str, lemma_n: int) -> np.ndarray:
        if task == "lemma":
            return lemma_draw(lemma_n)[1]
        if task == "digits":
            from sklearn.datasets import load_digits

            return load_digits().target
        from certa.datasets import load_debian_small

        return np.asarray(load_debian_small(return_X_y=True)[1])


# ----------------------------------------------------------------------------------------------
# a uniform view of a task for the peers: rows (splits) scored per candidate
# ----------------------------------------------------------------------------------------------

class Bench:
    """What the peers see: ``score(c, row)``, the rows a method may use, the truth, fit seconds.

    For the replay a row is a table row (one split and seed for every model); for a real-fit task
    a row is a fold of the pool, and ``partition(scheme, rng)`` gives a random partition's rows.
    """

    def __init__(self, name: str, names: list[str], scores: np.ndarray, seconds: np.ndarray | None,
                 truth: np.ndarray, partitions: dict[str, list[list[int]]] | None, replay_rows: list[int],
                 pool: Pool | None = None) -> None:
        self.name, self.names, self.scores, self.seconds = name, names, scores, seconds
        self.truth, self.partitions, self.replay_rows, self.pool = truth, partitions, replay_rows, pool
        self.K = len(names)
        self.best = int(np.argmax(truth))
        if np.sum(truth == truth.max()) > 1:
            raise ValueError(f"{name}: no unique true best")

    def score(self, c: int, row: int) -> float:
        return float(self.scores[c, row])

    def rows_cv(self, k: int, rng: np.random.Generator, n_partitions: int = 1) -> list[list[int]]:
        """``n_partitions`` random k-fold partitions (lists of rows); on the replay, k random rows each."""
        if self.partitions is None:
            rows = rng.choice(self.replay_rows, size=k * n_partitions, replace=False)
            return [list(rows[i * k:(i + 1) * k]) for i in range(n_partitions)]
        parts = self.partitions[str(k)]
        pick = rng.choice(len(parts), size=n_partitions, replace=False)
        return [list(parts[p]) for p in pick]

    def rows_steps(self, n: int, rng: np.random.Generator) -> list[int]:
        """``n`` splits for a pruned study: random rows, or the folds of randomly ordered 5-fold partitions."""
        if self.partitions is None:
            return list(rng.choice(self.replay_rows, size=n, replace=False))
        parts = self.partitions["5"]
        order = rng.permutation(len(parts))[: math.ceil(n / 5)]
        return [j for p in order for j in parts[p]][:n]

    def fit_seconds(self, used: Sequence[tuple[int, int]]) -> float:
        if self.seconds is None:
            return 0.0
        return float(sum(self.seconds[c, r] for c, r in used))


def tdsa_bench() -> Bench:
    table = tdsa_table(TDSA_MODELS)
    scores = np.array([table[m] for m in TDSA_MODELS], dtype=float)
    return Bench("tdsa", TDSA_MODELS, scores, None, scores.mean(axis=1), None, list(range(scores.shape[1])))


def real_bench(task: str, lemma_n: int = 6000) -> Bench:
    pool = Pool(task, lemma_n)
    # certa's random splits are drawn from the 5-fold pool (the 100 folds of the truth's CV)
    return Bench(task, pool.names, pool.scores, pool.seconds, pool.truth, pool.partitions, pool.five, pool)


def get_bench(task: str, lemma_n: int = 6000) -> Bench:
    return tdsa_bench() if task == "tdsa" else real_bench(task, lemma_n)


# ----------------------------------------------------------------------------------------------
# peers: each returns {"choice", "fits", "used": [(c, row)], "confidence"}
# ----------------------------------------------------------------------------------------------

def _quiet_optuna():
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    return optuna


def signed_rank_p_exact(d: np.ndarray, alternative: str) -> float:
    """The p-value ``scipy.stats.wilcoxon(d, alternative=..., zero_method="zsplit")`` gives when it
    runs its exact permutation test (ties or zeros and at most 13 differences), by counting.

    scipy flips the sign of every difference (2**n patterns) and recomputes the statistic; here
    the same null distribution of ``R+`` comes from a sum over the nonzero differences' ranks
    (in quarter units, so midranks and the zeros' half ranks are integers).
    """
    from scipy.stats import rankdata

    d = np.asarray(d, dtype=float)
    x = np.rint(4 * rankdata(np.abs(d))).astype(np.int64)
    nonzero = x[d != 0]
    obs = int(x[d > 0].sum())
    counts = np.zeros(int(nonzero.sum()) + 1)
    counts[0] = 1.0
    for v in nonzero:
        counts[v:] = counts[v:] + counts[:-v].copy()   # v >= 4: every rank is at least 1
    total = counts.sum()
    if alternative == "less":
        return float(counts[: obs + 1].sum() / total)
    if alternative == "greater":
        return float(counts[obs:].sum() / total)
    raise ValueError(f"alternative must be 'less' or 'greater', got {alternative!r}")


class _FastWilcoxon:
    """Stands in for ``scipy.stats`` inside Optuna's WilcoxonPruner: the same p-values (see
    :func:`signed_rank_p_exact`), without scipy's 2**n recomputations of the statistic (2-4 s per test
    at n = 12-13 here), which tied real-fit scores trigger at every step; any other case is scipy's."""

    def __getattr__(self, name):
        import scipy.stats

        return getattr(scipy.stats, name)

    @staticmethod
    def wilcoxon(d, alternative="two-sided", zero_method="wilcox", **kw):
        import scipy.stats

        d = np.asarray(d, dtype=float)
        ties = len(np.unique(np.abs(d))) < d.size or np.any(d == 0)
        if (zero_method == "zsplit" and not kw and alternative in ("less", "greater") and ties
                and 0 < d.size <= 13):
            return scipy.stats._morestats.WilcoxonResult(statistic=np.nan,
                                                         pvalue=signed_rank_p_exact(d, alternative))
        return scipy.stats.wilcoxon(d, alternative=alternative, zero_method=zero_method, **kw)


def _fast_pruner_pvalues() -> None:
    import optuna.pruners._wilcoxon as ow

    if not isinstance(ow.ss, _FastWilcoxon):
        ow.ss = _FastWilcoxon()


def grid_objective(optuna: Any, n_candidates: int, steps: Any, score: Callable[[int, int], float],
                   order_seed: Callable[[int], int], on_trial: Callable[[int], None] | None = None) -> Callable:
    """The Optuna objective the peers share: a trial picks a candidate index (``GridSampler``), scores it on every
    step in a random order seeded by ``order_seed(trial.number)`` (a permutation of ``steps``: an array of row ids
    or a count), reports each score at its step and stops when the pruner says so; its value is the mean."""
    def objective(trial):
        c = trial.suggest_categorical("candidate", list(range(n_candidates)))
        if on_trial is not None:
            on_trial(c)
        values = []
        for s in np.random.default_rng(order_seed(trial.number)).permutation(steps):
            v = score(c, int(s))
            values.append(v)
            trial.report(v, int(s))
            if trial.should_prune():
                raise optuna.TrialPruned()
        return float(np.mean(values))
    return objective


def optuna_wilcoxon(bench: Bench, seed: int, steps: int, p_threshold: float = P_THRESHOLD) -> dict[str, Any]:
    """Optuna 5: GridSampler over the candidates + WilcoxonPruner, one split's score per step."""
    optuna = _quiet_optuna()
    _fast_pruner_pvalues()
    rng = np.random.default_rng(derive_seed(seed, 1))
    rows = bench.rows_steps(steps, rng)
    used: list[tuple[int, int]] = []
    trials: list[dict[str, Any]] = []

    def score(c: int, r: int) -> float:
        used.append((c, r))
        trials[-1]["rows"].append(r)
        return bench.score(c, r)

    objective = grid_objective(optuna, bench.K, rows, score, lambda n: derive_seed(seed, 2, n),
                               on_trial=lambda c: trials.append({"candidate": c, "rows": []}))
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.GridSampler({"candidate": list(range(bench.K))}, seed=seed),
                                pruner=optuna.pruners.WilcoxonPruner(p_threshold=p_threshold))
    study.optimize(objective, n_trials=bench.K)
    for t, rec in zip(study.trials, trials, strict=True):
        rec["state"] = t.state.name
    return {"choice": int(study.best_trial.params["candidate"]), "fits": len(used), "used": used,
            "confidence": None, "trials": trials, "rows": [int(r) for r in rows]}


def optuna_cv(bench: Bench, seed: int, k: int) -> dict[str, Any]:
    """Optuna 5: GridSampler over the candidates, each trial's value the mean of one k-fold partition."""
    optuna = _quiet_optuna()
    rows = bench.rows_cv(k, np.random.default_rng(derive_seed(seed, 3, k)))[0]
    used: list[tuple[int, int]] = []

    def objective(trial):
        c = trial.suggest_categorical("candidate", list(range(bench.K)))
        used.extend((c, r) for r in rows)
        return float(np.mean([bench.score(c, r) for r in rows]))

    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.GridSampler({"candidate": list(range(bench.K))}, seed=seed))
    study.optimize(objective, n_trials=bench.K)
    return {"choice": int(study.best_trial.params["candidate"]), "fits": len(used), "used": used, "confidence": None}


class RowScorer(ClassifierMixin, BaseEstimator):
    """A scikit-learn estimator whose ``fit`` + ``score`` on a split is candidate ``candidate``'s fit there.

    ``X`` holds indices: for a real-fit task, rows of the data (the fit is looked up in the task's
    cache, or made and cached); for the replay, table rows (the score of the test rows' first
    ``n_rows`` rows, averaged). Registered benches are found by name, so clones stay cheap.
    """

    _benches: ClassVar[dict[str, Bench]] = {}
    _log: ClassVar[dict[str, list]] = {}

    def __init__(self, candidate: int = 0, bench: str = "", n_rows: int | None = None) -> None:
        self.candidate = candidate
        self.bench = bench
        self.n_rows = n_rows

    def fit(self, X, y=None):
        self.train_ = np.asarray(X)[:, 0].astype(np.int64)
        self.classes_ = np.unique(y) if y is not None else np.array([0])
        return self

    def predict(self, X):  # pragma: no cover - searches here only call score
        raise NotImplementedError("RowScorer only scores")

    def score(self, X, y=None, sample_weight=None):
        b = self._benches[self.bench]
        test = np.asarray(X)[:, 0].astype(np.int64)
        log = self._log[self.bench]
        if b.pool is None:   # replay: X are table rows
            rows = test[: self.n_rows] if self.n_rows else test
            log.extend(("row", self.candidate, int(r)) for r in rows)
            return float(np.mean([b.score(self.candidate, int(r)) for r in rows]))
        cache = b.pool.cache
        s = cache.score(self.candidate, self.train_, test)
        log.append(("fit", self.candidate, cache.duration(self.candidate, self.train_, test)))
        return s


def _sk_run(bench: Bench, search_fn: Callable[[RowScorer], Any]) -> dict[str, Any]:
    RowScorer._benches[bench.name] = bench
    RowScorer._log[bench.name] = []
    search = search_fn(RowScorer(bench=bench.name))
    log = RowScorer._log[bench.name]
    secs = sum(e[2] for e in log if e[0] == "fit") + bench.fit_seconds([(e[1], e[2]) for e in log if e[0] == "row"])
    return {"choice": int(search.best_params_["candidate"]), "fits": len(log), "confidence": None,
            "fit_seconds": secs, "search": search}


def _cv_pairs(bench: Bench, parts: list[list[int]]) -> tuple[np.ndarray, np.ndarray, list]:
    """(X of indices, y, cv) for a search over ``parts`` (lists of rows)."""
    if bench.pool is None:
        n = bench.scores.shape[1]
        X = np.arange(n)[:, None]
        cv = [(np.setdiff1d(np.arange(n), [r]), np.array([r])) for p in parts for r in p]
        return X, np.zeros(n, dtype=int), cv
    folds = bench.pool.folds
    y = _pool_y(bench)
    X = np.arange(len(y))[:, None]
    cv = [(folds[r]["train"], folds[r]["test"]) for p in parts for r in p]
    return X, y, cv


def _pool_y(bench: Bench) -> np.ndarray:
    if not hasattr(bench, "_y"):
        bench._y = Pool._labels(bench.name, bench.pool.cache.lemma_n)
    return bench._y


def sk_grid(bench: Bench, seed: int, n_partitions: int) -> dict[str, Any]:
    """scikit-learn GridSearchCV with cv = ``n_partitions`` random 5-fold partitions (1: 5-fold; 10: 10x5)."""
    parts = bench.rows_cv(5, np.random.default_rng(derive_seed(seed, 4, n_partitions)), n_partitions)
    X, y, cv = _cv_pairs(bench, parts)
    return _sk_run(bench, lambda est: GridSearchCV(est, {"candidate": list(range(bench.K))}, cv=cv,
                                                   refit=False).fit(X, y))


def sk_halving(bench: Bench, seed: int) -> dict[str, Any]:
    """scikit-learn HalvingGridSearchCV, factor 3 (real tasks: n_samples on a 5-fold partition)."""
    rng = np.random.default_rng(derive_seed(seed, 5))
    grid = {"candidate": list(range(bench.K))}
    if bench.pool is None:
        rows = np.array(rng.choice(bench.replay_rows, size=30, replace=False))
        n = bench.scores.shape[1]
        X, y = np.arange(n)[:, None], np.zeros(n, dtype=int)
        cv = [(np.setdiff1d(np.arange(n), rows), rows)]
        return _sk_run(bench, lambda est: HalvingGridSearchCV(
            est, grid, resource="n_rows", max_resources=30, min_resources="exhaust", factor=3, cv=cv,
            refit=False, return_train_score=False, random_state=seed).fit(X, y))
    X, y, cv = _cv_pairs(bench, bench.rows_cv(5, rng))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _sk_run(bench, lambda est: HalvingGridSearchCV(
            est, grid, resource="n_samples", factor=3, cv=cv, refit=False, return_train_score=False,
            random_state=seed).fit(X, y))


def certa_peer(bench: Bench, seed: int, strategy: Any) -> dict[str, Any]:
    """certa's strategy on random splits: the replay's rows or the pool's folds, drawn with replacement."""
    table = {n: bench.scores[c, bench.replay_rows] for c, n in enumerate(bench.names)}
    strat = copy.deepcopy(strategy)
    if hasattr(strat, "_track_belief"):
        strat._track_belief = False
    # a paired strategy (certa's default once pairing landed) replays whole rows: one fold for every candidate
    source = ReplayScores(table, paired=True) if getattr(strat, "paired", False) else ReplayScores(table)
    res = run_direct(strat, FunctionEvaluator(source), bench.K, seed)
    ev = np.asarray(res["evaluations"], dtype=int)
    secs = 0.0 if bench.seconds is None else float(ev @ bench.seconds[:, bench.replay_rows].mean(axis=1))
    return {"choice": int(res["best"]), "fits": int(ev.sum()), "confidence": float(res.get("confidence", np.nan)),
            "fit_seconds": secs, "per_candidate": ev.tolist()}


def peers(lemma: bool = False) -> dict[str, dict[str, Any]]:
    """Every peer: name -> {"run": fn(bench, seed), "states": the confidence it states or None}."""
    out: dict[str, dict[str, Any]] = {}
    for n in WILCOXON_STEPS:
        out[f"optuna-wilcoxon-{n}"] = {"run": lambda b, s, n=n: optuna_wilcoxon(b, s, n), "states": None,
                                       "lib": "optuna"}
    out["optuna-5-fold"] = {"run": lambda b, s: optuna_cv(b, s, 5), "states": None, "lib": "optuna"}
    out["optuna-10-fold"] = {"run": lambda b, s: optuna_cv(b, s, 10), "states": None, "lib": "optuna"}
    out["GridSearchCV-5-fold"] = {"run": lambda b, s: sk_grid(b, s, 1), "states": None, "lib": "sklearn"}
    out["GridSearchCV-10x5"] = {"run": lambda b, s: sk_grid(b, s, 10), "states": None, "lib": "sklearn"}
    out["HalvingGridSearchCV"] = {"run": sk_halving, "states": None, "lib": "sklearn"}
    unpaired = make_strategy("top_two", confidence=CONFIDENCE, budget=None, stopping="glr", beta="ids")
    fiesta = make_strategy("fiesta", confidence=CONFIDENCE, budget=None)
    default = make_strategy("auto" if "auto" in STRATEGIES else "top_two", confidence=CONFIDENCE, budget=None)
    out["certa-unpaired"] = {"run": lambda b, s: certa_peer(b, s, unpaired), "states": CONFIDENCE, "lib": "certa",
                             "spec": unpaired.spec()}
    out["certa-fiesta"] = {"run": lambda b, s: certa_peer(b, s, fiesta), "states": CONFIDENCE, "lib": "certa",
                           "spec": fiesta.spec(), "stated_as": "posterior P(best)"}
    out["certa-default"] = {"run": lambda b, s: certa_peer(b, s, default), "states": CONFIDENCE, "lib": "certa",
                            "spec": default.spec()}
    return out


# ----------------------------------------------------------------------------------------------
# measuring
# ----------------------------------------------------------------------------------------------

def binom_upper_p(k: int, n: int, p: float) -> float:
    """One-sided p-value of ``k`` or more wrong choices in ``n`` runs at rate ``p``."""
    from scipy.stats import binom

    return float(binom.sf(k - 1, n, p)) if k > 0 else 1.0


def measure(bench: Bench, name: str, peer: dict[str, Any], runs: int, seed: int) -> dict[str, Any]:
    fits, choices, secs, conf, over = [], [], [], [], []
    load0 = loadavg()
    for r in range(runs):
        s = derive_seed(seed, r)
        t0 = time.perf_counter()
        out = peer["run"](bench, s)
        over.append(time.perf_counter() - t0)
        fits.append(out["fits"])
        choices.append(out["choice"])
        secs.append(out.get("fit_seconds", bench.fit_seconds(out.get("used", []))))
        conf.append(out.get("confidence"))
    fits_a, ch = np.asarray(fits, dtype=float), np.asarray(choices)
    right = ch == bench.best
    regret = bench.truth.max() - bench.truth[ch]
    wrong = int((~right).sum())
    row = {"peer": name, "library": peer["lib"], "runs": runs, "fits_mean": float(fits_a.mean()),
           "fits_sd": float(fits_a.std(ddof=1)) if runs > 1 else 0.0, "fits_max": int(fits_a.max()),
           "p_correct": float(right.mean()), "se_correct": float(math.sqrt(max(right.mean() * (1 - right.mean()),
                                                                                   1e-12) / runs)),
           "regret_mean": float(regret.mean()), "regret_max": float(regret.max()),
           "fit_seconds_mean": float(np.mean(secs)), "overhead_seconds_mean": float(np.mean(over)),
           "loadavg_start": load0, "loadavg_end": loadavg(),
           "chosen_counts": {bench.names[i]: int(c) for i, c in zip(*np.unique(ch, return_counts=True))},
           "stated_confidence": peer["states"], "spec": peer.get("spec")}
    if peer["states"] is not None:
        delta = 1 - peer["states"]
        row["wrong_rate"] = wrong / runs
        row["wrong_vs_delta_p"] = binom_upper_p(wrong, runs, delta)
        row["confidence_reached_mean"] = float(np.nanmean([c for c in conf if c is not None]))
    return row


def dominated_by(rows: list[dict[str, Any]], target: str, strict: bool = True) -> list[str]:
    """Peers with fewer mean fits than ``target`` and more often right (``strict=False``: at least as often)."""
    t = next(r for r in rows if r["peer"] == target)
    return [r["peer"] for r in rows if r["peer"] != target and r["fits_mean"] < t["fits_mean"]
            and (r["p_correct"] > t["p_correct"] if strict else r["p_correct"] >= t["p_correct"])]


def run_task(task: str, runs: int, seed: int, lemma_n: int, only: Sequence[str] = (),
             halving_runs: int | None = None, save: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Measure every peer (or ``only`` those) on ``task``; ``save(result so far)`` after each peer."""
    bench = get_bench(task, lemma_n)
    res = {"task": task, "candidates": bench.names, "truth": bench.truth.tolist(), "true_best": bench.names[bench.best],
           "gap_to_second": float(np.sort(bench.truth)[-1] - np.sort(bench.truth)[-2]),
           "seed": seed, "runs": runs, "rows": [], "machine": machine_info(), "new_fits": 0}
    if task == "lemma":
        res["lemma_n"] = lemma_n
    for name, peer in peers().items():
        if only and name not in only:
            continue
        n = runs if not (name == "HalvingGridSearchCV" and halving_runs) else min(runs, halving_runs)
        t0 = time.perf_counter()
        row = measure(bench, name, peer, n, seed)
        print(f"[{task}] {name}: fits {row['fits_mean']:.1f}, right {row['p_correct']:.3f}, "
              f"regret {row['regret_mean']:.4f} ({time.perf_counter() - t0:.0f} s, {n} runs)", flush=True)
        res["rows"].append(row)
        if bench.pool is not None and bench.pool.cache.new_fits:
            bench.pool.cache.save()
            res["new_fits"] = bench.pool.cache.new_fits
        if save is not None:
            save(res)
    return res


def merge_rows(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """Replace the rows of the peers measured in ``new``, keep the others of ``old``."""
    if not old:
        return new
    names = {r["peer"] for r in new["rows"]}
    order = list(peers())
    rows = [r for r in old["rows"] if r["peer"] not in names] + new["rows"]
    rows.sort(key=lambda r: order.index(r["peer"]) if r["peer"] in order else len(order))
    return dict(new, rows=rows)


# ----------------------------------------------------------------------------------------------
# tables and figures
# ----------------------------------------------------------------------------------------------

TASK_TITLES = {"tdsa": "(a) TDSA replay, 8 models", "debian": "(b) Debian text, 11 candidates (real fits)",
               "digits": "(c) digits, 6 model families (real fits)", "lemma": "(d) Dutch lemma k-NN grid, 250 settings"}


def task_markdown(res: dict[str, Any]) -> str:
    rows = res["rows"]
    head = ["peer", "fits (mean)", "fits (max)", "chose the true best", "mean regret", "wrong / stated delta",
            "fit s per run", "decision s per run", "load (1-min) start/end"]
    out = []
    for r in rows:
        wrong = (f"{r['wrong_rate']:.3f} / {1 - r['stated_confidence']:.2f} (p {r['wrong_vs_delta_p']:.2g})"
                 if r.get("stated_confidence") is not None else "-")
        out.append([r["peer"], f"{r['fits_mean']:.1f}", r["fits_max"],
                    f"{100 * r['p_correct']:.1f} % (SE {100 * r['se_correct']:.1f})", f"{r['regret_mean']:.4f}", wrong,
                    f"{r['fit_seconds_mean']:.2f}" if res["task"] != "tdsa" else "-",
                    f"{r['overhead_seconds_mean']:.3f}",
                    f"{(r['loadavg_start'] or [0])[0]:.1f} / {(r['loadavg_end'] or [0])[0]:.1f}"])
    text = [f"## {TASK_TITLES[res['task']]}", "",
            f"True best: `{res['true_best']}` (gap to the second {res['gap_to_second']:.4f}); "
            f"{res['runs']} runs per peer (seed {res['seed']})"
            + ("" if not any(r["runs"] != res["runs"] for r in rows) else
               "; " + ", ".join(f"{r['peer']}: {r['runs']} runs" for r in rows if r["runs"] != res["runs"])) + ".",
            "", md_table(head, out, align="lrrrrlrrl"), ""]
    for target in ("certa-default", "certa-unpaired"):
        if any(r["peer"] == target for r in rows):
            strict = dominated_by(rows, target)
            weak = [n for n in dominated_by(rows, target, strict=False) if n not in strict]
            text.append(f"- `{target}` dominated by (fewer fits and more often right): "
                        + (", ".join(strict) if strict else "no peer")
                        + "; fewer fits and as often right: " + (", ".join(weak) if weak else "no peer"))
    return "\n".join(text)


def figure(res: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    fig, ax = plt.subplots(figsize=(7.6, 4.6))
    colors = {"optuna": "tab:blue", "sklearn": "tab:green", "certa": "tab:red"}
    rows = sorted(res["rows"], key=lambda r: (r["fits_mean"], r["p_correct"]))
    for i, r in enumerate(rows):
        ax.errorbar(r["fits_mean"], 100 * r["p_correct"], yerr=100 * r["se_correct"], fmt="o",
                    color=colors.get(r["library"], "k"), ms=5, capsize=2)
        ax.annotate(r["peer"], (r["fits_mean"], 100 * r["p_correct"]), textcoords="offset points",
                    xytext=(5, 6 if i % 2 == 0 else -11), fontsize=7, color=colors.get(r["library"], "k"))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    lo = min(100 * r["p_correct"] for r in rows)
    ax.set_ylim(max(0.0, lo - 5), 102)
    ax.set_xscale("log")
    ax.set_xlabel("fits per selection (mean, log scale)")
    ax.set_ylabel("chose the true best (%)")
    ax.set_title(TASK_TITLES[res["task"]], fontsize=10)
    for lib, col in colors.items():
        ax.plot([], [], "o", color=col, label=lib)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def summary_rows(results: dict[str, dict[str, Any]]) -> list[list[Any]]:
    """One line per task: certa's default against the Wilcoxon peer at 30 steps and the cheapest peer as right."""
    out = []
    for task, res in results.items():
        rows = {r["peer"]: r for r in res["rows"]}
        d = rows.get("certa-default")
        w = rows.get("optuna-wilcoxon-30")
        if d is None:
            continue
        cheaper_as_right = [r for r in res["rows"] if r["peer"] != "certa-default" and r["p_correct"] >= d["p_correct"]]
        best_peer = min(cheaper_as_right, key=lambda r: r["fits_mean"]) if cheaper_as_right else None
        out.append([TASK_TITLES[task], f"{d['fits_mean']:.1f}", f"{100 * d['p_correct']:.1f} %",
                    f"{w['fits_mean']:.1f}, {100 * w['p_correct']:.1f} %" if w else "-",
                    f"{d['fits_mean'] / w['fits_mean']:.2f}x" if w else "-",
                    (f"{best_peer['peer']} ({best_peer['fits_mean']:.1f}, {100 * best_peer['p_correct']:.1f} %)"
                     if best_peer else "none"),
                    ", ".join(dominated_by(res["rows"], "certa-default")) or "no peer"])
    return out


def report() -> str:
    parts = ["# Peers, side by side (benchmarks/peers.py)", ""]
    results = {}
    for task in TASKS:
        p = RESULTS / f"peers_{task}.json"
        if p.exists():
            results[task] = json.loads(p.read_text())
    summ = summary_rows(results)
    if summ:
        parts += ["## Summary: certa's default", "",
                  md_table(["task", "certa default: fits", "right", "Optuna Wilcoxon 30: fits, right",
                            "fits ratio default / Wilcoxon 30", "cheapest peer at least as often right",
                            "dominated by"], summ, align="lrrrrll"), ""]
    for task, res in results.items():
        figure(res, FIGURES / f"peers_{task}.png")
        parts += [task_markdown(res), "", f"![{task}](../../docs/img/peers_{task}.png)", ""]
    md = "\n".join(parts)
    (RESULTS / "peers.md").write_text(md + "\n")
    return md


def main(argv: Sequence[str] | None = None) -> None:
    global RESULTS, FIGURES
    ap = argparse.ArgumentParser(prog="peers.py", description=__doc__.split("\n")[0])
    ap.add_argument("--results", type=Path, default=None,
                    help="results directory, figures included (default benchmarks/results, figures in docs/img)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pool", help="score every candidate on the pool's folds (cached)")
    p.add_argument("task", choices=REAL_TASKS)
    p.add_argument("--part", type=int, default=0)
    p.add_argument("--parts", type=int, default=1)
    p.add_argument("--lemma-n", type=int, default=6000)
    r = sub.add_parser("run", help="run every peer on a task")
    r.add_argument("task", choices=TASKS)
    r.add_argument("--runs", type=int, default=None, help="runs per peer (default 300 on tdsa, 100 otherwise)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--lemma-n", type=int, default=6000)
    r.add_argument("--only", default="", help="comma-separated peers to (re)measure; the others are kept")
    r.add_argument("--halving-runs", type=int, default=None, help="fewer runs for HalvingGridSearchCV (new fits)")
    sub.add_parser("report", help="markdown table and figures of every measured task")
    args = ap.parse_args(argv)
    if args.results is not None:
        RESULTS = FIGURES = set_results_dir(args.results)
    if args.cmd == "pool":
        print(build_pool(args.task, args.part, args.parts, args.lemma_n))
    elif args.cmd == "run":
        runs = args.runs or (300 if args.task == "tdsa" else 100)
        only = [s for s in args.only.split(",") if s]
        old_path = RESULTS / f"peers_{args.task}.json"
        old = json.loads(old_path.read_text()) if (only and old_path.exists()) else None

        def save(res):
            merged = merge_rows(old, res)
            write_results(f"peers_{args.task}", merged, task_markdown(merged))
            figure(merged, FIGURES / f"peers_{args.task}.png")

        res = run_task(args.task, runs, args.seed, args.lemma_n, only, args.halving_runs, save)
        print(task_markdown(merge_rows(old, res)))
    else:
        print(report())


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
