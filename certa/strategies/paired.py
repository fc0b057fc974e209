"""Fixed-confidence selection on paired rows: every survivor on every row, eliminated by the
paired delta-correct rule (:mod:`._paired`)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.draws import Draw, Outcome, split_draw
from ..engine.strategy import Strategy
from ._glr import check_tolerance
from ._guarantee import certified_text, states_certified
from ._paired import (
    CONTRAST_ROWS,
    DIFF_VAR_FLOOR,
    PairTable,
    certified_tolerances,
    contrast_mixture,
    contrast_partners,
    first_row_positions,
    paired_confidence,
    paired_offsets,
    paired_threshold,
    rival_weights,
    score_variance,
)
from ._validation import check_confidence, check_int

#: Rows ahead: at most ``ceil(AHEAD * n_workers / survivors)`` rows beyond the one being decided,
#: and at most ``PENDING * n_workers`` draws asked and not yet told. ``AHEAD = 1`` would fill the
#: workers once; 2 (and 3 for the pending) lets them go on while a row waits for an evaluation
#: two to three times slower than the others (the virtual clock, TDSA-like rows, lognormal times
#: of SD half the mean: 8 workers busy 83 % with 1 and 2, 98 % with 2 and 3; see docs/adaptive.md).
AHEAD = 2
PENDING = 3
#: The upper end of the certified tolerance's search: the pair's mean difference plus this many SDs of
#: its differences (with the rule's own variance floor, ``DIFF_VAR_FLOOR``).
CERTIFY_SDS = 50.0
#: ``stop_reason`` of a paired run that used every row its splitter has (``max_rows``).
OUT_OF_SPLITS = "out of splits"


class PairedElimination(Strategy):
    """Evaluate every surviving candidate on each row (one split and seed per row), eliminate
    a candidate once the paired differences rule it out, stop when one survives.

    Row ``r`` is one split and model seed shared by every candidate evaluated on it (common
    random numbers, :func:`certa.engine.draws.split_draw` with ``paired=True``), so two
    candidates compare through ``d = x_i - x_j`` on the rows both were scored on. The first row
    ranks each candidate's rivals by their score on it; a candidate is eliminated when, on the
    rows after the first, some rival's one-sided e-process on those differences passes
    ``log(1 / (w_r delta))``, ``w_r = r^-2 / sum_{s<K} s^-2`` for the rival ranked ``r`` (with
    eight candidates 3.41 nats for the first-ranked rival at delta 0.05, 4.80 for the second; with
    two candidates: one pair on all rows, ``log(1 / delta)``). The contrast against a candidate in
    the lower third of the first row mixes in a low prior precision (the early exit: a candidate far
    behind can leave at its 4th row instead of its 6th, :mod:`certa.strategies._paired`). The choice is wrong with
    probability at most ``delta = 1 - confidence`` for jointly Gaussian scores, whatever their
    correlation (:mod:`certa.strategies._paired`).

    Rows ahead: a row's evaluations are asked together and, when they leave workers idle
    (``n_workers``, which the runner sets from the executor: ``n_jobs``, the threads of a Dask
    cluster's workers, Ray's CPUs or a ``concurrent.futures`` executor's ``max_workers``), the
    evaluations of the next rows are asked for the current survivors: up to
    ``ceil(2 * n_workers / survivors)`` rows beyond the one being decided and at most
    ``3 * n_workers`` asked and not yet told, so every worker has an evaluation while a row's
    slowest one finishes. Rows are still decided in order, each on the scores of its members
    (:meth:`_row_members`: the survivors once the rows before it are decided), whatever was asked
    ahead; a member not asked ahead is asked then. So the choice, the confidence, the stopping
    row and the eliminations are the same for any number of workers and any completion order
    (one exception: a candidate whose evaluations keep failing is dropped after ``max_failures``
    failures told in a row, its failures on rows ahead included, so it may be dropped a few rows
    sooner with more workers). Evaluations asked ahead that the decision does not use (a row
    past the stopping row, a candidate eliminated before its row) are *spent ahead*: counted in
    ``result()["evaluations_ahead"]`` (every evaluation asked and not used), kept in the store
    when they finished before the run returned (the run does not wait for those still running;
    a resumed run asking the same draw reuses it) and left out of the selection's evaluations. The look-ahead bound keeps that
    waste below ``3 * n_workers`` per elimination or stop: with 8 workers and 8 survivors, two
    rows ahead; with 2 survivors, 8 rows.

    Parameters
    ----------
    confidence : float in (0, 1)
        1 - delta.
    tolerance : float >= 0, default 0
        Epsilon-best identification: stop once a survivor is shown within ``tolerance`` of
        the best.
    max_evals : int or None
        A hard cap on the evaluations spent, those asked ahead included (they are real cost):
        nothing is asked past it, and the rows whose evaluations were all asked ahead are still
        decided (the choice is then the survivor with the highest mean). With a cap that binds,
        a run with more workers may stop a row or two earlier (its evaluations spent ahead used
        part of the cap); a run that stops by confidence does not depend on the workers.
    budget : int or None
        The best for a budget: rows are decided while the evaluations the decisions use fit in
        ``budget`` (the last row may hold only its first members, by index); the run then stops
        with ``stop_reason="budget"`` and states the tolerance it has certified
        (``result()["certified_tolerance"]``, :meth:`certified_tolerance`). Unlike ``max_evals``
        it counts only the evaluations the decisions use, so where it stops, the choice and the
        certified tolerance do not depend on the workers; evaluations asked ahead past it are
        spent ahead (at most about ``3 * n_workers``).
    max_rows : int or None
        The number of rows there are (e.g. the splits of a scikit-learn ``cv`` splitter,
        :class:`certa.engine.plans.RowSplitsPlan`): nothing is asked past them, and a run that
        has used them all without reaching its confidence stops with
        ``stop_reason="out of splits"`` (the choice is then the survivor with the highest mean,
        with the confidence reached).

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

    def __init__(self, confidence: float, *, tolerance: float = 0.0, max_evals: int | None = None,
                 max_rows: int | None = None, budget: int | None = None) -> None:
        self.confidence = check_confidence(confidence)
        self.tolerance = check_tolerance(tolerance)
        self.max_evals = None if max_evals is None else check_int("max_evals", max_evals, 1)
        self.budget = None if budget is None else check_int("budget", budget, 1)
        self.max_rows = None if max_rows is None else check_int("max_rows", max_rows, 1)
        self.paired = True
        self.stopping = "paired"

    #: Asks are bounded by the row and the rows ahead (see above), not by this.
    max_pending = 1 << 20
    #: Asks ahead of its decisions to keep ``n_workers`` busy: the runner runs at most
    #: ``n_workers`` at once, tells what finished before asking more, and at the stop records what
    #: finished (without waiting for the rest), see :func:`certa.engine.runner.run`.
    asks_ahead = True

    def _start(self) -> None:
        if self.n_candidates < 2:
            raise ValueError("a fixed-confidence selection needs at least two candidates")
        k = self.n_candidates
        self._limit = paired_threshold(1.0 - self.confidence, k)
        self._offset, self._contrast_offset = paired_offsets(k)
        self._table = PairTable(k)
        self._contrast = PairTable(k)                  # the rows after the first CONTRAST_ROWS
        self._partner: np.ndarray | None = None        # each candidate's first-ranked rival, once fixed
        self._log_w: np.ndarray | None = None          # log of the contrast's share of delta on (k, j), once fixed
        self._mix: Any = None                          # the contrast's mixture per pair (contrast_mixture), once fixed
        self._run_c0 = np.full((k, k), -np.inf)       # running max of the contrast C_kj(0)
        self._run_c_eps = np.full((k, k), -np.inf)    # running max of C_kj(tolerance)
        self._run_max0 = np.full((k, k), -np.inf)     # running max of W_kj(0)
        self._run_max_eps = np.full((k, k), -np.inf)  # running max of W_kj(tolerance)
        self._eliminated: dict[int, int] = {}          # candidate -> row after which it left
        self._row = 0                                  # the row being decided (rows before it are closed)
        self._members: list[int] = []                  # the candidates row self._row uses
        self._asked_rows: dict[int, set[int]] = {}     # row -> candidates asked on it (used or ahead)
        self._got: dict[int, dict[int, Outcome]] = {}  # row -> candidate -> outcome told, not yet used
        self._pending = 0                              # asked, not yet told
        self._n_asked = 0                              # every evaluation asked (used and ahead)
        self._ahead_keys: list[str] = []               # told, not used
        self._asked = np.zeros(k, dtype=int)           # used by the decision
        self._failed = np.zeros(k, dtype=int)
        self._scores: list[list[float]] = [[] for _ in range(k)]
        self._stopped = False
        self._stop_reason = ""
        self._best = 0
        self._history: list[float] = []
        self._open_row()

    # -- rows ----------------------------------------------------------------------------
    def _survivors(self) -> list[int]:
        return [c for c in self._alive() if c not in self._eliminated]

    def _row_members(self, row: int) -> list[int]:
        """The candidates evaluated on ``row``, given the rows before it decided (the survivors).

        The one place that says which candidates a row holds: a row's scores are those of these
        members, whatever was asked ahead; called when the row opens and, with the state so far,
        to guess the members of the rows asked ahead."""
        return self._survivors()

    def _open_row(self) -> None:
        """Fix the members of row ``self._row`` (the rows before it are closed)."""
        members = self._row_members(self._row)
        if self.budget is not None:      # the budget counts the evaluations decisions used: not the workers'
            members = members[:max(self.budget - int(self._asked.sum()), 0)]
        if self.max_evals is not None:   # the cap counts every evaluation spent, ahead included
            asked = self._asked_rows.get(self._row, set())
            room = max(self.max_evals - self._n_asked, 0)
            members = [c for c in members if c in asked] + [c for c in members if c not in asked][:room]
            members.sort()
        self._members = members

    def _paid(self, row: int) -> bool:
        """Whether every member ``row`` would have is asked already (ahead): deciding it costs nothing more."""
        asked = self._asked_rows.get(row, set())
        members = self._row_members(row)
        return bool(members) and all(c in asked for c in members)

    def _ahead_rows(self) -> int:
        """Rows beyond the one being decided that may be asked ahead: ``ceil(AHEAD * n_workers /
        survivors)`` (none with one worker)."""
        w = self.n_workers
        if w <= 1:
            return 0
        return -(-AHEAD * w // max(len(self._row_members(self._row + 1)), 1))

    def _ask(self, c: int, row: int) -> Draw:
        self._asked_rows.setdefault(row, set()).add(c)
        self._pending += 1
        self._n_asked += 1
        return split_draw(self.seed, c, row, paired=True)

    def ask(self) -> Draw | None:
        if self._stopped:
            return None
        asked = self._asked_rows.get(self._row, set())
        for c in self._members:   # the row being decided first (its members not asked ahead)
            if c not in asked:
                return self._ask(c, self._row)
        # Rows ahead, for the survivors so far: at most PENDING x n_workers asked and not told (the
        # runner runs n_workers of them; the rest finished, waiting to be told in order).
        if self._pending >= PENDING * self.n_workers or self.n_workers <= 1:
            return None
        if self.max_evals is not None and self._n_asked >= self.max_evals:
            return None
        guess = [c for c in self._row_members(self._row + 1) if c not in self._dropped]
        last = self._row + 1 + self._ahead_rows()
        planned = int(self._asked.sum()) + len(self._members)   # used once the rows up to this one are decided
        for row in range(self._row + 1, last if self.max_rows is None else min(last, self.max_rows)):
            members = guess if self.budget is None else guess[:max(self.budget - planned, 0)]
            if not members:   # past the budget: nothing to ask ahead
                return None
            asked = self._asked_rows.get(row, set())
            for c in members:
                if c not in asked:
                    return self._ask(c, row)
            planned += len(members)
        return None

    def tell(self, draw: Draw, outcome: Outcome) -> None:
        c, row = draw.candidate, int(draw.index[0])
        self._pending -= 1
        if self._stopped or row < self._row:   # past the stopping row, or of a row decided without it
            self._spent_ahead(draw)
            return
        self._got.setdefault(row, {})[c] = outcome
        self._advance()

    def _advance(self) -> None:
        """Close every row whose members are all told, in row order; at the stop, whatever was
        told for later rows is spent ahead."""
        while not self._stopped:
            got = self._got.get(self._row, {})
            if any(m not in got for m in self._members):
                return
            for m in self._members:
                if got[m].ok:
                    self._scores[m].append(float(got[m].score))
                else:
                    self._failed[m] += 1
                self._asked[m] += 1
            self._close_row({m: float(got[m].score) for m in self._members if got[m].ok})
            for m in sorted(self._got.pop(self._row, {})):
                if m not in self._members:   # asked ahead for a candidate that left before this row
                    self._spent_ahead(split_draw(self.seed, m, self._row, paired=True))
            self._row += 1
            if not self._stopped:
                self._open_row()
        for r in sorted(self._got):   # told past the stopping row
            for m in sorted(self._got[r]):
                self._spent_ahead(split_draw(self.seed, m, r, paired=True))
        self._got.clear()

    def _spent_ahead(self, draw: Draw) -> None:
        self._ahead_keys.append(draw.key)

    def spent_ahead(self) -> list[str]:
        """Keys of the draws told but not used by the decision: asked ahead for a row past the
        stopping row, or for a candidate that left before its row (kept in the store, not in the
        selection's evaluations)."""
        return list(self._ahead_keys)

    def _close_row(self, row_scores: dict[int, float]) -> None:
        scores = {c: s for c, s in row_scores.items() if c not in self._dropped}
        self._table.add_row(scores)
        if np.isfinite(self._offset):   # pairs on all rows (two candidates, or a contrast share below 1)
            np.maximum(self._run_max0, self._table.statistics(0.0), out=self._run_max0)
            if self.tolerance > 0:
                np.maximum(self._run_max_eps, self._table.statistics(self.tolerance), out=self._run_max_eps)
            else:
                self._run_max_eps = self._run_max0
        if self._log_w is not None:
            self._contrast.add_row(scores)
            np.maximum(self._run_c0, self._contrast.statistics(0.0, self._mix), out=self._run_c0)
            if self.tolerance > 0:
                np.maximum(self._run_c_eps, self._contrast.statistics(self.tolerance, self._mix), out=self._run_c_eps)
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
        if self._log_w is None and self._row + 1 == CONTRAST_ROWS and np.isfinite(self._contrast_offset):
            means = self._table.means()
            with np.errstate(divide="ignore"):
                self._log_w = np.log(rival_weights(means, surv)) - self._contrast_offset
            self._partner = contrast_partners(means, surv)
            self._mix = contrast_mixture(first_row_positions(means, surv), len(surv))
        self._best = self._leader(surv)
        conf = self._confidence_for(self._best)
        self._history.append(conf)
        if len(surv) == 1 or (self.tolerance > 0 and conf >= self.confidence):
            self._stopped, self._stop_reason = True, "confident"
        elif self.budget is not None and int(self._asked.sum()) >= self.budget:
            self._stopped, self._stop_reason = True, "budget"
        elif self.max_evals is not None and self._n_asked >= self.max_evals and not self._paid(self._row + 1):
            self._stopped, self._stop_reason = True, "max_evals"
        elif self.max_rows is not None and self._row + 1 >= self.max_rows:
            self._stopped, self._stop_reason = True, OUT_OF_SPLITS

    def _contrast_evidence(self, tolerance: bool = False) -> np.ndarray:
        """``C_kj + log(a w_kj)``: the contrast's evidence for "``k`` is better than ``j``" (``[k, j]``;
        ``-inf`` before the weights are fixed)."""
        if self._log_w is None:
            return np.full((self.n_candidates, self.n_candidates), -np.inf)
        return (self._run_c_eps if tolerance else self._run_c0) + self._log_w

    def _against(self) -> np.ndarray:
        """Evidence that each candidate is not the best (pairs and contrast, on the ``log(1/delta)`` scale)."""
        return np.maximum(self._run_max0.max(axis=0) - self._offset, self._contrast_evidence().max(axis=0))

    def _leader(self, among: list[int]) -> int:
        means = self._table.means()
        return max(among, key=lambda c: (means[c] if np.isfinite(means[c]) else -np.inf, -c))

    def _within(self, i: int, tolerance: bool) -> np.ndarray:
        """Running evidence that no rival ``j`` is more than the tolerance (or 0) better than ``i``."""
        run = self._run_max_eps if tolerance else self._run_max0
        return np.maximum(run[i] - self._offset, self._contrast_evidence(tolerance)[i])

    def _evidence(self, i: int) -> np.ndarray:
        """Evidence against each rival ``j`` being better than the recommendation ``i``."""
        ev = np.maximum(self._against(), self._within(i, True))
        ev[i] = np.inf
        ev[list(self._dropped)] = np.inf
        return ev

    def certified_tolerance(self, i: int | None = None) -> float:
        """The smallest tolerance ``eps >= 0`` within which candidate ``i`` (default: the recommendation)
        is shown to be of the best, with the target confidence, on the rows decided so far: its
        evidence against every rival not ruled out passes ``log(1 / delta)`` at ``eps``
        (:mod:`certa.strategies._paired`, "The certified tolerance"). 0 when every rival is ruled out;
        ``inf`` when no tolerance is (too few rows)."""
        i = int(self._best if i is None else i)
        live = self._alive()
        if len(live) < 2 or i not in live:
            return 0.0 if len(live) < 2 else math.inf
        against = self._against()
        rivals = np.array([j for j in live if j != i and j not in self._eliminated and not against[j] > self._limit],
                          dtype=int)
        if rivals.size == 0:
            return 0.0
        t = self._table
        mix = None if self._mix is None else tuple((c, np.asarray(w).reshape(-1)[rivals]) for c, w in self._mix)

        def evidence(eps: np.ndarray) -> np.ndarray:   # the values now, on the evidence scale of _within
            out = np.full(rivals.size, -np.inf)
            if np.isfinite(self._offset):
                out = np.maximum(out, t.pair_statistic(i, rivals, eps) - self._offset)
            if self._log_w is not None:
                out = np.maximum(out, self._contrast.pair_statistic(i, rivals, eps, mix) + self._log_w[i, rivals])
            return out

        sv = score_variance(t.score_n, t.score_s, t.score_ss)
        with np.errstate(invalid="ignore", divide="ignore"):
            n = np.maximum(t.n[i, rivals], 1.0)
            m = t.s[i, rivals] / n
            sd = np.sqrt(np.maximum(t.ss[i, rivals] / n - m * m, DIFF_VAR_FLOOR * 0.5 * (sv[i] + sv[rivals])))
        upper = np.abs(m) + CERTIFY_SDS * np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
        eps = certified_tolerances(evidence, self._limit, upper)
        eps = np.where(self._within(i, True)[rivals] >= self._limit, np.minimum(eps, self.tolerance), eps)
        eps = np.where(self._within(i, False)[rivals] >= self._limit, 0.0, eps)
        return float(eps.max())

    def _confidence_for(self, i: int) -> float:
        live = self._alive()
        if len(live) < 2:
            return 1.0
        return paired_confidence(float(self._evidence(i).min()))

    def stop(self, reason: str) -> None:
        """End the run after the rows decided so far (a caller's own rule, e.g. a screen's rung that
        has ruled out enough); what was told for later rows is spent ahead."""
        if not self._stopped:
            self._stopped, self._stop_reason = True, str(reason)
            self._advance()

    # -- Strategy ------------------------------------------------------------------------
    def spec(self) -> dict[str, Any]:
        spec = super().spec()
        if self.max_rows is None:   # a run without a splitter keeps the identity it had before max_rows
            spec.pop("max_rows")
        if self.budget is None:     # likewise without a budget
            spec.pop("budget")
        return spec

    def _drop(self, candidate: int) -> None:
        if candidate not in self._asked_rows.get(self._row, set()):   # not asked: the row goes on without it
            self._members = [c for c in self._members if c != candidate]
        surv = self._survivors()
        if len(surv) <= 1 and not self._stopped:
            self._stopped = True
            self._stop_reason = "every other candidate dropped" if surv else "all candidates dropped"
            if surv:
                self._best = surv[0]
        self._advance()

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
        certified = self.certified_tolerance() if told_rows >= 1 else math.inf
        text = guarantee_text(conf, self.tolerance, "paired")
        if self._stopped and states_certified(self._stop_reason, certified, conf, self.confidence):
            text = certified_text(self.confidence, certified, conf)
        return {"best": int(self._best), "estimates": means, "confidence": conf,
                "target_confidence": self.confidence, "tolerance": self.tolerance,
                "target_reached": self._stop_reason == "confident", "certified_tolerance": certified,
                "budget": self.budget,
                "guarantee": text,
                "evaluations": self._asked.copy(), "failed": self._failed.copy(),
                "stop_reason": self._stop_reason or "not stopped", "stopping": "paired",
                "rows": int(self._row + (0 if self._stopped or not self._asked_rows.get(self._row) else 1)),
                "evaluations_ahead": int(self._n_asked - self._asked.sum()),
                "partners": None if self._partner is None else self._partner.tolist(), "eliminated": {int(c): int(r) for c, r in self._eliminated.items()},
                "confidence_history": np.array(self._history)}
