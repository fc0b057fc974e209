"""Draws asked ahead of a round-based strategy's decisions (issue 32): the book that keeps them.

Sequential halving and progressive sampling decide in rounds: a round's members are known only
once the round before it is decided, and the round waits for its slowest evaluation. While it
waits, such a strategy may ask ahead the draws the next rounds would ask of the candidates most
likely to be in them, to keep ``n_workers`` busy. It still decides each round on exactly the
draws of the round's members, in the order a run with one worker would see them, so its
decisions do not depend on the workers; what it asked ahead and the decision does not use is
*spent ahead* (as the paired rule's rows ahead, :mod:`certa.strategies.paired`).

:class:`AheadBook` is the bookkeeping: which draws were asked ahead (keyed by the strategy's own
``ident``, e.g. ``(candidate, round)``), their outcomes once told, and which were spent. A round
that opens *claims* the draws of its members that were asked ahead: an outcome already told is
handed over, one still running is then told to the round as its own draws are.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable

from ..engine.draws import Draw, Outcome

#: At most ``AHEAD_PER_WORKER * n_workers`` draws asked ahead and not yet claimed by a round or
#: spent: enough to keep the workers busy while a round waits for an evaluation two to three
#: times slower than the others (chosen on the virtual clock, docs/adaptive.md "Every front on
#: the clock"), and a bound on what one round's decision can leave spent ahead.
AHEAD_PER_WORKER = 2


class AheadBook:
    """The draws a strategy asked ahead of its decisions, their outcomes and those spent.

    ``open`` holds the draws asked ahead and not yet claimed or spent (their outcome, once told,
    beside them); a claimed draw still running belongs to the round that claimed it and
    :meth:`tell` leaves it to the strategy; a spent draw's key is listed by :attr:`spent_keys`
    once it is told (a draw spent while running is listed when it is told, and not at all if the
    run ends first: it is then counted by the strategy as asked and not used).
    """

    def __init__(self) -> None:
        self._open: dict[Hashable, Draw] = {}           # asked ahead, not claimed, not spent
        self._told: dict[Hashable, Outcome] = {}        # outcomes of open draws, told
        self._spent_running: set[str] = set()           # keys spent before they were told
        self.spent_keys: list[str] = []                 # keys told and not used

    @property
    def n_open(self) -> int:
        """Draws asked ahead and not yet claimed by a round or spent."""
        return len(self._open)

    def open_idents(self) -> list[Hashable]:
        """The idents of the draws asked ahead and not yet claimed or spent."""
        return list(self._open)

    def __contains__(self, ident: Hashable) -> bool:
        return ident in self._open

    def asked(self, ident: Hashable, draw: Draw) -> Draw:
        """Record ``draw`` as asked ahead under ``ident``; returns it (to be asked)."""
        self._open[ident] = draw
        return draw

    def claim(self, ident: Hashable) -> tuple[bool, Outcome | None]:
        """A round takes the draw asked ahead under ``ident``: ``(True, outcome)`` when it was told,
        ``(True, None)`` when it is still running (its outcome will be told to the round),
        ``(False, None)`` when it was not asked ahead."""
        if self._open.pop(ident, None) is None:
            return False, None
        return True, self._told.pop(ident, None)

    def tell(self, ident: Hashable, draw: Draw, outcome: Outcome) -> bool:
        """Keep the outcome of a draw asked ahead (True), or list it as spent ahead if it was spent
        while running (True); False for a draw the book does not hold (the strategy's own)."""
        if ident in self._open:
            self._told[ident] = outcome
            return True
        if draw.key in self._spent_running:
            self._spent_running.discard(draw.key)
            self.spent_keys.append(draw.key)
            return True
        return False

    def spend(self, keep: Callable[[Hashable], bool] | None = None) -> None:
        """Spend the open draws for which ``keep(ident)`` is false (all of them without ``keep``):
        the decision will not use them."""
        for ident in [i for i in self._open if keep is None or not keep(i)]:
            draw = self._open.pop(ident)
            if ident in self._told:
                del self._told[ident]
                self.spent_keys.append(draw.key)
            else:
                self._spent_running.add(draw.key)
