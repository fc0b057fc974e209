"""Reading a store without writing anything: ``certa.load``, ``certa show`` and ``certa report``.

A reader never writes to the store or its directory, so it works on a read-only file, directory
or file system, and beside a run that is writing the store:

* when the store has a ``-wal`` file (a run has it open, or was killed), the reader opens it
  with SQLite's ``mode=ro`` and reads everything in one read transaction: it sees the
  evaluations committed when it started, even while another process holds a write transaction,
  and the run is not disturbed. SQLite reads a ``-wal`` and ``-shm`` it cannot write (3.22+);
* when it has none (a finished run: the last connection folded the log into the file), no
  connection is writing it, and the reader opens it ``immutable=1``, which creates no ``-wal`` or
  ``-shm`` file (``mode=ro`` would create them, and leave them). Because ``immutable`` takes no
  lock, the read is checked afterwards: if a ``-wal`` appeared or the file changed meanwhile (a
  run started on it), it is read again, with ``mode=ro``;
* when a ``-wal`` exists but SQLite cannot use it here (a read-only directory without the
  ``-shm`` file), the file alone is read, ``immutable=1``, with a warning: what the run recorded
  since its last checkpoint is then not seen (runs checkpoint within 0.25 s of a write, see
  :meth:`SQLiteStore.record`).
"""
from __future__ import annotations

import json
import os
import sqlite3
import warnings
from dataclasses import dataclass

from .store_errors import StoreDamageWarning, StoreError, error_code, from_sqlite, store_error, why
from .store_rows import SELECT_CHECKED, StoredOutcome, describe_damaged, meta_checksum, read_rows

_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass
class Snapshot:
    """Everything a store held at one moment: its ``meta`` table, its rows, when each was recorded."""

    meta: dict[str, str]
    rows: list[StoredOutcome]
    recorded_at: dict[int, float]
    damaged: list[str]
    mode: str


def uri(path: str, mode: str) -> str:
    from urllib.parse import quote

    query = "mode=ro&immutable=1" if mode == "immutable" else f"mode={mode}"
    return f"file:{quote(os.path.abspath(path))}?{query}"


def check_readable(path: str | os.PathLike) -> str:
    """``path`` as a str, if it names an SQLite file this process may read; else a StoreError saying why."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"store must be a file path, got {type(path).__name__}")
    path = os.fspath(path)
    if os.path.islink(path) and not os.path.exists(path):
        raise store_error(path, f"is a symbolic link to {os.path.realpath(path)!r}, which does not exist",
                          "point the link at a certa store")
    if os.path.isdir(path):
        raise store_error(path, "is a directory, expected a certa SQLite file")
    if not os.path.isfile(path):
        raise store_error(path, "does not exist (expected a certa SQLite file)")
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise store_error(path, f"cannot be read ({why(exc)})", "make it readable, or copy it") from None
    if head != _SQLITE_MAGIC:
        what = "an empty file" if not head else "not an SQLite database file"
        raise store_error(path, f"is not a certa SQLite store: {what}")
    return path


def connect(path: str, mode: str) -> sqlite3.Connection:
    """A read-only connection (``mode`` "ro" or "immutable"), checked to hold certa's tables."""
    conn = sqlite3.connect(uri(path, mode), uri=True, isolation_level=None, timeout=30)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error:
        conn.close()
        raise
    if not {"meta", "evaluations"} <= tables:
        conn.close()
        raise store_error(path, "is not a certa SQLite store (no meta and evaluations tables)")
    return conn


def first_mode(path: str) -> str:
    """``"immutable"`` when no connection can be writing the store (no ``-wal`` or ``-journal``), else "ro"."""
    busy = os.path.exists(path + "-wal") or os.path.exists(path + "-journal")
    return "ro" if busy else "immutable"


def _stamp(path: str) -> tuple:
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _read(path: str, mode: str) -> Snapshot:
    conn = connect(path, mode)
    try:
        conn.execute("BEGIN")  # one read transaction: meta and rows of the same moment
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        columns = {r[1] for r in conn.execute("PRAGMA table_info(evaluations)")}
        verify = "checksum" in columns and meta.get("format", "") not in ("", "2")
        crc = "checksum" if "checksum" in columns else "NULL"
        raw = conn.execute(f"SELECT seq, {SELECT_CHECKED}, {crc} FROM evaluations ORDER BY seq").fetchall()
        conn.execute("COMMIT")
    finally:
        conn.close()
    check_meta(path, meta)
    rows, damaged, stamps = read_rows(path, raw, verify)
    return Snapshot(meta, rows, stamps, [describe_damaged(r) for r in damaged], mode)


def check_meta(path: str, meta: dict[str, str]) -> None:
    """Refuse a ``meta`` table whose run identity fails its checksum (stores that keep one)."""
    kept = meta.get("checksum")
    if kept is not None and kept != meta_checksum(meta.get("fingerprint", ""), meta.get("description", "")):
        raise store_error(path, "is damaged: its run description (meta table) fails its checksum, so which "
                          "run wrote it cannot be trusted",
                          "start a new store (certa.remove_store(path), or --overwrite with certa select)")


def read_snapshot(store: str | os.PathLike) -> Snapshot:
    """Read a whole store without writing anything (see the module's notes); damaged rows are left out.

    Raises
    ------
    StoreError
        If the file is missing, unreadable, not a certa store or damaged, naming it and saying what to do.
    """
    path = check_readable(store)
    mode = first_mode(path)
    try:
        for _ in range(3):
            if mode == "ro":
                try:
                    snap = _read(path, "ro")
                except sqlite3.OperationalError as exc:
                    if not error_code(exc).startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")):
                        raise
                    warnings.warn(f"store {path!r}: its write-ahead log ({path}-wal) cannot be opened here "
                                  f"({exc}); the file alone is read, without what was recorded since its last "
                                  "checkpoint", StoreDamageWarning, stacklevel=2)
                    snap = _read(path, "immutable")
                break
            before = _stamp(path)
            snap = _read(path, "immutable")
            if first_mode(path) == "immutable" and _stamp(path) == before:
                break
            mode = "ro"  # a run started on the store while it was read: read again through its log
        else:  # pragma: no cover - a store changing under three reads in a row
            snap = _read(path, "ro")
    except sqlite3.Error as exc:
        raise from_sqlite(path, exc, "read it") from exc
    except json.JSONDecodeError as exc:  # pragma: no cover - meta is text, decoded by the caller
        raise StoreError(str(exc), path=path) from exc
    if snap.damaged:
        warn_damaged(path, snap.damaged, moved=False)
    return snap


def warn_damaged(path: str, damaged: list[str], moved: bool) -> None:
    """Say which rows failed their checksum and what happens to them."""
    shown = ", ".join(damaged[:10]) + (f" and {len(damaged) - 10} more" if len(damaged) > 10 else "")
    then = ("moved to its 'damaged' table and evaluated again" if moved else
            "a run on this store will evaluate them again")
    warnings.warn(f"store {path!r}: {len(damaged)} row(s) fail their checksum (changed outside certa: a flipped "
                  f"bit, a damaged disk page, an edit) and are not used: {shown}; {then}",
                  StoreDamageWarning, stacklevel=3)
