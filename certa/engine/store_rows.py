"""A store's rows: the per-row checksum, and every field of a row read back checked.

Each ``evaluations`` row carries a CRC-32 over its identity and payload (the draw key and draw,
candidate, attempt, status, score, error, duration, details, payload and recording time), written
with the row and checked when it is read. A row whose checksum does not match was changed outside
certa (a flipped bit on disk, a damaged page, an edit): it is never used. CRC-32 detects every
single-bit flip and every burst of up to 32 flipped bits in a row; other random damage goes
unnoticed with probability 2**-32. It is no protection against a deliberate edit (anyone can
compute a CRC): a row that matches its checksum is still checked field by field (:func:`parse_row`).
"""
from __future__ import annotations

import json
import math
import re
import struct
import zlib
from dataclasses import dataclass

from .draws import DRAW_KINDS, Draw, Outcome
from .payload import decode_payload
from .store_errors import StoreError

#: The statuses a recorded attempt can have (``Outcome.status``).
STATUSES = ("ok", "failed", "timeout")

#: The columns the checksum covers, in order (text columns are read as their UTF-8 bytes).
CHECKED = ("draw_key", "draw", "candidate", "attempt", "status", "score", "error", "duration", "details",
           "payload", "recorded_at")
_TEXT = {"draw_key", "draw", "status", "error", "details"}
#: SELECT list of the checked columns, text as raw bytes (so a flipped bit that leaves invalid UTF-8
#: is a checksum mismatch, not a decoding error of the whole query).
SELECT_CHECKED = ", ".join(f"CAST({c} AS BLOB)" if c in _TEXT else c for c in CHECKED)


@dataclass
class StoredOutcome:
    """A draw and one attempt's outcome, in the order it was recorded."""

    seq: int
    draw: Draw
    outcome: Outcome


_PACK_DOUBLE = struct.Struct(">d").pack


def checksum(values) -> int:
    """CRC-32 of a row's checked values (in :data:`CHECKED` order; text as UTF-8 bytes).

    Each value is tagged with its kind (NULL, bytes/text with its length, integer, float as its 8
    IEEE bytes), so that no two different rows give the same byte string.
    """
    parts: list[bytes] = []
    add = parts.append
    for v in values:
        kind = type(v)
        if v is None:
            add(b"\x00")
        elif kind is bytes:
            add(b"\x01%d:" % len(v))
            add(v)
        elif kind is float:
            add(b"\x03")
            add(_PACK_DOUBLE(v))
        elif kind is int:
            add(b"\x02%d;" % v)
        elif isinstance(v, (bytes, bytearray, memoryview)):
            data = bytes(v)
            add(b"\x01%d:" % len(data))
            add(data)
        elif isinstance(v, str):
            data = v.encode("utf-8", "surrogatepass")
            add(b"\x01%d:" % len(data))
            add(data)
        elif isinstance(v, float):
            add(b"\x03")
            add(_PACK_DOUBLE(v))
        elif isinstance(v, int):
            add(b"\x02%d;" % v)
        else:
            add(b"\x04" + repr(v).encode("utf-8", "replace"))
    return zlib.crc32(b"".join(parts))


def meta_checksum(fingerprint: str, description: str) -> str:
    """Checksum of a store's run identity (meta rows ``fingerprint`` and ``description``)."""
    return str(checksum((fingerprint, description)))


#: Positions of the text columns in a row read with :data:`SELECT_CHECKED` (after ``seq``).
_TEXT_AT = tuple(i for i, name in enumerate(CHECKED, start=1) if name in _TEXT)


def decode_text(row: tuple) -> tuple:
    """A row read with :data:`SELECT_CHECKED` (after ``seq``) with its text columns decoded."""
    out = list(row)
    for i in _TEXT_AT:
        if type(out[i]) is bytes:
            out[i] = out[i].decode("utf-8")
    return tuple(out)


def describe_damaged(row: tuple) -> str:
    """``seq N (draw KEY, attempt A)`` for a damaged row, whatever its fields hold."""
    seq, key, attempt = row[0], row[1], row[4]
    key = key.decode("utf-8", "replace") if isinstance(key, bytes) else key
    return f"seq {seq} (draw {str(key)[:60]!r}, attempt {attempt!r})"


#: A draw as certa writes it (``Draw.to_json``: sorted keys, ``", "`` and ``": "`` separators, ints
#: without sign or leading zeros): read with one match instead of a JSON parse. Anything else
#: (another spelling, a negative or huge number, a key too many) goes through ``json.loads`` and
#: the checks of :func:`parse_row`, which name what is wrong.
_INT = "(?:0|[1-9][0-9]*)"
_CANONICAL_DRAW = re.compile(
    rf'\{{"candidate": ({_INT}), "index": \[((?:{_INT})(?:, {_INT})*)?\], '
    rf'"kind": "({"|".join(map(re.escape, DRAW_KINDS))})", "seed": ({_INT}), "size": (null|[1-9][0-9]*)\}}').fullmatch


def _canonical_draw(text: object) -> tuple | None:
    """``(candidate, kind, index, seed, size)`` of a draw written by certa, every field valid; else ``None``."""
    m = _CANONICAL_DRAW(text) if type(text) is str else None
    if m is None:
        return None
    candidate, index, kind, seed, size = m.groups()
    seed = int(seed)
    if seed >= 2**32:
        return None
    return (int(candidate), kind, tuple(map(int, index.split(", "))) if index else (), seed,
            None if size == "null" else int(size))


def parse_row(path: str, row: tuple) -> StoredOutcome:
    """One ``evaluations`` row as a StoredOutcome, every field checked: a malformed row names file and row.

    ``row`` is ``(seq, draw, attempt, status, score, error, duration, details, payload)``.
    """
    seq, draw, attempt, status, score, error, duration, details, payload = row

    def bad(why: str) -> StoreError:
        return _malformed(path, seq, why)

    fields = _canonical_draw(draw)   # the draw as certa writes it, checked by its pattern
    try:
        d = json.loads(draw) if fields is None and isinstance(draw, str) else None
        det = {} if not details or details == "{}" else json.loads(details)
    except RecursionError:
        raise bad("its JSON is nested too deeply to read") from None
    except (ValueError, TypeError) as exc:
        raise bad(f"invalid JSON ({exc})") from None
    if fields is None and not isinstance(d, dict):
        raise bad("its draw is not a JSON object")
    if not isinstance(det, dict):
        raise bad("details are not a JSON object")
    if fields is None:
        fields = _checked_draw(d, bad)
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
    except RecursionError:
        raise bad("its payload is nested too deeply to read") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise bad(str(exc)) from None
    return StoredOutcome(seq, Draw.unchecked(*fields), outcome)   # every field checked above


def _checked_draw(d: dict, bad) -> tuple:
    """``(candidate, kind, index, seed, size)`` of a draw read as JSON, each field checked (``bad(why)`` if not)."""
    if set(d) != {"candidate", "kind", "index", "seed", "size"}:
        raise bad(f"its draw has the keys {sorted(d)}, expected candidate, index, kind, seed, size")
    if not is_int(d["candidate"]) or d["candidate"] < 0:
        raise bad(f"draw candidate must be a non-negative int, got {d['candidate']!r}")
    if d["kind"] not in DRAW_KINDS:
        raise bad(f"draw kind must be one of {DRAW_KINDS}, got {d['kind']!r}")
    if not isinstance(d["index"], list) or not _non_negative_ints(d["index"]):
        raise bad(f"draw index must be a list of non-negative ints, got {d['index']!r}")
    if not is_int(d["seed"]) or not 0 <= d["seed"] < 2**32:
        raise bad(f"draw seed must be an int in [0, 2**32), got {d['seed']!r}")
    if d["size"] is not None and (not is_int(d["size"]) or d["size"] < 1):
        raise bad(f"draw size must be None or a positive int, got {d['size']!r}")
    return d["candidate"], d["kind"], tuple(d["index"]), d["seed"], d["size"]


def is_int(v: object) -> bool:
    """An int that is not a bool."""
    return isinstance(v, int) and not isinstance(v, bool)


def _non_negative_ints(values: list) -> bool:
    for v in values:   # a plain loop: this runs for every stored row
        if type(v) is not int or v < 0:
            return False
    return True


def read_rows(path: str, raw_rows, verify: bool) -> tuple[list[StoredOutcome], list[tuple], dict[int, float]]:
    """Rows read as ``(seq, *CHECKED, checksum)``: the good ones parsed, the damaged ones apart, and
    the recording time of each good row by ``seq``.

    With ``verify`` (a store that keeps checksums) a row whose checksum does not match, or that
    has none, is damaged: it is returned apart, not parsed (its payload is never decoded).
    """
    good: list[StoredOutcome] = []
    damaged: list[tuple] = []
    stamps: dict[int, float] = {}
    for raw in raw_rows:
        if verify and (raw[-1] is None or checksum(raw[1:-1]) != raw[-1]):
            damaged.append(raw)
            continue
        try:
            row = decode_text(raw)
        except UnicodeDecodeError:
            if verify:  # cannot happen for a matching checksum unless written so on purpose
                damaged.append(raw)
                continue
            raise _malformed(path, raw[0], "its text is not valid UTF-8") from None
        (seq, _key, draw, _cand, attempt, status, score, error, duration, details, payload, recorded_at,
         _crc) = row
        good.append(parse_row(path, (seq, draw, attempt, status, score, error, duration, details, payload)))
        stamps[seq] = recorded_at
    return good, damaged, stamps


def _malformed(path: str, seq: int, why: str) -> StoreError:
    return StoreError(f"store {path!r} has a malformed row (seq {seq}): {why}", path=path,
                      problem=f"has a malformed row (seq {seq})")
