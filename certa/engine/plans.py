"""Plans: how a draw maps to training and test indices."""
from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from typing import Any

import numpy as np

from .draws import Draw

# Per-process cache of computed partitions: a plan is pickled with every task,
# but its J*K index arrays are computed once per worker process.
_PARTITION_CACHE: dict[tuple, list[tuple[np.ndarray, np.ndarray]]] = {}


#: Splits a :class:`RandomSplitPlan` keeps per process (the rows being evaluated, and those ahead).
SPLIT_CACHE = 64


class Plan(ABC):
    """Maps a :class:`Draw` to ``(train_indices, test_indices)``."""

    @abstractmethod
    def split(self, draw: Draw, y: np.ndarray | None, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
        ...

    @abstractmethod
    def spec(self) -> dict[str, Any]:
        ...

    def check(self, y: np.ndarray | None, n_samples: int) -> None:
        """Refuse, before any evaluation, data this plan cannot split (default: accept)."""


class JKFoldPlan(Plan):
    """J repeated K-fold partitions, exactly those of scikit-learn's repeated splitters.

    ``stratified=True`` uses :class:`~sklearn.model_selection.RepeatedStratifiedKFold`,
    otherwise :class:`~sklearn.model_selection.RepeatedKFold`, both with
    ``random_state``; draw ``(j, k)`` is split number ``j * K + k`` of that splitter.
    """

    def __init__(self, n_splits: int, n_repeats: int, random_state: int | None, stratified: bool) -> None:
        self.n_splits = n_splits
        self.n_repeats = n_repeats
        self.random_state = random_state
        self.stratified = stratified

    def splitter(self):
        from sklearn.model_selection import (  # on first use: certa show needs no sklearn
            RepeatedKFold,
            RepeatedStratifiedKFold,
        )

        cls = RepeatedStratifiedKFold if self.stratified else RepeatedKFold
        return cls(n_splits=self.n_splits, n_repeats=self.n_repeats, random_state=self.random_state)

    def partitions(self, y: np.ndarray | None, n_samples: int) -> list[tuple[np.ndarray, np.ndarray]]:
        key = (self.n_splits, self.n_repeats, self.random_state, self.stratified, n_samples,
               None if y is None else _y_token(self, y))
        if key not in _PARTITION_CACHE:
            X_dummy = np.zeros((n_samples, 1))
            _PARTITION_CACHE.clear()  # one plan at a time per process keeps memory bounded
            _PARTITION_CACHE[key] = list(self.splitter().split(X_dummy, y if self.stratified else None))
        return _PARTITION_CACHE[key]

    def check(self, y: np.ndarray | None, n_samples: int) -> None:
        if self.n_splits < 2:
            raise ValueError(f"n_splits must be at least 2 for K-fold partitions, got {self.n_splits}")
        if self.n_splits > n_samples:
            raise ValueError(f"n_splits={self.n_splits} is larger than the number of samples ({n_samples})")
        # a class with fewer members than n_splits: scikit-learn's splitter warns, and so does certa

    def split(self, draw: Draw, y: np.ndarray | None, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
        if draw.kind != "fold":
            raise ValueError(f"JKFoldPlan evaluates 'fold' draws, got {draw.kind!r}")
        j, k = draw.index
        return self.partitions(y, n_samples)[j * self.n_splits + k]

    def spec(self) -> dict[str, Any]:
        return {"plan": "jkfold", "n_splits": self.n_splits, "n_repeats": self.n_repeats,
                "random_state": self.random_state, "stratified": self.stratified}


class SplitsPlan(Plan):
    """Given train/test splits grouped into ``n_repeats`` partitions of equal length.

    For a user's own ``cv`` (a splitter's splits, or a list of splits): draw
    ``(j, k)`` is split number ``j * K + k`` of ``splits``, where
    ``K = len(splits) // n_repeats``. The splits are part of the plan's
    identity (:meth:`spec` holds their hash), so a store is resumed only with
    the same splits.
    """

    def __init__(self, splits: list[tuple[Any, Any]], n_repeats: int = 1) -> None:
        from joblib import hash as joblib_hash

        self.splits = [(np.asarray(tr), np.asarray(te)) for tr, te in splits]
        if n_repeats < 1 or len(self.splits) % n_repeats:
            raise ValueError(f"{len(self.splits)} splits cannot be grouped into {n_repeats} partitions "
                             f"of equal size")
        self.n_repeats = int(n_repeats)
        self.n_splits = len(self.splits) // self.n_repeats
        self._token = joblib_hash(self.splits)

    def split(self, draw: Draw, y: np.ndarray | None, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
        if draw.kind != "fold":
            raise ValueError(f"SplitsPlan evaluates 'fold' draws, got {draw.kind!r}")
        j, k = draw.index
        return self.splits[j * self.n_splits + k]

    def spec(self) -> dict[str, Any]:
        return {"plan": "splits", "n_splits": self.n_splits, "n_repeats": self.n_repeats, "splits": self._token}


class RowSplitsPlan(Plan):
    """A user's splits as the rows of a paired run: ``"split"`` draw of row ``r`` -> split ``r``.

    Every candidate evaluated on row ``r`` trains and tests on ``splits[r]`` (the r-th split of
    a scikit-learn splitter, or of a list of ``(train, test)`` pairs), so elimination is split by
    split. The model seed is still the draw's (the row's, from the root seed). The splits'
    hash is part of :meth:`spec`, so a store resumes only a run with the same splits.

    Examples
    --------
    >>> from certa.engine.draws import split_draw
    >>> plan = RowSplitsPlan([([0, 1], [2]), ([1, 2], [0])])
    >>> [te.tolist() for _, te in (plan.split(split_draw(0, c, 1, paired=True), None, 3) for c in (0, 5))]
    [[0], [0]]
    """

    def __init__(self, splits: list[tuple[Any, Any]], source: str = "splits") -> None:
        from joblib import hash as joblib_hash

        self.splits = [(np.asarray(tr, dtype=np.intp), np.asarray(te, dtype=np.intp)) for tr, te in splits]
        if not self.splits:
            raise ValueError("cv gave no (train, test) splits: a paired run needs at least one row")
        self.n_rows = len(self.splits)
        self.source = str(source)
        self._token = joblib_hash(self.splits)

    def split(self, draw: Draw, y: np.ndarray | None, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
        if draw.kind != "split":
            raise ValueError(f"RowSplitsPlan evaluates 'split' draws, got {draw.kind!r}")
        row = draw.index[0]
        if not 0 <= row < self.n_rows:
            raise IndexError(f"row {row} is past the {self.n_rows} splits of cv")
        return self.splits[row]

    def check(self, y: np.ndarray | None, n_samples: int) -> None:
        for r, (train, test) in enumerate(self.splits):
            for part, idx in (("train", train), ("test", test)):
                if idx.ndim != 1 or not len(idx):
                    raise ValueError(f"cv: split {r} has an empty or non-1-D {part} part")
                if idx.min() < 0 or idx.max() >= n_samples:
                    raise ValueError(f"cv: split {r}'s {part} indices are outside 0..{n_samples - 1}")

    def spec(self) -> dict[str, Any]:
        return {"plan": "row_splits", "n_rows": self.n_rows, "source": self.source, "splits": self._token}


class RandomSplitPlan(Plan):
    """A fresh random train/test split per draw, seeded by ``draw.seed``.

    A paired row's split is the same for every candidate on it, so each process keeps the last
    :data:`SPLIT_CACHE` splits it made (read-only arrays; not pickled): a stratified split of a few
    thousand samples costs milliseconds, as much as a small model's fit.
    """

    def __init__(self, test_size: float = 0.2, stratified: bool = True) -> None:
        self.test_size = test_size
        self.stratified = stratified

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_splits", "_lock")}

    def check(self, y: np.ndarray | None, n_samples: int) -> None:
        from sklearn.model_selection._split import _validate_shuffle_split

        t = self.test_size
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, float, np.integer, np.floating)):
            raise TypeError(f"test_size must be a fraction in (0, 1) or a number of samples, got {t!r}")
        try:
            n_train, n_test = _validate_shuffle_split(n_samples, t, None)
        except ValueError as exc:
            raise ValueError(f"test_size={t!r} cannot split {n_samples} samples: {exc}") from None
        if self.stratified and y is not None:
            classes, counts = np.unique(np.asarray(y), return_counts=True)
            if counts.min() < 2:
                raise ValueError(f"y: the class {classes.tolist()[int(np.argmin(counts))]!r} has only 1 member; stratified "
                                 "random splits need at least 2 members per class")
            for part, size in (("test", n_test), ("training", n_train)):
                if size < len(classes):
                    raise ValueError(f"test_size={t!r} gives {size} {part} samples, fewer than the "
                                     f"{len(classes)} classes of y: every split needs every class")

    def split(self, draw: Draw, y: np.ndarray | None, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
        """The draw's split (seeded by ``draw.seed``); a ``"subset"`` draw (a screen's rung) trains on
        ``draw.size`` examples of the training part, drawn stratified by the same seed, and is scored
        on the whole test part."""
        if draw.kind not in ("split", "subset"):
            raise ValueError(f"RandomSplitPlan evaluates 'split' and 'subset' draws, got {draw.kind!r}")
        key = (draw.kind, draw.seed, draw.size, n_samples, id(y))
        if "_lock" not in self.__dict__:
            self.__dict__.setdefault("_lock", threading.Lock())
        with self._lock:
            cache = self.__dict__.setdefault("_splits", OrderedDict())
            hit = cache.get(key)
            if hit is not None and hit[0] is y:   # the same y object (an id is reused only once y is gone)
                cache.move_to_end(key)
                return hit[1], hit[2]
        train, test = self._split(draw, y, n_samples)
        train.flags.writeable = test.flags.writeable = False
        with self._lock:
            cache[key] = (y, train, test)
            while len(cache) > SPLIT_CACHE:
                cache.popitem(last=False)
        return train, test

    def _split(self, draw: Draw, y: np.ndarray | None, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
        idx = np.arange(n_samples)
        strat = y if (self.stratified and y is not None) else None
        from sklearn.model_selection import train_test_split

        train, test = train_test_split(idx, test_size=self.test_size, random_state=draw.seed, stratify=strat)
        if draw.kind == "subset":
            if draw.size is None or not 1 <= draw.size <= len(train):
                raise ValueError(f"a subset draw needs a size between 1 and the training part ({len(train)}), "
                                 f"got {draw.size}")
            train = train[subset_order(len(train), None if strat is None else np.asarray(y)[train], draw.seed)[:draw.size]]
        return np.sort(train), np.sort(test)

    def spec(self) -> dict[str, Any]:
        return {"plan": "random_split", "test_size": self.test_size, "stratified": self.stratified}


def subset_order(n: int, y: np.ndarray | None, seed: int) -> np.ndarray:
    """A random order of ``n`` positions whose every prefix keeps the class proportions of ``y``
    within one example per class (``y=None``: a plain permutation; ``seed`` gives the order).

    Examples
    --------
    >>> y = np.array([0] * 8 + [1] * 2)
    >>> int((y[subset_order(10, y, 0)[:5]] == 1).sum())
    1
    """
    rng = np.random.default_rng(seed)
    if y is None:
        return rng.permutation(n)
    _, codes, counts = np.unique(np.asarray(y), return_inverse=True, return_counts=True)
    codes = codes.ravel()
    rank = np.empty(len(codes))
    for k in range(len(counts)):
        members = np.flatnonzero(codes == k)
        rank[rng.permutation(members)] = np.arange(len(members))
    keys = (rank + 0.5) / counts[codes]
    return np.lexsort((rng.random(len(codes)), keys))


def _y_token(owner: Any, y: Any) -> str:
    """``_array_token(y)``, computed once per (owner, y object): evaluators pass the same ``y``
    array to their plan on every evaluation, and hashing it each time (20 ms for 20,000 string
    labels) would dominate small fits."""
    if getattr(owner, "_y_ref", None) is not y:
        owner._y_token_value = _array_token(y)
        owner._y_ref = y
    return owner._y_token_value


def _array_token(a: np.ndarray) -> str:
    from joblib import hash as joblib_hash

    a = np.asarray(a)
    if a.dtype == object:  # hashing integer codes is far faster than pickling strings
        uniques, codes = np.unique(a.astype(str), return_inverse=True)
        return joblib_hash((uniques, codes))
    return joblib_hash(a)


def wants_stratified(estimator: Any, y: Any) -> bool:
    """Stratify splits as scikit-learn's ``check_cv`` does: a classifier with a binary or multiclass target."""
    from sklearn.base import is_classifier
    from sklearn.utils.multiclass import type_of_target

    return bool(estimator is not None and is_classifier(estimator) and y is not None
                and type_of_target(y) in ("binary", "multiclass"))
