"""Training-set size schedules of wrapped progressive sampling: Paramsearch's and PSearch's, or a user's list."""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

#: PSearch's training-set sizes, as fractions of the training part.
PSEARCH_FRACTIONS: tuple[float, ...] = (0.01, 0.02, 0.04, 0.05, 0.30, 0.65, 0.85, 1.00)
#: Paramsearch's first size; smaller sizes of its geometric series are skipped.
PARAMSEARCH_MIN_SIZE = 500


def _check_n_train(n_train: Any) -> int:
    if isinstance(n_train, bool) or not isinstance(n_train, (int, np.integer)):
        raise TypeError(f"n_train must be an int, got {type(n_train).__name__}")
    if n_train < 1:
        raise ValueError(f"n_train must be at least 1, got {n_train}")
    return int(n_train)


def paramsearch_sizes(n_train: int) -> list[int]:
    """Paramsearch's training-set sizes for a training part of ``n_train`` examples.

    ``f = n_train ** (1/20)``, ``size_1 = 1``, ``size_i = size_{i-1} * f`` (so
    ``size_i = f ** (i-1)`` and ``size_21 = n_train``); sizes are rounded to the
    nearest integer, only those above 500 are kept, 500 is put first and the last is
    ``n_train``. Documented fallback: with ``n_train <= 500`` there is nothing to
    sample progressively and the schedule is ``[n_train]`` (one round: plain
    wrapping, every setting trained on the whole training part).

    Examples
    --------
    >>> paramsearch_sizes(57_781)
    [500, 720, 1245, 2154, 3727, 6448, 11156, 19302, 33396, 57781]
    """
    n = _check_n_train(n_train)
    if n <= PARAMSEARCH_MIN_SIZE:
        return [n]
    log_f = math.log(n) / 20
    series = [int(round(math.exp(log_f * i))) for i in range(20)] + [n]  # f**0 .. f**19, then f**20 = n
    return [PARAMSEARCH_MIN_SIZE] + [s for s in series if s > PARAMSEARCH_MIN_SIZE]


def psearch_sizes(n_train: int) -> list[int]:
    """PSearch's training-set sizes: 1, 2, 4, 5, 30, 65, 85 and 100 % of ``n_train``.

    Sizes are rounded to the nearest integer (at least 1) and duplicates, which only
    occur below 100 training examples, are dropped (documented fallback for small data).

    Examples
    --------
    >>> psearch_sizes(57_781)
    [578, 1156, 2311, 2889, 17334, 37558, 49114, 57781]
    """
    n = _check_n_train(n_train)
    return _dedupe([max(1, int(round(p * n))) for p in PSEARCH_FRACTIONS[:-1]] + [n])


def schedule_sizes(schedule: str | Sequence[float | int], n_train: int, min_size: int = 1) -> list[int]:
    """Training-set sizes of ``schedule`` for a training part of ``n_train`` examples.

    ``schedule`` is ``"paramsearch"``, ``"psearch"``, or a strictly increasing list of
    fractions of the training part (floats in (0, 1]) or of sizes (ints >= 1, at most
    ``n_train``). Fractions are rounded to the nearest size (at least 1); sizes that
    round to the same value are kept once.

    ``min_size`` is the smallest training subset a round may use (for a classifier, the
    smallest that holds every class: :meth:`SubsetPlan.smallest_size`). Sizes of the named
    schedules and of fractions below it are raised to it (and then kept once); a list of
    int sizes that starts below it is refused, naming it.

    Examples
    --------
    >>> schedule_sizes([0.1, 0.5, 1.0], 1000)
    [100, 500, 1000]
    >>> schedule_sizes([50, 200], 1000)
    [50, 200]
    >>> schedule_sizes("psearch", 48, min_size=2)  # 1, 2, 14, 31, 41, 48 without it
    [2, 14, 31, 41, 48]
    """
    n = _check_n_train(n_train)
    if isinstance(min_size, bool) or not isinstance(min_size, (int, np.integer)) or not 1 <= min_size <= n:
        raise ValueError(f"min_size must be an int between 1 and n_train ({n}), got {min_size!r}")
    m = int(min_size)
    if isinstance(schedule, str):
        if schedule == "paramsearch":
            return _dedupe([max(m, s) for s in paramsearch_sizes(n)])
        if schedule == "psearch":
            return _dedupe([max(m, s) for s in psearch_sizes(n)])
        raise ValueError(f"schedule must be 'paramsearch', 'psearch' or a list of fractions or sizes, got {schedule!r}")
    values = _check_schedule_list(schedule)
    if all(isinstance(v, (int, np.integer)) for v in values):
        if values[-1] > n:
            raise ValueError(f"schedule asks for {values[-1]} training examples but the training part has {n}")
        if values[0] < m:
            raise ValueError(f"schedule starts at {values[0]} training examples, but the smallest training subset "
                             f"that holds every class of the training part has {m} (a classifier trained on fewer "
                             f"sees only some of the classes): start the schedule at {m} or more, or give it as "
                             "fractions (raised to that size)")
        return [int(v) for v in values]
    return _dedupe([max(m, int(round(float(v) * n))) for v in values])


def _check_schedule_list(schedule: Any) -> list:
    if not isinstance(schedule, Sequence) and not hasattr(schedule, "__array__"):
        raise TypeError(f"schedule must be 'paramsearch', 'psearch' or a list, got {type(schedule).__name__}")
    values = list(schedule)
    if not values:
        raise ValueError("schedule is empty: give at least one fraction or size")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"schedule entries must be numbers, got {v!r}")
    ints = all(isinstance(v, (int, np.integer)) for v in values)
    if ints:
        if values[0] < 1:
            raise ValueError(f"schedule sizes must be at least 1, got {values[0]}")
    else:
        if not all(0 < float(v) <= 1 for v in values):
            raise ValueError(f"schedule fractions must be in (0, 1] (or give all entries as int sizes), got {values}")
    if any(b <= a for a, b in itertools.pairwise(values)):
        raise ValueError(f"schedule must be strictly increasing, got {values}")
    return values


def _dedupe(sizes: list[int]) -> list[int]:
    out: list[int] = []
    for s in sizes:
        if not out or s > out[-1]:
            out.append(s)
    return out
