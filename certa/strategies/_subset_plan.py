"""The data plan of wrapped progressive sampling: one train/evaluation split, nested subsets."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.draws import Draw
from ..engine.plans import Plan, _y_token

# Per-process cache: a plan is pickled with every task, the orderings are computed once per worker.
_ORDER_CACHE: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}


def stratified_order(y: np.ndarray, rng: np.random.Generator, offset: str = "centre") -> np.ndarray:
    """An ordering of ``range(len(y))`` whose every prefix keeps the class proportions.

    The ``j``-th member (0-based, in a random order within its class) of a class with
    ``n_c`` members gets the key ``(j + u_c) / n_c`` and the examples are sorted by key
    (ties broken at random). With ``offset="centre"`` (``u_c = 1/2``) the first ``m``
    examples hold, per class, the Sainte-Lague / Webster apportionment of ``m`` seats:
    nearly always within rounding of ``m * n_c / n`` (a divisor method can miss the
    exact quota by a fraction of an example), and prefixes are nested (a divisor
    method is house-monotone). With ``offset="random"`` (``u_c`` uniform on
    ``[0, 1)``) every example of a class has the same chance to be in a prefix,
    singletons included (used for the train/evaluation split).

    Examples
    --------
    >>> order = stratified_order(np.array([0] * 8 + [1] * 2), np.random.default_rng(0))
    >>> int((np.array([0] * 8 + [1] * 2)[order[:5]] == 1).sum())
    1
    """
    if offset not in ("centre", "random"):
        raise ValueError(f"offset must be 'centre' or 'random', got {offset!r}")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D class labels, got shape {y.shape}")
    n = len(y)
    _, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    codes = codes.ravel()
    perm = rng.permutation(n)  # random order within each class
    sorted_codes = codes[perm]
    by_class = perm[np.argsort(sorted_codes, kind="stable")]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    cls_of = codes[by_class]
    rank_in_class = np.arange(n) - starts[cls_of]
    u = np.full(len(counts), 0.5) if offset == "centre" else rng.random(len(counts))
    keys = (rank_in_class + u[cls_of]) / counts[cls_of]
    tiebreak = rng.random(n)
    return by_class[np.lexsort((tiebreak, keys))]


class SubsetPlan(Plan):
    """Nested, stratified training subsets and matching evaluation sets on one split.

    The data are split once into a training part (``train_fraction``, rounded to
    the nearest integer) and an evaluation part (the rest), stratified by class
    where ``stratified`` and ``y`` are given (every class split within one example
    of its quota; singleton classes go to either part at random). A ``"subset"``
    draw of size ``s`` trains on the first ``s`` examples of a fixed stratified
    ordering of the training part and is scored on the first
    ``round(eval_fraction * s)`` (at least 1, at most all) examples of a fixed
    stratified ordering of the evaluation part; ``eval_fraction=None`` scores on
    the whole evaluation part. Subsets are nested and keep the class proportions;
    the orderings depend only on ``random_state``, ``y`` and the fractions, so
    every worker computes the same ones.

    Parameters
    ----------
    random_state : int
        Seed of the split and of both orderings.
    train_fraction : float, default=0.8
    eval_fraction : float or None, default=0.2
    stratified : bool, default=True

    Examples
    --------
    >>> plan = SubsetPlan(0)
    >>> y = np.array([0, 1] * 50)
    >>> train, test = plan.split(Draw(0, "subset", (0,), size=20), y, 100)
    >>> len(train), len(test), plan.n_train(100)
    (20, 4, 80)
    """

    def __init__(self, random_state: int, train_fraction: float = 0.8, eval_fraction: float | None = 0.2,
                 stratified: bool = True) -> None:
        if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) or random_state < 0:
            raise ValueError(f"random_state must be a non-negative int, got {random_state!r}")
        _check_fraction("train_fraction", train_fraction)
        if eval_fraction is not None:
            _check_fraction("eval_fraction", eval_fraction, upper_open=False)
        self.random_state = int(random_state)
        self.train_fraction = float(train_fraction)
        self.eval_fraction = None if eval_fraction is None else float(eval_fraction)
        self.stratified = bool(stratified)

    def n_train(self, n_samples: int) -> int:
        """Size of the training part for ``n_samples`` examples."""
        if n_samples < 2:
            raise ValueError(f"need at least 2 samples to split into training and evaluation parts, got {n_samples}")
        return int(min(n_samples - 1, max(1, round(self.train_fraction * n_samples))))

    def eval_size(self, size: int, n_samples: int) -> int:
        """Evaluation-set size that goes with a training subset of ``size``."""
        n_eval = n_samples - self.n_train(n_samples)
        if self.eval_fraction is None:
            return n_eval
        return int(min(n_eval, max(1, round(self.eval_fraction * size))))

    def smallest_size(self, y: np.ndarray | None, n_samples: int) -> int:
        """Smallest training subset that holds every class of the training part (1 unstratified).

        The first ``m`` examples of the fixed stratified training ordering hold every class
        of the training part exactly when ``m`` reaches the position of the last class to
        appear; a classifier fitted on a smaller subset sees fewer classes than the data
        have (one class only, for the first example: most scikit-learn classifiers refuse it).

        Examples
        --------
        >>> SubsetPlan(0).smallest_size(np.array([0, 1] * 30), 60)
        2
        >>> SubsetPlan(0).smallest_size(np.array([0] * 54 + [1] * 6), 60)  # 43 + 5 in training: 4 + 1
        5
        """
        if not (self.stratified and y is not None):
            return 1
        train_order, _ = self.parts(y, n_samples)
        _, first = np.unique(np.asarray(y)[train_order], return_index=True)  # first position of each class
        return int(first.max()) + 1

    def parts(self, y: np.ndarray | None, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
        """``(train_order, eval_order)``: the two parts, each in its fixed stratified order."""
        strat = self.stratified and y is not None
        key = (self.random_state, self.train_fraction, strat, n_samples, _y_token(self, y) if strat else None)
        if key not in _ORDER_CACHE:
            split_ss, train_ss, eval_ss = np.random.SeedSequence(self.random_state).spawn(3)
            yy = np.asarray(y) if strat else None
            everything = stratified_order(yy, np.random.default_rng(split_ss), offset="random") if strat \
                else np.random.default_rng(split_ss).permutation(n_samples)
            n_train = self.n_train(n_samples)
            train_part, eval_part = everything[:n_train], everything[n_train:]
            train_order = train_part[stratified_order(yy[train_part] if strat else None,
                                                      np.random.default_rng(train_ss))] if strat \
                else np.random.default_rng(train_ss).permutation(train_part)
            eval_order = eval_part[stratified_order(yy[eval_part] if strat else None,
                                                    np.random.default_rng(eval_ss))] if strat \
                else np.random.default_rng(eval_ss).permutation(eval_part)
            _ORDER_CACHE.clear()  # one plan at a time per process keeps memory bounded
            _ORDER_CACHE[key] = (train_order, eval_order)
        return _ORDER_CACHE[key]

    def split(self, draw: Draw, y: np.ndarray | None, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
        """Training and evaluation indices of a draw.

        A draw with ``index = (r, k, K)`` is fold ``k`` of a ``K``-fold cross-validation
        over the training part (the race's final confirmation): the training part, class by
        class in its fixed order, is dealt round-robin into ``K`` folds (so every fold holds
        each class's share within one example, and the folds do not depend on the setting);
        the draw is scored on fold ``k`` and trained on the rest, in the training order.
        """
        if draw.kind != "subset":
            raise ValueError(f"SubsetPlan evaluates 'subset' draws, got {draw.kind!r}")
        train_order, eval_order = self.parts(y, n_samples)
        if len(draw.index) == 3:
            _, k, K = draw.index
            if not (isinstance(K, (int, np.integer)) and 2 <= K <= len(train_order) and 0 <= k < K):
                raise ValueError(f"a fold draw needs index (round, k, K) with 0 <= k < K <= n_train, got {draw.index}")
            dealt = train_order
            if self.stratified and y is not None:  # deal class by class: every fold within one of each class's share
                _, codes = np.unique(np.asarray(y)[train_order], return_inverse=True)
                dealt = train_order[np.argsort(codes.ravel(), kind="stable")]
            held = np.zeros(len(dealt), dtype=bool)
            held[k::K] = True
            if draw.size != int((~held).sum()):
                raise ValueError(f"fold draw size {draw.size} differs from its training part ({int((~held).sum())})")
            keep = np.zeros(len(y) if y is not None else n_samples, dtype=bool)
            keep[dealt[~held]] = True
            return train_order[keep[train_order]], dealt[held]
        if draw.size is None or not 1 <= draw.size <= len(train_order):
            raise ValueError(f"draw size must be between 1 and the training part ({len(train_order)}), "
                             f"got {draw.size}")
        return train_order[:draw.size], eval_order[:self.eval_size(draw.size, n_samples)]

    def spec(self) -> dict[str, Any]:
        return {"plan": "subset", "random_state": self.random_state, "train_fraction": self.train_fraction,
                "eval_fraction": self.eval_fraction, "stratified": self.stratified}


def _check_fraction(name: str, value: Any, upper_open: bool = True) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a float, got {type(value).__name__}")
    if not (0 < value < 1 if upper_open else 0 < value <= 1):
        raise ValueError(f"{name} must be in (0, 1{')' if upper_open else ']'}, got {value}")
