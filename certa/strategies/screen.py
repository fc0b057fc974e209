"""Screen, then race (issue 33): every candidate on paired rows at small training sizes, the
survivors move up the rungs, and the finalists race at full size with the usual guarantee.

The screen and the race are the same rule: each stage is a :class:`PairedElimination` (paired
delta-correct elimination on rows shared by the stage's candidates) run over that stage's
candidates, and this strategy only chains the stages, maps their draws to the run's candidates and
keeps the workers busy between stages. What is claimed is the race's confidence among the
finalists; what the screen dropped is not claimed (its miss rate is measured, ``docs/adaptive.md``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.draws import Draw, Outcome, derive_seed, row_seed
from ..engine.strategy import Strategy
from ._glr import check_tolerance
from ._guarantee import _fmt_conf, certified_text, fmt_tolerance, guarantee_text, states_certified
from ._validation import check_confidence, check_int
from .paired import AHEAD, PENDING, PairedElimination

__all__ = ["ScreenThenRace", "rung_counts", "rung_rows", "rung_seed", "screen_caption", "screen_sizes"]

#: First spawn-key element of a rung's seed (the race's rows use :data:`certa.engine.draws.ROW_SEED_KEY`).
SCREEN_KEY = 2**31 - 5
#: Default rung schedule: each rung trains on ``1 / FACTOR`` of the next one's data and keeps at most
#: ``1 / FACTOR`` of its candidates (HalvingGridSearchCV's factor); each rung has at most ``ROWS``
#: rows: the paired rule rules nothing out before its 6th row (the first ranks the rivals), except
#: the lower third of the first row, which the early exit lets leave from row 4.
FACTOR = 3
ROWS = 10
#: A rung of ``n`` candidates has ``ceil(RUNG_BUDGET / n)`` rows (at least ``MIN_ROWS``, at most
#: ``ROWS``): with many candidates the first rung's rows shrink, so a rung costs about ``RUNG_BUDGET``
#: evaluations at its size however many candidates it starts with (docs/screen.md); ``RUNG_BUDGET``
#: or more candidates get one row (a rung of fewer than 6 rows keeps its top third by mean).
RUNG_BUDGET = 96
MIN_ROWS = 1
#: At least this many candidates leave each rung (and reach the race).
MIN_FINALISTS = 2
#: No rung trains on fewer examples than this.
MIN_SIZE = 20


def rung_seed(root: int, rung: int) -> int:
    """Seed of rung ``rung``'s rows: its row ``r`` is split and seeded by ``row_seed(rung_seed(root, rung), r)``.

    Examples
    --------
    >>> rung_seed(0, 1) != rung_seed(0, 2)
    True
    """
    return derive_seed(root, SCREEN_KEY, int(rung))


def screen_sizes(n_candidates: int, n_train: int, *, factor: int = FACTOR, min_finalists: int = MIN_FINALISTS,
                 min_size: int = MIN_SIZE, budget: int | None = RUNG_BUDGET) -> list[int]:
    """The rungs' training sizes: ``n_train / factor^m, ..., n_train / factor`` (rounded).

    ``m`` is the largest number of rungs after which at least ``min_finalists`` candidates would
    be left if each rung kept ``1 / factor`` of its candidates (``n_candidates / factor^m >=
    min_finalists``); rungs below ``min_size`` examples are left out. With ``budget`` candidates or
    more the first rung has one row (:func:`rung_rows`), and one row of models trained on
    the smallest size ranks the best too noisily (docs/screen.md: on the lemma grid, 1/81 of the
    data dropped the true best in 2 of 20 runs, 1/27 in none): the smallest size is then left
    out too, so the one row trains on ``factor`` times as many examples (and the race gets
    ``factor`` times as many finalists). Empty: no screen.

    Examples
    --------
    >>> screen_sizes(64, 3200)            # 64 -> 22 -> 8 -> 3 finalists
    [119, 356, 1067]
    >>> screen_sizes(100, 1200)           # 1200 / 81 < 20 is left out; 100 > 96: so is 1200 / 27
    [133, 400]
    >>> screen_sizes(250, 4800)           # 250 -> 84 -> 28 -> 10 finalists, the first rung (one row) at 1/27
    [178, 533, 1600]
    >>> screen_sizes(4, 3200)
    []
    """
    k = check_int("n_candidates", n_candidates, 1)
    n = check_int("n_train", n_train, 1)
    factor = check_int("factor", factor, 2)
    m = 0
    while k / factor ** (m + 1) >= min_finalists:
        m += 1
    sizes = [int(round(n / factor ** j)) for j in range(m, 0, -1)]
    sizes = [s for s in sizes if min_size <= s < n]
    if budget is not None and len(sizes) > 1 and rung_rows(k, budget=budget) < 2:
        sizes = sizes[1:]     # a one-row first rung trains on the next size, not the smallest
    return sizes


def rung_rows(n_candidates: int, *, budget: int | None = RUNG_BUDGET, rows: int = ROWS,
              min_rows: int = MIN_ROWS) -> int:
    """The rows of a rung of ``n_candidates``: ``ceil(budget / n_candidates)``, at least ``min_rows``
    and at most ``rows`` (``budget=None``: always ``rows``).

    Examples
    --------
    >>> [rung_rows(n) for n in (250, 97, 96, 84, 64, 28, 22, 8)]
    [1, 1, 1, 2, 2, 4, 5, 10]
    """
    if budget is None:
        return rows
    return int(min(rows, max(min_rows, math.ceil(budget / max(n_candidates, 1)))))


def rung_counts(n_candidates: int, n_rungs: int, *, factor: int = FACTOR, min_finalists: int = MIN_FINALISTS) -> list[int]:
    """The most candidates each rung can hold, and then the most finalists (``n_rungs + 1`` numbers):
    each rung passes on at most ``ceil(n / factor)``, at least ``min_finalists``.

    Examples
    --------
    >>> rung_counts(250, 4)
    [250, 84, 28, 10, 4]
    """
    out = [int(n_candidates)]
    for _ in range(n_rungs):
        out.append(max(min_finalists, math.ceil(out[-1] / factor)))
    return out


def _fraction(size: int, n_train: int | None) -> str:
    """``size`` as a fraction of ``n_train`` in words ("1/9"), or as a count without ``n_train``."""
    if not n_train:
        return f"{size} examples"
    ratio = n_train / size
    r = round(ratio)
    return f"1/{r}" if r >= 2 and abs(ratio - r) < 0.02 * ratio else f"{size / n_train:.3g}"


def screen_caption(sizes: list[int], n_train: int | None) -> str:
    """The rungs' sizes in words, e.g. "1/27, 1/9 and 1/3 of the training data"."""
    parts = [_fraction(s, n_train) for s in sizes]
    text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{text} of the training data" if n_train else f"training subsets of {text}"


class ScreenThenRace(Strategy):
    """Paired elimination on growing training sizes (the screen), then the paired race among the
    finalists at full size.

    Rung ``k`` trains every candidate left on ``sizes[k]`` examples; row ``r`` of the rung is one
    random split and model seed shared by the rung's candidates (draw ``"subset"``, index ``(k, r)``,
    seed ``row_seed(rung_seed(root, k), r)``: fresh rows at every rung, none shared with the race).
    Within the rung the paired delta-correct rule (:class:`PairedElimination` at ``screen_confidence``)
    eliminates the candidates its paired differences rule out, row by row, for at most
    :func:`rung_rows` rows: ``ceil(rung_budget / n)`` for a rung of ``n`` candidates, between 1 and
    ``rows`` (it stops sooner when one candidate is left). The rung then passes on the candidates not ruled
    out, **at most** ``ceil(n / factor)`` of them (``n`` the rung's candidates; the cost bound: a rung
    costs fewer than ``rung_budget + n`` evaluations at its size, however close the candidates
    are), those with the highest mean on the rung's rows, and **at least** ``min_finalists`` (the highest means,
    eliminated or not). A rung reached with ``min_finalists`` candidates or fewer is skipped. The
    candidates left after the last rung are the *finalists*: :class:`PairedElimination` at
    ``confidence`` (and ``tolerance``, ``max_evals``) races them on full-size rows (draws ``"split"``,
    the rows of a plain paired run), and its guarantee, among the finalists, is the run's.

    Rows ahead (``n_workers``): each stage asks ahead within its rows as :class:`PairedElimination`
    does, and once a rung has asked all its rows, the next stage's first rows are asked for the
    candidates that lead so far, so no worker idles while a rung waits for its slowest evaluation.
    Decisions use only each stage's own rows, in order, so the finalists, the choice and the
    confidence are the same for any number of workers; draws asked ahead for a candidate that did
    not move up are spent ahead (kept in the store, out of the selection).

    Parameters
    ----------
    confidence : float in (0, 1)
        The race's confidence among the finalists.
    sizes : list of int
        The rungs' training sizes, increasing (e.g. :func:`screen_sizes`); empty: no screen.
    n_train : int or None
        The full training size (the race's), to state the rungs as fractions.
    factor : int >= 2, default 3
    rows : int >= 2, default 10
        Rows per rung at most.
    rung_budget : int >= 1 or None, default 96
        A rung of ``n`` candidates has ``ceil(rung_budget / n)`` rows (at least 1, at most ``rows``);
        ``None``: every rung has ``rows`` rows.
    screen_confidence : float or None
        The rungs' elimination confidence (default: ``confidence``).
    min_finalists : int >= 2, default 2
    tolerance, max_evals
        The race's (:class:`PairedElimination`); ``max_evals`` caps the race's evaluations only.
    race_budget : int >= 1 or None
        The best for a budget: the race runs for the best (its confidence and ``tolerance``) until its
        decisions have used ``race_budget`` evaluations (:class:`PairedElimination`'s ``budget``: the
        same stop for any number of workers), and a race that ends there (``stop_reason="budget"``)
        states the tolerance it has certified instead (``result()["certified_tolerance"]``: the
        choice is within it of the best finalist with ``confidence``; :mod:`certa.strategies._paired`,
        "The certified tolerance"). The fronts' default on a screened run (docs/screen.md).

    Examples
    --------
    >>> from certa.engine.evaluators import FunctionEvaluator
    >>> from certa.engine.runner import run
    >>> def score(params, seed):   # simulated: the size is not used here
    ...     return params["m"] + np.random.default_rng(seed).normal(0, 0.05)
    >>> sel = run(ScreenThenRace(0.95, [20, 60], n_train=180), FunctionEvaluator(score),
    ...           [{"m": m / 10} for m in range(9)], random_state=0, progress=False)
    >>> sel.best.params, sel.result["finalists"]
    ({'m': 0.8}, [7, 8])
    """

    max_pending = 1 << 20
    asks_ahead = True
    #: Its evaluations mix training sizes (the fronts' near-tie warning, which reads them as one race, is off).
    screens = True

    def __init__(self, confidence: float, sizes: list[int], *, n_train: int | None = None, factor: int = FACTOR,
                 rows: int = ROWS, screen_confidence: float | None = None, min_finalists: int = MIN_FINALISTS,
                 tolerance: float = 0.0, max_evals: int | None = None, rung_budget: int | None = RUNG_BUDGET,
                 race_budget: int | None = None) -> None:
        self.confidence = check_confidence(confidence)
        if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
            raise TypeError(f"sizes must be a list of training sizes (ints), got {type(sizes).__name__}")
        self.sizes = [check_int("sizes[i]", s, 1) for s in sizes]
        if any(b <= a for a, b in zip(self.sizes, self.sizes[1:])):
            raise ValueError(f"sizes must increase, got {self.sizes}")
        self.n_train = None if n_train is None else check_int("n_train", n_train, 1)
        if self.n_train is not None and self.sizes and self.sizes[-1] >= self.n_train:
            raise ValueError(f"every rung must train on fewer than n_train={self.n_train} examples, got sizes {self.sizes}")
        self.factor = check_int("factor", factor, 2)
        self.rows = check_int("rows", rows, 2)
        self.rung_budget = None if rung_budget is None else check_int("rung_budget", rung_budget, 1)
        self.screen_confidence = self.confidence if screen_confidence is None else check_confidence(screen_confidence)
        self.min_finalists = check_int("min_finalists", min_finalists, 2)
        self.tolerance = check_tolerance(tolerance)
        self.max_evals = None if max_evals is None else check_int("max_evals", max_evals, 1)
        self.race_budget = None if race_budget is None else check_int("race_budget", race_budget, 1)
        self.paired = True
        self.stopping = "paired"

    def spec(self) -> dict[str, Any]:
        spec = super().spec()
        if self.race_budget is None:   # a run without a race budget keeps the identity it had before it
            spec.pop("race_budget")
        return spec

    # -- stages ------------------------------------------------------------------------------
    def _start(self) -> None:
        if self.n_candidates < 2:
            raise ValueError("a fixed-confidence selection needs at least two candidates")
        self._stage = 0                          # rung index; len(self.sizes) is the race
        self._rungs: list[dict[str, Any]] = []   # what each rung did
        self._asked: dict[str, int] = {}         # outer key -> stage it was asked for
        self._told: dict[str, Outcome] = {}      # told, not yet asked by its stage's inner strategy
        self._waiting: dict[str, Draw] = {}      # outer key -> the current inner strategy's draw
        self._outer_of: dict[str, str] = {}      # the current inner strategy's keys -> outer keys
        self._spent: list[str] = []
        self._orphans: set[str] = set()          # asked by a closed stage's inner strategy, not yet told
        self._used = np.zeros(self.n_candidates, dtype=int)
        self._means = np.full(self.n_candidates, np.nan)    # mean at the last stage each candidate was in
        self._size_of = np.full(self.n_candidates, -1)      # its training size there (-1: full, the race)
        self._pending = 0
        self._finished = False
        self._finalists: list[int] | None = None
        self._race_result: dict[str, Any] | None = None
        self._open(list(range(self.n_candidates)))

    def _next_stage(self, n_members: int, stage: int) -> int:
        """The stage that ``n_members`` candidates moving to ``stage`` open: a rung, or the race
        (rungs are skipped once ``min_finalists`` or fewer are left)."""
        return stage if stage < len(self.sizes) and n_members > self.min_finalists else len(self.sizes)

    def _open(self, members: list[int]) -> None:
        members = sorted(c for c in members if c not in self._dropped)
        self._stage = self._next_stage(len(members), self._stage)
        self._members = members
        self._waiting, self._outer_of = {}, {}
        if self._stage == len(self.sizes):
            self._finalists = list(members)
            if len(members) < 2:
                self._finished = True
                self._inner = None
                return
            self._inner = PairedElimination(self.confidence, tolerance=self.tolerance, max_evals=self.max_evals,
                                            budget=self.race_budget)
            seed = self.seed
        else:
            self._rows = rung_rows(len(members), budget=self.rung_budget, rows=self.rows)
            self._inner = PairedElimination(self.screen_confidence, max_rows=self._rows)
            seed = rung_seed(self.seed, self._stage)
        self._inner.set_workers(self.n_workers)
        self._inner.start(len(members), seed)

    def _outer(self, d: Draw) -> Draw:
        c = self._members[d.candidate]
        if self._stage == len(self.sizes):
            return Draw(c, "split", d.index, seed=d.seed)
        return Draw(c, "subset", (self._stage, d.index[0]), seed=d.seed, size=self.sizes[self._stage])

    def _kept(self, final: bool) -> list[int]:
        """The candidates the current rung passes on (``final=False``: a guess while it runs)."""
        inner = self._inner
        means = inner._table.means()
        order = sorted(range(len(self._members)),
                       key=lambda f: (-(means[f] if np.isfinite(means[f]) else -np.inf), f))
        order = [f for f in order if self._members[f] not in self._dropped]
        live = set(inner._survivors())
        cap = self._cap(len(self._members))
        keep = [f for f in order if f in live][:cap]
        for f in order:   # at least min_finalists: the highest means, ruled out or not
            if len(keep) >= self.min_finalists:
                break
            if f not in keep:
                keep.append(f)
        return sorted(self._members[f] for f in keep)

    def _cap(self, n: int) -> int:
        """The most candidates a rung of ``n`` passes on."""
        return max(self.min_finalists, math.ceil(n / self.factor))

    def _close_if_done(self) -> None:
        while not self._finished and self._inner is not None and (self._inner.finished or self._ruled_out_enough()):
            if not self._inner.finished:
                self._inner.stop("ruled out enough")
            inner, members = self._inner, self._members
            self._spent += [self._outer_of[k] for k in inner.spent_ahead() if k in self._outer_of]
            self._orphans.update(self._waiting)
            self._waiting = {}
            res = inner.result()
            for f, c in enumerate(members):
                self._used[c] += int(res["evaluations"][f])
                self._means[c] = res["estimates"][f]
                self._size_of[c] = self.sizes[self._stage] if self._stage < len(self.sizes) else -1
            if self._stage == len(self.sizes):
                self._race_result = res
                self._finished = True
                self._release_told()
                return
            kept = self._kept(final=True)
            ruled_out = sorted(members[f] for f in res["eliminated"])
            self._rungs.append({"rung": self._stage, "size": self.sizes[self._stage], "candidates": list(members),
                                "rows": int(res["rows"]), "max_rows": int(self._rows), "ruled_out": ruled_out,
                                "kept": kept})
            self._stage += 1
            self._open(kept)
            self._release_told()

    def _ruled_out_enough(self) -> bool:
        """A rung ends as soon as its paired rule leaves no more than the rung passes on."""
        return self._stage < len(self.sizes) and len(self._inner._survivors()) <= self._cap(len(self._members))

    def _release_told(self) -> None:
        """Outcomes asked ahead for a stage now past (or after the end) are spent ahead."""
        for key in [k for k in self._told if self._finished or self._asked[k] < self._stage]:
            del self._told[key]
            self._spent.append(key)

    # -- ask / tell --------------------------------------------------------------------------
    def ask(self) -> Draw | None:
        while not self._finished:
            d = self._inner.ask()
            if d is None:
                return self._ask_ahead()
            o = self._outer(d)
            key = o.key
            self._outer_of[d.key] = key
            if key in self._told:                 # asked ahead and already told: the stage uses it now
                self._inner.tell(d, self._told.pop(key))
                self._close_if_done()
                continue
            self._waiting[key] = d
            if key in self._asked:                # asked ahead, still running
                continue
            self._asked[key] = self._stage
            self._pending += 1
            return o
        return None

    def _ask_ahead(self) -> Draw | None:
        """Once a rung has asked all its rows, the next stage's first rows for its likely members."""
        w = self.n_workers
        if w <= 1 or self._stage >= len(self.sizes) or self._pending >= PENDING * w:
            return None
        if (self._rows - 1) not in self._inner._asked_rows:
            return None
        guess = [c for c in self._kept(final=False) if c not in self._dropped]
        stage = self._next_stage(len(guess), self._stage + 1)
        if stage == len(self.sizes):
            seed, kind, size = self.seed, "split", None
        else:
            seed, kind, size = rung_seed(self.seed, stage), "subset", self.sizes[stage]
        for row in range(-(-AHEAD * w // max(len(guess), 1))):
            for c in guess:
                index = (row,) if kind == "split" else (stage, row)
                d = Draw(c, kind, index, seed=row_seed(seed, row), size=size)
                if d.key not in self._asked:
                    self._asked[d.key] = stage
                    self._pending += 1
                    return d
        return None

    def tell(self, draw: Draw, outcome: Outcome) -> None:
        self._pending -= 1
        key = draw.key
        if key in self._waiting:
            self._inner.tell(self._waiting.pop(key), outcome)
            self._close_if_done()
        elif key in self._orphans or self._finished or self._asked.get(key, -1) < self._stage:
            self._orphans.discard(key)
            self._spent.append(key)
        else:
            self._told[key] = outcome

    def _drop(self, candidate: int) -> None:
        if self._finished or candidate not in self._members:
            return
        self._inner.drop(self._members.index(candidate), self._dropped[candidate])
        self._close_if_done()

    def spent_ahead(self) -> list[str]:
        """Keys of the draws told but not used: asked ahead for a candidate that did not move up, or
        for rows past a stage's end (kept in the store, not in the selection)."""
        out = list(self._spent)
        if not self._finished and self._inner is not None:
            out += [self._outer_of[k] for k in self._inner.spent_ahead() if k in self._outer_of]
        return out

    @property
    def finished(self) -> bool:
        return self._finished

    # -- result ------------------------------------------------------------------------------
    def result(self) -> dict[str, Any]:
        """The race's choice among the finalists and its confidence, with what the screen did."""
        in_race = self._stage == len(self.sizes)
        means, used = self._means.copy(), self._used.copy()
        inner_res = self._race_result if self._race_result is not None else (
            self._inner.result() if self._inner is not None and (self._inner._table.score_n.max() > 0) else None)
        if inner_res is not None and not self._finished:   # the stage running: its means so far
            for f, c in enumerate(self._members):
                used[c] = self._used[c] + int(inner_res["evaluations"][f])
                if np.isfinite(inner_res["estimates"][f]):
                    means[c] = inner_res["estimates"][f]
        if self._inner is None:      # one finalist left (the others dropped)
            best, conf = (self._members[0] if self._members else 0), 1.0
        elif inner_res is not None:
            best = self._members[int(inner_res["best"])]
            conf = float(inner_res["confidence"]) if in_race else float("nan")
        else:
            best, conf = self._members[0], float("nan")
        rungs = [dict(r) for r in self._rungs]
        finalists = list(self._finalists) if self._finalists is not None else None
        stop = inner_res["stop_reason"] if (in_race and inner_res is not None) else (
            "every other candidate dropped" if self._inner is None else "not stopped")
        certified = (float(inner_res.get("certified_tolerance", math.inf)) if (in_race and inner_res is not None)
                     else 0.0 if self._inner is None else math.inf)
        out = {"best": int(best), "estimates": means, "confidence": conf, "target_confidence": self.confidence,
               "tolerance": self.tolerance, "target_reached": in_race and stop == "confident",
               "evaluations": used, "stop_reason": stop, "stopping": "paired",
               "finalists": finalists, "rungs": rungs, "sizes": list(self.sizes), "n_train": self.n_train,
               "size_of_estimate": self._size_of.copy(),
               "evaluations_ahead": int(len(self.spent_ahead())),
               "certified_tolerance": certified, "race_budget": self.race_budget,
               "guarantee": self.guarantee(conf, finalists, rungs, certified=certified if self._finished and
                                           states_certified(stop, certified, conf, self.confidence) else None)}
        if in_race and inner_res is not None:
            out["eliminated"] = {int(self._members[f]): int(r) for f, r in inner_res["eliminated"].items()}
            out["rows"] = inner_res["rows"]
            out["confidence_history"] = inner_res["confidence_history"]
        return out

    def guarantee(self, conf: float, finalists: list[int] | None, rungs: list[dict[str, Any]], *,
                  certified: float | None = None) -> str:
        """The claim in words: the race's confidence among the finalists, and where they were chosen;
        with ``certified`` (a race that stopped before its target, :func:`states_certified`), the
        tolerance it certified."""
        if finalists is None:
            done = ", ".join(f"{_fraction(r['size'], self.n_train)}: {len(r['kept'])} of {len(r['candidates'])} kept"
                             for r in rungs)
            return f"screening, no race yet ({done or 'first rung'}): no confidence yet"
        if not np.isfinite(conf):
            return f"{len(finalists)} finalists, racing: no confidence yet"
        text = guarantee_text(conf, self.tolerance, "paired")
        what = "the best" if self.tolerance == 0 else f"within {self.tolerance:g} of the best"
        claim = (f"{what} of the {len(finalists)} finalists at full size with confidence {_fmt_conf(conf)}"
                 f"{text[text.index(' ('):] if ' (' in text else ''}")
        if certified is not None:
            text = certified_text(self.confidence, certified, conf)
            claim = (f"within {fmt_tolerance(certified)} of the best of the {len(finalists)} finalists at full size"
                     f" with confidence {_fmt_conf(self.confidence)}{text[text.index(' ('):]}")
        if not rungs:
            return claim + f"; no screen: every one of the {self.n_candidates} candidates reached the race"
        return (claim + f"; finalists chosen from {self.n_candidates} candidates on "
                f"{screen_caption([r['size'] for r in rungs], self.n_train)} (the screen's miss rate is "
                "measured, not claimed: docs/adaptive.md)")
