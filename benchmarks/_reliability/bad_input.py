"""Bad-input sweep: >= 100 kinds of bad (and valid edge-case) input across certa's fronts and CLI.

Every case runs in its own subprocess with a time limit (a case that does not finish in time is a
hang) and is classified as

* ``clear-before``: a ``ValueError``/``TypeError`` (or a CLI exit != 0 with a one-line message,
  no traceback) naming the argument or file, raised before any evaluation ran;
* ``clear-later``: the same, but after at least one evaluation;
* ``unclear``: an error of another type, or one that does not name what is wrong;
* ``hang``: no answer within the time limit (must be 0);
* ``silent-wrong``: bad input accepted without an error (must be 0);
* ``accepted``: a valid edge case accepted, and its result checked;
* ``refused-valid``: a valid edge case refused (a false rejection).

Each case runs in a process forked from one that imported certa and scikit-learn once (so 180
cases take minutes, not an hour on a loaded machine); ``--isolation subprocess`` starts a fresh
interpreter per case instead (``python -m certa`` for the CLI cases).

Evaluations are counted by wrapping the runner's ``execute`` (every case runs with one job,
so evaluations run in the case's own process). Data: iris (bundled with scikit-learn) and small
arrays made up in the case, said so where they are.

Usage::

    python benchmarks/reliability.py bad-input [--timeout 60] [--jobs 2] [--only ID,ID] [--out benchmarks/results]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # no thread pools in the process cases are forked from (fork + OpenMP can deadlock)
if str(ROOT) not in sys.path:  # this checkout's certa, not another installed one
    sys.path.insert(0, str(ROOT))

PREAMBLE = r'''
import json, os, sys, warnings, functools, pickle, sqlite3
import numpy as np
warnings.simplefilter("ignore")
import certa.engine.runner as _runner
_N = {"n": 0}
_orig_execute = _runner.execute
def _counting_execute(*a, **k):
    _N["n"] += 1
    return _orig_execute(*a, **k)
_runner.execute = _counting_execute
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.pipeline import make_pipeline
from sklearn.impute import SimpleImputer
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC
import certa
from certa import (JKFoldSearchCV, BanditSearchCV, ProgressiveSearchCV, QuantificationBoundSearch, bandit_select,
                   cross_validate_selection, run, stats, FunctionEvaluator, EstimatorEvaluator, JKFoldPlan,
                   JKFoldGrid, SQLiteStore, TopTwoThompson)
X, y = load_iris(return_X_y=True)
LR = LogisticRegression(max_iter=300)
G = {"C": [0.1, 1.0]}
# made-up texts (two topics), for text pipelines
TEXTS = [f"{w} {w} item{i}" for i in range(30) for w in ("apple banana", "engine wheel")]
TLAB = np.array([0, 1] * 30)
TMP = os.environ.get("SWEEP_TMP", "")
def resign(p):
    """Give the tampered store's rows (and run identity) matching checksums, as an attacker could."""
    from certa.engine.store_rows import SELECT_CHECKED, checksum, meta_checksum
    c = sqlite3.connect(p)
    rows = c.execute(f"SELECT seq, {SELECT_CHECKED} FROM evaluations").fetchall()
    c.executemany("UPDATE evaluations SET checksum=? WHERE seq=?", [(checksum(r[1:]), r[0]) for r in rows])
    m = dict(c.execute("SELECT key, value FROM meta").fetchall())
    c.execute("UPDATE meta SET value=? WHERE key='checksum'", (meta_checksum(m["fingerprint"], m["description"]),))
    c.commit(); c.close()
def J(est=LR, grid=G, **kw):
    kw.setdefault("n_splits", 3); kw.setdefault("n_repeats", 1); kw.setdefault("random_state", 0)
    return JKFoldSearchCV(est, grid, **kw)
def B(est=LR, grid=G, **kw):
    kw.setdefault("max_evals", 30); kw.setdefault("random_state", 0); kw.setdefault("confidence", 0.9)
    return BanditSearchCV(est, grid, **kw)
def P(est=LR, grid=G, **kw):
    kw.setdefault("random_state", 0); kw.setdefault("schedule", [0.5, 1.0])
    return ProgressiveSearchCV(est, grid, **kw)
def Q(est=LR, grid=G, **kw):
    return QuantificationBoundSearch(est, grid, **kw)
def EV(c, tr, te, s):
    return float(c) + np.random.default_rng(s).normal(0, 0.05)
class AlwaysFails(LogisticRegression):
    def fit(self, X, y):
        raise RuntimeError("this fit always fails")
def nanX():
    Z = X.copy(); Z[5, 2] = np.nan; return Z
'''

RUNNER = r'''
import traceback
_src = sys.stdin.read()
try:
    exec(compile(_src, "<case>", "exec"))
    print("@@RESULT " + json.dumps({"raised": False, "n_evals": _N["n"]}))
except BaseException as exc:
    print("@@RESULT " + json.dumps({"raised": True, "type": type(exc).__name__, "message": str(exc)[:600],
                                    "n_evals": _N["n"], "check_failed": isinstance(exc, AssertionError)}))
'''


@dataclass
class Case:
    id: str
    front: str
    what: str
    code: str = ""
    expect: str = "error"  # "error" or "accept"
    names: tuple = ()
    # InvalidParameterError: scikit-learn's, a ValueError; AllEvaluationsFailedError: the engine's error for a run
    # whose every evaluation failed, naming the first failure (as scikit-learn's "All the N fits failed");
    # StoreError: a store that cannot be used, a ValueError (and an OSError)
    types: tuple = ("ValueError", "TypeError", "InvalidParameterError", "AllEvaluationsFailedError", "StoreError")
    cli: list | None = None
    files: dict = field(default_factory=dict)


def C(id, front, what, code, names=(), **kw):
    return Case(id, front, what, code, names=tuple(names), **kw)


def OK(id, front, what, code):
    return Case(id, front, what, code, expect="accept")


def CLI(id, what, argv, names, files=None):
    return Case(id, "cli", what, cli=argv, names=tuple(names), files=files or {})


BINARY = bytes(range(256)) * 4
#: Case code that overwrites every page of the store file ``p`` after the first (H29, H30).
DAMAGE_PAGES = ("b = bytearray(open(p, 'rb').read()); b[4096:] = (bytes(range(256)) * (len(b) // 256))[:len(b) - 4096]\n"
                "open(p, 'wb').write(bytes(b))\n_N['n'] = 0\n")

CASES = [
    # ---------------------------------------------------------------- JKFoldSearchCV
    C("J01", "JKFoldSearchCV", "X is a string", "J().fit('abc', y)", ["X"]),
    C("J02", "JKFoldSearchCV", "X is None", "J().fit(None, y)", ["X"]),
    C("J03", "JKFoldSearchCV", "X is a scalar", "J().fit(5, y)", ["X"]),
    C("J04", "JKFoldSearchCV", "y is a string", "J().fit(X, 'abc')", ["y"]),
    C("J05", "JKFoldSearchCV", "X and y lengths differ", "J().fit(X, y[:-1])", ["X and y"]),
    C("J06", "JKFoldSearchCV", "NaN in X, LogisticRegression", "J().fit(nanX(), y)", ["X contains NaN"]),
    C("J07", "JKFoldSearchCV", "inf in X", "Z = X.copy(); Z[0, 0] = np.inf; J().fit(Z, y)", ["X contains infinity"]),
    C("J08", "JKFoldSearchCV", "3-D X", "J().fit(X.reshape(150, 2, 2), y)", ["X:"]),
    C("J09", "JKFoldSearchCV", "1-D numeric X", "J().fit(X[:, 0], y)", ["X:"]),
    C("J10", "JKFoldSearchCV", "2-D y with two columns", "J().fit(X, np.c_[y, y])", ["y:"]),
    C("J11", "JKFoldSearchCV", "single-class y", "J().fit(X, np.zeros(150))", ["y:"]),
    C("J12", "JKFoldSearchCV", "continuous y for a classifier", "J().fit(X, np.linspace(0, 1, 150))", ["y:"]),
    C("J13", "JKFoldSearchCV", "NaN in y (regressor)", "t = X[:, 0].copy(); t[3] = np.nan; J(Ridge(), {'alpha': [1.0, 2.0]}).fit(X, t)", ["y contains NaN"]),
    OK("J14", "JKFoldSearchCV", "a class with one member (warns as GridSearchCV)", "t = y.copy(); t[0] = 7\nwith warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n    s = J().fit(X, t)\nassert any('least populated' in str(x.message) for x in w) and np.isfinite(s.best_score_)"),
    C("J15", "JKFoldSearchCV", "invalid grid key", "J(grid={'not_a_param': [1, 2]}).fit(X, y)", ["param_grid", "not_a_param"]),
    C("J16", "BanditSearchCV", "invalid grid value C=-1 (JKFoldSearchCV leaves it to the fits, as GridSearchCV)", "B(grid={'C': [-1.0, 1.0]}).fit(X, y)", ["param_grid"]),
    C("J17", "JKFoldSearchCV", "grid value not a list", "J(grid={'C': 1.0}).fit(X, y)", ["param_grid", "parameter grid"]),
    OK("J18", "JKFoldSearchCV", "empty grid: the default setting only (as GridSearchCV)", "s = J(grid={}).fit(X, y); assert s.best_params_ == {}"),
    C("J19", "JKFoldSearchCV", "grid with an empty list", "J(grid={'C': []}).fit(X, y)", ["param_grid", "parameter grid"]),
    OK("J20", "JKFoldSearchCV", "several metrics (list), refit on one", "s = J(scoring=['accuracy', 'f1_macro'], refit='accuracy').fit(X, y); assert 'mean_test_f1_macro' in s.cv_results_ and s.best_score_ > 0.8"),
    C("J21", "JKFoldSearchCV", "several metrics (dict) and refit=True", "J(scoring={'a': 'accuracy', 'f': 'f1_macro'}).fit(X, y)", ["refit"]),
    C("J22", "JKFoldSearchCV", "unknown scoring name", "J(scoring='acc').fit(X, y)", ["scoring"]),
    C("J23", "JKFoldSearchCV", "n_splits=1", "J(n_splits=1).fit(X, y)", ["n_splits"]),
    C("J24", "JKFoldSearchCV", "n_splits larger than the data", "J(n_splits=1000).fit(X, y)", ["n_splits"]),
    C("J25", "JKFoldSearchCV", "n_repeats=0", "J(n_repeats=0).fit(X, y)", ["n_repeats"]),
    C("J26", "JKFoldSearchCV", "n_splits a float", "J(n_splits=2.5).fit(X, y)", ["n_splits"]),
    C("J27", "JKFoldSearchCV", "negative random_state", "J(random_state=-1).fit(X, y)", ["random_state"]),
    C("J28", "JKFoldSearchCV", "random_state a string", "J(random_state='a').fit(X, y)", ["random_state"]),
    C("J29", "JKFoldSearchCV", "retries=-1", "J(retries=-1).fit(X, y)", ["retries"]),
    C("J30", "JKFoldSearchCV", "timeout=0", "J(timeout=0).fit(X, y)", ["timeout"]),
    C("J31", "JKFoldSearchCV", "timeout=inf", "J(timeout=float('inf')).fit(X, y)", ["timeout"]),
    C("J32", "JKFoldSearchCV", "n_jobs=0", "J(n_jobs=0).fit(X, y)", ["n_jobs"]),
    C("J33", "JKFoldSearchCV", "estimator is a string", "J(est='LogisticRegression').fit(X, y)", ["estimator"]),
    C("J34", "JKFoldSearchCV", "store is a directory", "J(store=TMP).fit(X, y)", ["store"]),
    C("J35", "JKFoldSearchCV", "store is a text file", "p = os.path.join(TMP, 'n.txt'); open(p, 'w').write('hello ' * 50); J(store=p).fit(X, y)", ["store", "n.txt"]),
    C("J36", "JKFoldSearchCV", "store is another SQLite database",
      "p = os.path.join(TMP, 'o.db'); c = sqlite3.connect(p); c.execute('create table t (a)'); c.commit(); c.close(); J(store=p).fit(X, y)", ["o.db"]),
    C("J37", "JKFoldSearchCV", "store of a different run",
      "p = os.path.join(TMP, 'r.sqlite'); J(store=p).fit(X, y); _N['n'] = 0; J(store=p, grid={'C': [0.5, 2.0]}).fit(X, y)", ["different run", "candidates"]),
    C("J38", "JKFoldSearchCV", "every fit fails", "J(est=AlwaysFails()).fit(X, y)", ["All the", "always fails"]),
    C("J39", "JKFoldSearchCV", "strings in a numeric X", "Z = X.astype(object); Z[3, 1] = 'a'; J().fit(Z, y)", ["X:", "non-numeric"]),
    C("J40", "JKFoldSearchCV", "param_grid a string", "J(grid='C').fit(X, y)", ["param_grid", "parameter grid"]),
    C("J41", "JKFoldSearchCV", "y given to a regressor as None", "J(Ridge(), {'alpha': [1.0, 2.0]}).fit(X, None)", ["y"]),
    OK("J50", "JKFoldSearchCV", "text pipeline on a list of strings",
       "s = J(make_pipeline(TfidfVectorizer(), LinearSVC()), {'linearsvc__C': [0.1, 1.0]}).fit(TEXTS, TLAB); assert s.best_score_ > 0.9"),
    OK("J51", "JKFoldSearchCV", "HistGradientBoosting with NaN in X",
       "s = J(HistGradientBoostingClassifier(max_iter=10), {'max_depth': [2, 3]}).fit(nanX(), y); assert s.best_score_ > 0.8"),
    OK("J52", "JKFoldSearchCV", "SimpleImputer pipeline with NaN in X",
       "s = J(make_pipeline(SimpleImputer(), LogisticRegression(max_iter=300)), {'logisticregression__C': [0.1, 1.0]}).fit(nanX(), y); assert s.best_score_ > 0.8"),
    OK("J53", "JKFoldSearchCV", "pandas DataFrame X",
       "import pandas as pd; s = J().fit(pd.DataFrame(X, columns=list('abcd')), y); assert s.best_score_ > 0.8"),
    OK("J54", "JKFoldSearchCV", "sparse X", "import scipy.sparse as sp; s = J().fit(sp.csr_matrix(X), y); assert s.best_score_ > 0.8"),
    OK("J55", "JKFoldSearchCV", "string labels",
       "s = J().fit(X, np.array(['a', 'b', 'c'])[y]); assert s.best_score_ > 0.8 and set(s.classes_) == {'a', 'b', 'c'}"),
    OK("J56", "JKFoldSearchCV", "callable scoring",
       "from sklearn.metrics import accuracy_score\ns = J(scoring=lambda e, A, b: accuracy_score(b, e.predict(A))).fit(X, y); assert s.best_score_ > 0.8"),
    OK("J57", "JKFoldSearchCV", "multi-output y for Ridge",
       "s = J(Ridge(), {'alpha': [0.1, 1.0]}).fit(X[:, :2], X[:, 2:]); assert s.best_params_ in ({'alpha': 0.1}, {'alpha': 1.0})"),
    OK("J58", "JKFoldSearchCV", "some fits fail: warning, failed candidate ranks last",
       "from sklearn.exceptions import FitFailedWarning\n"
       "class Flaky(LogisticRegression):\n"
       "    def fit(self, A, b):\n"
       "        if self.C == 10.0 and A[0, 0] < 5.0: raise RuntimeError('flaky')\n"
       "        return super().fit(A, b)\n"
       "with warnings.catch_warnings(record=True) as w:\n"
       "    warnings.simplefilter('always')\n"
       "    s = J(Flaky(max_iter=300), {'C': [0.01, 10.0]}).fit(X, y)\n"
       "assert any(issubclass(x.category, FitFailedWarning) and 'flaky' in str(x.message) for x in w)\n"
       "assert np.isnan(s.cv_results_['mean_test_score'][1]) and s.best_index_ == 0"),
    OK("J59", "JKFoldSearchCV", "column-vector y", "s = J().fit(X, y.reshape(-1, 1)); assert s.best_score_ > 0.8"),
    # ---------------------------------------------------------------- BanditSearchCV
    C("B01", "BanditSearchCV", "single-class y", "B().fit(X, np.zeros(150))", ["y:"]),
    C("B02", "BanditSearchCV", "NaN in X", "B().fit(nanX(), y)", ["X contains NaN"]),
    OK("B03", "BanditSearchCV", "a class with one member (warns, unstratified splits, as GridSearchCV goes on)", "t = y.copy(); t[0] = 7\nwith warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n    s = B().fit(X, t)\nassert any('not stratified' in str(x.message) for x in w) and np.isfinite(s.best_score_)"),
    C("B04", "BanditSearchCV", "test_size larger than the data", "B(test_size=500).fit(X, y)", ["test_size"]),
    C("B05", "BanditSearchCV", "test_size=0", "B(test_size=0).fit(X, y)", ["test_size"]),
    C("B06", "BanditSearchCV", "test_size=1.5", "B(test_size=1.5).fit(X, y)", ["test_size"]),
    C("B07", "BanditSearchCV", "test_size=2 with 3 classes", "B(test_size=2).fit(X, y)", ["test_size"]),
    C("B08", "BanditSearchCV", "candidates and estimator", "BanditSearchCV(LR, G, candidates={'a': LR, 'b': LR}).fit(X, y)", ["candidates"]),
    C("B09", "BanditSearchCV", "a candidate is not an estimator", "BanditSearchCV(candidates={'a': LR, 'b': 'svm'}).fit(X, y)", ["estimator"]),
    C("B10", "BanditSearchCV", "one candidate", "B(grid={'C': [1.0]}).fit(X, y)", ["candidates"]),
    C("B11", "BanditSearchCV", "unknown strategy", "B(strategy='foo').fit(X, y)", ["strategy"]),
    C("B12", "BanditSearchCV", "confidence=1.5", "B(confidence=1.5).fit(X, y)", ["confidence"]),
    C("B13", "BanditSearchCV", "sequential halving without budget", "B(strategy='sequential_halving').fit(X, y)", ["budget"]),
    C("B14", "BanditSearchCV", "multi-metric scoring", "B(scoring=['accuracy']).fit(X, y)", ["scoring"]),
    C("B15", "BanditSearchCV", "invalid grid key", "B(grid={'Cx': [1, 2]}).fit(X, y)", ["param_grid"]),
    C("B16", "BanditSearchCV", "max_evals=0", "B(max_evals=0).fit(X, y)", ["max_evals"]),
    C("B17", "BanditSearchCV", "unknown stopping rule", "B(stopping='x').fit(X, y)", ["stopping"]),
    C("B18", "BanditSearchCV", "every fit fails", "B(est=AlwaysFails()).fit(X, y)", ["always fails"]),
    C("B19", "BanditSearchCV", "3-D X", "B().fit(X.reshape(150, 2, 2), y)", ["X:"]),
    C("B20", "BanditSearchCV", "estimator without param_grid", "BanditSearchCV(LR).fit(X, y)", ["param_grid"]),
    C("B21", "BanditSearchCV", "budget with the default (fixed-confidence) strategy: was silently ignored", "B(budget=30).fit(X, y)", ["budget"]),
    C("B22", "BanditSearchCV", "test_size with cv: was silently ignored", "B(cv=3, test_size=0.3).fit(X, y)", ["test_size"]),
    OK("B50", "BanditSearchCV", "named candidates",
       "from sklearn.tree import DecisionTreeClassifier\n"
       "s = BanditSearchCV(candidates={'stump': DecisionTreeClassifier(max_depth=1), 'lr': LR}, confidence=0.9, max_evals=40, random_state=0).fit(X, y)\n"
       "assert s.best_params_['model'] is not None"),
    OK("B51", "BanditSearchCV", "integer test_size", "s = B(test_size=30).fit(X, y); assert s.best_index_ in (0, 1)"),
    # ---------------------------------------------------------------- bandit_select
    C("S01", "bandit_select", "evaluate not callable", "bandit_select(3, {'a': 1, 'b': 2}, max_evals=20)", ["evaluate"]),
    C("S02", "bandit_select", "evaluate with the wrong arity", "bandit_select(lambda c, s: 1.0, {'a': 1, 'b': 2}, max_evals=20)", ["evaluate"]),
    C("S03", "bandit_select", "split with the wrong arity", "bandit_select(EV, {'a': 1, 'b': 2}, X, split=lambda d: (d, d), max_evals=20)", ["split"]),
    C("S04", "bandit_select", "split neither callable nor a splitter (split=5 is 5-fold since issue 34)", "bandit_select(EV, {'a': 1, 'b': 2}, X, split='five', max_evals=20)", ["split"]),
    C("S05", "bandit_select", "split ignores the seed", "bandit_select(EV, {'a': 1, 'b': 2}, X, split=lambda d, s: (d[:10], d[10:]), max_evals=20)", ["split"]),
    C("S06", "bandit_select", "evaluate returns a string", "bandit_select(lambda c, tr, te, s: 'good', {'a': 1, 'b': 2}, max_evals=20, random_state=0)", ["str"]),
    C("S07", "bandit_select", "evaluate always raises", "bandit_select(lambda c, tr, te, s: 1 / 0, {'a': 1, 'b': 2}, max_evals=50, random_state=0)", ["ZeroDivisionError", "division"]),
    C("S08", "bandit_select", "evaluate returns NaN", "bandit_select(lambda c, tr, te, s: float('nan'), {'a': 1, 'b': 2}, max_evals=20, random_state=0)", ["non-finite"]),
    C("S09", "bandit_select", "no candidates", "bandit_select(EV, {}, max_evals=20)", ["candidates"]),
    C("S10", "bandit_select", "one candidate", "bandit_select(EV, {'a': 1}, max_evals=20)", ["candidates"]),
    C("S11", "bandit_select", "data arrays of different lengths", "bandit_select(EV, {'a': 1, 'b': 2}, (X, y[:-1]), max_evals=20)", ["data"]),
    C("S12", "bandit_select", "test_size larger than the data", "bandit_select(EV, {'a': 1, 'b': 2}, X, test_size=500, max_evals=20)", ["test_size"]),
    C("S13", "bandit_select", "data is a string", "bandit_select(EV, {'a': 1, 'b': 2}, 'data', max_evals=20)", ["data"]),
    C("S14", "bandit_select", "confidence=0", "bandit_select(EV, {'a': 1, 'b': 2}, confidence=0, max_evals=20)", ["confidence"]),
    C("S15", "bandit_select", "evaluate returns a bool", "bandit_select(lambda c, tr, te, s: True, {'a': 1, 'b': 2}, max_evals=20, random_state=0)", ["bool"]),
    C("S16", "bandit_select", "evaluate returns a dict without score", "bandit_select(lambda c, tr, te, s: {'acc': 1.0}, {'a': 1, 'b': 2}, max_evals=20, random_state=0)", ["score"]),
    C("S17", "bandit_select", "payload that cannot be stored", "bandit_select(lambda c, tr, te, s: {'score': 1.0, 'payload': {'m': object()}}, {'a': 1, 'b': 2}, max_evals=20, random_state=0)", ["payload"]),
    C("S18", "bandit_select", "evaluate with 5 required arguments", "bandit_select(lambda c, tr, te, s, x: 1.0, {'a': 1, 'b': 2}, max_evals=20)", ["evaluate"]),
    OK("S50", "bandit_select", "evaluate with an optional 5th argument",
       "def f(c, tr, te, s, extra=0.0):\n    return EV(c, tr, te, s) + extra\n"
       "sel = bandit_select(f, {'a': 0.6, 'b': 0.8}, confidence=0.95, random_state=0); assert sel.best.name == 'b'"),
    OK("S51", "bandit_select", "functools.partial evaluate",
       "f = functools.partial(lambda k, c, tr, te, s: EV(c, tr, te, s) * k, 1.0)\n"
       "sel = bandit_select(f, {'a': 0.6, 'b': 0.8}, confidence=0.95, random_state=0); assert sel.best.name == 'b'"),
    OK("S52", "bandit_select", "storable payload (arrays and JSON) resumes",
       "p = os.path.join(TMP, 'pl.sqlite')\n"
       "f = lambda c, tr, te, s: {'score': EV(c, tr, te, s), 'payload': {'idx': np.arange(3), 'lab': np.array(['x', 'y'], dtype=object), 'n': 3}}\n"
       "a = bandit_select(f, {'a': 0.6, 'b': 0.8}, confidence=0.95, random_state=0, store=p)\n"
       "b = bandit_select(f, {'a': 0.6, 'b': 0.8}, confidence=0.95, random_state=0, store=p)\n"
       "k = next(iter(b.payloads)); assert b.n_reused == a.n_evaluations and b.payloads[k]['lab'].tolist() == ['x', 'y']"),
    # ---------------------------------------------------------------- ProgressiveSearchCV
    C("P01", "ProgressiveSearchCV", "NaN in X", "P().fit(nanX(), y)", ["X contains NaN"]),
    C("P02", "ProgressiveSearchCV", "single-class y", "P().fit(X, np.zeros(150))", ["y:"]),
    C("P03", "ProgressiveSearchCV", "unknown schedule", "P(schedule='foo').fit(X, y)", ["schedule"]),
    C("P04", "ProgressiveSearchCV", "train_fraction=1.5", "P(train_fraction=1.5).fit(X, y)", ["train_fraction"]),
    C("P05", "ProgressiveSearchCV", "eval_fraction=0", "P(eval_fraction=0).fit(X, y)", ["eval_fraction"]),
    C("P06", "ProgressiveSearchCV", "multi-metric scoring", "P(scoring=('accuracy',)).fit(X, y)", ["scoring"]),
    C("P07", "ProgressiveSearchCV", "invalid grid key", "P(grid={'Cx': [1, 2]}).fit(X, y)", ["param_grid"]),
    C("P08", "ProgressiveSearchCV", "3-D X", "P().fit(X.reshape(150, 2, 2), y)", ["X:"]),
    C("P09", "ProgressiveSearchCV", "X is a string", "P().fit('abc', y)", ["X"]),
    C("P10", "ProgressiveSearchCV", "every fit fails", "P(est=AlwaysFails()).fit(X, y)", ["All the", "always fails"]),
    OK("P50", "ProgressiveSearchCV", "text pipeline",
       "s = P(make_pipeline(TfidfVectorizer(), LinearSVC()), {'linearsvc__C': [0.1, 1.0]}).fit(TEXTS, TLAB); assert s.best_index_ in (0, 1)"),
    # ---------------------------------------------------------------- QuantificationBoundSearch
    C("Q01", "QuantificationBoundSearch", "X_unlabeled None", "Q().fit(X, y, None)", ["X_unlabeled"]),
    C("Q02", "QuantificationBoundSearch", "X_unlabeled with other features", "Q().fit(X, y, X[:, :2])", ["X_unlabeled"]),
    C("Q03", "QuantificationBoundSearch", "NaN in X_unlabeled", "Q().fit(X, y, nanX())", ["X_unlabeled"]),
    C("Q04", "QuantificationBoundSearch", "unknown measure", "Q(measure='f1').fit(X, y, X)", ["measure"]),
    C("Q05", "QuantificationBoundSearch", "unknown quantifier", "Q(quantifier='x').fit(X, y, X)", ["quantifier"]),
    C("Q06", "QuantificationBoundSearch", "delta=2", "Q(delta=2).fit(X, y, X)", ["delta"]),
    C("Q07", "QuantificationBoundSearch", "a regressor", "Q(Ridge(), {'alpha': [1.0, 2.0]}).fit(X, y, X)", ["estimator"]),
    C("Q08", "QuantificationBoundSearch", "single-class y", "Q().fit(X, np.zeros(150), X)", ["y"]),
    C("Q09", "QuantificationBoundSearch", "invalid grid key", "Q(grid={'Cx': [1, 2]}).fit(X, y, X)", ["param_grid"]),
    C("Q10", "QuantificationBoundSearch", "unknown tie_break", "Q(tie_break='x').fit(X, y, X)", ["tie_break"]),
    C("Q11", "QuantificationBoundSearch", "every fit fails", "Q(est=AlwaysFails()).fit(X, y, X)", ["every candidate failed", "always fails"], types=("ValueError", "TypeError", "RuntimeError", "AllEvaluationsFailedError")),
    C("Q12", "QuantificationBoundSearch", "NaN in X", "Q().fit(nanX(), y, X)", ["X contains NaN"]),
    # ---------------------------------------------------------------- nested CV
    C("N01", "cross_validate_selection", "search is a string", "cross_validate_selection('grid', X, y)", ["search"]),
    C("N02", "cross_validate_selection", "NaN in X", "cross_validate_selection(J(), nanX(), y, n_splits=3, random_state=0)", ["X contains NaN"]),
    C("N03", "cross_validate_selection", "invalid inner grid key", "cross_validate_selection(J(grid={'Cx': [1, 2]}), X, y, n_splits=3, random_state=0)", ["param_grid"]),
    C("N04", "cross_validate_selection", "n_splits=1", "cross_validate_selection(J(), X, y, n_splits=1)", ["n_splits"]),
    OK("N05", "cross_validate_selection", "outer n_splits above the smallest class (warns as scikit-learn)", "t = y.copy(); t[:2] = 7; r = cross_validate_selection(J(), X, t, n_splits=3, random_state=0); assert len(r.outer_scores) == 3"),
    C("N06", "cross_validate_selection", "multi-metric scoring", "cross_validate_selection(J(), X, y, n_splits=3, scoring=['accuracy'])", ["scoring"]),
    C("N07", "cross_validate_selection", "inner multi-metric scoring", "cross_validate_selection(J(scoring=['accuracy']), X, y, n_splits=3)", ["scoring"]),
    C("N08", "cross_validate_selection", "X is a string", "cross_validate_selection(J(), 'abc', y, n_splits=3)", ["X"]),
    C("N09", "cross_validate_selection", "single-class y", "cross_validate_selection(J(), X, np.zeros(150), n_splits=3)", ["y"]),
    OK("N50", "cross_validate_selection", "a valid nested CV", "r = cross_validate_selection(J(), X, y, n_splits=3, random_state=0); assert r.mean > 0.8 and len(r.outer_scores) == 3"),
    # ---------------------------------------------------------------- certa.run and stores
    C("R01", "certa.run", "strategy not a Strategy", "run('grid', FunctionEvaluator(lambda p, s: 1.0), {'x': [1, 2]})", ["strategy"]),
    C("R02", "certa.run", "evaluator not an Evaluator", "run(JKFoldGrid(2), lambda p, d: 1.0, {'x': [1, 2]})", ["evaluator"]),
    C("R03", "certa.run", "no candidates", "run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: 1.0), [])", ["param_grid", "candidates", "empty"]),
    C("R04", "certa.run", "bad grid key through EstimatorEvaluator",
      "run(JKFoldGrid(2), EstimatorEvaluator(LR, X, y, JKFoldPlan(2, 1, 0, True)), {'Cx': [1, 2]})", ["param_grid"]),
    C("R05", "certa.run", "FunctionEvaluator data without plan", "FunctionEvaluator(lambda p, s: 1.0, data=X)", ["plan"]),
    C("R06", "certa.run", "FunctionEvaluator fn not callable", "FunctionEvaluator(3)", ["fn"]),
    C("R07", "certa.run", "crafted pickle store runs no code",
      "p = os.path.join(TMP, 'evil.sqlite'); marker = os.path.join(TMP, 'PWNED')\n"
      "ev = FunctionEvaluator(lambda p, s: {'score': 1.0, 'payload': {'a': np.arange(2)}}); plan = {'x': [1, 2]}\n"
      "run(TopTwoThompson(0.9, max_evals=12), ev, plan, random_state=0, store=p)\n"
      "class Evil:\n    def __reduce__(self):\n        return (open, (marker, 'w'))\n"
      "c = sqlite3.connect(p); c.execute('UPDATE evaluations SET payload=?', (pickle.dumps(Evil()),)); c.commit(); c.close(); resign(p)\n"
      "_N['n'] = 0\ntry:\n    run(TopTwoThompson(0.9, max_evals=12), ev, plan, random_state=0, store=p)\nfinally:\n    assert not os.path.exists(marker), 'code ran'", ["pickle", "evil.sqlite"]),
    C("R08", "certa.run", "store with rows but no meta",
      "p = os.path.join(TMP, 'nometa.sqlite'); ev = FunctionEvaluator(lambda p, s: 1.0)\n"
      "run(TopTwoThompson(0.9, max_evals=12), ev, {'x': [1, 2]}, random_state=0, store=p)\n"
      "c = sqlite3.connect(p); c.execute('DELETE FROM meta'); c.commit(); c.close()\n_N['n'] = 0\n"
      "run(TopTwoThompson(0.9, max_evals=12), ev, {'x': [1, 2]}, random_state=0, store=p)", ["fingerprint", "nometa.sqlite"]),
    C("R09", "certa.run", "store with corrupt JSON in a row",
      "p = os.path.join(TMP, 'badjson.sqlite'); ev = FunctionEvaluator(lambda p, s: 1.0)\n"
      "run(TopTwoThompson(0.9, max_evals=12), ev, {'x': [1, 2]}, random_state=0, store=p)\n"
      "c = sqlite3.connect(p); c.execute(\"UPDATE evaluations SET details='{oops'\"); c.commit(); c.close(); resign(p)\n_N['n'] = 0\n"
      "run(TopTwoThompson(0.9, max_evals=12), ev, {'x': [1, 2]}, random_state=0, store=p)", ["badjson.sqlite", "malformed"]),
    C("R10", "certa.run", "old-format store (pickle payloads)",
      "p = os.path.join(TMP, 'old.sqlite'); ev = FunctionEvaluator(lambda p, s: 1.0)\n"
      "run(TopTwoThompson(0.9, max_evals=12), ev, {'x': [1, 2]}, random_state=0, store=p)\n"
      "c = sqlite3.connect(p); c.execute(\"DELETE FROM meta WHERE key='format'\"); c.commit(); c.close()\n_N['n'] = 0\n"
      "run(TopTwoThompson(0.9, max_evals=12), ev, {'x': [1, 2]}, random_state=0, store=p)", ["pickle", "old.sqlite"]),
    C("R11", "certa.run", "edited evaluate function refuses the store",
      "p = os.path.join(TMP, 'code.sqlite')\n"
      "run(TopTwoThompson(0.9, max_evals=12), FunctionEvaluator(lambda p, s: 1.0), {'x': [1, 2]}, random_state=0, store=p)\n_N['n'] = 0\n"
      "run(TopTwoThompson(0.9, max_evals=12), FunctionEvaluator(lambda p, s: 2.0), {'x': [1, 2]}, random_state=0, store=p)", ["evaluation code"]),
    C("R12", "certa.run", "retries a string", "run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: 1.0), {'x': [1, 2]}, retries='2')", ["retries"]),
    C("R13", "certa.run", "store is an int", "run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: 1.0), {'x': [1, 2]}, store=3)", ["store"]),
    OK("R50", "certa.run", "resume with a scoring function is accepted",
       "from sklearn.metrics import accuracy_score\np = os.path.join(TMP, 'sc.sqlite')\n"
       "sc = lambda e, A, b: accuracy_score(b, e.predict(A))\n"
       "a = J(scoring=sc, store=p).fit(X, y); b = J(scoring=sc, store=p).fit(X, y)\n"
       "assert b.selection_.n_reused == 6 and a.best_params_ == b.best_params_"),
    # ---------------------------------------------------------------- stats functions
    C("T01", "stats", "mcnemar with different lengths", "stats.mcnemar(y, y[:-1], y)", ["length", "same", "y_"]),
    C("T02", "stats", "paired_ttest with NaN", "stats.paired_ttest([1.0, np.nan, 2.0], [1.0, 2.0, 3.0])", ["NaN", "finite"]),
    C("T03", "stats", "corrected k-fold t-test with a wrong count", "stats.corrected_repeated_kfold_ttest(np.ones(7), np.zeros(7), 2, 3)", ["J", "K", "n_repeats", "n_splits", "6"]),
    C("T04", "stats", "holm with a p-value above 1", "stats.holm([0.1, 1.5])", ["pvalues", "p-value"]),
    C("T05", "stats", "bootstrap with a string", "stats.paired_bootstrap_ci('abc', [1.0, 2.0, 3.0])", ["x", "a", "scores"]),
    OK("T06", "stats", "permutation test on booleans (per-example correctness)", "r = stats.paired_permutation_test([True, False, True, True], [1.0, 0.0, 1.0, 1.0]); assert r.pvalue == 1.0"),
    C("T07", "stats", "corrected resampled t-test with n_train=0", "stats.corrected_resampled_ttest(np.ones(5), np.zeros(5), 0, 10)", ["n_train"]),
    C("T08", "stats", "mcnemar table not 2x2", "stats.mcnemar_table([[1, 2, 3]])" if False else "stats.mcnemar(table=[[1, 2, 3]])", ["table", "2"]),
    C("T09", "stats", "ttest_5x2cv with the wrong shape", "stats.ttest_5x2cv(np.ones((4, 2)))", ["5", "shape", "diffs"]),
    C("T10", "stats", "bonferroni with NaN", "stats.bonferroni([0.1, np.nan])", ["pvalues", "p-value", "NaN"]),
    # ---------------------------------------------------------------- CLI
    CLI("C01", "simulate: booleans as scores", ["simulate", "--table", "{t}", "--runs", "5"], ["t.json", "numbers"], {"t.json": b'{"a": [0.5, true], "b": [0.6]}'}),
    CLI("C02", "simulate: malformed JSON", ["simulate", "--table", "{t}", "--runs", "5"], ["t.json", "line 2"], {"t.json": b'{"a": [0.5],\n "b": [0.6,]}'}),
    CLI("C03", "simulate: binary table file", ["simulate", "--table", "{t}", "--runs", "5"], ["t.json"], {"t.json": BINARY}),
    CLI("C04", "simulate: missing table file", ["simulate", "--table", "{tmp}/nope.json", "--runs", "5"], ["nope.json"]),
    CLI("C05", "simulate: table is a list", ["simulate", "--table", "{t}", "--runs", "5"], ["t.json"], {"t.json": b'[0.5, 0.6]'}),
    CLI("C06", "simulate: non-numeric --means", ["simulate", "--means", "0.5,x", "--sds", "0.1,0.1"], ["--means"]),
    CLI("C07", "simulate: --sds length differs (3 SDs for 2 means)", ["simulate", "--means", "0.5,0.6", "--sds", "0.1,0.1,0.1"], ["sds"]),
    CLI("C08", "simulate: --runs 0", ["simulate", "--means", "0.5,0.6", "--sds", "0.1,0.1", "--runs", "0"], ["--runs"]),
    CLI("C09", "simulate: one candidate in the table", ["simulate", "--table", "{t}", "--runs", "5"], ["table", "two"], {"t.json": b'{"a": [0.5, 0.6]}'}),
    CLI("C10", "simulate: strings as scores", ["simulate", "--table", "{t}", "--runs", "5"], ["t.json", "numbers"], {"t.json": b'{"a": ["0.5"], "b": [0.6]}'}),
    CLI("C11", "compare: binary scores file", ["compare", "--scores", "{t}", "--columns", "a,b", "--test", "paired-t"], ["s.csv"], {"s.csv": BINARY}),
    CLI("C12", "compare: non-numeric score", ["compare", "--scores", "{t}", "--columns", "a,b", "--test", "paired-t"], ["s.csv", "line 3"], {"s.csv": b"a,b\n1,2\n3,x\n4,5\n"}),
    CLI("C13", "compare: empty scores file", ["compare", "--scores", "{t}", "--columns", "a,b", "--test", "paired-t"], ["s.csv"], {"s.csv": b""}),
    CLI("C14", "compare: missing column", ["compare", "--scores", "{t}", "--columns", "a,c", "--test", "paired-t"], ["s.csv", "c"], {"s.csv": b"a,b\n1,2\n3,4\n"}),
    CLI("C15", "compare: binary prediction file", ["compare", "{t}", "{t}", "--truth", "{t}"], ["p.txt"], {"p.txt": BINARY}),
    CLI("C16", "compare: prediction files of different lengths", ["compare", "{tmp}/a.txt", "{tmp}/b.txt", "--truth", "{tmp}/a.txt"], ["b.txt"], {"a.txt": b"x\ny\nx\n", "b.txt": b"x\ny\n"}),
    CLI("C17", "compare: predictions without --truth", ["compare", "{tmp}/a.txt", "{tmp}/a.txt"], ["--truth"], {"a.txt": b"x\ny\n"}),
    CLI("C18", "compare: corrected-kfold without --repeats", ["compare", "--scores", "{t}", "--columns", "a,b"], ["--repeats"], {"s.csv": b"a,b\n1,2\n3,4\n"}),
    CLI("C19", "compare: missing scores file", ["compare", "--scores", "{tmp}/none.csv", "--columns", "a,b", "--test", "paired-t"], ["none.csv"]),
    CLI("C20", "compare: ragged CSV", ["compare", "--scores", "{t}", "--columns", "a,b", "--test", "paired-t"], ["s.csv"], {"s.csv": b"a,b\n1,2\n3,4,5,6\n"}),
    CLI("C21", "demo: store is a text file", ["demo", "-J", "1", "-K", "2", "-j", "1", "--no-progress", "--store", "{t}"], ["st.sqlite"], {"st.sqlite": b"not a database " * 20}),
    CLI("C22", "demo: store is another SQLite database", ["demo", "-J", "1", "-K", "2", "-j", "1", "--no-progress", "--store", "{tmp}/other.db"], ["other.db"], {"other.db": "SQLITE_OTHER"}),
    CLI("C23", "demo: -K 1", ["demo", "-K", "1"], ["-K", "n-splits"]),
    CLI("C24", "unknown subcommand", ["frobnicate"], ["invalid choice", "frobnicate"]),
    CLI("C25", "simulate: --confidence 2", ["simulate", "--means", "0.5,0.6", "--sds", "0.1,0.1", "--confidence", "2"], ["confidence"]),
    CLI("C26", "compare: --repeats 0", ["compare", "--scores", "{t}", "--columns", "a,b", "--repeats", "0", "--folds", "2"], ["--repeats"], {"s.csv": b"a,b\n1,2\n3,4\n"}),
    # ---------------------------------------------------------------- issue 26 (second sweep) and issue 24 #11
    C("H01", "JKFoldSearchCV", "NaN in y (classifier)", "t = y.astype(float); t[3] = np.nan; J().fit(X, t)", ["y contains NaN"]),
    C("H02", "BanditSearchCV", "NaN in y (classifier)", "t = y.astype(float); t[3] = np.nan; B().fit(X, t)", ["y contains NaN"]),
    C("H03", "JKFoldSearchCV", "empty X", "J().fit(np.empty((0, 4)), np.empty(0))", ["X:"]),
    C("H04", "JKFoldSearchCV", "X = ['a b'] * 60 for a numeric estimator", "J().fit(['a b'] * 60, np.array([0, 1] * 30))", ["X:", "1-D sequence of str"]),
    C("H05", "ProgressiveSearchCV", "X = ['a b'] * 60 for a numeric estimator", "P().fit(['a b'] * 60, np.array([0, 1] * 30))", ["X:", "1-D sequence of str"]),
    OK("H06", "JKFoldSearchCV", "error_score='raise' raises at the first failed fit, the rest of the grid not run",
       "try:\n    J(est=AlwaysFails(), error_score='raise', n_repeats=2).fit(X, y)\nexcept RuntimeError as e:\n"
       "    assert 'always fails' in str(e), e\nelse:\n    raise AssertionError('no error')\nassert _N['n'] == 1, _N['n']"),
    C("H07", "certa.run", "store='' (SQLite would keep nothing)", "run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: 1.0), {'x': [1, 2]}, store='')", ["store", "nothing would be kept"]),
    C("H08", "certa.run", "store in a missing directory", "run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: 1.0), {'x': [1, 2]}, store=os.path.join(TMP, 'no', 'such', 's.sqlite'))", ["does not exist", "no/such"]),
    C("H09", "certa.run", "store where a file cannot be created (sysfs)", "run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: 1.0), {'x': [1, 2]}, store='/sys/fs/certa-sweep.sqlite')", ["cannot be created", "/sys/fs"]),
] + [
    C(f"H1{i}", "certa.run", f"store row with {what}",
      "p = os.path.join(TMP, 'rows.sqlite'); ev = FunctionEvaluator(lambda p, s: 1.0)\n"
      "run(TopTwoThompson(0.9, max_evals=12), ev, {'x': [1, 2]}, random_state=0, store=p)\n"
      f"c = sqlite3.connect(p); c.execute({sql!r}, {args}); c.commit(); c.close(); resign(p)\n_N['n'] = 0\n"
      "run(TopTwoThompson(0.9, max_evals=12), ev, {'x': [1, 2]}, random_state=0, store=p)", ["rows.sqlite", "malformed row (seq 2)"])
    for i, (what, sql, args) in enumerate([
        ("seed 'x'", "UPDATE evaluations SET draw=json_set(draw, '$.seed', 'x') WHERE seq=2", "()"),
        ("status 'weird'", "UPDATE evaluations SET status='weird' WHERE seq=2", "()"),
        ("attempt=-5", "UPDATE evaluations SET attempt=-5 WHERE seq=2", "()"),
        ("100,000 levels of nested JSON", "UPDATE evaluations SET details=? WHERE seq=2", "('[' * 100000 + ']' * 100000,)"),
    ])
] + [
    C("H20", "certa.run", "edited method of a callable-class evaluator refuses the store",
      "src = 'class Scorer:\\n    def __init__(self, sd):\\n        self.sd = sd\\n    def __call__(self, p, seed):\\n        return p[\"mu\"]\\n'\n"
      "def make(s):\n    ns = {'__name__': 'user_module'}\n    exec(s, ns)\n    return ns['Scorer'](0.05)\n"
      "p = os.path.join(TMP, 'cls.sqlite')\n"
      "run(JKFoldGrid(3, 2), FunctionEvaluator(make(src)), {'mu': [0.6, 0.8]}, random_state=0, store=p)\n_N['n'] = 0\n"
      "run(JKFoldGrid(3, 2), FunctionEvaluator(make(src.replace('return p', 'return 1.4 - p'))), {'mu': [0.6, 0.8]}, random_state=0, store=p)",
      ["evaluation code"]),
    C("H21", "JKFoldSearchCV", "edited predict of an estimator subclass refuses the store",
      "src = 'from sklearn.linear_model import LogisticRegression\\nclass Flipped(LogisticRegression):\\n    def predict(self, X):\\n        return super().predict(X)\\n'\n"
      "def make(s):\n    ns = {'__name__': 'user_module'}\n    exec(s, ns)\n    return ns['Flipped'](max_iter=300)\n"
      "p = os.path.join(TMP, 'est.sqlite')\nJ(est=make(src), store=p).fit(X, y)\n_N['n'] = 0\n"
      "J(est=make(src.replace('return super', 'return 2 - super')), store=p).fit(X, y)", ["estimator or its parameters"]),
    OK("H22", "certa.run", "JKFoldGrid(3, 2), retries=0, three candidates lose a fold: compared on common folds, not the worst chosen",
       "seeds = list(run(JKFoldGrid(3, 2), FunctionEvaluator(lambda p, s: 0.0), {'mu': [0.0]}, random_state=0).evaluations['seed'])\n"
       "fails = {0.7: seeds[0], 0.8: seeds[1], 0.9: seeds[2]}\n"
       "def ev(p, s):\n    if fails.get(p['mu']) == s:\n        raise RuntimeError('lost fold')\n    return p['mu'] + np.random.default_rng(s).normal(0, 0.01)\n"
       "sel = run(JKFoldGrid(3, 2), FunctionEvaluator(ev), {'mu': [0.6, 0.7, 0.8, 0.9]}, random_state=0, retries=0)\n"
       "assert sel.best_params == {'mu': 0.9}, sel.best_params\nassert len(sel.failures) == 3"),
    OK("H23", "certa.run", "failures that could change the choice warn (FailedEvaluationsWarning)",
       "seeds = list(run(JKFoldGrid(3, 2), FunctionEvaluator(lambda p, s: 0.0), {'mu': [0.0]}, random_state=0).evaluations['seed'])\n"
       "def ev(p, s):\n    if p['mu'] == 0.72 and s == seeds[0]:\n        raise RuntimeError('lost fold')\n"
       "    return p['mu'] + np.random.default_rng([s, int(100 * p['mu'])]).normal(0, 0.1)\n"
       "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
       "    run(JKFoldGrid(3, 2), FunctionEvaluator(ev), {'mu': [0.70, 0.72]}, random_state=0)\n"
       "assert any('could have changed the choice' in str(x.message) for x in w), [str(x.message) for x in w]"),
    C("H24", "certa.run", "score 1e308 in TopTwoThompson", "run(TopTwoThompson(0.9, max_evals=40), FunctionEvaluator(lambda p, s: 1e308 if p['mu'] == 0.8 else p['mu']), {'mu': [0.6, 0.8]}, random_state=0)", ["mu=0.8", "returned the score 1e+308"]),
    C("H25", "certa.run", "score 1e308 with noise in TopTwoThompson", "run(TopTwoThompson(0.9, max_evals=40), FunctionEvaluator(lambda p, s: p['mu'] * 1e308 * (1 + 0.1 * np.random.default_rng(s).normal())), {'mu': [0.6, 0.8]}, random_state=0)", ["mu=0.", "returned the score"]),
    C("H26", "JKFoldSearchCV", "a scorer returning 1e308 (best_score_ was inf)", "J(scoring=lambda e, A, b: 1e308).fit(X, y)", ["C=0.1", "returned the score 1e+308"]),
    OK("H27", "cli", "certa show on a store with a 10 MB name and escape sequences: truncated, escaped",
       "import contextlib, io, json as _j\nfrom certa.cli import main as cli\np = os.path.join(TMP, 'names.sqlite')\n"
       "run(JKFoldGrid(2, 1), FunctionEvaluator(lambda p, s: p['x']), {'x': [0.1, 0.2]}, random_state=0, store=p)\n"
       "c = sqlite3.connect(p); d = _j.loads(c.execute(\"SELECT value FROM meta WHERE key='description'\").fetchone()[0])\n"
       "d['candidates'] = ['C=' + '9' * 10_000_000, 'C=1\\x1b[31m\\x1b]0;owned\\x07']\n"
       "c.execute(\"UPDATE meta SET value=? WHERE key='description'\", (_j.dumps(d),)); c.commit(); c.close(); resign(p)\n"
       "for argv in (['show', p], ['show', p, '--json']):\n    out = io.StringIO()\n"
       "    with contextlib.redirect_stdout(out):\n        assert cli(argv) == 0\n"
       "    text = out.getvalue()\n    assert len(text) < 20_000 and '\\x1b' not in text and '\\x07' not in text, len(text)"),
    CLI("H28", "simulate: --sds -0.1,0.1 (a negative-looking list)", ["simulate", "--means", "0.5,0.6", "--sds", "-0.1,0.1"], ["sds"]),
    # issue 31 items 2 and 4: a damaged store file, a dangling link, a flipped bit in a stored score
    C("H29", "certa.run", "store file damaged (its pages after the first overwritten)",
      "p = os.path.join(TMP, 'd.sqlite'); ev = FunctionEvaluator(lambda p, s: p['x'])\n"
      "run(JKFoldGrid(2), ev, {'x': [1, 2]}, random_state=0, store=p)\n"
      + DAMAGE_PAGES + "run(JKFoldGrid(2), ev, {'x': [1, 2]}, random_state=0, store=p)",
      ["d.sqlite", "is damaged"]),
    C("H30", "certa.load", "load of a damaged store file",
      "p = os.path.join(TMP, 'd.sqlite')\n"
      "run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: p['x']), {'x': [1, 2]}, random_state=0, store=p)\n"
      + DAMAGE_PAGES + "certa.load(p)", ["d.sqlite", "is damaged"]),
    C("H31", "certa.run", "store is a dangling symbolic link",
      "p = os.path.join(TMP, 'link.sqlite'); os.symlink(os.path.join(TMP, 'gone', 'x.sqlite'), p)\n"
      "run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: 1.0), {'x': [1, 2]}, store=p)", ["link.sqlite", "symbolic link"]),
    OK("H32", "certa.run", "a single bit flipped in a stored score: named in a warning, evaluated again, same result",
       "import struct, sqlite3 as _s\np = os.path.join(TMP, 'flip.sqlite')\n"
       "ev = FunctionEvaluator(lambda p, s: p['x'] + np.random.default_rng(s).normal(0, 0.3))\n"
       "first = run(JKFoldGrid(3), ev, {'x': [0.0, 0.1, 0.2]}, random_state=0, store=p)\n"
       "c = _s.connect(p); score = c.execute('SELECT score FROM evaluations WHERE seq=4').fetchone()[0]; c.close()\n"
       "b = bytearray(open(p, 'rb').read()); i = bytes(b).index(struct.pack('>d', score)); b[i + 7] ^= 1\n"
       "open(p, 'wb').write(bytes(b))\n_N['n'] = 0\n"
       "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
       "    again = run(JKFoldGrid(3), ev, {'x': [0.0, 0.1, 0.2]}, random_state=0, store=p)\n"
       "assert any('seq 4 ' in str(x.message) and 'checksum' in str(x.message) for x in w), [str(x.message) for x in w]\n"
       "assert _N['n'] == 1 and again.best_params == first.best_params, (_N['n'], again.best_params)"),
]


def _prepare_files(case: Case, tmp: str) -> None:
    import sqlite3

    for name, content in case.files.items():
        path = os.path.join(tmp, name)
        if content == "SQLITE_OTHER":
            con = sqlite3.connect(path)
            con.execute("create table t (a)")
            con.commit()
            con.close()
        else:
            with open(path, "wb") as fh:
                fh.write(content)


_BASE: dict | None = None


def _base_namespace() -> dict:
    """The preamble run once in this process: forked cases start from it (imports done once)."""
    global _BASE
    if _BASE is None:
        _BASE = {"__name__": "__sweep__"}
        exec(compile(PREAMBLE, "<preamble>", "exec"), _BASE)
    return _BASE


def _child(case: Case, tmp: str, conn) -> None:  # runs in a forked process
    import io
    import traceback

    os.chdir(tmp)
    os.environ["SWEEP_TMP"] = tmp
    if case.cli is not None:
        from certa.cli import main as cli_main

        first = next(iter(case.files), "")
        argv = [a.replace("{t}", os.path.join(tmp, first)).replace("{tmp}", tmp) for a in case.cli]
        err = io.StringIO()
        sys.stderr = err
        sys.stdout = io.StringIO()
        try:
            rc = cli_main(argv)
        except SystemExit as exc:  # argparse
            rc = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # noqa: BLE001 - what `python -m certa` would print
            traceback.print_exc()
            rc = 1
        conn.send({"cli": True, "returncode": rc, "stderr": err.getvalue()})
        return
    ns = dict(_base_namespace())
    ns["TMP"] = tmp
    ns["_N"]["n"] = 0
    try:
        exec(compile(case.code, "<case>", "exec"), ns)
        conn.send({"raised": False, "n_evals": ns["_N"]["n"]})
    except BaseException as exc:  # noqa: BLE001
        conn.send({"raised": True, "type": type(exc).__name__, "message": str(exc)[:600], "n_evals": ns["_N"]["n"],
                   "check_failed": isinstance(exc, AssertionError)})


def run_case(case: Case, timeout: float, isolation: str = "fork") -> dict:
    """Run one case in its own process (forked from one that imported everything, or a fresh interpreter)."""
    if isolation == "fork":
        return _run_forked(case, timeout)
    return _run_subprocess(case, timeout)


def _run_forked(case: Case, timeout: float) -> dict:
    import multiprocessing as mp

    _base_namespace()
    ctx = mp.get_context("fork")
    with tempfile.TemporaryDirectory(prefix="certa-sweep-") as tmp:
        _prepare_files(case, tmp)
        parent, child = ctx.Pipe(duplex=False)
        t0 = time.perf_counter()
        proc = ctx.Process(target=_child, args=(case, tmp, child), daemon=True)
        proc.start()
        child.close()
        got = parent.poll(timeout)
        seconds = round(time.perf_counter() - t0, 1)
        if not got:
            proc.kill()
            proc.join(5)
            if proc.exitcode not in (None, -9) and not parent.poll(0):
                return {"status": "unclear", "seconds": seconds, "detail": f"process died (exit {proc.exitcode})"}
            return {"status": "hang", "seconds": seconds, "detail": f"no answer in {timeout} s"}
        try:
            res = parent.recv()
        except EOFError:
            proc.join(5)
            return {"status": "unclear", "seconds": seconds, "detail": f"process died (exit {proc.exitcode})"}
        proc.join(10)
        if proc.is_alive():
            proc.kill()
    if res.get("cli"):
        class _P:  # the shape _classify_cli reads
            returncode, stderr = res["returncode"], res["stderr"]
        return _classify_cli(case, _P, seconds)
    return _classify_result(case, res, seconds)


def _run_subprocess(case: Case, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="certa-sweep-") as tmp:
        env["SWEEP_TMP"] = tmp
        _prepare_files(case, tmp)
        t0 = time.perf_counter()
        if case.cli is not None:
            first = next(iter(case.files), "")
            argv = [a.replace("{t}", os.path.join(tmp, first)).replace("{tmp}", tmp) for a in case.cli]
            cmd, stdin = [sys.executable, "-m", "certa", *argv], None
        else:
            cmd, stdin = [sys.executable, "-c", PREAMBLE + RUNNER], case.code
        try:
            proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            return {"status": "hang", "seconds": round(time.perf_counter() - t0, 1), "detail": f"no answer in {timeout} s"}
        seconds = round(time.perf_counter() - t0, 1)
    if case.cli is not None:
        return _classify_cli(case, proc, seconds)
    return _classify_api(case, proc, seconds)


def _names_it(case: Case, message: str) -> bool:
    return not case.names or any(n.lower() in message.lower() for n in case.names)


def _classify_cli(case: Case, proc, seconds: float) -> dict:
    err = proc.stderr.strip()
    out = {"seconds": seconds, "exit_code": proc.returncode, "detail": err.splitlines()[-1][:300] if err else ""}
    if proc.returncode == 0:
        out["status"] = "silent-wrong"
    elif "Traceback" in err or not err:
        out["status"] = "unclear"
        out["detail"] = ("traceback: " if err else "no message") + out["detail"]
    else:
        out["status"] = "clear-before" if _names_it(case, err) else "unclear"
    return out


def _classify_api(case: Case, proc, seconds: float) -> dict:
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT ")), None)
    if line is None:
        return {"status": "unclear", "seconds": seconds,
                "detail": f"process died (exit {proc.returncode}): {proc.stderr.strip()[-300:]}"}
    return _classify_result(case, json.loads(line[len("@@RESULT "):]), seconds)


def _classify_result(case: Case, res: dict, seconds: float) -> dict:
    out = {"seconds": seconds, "n_evals": res["n_evals"]}
    if case.expect == "accept":
        if not res["raised"]:
            out["status"] = "accepted"
        else:
            out["status"] = "refused-valid" if not res.get("check_failed") else "silent-wrong"
            out["detail"] = f"{res['type']}: {res['message'][:300]}"
        return out
    if not res["raised"]:
        out["status"] = "silent-wrong"
        out["detail"] = "no error"
        return out
    out["detail"] = f"{res['type']}: {' '.join(res['message'].split())[:300]}"
    if res.get("check_failed"):
        out["status"] = "silent-wrong"
    elif res["type"] in case.types and _names_it(case, res["message"]):
        out["status"] = "clear-before" if res["n_evals"] == 0 else "clear-later"
    else:
        out["status"] = "unclear"
    return out


STATUSES = ["clear-before", "clear-later", "accepted", "unclear", "refused-valid", "hang", "silent-wrong"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="reliability.py bad-input", description=__doc__.split("\n")[0])
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case before it counts as a hang")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default=None, help="comma-separated case ids")
    ap.add_argument("--out", default=os.environ.get("CERTA_BENCH_RESULTS") or str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--tag", default="bad_input_sweep")
    ap.add_argument("--isolation", choices=["fork", "subprocess"], default="fork",
                    help="fork: each case in a process forked from one that imported everything (fast); "
                    "subprocess: a fresh interpreter per case")
    ap.add_argument("--doc", default=None, help="a markdown file whose BAD_INPUT_START/END block gets the tables")
    args = ap.parse_args(argv)
    cases = CASES if not args.only else [c for c in CASES if c.id in set(args.only.split(","))]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        if args.isolation == "fork":
            _base_namespace()  # import once, before any thread forks
        results = list(pool.map(lambda c: run_case(c, args.timeout, args.isolation), cases))
    rows = [{"id": c.id, "front": c.front, "what": c.what, "expect": c.expect, **r} for c, r in zip(cases, results)]
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    summary = {"tried": len(rows), **counts, "seconds": round(time.perf_counter() - t0, 1),
               "timeout": args.timeout, "load": os.getloadavg()[0]}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"{args.tag}.json"), "w") as fh:
        json.dump({"summary": summary, "cases": rows}, fh, indent=1)
    md = ["| tried | clear error before any evaluation | clear error later | accepted (valid edge case) | "
          "unclear error | valid input refused | hang | silent wrong |",
          "|---|---|---|---|---|---|---|---|",
          f"| {summary['tried']} | {counts['clear-before']} | {counts['clear-later']} | {counts['accepted']} | "
          f"{counts['unclear']} | {counts['refused-valid']} | {counts['hang']} | {counts['silent-wrong']} |", "",
          "| id | front | input | result | evaluations | message |", "|---|---|---|---|---|---|"]
    for r in rows:
        msg = str(r.get("detail", "")).replace("|", "\\|")[:160]
        md.append(f"| {r['id']} | {r['front']} | {r['what']} | {r['status']} | {r.get('n_evals', '-')} | {msg} |")
    with open(os.path.join(args.out, f"{args.tag}.md"), "w") as fh:
        fh.write("\n".join(md) + "\n")
    if args.doc:
        doc = Path(args.doc).read_text()
        start, end = "<!-- BAD_INPUT_START -->", "<!-- BAD_INPUT_END -->"
        if start in doc and end in doc:
            head, rest = doc.split(start, 1)
            tail = rest.split(end, 1)[1]
            stamp = (f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: `python benchmarks/reliability.py bad-input "
                     f"--timeout {args.timeout:g}` ({summary['seconds']:.0f} s, load {summary['load']:.1f}).")
            Path(args.doc).write_text(head + start + "\n" + stamp + "\n\n" + "\n".join(md) + "\n" + end + tail)
    print("\n".join(md[:3]))
    for r in rows:
        if r["status"] in ("unclear", "refused-valid", "hang", "silent-wrong"):
            print(f"{r['id']} {r['status']}: {r['what']}: {r.get('detail', '')}")
    return 0
