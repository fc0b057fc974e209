"""Store paths that keep nothing or cannot be opened, malformed rows, and a finished store is one file
(issue 26 items 5 and 6, issue 24 found item 5)."""
from __future__ import annotations

import dataclasses
import errno
import json
import os

import pytest
from _helpers import small_run, write_sql

import certa.engine.store as store_mod
from certa import Draw, FunctionEvaluator, JKFoldGrid, SQLiteStore, load, run
from certa.engine.store_rows import _canonical_draw, parse_row


# ------------------------------------------------------------------ item 5: paths
@pytest.mark.parametrize("path", ["", "   ", ":memory:"])
def test_a_store_that_keeps_nothing_is_refused(path):
    with pytest.raises(ValueError, match="nothing would be kept"):
        run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: 1.0), {"x": [1, 2]}, store=path)


def test_a_store_in_a_missing_directory_says_so(tmp_path):
    path = tmp_path / "no" / "such" / "run.sqlite"
    with pytest.raises(ValueError, match=r"directory .*no/such' does not exist"):
        run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: 1.0), {"x": [1, 2]}, store=path)
    assert not (tmp_path / "no").exists()


def test_a_store_on_a_read_only_filesystem_says_so(tmp_path, monkeypatch):
    # a read-only mount cannot be made in a test; the OS answers EROFS to create, as stubbed here
    real_open = os.open

    def read_only(path, flags, *args):
        if os.fspath(path).startswith(os.fspath(tmp_path)) and flags & (os.O_CREAT | os.O_RDWR | os.O_WRONLY):
            raise OSError(errno.EROFS, "Read-only file system", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(store_mod.os, "open", read_only)
    with pytest.raises(ValueError, match="cannot be created in .*read-only filesystem"):
        SQLiteStore(tmp_path / "run.sqlite")
    (tmp_path / "old.sqlite").write_bytes(b"")
    with pytest.raises(ValueError, match="cannot be opened for writing .*read-only filesystem.*certa.load"):
        SQLiteStore(tmp_path / "old.sqlite")


@pytest.mark.skipif(not os.path.isdir("/sys/fs"), reason="needs Linux sysfs (a directory no one can create files in)")
def test_a_store_where_files_cannot_be_created_says_why():
    with pytest.raises(ValueError, match=r"cannot be created in '/sys/fs' \((permission denied|read-only filesystem)"):
        SQLiteStore("/sys/fs/run.sqlite")


# ------------------------------------------------------------------ item 6: every row checked
@pytest.mark.parametrize("sql, message", [
    ("UPDATE evaluations SET draw=json_set(draw, '$.seed', 'x') WHERE seq=2", r"draw seed must be an int.*'x'"),
    ("UPDATE evaluations SET status='weird' WHERE seq=2", r"status must be one of .*'weird'"),
    ("UPDATE evaluations SET attempt=-5 WHERE seq=2", r"attempt must be a positive int, got -5"),
    ("UPDATE evaluations SET details=? WHERE seq=2", r"its JSON is nested too deeply"),
    ("UPDATE evaluations SET draw=json_set(draw, '$.kind', 'zzz') WHERE seq=2", r"draw kind must be one of"),
    ("UPDATE evaluations SET draw=json_set(draw, '$.candidate', -1) WHERE seq=2", r"draw candidate must be a non-negative"),
    ("UPDATE evaluations SET score=NULL WHERE seq=2", r"an 'ok' attempt must have a finite score"),
    ("UPDATE evaluations SET score='high' WHERE seq=2", r"score must be a number"),
    # spelled as certa writes draws (read by their pattern), but out of range
    ("""UPDATE evaluations SET draw=replace(draw, '"seed": ', '"seed": 99999999999') WHERE seq=2""",
     r"draw seed must be an int in \[0, 2\*\*32\), got 99999999999\d*$"),
    ("""UPDATE evaluations SET draw=replace(draw, '"size": null', '"size": 0') WHERE seq=2""",
     r"draw size must be None or a positive int, got 0$"),
    ("""UPDATE evaluations SET draw=replace(draw, '"index": [', '"index": [01, ') WHERE seq=2""",
     r"invalid JSON"),
])
def test_every_malformed_row_is_refused_naming_file_and_row(tmp_path, sql, message):
    path = tmp_path / "run.sqlite"
    small_run(path)
    write_sql(path, sql, ("[" * 100_000 + "]" * 100_000,) if "?" in sql else ())
    with pytest.raises(ValueError, match=r"run\.sqlite' has a malformed row \(seq 2\): " + message):
        small_run(path)
    with pytest.raises(ValueError, match=r"run\.sqlite' has a malformed row \(seq 2\)"):
        load(path)


# ------------------------------------------------------------------ issue 31: draws read by their pattern
@pytest.mark.parametrize("draw", [Draw(0, "full", (), 0), Draw(3, "fold", (0, 4), 2**32 - 1),
                                  Draw(12345, "split", (7,), 99), Draw(2, "subset", (1, 0, 5), 7, size=40)])
def test_a_draw_read_by_its_pattern_is_the_draw_json_gives(draw):
    canonical = draw.to_json()
    other = json.dumps(json.loads(canonical), separators=(",", ":"))   # valid JSON, not as certa writes it
    assert _canonical_draw(canonical) is not None and _canonical_draw(other) is None   # both paths are taken
    rows = [parse_row("s.sqlite", (1, text, 2, "ok", 0.5, None, 0.25, "{}", None)) for text in (canonical, other)]
    assert rows[0] == rows[1]
    for row in rows:
        assert row.draw == draw and row.draw.key == draw.key and hash(row.draw) == hash(draw)
        assert (row.draw.index, row.draw.size, row.outcome.attempt, row.outcome.duration) == (draw.index, draw.size, 2, 0.25)


def test_an_unchecked_draw_is_the_checked_one():
    made = Draw.unchecked(4, "fold", (1, 2), 17, None)
    assert made == Draw(4, "fold", [1, 2], seed=17) and made.key == "fold/c4/1.2"
    assert {made: 1}[Draw(4, "fold", (1, 2), 17)] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.seed = 3


# ------------------------------------------------------------------ issue 24 found item 5: one file
def test_a_finished_run_and_a_reader_leave_one_file(tmp_path):
    path = tmp_path / "s.sqlite"
    small_run(path)
    assert sorted(os.listdir(tmp_path)) == ["s.sqlite"]
    sel = load(path)
    assert sel.finished
    assert sorted(os.listdir(tmp_path)) == ["s.sqlite"]
