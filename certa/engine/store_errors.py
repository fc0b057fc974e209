"""What went wrong with a store file, in words: :class:`StoreError`, and SQLite's errors translated.

SQLite names its failures tersely ("database or disk is full", "attempt to write a readonly
database", "unable to open database file", "database disk image is malformed") and never says
which file or what to do. Every SQLite error a store meets goes through :func:`from_sqlite`,
which looks at the file system (free space, a read-only mount, permissions, a dangling
symbolic link) and raises a :class:`StoreError` naming the file, what happened and what to do.
"""
from __future__ import annotations

import errno
import os
import sqlite3

#: What a refused store's error suggests: how to start over on the same path.
START_OVER = ("use a new file, the original settings, or start over on this path: certa.remove_store(path) "
              "in Python, --overwrite with certa select")


class StoreError(ValueError, OSError):
    """A store file that cannot be used as asked: full disk, read-only, damaged, missing, unreachable.

    A ``ValueError`` (certa has always refused an unusable store with one) and an ``OSError``
    (most causes are the file system's). The message names the file, what happened and what to
    do; the parts are kept as attributes.

    Attributes
    ----------
    path : str or None
        The store file.
    problem : str or None
        What happened, in words.
    advice : str or None
        What to do about it.
    """

    def __init__(self, message: str, *, path: str | None = None, problem: str | None = None,
                 advice: str | None = None) -> None:
        super().__init__(message)
        self.path, self.problem, self.advice = path, problem, advice


class StoreDamageWarning(UserWarning):
    """Rows of a store failed their checksum: they are not used (and are evaluated again on resume)."""


def store_error(path: str, problem: str, advice: str = "") -> StoreError:
    """A :class:`StoreError` whose message reads ``store 'PATH' PROBLEM. ADVICE``."""
    message = f"store {path!r} {problem}" + (f". {advice}" if advice else "")
    return StoreError(message, path=path, problem=problem, advice=advice)


def error_code(exc: BaseException) -> str:
    """SQLite's name of the error (``SQLITE_FULL``, ...), from the exception or, before Python 3.11, its text."""
    name = getattr(exc, "sqlite_errorname", None)
    if name:
        return name
    text = str(exc).lower()
    for words, code in (("disk is full", "SQLITE_FULL"), ("readonly", "SQLITE_READONLY"),
                        ("unable to open", "SQLITE_CANTOPEN"), ("malformed", "SQLITE_CORRUPT"),
                        ("not a database", "SQLITE_NOTADB"), ("disk i/o", "SQLITE_IOERR"),
                        ("locked", "SQLITE_BUSY")):
        if words in text:
            return code
    return "SQLITE_ERROR"


def dangling_link(path: str) -> str | None:
    """The target of ``path`` if it is a symbolic link to nothing, else None."""
    if os.path.islink(path) and not os.path.exists(path):
        return os.path.realpath(path)
    return None


def _read_only_fs(folder: str) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _disk_full(folder: str) -> bool:
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):
        return False
    return st.f_bavail * st.f_frsize < 1 << 20


def _cannot_write(path: str, folder: str) -> str | None:
    """Why the store or its directory cannot be written (a read-only mount, permissions), or None."""
    if _read_only_fs(folder):
        return f"its file system is mounted read-only ({folder!r})"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return "the file is read-only (no write permission)"
    if not os.access(folder, os.W_OK | os.X_OK):
        return (f"its directory {folder!r} is read-only (no write permission): SQLite must create the "
                f"'-wal' and '-shm' files beside the store")
    for side in ("-wal", "-shm"):
        if os.path.exists(path + side) and not os.access(path + side, os.W_OK):
            return f"its side file {path + side!r} is read-only (no write permission)"
    return None


READ_IT = "to look at it, use certa.load(path), certa show or certa report, which only read"


def from_sqlite(path: str, exc: sqlite3.Error, doing: str, kept: int | None = None) -> StoreError:
    """Translate SQLite's ``exc``, met while ``doing`` (e.g. "record an evaluation"), into a StoreError.

    ``kept``: how many evaluations the store holds (said in the message: they are not lost).
    """
    code = error_code(exc)
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    said = f"(SQLite: {exc})"
    resume = ("" if kept is None else
              f"The {kept} evaluation(s) recorded before are kept: ")
    if code.startswith("SQLITE_FULL") or (code.startswith("SQLITE_IOERR") and _disk_full(folder)):
        return store_error(path, f"could not {doing}: the disk holding it is full {said}",
                           resume + "free some space (or move the store to a larger disk) and run the same "
                           "call again to resume; an evaluation that could not be recorded runs again")
    link = dangling_link(path)
    if link is not None:
        return store_error(path, f"could not {doing}: it is a symbolic link to {link!r}, which does not exist "
                           f"and cannot be created {said}",
                           "point the link at an existing store, or remove the link to start a new store there")
    if code.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")):
        why = _cannot_write(target, folder)
        if why is None and code.startswith("SQLITE_CANTOPEN"):
            why = "SQLite cannot open the file or create its '-wal' and '-shm' files beside it"
        elif why is None:
            why = "the file or its directory is read-only"
        return store_error(path, f"could not {doing}: {why} {said}",
                           resume + "make the file and its directory writable, or copy the store to a writable "
                           "directory and run there; " + READ_IT)
    if code.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or code == "SQLITE_IOERR_SHORT_READ":
        return store_error(path, f"is damaged: could not {doing} {said}: the file was changed outside "
                           "certa (truncated, overwritten, or a disk fault)",
                           "its rows cannot be trusted: start a new store (certa.remove_store(path), or "
                           "--overwrite with certa select); to rescue what is readable, try "
                           f"'sqlite3 {path} .recover'")
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return store_error(path, f"could not {doing}: another process has kept it locked {said}",
                           "let the other run finish, or stop it, and run again")
    if code.startswith("SQLITE_IOERR"):
        return store_error(path, f"could not {doing}: the file system reported an I/O error {said}",
                           resume + "check the disk (and that the store and its '-wal' file were not "
                           "changed from outside), then run the same call again to resume")
    return store_error(path, f"could not {doing} {said}", "")


def check_store_path(path: str) -> None:
    """Refuse a path that would keep nothing, or that cannot become a file, saying why."""
    if path.strip() == "" or path == ":memory:" or path.startswith("file:"):
        raise StoreError(f"store must be the path of a file that keeps the run (e.g. 'run.sqlite'), got {path!r}: "
                         "SQLite would make a private temporary database and nothing would be kept; "
                         "give store=None for no store", path=path, problem="keeps nothing")
    if os.path.isdir(path):
        raise StoreError(f"store path {path!r} is a directory, expected a file", path=path,
                         problem="is a directory")
    problem = path_problem(path)
    if problem:
        raise store_error(path, f"cannot be used: {problem}")


def path_problem(path: str) -> str | None:
    """What stops ``path`` from being opened as a writable store, in words, or None."""
    link = dangling_link(path)
    target = link or path
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.exists(folder):
        if link:
            return (f"it is a symbolic link to {link!r}, whose directory does not exist: point the link at an "
                    "existing store, or remove it")
        return f"its directory {folder!r} does not exist (create it first)"
    if not os.path.isdir(folder):
        return f"{folder!r} is not a directory"
    if os.path.exists(path):
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError as exc:
            return f"the file cannot be opened for writing ({why(exc)}); certa records every evaluation in its " \
                   "store: copy it to a writable place, or read it with certa.load / certa show"
        os.close(fd)
        return None
    try:  # create and remove a probe: os.access says yes to root on a read-only filesystem
        fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:  # created meanwhile by another process: SQLite will open it
        return None
    except OSError as exc:
        where = f"the file cannot be created in {folder!r}"
        return f"it is a symbolic link to {link!r} and {where} ({why(exc)})" if link else f"{where} ({why(exc)})"
    os.close(fd)
    os.unlink(target)
    return None


def why(exc: OSError) -> str:
    if exc.errno == errno.EROFS:
        return "read-only filesystem"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOSPC:
        return "no space left on the disk"
    return exc.strerror or str(exc)
