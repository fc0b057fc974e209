"""Issue 31 items 2-4: store errors name the store and the cause, readers write nothing, and silent
damage (flipped bits, a ``-wal`` file cut short) is detected or survived."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from _isolation import ROOT, remove, run_script, shared_dir

import certa.engine.store_reader as reader_mod
from certa import FunctionEvaluator, JKFoldGrid, SQLiteStore, StoreDamageWarning, StoreError, load, run
from certa.cli import main

GRID = {"x": [0.0, 0.1, 0.2, 0.3]}


#: Every evaluation of noisy/with_payload, in order (a mutable global: it does not change the run's fingerprint).
LOG: list = []


def noisy(params, seed):
    LOG.append((params["x"], seed))
    return float(params["x"]) + float(np.random.default_rng(seed).normal(0, 0.3))


def with_payload(params, seed):
    return {"score": noisy(params, seed), "payload": {"a": np.random.default_rng(seed).normal(size=1500)}}


def grid_run(store, fn=noisy, repeats=2):
    return run(JKFoldGrid(5, repeats), FunctionEvaluator(fn), GRID, random_state=0, store=store, progress=False)


def rows_of(path) -> list[tuple]:
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return con.execute("SELECT seq, draw_key, attempt, status, score FROM evaluations ORDER BY seq").fetchall()
    finally:
        con.close()


def one_line_cli_error(argv, capsys, *words):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


# ---------------------------------------------------------------- item 2: store errors
def _check_full_disk_then_resume(path, message, first_rows, resumed_log, total):
    """The error names the file and says the disk is full; the resumed run evaluated only what was missing."""
    assert os.path.basename(path) in message and "the disk holding it is full" in message, message
    assert "recorded before are kept" in message and "run the same call again" in message, message
    stored_keys = {k for _, k, *_ in first_rows}
    assert 0 < len(first_rows) < total
    assert len(resumed_log) == total - len(stored_keys), "the resumed run repeated stored evaluations"


def test_a_full_disk_mid_run_is_a_store_error_and_the_rerun_repeats_nothing(tmp_path):
    # SQLite's own limit on the file's size (max_page_count) makes it answer SQLITE_FULL as on a full disk
    path = tmp_path / "full.sqlite"
    store = SQLiteStore(path)
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count={pages + 40}")
    with pytest.raises(StoreError) as info:
        grid_run(store, with_payload)
    store.close()
    err = info.value
    assert isinstance(err, OSError) and isinstance(err, ValueError) and err.path == str(path)
    first = rows_of(path)
    LOG.clear()
    resumed = grid_run(path, with_payload)
    _check_full_disk_then_resume(str(path), str(err), first, LOG, 40)
    assert len(rows_of(path)) == 40 and len({(k, a) for _, k, a, *_ in rows_of(path)}) == 40
    assert resumed.best_params == grid_run(None, with_payload).best_params


FULL_DISK = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    from certa import FunctionEvaluator, JKFoldGrid, StoreError, run
    folder = sys.argv[1]; path = os.path.join(folder, "s.sqlite"); filler = os.path.join(folder, "filler")
    with open(filler, "wb") as fh:
        fh.write(b"x" * 1_500_000)
    def fn(p, seed):
        log.append(seed)
        rng = np.random.default_rng(seed)
        return {"score": p["x"] + rng.normal(0, 0.3), "payload": {"a": rng.normal(size=2000)}}
    log = []
    grid = {"x": [0.0, 0.1, 0.2, 0.3]}
    try:
        run(JKFoldGrid(5, 2), FunctionEvaluator(fn), grid, random_state=0, store=path, progress=False)
        message = None
    except StoreError as exc:
        message = str(exc)
    import sqlite3
    first = sqlite3.connect(path).execute("SELECT seq, draw_key FROM evaluations").fetchall()
    os.remove(filler)  # space freed: the same call resumes
    log = []
    sel = run(JKFoldGrid(5, 2), FunctionEvaluator(fn), grid, random_state=0, store=path, progress=False)
    rows = sqlite3.connect(path).execute("SELECT draw_key, attempt FROM evaluations").fetchall()
    print(json.dumps({"message": message, "first": first, "log": log, "rows": len(rows),
                      "distinct": len(set(rows)), "best": sel.best_params}))
""")


def test_a_really_full_disk_mid_run(tmp_path):
    folder = shared_dir()
    try:
        out = run_script(FULL_DISK, str(folder), tmpfs=(str(folder), "2m"))
    finally:
        remove(folder)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["message"] is not None, "the run did not meet the full disk"
    _check_full_disk_then_resume(str(folder / "s.sqlite"), res["message"], res["first"], res["log"], 40)
    assert res["rows"] == res["distinct"] == 40


WRITER = textwrap.dedent("""
    import sys
    from certa import FunctionEvaluator, JKFoldGrid, StoreError, run
    try:
        run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: p["x"]), {"x": [1, 2]}, store=sys.argv[1], progress=False)
        print("ran")
    except StoreError as exc:
        print("StoreError:", exc)
""")


def test_a_read_only_store_or_directory_is_a_store_error_naming_the_cause():
    folder = shared_dir()
    try:
        store = folder / "ro-dir" / "s.sqlite"
        store.parent.mkdir()
        grid_run(store)
        store.parent.chmod(0o555)  # the file is writable, its directory is not: no -wal can be created
        out = run_script(WRITER, str(store), unprivileged=True)
        assert "StoreError:" in out.stdout and "Traceback" not in out.stderr, out.stdout + out.stderr
        assert "s.sqlite'" in out.stdout and "directory" in out.stdout and "read-only" in out.stdout, out.stdout
        assert "certa.load" in out.stdout  # what to do: read it instead, or make it writable
        ro_file = folder / "ro-file.sqlite"
        grid_run(ro_file)
        ro_file.chmod(0o444)
        out = run_script(WRITER, str(ro_file), unprivileged=True)
        assert "StoreError:" in out.stdout and "ro-file.sqlite'" in out.stdout, out.stdout + out.stderr
        assert "permission denied" in out.stdout, out.stdout
    finally:
        remove(folder)


def test_a_store_on_a_read_only_file_system_is_a_store_error():
    folder = shared_dir()
    try:
        grid_run(folder / "s.sqlite")
        out = run_script(WRITER, str(folder / "s.sqlite"), read_only_mount=str(folder))
        assert "StoreError:" in out.stdout and "read-only filesystem" in out.stdout, out.stdout + out.stderr
    finally:
        remove(folder)


def _damage(path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "garbage":
        page = 4096
        data[page:page * 3] = os.urandom(2 * page)  # pages 2-3 (the tables' roots) overwritten
    else:
        data = data[: len(data) // 2]
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["garbage", "truncated"])
def test_a_damaged_file_is_a_store_error_for_runs_and_readers(tmp_path, capsys, how):
    path = tmp_path / "d.sqlite"
    grid_run(path, with_payload)
    _damage(path, how)
    with pytest.raises(StoreError, match=r"d\.sqlite' is damaged.*changed outside certa.*new store"):
        grid_run(path, with_payload)
    with pytest.raises(StoreError, match=r"d\.sqlite' is damaged"):
        load(path)
    one_line_cli_error(["show", str(path)], capsys, "d.sqlite", "is damaged")
    one_line_cli_error(["report", str(path), "-o", str(tmp_path / "r.html")], capsys, "d.sqlite", "is damaged")


def test_a_dangling_symbolic_link_is_a_store_error_naming_its_target(tmp_path, capsys):
    link = tmp_path / "link.sqlite"
    link.symlink_to(tmp_path / "gone" / "target.sqlite")
    with pytest.raises(StoreError, match=r"link\.sqlite' cannot be used: it is a symbolic link to .*gone/target"):
        grid_run(link)
    with pytest.raises(StoreError, match=r"link\.sqlite' is a symbolic link to .*gone/target.*does not exist"):
        load(link)
    one_line_cli_error(["show", str(link)], capsys, "link.sqlite", "symbolic link")
    (tmp_path / "gone").mkdir()  # a link whose target can be made is followed, as open() would
    grid_run(link)
    assert (tmp_path / "gone" / "target.sqlite").is_file() and load(link).finished


# ---------------------------------------------------------------- item 3: readers write nothing
def _state(folder) -> dict:
    return {p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(folder.iterdir())}


def test_readers_open_the_store_read_only_and_change_nothing(tmp_path, monkeypatch):
    folder = tmp_path / "runs"
    folder.mkdir()
    path = folder / "s.sqlite"
    grid_run(path)
    before = _state(folder)
    uris = []
    real = sqlite3.connect

    def spy(target, *args, **kwargs):
        uris.append(str(target))
        return real(target, *args, **kwargs)

    monkeypatch.setattr(reader_mod.sqlite3, "connect", spy)
    sel = load(path)
    assert main(["show", str(path)]) == 0
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    assert uris and all(u.startswith("file:") and "mode=ro" in u for u in uris), uris
    assert _state(folder) == before  # no file created, none changed
    assert sel.finished and sel.n_evaluations == 40


READER = textwrap.dedent("""
    import sys, warnings
    warnings.simplefilter("error")
    from certa import load
    sel = load(sys.argv[1])
    print("loaded", len(sel.attempts), sel.finished)
""")


def test_load_works_on_a_read_only_directory_and_file(tmp_path):
    folder = shared_dir()
    try:
        grid_run(folder / "s.sqlite")
        (folder / "s.sqlite").chmod(0o444)
        folder.chmod(0o555)
        before = _state(folder)
        out = run_script(READER, str(folder / "s.sqlite"), unprivileged=True)
        assert out.stdout.strip() == "loaded 40 True", out.stdout + out.stderr
        assert _state(folder) == before
    finally:
        remove(folder)


def test_load_works_on_a_read_only_file_system_beside_a_killed_runs_log(tmp_path):
    folder = shared_dir()
    try:
        work = tmp_path / "s.sqlite"
        grid_run(work)
        # a run killed mid-way leaves its -wal and -shm files, with rows not yet in the file: here the
        # log deletes rows 21-40, so a reader that ignored it would see 40 rows instead of 20
        con = sqlite3.connect(work, isolation_level=None)
        con.execute("PRAGMA wal_autocheckpoint=0")
        con.execute("DELETE FROM evaluations WHERE seq > 20")
        for side in ("", "-wal", "-shm"):
            shutil.copy(f"{work}{side}", folder / f"s.sqlite{side}")
        con.close()
        before = _state(folder)
        out = run_script(READER, str(folder / "s.sqlite"), read_only_mount=str(folder))
        assert out.stdout.strip() == "loaded 20 False", out.stdout + out.stderr
        assert _state(folder) == before
    finally:
        remove(folder)


HOLD = textwrap.dedent("""
    import sqlite3, sys
    con = sqlite3.connect(sys.argv[1], isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    con.execute("INSERT INTO claims VALUES ('k', 't', 'h', 1, '', 0)")
    print("holding", flush=True)
    sys.stdin.readline()
    con.execute("COMMIT")
""")


def test_load_works_while_another_process_holds_a_write_transaction(tmp_path):
    path = tmp_path / "s.sqlite"
    grid_run(path)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        sel = load(path)  # a write transaction does not block a reader in WAL mode
        assert sel.finished and sel.n_evaluations == 40
        assert sorted(os.listdir(tmp_path)) == ["s.sqlite", "s.sqlite-shm", "s.sqlite-wal"]
    finally:
        holder.communicate("\n", timeout=60)
    assert holder.returncode == 0


WRITING = textwrap.dedent("""
    import sys, time
    import numpy as np
    from certa import FunctionEvaluator, JKFoldGrid, run
    def fn(p, seed):
        time.sleep(0.02)
        return p["x"] + np.random.default_rng(seed).normal(0, 0.3)
    run(JKFoldGrid(5, 4), FunctionEvaluator(fn), {"x": [0.0, 0.1, 0.2, 0.3]}, random_state=0, store=sys.argv[1],
        progress=False)
""")


def test_load_works_while_another_process_keeps_writing(tmp_path):
    from _gate import wait_until
    from _helpers import stored_rows

    path = tmp_path / "s.sqlite"
    writer = subprocess.Popen([sys.executable, "-c", WRITING, str(path)], stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    counts = []
    try:
        wait_until(lambda: stored_rows(path) > 0, "the writer's first evaluation", writer)
        while writer.poll() is None:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no damage seen mid-write
                counts.append(load(path).attempts.shape[0])
    finally:
        writer.wait(timeout=600)
    assert writer.returncode == 0, writer.stderr.read()
    assert counts == sorted(counts) and counts[0] >= 1
    final = load(path)
    assert final.finished and final.n_evaluations == 80


# ---------------------------------------------------------------- item 4: silent damage detected
def _score_offsets(data: bytes, rows) -> list[tuple[int, int]]:
    """(seq, offset) of every score whose 8-byte big-endian double appears exactly once in the file."""
    out = []
    for seq, _k, _a, status, score in rows:
        if status == "ok" and score is not None and score != int(score):
            pattern = struct.pack(">d", score)
            if data.count(pattern) == 1:
                out.append((seq, data.index(pattern)))
    return out


def test_single_bit_flips_inside_stored_scores_are_named_and_re_evaluated(tmp_path):
    original = tmp_path / "s.sqlite"
    reference = grid_run(original)
    data = original.read_bytes()
    targets = _score_offsets(data, rows_of(original))[:10]
    assert len(targets) == 10
    bits = [0, 7, 13, 21, 30, 38, 45, 51, 52, 63]  # low and high mantissa, exponent, sign
    for (seq, offset), bit in zip(targets, bits):
        damaged = bytearray(data)
        byte = offset + 7 - bit // 8  # big-endian: bit 0 is in the last byte
        damaged[byte] ^= 1 << (bit % 8)
        copy = tmp_path / f"flip{seq}.sqlite"
        copy.write_bytes(bytes(damaged))
        with pytest.warns(StoreDamageWarning, match=rf"flip{seq}\.sqlite': 1 row\(s\) fail their checksum.*seq {seq} "):
            sel = load(copy)
        assert len(sel.attempts) == 39 and seq not in set(sel.attempts["seq"])
        LOG.clear()
        with pytest.warns(StoreDamageWarning, match=rf"seq {seq} .*moved to its 'damaged' table and evaluated again"):
            resumed = grid_run(copy)
        assert len(LOG) == 1  # the damaged draw only, evaluated again
        assert resumed.best_params == reference.best_params
        np.testing.assert_allclose(resumed.result["estimates"], reference.result["estimates"], rtol=0, atol=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert len(load(copy).attempts) == 40  # set apart once: the store is whole again
        con = sqlite3.connect(copy)
        assert [r[0] for r in con.execute("SELECT seq FROM damaged")] == [seq]
        con.close()


@pytest.mark.parametrize("sql", [
    "UPDATE evaluations SET score = score + 1e-12 WHERE seq = 3",
    "UPDATE evaluations SET status = 'failed', score = NULL WHERE seq = 3",
    "UPDATE evaluations SET attempt = 2 WHERE seq = 3",
    "UPDATE evaluations SET draw_key = draw_key || 'x' WHERE seq = 3",
    "UPDATE evaluations SET details = '{\"n\": 1}' WHERE seq = 3",
    "UPDATE evaluations SET payload = NULL WHERE seq = 3",
    "UPDATE evaluations SET checksum = checksum + 1 WHERE seq = 3",
    "UPDATE evaluations SET checksum = NULL WHERE seq = 3",
    "UPDATE evaluations SET draw = CAST(X'7b22ff' AS TEXT) WHERE seq = 3",  # invalid UTF-8
])
def test_a_row_changed_outside_certa_is_never_used(tmp_path, sql):
    path = tmp_path / "s.sqlite"
    grid_run(path, with_payload)
    con = sqlite3.connect(path)
    con.execute(sql)
    con.commit()
    con.close()
    with pytest.warns(StoreDamageWarning, match=r"s\.sqlite': 1 row\(s\) fail their checksum.*seq 3 "):
        assert len(load(path).attempts) == 39


def _as_format_2(path) -> None:
    con = sqlite3.connect(path)
    con.execute("ALTER TABLE evaluations DROP COLUMN checksum")
    con.execute("UPDATE meta SET value='2' WHERE key='format'")
    con.execute("DELETE FROM meta WHERE key='checksum'")
    con.commit()
    con.close()


def test_a_store_without_checksums_loads_and_a_run_adds_them(tmp_path):
    path = tmp_path / "old.sqlite"
    reference = grid_run(path)
    _as_format_2(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load(path).best_params == reference.best_params  # read as it is: nothing to check against
    LOG.clear()
    assert grid_run(path).best_params == reference.best_params and LOG == []
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta WHERE key='format'").fetchone() == ("3",)
    assert con.execute("SELECT COUNT(*) FROM evaluations WHERE checksum IS NULL").fetchone() == (0,)
    con.execute("UPDATE evaluations SET score = score + 1e-12 WHERE seq = 5")
    con.commit()
    con.close()
    with pytest.warns(StoreDamageWarning, match="seq 5 "):
        load(path)


def test_a_damaged_run_description_is_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    grid_run(path)
    con = sqlite3.connect(path)
    desc = con.execute("SELECT value FROM meta WHERE key='description'").fetchone()[0]
    con.execute("UPDATE meta SET value=? WHERE key='description'", (desc.replace('"seed": 0', '"seed": 1'),))
    con.commit()
    con.close()
    with pytest.raises(StoreError, match=r"s\.sqlite' is damaged: its run description"):
        load(path)
    with pytest.raises(StoreError, match=r"s\.sqlite' is damaged: its run description"):
        grid_run(path)


# ---------------------------------------------------------------- item 4: the -wal file cut short
@pytest.mark.parametrize("size", [0, 10_000])
def test_a_wal_file_cut_short_mid_run_loses_nothing(tmp_path, size):
    from _gate import wait_until

    path = tmp_path / "s.sqlite"
    store = SQLiteStore(path)
    calls = {"n": 0}

    def fn(params, seed):
        calls["n"] += 1
        if calls["n"] == 25:  # as a user or a tool could, once the last writes reached the file
            wait_until(lambda: getattr(store, "_log_floor", 0) == 0, "the checkpoint of the writes so far")
            os.truncate(f"{path}-wal", min(size, os.path.getsize(f"{path}-wal")))
        return noisy(params, seed)

    sel = grid_run(store, fn)
    store.close()
    assert sorted(os.listdir(tmp_path)) == ["s.sqlite"]
    loaded = load(path)
    assert loaded.finished and loaded.n_evaluations == 40 and loaded.best_params == sel.best_params
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    con.close()


def test_a_wal_file_cut_short_during_a_write_loses_only_that_evaluation(tmp_path):
    path = tmp_path / "s.sqlite"

    class CutShort(SQLiteStore):
        n, cut = 0, False
        checkpoint_interval = 0  # a checkpoint after every write: the cut falls between commit and checkpoint

        def record(self, draw, outcome):
            CutShort.n += 1
            self.cut = CutShort.n == 15
            super().record(draw, outcome)

        def checkpoint(self):
            if self.cut:  # the 15th row is committed to the log, not yet in the file
                self.cut = False
                os.truncate(f"{self.path}-wal", 0)
            super().checkpoint()

    store = CutShort(path)
    with pytest.raises(StoreError, match=r"s\.sqlite' lost its last writes: its write-ahead log .*cut short"):
        grid_run(store)
    store.close()
    kept = rows_of(path)
    assert len(kept) == 14  # every evaluation but the one being written
    LOG.clear()
    resumed = grid_run(path)
    assert len(LOG) == 40 - 14 and resumed.best_params == grid_run(None).best_params


def test_a_wal_file_cut_short_after_a_run_while_a_reader_holds_it_open(tmp_path):
    path = tmp_path / "s.sqlite"
    holder = sqlite3.connect(path, check_same_thread=False)

    def fn(params, seed):
        holder.execute("SELECT COUNT(*) FROM evaluations").fetchone()  # a reader joins the log mid-run
        return noisy(params, seed)

    sel = grid_run(path, fn)
    assert os.path.exists(f"{path}-wal")  # the reader still holds the store: its log is kept
    os.truncate(f"{path}-wal", 0)
    holder.close()
    loaded = load(path)
    assert len(loaded.attempts) == 40 and loaded.best_params == sel.best_params
