"""The runner's scheduling policy: how many draws may be asked ahead, and how many submitted.

One function shared by :func:`certa.engine.runner.run` and the virtual clock of
:mod:`certa.planning.clock`, so a wall time planned on the clock follows the same rules as a
real run.
"""
from __future__ import annotations

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
