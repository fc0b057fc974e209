"""Issue #11, boundary half: stores hold data only, fingerprints cannot be fooled, bad input is refused up front."""
from __future__ import annotations

import io
import pickle
import sqlite3
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from _helpers import outputs_under_hash_seeds, small_run, write_sql
from sklearn.datasets import load_iris
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import FitFailedWarning
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from certa import (
    BanditSearchCV,
    FunctionEvaluator,
    JKFoldGrid,
    JKFoldSearchCV,
    ProgressiveSearchCV,
    QuantificationBoundSearch,
    SQLiteStore,
    TopTwoThompson,
    bandit_select,
    cross_validate_selection,
    run,
    simulate,
)
from certa.cli import main as cli_main
from certa.engine.fingerprint import stable_hash
from certa.engine.payload import decode_payload, encode_payload, normalize_payload

ROOT = Path(__file__).resolve().parents[1]
X, Y = load_iris(return_X_y=True)
LR = LogisticRegression(max_iter=300)
GRID = {"C": [0.1, 1.0]}


def _jk(est=LR, grid=GRID, **kw):
    kw.setdefault("n_splits", 3)
    kw.setdefault("n_repeats", 1)
    kw.setdefault("random_state", 0)
    return JKFoldSearchCV(est, grid, **kw)


# ------------------------------------------------------------------ a store is data, never code
class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_crafted_pickle_store_runs_no_code(tmp_path):
    path, marker = tmp_path / "evil.sqlite", tmp_path / "PWNED"
    small_run(path)
    write_sql(path, "UPDATE evaluations SET payload=?", (pickle.dumps(_Evil(str(marker))),))
    assert pickle.loads(pickle.dumps(_Evil(str(tmp_path / "control")))) is not None  # the blob would run code
    assert (tmp_path / "control").exists()
    with pytest.raises(ValueError, match=r"evil\.sqlite.*pickle"):
        small_run(path)
    assert not marker.exists()


def test_npz_payload_with_an_object_array_is_not_unpickled(tmp_path):
    buf = io.BytesIO()
    np.savez(buf, __structure__=np.frombuffer(b'{"a": {"__ndarray__": "a0"}}', dtype=np.uint8),
             a0=np.array([_Evil(str(tmp_path / "PWNED"))], dtype=object))
    with pytest.raises(ValueError, match="without pickle"):
        decode_payload(buf.getvalue())
    assert not (tmp_path / "PWNED").exists()


def test_old_format_store_is_refused_saying_why(tmp_path):
    path = tmp_path / "old.sqlite"
    small_run(path)
    write_sql(path, "DELETE FROM meta WHERE key='format'")
    with pytest.raises(ValueError, match=r"old\.sqlite.*older certa.*pickles"):
        small_run(path)


def test_payload_round_trip_is_exact():
    payload = {"test_index": np.arange(5), "y_pred": np.array(["a", "bb", "a"], dtype=object),
               "probs": np.linspace(0, 1, 6).reshape(2, 3), "nested": {"k": [1, 2.5, None, "s", True]},
               "nan": float("nan"), "n": np.int64(3)}
    back = decode_payload(encode_payload(normalize_payload(payload)))
    np.testing.assert_array_equal(back["test_index"], payload["test_index"])
    assert back["y_pred"].dtype.kind == "U" and back["y_pred"].tolist() == ["a", "bb", "a"]
    np.testing.assert_array_equal(back["probs"], payload["probs"])
    assert back["nested"] == {"k": [1, 2.5, None, "s", True]} and np.isnan(back["nan"]) and back["n"] == 3


@pytest.mark.parametrize("bad, where", [({"m": LogisticRegression()}, "payload['m']"),
                                        ({"a": np.array([1, "x"], dtype=object)}, "object array"),
                                        ({1: 2}, "keys must be str")])
def test_payload_that_cannot_be_stored_is_a_recorded_failure(bad, where):
    with pytest.raises(TypeError, match=where.replace("[", r"\[").replace("]", r"\]")):
        normalize_payload(bad)
    # every evaluation fails with that message: the run stops with it (the engine's all-failed error)
    with pytest.raises(RuntimeError, match="cannot be stored"):
        run(JKFoldGrid(2), FunctionEvaluator(lambda p, s: {"score": 1.0, "payload": bad}), {"x": [1, 2]})


def test_keep_predictions_payload_survives_a_store(tmp_path):
    from certa import EstimatorEvaluator, JKFoldPlan

    texts = [f"{w} {w} item{i}" for i in range(20) for w in ("apple", "engine")]
    labels = np.array(["fruit", "car"] * 20, dtype=object)
    ev = EstimatorEvaluator(make_pipeline(TfidfVectorizer(), LinearSVC()), texts, labels, JKFoldPlan(2, 1, 0, True),
                            keep_predictions=True)
    first = run(JKFoldGrid(2), ev, {"linearsvc__C": [0.1, 1.0]}, store=tmp_path / "p.sqlite")
    again = run(JKFoldGrid(2), ev, {"linearsvc__C": [0.1, 1.0]}, store=tmp_path / "p.sqlite")
    assert again.n_reused == 4
    for key, p in first.payloads.items():
        np.testing.assert_array_equal(again.payloads[key]["y_pred"], p["y_pred"])
        assert again.payloads[key]["y_pred"].dtype.kind == "U"


# ------------------------------------------------------------------ malformed stores
def test_malformed_stores_name_the_file(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a database " * 50)
    with pytest.raises(ValueError, match=r"notes\.txt.*not an SQLite"):
        SQLiteStore(text)
    other = tmp_path / "other.db"
    write_sql(other, "CREATE TABLE t (a)")
    with pytest.raises(ValueError, match=r"other\.db.*not a certa store.*\['t'\]"):
        SQLiteStore(other)
    con = sqlite3.connect(other)  # left untouched: no certa table was added
    assert {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")} == {"t"}
    con.close()
    bad_json = tmp_path / "badjson.sqlite"
    small_run(bad_json)
    write_sql(bad_json, "UPDATE evaluations SET details='{oops' WHERE seq=1")
    with pytest.raises(ValueError, match=r"badjson\.sqlite.*malformed row \(seq 1\)"):
        small_run(bad_json)


def test_store_without_meta_rows_is_not_adopted(tmp_path):
    path = tmp_path / "nometa.sqlite"
    small_run(path)
    write_sql(path, "DELETE FROM meta")
    with pytest.raises(ValueError, match=r"nometa\.sqlite.*no run fingerprint"):
        small_run(path)


# ------------------------------------------------------------------ fingerprints
def test_resume_with_a_scoring_function_is_accepted(tmp_path, n_evals):
    path = tmp_path / "s.sqlite"
    scorer = lambda est, A, b: accuracy_score(b, est.predict(A))
    first = _jk(scoring=scorer, store=path).fit(X, Y)
    n_evals["n"] = 0
    again = _jk(scoring=lambda est, A, b: accuracy_score(b, est.predict(A)), store=path).fit(X, Y)
    assert n_evals["n"] == 0 and again.selection_.n_reused == 6
    assert again.best_params_ == first.best_params_


def test_edited_evaluate_function_refuses_the_store(tmp_path):
    path = tmp_path / "f.sqlite"
    bandit_select(lambda c, tr, te, s: c + 0.01 * (s % 7), {"a": 1, "b": 2}, max_evals=12, random_state=0, store=path)
    # same name, same source line shape, another body: stale scores must not be reused
    with pytest.raises(ValueError, match="evaluation code differs"):
        bandit_select(lambda c, tr, te, s: c - 0.01 * (s % 7), {"a": 1, "b": 2}, max_evals=12, random_state=0,
                      store=path)
    again = bandit_select(lambda c, tr, te, s: c + 0.01 * (s % 7), {"a": 1, "b": 2}, max_evals=12, random_state=0,
                          store=path)
    assert again.n_reused == again.n_evaluations


def _make(k, default=1.0):
    def evaluate(c, tr, te, s, scale=default):
        return c * k * scale
    return evaluate


def test_function_fingerprint_sees_closures_defaults_and_code():
    assert stable_hash(_make(2)) == stable_hash(_make(2))
    assert stable_hash(_make(2)) != stable_hash(_make(3))  # closure value
    assert stable_hash(_make(2)) != stable_hash(_make(2, default=2.0))  # default
    assert stable_hash(lambda c: c + 1) != stable_hash(lambda c: c + 2)  # constants
    assert stable_hash(lambda c: c + 1) != stable_hash(lambda c: c - 1)  # bytecode


def test_estimator_fingerprint_is_deep_not_a_cut_repr():
    vocab = {f"word{i}": i for i in range(300)}
    vocab2 = dict(vocab, word299=300)
    a = make_pipeline(TfidfVectorizer(vocabulary=vocab), LinearSVC())
    b = make_pipeline(TfidfVectorizer(vocabulary=vocab2), LinearSVC())
    assert repr(a.get_params(deep=False))[:700] == repr(b.get_params(deep=False))[:700]
    assert stable_hash(a) != stable_hash(b)
    assert stable_hash(a) == stable_hash(make_pipeline(TfidfVectorizer(vocabulary=dict(vocab)), LinearSVC()))
    w1, w2 = np.ones(4), np.ones(4)
    w2[-1] = 2
    assert stable_hash(LogisticRegression(class_weight={0: 1.0})) != stable_hash(LogisticRegression(class_weight={0: 2.0}))
    assert stable_hash(Ridge(alpha=w1)) != stable_hash(Ridge(alpha=w2))


def test_refused_store_says_which_part_differs(tmp_path):
    path = tmp_path / "r.sqlite"
    _jk(store=path).fit(X, Y)
    with pytest.raises(ValueError, match="its candidates differs"):
        _jk(store=path, grid={"C": [0.5, 2.0]}).fit(X, Y)
    with pytest.raises(ValueError, match="data differs"):
        _jk(store=path).fit(X + 1, Y)
    with pytest.raises(ValueError, match="seed"):
        _jk(store=path, random_state=1).fit(X, Y)
    with pytest.raises(ValueError, match="estimator or its parameters differs"):
        _jk(LogisticRegression(max_iter=301), store=path).fit(X, Y)


_FP_MODULE = textwrap.dedent('''
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score
    from certa import FunctionEvaluator, JKFoldPlan, EstimatorEvaluator, JKFoldGrid, TopTwoThompson
    from certa.engine.candidates import as_candidates
    from certa.engine.runner import run_fingerprint
    SCALE = 3
    def evaluate(p, s, k={"a": {1, 2, 3}}):
        return p["x"] * SCALE + len(k)
    def fingerprints():
        X = np.arange(40.0).reshape(20, 2); y = np.array([0, 1] * 10)
        scorer = lambda e, A, b: accuracy_score(b, e.predict(A))
        est = EstimatorEvaluator(LogisticRegression(class_weight={0: 1.0, 1: 2.0}), X, y, JKFoldPlan(2, 1, 0, True),
                                 scoring=scorer)
        return [run_fingerprint(JKFoldGrid(2), est, as_candidates({"C": [0.1, 1.0]}), 0),
                run_fingerprint(TopTwoThompson(0.9), FunctionEvaluator(evaluate), as_candidates({"x": [1, 2]}), 0)]
''')


def test_fingerprint_is_stable_across_processes(tmp_path):
    (tmp_path / "fp_mod.py").write_text(_FP_MODULE)
    code = "import sys; sys.path.insert(0, sys.argv[1]); import fp_mod; print(fp_mod.fingerprints())"
    outs = outputs_under_hash_seeds(code, str(tmp_path))
    assert outs[0] == outs[1] and outs[0].startswith("['")


# ------------------------------------------------------------------ everything failed, yet a "best"
class _AlwaysFails(LogisticRegression):
    def fit(self, X, y):
        raise RuntimeError("this fit always fails")


class _FailsForLargeC(LogisticRegression):
    def fit(self, X, y):
        if self.C == 10.0 and X[0, 0] < 5.0:  # some folds of C=10 fail
            raise RuntimeError("flaky fit")
        return super().fit(X, y)


def test_all_fits_failing_raises_like_scikit_learn():
    with pytest.raises(ValueError, match=r"All the 6 fits failed(.|\n)*this fit always fails"):
        _jk(_AlwaysFails()).fit(X, Y)


def test_some_fits_failing_warns_and_the_failed_candidate_ranks_last():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = _jk(_FailsForLargeC(max_iter=300), {"C": [0.01, 10.0]}).fit(X, Y)
    msgs = [str(w.message) for w in caught if issubclass(w.category, FitFailedWarning)]
    assert len(msgs) == 1 and "flaky fit" in msgs[0]
    # as GridSearchCV(error_score=nan): C=10 scores better on the folds it finished, yet ranks last
    assert np.isnan(s.cv_results_["mean_test_score"][1])
    assert s.cv_results_["rank_test_score"].tolist() == [1, 2] and s.best_index_ == 0


@pytest.mark.parametrize("scoring", [["accuracy", "f1_macro"], {"acc": "accuracy"}, ("accuracy",)])
def test_multi_metric_scoring_is_refused_up_front(scoring, n_evals):
    # JKFoldSearchCV takes several metrics (issue #15); the adaptive fronts decide by one score
    for front in (lambda: BanditSearchCV(LR, GRID, scoring=scoring, max_evals=10).fit(X, Y),
                  lambda: ProgressiveSearchCV(LR, GRID, scoring=scoring).fit(X, Y),
                  lambda: cross_validate_selection(_jk(), X, Y, n_splits=3, scoring=scoring)):
        with pytest.raises(ValueError, match="scoring"):
            front()
    assert n_evals["n"] == 0


# ------------------------------------------------------------------ data errors up front
def _nan_x():
    Z = X.copy()
    Z[5, 2] = np.nan
    return Z


def _one_member():
    t = Y.copy()
    t[0] = 7
    return t


UPFRONT = [
    ("X string", lambda: _jk().fit("abc", Y), TypeError, "X: expected an array-like"),
    ("NaN in X", lambda: _jk().fit(_nan_x(), Y), ValueError, "X contains NaN, which LogisticRegression"),
    ("inf in X", lambda: _jk().fit(np.where(X > 7.5, np.inf, X), Y), ValueError, "X contains infinity"),
    ("3-D X", lambda: _jk().fit(X.reshape(150, 2, 2), Y), ValueError, "X: expected a 2-D array"),
    ("1-D X", lambda: _jk().fit(X[:, 0], Y), ValueError, "X: expected a 2-D array.*1-D"),
    ("2-D y", lambda: _jk().fit(X, np.c_[Y, Y]), ValueError, "y: expected a 1-D array"),
    ("strings in X", lambda: _jk().fit(np.where(X > 7.5, "a", X.astype(str)).astype(object), Y), ValueError,
     "X: contains non-numeric"),
    ("grid key", lambda: _jk(grid={"Cx": [1, 2]}).fit(X, Y), ValueError, r"param_grid: \['Cx'\]"),
    ("grid value", lambda: BanditSearchCV(LR, {"C": [-1.0, 1.0]}, max_evals=10).fit(X, Y), ValueError,
     "param_grid: candidate C=-1.0"),
    ("single class", lambda: _jk().fit(X, np.zeros(150)), ValueError, "y: LogisticRegression is a classifier"),
    ("NaN in y", lambda: _jk(Ridge(), {"alpha": [1.0, 2.0]}).fit(X, np.where(X[:, 0] > 7.5, np.nan, X[:, 0])),
     ValueError, "y contains NaN"),
    ("bandit test_size", lambda: BanditSearchCV(LR, GRID, test_size=500, max_evals=10).fit(X, Y), ValueError,
     "test_size=500"),
    ("bandit single class", lambda: BanditSearchCV(LR, GRID, max_evals=10).fit(X, np.zeros(150)), ValueError,
     "y: LogisticRegression is a classifier"),
    ("bandit_select arity", lambda: bandit_select(lambda c, s: 1.0, {"a": 1, "b": 2}, max_evals=10), TypeError,
     r"evaluate must be callable as evaluate\(candidate, train, test, seed\)"),
    ("bandit_select split arity", lambda: bandit_select(lambda c, tr, te, s: 1.0, {"a": 1, "b": 2}, X,
                                                        split=lambda d: (d, d), max_evals=10), TypeError, "split must"),
    ("progressive NaN", lambda: ProgressiveSearchCV(LR, GRID).fit(_nan_x(), Y), ValueError, "X contains NaN"),
    ("quantification NaN unlabeled", lambda: QuantificationBoundSearch(LR, GRID).fit(X, Y, _nan_x()), ValueError,
     "X_unlabeled contains NaN"),
    ("nested NaN", lambda: cross_validate_selection(_jk(), _nan_x(), Y, n_splits=3, random_state=0), ValueError,
     "X contains NaN"),
    ("nested grid key", lambda: cross_validate_selection(_jk(grid={"Cx": [1, 2]}), X, Y, n_splits=3), ValueError,
     "param_grid"),
]


@pytest.mark.parametrize("name, call, exc, message", UPFRONT, ids=[u[0] for u in UPFRONT])
def test_bad_data_is_refused_before_any_evaluation(name, call, exc, message, n_evals):
    with pytest.raises(exc, match=message):
        call()
    assert n_evals["n"] == 0


def test_jkfold_class_with_one_member_warns_as_scikit_learn():
    # JKFoldSearchCV follows GridSearchCV here (its parity with scikit-learn): a warning, not an error
    with pytest.warns(UserWarning, match="least populated class"):
        s = _jk().fit(X, _one_member())
    assert np.isfinite(s.best_score_)


def test_bandit_class_with_one_member_warns_and_splits_unstratified():
    # BanditSearchCV goes on as GridSearchCV does (issue 33: the lemma grid's 287 one-member classes), with
    # random splits that are not stratified, said in a warning and in the stored plan
    from sklearn.model_selection import train_test_split

    def run(y):
        seen = []

        def scoring(est, X_test, y_test):
            seen.append(sorted(y_test.tolist()))
            return est.score(X_test, y_test)

        s = BanditSearchCV(LR, GRID, scoring=scoring, max_evals=10, random_state=0).fit(X, y)
        return s, seen

    y = _one_member()
    with pytest.warns(UserWarning, match="1 of the 4 classes have only 1 member, so the random splits are not stratified"):
        s, seen = run(y)
    assert np.isfinite(s.best_score_)
    seed = int(s.selection_.evaluations["seed"].iloc[0])
    _, test = train_test_split(np.arange(len(y)), test_size=0.2, random_state=seed)
    assert seen[0] == sorted(y[test].tolist())   # the first row's test part: the unstratified split
    y2 = _one_member()
    y2[1] = 7
    with warnings.catch_warnings():   # a two-member class: stratified as before, without the warning
        warnings.filterwarnings("error", message=".*only 1 member")
        s2, seen2 = run(y2)
    seed = int(s2.selection_.evaluations["seed"].iloc[0])
    _, test = train_test_split(np.arange(len(y2)), test_size=0.2, random_state=seed, stratify=y2)
    assert seen2[0] == sorted(y2[test].tolist())


ACCEPTED = [
    ("text pipeline on strings", lambda: _jk(make_pipeline(TfidfVectorizer(), LinearSVC()), {"linearsvc__C": [0.1, 1.0]})
     .fit([f"{w} item{i}" for i in range(20) for w in ("apple pear", "engine wheel")], [0, 1] * 20)),
    ("HistGradientBoosting with NaN", lambda: _jk(HistGradientBoostingClassifier(max_iter=5), {"max_depth": [2, 3]})
     .fit(_nan_x(), Y)),
    ("imputer pipeline with NaN", lambda: _jk(make_pipeline(SimpleImputer(), LogisticRegression(max_iter=300)),
                                             {"logisticregression__C": [0.1, 1.0]}).fit(_nan_x(), Y)),
    ("object array of numbers", lambda: _jk().fit(X.astype(object), Y)),
]


@pytest.mark.parametrize("name, call", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_what_the_estimator_accepts_is_not_refused(name, call):
    s = call()
    assert s.best_score_ > 0.8 and not np.isnan(s.cv_results_["mean_test_score"]).any()


# ------------------------------------------------------------------ simulate and the CLI
def test_simulate_refuses_booleans_as_scores():
    with pytest.raises(ValueError, match=r"table\['a'\] must hold numbers.*True"):
        simulate(TopTwoThompson(0.9), table={"a": [True, 0.5], "b": [0.6, 0.7]}, n_runs=2)


@pytest.mark.parametrize("argv, content, message", [
    (["simulate", "--table", "{f}", "--runs", "2"], b'{"a": [0.5, true], "b": [0.6]}', "scores of 'a' must be numbers"),
    (["simulate", "--table", "{f}", "--runs", "2"], b'{"a": [0.5],\n "b": [0.6,]}', "line 2, column"),
    (["simulate", "--table", "{f}", "--runs", "2"], bytes(range(256)), "not a UTF-8 text file"),
    (["compare", "--scores", "{f}", "--columns", "a,b", "--test", "paired-t"], b"a,b\n1,2\n3,x\n", "line 3: column 'b'"),
    (["compare", "--scores", "{f}", "--columns", "a,b", "--test", "paired-t"], bytes(range(256)), "NUL bytes"),
    (["compare", "{f}", "{f}", "--truth", "{f}"], bytes(range(256)), "not a UTF-8 text file of labels"),
])
def test_cli_file_errors_name_the_file_in_one_line(tmp_path, capsys, argv, content, message):
    f = tmp_path / "input.dat"
    f.write_bytes(content)
    assert cli_main([a.replace("{f}", str(f)) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(f) in err and message in err


# ------------------------------------------------------------------ fast version of the sweep
FAST_SWEEP = ["J06", "J15", "J22", "J38", "B01", "S02", "R07", "C02"]


def test_bad_input_sweep_subset():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from _reliability import bad_input as sweep
    finally:
        sys.path.pop(0)
    by_id = {c.id: c for c in sweep.CASES}
    cases = [by_id[k] for k in FAST_SWEEP]
    assert len(cases) == len(FAST_SWEEP) and len(sweep.CASES) >= 100
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        results = dict(zip(FAST_SWEEP, pool.map(lambda c: sweep.run_case(c, 120.0, "subprocess"), cases)))
    assert all(r["status"] in ("clear-before", "clear-later") for r in results.values()), results
    assert results["J38"]["status"] == "clear-later"  # every fit ran and failed: the error comes after
    assert all(results[k]["status"] == "clear-before" for k in FAST_SWEEP if k != "J38")
