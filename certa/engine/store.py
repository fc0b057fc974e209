"""Where finished evaluations live: an append-only store behind one narrow interface."""
from __future__ import annotations

import errno
import json
import math
import os
import socket
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

from .draws import DRAW_KINDS, Draw, Outcome
from .payload import decode_payload, encode_payload

#: Version of the on-disk layout. 1 (no ``format`` row): payloads were pickles; 2: payloads are
#: ``.npz`` data read without pickle, the fingerprint is kept with its parts.
STORE_FORMAT = 2
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: The statuses a recorded attempt can have (``Outcome.status``).
STATUSES = ("ok", "failed", "timeout")


@dataclass
class StoredOutcome:
    """A draw and one attempt's outcome, in the order it was recorded."""

    seq: int
    draw: Draw
    outcome: Outcome


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
        import uuid

        pid = os.getpid()
        return cls(socket.gethostname(), pid, _process_start(pid), uuid.uuid4().hex)

    def alive(self) -> bool:
        """Whether the owning process still runs (other hosts: assumed alive, see docs/design.md)."""
        return self.host != socket.gethostname() or _pid_alive(self.pid, self.start)


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


class SQLiteStore(Store):
    """SQLite file store: one row per finished attempt, committed before the strategy hears of it.

    A store holds data only: scores, JSON details and payloads as numpy ``.npz`` archives read
    with ``allow_pickle=False`` (see :mod:`certa.engine.payload`); nothing read from it can run
    code. A file that is not a certa store (not SQLite, other tables, an older format whose
    payloads were pickles, a store without its run fingerprint) is refused with a ``ValueError``
    naming the file, and left untouched.

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
        _check_store_path(self.path)
        if os.path.exists(self.path) and os.path.getsize(self.path) > 0:
            with open(self.path, "rb") as fh:
                head = fh.read(len(_SQLITE_MAGIC))
            if head != _SQLITE_MAGIC:
                raise ValueError(f"store {self.path!r} is not a certa SQLite store: not an SQLite database file")
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
            tables = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            user_tables = {t for t in tables if not t.startswith("sqlite_")}
            if user_tables and not {"meta", "evaluations"} <= user_tables:
                self._conn.close()
                raise ValueError(f"store {self.path!r} is not a certa store: an SQLite database with tables "
                                 f"{sorted(user_tables)} but not certa's 'meta' and 'evaluations'")
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            problem = _path_problem(self.path)
            if problem:
                raise ValueError(f"store {self.path!r} cannot be used: {problem}") from exc
            raise ValueError(f"store {self.path!r} is not a certa SQLite store: {exc}") from exc

    def _meta(self) -> dict[str, str]:
        try:
            return dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"store {self.path!r} is damaged: its meta table cannot be read ({exc})") from exc

    def bind(self, fingerprint: str, description: dict) -> None:
        meta = self._meta()
        if "fingerprint" not in meta:
            n_rows = self._conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
            meta = self._meta()  # another process may have bound it meanwhile (meta is written before any row)
        if "fingerprint" not in meta:
            if n_rows or meta:
                raise ValueError(f"store {self.path!r} has {n_rows} evaluation(s) but no run fingerprint, so "
                                 "which run wrote them cannot be checked; it is not adopted: use a new file")
            with self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                if self._conn.execute("SELECT COUNT(*) FROM meta").fetchone()[0] == 0:
                    self._conn.executemany("INSERT INTO meta VALUES (?, ?)", [
                        ("format", str(STORE_FORMAT)), ("fingerprint", fingerprint),
                        ("description", json.dumps(description, default=repr, sort_keys=True)),
                        ("created_at", repr(time.time()))])
            meta = self._meta()
        fmt = meta.get("format")
        if fmt != str(STORE_FORMAT):
            why = ("it was written by an older certa that kept payloads as pickles, which can run code "
                   "when read; certa no longer reads pickles from a store" if fmt is None
                   else f"its format version is {fmt}, this certa reads version {STORE_FORMAT}")
            raise ValueError(f"store {self.path!r} cannot be resumed: {why}. Use a new file")
        if meta["fingerprint"] != fingerprint:
            try:
                stored = json.loads(meta.get("description", "{}"))
            except json.JSONDecodeError:
                stored = {}
            raise ValueError(f"store {self.path!r} belongs to a different run: {_differences(stored, description)}; "
                             + START_OVER)

    def record(self, draw: Draw, outcome: Outcome) -> None:
        score = None if outcome.score is None or (isinstance(outcome.score, float) and math.isnan(outcome.score)) \
            else float(outcome.score)
        payload = None if outcome.payload is None else encode_payload(outcome.payload)
        self._conn.execute(
            "INSERT INTO evaluations (draw_key, draw, candidate, attempt, status, score, error, duration,"
            " details, payload, recorded_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (draw.key, draw.to_json(), draw.candidate, outcome.attempt, outcome.status, score,
             outcome.error, outcome.duration, json.dumps(outcome.details, default=float),
             payload, time.time()))

    def claim(self, key: str, owner: Owner) -> bool:
        # one autocommit statement in the common case (the draw is free); a dead holder's claim
        # is taken over by compare-and-swap on its token, so two takers cannot both win
        row = (key, owner.token, owner.host, owner.pid, owner.start, time.time())
        if self._conn.execute("INSERT INTO claims VALUES (?,?,?,?,?,?) ON CONFLICT(draw_key) DO NOTHING",
                              row).rowcount == 1:
            return True
        held = self._conn.execute("SELECT token, host, pid, start FROM claims WHERE draw_key=?", (key,)).fetchone()
        if held is None:  # released meanwhile
            return self.claim(key, owner)
        if held[0] == owner.token:
            return True
        if Owner(held[1], held[2], held[3], held[0]).alive():
            return False
        return self._conn.execute("UPDATE claims SET token=?, host=?, pid=?, start=?, claimed_at=? "
                                  "WHERE draw_key=? AND token=?", row[1:] + (key, held[0])).rowcount == 1

    def release(self, key: str, owner: Owner) -> None:
        self._conn.execute("DELETE FROM claims WHERE draw_key=? AND token=?", (key, owner.token))

    def release_all(self, owner: Owner) -> None:
        self._conn.execute("DELETE FROM claims WHERE token=?", (owner.token,))

    def attempts(self, key: str) -> list[Outcome]:
        return [r.outcome for r in self._select("WHERE draw_key=?", (key,))]

    def load(self) -> list[StoredOutcome]:
        return self._select("", ())

    def _select(self, where: str, args: tuple) -> list[StoredOutcome]:
        try:
            rows = self._conn.execute(
                "SELECT seq, draw, attempt, status, score, error, duration, details, payload "
                f"FROM evaluations {where} ORDER BY seq", args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"store {self.path!r} is damaged: its evaluations cannot be read ({exc})") from exc
        return [_parse_row(self.path, row) for row in rows]

    @classmethod
    def open_read_only(cls, path: str | os.PathLike) -> SQLiteStore:
        """Open an existing store for reading only, e.g. while its run goes on in another process.

        Nothing is written (no schema, no journal change), so a running writer is not disturbed.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"store must be a file path, got {type(path).__name__}")
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise ValueError(f"store {path!r} does not exist (expected a certa SQLite file)")
        self = cls.__new__(cls)
        self.path = path
        try:
            # read-write when the file allows it, though nothing is written: a reader that is the
            # last connection to close then checkpoints and removes the -wal and -shm files a
            # read-only connection would leave beside the store
            try:
                self._conn = sqlite3.connect(f"file:{_uri_path(path)}?mode=rw", uri=True, isolation_level=None,
                                             timeout=30)
                self._conn.execute("SELECT name FROM sqlite_master").fetchall()
            except sqlite3.OperationalError:
                self._conn = sqlite3.connect(f"file:{_uri_path(path)}?mode=ro", uri=True, isolation_level=None,
                                             timeout=30)
            tables = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"store {path!r} is not a certa SQLite store: {exc}") from exc
        if not {"meta", "evaluations"} <= tables:
            self._conn.close()
            raise ValueError(f"store {path!r} is not a certa SQLite store (no meta and evaluations tables)")
        return self

    def meta(self) -> dict[str, str]:
        """The ``meta`` table: fingerprint, description (JSON), created_at, ..."""
        return dict(self._conn.execute("SELECT key, value FROM meta").fetchall())

    def recorded_at(self) -> dict[int, float]:
        """Wall-clock time (seconds since the epoch) each attempt was recorded, by ``seq``."""
        return dict(self._conn.execute("SELECT seq, recorded_at FROM evaluations").fetchall())

    def close(self) -> None:
        """Close the connection; the last one to close folds the write-ahead log into the file.

        SQLite does that itself when the last connection closes (and removes the ``-wal`` and
        ``-shm`` files), so a finished store is one file a user can copy. A connection still
        open in another process keeps them: the run is not finished.
        """
        self._conn.close()


def _uri_path(path: str) -> str:
    from urllib.parse import quote

    return quote(os.path.abspath(path))


def _check_store_path(path: str) -> None:
    """Refuse a path that would keep nothing, or that cannot become a file, saying why."""
    if path.strip() == "" or path == ":memory:" or path.startswith("file:"):
        raise ValueError(f"store must be the path of a file that keeps the run (e.g. 'run.sqlite'), got {path!r}: "
                         "SQLite would make a private temporary database and nothing would be kept; "
                         "give store=None for no store")
    if os.path.isdir(path):
        raise ValueError(f"store path {path!r} is a directory, expected a file")
    problem = _path_problem(path)
    if problem:
        raise ValueError(f"store {path!r} cannot be used: {problem}")


def _path_problem(path: str) -> str | None:
    """What stops ``path`` from being opened as a writable store, in words, or None."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(folder):
        return f"its directory {folder!r} does not exist (create it first)"
    if not os.path.isdir(folder):
        return f"{folder!r} is not a directory"
    if os.path.exists(path):
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError as exc:
            return f"the file cannot be opened for writing ({_why(exc)}); certa records every evaluation in its " \
                   "store: copy it to a writable place, or read it with certa.load / certa show"
        os.close(fd)
        return None
    try:  # create and remove a probe: os.access says yes to root on a read-only filesystem
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:  # created meanwhile by another process: SQLite will open it
        return None
    except OSError as exc:
        return f"the file cannot be created in {folder!r} ({_why(exc)})"
    os.close(fd)
    os.unlink(path)
    return None


def _why(exc: OSError) -> str:
    if exc.errno == errno.EROFS:
        return "read-only filesystem"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return exc.strerror or str(exc)


def _parse_row(path: str, row: tuple) -> StoredOutcome:
    """One ``evaluations`` row as a StoredOutcome, every field checked: a malformed row names file and row."""
    seq, draw, attempt, status, score, error, duration, details, payload = row

    def bad(why: str) -> ValueError:
        return ValueError(f"store {path!r} has a malformed row (seq {seq}): {why}")

    try:
        d = json.loads(draw) if isinstance(draw, str) else None
        det = json.loads(details) if details else {}
    except RecursionError:
        raise bad("its JSON is nested too deeply to read") from None
    except (ValueError, TypeError) as exc:
        raise bad(f"invalid JSON ({exc})") from None
    if not isinstance(d, dict):
        raise bad("its draw is not a JSON object")
    if not isinstance(det, dict):
        raise bad("details are not a JSON object")
    if set(d) != {"candidate", "kind", "index", "seed", "size"}:
        raise bad(f"its draw has the keys {sorted(d)}, expected candidate, index, kind, seed, size")

    def is_int(v: object) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if not is_int(d["candidate"]) or d["candidate"] < 0:
        raise bad(f"draw candidate must be a non-negative int, got {d['candidate']!r}")
    if d["kind"] not in DRAW_KINDS:
        raise bad(f"draw kind must be one of {DRAW_KINDS}, got {d['kind']!r}")
    if not isinstance(d["index"], list) or not all(is_int(i) and i >= 0 for i in d["index"]):
        raise bad(f"draw index must be a list of non-negative ints, got {d['index']!r}")
    if not is_int(d["seed"]) or not 0 <= d["seed"] < 2**32:
        raise bad(f"draw seed must be an int in [0, 2**32), got {d['seed']!r}")
    if d["size"] is not None and (not is_int(d["size"]) or d["size"] < 1):
        raise bad(f"draw size must be None or a positive int, got {d['size']!r}")
    if not is_int(attempt) or attempt < 1:
        raise bad(f"attempt must be a positive int, got {attempt!r}")
    if status not in STATUSES:
        raise bad(f"status must be one of {STATUSES}, got {status!r}")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
        raise bad(f"score must be a number or NULL, got {score!r}")
    if status == "ok" and (score is None or not math.isfinite(score)):
        raise bad(f"an 'ok' attempt must have a finite score, got {score!r}")
    if error is not None and not isinstance(error, str):
        raise bad(f"error must be text or NULL, got {error!r}")
    if duration is not None and (isinstance(duration, bool) or not isinstance(duration, (int, float))):
        raise bad(f"duration must be a number or NULL, got {duration!r}")
    if payload is not None and not isinstance(payload, bytes):
        raise bad(f"payload must be a blob or NULL, got {type(payload).__name__}")
    try:
        outcome = Outcome(score=math.nan if score is None else float(score), status=status, error=error,
                          duration=float(duration or 0.0), attempt=attempt, details=det,
                          payload=None if payload is None else decode_payload(payload))
        the_draw = Draw(d["candidate"], d["kind"], tuple(d["index"]), d["seed"], d["size"])
    except RecursionError:
        raise bad("its payload is nested too deeply to read") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise bad(str(exc)) from None
    return StoredOutcome(seq, the_draw, outcome)


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


#: What a refused store's error suggests: how to start over on the same path.
START_OVER = ("use a new file, the original settings, or start over on this path: certa.remove_store(path) "
              "in Python, --overwrite with certa select")


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
