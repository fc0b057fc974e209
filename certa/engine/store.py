"""Where finished evaluations live: an append-only store behind one narrow interface."""
from __future__ import annotations

import json
import math
import os
import pickle
import sqlite3
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

from .draws import Draw, Outcome


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

    def close(self) -> None:  # pragma: no cover - trivial default
        pass


class MemoryStore(Store):
    """A store that forgets everything when the process ends."""

    def __init__(self) -> None:
        self._rows: list[StoredOutcome] = []
        self._fingerprint: str | None = None

    def bind(self, fingerprint: str, description: dict) -> None:
        if self._fingerprint is not None and self._fingerprint != fingerprint:
            raise ValueError("store belongs to a different run (different candidates, data, strategy or seed)")
        self._fingerprint = fingerprint

    def record(self, draw: Draw, outcome: Outcome) -> None:
        self._rows.append(StoredOutcome(len(self._rows) + 1, draw, outcome))

    def load(self) -> list[StoredOutcome]:
        return list(self._rows)


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
"""


class SQLiteStore(Store):
    """SQLite file store: one row per finished attempt, committed before the strategy hears of it.

    Parameters
    ----------
    path : str or os.PathLike
        The database file; created if missing. A file written by a different
        run (other candidates, data, strategy or seed) is refused with a
        ``ValueError`` and left untouched.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"store must be a file path or a Store, got {type(path).__name__}")
        self.path = os.fspath(path)
        if os.path.isdir(self.path):
            raise ValueError(f"store path {self.path!r} is a directory, expected a file")
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"store {self.path!r} is not a certa SQLite store: {exc}") from exc

    def bind(self, fingerprint: str, description: dict) -> None:
        row = self._conn.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
        if row is None:
            with self._conn:
                self._conn.execute("BEGIN")
                self._conn.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
                self._conn.execute("INSERT INTO meta VALUES ('description', ?)",
                                   (json.dumps(description, default=repr, sort_keys=True),))
                self._conn.execute("INSERT INTO meta VALUES ('created_at', ?)", (repr(time.time()),))
        elif row[0] != fingerprint:
            raise ValueError(
                f"store {self.path!r} belongs to a different run (its candidates, data, strategy or "
                "seed differ from this one); use a new file or the original settings")

    def record(self, draw: Draw, outcome: Outcome) -> None:
        score = None if outcome.score is None or (isinstance(outcome.score, float) and math.isnan(outcome.score)) \
            else float(outcome.score)
        payload = None if outcome.payload is None else pickle.dumps(outcome.payload, protocol=4)
        self._conn.execute(
            "INSERT INTO evaluations (draw_key, draw, candidate, attempt, status, score, error, duration,"
            " details, payload, recorded_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (draw.key, draw.to_json(), draw.candidate, outcome.attempt, outcome.status, score,
             outcome.error, outcome.duration, json.dumps(outcome.details, default=float),
             payload, time.time()))

    def load(self) -> list[StoredOutcome]:
        rows = self._conn.execute(
            "SELECT seq, draw, attempt, status, score, error, duration, details, payload "
            "FROM evaluations ORDER BY seq").fetchall()
        out = []
        for seq, draw, attempt, status, score, error, duration, details, payload in rows:
            outcome = Outcome(score=math.nan if score is None else score, status=status, error=error,
                              duration=duration or 0.0, attempt=attempt,
                              details=json.loads(details) if details else {},
                              payload=None if payload is None else pickle.loads(payload))
            out.append(StoredOutcome(seq, Draw.from_json(draw), outcome))
        return out

    @classmethod
    def open_read_only(cls, path: str | os.PathLike) -> "SQLiteStore":
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
            self._conn = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True,
                                         isolation_level=None, timeout=30)
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
        self._conn.close()


def as_store(store: "Store | str | os.PathLike | None") -> Store:
    """``None`` -> in-memory store; a path -> :class:`SQLiteStore`; a Store -> itself."""
    if store is None:
        return MemoryStore()
    if isinstance(store, Store):
        return store
    return SQLiteStore(store)
