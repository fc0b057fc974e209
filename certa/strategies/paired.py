"""Fixed-confidence selection on paired rows: every survivor on every row, eliminated by the
paired delta-correct rule (:mod:`._paired`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.draws import Draw, Outcome, split_draw
from ..engine.strategy import Strategy
from ._glr import check_tolerance
from ._paired import CONTRAST_ROWS, PairTable, contrast_partners, paired_confidence, paired_offsets, paired_threshold
from ._validation import check_confidence, check_int


class PairedElimination(Strategy):
    """Evaluate every surviving candidate on each row (one split and seed per row), eliminate
    a candidate once the paired differences rule it out, stop when one survives.

    Row ``r`` is one split and model seed shared by every candidate evaluated on it (common
    random numbers, :func:`certa.engine.draws.split_draw` with ``paired=True``), so two
    candidates compare through ``d = x_i - x_j`` on the rows both were scored on. A
    candidate is eliminated when some other candidate's one-sided e-process on those
    differences passes ``log((K - 1) / (delta / 2))``, or when, on the rows after the first, its
    contrast with the candidate that led on the first row passes ``log(1 / (delta / 2))`` (with two
    candidates: one pair, ``log(1 / delta)``); the choice is wrong with probability at most
    ``delta = 1 - confidence`` for jointly Gaussian scores, whatever their correlation
    (:mod:`certa.strategies._paired`). A row's evaluations are asked together, so up to as many
    run at once as there are survivors: the workers are used without changing any decision
    (the next row starts once the current one is told, so the run is the same whatever the
    number of workers).

    Parameters
    ----------
    confidence : float in (0, 1)
        1 - delta.
    tolerance : float >= 0, default 0
        Epsilon-best identification: stop once a survivor is shown within ``tolerance`` of
        the best.
    max_evals : int or None
        A hard cap on evaluations (the choice is then the survivor with the highest mean).

    Examples
    --------
    >>> from certa.engine.evaluators import FunctionEvaluator
    >>> from certa.engine.runner import run
    >>> import numpy as np
    >>> def score(params, seed):   # a shared row effect: scores correlate within a row
    ...     rng = np.random.default_rng(seed)
    ...     return params["m"] + rng.normal(0, 1.0) + rng.normal(0, 0.1) * (1 + params["m"])
    >>> sel = run(PairedElimination(0.95), FunctionEvaluator(score), [{"m": 0.0}, {"m": 0.3}],
    ...           random_state=0, progress=False)
    >>> sel.best.params, sel.result["stop_reason"]
    ({'m': 0.3}, 'confident')
    """

    def __init__(self, confidence: float, *, tolerance: float = 0.0, max_evals: int | None = None) -> None:
        self.confidence = check_confidence(confidence)
        self.tolerance = check_tolerance(tolerance)
        self.max_evals = None if max_evals is None else check_int("max_evals", max_evals, 1)
        self.paired = True
        self.stopping = "paired"

    #: Asks are bounded by the row (the survivors): ``ask`` returns None until the row is told.
    max_pending = 1 << 20

    def _start(self) -> None:
        if self.n_candidates < 2:
            raise ValueError("a fixed-confidence selection needs at least two candidates")
        k = self.n_candidates
        self._limit = paired_threshold(1.0 - self.confidence, k)
        self._offset, self._contrast_offset = paired_offsets(k)
        self._table = PairTable(k)
        self._contrast = PairTable(k)                  # the rows after the first CONTRAST_ROWS
        self._partner: np.ndarray | None = None        # each candidate's partner, once fixed
        self._run_c0 = np.full(k, -np.inf)            # running max of the contrast C_j(0)
        self._run_c_eps = np.full(k, -np.inf)         # running max of C_j(tolerance)
        self._run_max0 = np.full((k, k), -np.inf)     # running max of W_kj(0)
        self._run_max_eps = np.full((k, k), -np.inf)  # running max of W_kj(tolerance)
        self._eliminated: dict[int, int] = {}          # candidate -> row after which it left
        self._row = -1
        self._row_queue: list[int] = []
        self._row_pending: set[int] = set()
        self._row_scores: dict[int, float] = {}
        self._asked = np.zeros(k, dtype=int)
        self._failed = np.zeros(k, dtype=int)
        self._scores: list[list[float]] = [[] for _ in range(k)]
        self._stopped = False
        self._stop_reason = ""
        self._best = 0
        self._history: list[float] = []

    # -- rows ----------------------------------------------------------------------------
    def _survivors(self) -> list[int]:
        return [c for c in self._alive() if c not in self._eliminated]

    def ask(self) -> Draw | None:
        if self._stopped:
            return None
        if not self._row_queue and not self._row_pending:   # the last row is told: a new one
            if self.max_evals is not None and int(self._asked.sum()) >= self.max_evals:
                return None
            self._row += 1
            self._row_queue = self._survivors()
            if self.max_evals is not None:
                self._row_queue = self._row_queue[: self.max_evals - int(self._asked.sum())]
            self._row_scores = {}
        if not self._row_queue:
            return None
        c = self._row_queue.pop(0)
        self._row_pending.add(c)
        self._asked[c] += 1
        return split_draw(self.seed, c, self._row, paired=True)

    def tell(self, draw: Draw, outcome: Outcome) -> None:
        c = draw.candidate
        self._row_pending.discard(c)
        if outcome.ok:
            self._scores[c].append(float(outcome.score))
            self._row_scores[c] = float(outcome.score)
        else:
            self._failed[c] += 1
        if self._row_queue or self._row_pending:
            return
        self._close_row()

    def _close_row(self) -> None:
        scores = {c: s for c, s in self._row_scores.items() if c not in self._dropped}
        self._table.add_row(scores)
        w0 = self._table.statistics(0.0)
        np.maximum(self._run_max0, w0, out=self._run_max0)
        if self.tolerance > 0:
            np.maximum(self._run_max_eps, self._table.statistics(self.tolerance), out=self._run_max_eps)
        else:
            self._run_max_eps = self._run_max0
        if self._partner is not None:
            self._contrast.add_row(scores)
            np.maximum(self._run_c0, self._contrast_statistic(0.0), out=self._run_c0)
            if self.tolerance > 0:
                np.maximum(self._run_c_eps, self._contrast_statistic(self.tolerance), out=self._run_c_eps)
            else:
                self._run_c_eps = self._run_c0
        ruled_out = self._against() > self._limit   # by any other candidate, or by the contrast
        for j in self._survivors():
            if ruled_out[j]:
                self._eliminated[j] = self._row
        surv = self._survivors()
        if not surv:   # a cycle of eliminations (practically impossible): keep the highest mean
            surv = [self._leader(self._alive())]
            self._eliminated.pop(surv[0], None)
        if self._partner is None and self._row + 1 == CONTRAST_ROWS and np.isfinite(self._contrast_offset):
            self._partner = contrast_partners(self._table.means(), surv)
        self._best = self._leader(surv)
        conf = self._confidence_for(self._best)
        self._history.append(conf)
        if len(surv) == 1 or (self.tolerance > 0 and conf >= self.confidence):
            self._stopped, self._stop_reason = True, "confident"
        elif self.max_evals is not None and int(self._asked.sum()) >= self.max_evals:
            self._stopped, self._stop_reason = True, "max_evals"

    def _contrast_statistic(self, tolerance: float) -> np.ndarray:
        """``C_j``: the partner's statistic against ``j`` on the contrast's rows (``-inf`` without a partner)."""
        has = self._partner >= 0
        out = np.full(self.n_candidates, -np.inf)
        out[has] = self._contrast.pair_statistic(self._partner[has], np.flatnonzero(has), tolerance)
        return out

    def _against(self) -> np.ndarray:
        """Evidence that each candidate is not the best (pairs and contrast, on the ``log(1/delta)`` scale)."""
        return np.maximum(self._run_max0.max(axis=0) - self._offset, self._run_c0 - self._contrast_offset)

    def _leader(self, among: list[int]) -> int:
        means = self._table.means()
        return max(among, key=lambda c: (means[c] if np.isfinite(means[c]) else -np.inf, -c))

    def _evidence(self, i: int) -> np.ndarray:
        """Evidence against each rival ``j`` being better than the recommendation ``i``."""
        within = self._run_max_eps[i] - self._offset
        if self._partner is not None:
            within = np.maximum(within, np.where(self._partner == i, self._run_c_eps - self._contrast_offset, -np.inf))
        ev = np.maximum(self._against(), within)
        ev[i] = np.inf
        ev[list(self._dropped)] = np.inf
        return ev

    def _confidence_for(self, i: int) -> float:
        live = self._alive()
        if len(live) < 2:
            return 1.0
        return paired_confidence(float(self._evidence(i).min()))

    # -- Strategy ------------------------------------------------------------------------
    def _drop(self, candidate: int) -> None:
        self._row_queue = [c for c in self._row_queue if c != candidate]
        surv = self._survivors()
        if len(surv) <= 1 and not self._stopped:
            self._stopped = True
            self._stop_reason = "every other candidate dropped" if surv else "all candidates dropped"
            if surv:
                self._best = surv[0]

    @property
    def finished(self) -> bool:
        return self._stopped

    def result(self) -> dict[str, Any]:
        """The recommendation and the confidence reached for it, whatever ended the run."""
        from .thompson import guarantee_text

        means = self._table.means()
        surv = self._survivors() or self._alive()
        if not self._stopped and surv:
            self._best = self._leader(surv)
        told_rows = self._table.score_n.max() if self.n_candidates else 0
        conf = self._confidence_for(self._best) if told_rows >= 1 else float("nan")
        return {"best": int(self._best), "estimates": means, "confidence": conf,
                "target_confidence": self.confidence, "tolerance": self.tolerance,
                "target_reached": self._stop_reason == "confident",
                "guarantee": guarantee_text(conf, self.tolerance, "paired"),
                "evaluations": self._asked.copy(), "failed": self._failed.copy(),
                "stop_reason": self._stop_reason or "not stopped", "stopping": "paired",
                "rows": int(self._row + 1),
                "partners": None if self._partner is None else self._partner.tolist(), "eliminated": {int(c): int(r) for c, r in self._eliminated.items()},
                "confidence_history": np.array(self._history)}
