"""Helpers shared by certa's benchmarks: machine info, load, timing, result files.

Every benchmark writes ``benchmarks/results/<name>.json`` (all numbers, the settings, the
machine and its load) and ``benchmarks/results/<name>.md`` (the tables quoted in the docs).
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


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


def write_results(name: str, payload: dict[str, Any], markdown: str,
                  results_dir: Path | str = RESULTS) -> tuple[Path, Path]:
    """Write ``<results_dir>/<name>.json`` (``payload`` plus the load at the end) and ``.md``.

    Non-finite floats become ``null`` in the JSON. Returns the two paths.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    if not isinstance(payload, dict):
        raise TypeError(f"payload must be a dict, got {type(payload).__name__}")
    out = Path(results_dir)
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
