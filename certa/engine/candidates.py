"""Candidates: the settings or models a run chooses between."""
from __future__ import annotations

import math
import warnings
import weakref
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Candidate:
    """A named candidate and its parameters."""

    index: int
    name: str
    params: dict[str, Any]


class DuplicateNamesWarning(UserWarning):
    """Several candidates share a name: outputs tell them apart by their parameters (``same {C: 1}``)."""


#: first candidate of each list already warned about -> a weak reference to it (one warning per list,
#: however many fronts pass the same candidates on)
_WARNED: dict[int, weakref.ref] = {}


def warn_duplicate_names(candidates: Sequence[Candidate], stacklevel: int = 3) -> None:
    """Warn (:class:`DuplicateNamesWarning`) when names repeat, saying how many and which.

    A run accepts such candidates (each is told apart by its index and parameters), but a
    reader of the output could not tell ``same`` from ``same``: ``certa show``, ``certa report``
    and the figures then show the parameters after a repeated name.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn_duplicate_names([Candidate(0, "same", {"C": 1}), Candidate(1, "same", {"C": 2})])
    >>> str(w[0].message).split(":")[0]
    '2 of 2 candidates share their name with another'
    """
    if not candidates:
        return
    first = candidates[0]
    seen = _WARNED.get(id(first))
    if seen is not None and seen() is first:
        return
    counts = Counter(c.name for c in candidates)
    repeated = {name: n for name, n in counts.items() if n > 1}
    if not repeated:
        return
    shared = sum(repeated.values())
    examples = ", ".join(f"{name[:40]!r} x{n:,}" for name, n in
                         sorted(repeated.items(), key=lambda kv: -kv[1])[:3])
    more = f" and {len(repeated) - 3:,} more names" if len(repeated) > 3 else ""
    warnings.warn(f"{shared:,} of {len(candidates):,} candidates share their name with another: {examples}{more}; "
                  "each is still evaluated and chosen on its own (by index and parameters), and outputs show "
                  "the parameters after a repeated name; give distinct names to read the results more easily",
                  DuplicateNamesWarning, stacklevel=stacklevel)
    key = id(first)
    try:
        _WARNED[key] = weakref.ref(first, lambda _, key=key: _WARNED.pop(key, None))
    except TypeError:  # pragma: no cover - a Candidate always takes weak references
        pass


def _format_params(params: Mapping[str, Any]) -> str:
    if not params:
        return "default"
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # a numpy scalar
        value = value.item()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return {k: _jsonable(v) for k, v in value.items()}
    return " ".join(repr(value).split())  # an object: its repr, on one line


def jsonable_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` as JSON values: numbers, strings, lists and dicts as they are, anything else as its repr.

    Examples
    --------
    >>> jsonable_params({"C": 0.1, "kernel": "rbf", "model": object})
    {'C': 0.1, 'kernel': 'rbf', 'model': "<class 'object'>"}
    """
    return {str(k): _jsonable(v) for k, v in params.items()}


def candidates_from_grid(param_grid: Mapping[str, Sequence] | Sequence[Mapping[str, Sequence]]) -> list[Candidate]:
    """Expand a scikit-learn style ``param_grid`` into candidates, in ``GridSearchCV`` order.

    Examples
    --------
    >>> [c.name for c in candidates_from_grid({"C": [0.1, 1.0]})]
    ['C=0.1', 'C=1.0']
    """
    if isinstance(param_grid, Mapping):
        grids = [param_grid]
    elif isinstance(param_grid, Sequence) and not isinstance(param_grid, str):
        grids = list(param_grid)
    else:
        raise TypeError(f"param_grid must be a dict or a list of dicts, got {type(param_grid).__name__}")
    if not grids:
        raise ValueError("param_grid is empty: give at least one setting")
    for grid in grids:
        if isinstance(grid, Mapping) and not grid:
            raise ValueError("param_grid is empty: give at least one parameter with a list of values "
                             "(an empty dict would only try the estimator's defaults)")
        if not isinstance(grid, Mapping):
            raise TypeError(f"param_grid must be a dict or a list of dicts, got an element of type {type(grid).__name__}")
        for name, values in grid.items():
            if not isinstance(name, str):
                raise TypeError(f"param_grid keys must be parameter names (str), got {name!r}")
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) and not hasattr(values, "__array__"):
                raise TypeError(
                    f"param_grid[{name!r}] must be a list of values to try, got {values!r} "
                    f"(of type {type(values).__name__}); write [{values!r}] for a single value")
            if len(values) == 0:
                raise ValueError(f"param_grid[{name!r}] is an empty list: give at least one value")
    from sklearn.model_selection import ParameterGrid  # on first use: reading a store needs no scikit-learn

    settings = list(ParameterGrid(grids))
    if not settings:
        raise ValueError("param_grid is empty: give at least one setting")
    return [Candidate(i, _format_params(p), dict(p)) for i, p in enumerate(settings)]


def named_candidates(named: Mapping[str, Any]) -> list[Candidate]:
    """Candidates from ``{name: object}``; the object is passed as ``params={"model": obj}``."""
    if not isinstance(named, Mapping):
        raise TypeError(f"candidates must be a dict of name -> model, got {type(named).__name__}")
    if not named:
        raise ValueError("candidates is empty: give at least one")
    return [Candidate(i, str(k), {"model": v}) for i, (k, v) in enumerate(named.items())]


def as_candidates(candidates: Any) -> list[Candidate]:
    """Normalise candidates given as a list of :class:`Candidate`, a param grid, or named models.

    Warns with :class:`DuplicateNamesWarning` when names repeat (once per list of candidates).
    """
    out = _as_candidates(candidates)
    warn_duplicate_names(out, stacklevel=3)
    return out


def _as_candidates(candidates: Any) -> list[Candidate]:
    if isinstance(candidates, Sequence) and candidates and all(isinstance(c, Candidate) for c in candidates):
        if [c.index for c in candidates] != list(range(len(candidates))):
            raise ValueError("candidates must be indexed 0..n-1 in order")
        return list(candidates)
    if isinstance(candidates, Sequence) and not isinstance(candidates, str) and candidates \
            and all(isinstance(c, Mapping) for c in candidates) \
            and not all(all(isinstance(v, (list, tuple)) or hasattr(v, "__array__") for v in c.values()) for c in candidates):
        # a list of explicit parameter dicts
        return [Candidate(i, _format_params(p), dict(p)) for i, p in enumerate(candidates)]
    if isinstance(candidates, Mapping) and candidates and not all(
            isinstance(v, (list, tuple)) or hasattr(v, "__array__") for v in candidates.values()):
        return named_candidates(candidates)
    return candidates_from_grid(candidates)
