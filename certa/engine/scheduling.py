"""The runner's scheduling policy: how many draws may be asked ahead, and how many submitted.

The limits (:func:`scheduling_limits`) and the loop that applies them (:class:`AskTellLoop`) are
shared by :func:`certa.engine.runner.run` and the virtual clock of :mod:`certa.planning.clock`, so
a wall time planned on the clock follows the same rules as a real run.
"""
from __future__ import annotations

from collections import deque

import numpy as np

#: Draws asked but not yet told when a strategy sets no ``max_pending`` (a fixed plan): in
#: practice unbounded; the number submitted (``max_running``) is what limits a fixed plan.
UNBOUNDED_PENDING = 1_000_000


def scheduling_limits(max_pending: int | None, n_workers: int, max_in_flight: int | None = None, *,
                      asks_ahead: bool = False) -> tuple[int, int]:
    """``(capacity, max_running)`` for a run with ``n_workers`` workers.

    The runner asks the strategy for another draw while it is not finished, fewer than
    ``capacity`` draws are asked but not yet told, and fewer than ``max_running`` are submitted
    to the executor and not yet collected (the executor runs ``n_workers`` of them at once and
    queues the rest, first in first out). Outcomes are told in the order the draws were asked.

    * An adaptive strategy (``max_pending`` an int) bounds both by its ``max_pending``.
    * A fixed plan (``max_pending=None``) may run ahead of a slow draw at the head of the
      queue: ``capacity`` is :data:`UNBOUNDED_PENDING` and ``max_running`` is ``max_in_flight``
      (scikit-learn's ``pre_dispatch``), by default twice the number of workers.
    * A strategy that asks ahead of its decisions (``asks_ahead``, the paired rule's rows
      ahead) bounds its own asks; ``max_running`` is ``max_in_flight``, by default
      ``n_workers``, so it is asked only when a worker is free, and (see the runner) only once
      the outcomes that finished are told: it asks with all it can know.

    Parameters
    ----------
    max_pending : int or None
        The strategy's :attr:`~certa.engine.strategy.Strategy.max_pending`.
    n_workers : int
        Evaluations the executor runs at once.
    max_in_flight : int or None
        ``run(max_in_flight=...)``; used by fixed plans and strategies that ask ahead.
    asks_ahead : bool
        The strategy's :attr:`~certa.engine.strategy.Strategy.asks_ahead`.

    Returns
    -------
    (int, int)

    Examples
    --------
    >>> scheduling_limits(None, 4)
    (1000000, 8)
    >>> scheduling_limits(None, 4, max_in_flight=5)
    (1000000, 5)
    >>> scheduling_limits(3, 8)
    (3, 3)
    >>> scheduling_limits(1 << 20, 8, asks_ahead=True)
    (1048576, 8)
    """
    if asks_ahead:
        return (int(max_pending) if max_pending is not None else UNBOUNDED_PENDING,
                int(max_in_flight) if max_in_flight is not None else max(int(n_workers), 1))
    if max_pending is not None:
        capacity = int(max_pending)
        return capacity, capacity
    n = int(n_workers)
    return UNBOUNDED_PENDING, int(max_in_flight) if max_in_flight is not None else max(2 * n, 1)


def check_max_in_flight(max_in_flight: int | None) -> int | None:
    """``max_in_flight`` as given, after checking that it is a positive int or ``None``."""
    if max_in_flight is not None and (isinstance(max_in_flight, bool)
                                      or not isinstance(max_in_flight, (int, np.integer)) or max_in_flight < 1):
        raise ValueError(f"max_in_flight must be a positive int or None, got {max_in_flight!r}")
    return max_in_flight


class AskTellLoop:
    """The runner's order of asks and tells, shared by :func:`certa.engine.runner.run` and the
    virtual clock of :mod:`certa.planning.clock`.

    :meth:`loop` asks the strategy while it is not finished, fewer than ``capacity`` draws are
    asked and not yet told, fewer than ``max_running`` are submitted and not yet collected, and
    (for a strategy that asks ahead) the draw at the head of the queue is not ready to be told:
    it is told first, so the strategy asks with all it can know. Outcomes are told in the order
    the draws were asked. A subclass says what submitting a draw means (:meth:`submit`), when
    an entry is ready (:meth:`ready`), how time moves on while the head is not (:meth:`advance`),
    what telling does (:meth:`tell`) and what happens when nothing is left (:meth:`stop_asking`).
    """

    def __init__(self, strategy, n_candidates: int, capacity: int, max_running: int, asks_ahead: bool) -> None:
        self.strategy, self.n_candidates = strategy, int(n_candidates)
        self.capacity, self.max_running, self.ahead = capacity, max_running, bool(asks_ahead)
        self.queue: deque = deque()   # entries asked, not yet told, in the order asked
        self.asked: set[str] = set()

    def loop(self) -> None:
        """Ask, move on and tell until the strategy is finished or asks for nothing more."""
        strategy, queue = self.strategy, self.queue
        while True:
            self.ask()
            if strategy.finished or not queue:
                self.stop_asking()
                return
            if self.ready(queue[0]):
                self.tell(queue.popleft())
            else:  # wait for the head of the queue: outcomes are told in order
                self.advance()

    def ask(self) -> None:
        """Ask the strategy for draws while it may have more asked, and more submitted."""
        strategy, queue = self.strategy, self.queue
        while not strategy.finished and len(queue) < self.capacity and self.n_running() < self.max_running \
                and not (self.ahead and queue and self.ready(queue[0])):
            draw = strategy.ask()
            if draw is None:
                break
            if not 0 <= draw.candidate < self.n_candidates:
                raise RuntimeError(f"strategy asked for candidate {draw.candidate} of {self.n_candidates}")
            if draw.key in self.asked:
                raise RuntimeError(f"strategy asked for draw {draw.key} twice")
            self.asked.add(draw.key)
            queue.append(self.submit(draw))
            self.submitted()

    def stop_asking(self) -> None:
        """Nothing left to tell: refuse a strategy that is not finished but asks for nothing."""
        if not self.strategy.finished and not self.queue:
            raise RuntimeError(f"{type(self.strategy).__name__} is not finished but asks for nothing")

    def submitted(self) -> None:
        """Called after each draw is submitted and queued."""

    def n_running(self) -> int:  # pragma: no cover - abstract
        """Draws submitted and not yet collected."""
        raise NotImplementedError

    def submit(self, draw):  # pragma: no cover - abstract
        """Start ``draw`` (or find its outcome); return its queue entry."""
        raise NotImplementedError

    def ready(self, entry) -> bool:  # pragma: no cover - abstract
        """Whether ``entry``'s outcome is there to be told."""
        raise NotImplementedError

    def advance(self) -> None:  # pragma: no cover - abstract
        """Wait for an evaluation to finish and collect what finished."""
        raise NotImplementedError

    def tell(self, entry) -> None:  # pragma: no cover - abstract
        """Tell the strategy ``entry``'s outcome (the head of the queue)."""
        raise NotImplementedError
