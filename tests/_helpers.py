"""Helpers shared by several test files: a small run kept in a store, counting or altering a store's rows,
and running code in fresh interpreters."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np

from certa import FunctionEvaluator, TopTwoThompson, run

ROOT = Path(__file__).resolve().parents[1]


def small_run(path, fn=None):
    """Two candidates, a top-two run of at most 12 evaluations kept in the store ``path``."""
    fn = fn or (lambda p, s: {"score": float(p["x"]), "payload": {"idx": np.arange(3)}})
    return run(TopTwoThompson(0.9, max_evals=12), FunctionEvaluator(fn), {"x": [1, 2]}, random_state=0, store=path)


def stored_rows(path) -> int:
    """Rows (evaluations) recorded so far in the store ``path``, read-only; 0 before it has any."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.OperationalError:
        return 0
    try:
        return con.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def write_sql(path, sql: str, params=(), resign: bool = True) -> None:
    """Run one statement on the SQLite file ``path`` and commit (to tamper with a store as a user or an attacker could).

    With ``resign`` the rows' checksums (and the run identity's) are computed again afterwards, as
    an attacker could: the edit then reaches certa's field-by-field checks instead of being set
    apart as damage (``resign=False``).
    """
    con = sqlite3.connect(path)
    con.execute(sql, params)
    con.commit()
    con.close()
    if resign:
        resign_store(path)


def resign_store(path) -> None:
    """Give every row of the store ``path`` (and its run identity) the checksum of what it now holds."""
    from certa.engine.store_rows import SELECT_CHECKED, checksum, meta_checksum

    con = sqlite3.connect(path)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "evaluations" in tables and "checksum" in {r[1] for r in con.execute("PRAGMA table_info(evaluations)")}:
        rows = con.execute(f"SELECT seq, {SELECT_CHECKED} FROM evaluations").fetchall()
        con.executemany("UPDATE evaluations SET checksum=? WHERE seq=?", [(checksum(r[1:]), r[0]) for r in rows])
    if "meta" in tables:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        if "checksum" in meta:
            con.execute("UPDATE meta SET value=? WHERE key='checksum'",
                        (meta_checksum(meta.get("fingerprint", ""), meta.get("description", "")),))
    con.commit()
    con.close()


def outputs_under_hash_seeds(code: str, *args: str) -> list[str]:
    """The standard output (stripped) of ``python -c code *args`` under ``PYTHONHASHSEED`` 1 and 2, certa importable."""
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        outs.append(subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                                   text=True, check=True).stdout.strip())
    return outs
