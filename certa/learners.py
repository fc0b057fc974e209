"""Memory-based (TiMBL IB1-like) and decision-tree (C4.5-like) learners for symbolic features, with grids.

Both learners are scikit-learn pipelines: a :class:`SymbolicEncoder` (letters or other symbols
-> numbers, with TiMBL's feature weights) followed by ``KNeighborsClassifier`` or
``DecisionTreeClassifier``. Mapping to the original options:

k-NN ("in the spirit of" TiMBL IB1)
    - ``enc__weighting`` = TiMBL ``-w``: ``"none"`` (0), ``"gr"`` gain ratio (1, TiMBL's
      default), ``"ig"`` information gain (2), ``"chi2"`` chi-square (3), ``"sv"``
      shared variance (4).
    - distance = TiMBL's weighted overlap metric (``-mO``): the encoder one-hot codes every
      feature with value ``sqrt(w_f)``, so the squared Euclidean distance between two
      instances is ``2 * sum_f w_f [x_f != y_f]``; Euclidean distance orders neighbours
      exactly as weighted overlap does. (MVDM / Jeffrey are not offered: with ~1,900
      classes their value-difference tables do not fit the one-hot trick.)
    - ``knn__n_neighbors`` = ``-k``, but scikit-learn counts neighbours while TiMBL counts
      distance levels (all instances at the k nearest distances).
    - ``knn__weights`` = ``-d``: ``"uniform"`` majority voting (Z), ``"distance"``
      inverse distance (ID), :class:`InverseLinear` (IL), :class:`ExponentialDecay` (ED:a).
decision tree ("in the spirit of" C4.5)
    - ``tree__criterion`` = split criterion: ``"entropy"`` is information gain (C4.5 uses
      gain ratio, ``-g`` switches to gain); ``"gini"``; ``"log_loss"`` is the same
      criterion as ``"entropy"`` in scikit-learn and is left out.
    - ``tree__min_samples_leaf`` = ``-m`` (minimum cases in at least two branches,
      default 2).
    - ``tree__ccp_alpha`` = pruning: cost-complexity pruning stands in for C4.5's
      error-based pruning with confidence ``-c`` (0 = unpruned, like ``-c 100``).
    - ``enc__encoding`` = value tests: ``"onehot"`` gives binary ``letter == v`` tests
      (C4.5's multiway split on a nominal feature, one value at a time); ``"ordinal"``
      gives ``code <= t`` tests that group values (a crude stand-in for ``-s`` subsetting).
    - ``tree__max_features`` = random feature subsets per split (not in C4.5; the
      "feature subsets" axis).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = [
    "WEIGHTINGS",
    "ExponentialDecay",
    "InverseLinear",
    "StableKNeighborsClassifier",
    "SymbolicEncoder",
    "feature_weights",
    "knn_default_params",
    "knn_grid",
    "knn_pipeline",
    "tree_default_params",
    "tree_grid",
    "tree_pipeline",
]

WEIGHTINGS = ("none", "gr", "ig", "chi2", "sv")


def _entropy_bits(counts: np.ndarray) -> float:
    counts = counts[counts > 0]
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum())


def feature_weights(codes: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    """TiMBL's feature weights of integer-coded symbolic features.

    Parameters
    ----------
    codes : array of int, shape (n_samples, n_features)
        Value codes (as from ``OrdinalEncoder``).
    y : array, shape (n_samples,)
        Class labels.
    method : {"none", "ig", "gr", "chi2", "sv"}
        ``"ig"``: information gain ``H(C) - sum_v P(v) H(C|v)`` in bits; ``"gr"``: gain
        ratio, information gain divided by the split info ``H(V)`` (0 when ``H(V)=0``);
        ``"chi2"``: Pearson's chi-square of the value x class table; ``"sv"``: shared
        variance, ``chi2 / (N * (min(|C|, |V|) - 1))``; ``"none"``: all 1.

    Examples
    --------
    >>> feature_weights(np.array([[0, 0], [0, 1], [1, 0], [1, 1]]), np.array([0, 0, 1, 1]), "ig").tolist()
    [1.0, 0.0]
    """
    if method not in WEIGHTINGS:
        raise ValueError(f"method must be one of {WEIGHTINGS}, got {method!r}")
    codes = np.asarray(codes)
    if codes.ndim != 2:
        raise ValueError(f"codes must be 2-D, got shape {codes.shape}")
    y = np.asarray(y)
    if len(y) != len(codes):
        raise ValueError(f"codes and y have different numbers of samples: {len(codes)} and {len(y)}")
    n_features = codes.shape[1]
    if method == "none":
        return np.ones(n_features)
    _, cls = np.unique(y, return_inverse=True)
    cls = cls.ravel()
    n_cls = int(cls.max()) + 1
    h_c = _entropy_bits(np.bincount(cls).astype(float))
    out = np.zeros(n_features)
    for f in range(n_features):
        _, val = np.unique(codes[:, f], return_inverse=True)
        val = val.ravel()
        n_val = int(val.max()) + 1
        # value x class contingency table by one bincount (no Python loop over rows)
        table = np.bincount(val * n_cls + cls, minlength=n_val * n_cls).reshape(n_val, n_cls).astype(float)
        table = table[:, table.sum(axis=0) > 0]
        if method in ("ig", "gr"):
            n_v = table.sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                p = table / n_v[:, None]
                h_rows = -np.nansum(np.where(p > 0, p * np.log2(p), 0.0), axis=1)
            ig = h_c - float(np.sum(n_v / n_v.sum() * h_rows))
            if method == "ig":
                out[f] = ig
            else:
                si = _entropy_bits(n_v)
                out[f] = ig / si if si > 0 else 0.0
        else:
            if table.shape[0] < 2 or table.shape[1] < 2:
                out[f] = 0.0
                continue
            chi2 = stats.chi2_contingency(table, correction=False)[0]
            out[f] = chi2 if method == "chi2" else chi2 / (table.sum() * (min(table.shape) - 1))
    return np.maximum(out, 0.0)  # rounding can give -1e-16 for a useless feature


class SymbolicEncoder(TransformerMixin, BaseEstimator):
    """Encode symbolic (letter) features for k-NN or trees, with TiMBL feature weights.

    Parameters
    ----------
    encoding : {"onehot", "ordinal"}, default="onehot"
        ``"onehot"``: one column per (feature, value) seen in training, holding
        ``sqrt(w_f)`` where the instance has that value (unseen values: all zero);
        ``"ordinal"``: the value codes (unseen: -1) times ``w_f``.
    weighting : {"none", "gr", "ig", "chi2", "sv"}, default="none"
        Feature weights, see :func:`feature_weights`, scaled to mean 1 (``weights_``).

    Examples
    --------
    >>> X = np.array([["a", "x"], ["b", "x"], ["a", "y"]])
    >>> SymbolicEncoder().fit(X, [0, 1, 0]).transform(X).shape
    (3, 4)
    """

    def __init__(self, encoding: str = "onehot", weighting: str = "none") -> None:
        self.encoding = encoding
        self.weighting = weighting

    def fit(self, X: Any, y: Any = None) -> SymbolicEncoder:
        if self.encoding not in ("onehot", "ordinal"):
            raise ValueError(f"encoding must be 'onehot' or 'ordinal', got {self.encoding!r}")
        if self.weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {self.weighting!r}")
        if self.weighting != "none" and y is None:
            raise ValueError(f"weighting={self.weighting!r} needs class labels y")
        X, self._letters_as_ints = _as_symbol_array(X)
        self.categories_ = []
        codes = np.empty(X.shape, dtype=np.int64)
        for f in range(X.shape[1]):
            cats, codes[:, f] = np.unique(X[:, f], return_inverse=True)
            self.categories_.append(cats)
        w = feature_weights(codes, y, self.weighting) if self.weighting != "none" else np.ones(codes.shape[1])
        # scaled to mean 1: the neighbour order does not change, and distance-based vote
        # weights (ExponentialDecay) see distances on the same scale whatever the weighting
        self.weights_ = w / w.mean() if w.mean() > 0 else np.ones_like(w)
        self.n_values_ = np.array([len(c) for c in self.categories_])
        self.offsets_ = np.concatenate([[0], np.cumsum(self.n_values_)[:-1]])
        return self

    def transform(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "weights_")
        codes = self._codes(*_as_symbol_array(X))
        if self.encoding == "ordinal":
            return (codes * self.weights_).astype(np.float32)
        out = np.zeros((codes.shape[0], int(self.n_values_.sum())), dtype=np.float32)
        root_w = np.sqrt(self.weights_).astype(np.float32)
        for f in range(codes.shape[1]):
            seen = codes[:, f] >= 0
            out[np.flatnonzero(seen), self.offsets_[f] + codes[seen, f]] = root_w[f]
        return out


    def _codes(self, X: np.ndarray, letters_as_ints: bool) -> np.ndarray:
        if X.shape[1] != len(self.categories_):
            raise ValueError(f"X has {X.shape[1]} features, but SymbolicEncoder was fitted with {len(self.categories_)}")
        fitted_as_ints = getattr(self, "_letters_as_ints", False)
        if fitted_as_ints and not letters_as_ints:  # fitted on single letters, given longer strings
            X = X.astype(str)
        codes = np.empty(X.shape, dtype=np.int64)
        for f, cats in enumerate(self.categories_):
            if fitted_as_ints != letters_as_ints:
                cats = cats.view("<U1") if fitted_as_ints else cats
                col = X[:, f].view("<U1") if letters_as_ints else X[:, f]
            else:
                col = X[:, f]
            pos = np.minimum(np.searchsorted(cats, col), len(cats) - 1)
            codes[:, f] = np.where(cats[pos] == col, pos, -1)   # unseen value: -1
        return codes


def _as_symbol_array(X: Any) -> tuple[np.ndarray, bool]:
    """X as a 2-D numpy array, and whether one-character strings were viewed as integers
    (same order as the strings, much faster sorts)."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
    if X.dtype == np.dtype("<U1"):
        return np.ascontiguousarray(X).view(np.uint32), True
    if X.dtype == object:
        return X.astype(str), False
    return X, False


class InverseLinear:
    """TiMBL's inverse-linear vote weighting: ``(d_k - d) / (d_k - d_1)``, 1 when ``d_k == d_1``."""

    def __call__(self, dist: np.ndarray) -> np.ndarray:
        d1, dk = dist[:, :1], dist[:, -1:]
        span = dk - d1
        with np.errstate(invalid="ignore", divide="ignore"):
            w = np.where(span > 0, (dk - dist) / np.where(span > 0, span, 1.0), 1.0)
        return w

    def __repr__(self) -> str:
        return "InverseLinear()"

    def __eq__(self, other: object) -> bool:
        return type(other) is InverseLinear

    def __hash__(self) -> int:
        return hash("InverseLinear")


class ExponentialDecay:
    """TiMBL's exponential-decay vote weighting ``exp(-alpha * d)`` (``-d ED:alpha``)."""

    def __init__(self, alpha: float = 1.0) -> None:
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
            raise ValueError(f"alpha must be a positive number, got {alpha!r}")
        self.alpha = float(alpha)

    def __call__(self, dist: np.ndarray) -> np.ndarray:
        return np.exp(-self.alpha * dist)

    def __repr__(self) -> str:
        return f"ExponentialDecay({self.alpha:g})"

    def __eq__(self, other: object) -> bool:
        return type(other) is ExponentialDecay and other.alpha == self.alpha

    def __hash__(self) -> int:
        return hash(("ExponentialDecay", self.alpha))


class StableKNeighborsClassifier(KNeighborsClassifier):
    """Brute-force Euclidean k-NN whose equidistant neighbours are taken in training order, whatever the threads.

    scikit-learn's parallel neighbour search breaks ties among equidistant neighbours in an
    order that depends on the number of OpenMP threads. With one-hot symbolic features ties
    are the rule, not the exception (a distance counts mismatching features), so the same
    fit scored different examples with 1 and 2 threads (``docs/progressive.md``). Here the
    ``n_neighbors`` nearest are the first ``n_neighbors`` by (distance, training index).

    Two stages, so that no float result of a multi-threaded library decides anything:

    1. *Candidates*: ``|y|^2 - 2 x.y`` by one matrix product per block of queries (BLAS, in
       the data's precision: float32 for :class:`SymbolicEncoder` output). Its rounding
       depends on the BLAS kernel and thread count, but never by more than the standard
       bound ``gamma_D (|y|^2 + 2 |x| |y|)`` (``gamma_D = D u / (1 - D u)``, ``D`` features,
       ``u`` the unit roundoff; any summation order, with or without FMA). Every training
       instance within four such bounds of the ``n_neighbors``-th smallest value is a
       candidate: this set contains every true neighbour whatever the rounding.
    2. *Decision*: for the candidates only, the squared distance is recomputed in float64
       by numpy, without BLAS or threads: the per-feature squared differences are sorted
       and summed in that order, so instances whose squared differences are the same
       multiset (for one-hot codes: the same weighted mismatches, in whatever features)
       get bit-equal distances. The candidates are stably sorted by (distance, index).

    Same parameters as ``KNeighborsClassifier``; only the Euclidean metric
    (``metric="minkowski"`` with ``p=2``, or ``"euclidean"``) is supported, always by brute
    force (``algorithm`` is ignored).

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [1.0], [3.0]]); y = np.array([0, 1, 2, 2])
    >>> StableKNeighborsClassifier(n_neighbors=2).fit(X, y).kneighbors([[0.0]])[1]
    array([[0, 1]])
    """

    _BLOCK_ROWS = 256   # queries per distance block (a block x n_train matrix in memory)
    _PAIR_ELEMENTS = 1 << 21   # float64 elements per chunk of the exact recomputation

    def fit(self, X: Any, y: Any) -> StableKNeighborsClassifier:
        if not ((self.metric == "minkowski" and self.p == 2) or self.metric == "euclidean") or self.metric_params:
            raise ValueError(f"StableKNeighborsClassifier supports the Euclidean metric only, got metric="
                             f"{self.metric!r}, p={self.p!r}")
        super().fit(X, y)
        if self.outputs_2d_:
            raise ValueError("StableKNeighborsClassifier supports one output (y of shape (n_samples,)) only")
        train = np.asarray(self._fit_X)
        self._dtype = np.float32 if train.dtype == np.float32 else np.float64
        self._train_t = np.ascontiguousarray(train.T, dtype=self._dtype)
        self._train_sq = np.einsum("ij,ij->j", self._train_t, self._train_t)
        self._train64 = np.ascontiguousarray(train, dtype=np.float64)
        self._train_nz = _padded_nonzeros(self._train64)
        norms = np.sqrt(np.einsum("ij,ij->i", self._train64, self._train64))
        self._train_norm_max = float(norms.max()) if len(norms) else 0.0
        return self

    def _approx_h(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``|y|^2 - 2 x.y`` for a block of queries by BLAS, and a bound on its rounding error per query."""
        h = q @ self._train_t
        h *= -2.0
        h += self._train_sq
        d = self._train_t.shape[0] + 3              # D products and sums, the scaling and the final sum
        u = float(np.finfo(self._dtype).eps) / 2
        gamma = d * u / (1 - d * u)
        qn = np.sqrt(np.einsum("ij,ij->i", q, q, dtype=np.float64))
        bound = gamma * (self._train_norm_max ** 2 + 2 * qn * self._train_norm_max)
        return h, bound

    def _exact_sq(self, q64: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Squared distances of (query row, training column) pairs: per-feature terms summed in sorted order.

        Zero terms do not change a sum, so for sparse data (one-hot codes) only the features
        where the query or the training instance is nonzero are summed: the same result as
        sorting and summing all ``D`` terms, bit for bit.
        """
        out = np.empty(len(rows))
        q_cols, q_vals = _padded_nonzeros(q64)
        t_cols, t_vals = self._train_nz
        sparse = q_cols.shape[1] + t_cols.shape[1] < q64.shape[1]
        width = q_cols.shape[1] + t_cols.shape[1] if sparse else q64.shape[1]
        step = max(1, self._PAIR_ELEMENTS // max(1, width))
        for lo in range(0, len(rows), step):
            r, c = rows[lo:lo + step], cols[lo:lo + step]
            if sparse:
                qv, tc, tv = q_vals[r], t_cols[c], t_vals[c]
                # where the query is nonzero: (x_f - y_f)^2; where only the training instance is: y_f^2
                on_q = qv - self._train64[c[:, None], q_cols[r]]
                only_t = np.where(q64[r[:, None], tc] == 0, tv, 0.0)
                terms = np.concatenate([np.where(qv != 0, on_q, 0.0), only_t], axis=1)
            else:
                terms = q64[r] - self._train64[c]
            terms *= terms
            terms.sort(axis=1)
            # cumulative sum: strictly left to right, so equal sorted rows give bit-equal sums
            out[lo:lo + step] = np.cumsum(terms, axis=1)[:, -1] if terms.shape[1] else 0.0
        return out

    def kneighbors(self, X: Any = None, n_neighbors: int | None = None,
                   return_distance: bool = True) -> Any:
        check_is_fitted(self, "_train_t")
        k = self.n_neighbors if n_neighbors is None else int(n_neighbors)
        n_train = self._train_t.shape[1]
        exclude_self = X is None
        Q = self._train_t.T if exclude_self else validate_data(self, X, reset=False)
        Q = np.asarray(Q, dtype=self._dtype)
        if k < 1 or k > n_train - exclude_self:
            raise ValueError(f"n_neighbors must be in [1, {n_train - exclude_self}], got {k}")
        ind = np.empty((Q.shape[0], k), dtype=np.intp)
        dist = np.empty((Q.shape[0], k))
        for lo in range(0, Q.shape[0], self._BLOCK_ROWS):
            q = Q[lo:lo + self._BLOCK_ROWS]
            h, bound = self._approx_h(q)
            rows_self = np.arange(q.shape[0])
            if exclude_self:
                h[rows_self, np.arange(lo, lo + q.shape[0])] = np.inf
            kth = np.partition(h, k - 1, axis=1)[:, k - 1]
            # within 2 bounds of the k-th value: every true neighbour; 4: room for the float64 recomputation
            rows, cols = np.nonzero(h <= (kth + 4 * bound)[:, None])
            exact = self._exact_sq(np.asarray(q, dtype=np.float64), rows, cols)
            order = np.lexsort((cols, exact, rows))
            rows, cols, exact = rows[order], cols[order], exact[order]
            starts = np.searchsorted(rows, rows_self)
            take = (starts[:, None] + np.arange(k)[None, :]).ravel()
            ind[lo:lo + len(q)] = cols[take].reshape(-1, k)
            dist[lo:lo + len(q)] = exact[take].reshape(-1, k)
        return (np.sqrt(dist), ind) if return_distance else ind

    def predict_proba(self, X: Any) -> np.ndarray:
        dist, ind = self.kneighbors(X)
        w = _vote_weights(dist, self.weights)
        proba = np.zeros((ind.shape[0], len(self.classes_)))
        np.add.at(proba, (np.repeat(np.arange(ind.shape[0]), ind.shape[1]), self._y[ind].ravel()), w.ravel())
        return proba / proba.sum(axis=1, keepdims=True)

    def predict(self, X: Any) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def _padded_nonzeros(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the columns of its nonzero entries (ascending), padded with zero columns, and their values."""
    nz = M != 0
    m = int(nz.sum(axis=1).max()) if M.size else 0
    cols = np.argsort(~nz, axis=1, kind="stable")[:, :m]
    return cols, np.take_along_axis(M, cols, axis=1)


def _vote_weights(dist: np.ndarray, weights: Any) -> np.ndarray:
    """scikit-learn's neighbour vote weights (``"uniform"``, ``"distance"`` or a callable)."""
    if weights in (None, "uniform"):
        return np.ones_like(dist)
    if weights == "distance":
        with np.errstate(divide="ignore"):
            w = 1.0 / dist
        zero = np.isinf(w).any(axis=1)             # an exact match takes all the weight
        w[zero] = (dist[zero] == 0).astype(float)
        return w
    if callable(weights):
        w = np.asarray(weights(dist), dtype=float)
        if np.any(np.all(w == 0, axis=1)):
            raise ValueError("All neighbors of some sample is getting zero weights. Please modify 'weights' "
                             "to avoid this case if you are using a user-defined function.")
        return w
    raise ValueError(f"weights must be 'uniform', 'distance' or a callable, got {weights!r}")


def knn_pipeline() -> Pipeline:
    """``SymbolicEncoder(onehot) -> StableKNeighborsClassifier``: weighted-overlap k-NN, ties in training order.

    Built with TiMBL's defaults (:func:`knn_default_params`).
    """
    return Pipeline([("enc", SymbolicEncoder("onehot", "gr")),
                     ("knn", StableKNeighborsClassifier(n_neighbors=1, algorithm="brute"))])


def knn_grid(quick: bool = False) -> dict[str, list]:
    """k-NN grid: 5 weightings x 10 k x 5 vote weightings = 250 settings (quick: 3 x 4 x 3 = 36)."""
    if quick:
        return {"enc__weighting": ["none", "gr", "ig"], "knn__n_neighbors": [1, 3, 7, 15],
                "knn__weights": ["uniform", "distance", ExponentialDecay(1.0)]}
    return {"enc__weighting": list(WEIGHTINGS),
            "knn__n_neighbors": [1, 3, 5, 7, 9, 11, 15, 19, 25, 35],
            "knn__weights": ["uniform", "distance", InverseLinear(), ExponentialDecay(1.0), ExponentialDecay(4.0)]}


def knn_default_params() -> dict[str, Any]:
    """TiMBL's default IB1: k=1, weighted overlap with gain ratio, majority voting."""
    return {"enc__weighting": "gr", "knn__n_neighbors": 1, "knn__weights": "uniform"}


def tree_pipeline() -> Pipeline:
    """``SymbolicEncoder(onehot) -> DecisionTreeClassifier``, built with C4.5's defaults (:func:`tree_default_params`).

    Its parameters are the learner's default, so a search with ``baseline="auto"`` keeps
    C4.5's setting (entropy, ``min_samples_leaf=2``) as the baseline, not scikit-learn's
    (Gini, 1); ``random_state=0``.

    Examples
    --------
    >>> params = tree_pipeline().get_params()
    >>> all(params[k] == v for k, v in tree_default_params().items())
    True
    """
    return Pipeline([("enc", SymbolicEncoder("onehot", "none")),
                     ("tree", DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2, max_features=None,
                                                     ccp_alpha=0.0, random_state=0))])


def tree_grid(quick: bool = False) -> dict[str, list]:
    """Tree grid: 2 encodings x 2 criteria x 5 leaf sizes x 3 feature subsets x 5 alphas = 300 (quick: 36)."""
    if quick:
        return {"enc__encoding": ["onehot", "ordinal"], "tree__criterion": ["gini", "entropy"],
                "tree__min_samples_leaf": [1, 2, 25], "tree__max_features": [None],
                "tree__ccp_alpha": [0.0, 1e-4, 1e-3]}
    return {"enc__encoding": ["onehot", "ordinal"], "tree__criterion": ["gini", "entropy"],
            "tree__min_samples_leaf": [1, 2, 3, 5, 10], "tree__max_features": [None, 0.5, 0.25],
            "tree__ccp_alpha": [0.0, 1e-5, 1e-4, 1e-3, 1e-2]}


def tree_default_params() -> dict[str, Any]:
    """C4.5's defaults mapped: information-gain criterion, -m 2, one value per test, all features, unpruned."""
    return {"enc__encoding": "onehot", "tree__criterion": "entropy", "tree__min_samples_leaf": 2,
            "tree__max_features": None, "tree__ccp_alpha": 0.0}
