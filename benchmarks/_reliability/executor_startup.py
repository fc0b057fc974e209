"""Start-up cost of each executor: the wall time of a run of 16 trivial evaluations.

Each executor runs ``certa.run(JKFoldGrid(4, 2), FunctionEvaluator(noop), {"x": [1, 2]})``
(16 evaluations that take no time), including whatever it must start: nothing for inline,
2 loky worker processes, a Dask ``LocalCluster`` of 2 worker processes (started and closed
inside the timing), a local Ray instance with 2 CPUs (``ray.init`` / ``ray.shutdown`` inside
the timing). The executors are timed alternately, ``--rounds`` times; medians are reported
with ratios to the inline run of the same round. A second line per executor is the same
run on an executor that is already up (what a long job pays per evaluation batch).

Run: ``nice python benchmarks/reliability.py executor-startup [--rounds 3]``.
"""
from __future__ import annotations

import argparse
import time

# _common puts this repository first on sys.path
from _common import machine_info, md_table, median, write_results

import certa


def noop(params, seed):
    return 1.0


def one_run(executor=None, n_jobs=1):
    return certa.run(certa.JKFoldGrid(4, 2), certa.FunctionEvaluator(noop), {"x": [1, 2]}, executor=executor,
                     n_jobs=n_jobs)


def time_inline():
    t = time.perf_counter()
    one_run()
    return time.perf_counter() - t, None


def time_loky():
    from joblib.externals.loky import get_reusable_executor  # joblib's copy, the one certa uses

    get_reusable_executor().shutdown(wait=True)  # start cold
    t = time.perf_counter()
    one_run(n_jobs=2)
    cold = time.perf_counter() - t
    t = time.perf_counter()
    one_run(n_jobs=2)
    return cold, time.perf_counter() - t


def time_dask():
    import distributed

    t = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        one_run(executor=client)
        cold = time.perf_counter() - t
        t2 = time.perf_counter()
        one_run(executor=client)
        warm = time.perf_counter() - t2
    return cold, warm


def time_ray():
    import ray

    t = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        one_run(executor="ray")
        cold = time.perf_counter() - t
        t2 = time.perf_counter()
        one_run(executor="ray")
        warm = time.perf_counter() - t2
    finally:
        ray.shutdown()
    return cold, warm


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="reliability.py executor-startup", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    timers = {"inline": time_inline, "loky (2 processes)": time_loky, "dask LocalCluster (2 processes)": time_dask,
              "ray local (2 CPUs)": time_ray}
    cold = {k: [] for k in timers}
    warm = {k: [] for k in timers}
    for _ in range(args.rounds):
        for name, fn in timers.items():  # alternately, so the load hits every executor alike
            c, w = fn()
            print(f"{name}: first run {c:.2f} s" + ("" if w is None else f", second {w:.3f} s"), flush=True)
            cold[name].append(c)
            if w is not None:
                warm[name].append(w)
    anchor = median(cold["inline"])
    rows = [[name, f"{median(cold[name]):.2f}", f"{median(cold[name]) / anchor:.0f}x" if name != "inline" else "1x",
             f"{median(warm[name]):.3f}" if warm[name] else "-"] for name in timers]
    md = ("Start-up cost of each executor: a run of 16 trivial evaluations, the executor started inside the "
          f"timing (median of {args.rounds} rounds, executors alternated; inline run {anchor * 1000:.1f} ms).\n\n"
          + md_table(["executor", "first run incl. start-up (s)", "vs inline", "second run, already up (s)"], rows)
          + "\n")
    write_results("executor_startup", {"rounds": args.rounds, "cold_seconds": cold, "warm_seconds": warm,
                                       "machine": machine_info()}, md)
    print(md)
