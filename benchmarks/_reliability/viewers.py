"""``certa show`` and ``certa report`` on stores of many candidates (issue 31 item 6).

For each size N (default 1,000, 10,000 and 100,000) a store is built by
``certa.run(JKFoldGrid(2, 1), FunctionEvaluator(score), [Candidate(i, "same", {"C": i}) ...])``:
**simulated** scores (a formula of the candidate's parameter plus noise from the draw's seed,
no data, no model), 2 evaluations per candidate, every candidate named ``same`` (the store of
the issue). Then each command runs in a fresh process, as a user runs it (imports included):
``certa show STORE``, ``certa show STORE --json``, ``certa report STORE -o report.html``, and
``certa show STORE --all`` (every row). The wall time, the CPU time of the child process, the
bytes written and the load average are recorded; with ``--repeats R`` each command runs R times in a
row and the table gives the smallest and the median wall time (the JSON keeps every run). With ``--anchor DIR`` (a checkout of another
certa, e.g. 042a603 unpacked by ``git archive``) the same commands also run on that code, up to
``--anchor-max`` candidates, and the table gives the ratio.

Run: ``nice python benchmarks/reliability.py viewers [--sizes 1000,10000,100000] [--repeats 3] [--anchor DIR]``.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# _common puts this repository first on sys.path
from _common import ROOT, fmt_load, loadavg, machine_info, md_table, write_results

BUILD = """
import sys, warnings
import numpy as np
import certa
from certa.engine.candidates import Candidate

def score(params, seed):   # simulated: a formula of the parameter, noise from the draw's seed
    return float(np.random.default_rng(seed).normal(0.7 + 0.1 * np.sin(params["C"]), 0.05))

warnings.simplefilter("ignore")
n, path = int(sys.argv[1]), sys.argv[2]
certa.run(certa.JKFoldGrid(2, 1), certa.FunctionEvaluator(score), [Candidate(i, "same", {"C": i}) for i in range(n)],
          store=path, random_state=0)
"""

COMMANDS = {"show": ["show", "{store}"], "show --json": ["show", "{store}", "--json"],
            "report": ["report", "{store}", "-o", "{dir}/report.html"], "show --all": ["show", "{store}", "--all"]}


def _child(code: Path, args: list[str], out_path: Path, timeout: float) -> dict:
    """Run ``python -m certa ARGS`` with ``code`` first on the path; wall and CPU seconds, bytes written.

    The child runs in the output's directory: ``-m`` puts the working directory first on the path.
    """
    env = {**os.environ, "PYTHONPATH": str(code), "COLUMNS": "160"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = loadavg()
    t0 = time.perf_counter()
    with open(out_path, "wb") as out:
        try:
            proc = subprocess.run([sys.executable, "-m", "certa", *args], stdout=out, stderr=subprocess.PIPE,
                                  env=env, cwd=out_path.parent, timeout=timeout, check=False)   # not this checkout
            rc, err = proc.returncode, proc.stderr.decode(errors="replace")[-500:]
        except subprocess.TimeoutExpired:
            rc, err = None, f"timed out after {timeout:.0f} s"
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_seconds": wall, "cpu_seconds": cpu, "returncode": rc, "stderr": err if rc else "",
            "bytes": out_path.stat().st_size, "lines": out_path.read_bytes().count(b"\n"),
            "loadavg_before": load, "loadavg_after": loadavg()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="reliability.py viewers", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000", help="numbers of candidates (comma separated)")
    ap.add_argument("--anchor", type=Path, default=None, help="a checkout of another certa to time the same way")
    ap.add_argument("--anchor-max", type=int, default=10_000, help="largest store the anchor runs on")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed per command")
    ap.add_argument("--repeats", type=int, default=1, help="runs of each command (the table: smallest and median)")
    ap.add_argument("--name", default="viewers", help="results file name (results/NAME.json, .md)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    info = machine_info()
    runs = []
    with tempfile.TemporaryDirectory(prefix="certa-viewers-") as tmp:
        for n in sizes:
            store = Path(tmp) / f"same-{n}.sqlite"
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", BUILD, str(n), str(store)], check=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
            built = time.perf_counter() - t0
            print(f"{n:,} candidates: store built in {built:.1f} s", flush=True)
            codes = [("this", ROOT)] + ([("anchor", args.anchor.resolve())] if args.anchor and n <= args.anchor_max
                                        else [])
            for label, code in codes:
                for command, template in COMMANDS.items():
                    if label == "anchor" and command == "show --all":
                        continue   # the anchor has no --all (its show lists every row)
                    cmd = [a.format(store=store, dir=tmp) for a in template]
                    for repeat in range(args.repeats):
                        res = _child(code, cmd, Path(tmp) / "out.txt", args.timeout)
                        if command == "report" and res["returncode"] == 0:
                            res["bytes"] = (Path(tmp) / "report.html").stat().st_size
                        runs.append({"code": label, "n_candidates": n, "command": f"certa {command}",
                                     "repeat": repeat, "store_build_seconds": built, **res})
                        print(f"  {label:6s} certa {command:12s} {res['wall_seconds']:7.1f} s wall, "
                              f"{res['cpu_seconds']:6.1f} s CPU, {res['bytes']:>10,} bytes, load "
                              f"{fmt_load(res['loadavg_before'])}", flush=True)
    rows = []
    for n in sizes:
        for command in COMMANDS:
            this, anchor = ([r for r in runs if r["code"] == code and r["n_candidates"] == n
                             and r["command"] == f"certa {command}"] for code in ("this", "anchor"))
            wall, cpu = _spread(this, "wall_seconds"), _spread(this, "cpu_seconds")
            ratio = f"{_median(anchor) / _median(this):.1f}x" if anchor else "-"
            rows.append([f"{n:,}", f"certa {command}", wall, cpu, f"{this[0]['bytes']:,}",
                         _spread(anchor, "wall_seconds") if anchor else "-",
                         f"{anchor[0]['bytes']:,}" if anchor else "-", ratio,
                         fmt_load(this[0]["loadavg_before"]) if len(this) == 1 else
                         ", ".join(f"{r['loadavg_before'][0]:.2f}" for r in this if r["loadavg_before"])])
    several = args.repeats > 1
    md = ("Viewers on stores of N candidates all named `same` (simulated scores, 2 evaluations each), "
          "each command in a fresh process (imports included); `report` bytes are the HTML file's. "
          + (f"Each command ran {args.repeats} times: seconds are the smallest / the median; the ratio compares "
             "medians. " if several else "")
          + (f"Anchor: the code in `{args.anchor}`. " if args.anchor else "")
          + f"Machine: {info['cpu_count']} CPUs.\n\n"
          + md_table(["candidates", "command", "wall s" + (" min / median" if several else ""), "CPU s", "bytes",
                      "anchor wall s", "anchor bytes", "anchor / this",
                      "1-min load before each run" if several else "load before"], rows,
                     align="rlrrrrrrl"))
    paths = write_results(args.name, {"machine": info, "sizes": sizes, "anchor": str(args.anchor or ""),
                                      "runs": runs}, md)
    print(md)
    print("wrote", *paths)


def _median(runs: list[dict]) -> float:
    return statistics.median(r["wall_seconds"] for r in runs)


def _spread(runs: list[dict], key: str) -> str:
    """``"5.9"`` for one run, ``"5.9 / 6.2"`` (smallest / median) for several."""
    values = [r[key] for r in runs]
    return f"{values[0]:.1f}" if len(values) == 1 else f"{min(values):.1f} / {statistics.median(values):.1f}"


if __name__ == "__main__":
    main()
