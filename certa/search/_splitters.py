"""scikit-learn splitters as the rows of a paired run (``cv=`` and ``groups=``, issue 34).

A paired run scores every surviving candidate on row ``r``; with a splitter, row ``r`` is the
r-th split of ``cv.split(X, y, groups)``, the same for every candidate, so elimination goes
fold by fold. The splits are materialised once, before any fit, in the splitter's order; a
splitter that shuffles without a ``random_state`` is given one derived from the run's root
seed, so the same seed gives the same splits (and a store resumes exactly: the splits' hash is
part of the run's identity, :class:`certa.engine.plans.RowSplitsPlan`).
"""
from __future__ import annotations

import copy
import numbers
import re
from typing import Any

import numpy as np

from ..engine.draws import derive_seed
from ..engine.plans import RowSplitsPlan

#: Spawn-key element of the seed a shuffling splitter without ``random_state`` is given.
SPLITTER_SEED_KEY = 2**31 - 5

#: ``certa select --cv`` names: family -> (scikit-learn class, needs labels, needs groups, repeated).
CV_FAMILIES = {
    "kfold": ("KFold", False, False, False),
    "stratified": ("StratifiedKFold", True, False, False),
    "repeated-kfold": ("RepeatedKFold", False, False, True),
    "repeated-stratified": ("RepeatedStratifiedKFold", True, False, True),
    "group": ("GroupKFold", False, True, False),
    "stratified-group": ("StratifiedGroupKFold", True, True, False),
    "time-series": ("TimeSeriesSplit", False, False, False),
}


def seeded_splitter(cv: Any, root_seed: int) -> Any:
    """``cv``, or a copy of it with a ``random_state`` derived from ``root_seed`` if it shuffles
    without one (so that the same root seed gives the same splits)."""
    if not hasattr(cv, "split") or getattr(cv, "random_state", 0) is not None:
        return cv
    if hasattr(cv, "shuffle") and not cv.shuffle:
        return cv
    out = copy.deepcopy(cv)
    out.random_state = derive_seed(root_seed, SPLITTER_SEED_KEY)
    return out


def splitter_rows(cv: Any, X: Any, y: Any, groups: Any, *, classifier: bool, root_seed: int,
                  arg: str = "cv") -> RowSplitsPlan:
    """The rows of a paired run: every ``(train, test)`` split of ``cv`` on ``(X, y, groups)``, in order.

    ``arg`` names ``cv`` in the errors (``bandit_select`` calls it ``split``).

    ``cv`` is a scikit-learn splitter (anything with ``split``), an int K (``StratifiedKFold``
    for a classifier with class labels, else ``KFold``, as ``GridSearchCV`` reads it), or an
    iterable of ``(train, test)`` index pairs.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GroupKFold
    >>> X, g = np.zeros((6, 1)), np.array([0, 0, 1, 1, 2, 2])
    >>> plan = splitter_rows(GroupKFold(3), X, None, g, classifier=False, root_seed=0)
    >>> plan.n_rows, sorted(int(g[plan.splits[0][1]][0]) for _ in [0])
    (3, [2])
    """
    from sklearn.model_selection import check_cv

    if cv is None:
        raise ValueError(f"{arg} is None: give a splitter, an int or an iterable of (train, test) splits")
    if isinstance(cv, (bool, np.bool_)) or (isinstance(cv, numbers.Real) and not isinstance(cv, numbers.Integral)):
        raise TypeError(f"{arg} must be a splitter, an int or an iterable of (train, test) splits, got {cv!r}")
    if isinstance(cv, numbers.Integral) and cv < 2:
        raise ValueError(f"{arg} must be at least 2 folds, got {cv}")
    if isinstance(cv, str):
        raise TypeError(f"{arg} must be a splitter, an int or an iterable of (train, test) splits, got the string "
                        f"{cv!r} (certa select --cv takes names such as 'repeated-stratified:5x10')")
    checked = check_cv(seeded_splitter(cv, root_seed), y, classifier=classifier)
    try:
        splits = list(checked.split(X, y, groups))
    except ValueError as exc:
        raise ValueError(f"{arg} ({_describe(cv)}) cannot split these data: {exc}") from None
    if not splits:
        raise ValueError(f"{arg} ({_describe(cv)}) gave no splits")
    for r, split in enumerate(splits):
        if not (isinstance(split, tuple) and len(split) == 2):
            raise ValueError(f"{arg}: split {r} is not a (train, test) pair")
        if np.intersect1d(split[0], split[1]).size:
            raise ValueError(f"{arg}: split {r} has examples in both its train and its test part")
    return RowSplitsPlan(splits, source=_describe(cv))


def _describe(cv: Any) -> str:
    if hasattr(cv, "split"):
        return repr(cv) if len(repr(cv)) < 200 else type(cv).__name__
    if isinstance(cv, numbers.Integral):
        return f"{int(cv)}-fold"
    return "a list of (train, test) splits"


def parse_cv(text: str) -> Any:
    """``certa select --cv``: a splitter from ``FAMILY:K`` or ``FAMILY:KxJ`` (repeated families).

    Families: ``kfold``, ``stratified``, ``group``, ``stratified-group``, ``time-series``
    (``:K``) and ``repeated-kfold``, ``repeated-stratified`` (``:KxJ``: K folds, J repeats).
    Shuffling families get their ``random_state`` from the run's seed (:func:`seeded_splitter`).

    Examples
    --------
    >>> parse_cv("repeated-stratified:5x10")
    RepeatedStratifiedKFold(n_repeats=10, n_splits=5, random_state=None)
    >>> parse_cv("group:5")
    GroupKFold(n_splits=5, random_state=None, shuffle=False)
    """
    import sklearn.model_selection as ms

    m = re.fullmatch(r"([a-z-]+):(\d+)(?:x(\d+))?", str(text).strip())
    names = ", ".join(f"{f}:K" + ("xJ" if CV_FAMILIES[f][3] else "") for f in CV_FAMILIES)
    if not m or m.group(1) not in CV_FAMILIES:
        raise ValueError(f"--cv {text!r}: expected one of {names} (e.g. repeated-stratified:5x10)")
    family, k, j = m.group(1), int(m.group(2)), m.group(3)
    cls_name, _, _, repeated = CV_FAMILIES[family]
    if repeated != (j is not None):
        raise ValueError(f"--cv {text!r}: {family} takes " + ("K folds x J repeats, e.g. "
                         f"{family}:5x10" if repeated else f"K folds only, e.g. {family}:5"))
    if k < 2:
        raise ValueError(f"--cv {text!r}: at least 2 folds, got {k}")
    cls = getattr(ms, cls_name)
    if repeated:
        if int(j) < 1:
            raise ValueError(f"--cv {text!r}: at least 1 repeat, got {j}")
        return cls(n_splits=k, n_repeats=int(j))
    if family in ("kfold", "stratified", "stratified-group"):
        return cls(n_splits=k, shuffle=True)
    return cls(n_splits=k)
