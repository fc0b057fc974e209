"""The ask/tell protocol every selection method implements."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from .draws import Draw, Outcome


class Strategy(ABC):
    """A selection method as a small ask/tell object: no I/O, no threads, no clock.

    The runner calls :meth:`start` once, then alternates :meth:`ask` (which
    draw to evaluate next; ``None`` means "nothing until you tell me more")
    and :meth:`tell` (the outcome of a draw), telling outcomes in the order the
    draws were asked. Given the same told outcomes a strategy must make the
    same asks: that is what makes results independent of the number of
    workers and makes resuming from the store exact.

    ``max_pending`` bounds how many draws may be asked but not yet told. An
    adaptive strategy sets it (1 for a sequential method, W for a batch of W
    workers) because its asks depend on what it has been told; ``None``
    means the asks do not depend on the outcomes (a fixed plan), so the
    runner may keep as many in flight as it likes.
    """

    max_pending: int | None = None
    #: True for a strategy that asks draws ahead of its decisions to keep ``n_workers`` busy
    #: (the paired rule's rows ahead; halving's and progressive sampling's rounds ahead): the
    #: runner then runs at most ``n_workers`` evaluations at once, tells the finished ones before
    #: asking more, and at the stop records those that finished in the store without waiting for
    #: the rest; the draws the decision did not use are :meth:`spent_ahead`.
    asks_ahead: bool = False

    def set_workers(self, n_workers: int) -> None:
        """Tell the strategy how many evaluations the executor runs at once (the runner, or a
        virtual clock, calls this before :meth:`start`). A strategy may use it to keep the
        workers busy (asking ahead), never to change a decision: the choice must not depend
        on it. Not part of :meth:`spec`, so a run resumes with any number of workers."""
        n = int(n_workers)
        if n < 1:
            raise ValueError(f"n_workers must be a positive integer, got {n_workers!r}")
        self._n_workers = n

    @property
    def n_workers(self) -> int:
        """Evaluations the executor runs at once, as last told by :meth:`set_workers` (1 if never told)."""
        return getattr(self, "_n_workers", 1)

    def spent_ahead(self) -> list[str]:
        """Keys of the draws told but not used by the decision (asked ahead of it); empty unless
        :attr:`asks_ahead`. The runner keeps them in the store, not in the selection's evaluations."""
        return []

    def start(self, n_candidates: int, seed: int) -> None:
        """Reset the strategy for a run over ``n_candidates`` with root ``seed``."""
        if n_candidates < 1:
            raise ValueError("a run needs at least one candidate")
        self.n_candidates = int(n_candidates)
        self.seed = int(seed)
        self._dropped: dict[int, str] = {}
        self._start()

    def drop(self, candidate: int, reason: str) -> None:
        """Stop evaluating ``candidate``: it keeps failing (the runner decides when).

        A dropped candidate is never asked for again and is never chosen while another
        candidate is left; draws of it already asked are still told. Once every candidate
        is dropped the strategy is finished. Subclasses honour a drop in :meth:`_drop`;
        a strategy that does not (the default) and asks for a dropped candidate again gets
        a ``"dropped"`` outcome from the runner without an evaluation.
        """
        if candidate in self._dropped:
            return
        self._dropped[int(candidate)] = str(reason)
        self._drop(int(candidate))

    def _drop(self, candidate: int) -> None:
        """Update internal state after :meth:`drop` (e.g. remove queued draws, close a round)."""

    @property
    def dropped(self) -> dict[int, str]:
        """Dropped candidates and why."""
        return dict(getattr(self, "_dropped", {}))

    def _alive(self) -> list[int]:
        """Candidates not dropped, in order."""
        return [c for c in range(self.n_candidates) if c not in self._dropped]

    @abstractmethod
    def _start(self) -> None:
        """Initialise internal state (called by :meth:`start`)."""

    @abstractmethod
    def ask(self) -> Draw | None:
        """Next draw to evaluate, or ``None`` if none until more outcomes are told."""

    @abstractmethod
    def tell(self, draw: Draw, outcome: Outcome) -> None:
        """Record the outcome of ``draw`` (also called for failed draws)."""

    @property
    @abstractmethod
    def finished(self) -> bool:
        """True once the strategy has reached its decision."""

    @abstractmethod
    def result(self) -> dict[str, Any]:
        """The decision: at least ``best`` (candidate index) and ``estimates`` (per candidate)."""

    def spec(self) -> dict[str, Any]:
        """JSON-able description of the configuration (part of a run's identity in the store)."""
        return {"strategy": type(self).__name__, **{k: v for k, v in vars(self).items()
                                                    if not k.startswith("_") and k not in ("n_candidates", "seed")
                                                    and isinstance(v, (int, float, str, bool, type(None), list, tuple))}}
