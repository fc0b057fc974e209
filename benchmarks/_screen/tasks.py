"""The three tasks of issue 33's acceptance benchmarks: data, timed estimator, grid and truth.

* ``svc``: **simulated** data. ``make_classification`` (20 features, 6 informative, 4
  redundant, 2 clusters per class, ``flip_y=0.1``: 10 % of the labels replaced at random,
  seed 33) draws 41,500 samples in one call; the first 1,500 are the searches' data (the issue's
  smaller copy of its 4,000-sample task, for this 2-core machine), the other 40,000 are fresh
  samples of the same generator. RBF ``SVC``, 8 x 8 grid: ``C`` 2^-5 ... 2^9 and ``gamma``
  2^-15 ... 2^-1 (steps of 2^2). Truth: each setting **trained on the searches' 1,500 samples**
  and scored on the 40,000 fresh ones.
* ``lemma``: the 250-setting k-NN grid of ``benchmarks/peers.py`` (``certa.learners.knn_grid``)
  on its 6,000-form draw of the bundled Dutch lemma data; truth: ``peers.py``'s (each setting's
  mean accuracy over its 20 x 5-fold CV pool of the same 6,000 forms, from
  ``results/peers_lemma.json``). The k-NN settings of one feature weighting share the neighbour
  search of a training/test pair (:class:`TimedKnnPipeline`): the predictions are the pipeline's
  (``tests/test_peers.py`` checks the prefix argument), and every fit is charged the search's
  thread time as if it had run it alone.
* ``text``: real data, the 12 largest sections of the Debian package descriptions
  (``/work/shared/data/debian-descriptions.tsv.gz``, the one-line short description: the long
  ones made a fit 5-10 times as expensive, too much for 20 seeds on this machine); a fixed random
  draw of 1,500 texts is the searches' data, 20,000 other texts are held out (never seen by a
  search). ``TfidfVectorizer`` + ``LinearSVC``, 64 settings: ngram range {(1,1), (1,2)} x min_df
  {1, 2} x sublinear tf {no, yes} x C {0.1, 0.3, 1, 3} x loss {hinge, squared hinge}. Truth:
  each setting trained on the searches' 1,500 texts, accuracy on the 20,000 held out.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from _common import RESULTS
from sklearn.base import clone

from certa.engine.candidates import candidates_from_grid

from .timing import TimedMixin, TimedPipeline, TimedSVC, one_thread

TASKS = ("svc", "lemma", "text")
DEBIAN = os.environ.get("CERTA_DEBIAN_PATH") or "/work/shared/data/debian-descriptions.tsv.gz"
SVC_N, SVC_FRESH = 1500, 40000
TEXT_N, TEXT_HELD_OUT, TEXT_SECTIONS = 1500, 20000, 12
LEMMA_N = 6000


@dataclass
class Task:
    """What every method sees: ``X``, ``y``, a timed ``estimator`` and its ``grid``; ``truth`` per setting."""

    name: str
    X: Any
    y: np.ndarray
    estimator: Any
    grid: dict[str, list]
    truth: np.ndarray
    data: str
    truth_note: str
    names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.names = [c.name for c in candidates_from_grid(self.grid)]
        if len(self.names) != len(self.truth):
            raise ValueError(f"{self.name}: {len(self.names)} settings but {len(self.truth)} true scores")
        self.best = int(np.argmax(self.truth))

    def index(self, params: dict[str, Any]) -> int:
        """The setting index of ``params`` (as ``candidates_from_grid`` names it)."""
        want = repr(sorted(params.items()))
        for i, c in enumerate(candidates_from_grid(self.grid)):
            if c.params == params or repr(sorted(c.params.items())) == want:
                return i
        raise ValueError(f"{params!r} is not a setting of the {self.name} grid")


# ----------------------------------------------------------------------------------------------
# svc: simulated
# ----------------------------------------------------------------------------------------------

SVC_GRID = {"C": [float(2.0 ** e) for e in range(-5, 11, 2)], "gamma": [float(2.0 ** e) for e in range(-15, 1, 2)]}


def svc_data(n: int = SVC_N) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(X, y) of the searches' ``n`` samples and (X, y) of the 40,000 fresh samples (simulated)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n + SVC_FRESH, n_features=20, n_informative=6, n_redundant=4,
                               n_clusters_per_class=2, flip_y=0.1, class_sep=1.0, random_state=33)
    return X[:n], y[:n], X[n:], y[n:]


def _svc_truth(X, y, Xf, yf) -> list[float]:
    from sklearn.svm import SVC

    return [float(SVC(**c.params).fit(X, y).score(Xf, yf)) for c in candidates_from_grid(SVC_GRID)]


# ----------------------------------------------------------------------------------------------
# text: real (Debian descriptions)
# ----------------------------------------------------------------------------------------------

TEXT_GRID = {"vect__ngram_range": [(1, 1), (1, 2)], "vect__min_df": [1, 2], "vect__sublinear_tf": [False, True],
             "clf__C": [0.1, 0.3, 1.0, 3.0], "clf__loss": ["hinge", "squared_hinge"]}


def text_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(texts, sections) of the searches and of the 20,000 held-out texts (a fixed draw, seed 33)."""
    import pandas as pd

    d = pd.read_csv(DEBIAN, sep="\t", quoting=3, dtype=str, keep_default_na=False)
    top = d["section"].value_counts().index[:TEXT_SECTIONS]
    d = d[d["section"].isin(top)].reset_index(drop=True)
    texts = d["short"].to_numpy(dtype=object)
    y = d["section"].to_numpy(dtype=object)
    order = np.random.default_rng(33).permutation(len(y))
    search, held = order[:TEXT_N], order[TEXT_N:TEXT_N + TEXT_HELD_OUT]
    return texts[search], y[search], texts[held], y[held]


def text_pipeline(timed: bool = True) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import Pipeline
    from sklearn.svm import LinearSVC

    steps = [("vect", TfidfVectorizer()), ("clf", LinearSVC(random_state=0))]
    return TimedPipeline(steps) if timed else Pipeline(steps)


def _text_truth(X, y, Xh, yh) -> list[float]:
    """Each setting trained on the searches' texts, accuracy on the held-out ones (one vectorizer per
    vectorizer setting: the same numbers as fitting every pipeline)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    out = []
    vec_cache: dict[tuple, Any] = {}
    for c in candidates_from_grid(TEXT_GRID):
        vp = {k.split("__", 1)[1]: v for k, v in c.params.items() if k.startswith("vect__")}
        key = tuple(sorted(vp.items()))
        if key not in vec_cache:
            vec = TfidfVectorizer(**vp).fit(X)
            vec_cache[key] = (vec.transform(X), vec.transform(Xh))
        Xt, Xht = vec_cache[key]
        cp = {k.split("__", 1)[1]: v for k, v in c.params.items() if k.startswith("clf__")}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(float(LinearSVC(random_state=0, **cp).fit(Xt, y).score(Xht, yh)))
    return out


# ----------------------------------------------------------------------------------------------
# lemma: the k-NN grid, neighbour searches shared by the settings of one weighting
# ----------------------------------------------------------------------------------------------

KMAX = 35
_NEIGHBOURS: OrderedDict[tuple, tuple] = OrderedDict()
_ENCODERS: OrderedDict[tuple, tuple] = OrderedDict()
_NEIGHBOURS_SIZE = 200   # (weighting, training part, test part) searches kept: 1,200 x 35 neighbours each


def _digest(a: Any) -> str:
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()


def clear_shared() -> None:
    """Forget the shared encoders and neighbour searches (between method runs)."""
    _NEIGHBOURS.clear()
    _ENCODERS.clear()


class TimedKnnPipeline(TimedPipeline):
    """``knn_pipeline()`` (SymbolicEncoder -> StableKNeighborsClassifier), timed, whose predictions come
    from one neighbour search (the ``KMAX`` nearest) per weighting, training part and test part.

    The ``k`` nearest of :class:`~certa.learners.StableKNeighborsClassifier` are the first ``k``
    of a stable sort by (distance, training index), so they are a prefix of the ``KMAX`` nearest;
    votes are weighted and counted as its ``predict_proba`` does. The encoder fitted on a
    training part is shared by the settings of its weighting too. A fit that finds the encoder
    or the search done is charged their recorded thread time, so the summed fit time is that of
    standalone fits (encoder fit + k-NN fit and search + vote).
    """

    def fit(self, X, y=None, **fit_params):
        t0 = time.thread_time()
        enc_params = self.named_steps["enc"].get_params()
        key = (repr(sorted(enc_params.items())), _digest(X))
        hit = _ENCODERS.get(key)
        extra = 0.0
        if hit is None:
            e0 = time.thread_time()
            enc = clone(self.named_steps["enc"]).fit(X, y)
            hit = (enc, time.thread_time() - e0)
            _ENCODERS[key] = hit
            while len(_ENCODERS) > _NEIGHBOURS_SIZE:
                _ENCODERS.popitem(last=False)
        else:
            _ENCODERS.move_to_end(key)
            extra = hit[1]   # as if this fit had fitted the encoder itself
        self._enc = hit[0]
        self._train_Xy = (X, np.asarray(y))
        self._train_key = key[1]
        self.new_record(len(y), time.thread_time() - t0 + extra)
        return self

    def _shared_predict(self, X) -> np.ndarray:
        from certa.learners import StableKNeighborsClassifier, _vote_weights

        enc, knn = self._enc, self.named_steps["knn"]
        X_train, y_train = self._train_Xy
        if knn.n_neighbors > len(y_train):   # as the pipeline itself fails
            raise ValueError(f"Expected n_neighbors <= n_samples_fit, but n_neighbors = {knn.n_neighbors}, "
                             f"n_samples_fit = {len(y_train)}")
        key = (enc.weighting, self._train_key, _digest(X))
        hit = _NEIGHBOURS.get(key)
        if hit is None:
            t0 = time.thread_time()
            kmax = min(KMAX, len(y_train))
            search = StableKNeighborsClassifier(n_neighbors=kmax, algorithm="brute").fit(enc.transform(X_train),
                                                                                        y_train)
            dist_all, ind_all = search.kneighbors(enc.transform(X))
            hit = (dist_all, ind_all, search.classes_, search._y, time.thread_time() - t0)
            _NEIGHBOURS[key] = hit
            while len(_NEIGHBOURS) > _NEIGHBOURS_SIZE:
                _NEIGHBOURS.popitem(last=False)
        else:
            _NEIGHBOURS.move_to_end(key)
            self.charge(hit[4])   # as if this fit had run the search itself
        dist_all, ind_all, classes, yk, _ = hit
        k = knn.n_neighbors
        dist, ind = dist_all[:, :k], ind_all[:, :k]
        w = _vote_weights(dist, knn.weights)
        proba = np.zeros((ind.shape[0], len(classes)))
        np.add.at(proba, (np.repeat(np.arange(ind.shape[0]), ind.shape[1]), yk[ind].ravel()), w.ravel())
        return classes[np.argmax(proba, axis=1)]

    def predict(self, X, **kwargs):
        return self._timed_fn(self._shared_predict, X)

    def score(self, X, y=None, sample_weight=None):
        return self._timed_fn(lambda X_: float(np.mean(self._shared_predict(X_) == np.asarray(y))), X)

    def _timed_fn(self, fn, X):
        t0 = time.thread_time()
        try:
            return fn(X)
        finally:
            self.charge(time.thread_time() - t0)


def lemma_estimator() -> TimedKnnPipeline:
    from certa.learners import knn_pipeline

    return TimedKnnPipeline(knn_pipeline().steps)


# ----------------------------------------------------------------------------------------------
# loading a task (truth cached in results/screen_truth_<task>.json)
# ----------------------------------------------------------------------------------------------

def _cached_truth(task: str, compute) -> tuple[list[float], dict[str, Any]]:
    path = RESULTS / f"screen_truth_{task}.json"
    if path.exists():
        d = json.loads(path.read_text())
        return d["truth"], d
    t0 = time.perf_counter()
    with one_thread():
        truth = compute()
    d = {"task": task, "truth": truth, "seconds": time.perf_counter() - t0}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(d) + "\n")
    return truth, d


def load_task(name: str) -> Task:
    if name == "svc":
        X, y, Xf, yf = svc_data()
        truth, _ = _cached_truth("svc", lambda: _svc_truth(X, y, Xf, yf))
        return Task("svc", X, y, TimedSVC(), SVC_GRID, np.asarray(truth),
                    data=f"simulated: make_classification, {SVC_N} samples (the issue's smaller copy), 20 features, "
                         "flip_y=0.1",
                    truth_note=f"accuracy on {SVC_FRESH:,} fresh samples of the same generator, each setting trained "
                               f"on the searches' {SVC_N:,} samples")
    if name == "text":
        X, y, Xh, yh = text_data()
        truth, _ = _cached_truth("text", lambda: _text_truth(X, y, Xh, yh))
        return Task("text", X, y, text_pipeline(), TEXT_GRID, np.asarray(truth),
                    data=f"real: {TEXT_N:,} Debian package short descriptions, {TEXT_SECTIONS} largest sections",
                    truth_note=f"accuracy on {TEXT_HELD_OUT:,} held-out descriptions, each setting trained on the "
                               f"searches' {TEXT_N:,} texts")
    if name == "lemma":
        from peers import lemma_draw

        from certa.learners import knn_grid

        X, y = lemma_draw(LEMMA_N)
        peers = json.loads((RESULTS / "peers_lemma.json").read_text())
        grid = knn_grid()
        by_name = dict(zip(peers["candidates"], peers["truth"], strict=True))
        truth = np.asarray([by_name[c.name] for c in candidates_from_grid(grid)])
        return Task("lemma", X, y, lemma_estimator(), grid, truth,
                    data=f"real: {LEMMA_N:,} forms of the bundled Dutch lemma data (peers.py's draw)",
                    truth_note="peers.py's: mean accuracy over a 20 x 5-fold CV of the same 6,000 forms")
    raise ValueError(f"task must be one of {TASKS}, got {name!r}")


def fresh_estimator(task: Task, params: dict[str, Any]) -> Any:
    """A clone of the task's timed estimator with ``params`` (what every search fits)."""
    est = clone(task.estimator).set_params(**params)
    assert isinstance(est, TimedMixin)
    return est
