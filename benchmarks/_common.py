"""Helpers shared by certa's benchmarks: machine info, load, timing, result files, subcommands.

Every benchmark writes ``benchmarks/results/<name>.json`` (all numbers, the settings, the
machine and its load) and ``benchmarks/results/<name>.md`` (the tables quoted in the docs).
The results directory is ``benchmarks/results`` unless the area script's ``--results DIR`` (or
the environment variable ``CERTA_BENCH_RESULTS``, which child processes inherit) names another.

Each area script (``adaptive.py``, ``progressive.py``, ...) is a list of subcommands run by
:func:`run_subcommand`; a subcommand's code is a module of the area's private package
(``_adaptive/``, ``_progressive/``, ...) with a ``main(argv)``.

A new benchmark is such a module, listed in its area's ``COMMANDS``; it measures, and leaves the
report to the helpers here (:func:`machine_info` and :func:`loadavg` for the conditions,
:func:`md_section` / :func:`md_table` for the tables, :func:`save` or :func:`write_results` for
the two files, :func:`read_result` for a report built from earlier runs)::

    def main(argv=None):
        args = argparse.ArgumentParser(prog="area.py name", description=__doc__).parse_args(argv)
        info, rows = machine_info(), [measure(n) for n in (10, 100)]
        md = ["# What it measures", ""] + md_section("Wall time", f"Load {fmt_load(loadavg())}.",
                                                     ["n", "seconds"], [[r["n"], f"{r['s']:.2f}"] for r in rows])
        save("area_name", {"machine": info, "rows": rows, "load_end": loadavg()}, md)
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
RESULTS = Path(os.environ.get("CERTA_BENCH_RESULTS") or BENCHMARKS / "results")
for _path in (ROOT, BENCHMARKS):  # this checkout's certa; the areas' private packages
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

#: The FIESTA paper's TDSA scores: 12 models x 500 macro-F1 scores (row i: one split and seed).
TDSA_PATH = os.environ.get("CERTA_TDSA_PATH") or "/work/shared/data/fiesta-tdsa-test-f1.json"
#: The paper's 8-model fixed-confidence problem ({tdlstm, atae, ian, lstm} x {full, _50}).
TDSA_MODELS8 = ["tdlstm", "atae", "ian", "lstm", "tdlstm_50", "atae_50", "ian_50", "lstm_50"]


def set_results_dir(path: Path | str) -> Path:
    """Make ``path`` the results directory of this process and of the processes it starts.

    Call before the subcommand's module is imported (its ``RESULTS`` is read at import).
    """
    global RESULTS
    RESULTS = Path(path).resolve()
    RESULTS.mkdir(parents=True, exist_ok=True)
    os.environ["CERTA_BENCH_RESULTS"] = str(RESULTS)
    return RESULTS


def run_subcommand(prog: str, description: str, commands: dict[str, tuple[str, str]],
                   argv: Sequence[str] | None = None) -> int:
    """Parse ``[--results DIR] COMMAND ARGS...``, run ``commands[COMMAND]``'s module's ``main(ARGS)``.

    Returns the exit status: ``main``'s return value if it is an int, else 0.

    ``commands`` maps a subcommand to ``(module, one-line help)``; the module is imported only
    when its subcommand runs, and parses its own arguments (``prog COMMAND --help`` lists them).

    Examples
    --------
    >>> run_subcommand("x.py", "demo", {"md": ("_common", "")}, ["--help"])  # doctest: +SKIP
    """
    ap = argparse.ArgumentParser(prog=prog, description=description,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=None,
                    help="results directory (default benchmarks/results; inputs such as caches are read there too)")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, help_) in commands.items():
        sub.add_parser(name, help=help_, add_help=False)
    args, rest = ap.parse_known_args(argv)
    if args.results is not None:
        set_results_dir(args.results)
    module = importlib.import_module(commands[args.command][0])
    result = module.main(rest)
    return result if isinstance(result, int) else 0


def tdsa_table(models: Sequence[str] | None = None) -> dict[str, list[float]]:
    """The TDSA replay table, model -> its 500 scores (all 12 models, or ``models`` in that order)."""
    with open(TDSA_PATH) as fh:
        table = json.load(fh)
    return {m: table[m] for m in (models or list(table))}


def import_fiesta():
    """fiesta-nlp's ``fiesta`` module, from the environment, else from the unpacked wheel in /tmp/fiesta."""
    try:
        from fiesta import fiesta  # noqa: F401
    except ImportError:
        sys.path.insert(0, "/tmp/fiesta")
    from fiesta import fiesta as F

    return F


def binom_greater_p(k: int, n: int, p: float) -> float:
    """One-sided exact binomial p-value of ``k`` or more events in ``n`` trials at rate ``p`` (scipy's binomtest)."""
    from scipy import stats

    return float(stats.binomtest(k, n, p, alternative="greater").pvalue)


def time_decisions(strat: Any, means: Any, rng: Any, n_init: int,
                   limit: int) -> tuple[list[float], int]:
    """Run a started ask/tell strategy on Gaussian scores (SD 1, ``means``) until it stops or
    ``limit`` evaluations; return the wall seconds of each decision (ask + tell, not the draw)
    after the first ``n_init`` evaluations, and the number of evaluations run."""
    from certa.engine.draws import Outcome

    times: list[float] = []
    done = 0
    while done < limit and not strat.finished:
        t0 = time.perf_counter()
        d = strat.ask()
        t1 = time.perf_counter()
        score = float(rng.normal(means[d.candidate], 1.0))
        t2 = time.perf_counter()
        strat.tell(d, Outcome(score=score))
        t3 = time.perf_counter()
        done += 1
        if done > n_init:    # after the initial round: the adaptive decisions
            times.append((t1 - t0) + (t3 - t2))
    return times, done


def loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or ``None`` where the OS has none."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def machine_info() -> dict[str, Any]:
    """Platform, CPU count, library versions and the current load (for the JSON results).

    Examples
    --------
    >>> info = machine_info()
    >>> info["cpu_count"] >= 1
    True
    """
    import joblib
    import numpy as np
    import scipy
    import sklearn

    import certa

    try:
        from joblib.externals import loky  # the copy certa uses (the standalone package is not a dependency)

        loky_version = loky.__version__
    except ImportError:  # pragma: no cover - loky ships with joblib
        loky_version = None
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        affinity = None
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "cpus_available": affinity,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "joblib": joblib.__version__,
        "loky": loky_version,
        "certa": getattr(certa, "__version__", None),
        "loadavg_at_start": loadavg(),
        "started_at": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }


def timed(fn: Callable[[], Any]) -> tuple[Any, float, list[float] | None, list[float] | None]:
    """Run ``fn()`` once; return ``(result, wall seconds, loadavg before, loadavg after)``.

    Examples
    --------
    >>> _, seconds, _, _ = timed(lambda: sum(range(10)))
    >>> seconds >= 0
    True
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    before = loadavg()
    t0 = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - t0
    return result, seconds, before, loadavg()


@contextmanager
def stopwatch() -> Iterator[dict[str, float]]:
    """``with stopwatch() as t: ...`` then ``t["seconds"]`` holds the elapsed wall time."""
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        yield out
    finally:
        out["seconds"] = time.perf_counter() - t0


def median(values: Sequence[float]) -> float:
    """Median of a non-empty sequence (NaN for an empty one)."""
    vals = [float(v) for v in values]
    return statistics.median(vals) if vals else math.nan


def _jsonable(obj: Any) -> Any:
    import numpy as np  # not at the top: the bad-input sweep sets thread limits before numpy loads

    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return None if not math.isfinite(float(obj)) else float(obj)
    if isinstance(obj, float):
        return None if not math.isfinite(obj) else obj
    if isinstance(obj, np.ndarray):
        return [_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    return obj


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], align: str | None = None) -> str:
    """A GitHub markdown table; ``align`` is one character per column, ``l`` or ``r``.

    Examples
    --------
    >>> print(md_table(["a", "b"], [[1, 2]], align="lr"))
    | a | b |
    |---|---:|
    | 1 | 2 |
    """
    if align is None:
        align = "l" * len(headers)
    if len(align) != len(headers):
        raise ValueError(f"align must have one character per column ({len(headers)}), got {align!r}")
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(map(str, headers)) + " |", "|" + "|".join(sep) + "|"]
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"a row has {len(row)} cells, expected {len(headers)}")
        lines.append("| " + " | ".join(map(str, row)) + " |")
    return "\n".join(lines)


def md_section(title: str, intro: str | Sequence[str] | None, headers: Sequence[str],
               rows: Iterable[Sequence[Any]], align: str | None = None) -> list[str]:
    """The lines of one section of a markdown report: ``## title``, the intro, a table, a blank line.

    ``intro`` is a paragraph (or a list of them), each followed by a blank line; ``rows`` are
    the table's rows, their cells already formatted (``str`` is applied to each), as in
    :func:`md_table`. Append the result to the report's lines.

    Examples
    --------
    >>> md_section("Speed", "Seconds per run.", ["n", "s"], [[1, "0.5"]], align="rr")
    ['## Speed', '', 'Seconds per run.', '', '| n | s |', '|---:|---:|', '| 1 | 0.5 |', '']
    """
    paragraphs = [intro] if isinstance(intro, str) else list(intro or [])
    lines = [f"## {title}", ""]
    for paragraph in paragraphs:
        lines += [paragraph, ""]
    return lines + md_table(headers, list(rows), align).split("\n") + [""]


def read_result(name: str, results_dir: Path | str | None = None) -> Any:
    """``<results_dir>/<name>`` read as JSON (``name`` with its ending), or ``None`` if there is none.

    ``results_dir`` defaults to the results directory (:data:`RESULTS`): what a report reads back
    from the runs an earlier subcommand wrote.
    """
    path = Path(RESULTS if results_dir is None else results_dir) / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def save(name: str, payload: Any = None, markdown: str | Sequence[str] | None = None, *, indent: int = 2,
         results_dir: Path | str | None = None) -> None:
    """Write ``<results_dir>/<name>.json`` (``payload`` as it is, numpy numbers as floats) and
    ``<name>.md`` (a str as it is, or lines joined with one newline at the end); either may be
    left out.

    Unlike :func:`write_results`, nothing is added or converted: what a benchmark that builds its
    own payload (with :func:`machine_info` and its load) and its own report writes.
    """
    out = Path(RESULTS if results_dir is None else results_dir)
    out.mkdir(parents=True, exist_ok=True)
    if payload is not None:
        (out / f"{name}.json").write_text(json.dumps(payload, indent=indent, default=float), encoding="utf-8")
    if markdown is not None:
        text = markdown if isinstance(markdown, str) else "\n".join(markdown) + "\n"
        (out / f"{name}.md").write_text(text, encoding="utf-8")


def write_results(name: str, payload: dict[str, Any], markdown: str,
                  results_dir: Path | str | None = None) -> tuple[Path, Path]:
    """Write ``<results_dir>/<name>.json`` (``payload`` plus the load at the end) and ``.md``.

    ``results_dir`` defaults to the results directory (:data:`RESULTS`).

    Non-finite floats become ``null`` in the JSON. Returns the two paths.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    if not isinstance(payload, dict):
        raise TypeError(f"payload must be a dict, got {type(payload).__name__}")
    out = Path(RESULTS if results_dir is None else results_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = dict(payload)
    machine = dict(data.get("machine", {}))
    machine["loadavg_at_end"] = loadavg()
    data["machine"] = machine
    jpath, mpath = out / f"{name}.json", out / f"{name}.md"
    jpath.write_text(json.dumps(_jsonable(data), indent=2, sort_keys=False) + "\n", encoding="utf-8")
    mpath.write_text(markdown.rstrip() + "\n", encoding="utf-8")
    return jpath, mpath


def fmt_load(load: Sequence[float] | None) -> str:
    """``"1.2 / 1.5 / 0.9"`` for a load-average triple, ``"n/a"`` for none."""
    return "n/a" if not load else " / ".join(f"{v:.2f}" for v in load)
