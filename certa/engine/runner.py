"""The runner: the only loop. Asks, evaluates, stores, tells."""
from __future__ import annotations

import os
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from typing import Any

import numpy as np
from joblib import hash as joblib_hash

from .callbacks import Evaluation, RunView, check_callbacks
from .candidates import Candidate, as_candidates, jsonable_params
from .draws import Draw, Outcome
from .evaluators import MISSING_EVALUATOR, Evaluator, execute, execute_shipped
from .executors import (
    DASK_TIMEOUT_POLL,
    EvaluationTimeout,
    InlineExecutor,
    LocalProcessExecutor,
    check_timeout,
    resolve_executor,
)
from .fingerprint import stable_hash
from .progress import Progress
from .scheduling import AskTellLoop, check_max_in_flight, scheduling_limits
from .selection import Selection, note_dropped
from .store import Owner, Store, as_store
from .strategy import Strategy


@dataclass
class _Entry:
    draw: Draw
    attempt: int = 1
    future: Future | None = None
    outcome: Outcome | None = None
    reused: bool = False


def resolve_seed(random_state: int | np.integer | None) -> int:
    """An int seed from ``random_state`` (``None`` draws fresh entropy)."""
    if random_state is None:
        return int(np.random.SeedSequence().entropy % (2**32))
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, (int, np.integer)):
        raise TypeError(f"random_state must be an int or None, got {type(random_state).__name__}")
    if random_state < 0:
        raise ValueError(f"random_state must be non-negative, got {random_state}")
    return int(random_state)


def run_fingerprint_parts(strategy: Strategy, evaluator: Evaluator, candidates: list[Candidate],
                          seed: int) -> dict[str, str]:
    """The parts of a run's identity (each a stable hash), so a refused store can say which differs."""
    parts = {"strategy": stable_hash(strategy.spec()),
             "candidates": stable_hash([(c.name, c.params) for c in candidates]),
             "seed": str(seed)}
    for name, value in evaluator.fingerprint_parts().items():
        parts[name if name not in parts else f"evaluator_{name}"] = str(value)
    return parts


def run_fingerprint(strategy: Strategy, evaluator: Evaluator, candidates: list[Candidate], seed: int) -> str:
    """Identity of a run: what must match for a store to be resumed (stable across processes)."""
    return joblib_hash(sorted(run_fingerprint_parts(strategy, evaluator, candidates, seed).items()))


def describe_run(strategy: Strategy, evaluator: Evaluator, candidates: list[Candidate], seed: int,
                 retries: int = 0, max_failures: int | None = None) -> dict[str, Any]:
    """What a store keeps about its run besides the evaluations (readable by ``certa.load``)."""
    return {"strategy": strategy.spec(), "candidates": [c.name for c in candidates],
            "params": [jsonable_params(c.params) for c in candidates], "seed": seed,
            "evaluator": type(evaluator).__name__, "retries": int(retries),
            "max_failures": None if max_failures is None else int(max_failures)}


#: Default of ``run(max_failures=...)``: a candidate whose evaluations fail this many times in
#: a row (each after its retries) is dropped.
MAX_FAILURES = 5
#: Seconds between looks at the store for draws another process is evaluating.
_POLL = 0.1
_HEALTH_POLL = 1.0  # seconds between checks that a distributed pool still has workers
#: Extra seconds a local worker gets past ``timeout`` (the soft limit, SIGALRM inside the
#: worker) before it is killed (the hard limit).
_HARD_GRACE = 0.1


#: Largest score magnitude a run accepts. The rules square and sum scores (variances, GLR
#: statistics, J-K-fold means): below 1e100 that stays finite for any number of evaluations a
#: run can make; above it a score of 1e308 would overflow to inf or NaN deep inside a rule.
MAX_ABS_SCORE = 1e100


def check_score(score: float, candidate: Candidate, draw: Draw) -> None:
    """Refuse a score too large in magnitude to compare safely, naming the candidate and the draw."""
    if abs(score) > MAX_ABS_SCORE:
        raise ValueError(
            f"candidate {candidate.name!r} returned the score {score!r} (draw {draw.key}), larger in magnitude than "
            f"certa's rules can compare safely (|score| <= {MAX_ABS_SCORE:g}); rescale the scores (e.g. divide them "
            "by a constant, or report an error or a log)")


class EvaluationFailedError(RuntimeError):
    """An evaluation failed for good in a run with ``stop_on_failure=True``.

    Attributes
    ----------
    draw : Draw
    outcome : Outcome
        Its last attempt (``outcome.error`` says why).
    candidate : Candidate
    """

    def __init__(self, draw: Draw, outcome: Outcome, candidate: Candidate) -> None:
        super().__init__(f"the evaluation of candidate {candidate.name!r} (draw {draw.key}) failed after "
                         f"{outcome.attempt} attempt(s): {outcome.error}")
        self.draw, self.outcome, self.candidate = draw, outcome, candidate


class FailedEvaluationsWarning(UserWarning):
    """Failed evaluations could have changed a run's choice (the strategy says how, in ``result["warnings"]``)."""


class DroppedCandidateWarning(FailedEvaluationsWarning):
    """Candidates were dropped (their evaluations kept failing or returned NaN): the choice, and the
    confidence a run states (``result["guarantee"]`` says so), are among the others only."""


class AllEvaluationsFailedError(RuntimeError):
    """Every evaluation of a run failed: there is nothing to choose from."""


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (``KeyboardInterrupt``) before its strategy finished.

    Every finished evaluation is kept: in the store when the run had one (run the same call
    again to resume, or ``certa.load(store)`` to read it without evaluating anything), and in
    ``selection`` in any case.

    Attributes
    ----------
    selection : Selection
        The anytime answer: the strategy's recommendation from the evaluations told so far
        and, for a bandit, the confidence reached for it (``result["confidence"]``,
        ``result["target_reached"]`` is False); ``finished`` is False.
    store : str or None
        Path of the run's SQLite store, if it had one.
    """

    def __init__(self, selection: Selection, store: str | None) -> None:
        where = f"; its evaluations are kept in {store}" if store else ""
        super().__init__(f"run interrupted after {selection.n_evaluations} evaluations{where}")
        self.selection = selection
        self.store = store


def run(strategy: Strategy, evaluator: Evaluator, candidates: Any, *, random_state: int | None = 0,
        n_jobs: int | None = 1, executor: Any = None, store: Store | str | os.PathLike | None = None,
        retries: int = 0, timeout: float | None = None, progress: bool | str = "auto",
        max_in_flight: int | None = None, max_failures: int | None = MAX_FAILURES,
        callbacks: Any = None, stop_on_failure: bool = False) -> Selection:
    """Run a selection: the one loop every certa method goes through.

    Parameters
    ----------
    strategy : Strategy
        Decides which draws to evaluate and when to stop.
    evaluator : Evaluator
        Turns ``(candidate params, draw)`` into a score; runs in the workers.
    candidates : list of Candidate, param grid, list of param dicts, or dict of named models
    random_state : int or None
        Root seed: every seed of the run derives from it.
    n_jobs : int
        Local worker processes (ignored when ``executor`` is given).
    executor : concurrent.futures.Executor, dask.distributed.Client, "ray" or None
    store : path, Store or None
        Where finished evaluations are kept; an existing SQLite file of the
        same run is resumed: finished evaluations are not repeated. Several
        processes may run the same run on one store at once: each draw is
        evaluated by one of them (see ``docs/design.md``).
    retries : int
        Extra attempts for an evaluation that raises, times out, returns a
        non-finite score or whose worker process dies. Every attempt is recorded.
    timeout : float or None
        Seconds allowed per evaluation, a hard limit with the local executor: an
        evaluation still running ``0.1`` s after it (in C code, say) has its worker
        process killed and replaced, and is recorded with status ``"timeout"``. With
        a timeout, ``n_jobs=1`` runs the evaluations in one worker process. On Dask,
        an evaluation past it is recorded as ``"timeout"`` within about 0.25 s and its
        worker restarted (see ``DaskExecutor``). Refused (``ValueError``) with Ray,
        which cannot stop a running task; with
        another ``Executor`` it is enforced with ``SIGALRM`` where the evaluation runs
        in a process's main thread. ``None``: no limit (infinity is refused).
    progress : bool or "auto"
        Show progress on standard error: a bar on a terminal, a line updated in place in a
        Jupyter notebook, plain lines in a log (``True`` only); ``"auto"`` (default): on a
        terminal or in a notebook. A resumed run first says how many recorded evaluations it
        reuses (:mod:`certa.engine.progress`).
    max_in_flight : int or None
        For a fixed plan, how many evaluations may be submitted to the
        executor at once (scikit-learn's ``pre_dispatch``); ``None``: twice
        the number of workers. For a strategy that asks ahead (``Strategy.asks_ahead``,
        the paired default's rows ahead): how many run at once, ``None``: the number of
        workers (the strategy is asked when one is free, once what finished is told).
    max_failures : int or None, default 5
        A candidate whose evaluations fail this many times in a row (each after its
        retries) is dropped: not evaluated again, listed in ``Selection.dropped``, never
        chosen. ``None``: nothing is dropped and failures never end the run (no early
        stop, no ``AllEvaluationsFailedError``): every draw is evaluated and the caller
        decides what failures mean, as the scikit-learn-compatible ``JKFoldSearchCV``
        does with scikit-learn's own "All the N fits failed" (an adaptive strategy still
        ends at its ``max_evals``).
    stop_on_failure : bool, default False
        Stop at the first evaluation that fails for good (after its retries), raising
        :class:`EvaluationFailedError`: no other evaluation is started (with one local job
        none runs after it; evaluations already running on other workers finish and are
        recorded). ``JKFoldSearchCV(error_score="raise")`` uses it, as scikit-learn raises
        at the first failed fit.
    callbacks : Callback, function or list of them, optional
        Told about the run in this process (:mod:`certa.engine.callbacks`): at the start,
        after each evaluation is recorded in the store and told to the strategy (in the
        order told: the same sequence whatever the workers, except that with a strategy that
        asks ahead, the paired default, evaluations asked ahead and then not used are passed
        too, as they are told), and at the end. Evaluations
        reused from the store on resume are passed too, flagged ``reused=True``. They only
        read: the run evaluates and decides the same with or without them.

    Returns
    -------
    Selection

    Raises
    ------
    RunInterrupted
        On Ctrl-C (a ``KeyboardInterrupt`` subclass): ``exc.selection`` is the anytime answer
        from the evaluations finished so far (with a store they are also kept there: call
        again to resume, or read them with ``certa.load(store)``).
    ValueError
        If an evaluation returns a score larger in magnitude than ``MAX_ABS_SCORE`` (1e100),
        naming the candidate: the rules could not compare it safely.
    EvaluationFailedError
        With ``stop_on_failure=True``, at the first evaluation that failed for good.
    AllEvaluationsFailedError
        If every evaluation failed, naming the first failure; raised early when the
        first evaluation of every candidate failed with the same error (not with
        ``max_failures=None``).
    """
    if not isinstance(strategy, Strategy):
        raise TypeError(f"strategy must be a certa Strategy, got {type(strategy).__name__}")
    if not isinstance(evaluator, Evaluator):
        raise TypeError(f"evaluator must be a certa Evaluator, got {type(evaluator).__name__}")
    if not isinstance(retries, (int, np.integer)) or isinstance(retries, bool) or retries < 0:
        raise ValueError(f"retries must be a non-negative int, got {retries!r}")
    timeout = check_timeout(timeout)
    max_in_flight = check_max_in_flight(max_in_flight)
    if max_failures is not None and (isinstance(max_failures, bool) or not isinstance(max_failures, (int, np.integer))
                                     or max_failures < 1):
        raise ValueError(f"max_failures must be a positive int or None, got {max_failures!r}")
    cands = as_candidates(candidates)
    seed = resolve_seed(random_state)
    hooks = check_callbacks(callbacks)
    evaluator.check_candidates(cands)  # bad grid keys or data: refused before any evaluation
    the_run = _Run(strategy, evaluator, cands, seed, store, hooks, n_jobs=n_jobs, executor=executor, retries=retries,
                   timeout=timeout, progress=progress, max_in_flight=max_in_flight, max_failures=max_failures,
                   stop_on_failure=stop_on_failure)
    try:
        the_run.loop()
    except KeyboardInterrupt as exc:
        raise the_run.interrupted() from exc
    except BaseException as exc:
        the_run.ended(None, exc)
        raise
    finally:
        the_run.close()
    return the_run.selection()


class _Run(AskTellLoop):
    """One call of :func:`run`: its state, and the steps of its loop as methods.

    The loop (:meth:`AskTellLoop.loop`) asks the strategy while there is room (:meth:`submit`
    each draw: reuse its stored outcome, or start it here or wait for the process that claimed
    it: :meth:`start_or_wait`), waits for a running evaluation to finish (:meth:`advance`:
    :meth:`wait`, with :meth:`poll_waiting` for draws claimed elsewhere, then :meth:`collect`:
    record what finished, retry failures), and tells the outcomes in the order asked
    (:meth:`tell`, then :meth:`after_tell`: drop a candidate that keeps failing).
    """

    def __init__(self, strategy: Strategy, evaluator: Evaluator, cands: list[Candidate], seed: int, store: Any,
                 hooks: list, *, n_jobs: int | None, executor: Any, retries: int, timeout: float | None,
                 progress: bool | str, max_in_flight: int | None, max_failures: int | None,
                 stop_on_failure: bool) -> None:
        self.strategy, self.cands, self.seed, self.hooks = strategy, cands, seed, hooks
        self.retries, self.timeout, self.max_failures = retries, timeout, max_failures
        self.stop_on_failure = stop_on_failure
        self._open_store(evaluator, store)
        capacity, max_running = self._start_executor(evaluator, executor, n_jobs, max_in_flight)
        super().__init__(strategy, len(cands), capacity, max_running, self.ahead)
        strategy.start(len(cands), seed)
        self.view = RunView(strategy, cands, seed, getattr(self.store, "path", None))
        self.owner = Owner.current()
        self.told: list[tuple[Draw, Outcome, int]] = []
        self.n_reused = 0
        self.streak = [0] * len(cands)        # failures in a row per candidate, in the order told
        self.first: dict[int, Outcome] = {}   # first told outcome per candidate
        self.n_ok = 0
        self.n_skipped = 0                    # asks for dropped candidates answered without evaluating
        self.running: dict[int, _Entry] = {}  # entries being evaluated here, by id
        self.waiting: dict[int, _Entry] = {}  # entries another process is evaluating (claimed in the store)
        self.bar = Progress(progress, getattr(strategy, "total_draws", None), recorded=len(self.finished_before),
                            store=getattr(self.store, "path", None))

    def _open_store(self, evaluator: Evaluator, store: Any) -> None:
        """Bind the store to this run and read what earlier runs with it finished."""
        strategy, cands, seed = self.strategy, self.cands, self.seed
        self.given_store = store
        self.store = as_store(store)
        self.private = store is None  # a MemoryStore of this run only
        parts = run_fingerprint_parts(strategy, evaluator, cands, seed)
        self.store.bind(joblib_hash(sorted(parts.items())),
                        {**describe_run(strategy, evaluator, cands, seed, self.retries, self.max_failures),
                         "parts": parts})
        # What earlier runs with this store finished: the final attempt of each draw.
        self.stored_attempts: dict[str, list[Outcome]] = {}
        for row in self.store.load():
            self.stored_attempts.setdefault(row.draw.key, []).append(row.outcome)
        self.finished_before = {key: o for key, o in ((k, self.final_of(a)) for k, a in self.stored_attempts.items())
                                if o is not None}

    def _start_executor(self, evaluator: Evaluator, executor: Any, n_jobs: int | None,
                        max_in_flight: int | None) -> tuple[int, int]:
        """The executor; returns how many draws may be asked and not told, and how many submitted.

        Draws asked but not yet told, and submitted but not yet collected (the policy the virtual
        clock of certa.planning.clock shares): bounded by an adaptive strategy's max_pending; a
        fixed plan (max_pending None) may run ahead of a slow draw at the head of the queue; a
        strategy that asks ahead has n_workers running and is asked once the finished are told.
        """
        timeout = self.timeout
        self.pool, n_workers, self.owned = resolve_executor(executor, n_jobs, timeout)
        self.hard_timeout = isinstance(self.pool, LocalProcessExecutor)
        if self.hard_timeout:
            self.pool.timeout = None if timeout is None else timeout + _HARD_GRACE
        self.strategy.set_workers(n_workers)  # first: a strategy's max_pending may depend on its workers
        self.ahead = bool(self.strategy.asks_ahead)
        capacity, max_running = scheduling_limits(self.strategy.max_pending, n_workers, max_in_flight,
                                                  asks_ahead=self.ahead)
        self.ship = _EvaluatorShipping(evaluator, self.pool, max_running)
        self.alive = getattr(self.pool, "check_alive", None)  # a distributed pool that can lose every worker
        if self.hard_timeout and self.pool.timeout is not None:
            self.pool.preload(self.ship.token, self.ship.blob)
            self.ship.eager = 0
        return capacity, max_running

    def final_of(self, attempts: list[Outcome]) -> Outcome | None:
        """The outcome a draw ends with, once its attempts are over (None while they are not)."""
        ok = [o for o in attempts if o.ok]
        if ok:
            return ok[0]
        return attempts[-1] if len(attempts) > self.retries else None

    # -- the loop --------------------------------------------------------------------------------

    def loop(self) -> None:
        """Ask, evaluate and tell until the strategy is finished (or asks for nothing more)."""
        for hook in self.hooks:
            hook.on_run_start(self.view)
        super().loop()

    def n_running(self) -> int:
        return len(self.running)

    def ready(self, entry: _Entry) -> bool:
        return entry.outcome is not None

    def submit(self, draw: Draw) -> _Entry:
        """The queue entry of a draw just asked: its stored outcome, a dropped candidate's, or started."""
        strategy = self.strategy
        entry = _Entry(draw, attempt=len(self.stored_attempts.get(draw.key, [])) + 1)
        if draw.key in self.finished_before:
            entry.outcome, entry.reused = self.finished_before[draw.key], True
            self.n_reused += 1
        elif draw.candidate in strategy.dropped:
            self.n_skipped += 1
            if self.n_skipped > 10_000:
                raise RuntimeError(f"{type(strategy).__name__} keeps asking for dropped candidates")
            entry.outcome = Outcome.failure(f"candidate dropped: {strategy.dropped[draw.candidate]}",
                                            status="dropped")
        else:
            self.start_or_wait(entry)
        return entry

    def submitted(self) -> None:
        if self.stop_on_failure:
            self.collect()  # a failure that is already known stops the run before the next evaluation

    def stop_asking(self) -> None:
        """The strategy is finished, or asks for nothing and nothing is left to tell."""
        strategy = self.strategy
        if not strategy.finished and not self.queue and len(strategy.dropped) < len(self.cands):
            raise RuntimeError(f"{type(strategy).__name__} is not finished but asks for nothing")
        if self.ahead and not self.stop_on_failure:
            self.collect()  # what finished past the stop is kept in the store (spent ahead)

    def advance(self) -> None:
        self.wait()
        self.collect()

    def send(self, entry: _Entry, with_evaluator: bool = False) -> None:
        """Submit ``entry``'s evaluation (its current attempt) to the executor."""
        cand = self.cands[entry.draw.candidate]
        entry.future = self.ship.submit(cand.params, entry.draw, entry.attempt, self.timeout, with_evaluator)

    def start_or_wait(self, entry: _Entry) -> None:
        """Evaluate ``entry`` here if its claim is ours, else wait for the process that holds it."""
        key = entry.draw.key
        if self.private:  # nobody else can see this store: nothing to claim
            self.send(entry)
            self.running[id(entry)] = entry
            return
        if not self.store.claim(key, self.owner):
            self.waiting[id(entry)] = entry
            return
        attempts = self.store.attempts(key)  # another process may have recorded some since we loaded
        done = self.final_of(attempts)
        if done is not None:  # finished by another process since we loaded the store
            self.store.release(key, self.owner)
            entry.outcome, entry.attempt, entry.reused = done, len(attempts), True
            self.n_reused += 1
            return
        entry.attempt = len(attempts) + 1
        self.send(entry)
        self.running[id(entry)] = entry

    def wait(self) -> None:
        """Wait until an evaluation running here finishes, or look again at the draws claimed elsewhere."""
        futures = [e.future for e in self.running.values()]
        if self.waiting:
            if futures:
                wait(futures, timeout=_POLL, return_when=FIRST_COMPLETED)
            else:
                time.sleep(_POLL)
            self.poll_waiting()
        elif futures:
            if self.alive is None:
                wait(futures, return_when=FIRST_COMPLETED)
            elif self.timeout is not None:  # (Dask) look for evaluations past their limit as well
                wait(futures, timeout=DASK_TIMEOUT_POLL, return_when=FIRST_COMPLETED)
                self.alive()
            elif not wait(futures, timeout=_HEALTH_POLL, return_when=FIRST_COMPLETED).done:
                self.alive()  # nothing finished: is there still a worker to finish it?

    def poll_waiting(self) -> None:
        """Take the outcomes other processes recorded; take over the draws whose owner died."""
        for k, e in list(self.waiting.items()):
            attempts = self.store.attempts(e.draw.key)
            done = self.final_of(attempts)
            if done is not None:
                e.outcome, e.attempt, e.reused = done, len(attempts), True
                self.n_reused += 1
                del self.waiting[k]
            elif self.store.claim(e.draw.key, self.owner):  # its owner died: take the draw over
                del self.waiting[k]
                self.start_or_wait(e)

    def collect(self) -> None:
        """Record every finished evaluation in the store; submit a failed one again while it has retries."""
        for e in list(self.running.values()):
            if not e.future.done():
                continue
            try:
                outcome = e.future.result()
            except EvaluationTimeout as exc:
                outcome = Outcome.failure(str(exc), status="timeout", duration=float(self.timeout or 0.0))
            except Exception as exc:  # noqa: BLE001 - e.g. a worker that died
                outcome = Outcome.failure(f"{type(exc).__name__}: {exc}")
            if outcome is MISSING_EVALUATOR or getattr(outcome, "status", None) == MISSING_EVALUATOR.status:
                self.send(e, with_evaluator=True)  # this worker had not seen the evaluator yet
                continue
            outcome.attempt = e.attempt
            self.store.record(e.draw, outcome)
            if not outcome.ok and e.attempt <= self.retries:
                e.attempt += 1
                self.send(e, with_evaluator=isinstance(outcome.error, str) and outcome.error.startswith("WorkerDied"))
            elif not outcome.ok and self.stop_on_failure:
                raise EvaluationFailedError(e.draw, outcome, self.cands[e.draw.candidate])
            else:
                e.outcome = outcome
                e.future = None
                del self.running[id(e)]
                # (its claim is left to release_all at the end: a finished draw's claim is harmless,
                # others look at its recorded attempts first)

    def tell(self, head: _Entry) -> None:
        """Tell the strategy the outcome at the head of the queue; count it, show it, pass it to the callbacks."""
        draw, outcome = head.draw, head.outcome
        if outcome.ok:
            check_score(outcome.score, self.cands[draw.candidate], draw)
        elif self.stop_on_failure and outcome.status != "dropped":  # e.g. a failure reused from the store
            raise EvaluationFailedError(draw, outcome, self.cands[draw.candidate])
        self.strategy.tell(draw, outcome)
        if outcome.status == "dropped":
            return
        self.told.append((draw, outcome, head.attempt))
        self.bar.advance(outcome, head.reused)
        if self.hooks:
            view = self.view
            view.n_evaluations, view.n_reused = len(self.told), view.n_reused + head.reused
            evaluation = Evaluation(len(self.told) - 1, draw, outcome, self.cands[draw.candidate], head.reused)
            for hook in self.hooks:
                hook.on_evaluation(view, evaluation)
        self.after_tell(draw, outcome)

    def after_tell(self, draw: Draw, outcome: Outcome) -> None:
        """Drop a candidate that keeps failing; stop when every candidate's first evaluation failed alike."""
        c, cands, max_failures = draw.candidate, self.cands, self.max_failures
        self.first.setdefault(c, outcome)
        if outcome.ok:
            self.n_ok += 1
            self.streak[c] = 0
        else:
            self.streak[c] += 1
            if max_failures is not None and self.streak[c] >= max_failures and c not in self.strategy.dropped:
                self.strategy.drop(c, f"{self.streak[c]} evaluations in a row failed; last: {outcome.error}")
        if max_failures is not None and self.n_ok == 0 and len(self.first) == len(cands) \
                and len({o.error for o in self.first.values()}) == 1:
            o = self.first[0]
            raise AllEvaluationsFailedError(
                f"every candidate failed: the first evaluation of every candidate ({len(cands)}) failed with the "
                f"same error, so the run stopped early: {o.error}")

    # -- the end ---------------------------------------------------------------------------------

    def ended(self, selection: Selection | None, error: BaseException | None = None) -> None:
        """Tell the callbacks the run is over (with its selection, or the error that ended it)."""
        for hook in self.hooks:
            if error is None:
                hook.on_run_end(self.view, selection)
            else:
                hook.on_run_end(self.view, selection, error)

    def interrupted(self) -> RunInterrupted:
        """Ctrl-C: the anytime answer from what was told so far, as the error to raise."""
        partial = _partial_selection(self.strategy, self.cands, self.told, self.seed, self.n_reused,
                                     self.max_failures)
        self.ended(partial)
        return RunInterrupted(partial, getattr(self.store, "path", None))

    def close(self) -> None:
        """Cancel what has not started, give up this run's claims, close what the run opened."""
        for e in self.queue:
            if e.future is not None and not e.future.done():
                e.future.cancel()
                if self.hard_timeout:
                    LocalProcessExecutor.cancel(e.future)  # not started: never start it
        self.store.release_all(self.owner)
        if isinstance(self.given_store, (str, os.PathLike)):  # a store this run opened: closing it leaves one file
            self.store.close()
        self.bar.close()
        if self.owned and hasattr(self.pool, "shutdown"):
            self.pool.shutdown(wait=False)

    def selection(self) -> Selection:
        """The run's :class:`Selection`, warning about failures that could have changed the choice."""
        strategy, cands, told, max_failures = self.strategy, self.cands, self.told, self.max_failures
        try:
            if told and self.n_ok == 0 and max_failures is not None:
                draw, o, _ = told[0]
                raise AllEvaluationsFailedError(
                    f"every candidate failed: all {len(told)} evaluations failed; the first, of candidate "
                    f"{cands[draw.candidate].name!r} (draw {draw.key}), with: {o.error}")
            result = strategy.result()
            dropped_note = note_dropped(result, strategy.dropped, cands, told)
            if max_failures is not None:  # (None: the caller decides what failures mean, and says it)
                for note in result.get("warnings", ()):  # stacklevel 3: the caller of run()
                    warnings.warn(_with_names(note, cands), FailedEvaluationsWarning, stacklevel=3)
                if dropped_note is not None:
                    warnings.warn(dropped_note, DroppedCandidateWarning, stacklevel=3)
            unused = set(strategy.spent_ahead())
            selection = Selection(candidates=cands, told=[t for t in told if t[0].key not in unused], result=result,
                                  seed=self.seed, strategy=strategy.spec(), n_reused=self.n_reused)
            selection._strategy_object, selection._max_failures = strategy, max_failures
        except Exception as exc:
            self.ended(None, exc)
            raise
        self.ended(selection)
        return selection


def _with_names(note: str, cands: list[Candidate]) -> str:
    """A strategy's note with "candidate 3" spelled as the candidate's name."""
    import re

    return re.sub(r"candidate (\d+)", lambda m: f"candidate {cands[int(m.group(1))].name!r}"
                  if int(m.group(1)) < len(cands) else m.group(0), note)


def _partial_selection(strategy: Strategy, cands: list[Candidate], told: list, seed: int, n_reused: int,
                       max_failures: int | None) -> Selection:
    """The strategy's answer from what it has been told so far (a run cut short)."""
    try:
        result = strategy.result()
    except Exception:  # noqa: BLE001 - a strategy with too little to decide: the highest mean so far
        sums, counts = np.zeros(len(cands)), np.zeros(len(cands))
        for draw, outcome, _ in told:
            if outcome.ok:
                sums[draw.candidate] += outcome.score
                counts[draw.candidate] += 1
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        result = {"best": int(np.nanargmax(means)) if np.isfinite(means).any() else 0, "estimates": means}
    note_dropped(result, strategy.dropped, cands, told)
    unused = set(strategy.spent_ahead())
    selection = Selection(candidates=cands, told=[t for t in told if t[0].key not in unused], result=result,
                          seed=seed, strategy=strategy.spec(), n_reused=n_reused)
    selection.finished = False
    selection._strategy_object, selection._max_failures = strategy, max_failures
    return selection


class _EvaluatorShipping:
    """Sends the evaluator (and its data) to each worker process once, not with every task.

    The evaluator is pickled once; tasks carry only its hash. A worker that has not seen it
    answers MISSING_EVALUATOR and the task is sent again with the pickled evaluator, which
    the worker then keeps. The first tasks carry it anyway, so misses are rare.
    """

    def __init__(self, evaluator: Evaluator, pool: Any, eager: int) -> None:
        self.evaluator, self.pool = evaluator, pool
        self.inline = isinstance(pool, InlineExecutor)
        self.eager = eager
        if not self.inline:
            import hashlib

            import cloudpickle

            self.blob = cloudpickle.dumps(evaluator)
            self.token = hashlib.sha256(self.blob).hexdigest()

    def submit(self, params: dict, draw: Draw, attempt: int, timeout: float | None, with_evaluator: bool) -> Future:
        if self.inline:
            return self.pool.submit(execute, self.evaluator, params, draw, attempt, timeout)
        send = with_evaluator or self.eager > 0
        self.eager -= 1
        return self.pool.submit(execute_shipped, self.token, self.blob if send else None, params, draw, attempt, timeout)
