"""Draws (one evaluation to run), outcomes (what came back) and seed derivation."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

DRAW_KINDS = ("fold", "split", "subset", "full")


def derive_seed(root: int, *path: int) -> int:
    """Return a 32-bit seed derived from ``root`` and an integer ``path``.

    Uses :class:`numpy.random.SeedSequence` with ``path`` as spawn key, so a
    seed depends only on *which* evaluation it is for, never on the order in
    which evaluations are scheduled, the number of workers or retries.
    """
    ss = np.random.SeedSequence(int(root), spawn_key=tuple(int(p) for p in path))
    return int(ss.generate_state(1, dtype=np.uint32)[0])


#: First spawn-key element of row seeds (paired evaluation); no strategy's candidate index
#: comes near it, so a row's seed never equals one candidate's own seed.
ROW_SEED_KEY = 2**31 - 3


def row_seed(root: int, row: int) -> int:
    """Seed of row ``row`` of a paired run: the same for every candidate evaluated on that row.

    Examples
    --------
    >>> row_seed(0, 4) == row_seed(0, 4) != row_seed(0, 5)
    True
    """
    return derive_seed(root, ROW_SEED_KEY, int(row))


def split_draw(root: int, candidate: int, row: int, *, paired: bool) -> Draw:
    """The ``"split"`` draw of ``candidate`` on row ``row`` (its fresh split and model seed).

    ``paired=False``: the seed derives from ``(candidate, row)``, every candidate's scores are
    independent. ``paired=True`` (common random numbers): it derives from the row alone, so
    every candidate evaluated on row ``row`` gets the same split and seed, and scores compare
    row by row. Either way the draw is a function of ``(candidate, row)`` only, whichever
    candidate is asked for first, so a store, a resumed run and processes sharing a store
    reuse it.

    Examples
    --------
    >>> a, b = split_draw(7, 0, 3, paired=True), split_draw(7, 5, 3, paired=True)
    >>> a.seed == b.seed, a.key, b.key
    (True, 'split/c0/3', 'split/c5/3')
    >>> split_draw(7, 0, 3, paired=False).seed == split_draw(7, 5, 3, paired=False).seed
    False
    """
    seed = row_seed(root, row) if paired else derive_seed(root, candidate, row)
    return Draw(int(candidate), "split", (int(row),), seed=seed)


@dataclass(frozen=True)
class Draw:
    """One evaluation to run: which candidate on which data.

    Parameters
    ----------
    candidate : int
        Index of the candidate in the run's candidate list.
    kind : {"fold", "split", "subset", "full"}
        ``"fold"``: repeat ``index[0]``, fold ``index[1]`` of a J-K-fold plan;
        ``"split"``: a fresh random train/test split; ``index[0]`` is its row: the
        candidate's evaluation count, or in a paired run the row every candidate
        evaluated on it shares (:func:`split_draw`); ``"subset"``: a training subset of ``size``
        examples (progressive sampling, ``index[0]`` is the round);
        ``"full"``: all labelled data (plus an unlabeled set).
    index : tuple of int
        Position of the draw within its plan.
    seed : int
        Seed for everything random in this evaluation (split, model).
    size : int or None
        Training-set size for ``"subset"`` draws.
    """

    candidate: int
    kind: str
    index: tuple[int, ...] = ()
    seed: int = 0
    size: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in DRAW_KINDS:
            raise ValueError(f"kind must be one of {DRAW_KINDS}, got {self.kind!r}")
        object.__setattr__(self, "index", tuple(map(int, self.index)))

    @classmethod
    def unchecked(cls, candidate: int, kind: str, index: tuple[int, ...], seed: int, size: int | None) -> Draw:
        """The draw of these fields, for a caller that holds them checked already (3x cheaper than ``Draw(...)``).

        ``kind`` must be one of :data:`DRAW_KINDS` and ``index`` a tuple of ints: what
        ``Draw(...)`` would check and convert is taken as given. For the loops that make one
        draw per evaluation (a strategy's ``ask``, the store's rows read back), 100,000s of times.
        """
        draw = object.__new__(cls)
        draw.__dict__.update(candidate=candidate, kind=kind, index=index, seed=seed, size=size)
        return draw

    @property
    def key(self) -> str:
        """Unique, stable identifier of the draw within a run (the store key); computed once per draw."""
        key = self.__dict__.get("_key")
        if key is None:
            idx = ".".join(map(str, self.index))
            size = "" if self.size is None else f"/n{self.size}"
            key = self.__dict__["_key"] = f"{self.kind}/c{self.candidate}/{idx}{size}"
        return key

    def to_json(self) -> str:
        return json.dumps(
            {"candidate": self.candidate, "kind": self.kind, "index": list(self.index),
             "seed": self.seed, "size": self.size}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Draw:
        d = json.loads(text)
        return cls(d["candidate"], d["kind"], tuple(d["index"]), d["seed"], d["size"])


#: How :func:`certa.engine.evaluators.execute` begins the error of an evaluation whose score is NaN or infinite.
NON_FINITE_ERROR = "evaluation returned a non-finite score"


@dataclass
class Outcome:
    """What one attempt at a draw produced.

    ``status`` is ``"ok"``, ``"failed"`` (the evaluation raised or returned a
    non-finite score) or ``"timeout"``. ``details`` holds JSON-able extras
    (fit time, train score, sizes, ...); ``payload`` holds data the evaluator
    chose to keep (for example per-example predictions): JSON values and numpy
    arrays of non-object dtype, see :mod:`certa.engine.payload`. ``transient``
    holds objects handed back to the calling process only (e.g. a fitted model),
    never written to a store.
    """

    score: float
    status: str = "ok"
    error: str | None = None
    duration: float = 0.0
    attempt: int = 1
    details: dict[str, Any] = field(default_factory=dict)
    payload: Any = None
    transient: Any = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @staticmethod
    def failure(error: str, status: str = "failed", duration: float = 0.0) -> Outcome:
        return Outcome(score=math.nan, status=status, error=error, duration=duration)
