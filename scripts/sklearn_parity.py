"""Count the outcomes of scikit-learn's own search tests run against certa (for docs/sklearn-parity.md).

Runs ``tests/sklearn_parity`` (scikit-learn's ``test_search.py`` and its meta-estimator
delegation test with certa's classes substituted, and the estimator checks) and prints,
per scikit-learn test function, how many of its collected cases ran, passed, failed,
failed as documented (xfail), were skipped by scikit-learn itself, or were not run
(deselected: they do not exercise GridSearchCV/RandomizedSearchCV); then the totals.

    python scripts/sklearn_parity.py [--all]   # --all: also the slow estimator checks
"""
from __future__ import annotations

import argparse
import collections
import sys
import time

import pytest

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's certa, not an installed one


class _Recorder:
    def __init__(self) -> None:
        self.outcome: dict[str, str] = {}
        self.deselected: list[str] = []

    def pytest_deselected(self, items):
        self.deselected.extend(i.nodeid for i in items)

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            if hasattr(report, "wasxfail"):
                state = "xfailed" if report.outcome == "skipped" else "xpassed"
            else:
                state = report.outcome
            self.outcome[report.nodeid] = state


def _function(nodeid: str) -> tuple[str, str]:
    path, _, rest = nodeid.partition("::")
    return path.rsplit("/", 1)[-1], rest.split("[", 1)[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="also run the slow estimator checks")
    args = ap.parse_args()
    rec = _Recorder()
    t0 = time.perf_counter()
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-W", "ignore", str(ROOT / "tests" / "sklearn_parity")]
                       + (["-m", "slow or not slow"] if args.all else []), plugins=[rec])
    wall = time.perf_counter() - t0
    table: dict[tuple[str, str], collections.Counter] = collections.defaultdict(collections.Counter)
    for nodeid, state in rec.outcome.items():
        table[_function(nodeid)][state] += 1
    for nodeid in rec.deselected:
        table[_function(nodeid)]["not run"] += 1
    states = ["passed", "failed", "xfailed", "xpassed", "skipped", "not run"]
    print("\n| file | test | " + " | ".join(states) + " |")
    print("|---|---|" + "---|" * len(states))
    totals: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for (path, name), counts in sorted(table.items()):
        print(f"| {path} | {name} | " + " | ".join(str(counts[s]) for s in states) + " |")
        totals[path].update(counts)
    print("\n| file | " + " | ".join(states) + " |")
    print("|---|" + "---|" * len(states))
    for path, counts in sorted(totals.items()):
        print(f"| {path} | " + " | ".join(str(counts[s]) for s in states) + " |")
    print(f"\nwall time {wall:.0f} s, pytest exit code {code}")
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
