"""Where finished evaluations live: an append-only store behind one narrow interface."""
from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass

from .draws import Draw, Outcome
from .payload import encode_payload
from .store_errors import (  # noqa: F401 - StoreError and StoreDamageWarning are imported from here too
    START_OVER,
    StoreDamageWarning,
    StoreError,
    check_store_path,
    error_code,
    from_sqlite,
    path_problem,
    store_error,
)
from .store_reader import check_meta, check_readable, connect, first_mode, read_snapshot, warn_damaged  # noqa: F401
from .store_rows import (  # noqa: F401 - STATUSES and StoredOutcome are imported from here too
    SELECT_CHECKED,
    STATUSES,
    StoredOutcome,
    checksum,
    describe_damaged,
    meta_checksum,
    read_rows,
)

#: Version of the on-disk layout. 1 (no ``format`` row): payloads were pickles; 2: payloads are
#: ``.npz`` data read without pickle, the fingerprint is kept with its parts; 3: every row has a
#: checksum, and the run identity too (a run opening a version 2 store adds them, see ``bind``).
STORE_FORMAT = 3
_SQLITE_MAGIC = b"SQLite format 3\x00"


class Store(ABC):
    """Append-only record of every finished attempt, keyed by draw."""

    @abstractmethod
    def bind(self, fingerprint: str, description: dict) -> None:
        """Attach the store to a run; refuse a store that belongs to a different run."""

    @abstractmethod
    def record(self, draw: Draw, outcome: Outcome) -> None:
        """Persist one finished attempt (durably, before the strategy is told)."""

    @abstractmethod
    def load(self) -> list[StoredOutcome]:
        """Every recorded attempt, in recording order."""

    # -- sharing a store between processes -------------------------------------------------
    # Several runs with the same fingerprint may use one store at once. Before evaluating a
    # draw a run claims it; a draw claimed by a live owner is not evaluated again: the run
    # waits for its recorded outcome (``attempts``), and takes the draw over if the owner
    # dies. The defaults below are those of a store only one run uses at a time.

    def claim(self, key: str, owner: Owner) -> bool:
        """Claim draw ``key`` for ``owner``: True if it is now theirs (it was free, theirs
        already, or its owner has died), False if another live run holds it."""
        return True

    def release(self, key: str, owner: Owner) -> None:
        """Give up ``owner``'s claim on draw ``key`` (no-op if they do not hold it)."""

    def release_all(self, owner: Owner) -> None:
        """Give up every claim of ``owner`` (at the end of its run)."""
        owner.retire()

    def attempts(self, key: str) -> list[Outcome]:
        """The recorded attempts of draw ``key``, in recording order."""
        return [r.outcome for r in self.load() if r.draw.key == key]

    def close(self) -> None:  # pragma: no cover - trivial default
        pass


def _process_start(pid: int) -> str:
    """When process ``pid`` started (Linux: clock ticks since boot), to tell a reused pid apart; "" elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def _pid_alive(pid: int, start: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not start or _process_start(pid) in ("", start)


@dataclass(frozen=True)
class Owner:
    """Who holds a claim: a run in one process on one host."""

    host: str
    pid: int
    start: str
    token: str

    @classmethod
    def current(cls) -> Owner:
        """A new owner for a run in this process (live until its store's ``release_all``)."""
        import uuid

        pid = os.getpid()
        owner = cls(socket.gethostname(), pid, _process_start(pid), uuid.uuid4().hex)
        _LIVE_TOKENS.add(owner.token)
        return owner

    def alive(self) -> bool:
        """Whether the owning run still runs (other hosts: assumed alive, see docs/design.md).

        A run of this process is alive until its store's ``release_all``: the claims of a run that
        ended without releasing them (its store could not be written any more) are taken over by
        the next run in the same process, instead of waited for.
        """
        if self.host != socket.gethostname():
            return True
        if self.pid == os.getpid():
            return self.token in _LIVE_TOKENS
        return _pid_alive(self.pid, self.start)

    def retire(self) -> None:
        """The run has ended: its claims are no longer held by a live run."""
        _LIVE_TOKENS.discard(self.token)


#: Tokens of the runs of this process that have not ended.
_LIVE_TOKENS: set[str] = set()


class MemoryStore(Store):
    """A store that forgets everything when the process ends."""

    def __init__(self) -> None:
        self._rows: list[StoredOutcome] = []
        self._fingerprint: str | None = None
        self._claims: dict[str, Owner] = {}
        self._by_key: dict[str, list[Outcome]] = {}
        self._lock = threading.Lock()  # runs in threads of one process may share it
        self._description: dict = {}

    def bind(self, fingerprint: str, description: dict) -> None:
        if self._fingerprint is not None and self._fingerprint != fingerprint:
            raise ValueError(f"store belongs to a different run: {_differences(self._description, description)}")
        self._fingerprint = fingerprint
        self._description = description

    def record(self, draw: Draw, outcome: Outcome) -> None:
        with self._lock:
            self._rows.append(StoredOutcome(len(self._rows) + 1, draw, outcome))
            self._by_key.setdefault(draw.key, []).append(outcome)

    def load(self) -> list[StoredOutcome]:
        with self._lock:
            return list(self._rows)

    def claim(self, key: str, owner: Owner) -> bool:
        with self._lock:
            holder = self._claims.get(key)
            if holder is None or holder == owner or not holder.alive():
                self._claims[key] = owner
                return True
            return False

    def release(self, key: str, owner: Owner) -> None:
        with self._lock:
            if self._claims.get(key) == owner:
                del self._claims[key]

    def release_all(self, owner: Owner) -> None:
        with self._lock:
            for key in [k for k, o in self._claims.items() if o == owner]:
                del self._claims[key]
        owner.retire()

    def attempts(self, key: str) -> list[Outcome]:
        with self._lock:
            return list(self._by_key.get(key, []))

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS evaluations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    draw_key TEXT NOT NULL,
    draw TEXT NOT NULL,
    candidate INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    status TEXT NOT NULL,
    score REAL,
    error TEXT,
    duration REAL,
    details TEXT,
    payload BLOB,
    recorded_at REAL NOT NULL,
    checksum INTEGER,
    UNIQUE (draw_key, attempt)
);
CREATE TABLE IF NOT EXISTS claims (
    draw_key TEXT PRIMARY KEY,
    token TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    start TEXT NOT NULL,
    claimed_at REAL NOT NULL
);
"""
#: Rows that failed their checksum, set apart by a run (never used; kept to be looked at).
_DAMAGED = """
CREATE TABLE IF NOT EXISTS damaged (
    seq INTEGER PRIMARY KEY, draw_key, draw, candidate, attempt, status, score, error, duration, details,
    payload, recorded_at, checksum, found_at REAL NOT NULL
)"""
_COLUMNS = ("draw_key, draw, candidate, attempt, status, score, error, duration, details, payload, recorded_at, "
            "checksum")
_LOG_ADVICE = ("the evaluations recorded before are kept in the file: run the same call again to resume (what was "
               "lost runs again); do not truncate or delete a store's -wal file while a run is writing it")


class SQLiteStore(Store):
    """SQLite file store: one row per finished attempt, committed before the strategy hears of it.

    A store holds data only: scores, JSON details and payloads as numpy ``.npz`` archives read
    with ``allow_pickle=False`` (see :mod:`certa.engine.payload`); nothing read from it can run
    code. A file that is not a certa store (not SQLite, other tables, an older format whose
    payloads were pickles, a store without its run fingerprint) is refused with a
    :class:`~certa.engine.store_errors.StoreError` (a ``ValueError``) naming the file, and left untouched.

    Every row carries a checksum (:mod:`certa.engine.store_rows`), checked when it is read: a row
    that fails it is named in a :class:`~certa.engine.store_errors.StoreDamageWarning`, moved to
    the store's ``damaged`` table, and its draw evaluated again. Writes are folded
    from the write-ahead log into the file within ``checkpoint_interval`` (0.25 s) seconds (a
    passive checkpoint), so a ``-wal`` file cut short from outside loses at most the writes of
    the last 0.25 s, and stops the run with a StoreError rather than damage the file. SQLite's own failures (a full disk, a read-only file or
    directory, a damaged file) become a ``StoreError`` naming the file, what happened and what to do.

    Parameters
    ----------
    path : str or os.PathLike
        The database file; created if missing. A file written by a different
        run (other candidates, data, strategy, seed or evaluation code) is refused
        with a ``ValueError`` saying which of these differ, and left untouched.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"store must be a file path or a Store, got {type(path).__name__}")
        self.path = os.fspath(path)
        if isinstance(self.path, bytes):
            raise TypeError("store must be a str path (or a Store), got a bytes path")
        check_store_path(self.path)
        if os.path.exists(self.path) and os.path.getsize(self.path) > 0:
            with open(self.path, "rb") as fh:
                head = fh.read(len(_SQLITE_MAGIC))
            if head != _SQLITE_MAGIC:
                raise store_error(self.path, "is not a certa SQLite store: not an SQLite database file")
        self._verify = True  # rows carry checksums (False until a version 2 store is brought to version 3)
        self._conn = None
        self._broken = ""   # why nothing more may be written (a log cut short), once found
        self._log_floor = 0  # bytes the -wal file must keep: the frames not yet in the file
        self._lock = threading.RLock()  # the connection is shared with the deferred checkpoint's timer
        self._timer: threading.Timer | None = None
        self._last_checkpoint = time.monotonic()
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=30, check_same_thread=False)
            tables = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            user_tables = {t for t in tables if not t.startswith("sqlite_")}
            if user_tables and not {"meta", "evaluations"} <= user_tables:
                self._conn.close()
                raise store_error(self.path, f"is not a certa store: an SQLite database with tables "
                                  f"{sorted(user_tables)} but not certa's 'meta' and 'evaluations'")
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._page_size = int(self._conn.execute("PRAGMA page_size").fetchone()[0])
            self._conn.executescript(_SCHEMA)
            self._columns = {r[1] for r in self._conn.execute("PRAGMA table_info(evaluations)")}
        except sqlite3.Error as exc:
            if self._conn is not None:
                self._conn.close()
            problem = path_problem(self.path)
            if problem:
                raise store_error(self.path, f"cannot be used: {problem}") from exc
            raise from_sqlite(self.path, exc, "open it") from exc

    @contextmanager
    def _sql(self, doing: str):
        """Run SQL that is ``doing`` something; SQLite's failures become a StoreError saying what and why."""
        with self._lock:
            try:
                yield
            except sqlite3.Error as exc:
                raise from_sqlite(self.path, exc, doing, self._kept()) from exc

    def _kept(self) -> int | None:
        try:
            return int(self._conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0])
        except sqlite3.Error:
            return None

    def _meta(self) -> dict[str, str]:
        with self._sql("read its meta table"):
            return dict(self._conn.execute("SELECT key, value FROM meta").fetchall())

    def bind(self, fingerprint: str, description: dict) -> None:
        meta = self._meta()
        if "fingerprint" not in meta:
            with self._sql("count its evaluations"):
                n_rows = self._conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
            meta = self._meta()  # another process may have bound it meanwhile (meta is written before any row)
        if "fingerprint" not in meta:
            if n_rows or meta:
                raise store_error(self.path, f"has {n_rows} evaluation(s) but no run fingerprint, so which run "
                                  "wrote them cannot be checked; it is not adopted", "use a new file")
            text = json.dumps(description, default=repr, sort_keys=True)
            with self._writing("write its run description"), self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                if self._conn.execute("SELECT COUNT(*) FROM meta").fetchone()[0] == 0:
                    self._conn.executemany("INSERT INTO meta VALUES (?, ?)", [
                        ("format", str(STORE_FORMAT)), ("fingerprint", fingerprint), ("description", text),
                        ("checksum", meta_checksum(fingerprint, text)), ("created_at", repr(time.time()))])
            meta = self._meta()
        fmt = meta.get("format")
        if fmt == "2":  # rows without checksums: add them (the rows are trusted as they are)
            self._upgrade()
            meta = self._meta()
            fmt = meta.get("format")
        if fmt != str(STORE_FORMAT):
            why = ("it was written by an older certa that kept payloads as pickles, which can run code "
                   "when read; certa no longer reads pickles from a store" if fmt is None
                   else f"its format version is {fmt}, this certa reads versions 2 and {STORE_FORMAT}")
            raise store_error(self.path, f"cannot be resumed: {why}", "Use a new file")
        check_meta(self.path, meta)
        if meta["fingerprint"] != fingerprint:
            try:
                stored = json.loads(meta.get("description", "{}"))
            except json.JSONDecodeError:
                stored = {}
            raise store_error(self.path, f"belongs to a different run: {_differences(stored, description)}; "
                              + START_OVER)

    def _upgrade(self) -> None:
        """Bring a version 2 store to version 3: a checksum for every row and for the run identity."""
        with self._writing("add checksums to its rows (format 2 to 3)"), self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            meta = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("format") != "2":  # another process did it meanwhile
                return
            if "checksum" not in {r[1] for r in self._conn.execute("PRAGMA table_info(evaluations)")}:
                self._conn.execute("ALTER TABLE evaluations ADD COLUMN checksum INTEGER")
            rows = self._conn.execute(f"SELECT seq, {SELECT_CHECKED} FROM evaluations").fetchall()
            self._conn.executemany("UPDATE evaluations SET checksum=? WHERE seq=?",
                                   [(checksum(r[1:]), r[0]) for r in rows])
            self._conn.execute("UPDATE meta SET value=? WHERE key='format'", (str(STORE_FORMAT),))
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('checksum', ?)",
                               (meta_checksum(meta.get("fingerprint", ""), meta.get("description", "")),))
        self._columns.add("checksum")

    def record(self, draw: Draw, outcome: Outcome) -> None:
        """Insert one attempt with its checksum, then fold the write-ahead log into the file."""
        score = None if outcome.score is None or (isinstance(outcome.score, float) and math.isnan(outcome.score)) \
            else float(outcome.score)
        payload = None if outcome.payload is None else encode_payload(outcome.payload)
        values = (draw.key, draw.to_json(), int(draw.candidate), int(outcome.attempt), str(outcome.status), score,
                  None if outcome.error is None else str(outcome.error),
                  None if outcome.duration is None else float(outcome.duration),
                  json.dumps(outcome.details, default=float), payload, time.time())
        with self._writing(f"record an evaluation (draw {draw.key})"):
            self._conn.execute(f"INSERT INTO evaluations ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                               values + (checksum(values),))

    @contextmanager
    def _writing(self, doing: str):
        """Write (the body), then checkpoint; refuse to write on a log found cut short.

        SQLite appends to its log after the last frame it wrote: on a log cut short from outside,
        that leaves a hole whose zeros the next checkpoint would copy into the file. So before
        writing, the log must still hold every frame not yet in the file (``_log_floor`` bytes).
        """
        if self._broken:
            raise store_error(self.path, f"could not {doing}: {self._broken}", _LOG_ADVICE)
        try:
            size = os.path.getsize(self.path + "-wal")
        except OSError:
            size = None  # deleted: SQLite goes on with the file it has open, and checkpoints from it
        if size is not None and size < self._log_floor:
            self._broken = (f"its write-ahead log ({self.path}-wal) was cut short from outside certa "
                            f"({size} bytes, {self._log_floor} expected)")
            raise store_error(self.path, f"could not {doing}: {self._broken}", _LOG_ADVICE)
        with self._sql(doing):
            yield
        with self._lock:
            if time.monotonic() - self._last_checkpoint >= self.checkpoint_interval:
                self.checkpoint()
            else:  # checkpointed soon, by a timer: meanwhile the log must keep what it has
                try:
                    self._log_floor = max(self._log_floor, os.path.getsize(self.path + "-wal"))
                except OSError:
                    pass
                if self._timer is None:
                    self._timer = threading.Timer(self.checkpoint_interval, self._deferred_checkpoint)
                    self._timer.daemon = True
                    self._timer.start()

    #: Seconds between checkpoints at most: a write comes into the file at once if the last
    #: checkpoint is older, else within this time (a timer). 0: after every write.
    checkpoint_interval = 0.25

    def _deferred_checkpoint(self) -> None:
        with self._lock:
            self._timer = None
            if self._log_floor and not self._broken and not self._closed:
                try:
                    self.checkpoint()
                except StoreError:  # kept in _broken when the log was cut short; the next write says it
                    pass

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the store file (SQLite's passive checkpoint: it never waits).

        Run after a write when the last checkpoint is older than ``checkpoint_interval``
        seconds, else by a timer that many seconds later: the file itself holds every write
        but those of the last ``checkpoint_interval`` seconds, and a ``-wal`` file cut short or
        deleted from outside loses at most those. A log found cut short stops the run with a
        StoreError, and nothing more is written through it (what the file holds is kept).
        """
        with self._lock:
            try:
                _busy, log, done = self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except sqlite3.Error as exc:
                if error_code(exc) == "SQLITE_IOERR_SHORT_READ":
                    self._broken = (f"its write-ahead log ({self.path}-wal) was cut short from outside certa "
                                    f"while it held writes not yet in the file (SQLite: {exc})")
                    raise store_error(self.path, f"lost its last writes: {self._broken}", _LOG_ADVICE) from exc
                raise from_sqlite(self.path, exc, "fold its write-ahead log into the file (checkpoint)",
                                  self._kept()) from exc
            self._last_checkpoint = time.monotonic()
            # frames not yet in the file (a reader's old snapshot can hold them back) must stay in the log
            self._log_floor = 32 + log * (24 + self._page_size) if log > done >= 0 else 0

    def claim(self, key: str, owner: Owner) -> bool:
        with self._writing(f"claim draw {key}"):
            return self._claim(key, owner)

    def _claim(self, key: str, owner: Owner) -> bool:
        # one autocommit statement in the common case (the draw is free); a dead holder's claim
        # is taken over by compare-and-swap on its token, so two takers cannot both win
        row = (key, owner.token, owner.host, owner.pid, owner.start, time.time())
        if self._conn.execute("INSERT INTO claims VALUES (?,?,?,?,?,?) ON CONFLICT(draw_key) DO NOTHING",
                              row).rowcount == 1:
            return True
        held = self._conn.execute("SELECT token, host, pid, start FROM claims WHERE draw_key=?", (key,)).fetchone()
        if held is None:  # released meanwhile
            return self._claim(key, owner)
        if held[0] == owner.token:
            return True
        if Owner(held[1], held[2], held[3], held[0]).alive():
            return False
        return self._conn.execute("UPDATE claims SET token=?, host=?, pid=?, start=?, claimed_at=? "
                                  "WHERE draw_key=? AND token=?", row[1:] + (key, held[0])).rowcount == 1

    def release(self, key: str, owner: Owner) -> None:
        with self._writing(f"release draw {key}"):
            self._conn.execute("DELETE FROM claims WHERE draw_key=? AND token=?", (key, owner.token))

    def release_all(self, owner: Owner) -> None:
        """Give up every claim of ``owner``; best effort (a run ending on a full disk or a damaged log
        cannot write even this, and the error that ended it is the one to report): claims left
        behind are taken over once their process has ended."""
        owner.retire()
        try:
            with self._writing("release its claims"):
                self._conn.execute("DELETE FROM claims WHERE token=?", (owner.token,))
        except StoreError:
            pass

    def attempts(self, key: str) -> list[Outcome]:
        return [r.outcome for r in self._select("WHERE draw_key=?", (key,))]

    def load(self) -> list[StoredOutcome]:
        return self._select("", ())

    def _select(self, where: str, args: tuple) -> list[StoredOutcome]:
        crc = "checksum" if "checksum" in self._columns else "NULL"
        with self._sql("read its evaluations"):
            raw = self._conn.execute(f"SELECT seq, {SELECT_CHECKED}, {crc} FROM evaluations {where} ORDER BY seq",
                                     args).fetchall()
        rows, damaged, _ = read_rows(self.path, raw, self._verify and crc == "checksum")
        if damaged:
            self._set_apart(damaged)
        return rows

    def _set_apart(self, damaged: list[tuple]) -> None:
        """Move rows that failed their checksum to the ``damaged`` table (a reader only warns)."""
        moved = not self._read_only
        if moved:
            with self._writing("set its damaged rows apart"), self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.execute(_DAMAGED)
                for raw in damaged:
                    self._conn.execute(f"INSERT OR IGNORE INTO damaged (seq, {_COLUMNS}, found_at) "
                                       f"SELECT seq, {_COLUMNS}, ? FROM evaluations WHERE seq=?",
                                       (time.time(), raw[0]))
                    self._conn.execute("DELETE FROM evaluations WHERE seq=?", (raw[0],))
        warn_damaged(self.path, [describe_damaged(r) for r in damaged], moved=moved)

    _read_only = False
    _broken = ""
    _log_floor = 0
    _closed = False
    _timer = None

    @classmethod
    def open_read_only(cls, path: str | os.PathLike) -> SQLiteStore:
        """Open an existing store for reading only, e.g. while its run goes on in another process.

        Nothing is written, to the store or its directory (see :mod:`certa.engine.store_reader`):
        it works on a read-only file, directory or file system, and beside a writing run. Rows
        that fail their checksum are left out with a warning. :func:`read_snapshot` reads
        everything at one moment (what ``certa.load`` uses).
        """
        path = check_readable(path)
        self = cls.__new__(cls)
        self.path, self._read_only, self._lock = path, True, threading.RLock()
        try:
            self._conn = connect(path, first_mode(path))
            self._columns = {r[1] for r in self._conn.execute("PRAGMA table_info(evaluations)")}
            fmt = dict(self._conn.execute("SELECT key, value FROM meta").fetchall()).get("format", "")
        except sqlite3.Error as exc:
            raise from_sqlite(path, exc, "read it") from exc
        self._verify = fmt not in ("", "2")
        return self

    def meta(self) -> dict[str, str]:
        """The ``meta`` table: fingerprint, description (JSON), created_at, ..."""
        return self._meta()

    def recorded_at(self) -> dict[int, float]:
        """Wall-clock time (seconds since the epoch) each attempt was recorded, by ``seq``."""
        with self._sql("read its evaluations"):
            return dict(self._conn.execute("SELECT seq, recorded_at FROM evaluations").fetchall())

    def close(self) -> None:
        """Close the connection; the last one to close folds the write-ahead log into the file.

        SQLite does that itself when the last connection closes (and removes the ``-wal`` and
        ``-shm`` files), so a finished store is one file a user can copy. A connection still
        open in another process keeps them: the run is not finished.
        """
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._log_floor and not self._broken and not self._closed:
                try:  # this run's last writes reach the file now, even if a reader keeps the log open
                    self.checkpoint()
                except StoreError:
                    pass
            self._closed = True
            self._conn.close()


_PART_NAMES = {"strategy": "strategy", "candidates": "candidates", "seed": "seed", "data": "data",
               "model": "estimator or its parameters", "code": "evaluation code", "scoring": "scoring",
               "plan": "split plan", "settings": "evaluator settings"}


def _plainjson(value):
    """``value`` as it reads back from a store's JSON description (tuples become lists, ...)."""
    return json.loads(json.dumps(value, default=repr, sort_keys=True))


def _short(value) -> str:
    text = json.dumps(value, default=repr, sort_keys=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _part_values(part: str, stored: dict, current: dict) -> str:
    """What differs inside one part, with both values ("" when the store keeps only a hash of it)."""
    if part == "strategy":
        a, b = stored.get("strategy"), current.get("strategy")
        if isinstance(a, dict) and isinstance(b, dict):
            keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
            return ", ".join(f"{k} {_short(a.get(k))} in the store, {_short(b.get(k))} in this run" for k in keys)
    if part == "seed" and "seed" in stored:
        return f"{stored['seed']} in the store, {current.get('seed')} in this run"
    if part == "candidates":
        names_a, names_b = stored.get("candidates") or [], current.get("candidates") or []
        params_a, params_b = stored.get("params") or [], current.get("params") or []
        if len(names_a) != len(names_b):
            return f"{len(names_a)} candidates in the store, {len(names_b)} in this run"
        for i, (na, nb) in enumerate(zip(names_a, names_b)):
            pa = params_a[i] if i < len(params_a) else None
            pb = params_b[i] if i < len(params_b) else None
            if na != nb or pa != pb:
                return (f"candidate {i + 1} is {_short(na)} {_short(pa)} in the store, {_short(nb)} {_short(pb)} "
                        "in this run")
    return ""


def _differences(stored: dict, current: dict) -> str:
    """Which parts of a run's identity differ between a store's description and this run's, with the values
    where the store keeps them (settings, seed, candidates; data and code are kept as hashes only)."""
    a, b = stored.get("parts") or {}, current.get("parts") or {}
    if not a:
        return "the store does not say which part differs (written by another version)"
    diff = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    if not diff:
        return "its fingerprint differs"
    current = _plainjson(current)
    values = {k: _part_values(k, stored, current) for k in diff}
    shown = [(f"{_PART_NAMES.get(k, k)}: {v}" if len(diff) > 1 else v) for k, v in values.items() if v]
    return ("its " + ", ".join(_PART_NAMES.get(k, k) for k in diff) + (" differ" if len(diff) > 1 else " differs")
            + " from this run's" + (f" ({'; '.join(shown)})" if shown else ""))



def remove_store(path: str | os.PathLike) -> bool:
    """Delete a certa SQLite store and its SQLite side files (``-wal``, ``-shm``, ``-journal``) to start over.

    Refuses a file that is not a SQLite database (so a wrong path cannot delete
    another file). Do not call it while another process is running on the store.

    Parameters
    ----------
    path : str or os.PathLike
        The store given to ``store=`` (or ``--store``).

    Returns
    -------
    bool
        True if a store was removed, False if there was none.

    Examples
    --------
    >>> import os, tempfile
    >>> from certa.engine.store import SQLiteStore, remove_store
    >>> path = os.path.join(tempfile.mkdtemp(), "run.sqlite")
    >>> SQLiteStore(path).close()
    >>> remove_store(path), os.path.exists(path)
    (True, False)
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        return False
    with open(path, "rb") as fh:
        head = fh.read(len(_SQLITE_MAGIC))
    if head and head != _SQLITE_MAGIC:
        raise ValueError(f"path {path!r} is not a SQLite file; remove_store refuses to delete it")
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return True


def as_store(store: Store | str | os.PathLike | None) -> Store:
    """``None`` -> in-memory store; a path -> :class:`SQLiteStore`; a Store -> itself."""
    if store is None:
        return MemoryStore()
    if isinstance(store, Store):
        return store
    return SQLiteStore(store)
