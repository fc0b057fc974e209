"""What ``certa select`` reads: a candidates file (TOML or JSON) and an import path to the user's function.

Candidates file
---------------
Either named candidates, one table each (the table is the ``params`` dict
passed to the evaluate function; the name is what reports show)::

    # candidates.toml
    [candidates.bert]
    lr = 3e-5
    epochs = 3

    [candidates.lstm]
    lr = 1e-3
    hidden = 256

or a scikit-learn style grid (every combination, in ``GridSearchCV`` order)::

    [grid]
    lr = [1e-3, 1e-4]
    hidden = [128, 256]

The same in JSON: ``{"candidates": {"bert": {"lr": 3e-05}, ...}}`` or
``{"grid": {"lr": [0.001, 0.0001]}}``.
"""
from __future__ import annotations

import importlib
import json
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from .engine.candidates import Candidate, candidates_from_grid
from .engine.evaluators import Evaluator

EXAMPLE = """[candidates.bert]
lr = 3e-5
epochs = 3

[candidates.lstm]
lr = 1e-3
hidden = 256"""


class UserFileError(ValueError):
    """A user file that cannot be used; the message names the file, the line and what was expected."""


def _line_of(text: str, pattern: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if re.search(pattern, line):
            return number
    return None


def _where(path: str, line: int | None) -> str:
    return f"{path}, line {line}" if line else path


def _parse(path: str, text: str) -> dict[str, Any]:
    if path.endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserFileError(f"{_where(path, exc.lineno)}: invalid JSON: {exc.msg} (column {exc.colno}); "
                                'expected e.g. {"candidates": {"a": {"lr": 0.001}}}') from None
    else:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            import tomli as tomllib
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
            line = int(match.group(1)) if match else None
            msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
            col = f" (column {match.group(2)})" if match else ""
            raise UserFileError(f"{_where(path, line)}: invalid TOML: {msg}{col}; expected tables like\n"
                                f"{EXAMPLE}") from None
    if not isinstance(data, dict):
        raise UserFileError(f"{path}, line 1: expected a table with a 'candidates' or a 'grid' entry, "
                            f"got a {type(data).__name__}")
    return data


def read_candidates(path: str | os.PathLike) -> list[Candidate]:
    """Candidates from a TOML (or ``.json``) file; see the module docstring for the format.

    Raises
    ------
    UserFileError
        Naming the file, the line and what was expected.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise UserFileError(f"{path}: no such candidates file (expected a TOML or JSON file)") from None
    except UnicodeDecodeError as exc:
        raise UserFileError(f"{path}: not a UTF-8 text file ({exc.reason})") from None
    data = _parse(path, text)
    unknown = sorted(set(data) - {"candidates", "grid"})
    if unknown:
        where = _where(path, _line_of(text, r'^\s*\[?"?' + re.escape(unknown[0]) + r"\b"))
        raise UserFileError(f"{where}: unknown entry {unknown[0]!r}; expected [candidates.NAME] tables or a "
                            "[grid] table")
    if ("candidates" in data) == ("grid" in data):
        raise UserFileError(f"{path}, line 1: expected either [candidates.NAME] tables or one [grid] table "
                            f"({'both' if data else 'neither'} found), e.g.\n{EXAMPLE}")
    if "grid" in data:
        grid = data["grid"]
        line = _line_of(text, r"^\s*\[grid\]|\"grid\"")
        if not isinstance(grid, dict) or not grid:
            raise UserFileError(f"{_where(path, line)}: [grid] must be a table of parameter = [values, ...]")
        for key, values in grid.items():
            if not isinstance(values, list) or not values:
                where = _where(path, _line_of(text, r'^\s*"?' + re.escape(key) + r'"?\s*[=:]'))
                raise UserFileError(f"{where}: grid entry {key!r} must be a non-empty list of values, got {values!r}")
        return candidates_from_grid(grid)
    named = data["candidates"]
    line = _line_of(text, r"candidates")
    if not isinstance(named, dict) or not named:
        raise UserFileError(f"{_where(path, line)}: 'candidates' must hold one table per candidate, e.g.\n{EXAMPLE}")
    out = []
    for i, (name, params) in enumerate(named.items()):
        if not isinstance(params, dict):
            pattern = r'^\s*"?' + re.escape(name) + r'"?\s*[=:]|candidates\.' + re.escape(name) + r"\b"
            where = _where(path, _line_of(text, pattern))
            raise UserFileError(f"{where}: candidate {name!r} must be a table of parameters "
                                f"([candidates.{name}] followed by key = value lines), got {params!r}")
        out.append(Candidate(i, str(name), dict(params)))
    return out


def resolve_function(spec: str, what: str = "--evaluate") -> Callable:
    """``"package.module:function"`` -> the function; errors say which part is wrong.

    The current directory is searched first, as with ``python -m``.
    """
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise UserFileError(f"{what} {spec!r}: expected an import path 'package.module:function'")
    module_name, attr = spec.split(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise UserFileError(f"{what} {spec!r}: no module named {exc.name!r} (searched the current directory "
                            "and the Python path; expected 'package.module:function')") from None
    except SyntaxError as exc:
        raise UserFileError(f"{what} {spec!r}: {exc.filename}, line {exc.lineno}: syntax error: {exc.msg}") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed while importing
        raise UserFileError(f"{what} {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    fn: Any = module
    for part in attr.split("."):
        if not hasattr(fn, part):
            file = getattr(module, "__file__", module_name)
            raise UserFileError(f"{what} {spec!r}: {file} has no {attr!r} (expected a function "
                                "evaluate(params, seed) -> score)")
        fn = getattr(fn, part)
    if not callable(fn):
        raise UserFileError(f"{what} {spec!r}: {attr} is a {type(fn).__name__}, expected a function "
                            "evaluate(params, seed) -> score")
    return fn


def _read_column(path: str, what: str) -> list[str]:
    """One value per line of a UTF-8 text file (trailing empty lines ignored)."""
    try:
        with open(path, encoding="utf-8") as fh:
            values = [line.rstrip("\n").rstrip("\r") for line in fh]
    except FileNotFoundError:
        raise UserFileError(f"{path}: no such {what} file (expected one value per line)") from None
    except UnicodeDecodeError as exc:
        raise UserFileError(f"{path}: not a UTF-8 text file of {what} (byte {exc.start})") from None
    while values and values[-1] == "":
        values.pop()
    if not values:
        raise UserFileError(f"{path} holds no {what} (expected one value per line)")
    return values


def cv_rows(spec: str, *, labels: str | None, groups: str | None, n_samples: int | None, seed: int) -> Any:
    """``certa select --cv SPEC``: the rows of the paired run, the splits of ``SPEC`` over the examples.

    The examples are numbered 0..n-1; ``labels`` (a file, one class label per line) stratifies,
    ``groups`` (a file, one group per line) keeps each group on one side of every split, and
    ``n_samples`` gives n when neither file is given. Returns a
    :class:`certa.engine.plans.RowSplitsPlan`.
    """
    import numpy as np

    from .search._splitters import CV_FAMILIES, parse_cv, splitter_rows

    cv = parse_cv(spec)
    family = spec.split(":")[0]
    _, needs_labels, needs_groups, _ = CV_FAMILIES[family]
    y = None if labels is None else np.asarray(_read_column(labels, "labels"))
    g = None if groups is None else np.asarray(_read_column(groups, "groups"))
    if needs_labels and y is None:
        raise UserFileError(f"--cv {spec}: {family} stratifies by class: give --labels FILE (one label per line)")
    if needs_groups and g is None:
        raise UserFileError(f"--cv {spec}: {family} keeps groups apart: give --groups FILE (one group per line)")
    sizes = {name: len(a) for name, a in (("--labels", y), ("--groups", g)) if a is not None}
    if n_samples is not None:
        sizes["--n-samples"] = int(n_samples)
    if not sizes:
        raise UserFileError(f"--cv {spec}: give --n-samples N (or --labels/--groups files, one line per example)")
    if len(set(sizes.values())) > 1:
        raise UserFileError(f"--cv {spec}: the number of examples differs: "
                            + ", ".join(f"{k} {v}" for k, v in sizes.items()))
    n = next(iter(sizes.values()))
    return splitter_rows(cv, np.zeros((n, 1)), y, g, classifier=needs_labels, root_seed=seed)


class ImportPathEvaluator(Evaluator):
    """Calls ``evaluate(params, seed)`` found at an import path, imported in each worker.

    With ``rows`` (``certa select --cv``, a :class:`certa.engine.plans.RowSplitsPlan`) it calls
    ``evaluate(params, seed, train, test)`` with the row's training and test indices. With
    ``n_train`` (``certa select --n-train``, for the screen) it calls ``evaluate(params, seed,
    size=n)``: train on ``n`` examples (``n_train`` at full size, fewer on the screen's rungs).

    Only the import path travels to the workers (not the function), so a
    function in the user's own module works with local processes, Dask or Ray
    as long as the workers can import it. ``evaluate`` returns a float or a dict
    with a ``"score"`` key (other keys are kept with the evaluation).
    """

    def __init__(self, spec: str, cwd: str | None = None, rows: Any = None, n_train: int | None = None) -> None:
        self.spec = spec
        self.cwd = cwd or os.getcwd()
        self.rows = rows
        self.n_train = n_train
        self._fn: Callable | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "cwd": self.cwd, "rows": self.rows, "n_train": self.n_train, "_fn": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("n_train", None)
        self.__dict__.update(state)

    def _function(self) -> Callable:
        if self._fn is None:
            if self.cwd not in sys.path:
                sys.path.insert(0, self.cwd)
            self._fn = resolve_function(self.spec)
        return self._fn

    def evaluate(self, params: dict[str, Any], draw) -> Any:
        if self.rows is not None:
            train, test = self.rows.split(draw, None, 0)
            return self._function()(params, draw.seed, train, test)
        if self.n_train is not None:
            return self._function()(params, draw.seed, size=draw.size or self.n_train)
        return self._function()(params, draw.seed)

    def fingerprint_parts(self) -> dict[str, str]:
        # the function's code, closures and the globals it reads, not only its import path (issue #11)
        from .engine.fingerprint import stable_hash

        parts = {"code": stable_hash((self.spec, self._function()))}
        if self.rows is not None:   # the splits are part of the run's identity
            parts["plan"] = stable_hash(self.rows.spec())
        if self.n_train is not None:
            parts["n_train"] = str(self.n_train)
        return parts

    def fingerprint(self) -> str:
        from joblib import hash as joblib_hash

        return joblib_hash(sorted(self.fingerprint_parts().items()))
