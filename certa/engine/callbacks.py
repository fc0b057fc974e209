"""Per-evaluation callbacks of the runner (as Optuna's ``callbacks`` and Ray Tune's loggers).

A callback is told about a run as it goes: once at the start, once after each evaluation is
recorded in the store and told to the strategy, and once at the end. It runs in the calling
process (never in a worker), in the order the strategy is told, so it sees the evaluations in
the same order whatever the number of workers or their timing. It only reads: the run it sees
is a :class:`RunView`, and :meth:`RunView.result` is computed on a copy of the strategy, so a
callback cannot change what the run evaluates or decides.

On resume, evaluations reused from the store are told to the strategy like new ones, and the
callbacks see them too (with ``reused=True``): a logger attached to a resumed run then records
the whole run, not only its tail. A callback that wants only the new ones skips ``reused``.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .candidates import Candidate
from .draws import Draw, Outcome

if TYPE_CHECKING:
    from .selection import Selection
    from .strategy import Strategy

__all__ = ["Callback", "Evaluation", "RunView", "check_callbacks"]


@dataclass(frozen=True)
class Evaluation:
    """One evaluation, as a callback sees it.

    Attributes
    ----------
    order : int
        Position among the evaluations told so far (0, 1, ...): the row of
        ``Selection.evaluations`` it becomes.
    draw : Draw
        Which candidate on which data (``draw.seed`` is the evaluation's seed).
    outcome : Outcome
        Score, status (``"ok"``, ``"failed"``, ``"timeout"``), error, duration, attempts.
    candidate : Candidate
        The candidate evaluated (name and parameters).
    reused : bool
        True if the outcome was read from the store (finished by an earlier or another
        process) rather than evaluated by this run.
    """

    order: int
    draw: Draw
    outcome: Outcome
    candidate: Candidate
    reused: bool


class RunView:
    """A read-only view of a run in progress, handed to callbacks.

    Attributes
    ----------
    candidates : list of Candidate
    seed : int
        The run's root seed.
    strategy : dict
        The strategy's spec (its class name and settings).
    store : str or None
        Path of the run's SQLite store, if it has one.
    n_evaluations : int
        Evaluations told so far (reused ones included).
    n_reused : int
        Of those, how many were read from the store.
    """

    def __init__(self, strategy: Strategy, candidates: list[Candidate], seed: int, store: str | None) -> None:
        self._strategy = strategy
        self.candidates = candidates
        self.seed = seed
        self.strategy = strategy.spec()
        self.store = store
        self.n_evaluations = 0
        self.n_reused = 0

    @property
    def finished(self) -> bool:
        """Whether the strategy has reached its decision."""
        return bool(self._strategy.finished)

    def result(self) -> dict[str, Any] | None:
        """The strategy's current answer (``best``, ``estimates``, and for a bandit ``confidence``...).

        Computed on a copy of the strategy, so asking cannot change the run. ``None`` while the
        strategy has too little to answer (e.g. before every candidate has a score).
        """
        try:
            return copy.deepcopy(self._strategy).result()
        except Exception:  # noqa: BLE001 - too early for this strategy to answer
            return None


class Callback:
    """Base class of a run's callbacks: override the hooks you need (each does nothing here).

    A plain function ``fn(run, evaluation)`` given in ``callbacks=`` is called as
    :meth:`on_evaluation`. An exception raised by a callback stops the run (what was
    evaluated is in the store, if there is one: run again to resume).

    Examples
    --------
    >>> import numpy as np
    >>> from certa import FunctionEvaluator, run
    >>> from certa.engine.callbacks import Callback
    >>> from certa.strategies import EqualAllocation
    >>> class Scores(Callback):
    ...     def on_run_start(self, run):
    ...         self.scores = []
    ...     def on_evaluation(self, run, evaluation):
    ...         self.scores.append((evaluation.candidate.name, evaluation.outcome.score))
    >>> cb = Scores()
    >>> sel = run(EqualAllocation(4), FunctionEvaluator(lambda p, seed: p["x"]), [{"x": 1}, {"x": 2}],
    ...           callbacks=[cb])
    >>> len(cb.scores), cb.scores[0]
    (4, ('x=1', 1.0))
    """

    def on_run_start(self, run: RunView) -> None:
        """Called once, after the store is opened and before the first evaluation is told."""

    def on_evaluation(self, run: RunView, evaluation: Evaluation) -> None:
        """Called after each evaluation is recorded in the store and told to the strategy."""

    def on_run_end(self, run: RunView, selection: Selection | None, error: BaseException | None = None) -> None:
        """Called once when the run ends: with its ``Selection`` (``selection.finished`` is False
        for a run cut short by Ctrl-C), or with ``selection=None`` and the ``error`` that ended it."""


class _FunctionCallback(Callback):
    def __init__(self, fn: Callable[[RunView, Evaluation], Any]) -> None:
        self.fn = fn

    def on_evaluation(self, run: RunView, evaluation: Evaluation) -> None:
        self.fn(run, evaluation)


def check_callbacks(callbacks: Any) -> list[Callback]:
    """Validate ``callbacks=`` (None, a Callback or function, or a sequence of them)."""
    if callbacks is None:
        return []
    if isinstance(callbacks, Callback) or (callable(callbacks) and not isinstance(callbacks, Sequence)):
        callbacks = [callbacks]
    if isinstance(callbacks, (str, bytes)) or not isinstance(callbacks, Sequence):
        raise TypeError("callbacks must be a certa Callback, a function fn(run, evaluation), or a list of them; "
                        f"got {type(callbacks).__name__}")
    out: list[Callback] = []
    for i, cb in enumerate(callbacks):
        if isinstance(cb, Callback):
            out.append(cb)
        elif callable(cb):
            out.append(_FunctionCallback(cb))
        else:
            raise TypeError(f"callbacks[{i}] must be a certa Callback or a function fn(run, evaluation), "
                            f"got {type(cb).__name__}")
    return out
