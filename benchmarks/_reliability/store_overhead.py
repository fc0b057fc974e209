"""What the store's damage checks cost (issue 31 item 4): per-row checksums and a checkpoint per write.

A store-heavy run: ``JKFoldGrid(10, 10)`` over 20 candidates (2,000 evaluations) whose evaluate
function returns at once (a simulated score: the candidate's value plus Gaussian noise from the
draw's seed, and an optional 1,000-number payload), so the time is the engine's and the store's.
Each variant runs the same call on a fresh store file:

* ``checks``: this certa (a CRC-32 per row written and checked on read; a passive WAL
  checkpoint at most every ``SQLiteStore.checkpoint_interval`` = 0.25 s, by a timer when writes wait);
* ``checks, checkpoint after every write``: the same with a checkpoint after each claim and each
  recorded evaluation (``checkpoint_interval = 0``);
* ``no checkpoint``: the same without the checkpoints (SQLite's own, every 1,000 pages);
* ``no checkpoint, no checksum``: neither (what certa did before: the anchor of the ratios).

It also times ``certa.load`` of the finished store (reading and checking every row) against
reading without the checksum check. Each variant is run ``--repeats`` times, alternating, the
median is reported.

Run: ``python benchmarks/reliability.py store-overhead`` -> ``results/store_overhead.{json,md}``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from contextlib import contextmanager

import numpy as np
from _common import fmt_load, loadavg, machine_info, md_table, write_results

import certa.engine.store as store_mod
import certa.engine.store_reader as reader_mod
import certa.engine.store_rows as rows_mod
from certa import FunctionEvaluator, JKFoldGrid, SQLiteStore, load, run


def score(params, seed):
    return float(params["x"]) + float(np.random.default_rng(seed).normal(0, 0.3))


def with_payload(params, seed):
    return {"score": score(params, seed), "payload": {"a": np.random.default_rng(seed).normal(size=1000)}}


@contextmanager
def variant(name: str):
    """Switch the checkpoint and the checksum off as ``name`` says (restored afterwards)."""
    saved = (SQLiteStore.checkpoint, store_mod.checksum, reader_mod.read_rows, store_mod.read_rows,
             SQLiteStore.checkpoint_interval)
    if "every write" in name:
        SQLiteStore.checkpoint_interval = 0
    if "no checkpoint" in name:
        SQLiteStore.checkpoint = lambda self: None
    if "no checksum" in name:
        store_mod.checksum = lambda values: 0

        def unchecked(path, raw, verify):
            return rows_mod.read_rows(path, raw, False)

        reader_mod.read_rows = store_mod.read_rows = unchecked
    try:
        yield
    finally:
        (SQLiteStore.checkpoint, store_mod.checksum, reader_mod.read_rows, store_mod.read_rows,
         SQLiteStore.checkpoint_interval) = saved


VARIANTS = ("checks", "checks, checkpoint after every write", "no checkpoint", "no checkpoint, no checksum")


def one(name: str, fn, folder: str, k: int, n_candidates: int) -> dict:
    path = os.path.join(folder, f"s{k}.sqlite")
    grid = {"x": [i / 100 for i in range(n_candidates)]}
    with variant(name):
        t0 = time.perf_counter()
        sel = run(JKFoldGrid(10, 10), FunctionEvaluator(fn), grid, random_state=0, store=path, progress=False)
        t_run = time.perf_counter() - t0
        t0 = time.perf_counter()
        loaded = load(path)
        t_load = time.perf_counter() - t0
    assert loaded.best_params == sel.best_params and len(loaded.attempts) == 100 * n_candidates
    return {"variant": name, "run_s": t_run, "load_s": t_load, "bytes": os.path.getsize(path)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="reliability.py store-overhead", description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--candidates", type=int, default=20)
    ap.add_argument("--folder", default=None, help="where the stores are written (default: a temporary folder)")
    args = ap.parse_args(argv)
    load_before = loadavg()
    rows = []
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        k = 0
        for payload_name, fn in (("score only", score), ("score + 1,000-number payload", with_payload)):
            for _ in range(args.repeats):
                for name in VARIANTS:
                    k += 1
                    rows.append({"payload": payload_name, **one(name, fn, folder, k, args.candidates)})
    summary = []
    for payload_name in ("score only", "score + 1,000-number payload"):
        med = {name: {m: statistics.median(r[m] for r in rows if r["variant"] == name and r["payload"] == payload_name)
                      for m in ("run_s", "load_s")} for name in VARIANTS}
        anchor = med["no checkpoint, no checksum"]
        for name in VARIANTS:
            summary.append({"payload": payload_name, "variant": name, "run_s": med[name]["run_s"],
                            "run_ratio": med[name]["run_s"] / anchor["run_s"], "load_s": med[name]["load_s"],
                            "load_ratio": med[name]["load_s"] / anchor["load_s"]})
    payload = {"settings": vars(args), "evaluations": 100 * args.candidates, "rows": rows, "summary": summary,
               "machine": machine_info(), "load_before": load_before, "load_after": loadavg()}
    md = (f"Store overhead: JKFoldGrid(10, 10) x {args.candidates} candidates = {100 * args.candidates} "
          f"evaluations of an instant function, medians of {args.repeats} runs (load {fmt_load(load_before)} "
          f"before, {fmt_load(payload['load_after'])} after)\n\n"
          + md_table(["evaluations return", "variant", "run (s)", "run ratio", "load (s)", "load ratio"],
                     [[s["payload"], s["variant"], f"{s['run_s']:.2f}", f"{s['run_ratio']:.2f}",
                       f"{s['load_s']:.2f}", f"{s['load_ratio']:.2f}"] for s in summary], align="llrrrr"))
    write_results("store_overhead", payload, md)
    print(md)
