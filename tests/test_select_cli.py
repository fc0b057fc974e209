"""certa select: the user's function from an import path, candidates from a file, a killed run resumed."""
import json
import os
import signal
import subprocess
import sys

import pytest
from _gate import gate_env, wait_until
from _helpers import stored_rows

from certa.cli import main
from certa.userfiles import UserFileError, read_candidates, resolve_function

EVALUATE = '''
import time
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from _gate import gate
from certa.datasets import load_debian_small

X, y = load_debian_small(return_X_y=True)
X, y = np.asarray(X[:500], dtype=object), np.asarray(y[:500])


def evaluate(params, seed):
    """Train on a fresh random 80 % of the data (by seed), score on the rest."""
    gate()  # with CERTA_TEST_GATE set (tests/_gate.py): the evaluations after the N-th wait to be killed
    time.sleep({sleep})
    idx = np.random.default_rng(seed).permutation(len(X))
    tr, te = idx[:400], idx[400:]
    model = make_pipeline(TfidfVectorizer(), LinearSVC(C=params["C"])).fit(X[tr], y[tr])
    return float(model.score(X[te], y[te]))
'''

CANDIDATES = """# three settings of a linear SVM
[candidates.small]
C = 0.01

[candidates.medium]
C = 0.1

[candidates.large]
C = 1.0
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "myeval.py").write_text(EVALUATE.format(sleep=0.0))
    (tmp_path / "slowev.py").write_text(EVALUATE.format(sleep=0.3))
    (tmp_path / "candidates.toml").write_text(CANDIDATES)
    monkeypatch.chdir(tmp_path)
    return tmp_path


ARGS = ["--candidates", "candidates.toml", "--strategy", "top_two", "--confidence", "0.9", "--seed", "3",
        "--json"]


def test_killed_select_resumes_to_the_uninterrupted_result(project, capsys):
    assert main(["select", "--evaluate", "myeval:evaluate", *ARGS, "--store", "whole.sqlite"]) == 0
    whole = json.loads(capsys.readouterr().out)
    n_whole = whole["n_evaluations"]
    assert whole["finished"] and n_whole >= 9

    env = gate_env(project, 5, {**os.environ,
                                "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))})
    proc = subprocess.Popen([sys.executable, "-m", "certa.cli", "select", "--evaluate", "slowev:evaluate", *ARGS,
                             "--store", "cut.sqlite"], cwd=project, env=env, stdout=subprocess.DEVNULL)
    try:  # the 6th evaluation waits to be killed (tests/_gate.py): killed at 5 recorded, whatever the speed
        wait_until(lambda: stored_rows(project / "cut.sqlite") >= 5, "5 evaluations recorded", proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    n_cut = stored_rows(project / "cut.sqlite")
    assert 5 <= n_cut < n_whole, "the run was not killed half-way"
    # the killed store: certa show says so
    assert main(["show", "cut.sqlite", "--json"]) == 0
    cut = json.loads(capsys.readouterr().out)
    assert cut["finished"] is False and cut["n_evaluations"] == n_cut

    # same command (the fast module computes the same scores) resumes it
    assert main(["select", "--evaluate", "slowev:evaluate", *ARGS, "--store", "cut.sqlite"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["n_reused_from_store"] == n_cut
    assert resumed["finished"] and resumed["choice"] == whole["choice"]
    assert resumed["n_evaluations"] == n_whole
    assert resumed["candidates"] == whole["candidates"]
    assert resumed["bandit"] == whole["bandit"]
    assert stored_rows(project / "cut.sqlite") == n_whole  # nothing evaluated twice


def test_select_text_output_and_strategies(project, capsys):
    assert main(["select", "--evaluate", "myeval:evaluate", "--candidates", "candidates.toml",
                 "--strategy", "sequential_halving", "--budget", "12", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "Choice" in text and "12 evaluations" in text
    assert main(["select", "--evaluate", "myeval:evaluate", "--candidates", "candidates.toml",
                 "--strategy", "sequential_halving", "--json"]) == 2
    assert "budget" in capsys.readouterr().err


def test_candidates_file_formats(tmp_path):
    (tmp_path / "g.toml").write_text("[grid]\nC = [0.1, 1.0]\nkernel = ['a', 'b']\n")
    cands = read_candidates(tmp_path / "g.toml")
    assert [c.params for c in cands] == [{"C": 0.1, "kernel": "a"}, {"C": 0.1, "kernel": "b"},
                                         {"C": 1.0, "kernel": "a"}, {"C": 1.0, "kernel": "b"}]
    (tmp_path / "n.json").write_text(json.dumps({"candidates": {"x": {"C": 1}, "y": {"C": 2}}}))
    assert [(c.name, c.params) for c in read_candidates(tmp_path / "n.json")] == [("x", {"C": 1}), ("y", {"C": 2})]


@pytest.mark.parametrize("text, expected", [
    ("[candidates.a]\nC = \n", "line 2: invalid TOML"),
    ("[candidates]\na = 3\n", "line 2: candidate 'a' must be a table"),
    ("[grid]\nC = 3\n", "line 2: grid entry 'C' must be a non-empty list"),
    ("[models.a]\nC = 1\n", "line 1: unknown entry 'models'"),
    ("[grid]\nC = [1]\n[candidates.a]\nC = 1\n", "either [candidates.NAME] tables or one [grid] table (both"),
])
def test_bad_candidates_files_name_file_line_and_expectation(tmp_path, text, expected):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(UserFileError) as exc:
        read_candidates(path)
    assert str(exc.value).startswith(f"{path}, line") and expected in str(exc.value)


def test_bad_json_candidates(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"candidates": {"a": {"C": 1},}}')
    with pytest.raises(UserFileError, match=r"c\.json, line 1: invalid JSON"):
        read_candidates(path)


def test_bad_import_paths(project):
    (project / "broken.py").write_text("def evaluate(params, seed)\n    return 1\n")
    with pytest.raises(UserFileError, match="expected an import path 'package.module:function'"):
        resolve_function("myeval.evaluate")
    with pytest.raises(UserFileError, match="no module named 'nosuchmodule'"):
        resolve_function("nosuchmodule:evaluate")
    with pytest.raises(UserFileError, match=r"myeval\.py has no 'evaluat'"):
        resolve_function("myeval:evaluat")
    with pytest.raises(UserFileError, match=r"broken\.py, line 1: syntax error"):
        resolve_function("broken:evaluate")
    (project / "notfn.py").write_text("evaluate = 3\n")
    with pytest.raises(UserFileError, match="evaluate is a int, expected a function"):
        resolve_function("notfn:evaluate")


def test_select_reports_errors_on_the_command_line(project, capsys):
    assert main(["select", "--evaluate", "myeval:nope", "--candidates", "candidates.toml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certa select: error: --evaluate 'myeval:nope'")
    assert main(["select", "--evaluate", "myeval:evaluate", "--candidates", "missing.toml"]) == 2
    assert "missing.toml: no such candidates file" in capsys.readouterr().err
