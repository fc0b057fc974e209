"""The ``certa`` command."""
from __future__ import annotations

import argparse
import sys
import textwrap

from . import __version__
from .userfiles import EXAMPLE as _EXAMPLE


def _positive_int(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value
    return parse


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer number of processes, got {text!r}") from None
    if value == 0:
        raise argparse.ArgumentTypeError("must not be 0 (1 = serial, -1 = all cores)")
    return value


def _beta(text: str) -> float | str:
    if text == "ids":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected a number in (0, 1) or "ids", got {text!r}') from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f'expected a number in (0, 1) or "ids", got {text!r}')
    return value


# simulate and select take the same strategies and stopping rules
_STRATEGIES = ["auto", "paired", "top_two", "fiesta", "batch", "uniform", "sequential_halving", "equal"]
_STOPPING_HELP = ("glr (default): wrong with probability at most 1 - confidence (Gaussian scores); "
                  "bayes: FIESTA's P(best) rule, cheaper, no such guarantee; gk16: GLR with Garivier & "
                  "Kaufmann's heuristic threshold log((1 + log t)/delta), its confidence calibrated by "
                  "simulation, not proven")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="certa", description="Pick the best model or setting reliably, cheaply "
                                     "and with a stated confidence.")
    parser.add_argument("--version", action="version", version=f"certa {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="tune a real text classifier by J-K-fold CV on bundled data",
                          description="Tune a TF-IDF + linear SVM on 3,000 bundled Debian package descriptions "
                          "(6 sections) by J-K-fold cross-validation, then report the chosen setting, its "
                          "estimated accuracy with a 95% interval, and how stable the choice is.")
    demo.add_argument("-J", "--n-repeats", type=_positive_int(1), default=3, help="J: number of random K-fold partitions (default 3)")
    demo.add_argument("-K", "--n-splits", type=_positive_int(2), default=5, help="K: folds per partition (default 5)")
    demo.add_argument("-j", "--jobs", type=_jobs, default=2, help="worker processes (default 2; -1 = all cores)")
    demo.add_argument("--seed", type=_positive_int(0), default=0, help="root seed (default 0)")
    demo.add_argument("--store", default=None, help="SQLite file keeping every evaluation; rerun to resume")
    demo.add_argument("--json", action="store_true", help="print the result as JSON")
    demo.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    sim = sub.add_parser("simulate", help="plan a selection: evaluations needed and chance of a right choice",
                         description="Run a strategy many times against simulated candidates, given either their "
                         "means and SDs (Gaussian) or a JSON table of observed scores per candidate to replay, and "
                         "report min / mean / max evaluations and how often the true best was chosen.")
    sim.add_argument("--strategy", default="auto",
                     choices=_STRATEGIES,
                     help="auto (default): paired (every survivor on each row, paired delta-correct rule) unless "
                     "--stopping or --beta is given, then top_two; fiesta: FIESTA's exact algorithm (top-two, "
                     "beta 0.5, Bayesian stopping)")
    sim.add_argument("--paired", action="store_true",
                     help="--table: the table's rows are paired (row i is one split and seed for every "
                     "candidate, as in FIESTA's TDSA table): a row is replayed whole; without it each score is "
                     "drawn from its own random row")
    sim.add_argument("--confidence", type=float, default=0.95, help="fixed-confidence strategies (default 0.95)")
    sim.add_argument("--budget", type=_positive_int(1), default=None, help="fixed-budget strategies")
    sim.add_argument("--stopping", default=None, choices=["glr", "bayes", "gk16"], help=_STOPPING_HELP)
    sim.add_argument("--beta", type=_beta, default=None,
                     help='top-two: probability of evaluating the leader, or "ids" (default: information-directed '
                     "selection, no tuning); 0.5 is FIESTA's TTTS")
    sim.add_argument("--workers", type=_positive_int(1), default=None,
                     help="workers evaluating at once: each run is played on a virtual clock and the report adds its "
                     "wall time, the workers' occupancy and the evaluations spent ahead (batch, uniform: also "
                     "their evaluations in flight)")
    times = sim.add_mutually_exclusive_group()
    times.add_argument("--duration", default=None,
                       help="with --workers: each evaluation's time, seconds (0.25) or lognormal:MEAN,SD, "
                       "uniform:LOW,HIGH, exponential:MEAN (default 1: wall time in evaluation times)")
    times.add_argument("--durations-from", default=None, metavar="STORE",
                       help="with --workers: evaluation times drawn from those a certa store recorded, per candidate "
                       "name (a candidate it has none for: any of its times)")
    sim.add_argument("--max-evals", type=_positive_int(1), default=None, help="cap on evaluations per run")
    sim.add_argument("--tolerance", type=float, default=0.0,
                     help="epsilon-best: a choice within this of the best counts as right (fixed confidence; "
                     "with --means the report gives T*_eps and its lower bound)")
    src = sim.add_mutually_exclusive_group(required=True)
    src.add_argument("--table", help="JSON file mapping candidate names to lists of observed scores")
    src.add_argument("--means", help="comma-separated true means of simulated Gaussian candidates")
    sim.add_argument("--sds", help="comma-separated SDs (with --means), or one SD for every candidate")
    sim.add_argument("--rung-means", default=None, metavar="M,M,...;M,M,...",
                     help="screen, then race: the candidates' means on each rung of the screen, one comma-separated "
                     "group per rung (smallest first, groups separated by ';'; --means are the full-size ones), with "
                     "--n-train; the report adds the screen's miss rate and the race's wrong-choice rate among the "
                     "finalists. Without --tolerance and --max-evals the race is the fronts' default, the best for a "
                     "budget, and the report adds how often its certified tolerance was exceeded")
    sim.add_argument("--n-train", type=_positive_int(2), default=None,
                     help="with --rung-means: the full training size; the rungs are 1/3, 1/9, ... of it, as many as "
                     "the rule gives for the number of candidates (certa.strategies.screen.screen_sizes)")
    sim.add_argument("--names", help="comma-separated names of the --means candidates (default c0, c1, ...)")
    sim.add_argument("--models", help="comma-separated subset of the table's candidates")
    sim.add_argument("--runs", type=_positive_int(1), default=200, help="simulated runs (default 200)")
    sim.add_argument("--seed", type=_positive_int(0), default=0)
    sim.add_argument("--jobs", type=_positive_int(1), default=1, help="processes for the simulated runs (results do not depend on it)")
    sim.add_argument("--json", action="store_true", help="print machine-readable results")
    cmp = sub.add_parser("compare", help="significance test between two models' predictions or scores",
                         description="Compare two models. Either two prediction files (one label per line) with the "
                         "true labels (--truth): McNemar's test (exact by default); or a CSV of paired scores "
                         "(--scores, --columns A,B): a paired test chosen with --test.")
    cmp.add_argument("predictions", nargs="*", help="two prediction files, one label per line")
    cmp.add_argument("--truth", help="file of true labels, one per line (with two prediction files)")
    cmp.add_argument("--method", default="exact", choices=["exact", "mid-p", "chi2", "chi2-cc"],
                     help="McNemar variant (default exact)")
    cmp.add_argument("--scores", help="CSV file with one row per pair (fold, split or example)")
    cmp.add_argument("--columns", help="the two score columns of --scores, as A,B")
    cmp.add_argument("--test", default="corrected-kfold",
                     choices=["corrected-kfold", "corrected-resampled", "paired-t", "permutation", "bootstrap"],
                     help="test for paired scores (default corrected-kfold: rows are the J*K folds of repeated CV)")
    cmp.add_argument("--repeats", type=_positive_int(1), help="J, for corrected-kfold")
    cmp.add_argument("--folds", type=_positive_int(2), help="K, for corrected-kfold")
    cmp.add_argument("--n-train", type=_positive_int(1), help="training-set size (corrected tests)")
    cmp.add_argument("--n-test", type=_positive_int(1), help="test-set size (corrected tests)")
    cmp.add_argument("--seed", type=_positive_int(0), default=0, help="seed for permutation / bootstrap")
    cmp.add_argument("--json", action="store_true", help="print machine-readable results")
    sel = sub.add_parser("select", help="choose between your own models, run from the command line (resumable)",
                         description=textwrap.fill("Choose the best of your candidates with your own evaluation function, FIESTA "
                         "style: each evaluation calls evaluate(params, seed) -> score (a float, or a dict with a "
                         "'score' key) from the import path --evaluate, with the seed of its row (a fresh one per row, "
                         "the same for every candidate of the row unless --no-paired: use it for the split and the "
                         "training). Candidates come from a TOML (or JSON) file: one [candidates.NAME] table "
                         "of parameters per candidate, or a [grid] table of parameter = [values]. With --store the "
                         "run is kept in SQLite and the same command resumes it after a crash or a kill, without "
                         "repeating finished evaluations. Ends with the summary of certa show.", 100),
                         epilog="Example candidates.toml:\n\n" + _indent(_EXAMPLE) + "\n\nExample: certa select "
                         "--evaluate mypkg.train:evaluate --candidates candidates.toml --strategy top_two "
                         "--confidence 0.95 --store run.sqlite",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    sel.add_argument("--evaluate", required=True, metavar="MODULE:FUNCTION",
                     help="import path of evaluate(params, seed) -> score; the current directory is searched first")
    sel.add_argument("--candidates", required=True, metavar="FILE", help="TOML or JSON file of candidates")
    sel.add_argument("--strategy", default="auto", choices=_STRATEGIES,
                     help="auto (default: paired, or top_two with --no-paired, --stopping or --beta), paired, "
                     "top_two, fiesta (FIESTA's exact algorithm), batch, uniform: until --confidence; "
                     "sequential_halving, equal: --budget evaluations")
    sel.add_argument("--paired", action=argparse.BooleanOptionalAction, default=None,
                     help="paired evaluation: every candidate on a row gets the same seed (default with the auto "
                     "and paired strategies; --no-paired: a fresh seed per evaluation)")
    sel.add_argument("--confidence", type=float, default=0.95, help="fixed-confidence strategies (default 0.95)")
    sel.add_argument("--budget", type=_positive_int(1), default=None, help="fixed-budget strategies: evaluations")
    sel.add_argument("--stopping", default=None, choices=["glr", "bayes", "gk16"], help=_STOPPING_HELP)
    sel.add_argument("--beta", type=_beta, default=None,
                     help='top-two: probability of evaluating the leader, or "ids" (default)')
    sel.add_argument("--tolerance", type=_tolerance, default="auto",
                     help="fixed confidence: stop once the choice is within this of the best (epsilon-best); "
                     "default auto: 0, and a screened run with --max-evals auto asks for the best for a budget "
                     "(one full-size evaluation per candidate, then the tolerance certified; docs/screen.md)")
    sel.add_argument("--workers", type=_positive_int(1), default=None, help="batch: evaluations in flight")
    sel.add_argument("--max-evals", type=_max_evals, default="auto",
                     help="cap on evaluations of a fixed-confidence run (default auto: 200 per candidate; none: no cap)")
    sel.add_argument("--cv", default=None, metavar="FAMILY:K[xJ]",
                     help="rows are the splits of a scikit-learn splitter over examples 0..n-1, shared by every "
                     "candidate: evaluate(params, seed, train, test) gets the row's index arrays. FAMILY: kfold, "
                     "stratified, repeated-kfold, repeated-stratified (K folds x J repeats, e.g. "
                     "repeated-stratified:5x10), group, stratified-group, time-series; paired strategy only")
    sel.add_argument("--labels", default=None, metavar="FILE", help="--cv: class labels, one per line (stratifies)")
    sel.add_argument("--groups", default=None, metavar="FILE", help="--cv: groups, one per line (group families)")
    sel.add_argument("--n-samples", type=_positive_int(2), default=None, help="--cv: number of examples, "
                     "without --labels or --groups")
    sel.add_argument("--screen", action=argparse.BooleanOptionalAction, default=None,
                     help="screen, then race: every candidate on small training sizes, the survivors on larger ones, "
                     "the finalists raced at full size (the claim is among the finalists). Needs --n-train and "
                     "evaluate(params, seed, size) training on `size` examples. Default: screen when the rule says it "
                     "pays (many candidates, or cost growing with the size: docs/screen.md); --no-screen: never")
    sel.add_argument("--n-train", type=_positive_int(2), default=None,
                     help="the training examples evaluate uses at full size; with it, evaluate is called as "
                     "evaluate(params, seed, size=N) (N = --n-train at full size, fewer on the screen's rungs)")
    sel.add_argument("--store", default=None, help="SQLite file keeping every evaluation; rerun to resume")
    sel.add_argument("--overwrite", action="store_true",
                     help="start over: delete the --store file (and its -wal/-shm files) before the run")
    sel.add_argument("--seed", type=_positive_int(0), default=0, help="root seed (default 0)")
    sel.add_argument("-j", "--jobs", type=_jobs, default=1, help="worker processes (default 1; -1 = all cores)")
    sel.add_argument("--retries", type=_positive_int(0), default=0, help="extra attempts for a failed evaluation")
    sel.add_argument("--timeout", type=float, default=None, help="seconds allowed per evaluation")
    sel.add_argument("--no-progress", action="store_true",
                     help="hide progress (on standard error: a bar on a terminal, plain lines in a log)")
    sel.add_argument("--json", action="store_true", help="print the summary as JSON")
    show = sub.add_parser("show", help="summarise a run kept in a store (finished, killed or still running)",
                          description="Print a summary of the run kept in a certa store: method and settings, "
                          "candidates ranked with mean, 95% interval and evaluations, the choice and its confidence "
                          "or stability, failures and time spent. Works on a finished run, a killed one and one "
                          "still going in another process (the store is opened read-only). Lists the 20 best "
                          "candidates and, when there are more, histograms of every candidate's estimate and "
                          "evaluations; --all lists every candidate and every failed attempt.")
    show.add_argument("store", help="SQLite file written by a certa run (store=...)")
    show.add_argument("--json", action="store_true", help="print the summary as JSON")
    show.add_argument("--all", "--full", dest="full", action="store_true",
                      help="list every candidate and every failed attempt (default: the 20 best, the first 50 "
                           "failed attempts, and histograms)")
    rep = sub.add_parser("report", help="write a self-contained HTML report of a run kept in a store",
                         description="Write one HTML file (figures embedded, no network needed to open it) with "
                         "the summary of certa show and the figures of the run's method: scores per candidate "
                         "with intervals, the comparison table with Holm-adjusted p-values, failures; J-K-fold: "
                         "choice per partition and stability; bandits: evaluations per candidate over time and "
                         "P(best) over the run; progressive sampling: score against training size and survivors "
                         "per round; quantification bounds: bound per candidate. Lists and draws the 20 best "
                         "candidates, with histograms of every candidate's estimate and evaluations; --all "
                         "lists every candidate.")
    rep.add_argument("store", help="SQLite file written by a certa run (store=...)")
    rep.add_argument("--all", "--full", dest="full", action="store_true",
                     help="list every candidate and every failed attempt in the tables (default: the 20 best and "
                          "the first 50 failed attempts)")
    rep.add_argument("-o", "--output", default="report.html", help="HTML file to write (default report.html)")
    rep.add_argument("--title", default=None, help="page title (default: certa report: STORE)")
    return parser


def _run_report(args) -> None:
    from .reporting.loading import load, paused_gc
    from .reporting.report import write_report

    with paused_gc():   # the whole command: the objects load() makes would be walked again by every collection
        path = write_report(load(args.store), args.output, title=args.title, full=args.full)
    print(f"wrote {path}")


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _run_select(args) -> int:
    import json
    import os
    import signal
    import time

    from .engine.runner import RunInterrupted, run
    from .reporting.loading import load
    from .reporting.summary import print_summary, summarize
    from .search._budget import with_near_tie_monitor
    from .search.bandit import make_strategy
    from .userfiles import ImportPathEvaluator, read_candidates, resolve_function

    candidates = read_candidates(args.candidates)
    if len(candidates) < 2:
        raise ValueError(f"{args.candidates}: one candidate only; a selection needs at least two")
    resolve_function(args.evaluate)  # fail now, naming the path, rather than in every worker
    if args.overwrite:
        if not args.store:
            raise ValueError("--overwrite needs --store (the file to start over on)")
        from .engine.store import remove_store

        remove_store(args.store)
    rows = None
    if args.cv is not None:
        from .userfiles import cv_rows

        rows = cv_rows(args.cv, labels=args.labels, groups=args.groups, n_samples=args.n_samples, seed=args.seed)
    elif args.labels or args.groups or args.n_samples:
        raise ValueError("--labels, --groups and --n-samples go with --cv (the splitter they feed)")
    if args.n_train is not None and rows is not None:
        raise ValueError("--n-train (training sizes for the screen) and --cv (the splitter's rows) do not go together")
    evaluator = ImportPathEvaluator(args.evaluate, os.getcwd(), rows, n_train=args.n_train)
    from .search._screen import screen_or_race, why_no_screen

    why_not = why_no_screen(args.strategy, args.paired, args.stopping, args.beta, rows, "--cv")
    if why_not is None and args.n_train is None:
        why_not = "no --n-train (the training size evaluate(params, seed, size) uses at full size)"
    strategy, decision, evaluator = screen_or_race(
        args.screen, args.strategy, candidates, evaluator, args.seed, n_train=args.n_train, why_not=why_not,
        confidence=args.confidence, tolerance=args.tolerance, max_evals=args.max_evals, store=args.store,
        race=lambda tol: make_strategy(args.strategy, confidence=args.confidence, budget=args.budget,
                                       stopping=args.stopping, n_workers=args.workers, max_evals=args.max_evals,
                                       beta=args.beta, tolerance=tol, n_candidates=len(candidates),
                                       paired=args.paired, max_rows=None if rows is None else rows.n_rows))
    if decision["screen"] or args.screen is not None:
        print(f"certa select: {'screen, then race' if decision['screen'] else 'no screen'} ({decision['reason']})",
              file=sys.stderr)
    progress = not args.no_progress   # on standard error: a bar on a terminal, plain lines in a log
    received: list[int] = []

    def on_sigterm(signum, frame):   # SIGTERM ends the run like Ctrl-C: the anytime answer, then exit 143
        received.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    interrupted = None
    started = time.time()
    try:
        with _warnings_as_lines("certa select"):   # a near tie is said when seen, not after the run
            selection = run(strategy, evaluator, candidates,
                            random_state=args.seed, n_jobs=args.jobs, store=args.store, retries=args.retries,
                            timeout=args.timeout, progress=progress, callbacks=with_near_tie_monitor(strategy, None))
    except RunInterrupted as exc:
        interrupted, selection = exc, exc.selection
    finally:
        signal.signal(signal.SIGTERM, previous)
    n_reused = selection.n_reused
    if args.store:
        selection = load(args.store)   # everything recorded, read back (also what certa show prints)
    else:   # nothing kept: what certa show would read from a store, measured here
        selection.method = "bandit"
        ev = selection.evaluations
        selection.info.update(evaluator=f"ImportPathEvaluator({args.evaluate})", wall_seconds=time.time() - started,
                              evaluation_seconds=float(ev["duration"].sum()) if "duration" in ev else None)
    summary = summarize(selection)
    summary["n_reused_from_store"] = int(n_reused)
    if args.json:
        print(json.dumps(summary, indent=2, default=repr))
    else:
        print_summary(summary)
    if interrupted is None:
        return 0
    name = "SIGTERM" if received else "SIGINT"
    kept = (f"{selection.n_evaluations} finished evaluations are kept in {args.store}: run the same command "
            f"to resume, or 'certa show {args.store}'" if args.store
            else f"{selection.n_evaluations} evaluations were not kept (no --store)")
    print(f"certa select: interrupted by {name}: the recommendation above is the answer so far; {kept}",
          file=sys.stderr)
    return 143 if received else 130


def _tolerance(text: str) -> float | str:
    """``--tolerance``: a number >= 0 or ``auto``."""
    import math

    if text.strip().lower() == "auto":
        return "auto"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0 or 'auto', got {text!r}") from None
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a number >= 0 or 'auto', got {text!r}")
    return value


def _max_evals(text: str) -> int | str | None:
    """``--max-evals``: a positive int, ``auto`` or ``none``."""
    low = text.strip().lower()
    if low in ("auto", "none"):
        return None if low == "none" else "auto"
    return _positive_int(1)(text)


class _warnings_as_lines:
    """Print certa's warnings as one ``certa CMD: warning: ...`` line on stderr while a run goes on."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __enter__(self):
        import warnings

        from .search._budget import NearTieWarning

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("always", NearTieWarning)
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, NearTieWarning):
                print(f"{self.command}: warning: {message}", file=sys.stderr, flush=True)
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        return self

    def __exit__(self, *exc) -> None:
        self._catch.__exit__(*exc)


def _run_show(args) -> None:
    import json

    from .reporting.loading import load, paused_gc
    from .reporting.summary import print_summary, summarize

    with paused_gc():   # the whole command: the objects load() makes would be walked again by every collection
        summary = summarize(load(args.store), full=args.full)
        if args.json:
            print(json.dumps(summary, indent=2, default=repr))
        else:
            print_summary(summary)


def _read_labels(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            labels = [line.rstrip("\n").rstrip("\r") for line in fh]
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a UTF-8 text file of labels (a binary file?): byte {exc.start}") from None
    if any("\x00" in label for label in labels):
        line = next(i for i, label in enumerate(labels, 1) if "\x00" in label)
        raise ValueError(f"{path}: line {line}: NUL byte, not a text file of labels (a binary file?)")
    while labels and labels[-1] == "":
        labels.pop()
    if not labels:
        raise ValueError(f"{path} holds no labels (expected one label per line)")
    return labels


def _run_compare(args) -> None:
    import json

    import numpy as np

    from . import stats

    if args.predictions:
        if len(args.predictions) != 2 or not args.truth or args.scores:
            raise ValueError("give exactly two prediction files and --truth (or --scores with --columns)")
        y, a, b = (np.asarray(_read_labels(p)) for p in (args.truth, *args.predictions))
        if not len(y) == len(a) == len(b):
            raise ValueError(f"the files have different numbers of lines: truth {len(y)}, "
                             f"{args.predictions[0]} {len(a)}, {args.predictions[1]} {len(b)}")
        result = stats.mcnemar(y, a, b, method=args.method)
        names = (args.predictions[0], args.predictions[1])
        scores = (float(np.mean(a == y)), float(np.mean(b == y)))  # accuracies
    elif args.scores:

        if not args.columns or len(args.columns.split(",")) != 2:
            raise ValueError("--scores needs --columns A,B naming two score columns")
        ca, cb = (c.strip() for c in args.columns.split(","))
        frame = _read_scores_csv(args.scores)
        missing = [c for c in (ca, cb) if c not in frame.columns]
        if missing:
            raise ValueError(f"{args.scores} has no column(s) {missing}; it has {list(frame.columns)}")
        a, b = (_numeric_column(frame, c, args.scores) for c in (ca, cb))
        names, scores = (ca, cb), (float(a.mean()), float(b.mean()))
        if args.test == "corrected-kfold":
            if not (args.repeats and args.folds):
                raise ValueError("--test corrected-kfold needs --repeats J and --folds K (rows = J*K folds)")
            result = stats.corrected_repeated_kfold_ttest(a, b, args.repeats, args.folds, args.n_train, args.n_test)
        elif args.test == "corrected-resampled":
            if not (args.n_train and args.n_test):
                raise ValueError("--test corrected-resampled needs --n-train and --n-test")
            result = stats.corrected_resampled_ttest(a, b, args.n_train, args.n_test)
        elif args.test == "paired-t":
            result = stats.paired_ttest(a, b)
        elif args.test == "permutation":
            result = stats.paired_permutation_test(a, b, random_state=args.seed)
        else:
            result = stats.paired_bootstrap_ci(a, b, random_state=args.seed)
    else:
        raise ValueError("give two prediction files with --truth, or --scores with --columns")
    report = _compare_report(result, names, scores)
    if args.json:
        print(json.dumps(report, indent=2, default=float))
    else:
        print(result)
        print(report["verdict"])


#: The keys of ``certa compare --json``, whatever the test.
COMPARE_KEYS = ("test", "statistic", "pvalue", "df", "alternative", "assumptions", "estimate", "ci", "confidence",
                "n", "details", "models", "scores", "higher", "better", "verdict")
#: Tests whose p-value (or interval) holds only for independent pairs, not for CV folds.
_INDEPENDENT_PAIRS = ("paired t", "permutation", "bootstrap")
_LEVEL = 0.05


def _compare_report(result, names: tuple[str, str], scores: tuple[float, float]) -> dict:
    """One dict with the same keys for every test: the test's numbers, both models' scores and which is better.

    ``higher`` is the model with the higher score; ``better`` names it only when the test shows the
    difference at the 5 % level (p < 0.05, or an interval that excludes 0), else it is ``None``.
    """
    raw = result.to_dict()
    if "low" in raw:  # a bootstrap interval, not a test: no statistic, no p-value
        out = {"test": f"paired bootstrap ({raw['method']})", "statistic": None, "pvalue": None, "df": None,
               "alternative": "two-sided", "assumptions": "pairs are independent draws of the same distribution",
               "estimate": raw["estimate"], "ci": [raw["low"], raw["high"]], "confidence": raw["confidence"],
               "n": raw["n"], "details": {"n_resamples": raw["n_resamples"], "standard_error": raw["standard_error"]}}
    else:
        out = {k: raw.get(k) for k in COMPARE_KEYS[:11]}
    a, b = names
    sa, sb = scores
    out["models"] = [a, b]
    out["scores"] = {a: sa, b: sb}
    win, lose = (a, b) if sa >= sb else (b, a)
    out["higher"] = None if sa == sb else win
    if out["pvalue"] is not None:
        p = out["pvalue"]
        shown = p < _LEVEL
        evidence = f"p = {p:.4g}" + (" < 0.05" if shown else ", not significant at the 5% level")
    elif out["ci"] is not None:
        lo, hi = out["ci"]
        shown = lo > 0 or hi < 0
        evidence = (f"{out['confidence']:.0%} interval of the difference [{lo:.4f}, {hi:.4f}] "
                    + ("excludes 0" if shown else "includes 0"))
    else:
        shown, evidence = False, "no test"
    out["better"] = win if shown and sa != sb else None
    if sa == sb:
        verdict = f"{a} and {b} have the same score ({sa:.4f}); {evidence}"
    elif shown:
        verdict = (f"{win} is better: {max(sa, sb):.4f} against {lose}'s {min(sa, sb):.4f} (higher is better); "
                   f"{evidence}: significant at the 5% level")
    else:
        verdict = (f"no significant difference: {win} {max(sa, sb):.4f}, {lose} {min(sa, sb):.4f} (higher is "
                   f"better); {evidence}: the data do not show which model is better")
    test = str(out["test"] or "").lower()
    if any(t in test for t in _INDEPENDENT_PAIRS):
        verdict += (". This test holds only if the rows are independent (separate test sets): not for CV folds, "
                    "whose training sets overlap (use --test corrected-kfold, which accounts for it)")
    out["verdict"] = verdict
    return out


def _read_scores_csv(path: str):
    import pandas as pd

    try:
        with open(path, "rb") as fh:
            head = fh.read(8192)
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc.strerror})") from None
    if b"\x00" in head:
        raise ValueError(f"{path}: not a CSV text file (it holds NUL bytes: a binary file?)")
    try:
        frame = pd.read_csv(path)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a UTF-8 CSV file: byte {exc.start}") from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: empty file, expected a CSV with a header row") from None
    except pd.errors.ParserError as exc:
        raise ValueError(f"{path}: malformed CSV: {str(exc).strip()}") from None
    if frame.empty:
        raise ValueError(f"{path}: no rows of scores under the header")
    return frame


def _numeric_column(frame, column: str, path: str):
    import pandas as pd

    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna() & frame[column].notna()
    if bad.any() or frame[column].dtype == bool:
        row = int(bad.idxmax()) if bad.any() else 0
        raise ValueError(f"{path}: line {row + 2}: column {column!r} holds {frame[column].iloc[row]!r}, "
                         "expected a number")
    if values.isna().any():
        row = int(values.isna().idxmax())
        raise ValueError(f"{path}: line {row + 2}: column {column!r} is empty, expected a number")
    return values.to_numpy(dtype=float)


def _floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{name} must be comma-separated numbers, got {text!r}") from None


def _run_simulate(args) -> None:
    import contextlib
    import json

    from rich.console import Console

    from .planning.simulate import load_score_table, simulate
    from .search.bandit import make_strategy

    if args.rung_means is not None:
        from .search._screen import simulation_screen

        strategy = simulation_screen(args.strategy, None if args.means is None else len(_floats(args.means, "--means")),
                                     args.n_train, len([g for g in args.rung_means.split(";") if g.strip()]),
                                     args.confidence, args.tolerance, args.max_evals)
    else:
        if args.n_train is not None:
            raise ValueError("--n-train goes with --rung-means (the screen's score model)")
        strategy = make_strategy(args.strategy, confidence=args.confidence, budget=args.budget,
                                 stopping=args.stopping, n_workers=args.workers, max_evals=args.max_evals,
                                 beta=args.beta, tolerance=args.tolerance)
    err = Console(stderr=True)
    busy = err.status(f"simulating {args.runs} runs of {args.strategy}...") if err.is_terminal \
        else contextlib.nullcontext()
    with busy:
        report = _simulate(args, strategy, simulate, load_score_table)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=float))
    else:
        print(report)


def _simulate(args, strategy, simulate, load_score_table):
    from .planning.clock import durations_from_store, parse_duration

    clock = {}
    if args.workers is not None:
        clock = {"workers": args.workers, "durations": parse_duration(args.duration) if args.duration
                 else durations_from_store(args.durations_from) if args.durations_from else None}
    elif args.duration or args.durations_from:
        raise ValueError(f"{'--duration' if args.duration else '--durations-from'} plans a wall time on the virtual "
                         "clock: give --workers W too")
    if args.table:
        if args.names:
            raise ValueError("--names goes with --means (a --table names its candidates; --models picks some)")
        table = load_score_table(args.table)
        if args.models:
            names = [m.strip() for m in args.models.split(",") if m.strip()]
            missing = [m for m in names if m not in table]
            if missing:
                raise ValueError(f"--models names candidates not in the table: {missing}; it has {sorted(table)}")
            table = {m: table[m] for m in names}
        report = simulate(strategy, table=table, n_runs=args.runs, random_state=args.seed, n_jobs=args.jobs,
                          paired_rows=args.paired, **clock)
    else:
        if args.paired:
            raise ValueError("--paired replays a table's rows whole: give it with --table")
        if not args.sds:
            raise ValueError("--means needs --sds")
        means = _floats(args.means, "--means")
        names = None
        if args.names:
            names = [n.strip() for n in args.names.split(",")]
            if len(names) != len(means) or not all(names) or len(set(names)) != len(names):
                raise ValueError(f"--names must give {len(means)} distinct non-empty names, one per --means value, "
                                 f"got {args.names!r}")
        rungs = None if args.rung_means is None else \
            [_floats(g, "--rung-means") for g in args.rung_means.split(";") if g.strip()]
        report = simulate(strategy, means=means, sds=_floats(args.sds, "--sds"), names=names,
                          n_runs=args.runs, random_state=args.seed, n_jobs=args.jobs, rung_means=rungs, **clock)
    return report


def _join_negative_values(argv: list[str]) -> list[str]:
    """``--sds -0.1,0.1`` as ``--sds=-0.1,0.1``: argparse would take a value starting with '-' for an option."""
    import re

    number = r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?"
    negative_list = re.compile(rf"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?(,\s*{number})*$")
    out: list[str] = []
    for arg in argv:
        if out and out[-1].startswith("--") and "=" not in out[-1] and negative_list.match(arg):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(_join_negative_values(list(sys.argv[1:] if argv is None else argv)))
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command == "demo":
            from .demo import run_demo

            run_demo(n_repeats=args.n_repeats, n_splits=args.n_splits, n_jobs=args.jobs, seed=args.seed,
                     store=args.store, as_json=args.json, progress=not args.no_progress)
        elif args.command == "simulate":
            _run_simulate(args)
        elif args.command == "compare":
            _run_compare(args)
        elif args.command == "select":
            return _run_select(args)
        elif args.command == "show":
            _run_show(args)
        elif args.command == "report":
            _run_report(args)
    except BrokenPipeError:  # output piped into e.g. head
        return 0
    except (ValueError, TypeError, OSError) as exc:
        message = " ".join(str(exc).split())  # one line, whatever the exception's message holds
        print(f"certa {args.command}: error: {message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
