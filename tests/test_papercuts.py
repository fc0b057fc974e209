"""Issue 25 items 6-14: a new user's papercuts (progress, resume, wording, figures, messages)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python(code: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, timeout=timeout, check=False)


# --- item 9: a certa run leaves joblib working cleanly in the same process ---------------------

def test_joblib_after_certa_prints_no_resource_tracker_errors():
    # GridSearchCV memmaps arrays over 1 MB (10,000 x 20 floats) for its workers; before the fix,
    # certa's import of the standalone loky package re-registered multiprocessing's "loky" context,
    # so joblib's workers reported to another resource tracker: KeyError tracebacks and a
    # "leaked file objects" warning on stderr
    proc = _python("""
        from sklearn.datasets import load_iris, make_classification
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GridSearchCV
        from certa import JKFoldSearchCV
        X, y = load_iris(return_X_y=True)
        JKFoldSearchCV(LogisticRegression(max_iter=200), {"C": [0.1, 1]}, n_splits=3, n_repeats=2,
                       n_jobs=2, random_state=0).fit(X, y)
        X, y = make_classification(10000, random_state=0)
        GridSearchCV(LogisticRegression(max_iter=200), {"C": [0.1, 1, 10]}, n_jobs=2).fit(X, y)
        print("finished")
    """)
    assert proc.returncode == 0, proc.stderr
    assert "finished" in proc.stdout
    assert "Traceback" not in proc.stderr and "KeyError" not in proc.stderr, proc.stderr[-2000:]
    assert "leaked" not in proc.stderr, proc.stderr[-2000:]


# --- item 13: a refused store names the values that differ, and can be started over --------------

def _toy(model, train, test, seed):
    import numpy as np

    return float(np.random.default_rng(seed).normal(model, 0.05))


def test_store_mismatch_names_both_values_and_remove_store_starts_over(tmp_path):
    import pytest

    from certa import bandit_select, remove_store

    path = tmp_path / "run.sqlite"
    data = list(range(20))
    first = bandit_select(_toy, {"a": 0.6, "b": 0.7}, data, confidence=0.9, tolerance=0.005, random_state=0,
                          store=path)
    with pytest.raises(ValueError) as info:
        bandit_select(_toy, {"a": 0.6, "b": 0.7}, data, confidence=0.9, tolerance=0.01, random_state=0, store=path)
    msg = str(info.value)
    assert "tolerance 0.005 in the store, 0.01 in this run" in msg
    assert "remove_store" in msg and "--overwrite" in msg
    with pytest.raises(ValueError) as info:
        bandit_select(_toy, {"a": 0.6, "b": 0.7}, data, confidence=0.9, tolerance=0.005, random_state=4, store=path)
    assert "its seed differs from this run's (0 in the store, 4 in this run)" in str(info.value)
    with pytest.raises(ValueError) as info:
        bandit_select(_toy, {"a": 0.6, "c": 0.8}, data, confidence=0.9, tolerance=0.005, random_state=0, store=path)
    assert "candidate 2 is 'b'" in str(info.value) and "'c'" in str(info.value)
    assert remove_store(path) is True and not path.exists()
    assert remove_store(path) is False
    again = bandit_select(_toy, {"a": 0.6, "b": 0.7}, data, confidence=0.9, tolerance=0.01, random_state=0, store=path)
    assert again.n_reused == 0 and again.n_evaluations > 0 and first.best_index == again.best_index == 1
    other = tmp_path / "notes.txt"
    other.write_text("not a store")
    with pytest.raises(ValueError, match="not a SQLite file"):
        remove_store(other)
    assert other.exists()


# --- item 8: the guarantee's wording ----------------------------------------------------------

def test_guarantee_rounds_the_confidence_and_never_shows_a_target_it_missed():
    from certa.strategies.thompson import guarantee_text

    assert "confidence 0.955 " in guarantee_text(0.95473, 0.0, "glr")   # rounded, not cut to 0.954
    # just below a round target: a digit more instead of reading as the target
    assert "confidence 0.94996 " in guarantee_text(0.94996, 0.0, "glr")
    assert "confidence 0.9 " in guarantee_text(0.9, 0.0, "glr")


def test_fixed_budget_run_says_what_it_can_claim():
    from certa import bandit_select

    means = {"a": 0.80, "b": 0.82, "c": 0.83, "d": 0.79, "e": 0.84}
    sel = bandit_select(_toy_sd03, means, list(range(30)), strategy="sequential_halving", budget=50,
                        confidence=None, random_state=0)
    words = sel.result["guarantee"]
    assert sel.result["confidence"] == 0.0     # candidates dropped after 3 scores cannot be ruled out
    assert words.startswith("chosen after a fixed budget of 50 evaluations")
    assert "too few to rule out the others (some have only 3 scores)" in words
    assert "guarantees no confidence level" in words and "the best with confidence 0 " not in words


def _toy_sd03(model, train, test, seed):
    import numpy as np

    return float(np.random.default_rng(seed).normal(model, 0.03))


# --- items 8, 11, 14: certa select / certa show output -----------------------------------------

FAST_EVALUATE = """
import numpy as np


def evaluate(params, seed):
    return float(np.random.default_rng(seed).normal(params["mu"], 0.05))
"""


def _select_project(tmp_path, monkeypatch):
    (tmp_path / "fastev.py").write_text(FAST_EVALUATE)
    (tmp_path / "c.toml").write_text("[candidates.low]\nmu = 0.5\n\n[candidates.high]\nmu = 0.7\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("COLUMNS", raising=False)
    # unpaired top-two: these tests read its posterior P(best) column
    return ["select", "--evaluate", "fastev:evaluate", "--candidates", "c.toml", "--confidence", "0.9", "--no-paired"]


def test_select_without_store_names_no_none_and_reports_wall_time(tmp_path, monkeypatch, capsys):
    import json

    from certa.cli import main

    args = _select_project(tmp_path, monkeypatch)
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "None" not in text
    assert "(not kept: no store)" in text and "evaluator ImportPathEvaluator(fastev:evaluate)" in text
    assert main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["wall_seconds"] is not None and out["wall_seconds"] >= 0
    assert out["evaluator"] == "ImportPathEvaluator(fastev:evaluate)"


def test_show_piped_keeps_one_line_per_candidate_and_explains_its_numbers(tmp_path, monkeypatch, capsys):
    from certa.cli import main

    args = _select_project(tmp_path, monkeypatch)
    assert main(args + ["--store", "run.sqlite"]) == 0
    capsys.readouterr()
    assert main(["show", "run.sqlite"]) == 0
    text = capsys.readouterr().out
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert len(rows) == 2, text          # one line per candidate, not folded at 80 columns
    assert "posterior P(best)" in text
    assert "it is not the stated confidence, which is the GLR rule's frequentist guarantee" in text
    assert "; guarantee: the best with confidence" in text
    assert any(line.startswith("estimate: ") for line in text.splitlines())
    # the rule needs more than min_evals=3 scores per candidate at 0.9 with 2 candidates: say what applies
    from certa.strategies._glr import min_count

    need = min_count(0.1, 2)
    assert need > 3 and f"min_evals=3 (raised to {need})" in text


def test_overwrite_starts_a_select_run_over_on_the_same_store(tmp_path, monkeypatch, capsys):
    import json

    from certa.cli import main

    args = _select_project(tmp_path, monkeypatch) + ["--store", "run.sqlite", "--json"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args[:-1] + ["--tolerance", "0.01", "--json"]) == 2
    assert "tolerance 0.0 in the store, 0.01 in this run" in capsys.readouterr().err
    assert main(args[:-1] + ["--tolerance", "0.01", "--overwrite", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_reused_from_store"] == 0 and out["strategy"]["tolerance"] == 0.01


# --- item 11: stability report ----------------------------------------------------------------

def test_stability_report_accounts_for_non_numeric_parameters_and_explains_fewer_partitions():
    import numpy as np

    from certa import stability_report
    from certa.engine.candidates import candidates_from_grid

    cands = candidates_from_grid({"C": [1, 10], "kernel": ["linear", "rbf"]})
    # (C, J=3, K=2): partitions 0 and 1 choose (1, linear) [index 0], partition 2 chooses (1, rbf) [index 1]
    s = np.full((4, 3, 2), 0.5)
    s[0, :2] = 0.9
    s[1, 2] = 0.95
    rep = stability_report(s, cands)
    assert rep.partition_choices == [0, 0, 1]
    assert rep.chosen_param_values == {"kernel": {"linear": 2, "rbf": 1}}
    assert "C" not in rep.chosen_param_values and rep.chosen_param_sd["C"] == 0
    text = str(rep)
    assert "chosen kernel changed between partitions: linear on 2, rbf on 1 of 3" in text
    assert "Fewer partitions: tuning on only J' of the 3 partitions" in text


# --- items 11 and 14: comparison table ---------------------------------------------------------

def test_comparison_rows_closest_first_and_a_killed_run_is_not_called_failed():
    import numpy as np
    from sklearn.datasets import load_iris
    from sklearn.neighbors import KNeighborsClassifier

    from certa import JKFoldSearchCV, comparison_table
    from certa.analysis.comparison import _missing_folds_text

    X, y = load_iris(return_X_y=True)
    search = JKFoldSearchCV(KNeighborsClassifier(), {"n_neighbors": [80, 40, 15, 5]}, n_splits=3, n_repeats=2,
                            random_state=0).fit(X, y)
    table = comparison_table(search)
    d = table["mean_difference"].to_numpy()
    assert len(d) == 3 and np.all(np.diff(d) >= 0)
    assert list(table["name"]) != [c.name for c in search.selection_.candidates if c.index != search.best_index_]
    # failed evaluations of the two candidates, pairs, folds
    assert _missing_folds_text(0, 1, 6) == "none: 5 of 6 folds not scored yet (run not finished)"
    assert _missing_folds_text(1, 1, 6) == "none: 5 of 6 folds missing (1 failed evaluation(s))"


# --- item 12: certa compare -------------------------------------------------------------------

def test_compare_names_no_better_model_without_significance_and_warns_about_folds(tmp_path, capsys):
    import json

    from certa.cli import main

    path = tmp_path / "s.csv"
    path.write_text("a,b\n0.81,0.80\n0.80,0.81\n0.83,0.80\n0.80,0.82\n")
    assert main(["compare", "--scores", str(path), "--columns", "a,b", "--test", "permutation", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pvalue"] == 1.0 and out["better"] is None and out["higher"] == "a"
    assert out["verdict"].startswith("no significant difference") and "a is better" not in out["verdict"]
    path.write_text("a,b\n0.81,0.80\n0.83,0.80\n0.82,0.81\n0.84,0.80\n0.83,0.82\n")
    assert main(["compare", "--scores", str(path), "--columns", "a,b", "--test", "paired-t"]) == 0
    text = capsys.readouterr().out
    assert "significant at the 5% level" in text
    assert "holds only if the rows are independent" in text and "not for CV folds" in text


# --- item 14: small things ---------------------------------------------------------------------

def test_datasets_namespace_is_its_public_api():
    import certa.datasets as d

    public = {n for n in dir(d) if not n.startswith("_") and not isinstance(getattr(d, n), type(d))}
    assert public - {"Bunch", "annotations"} == set(d.__all__)
    for leaked in ("csv", "functools", "np", "pd", "re"):
        assert not hasattr(d, leaked)


def test_simulate_means_takes_names(capsys):
    import json

    import pytest

    from certa.cli import main

    assert main(["simulate", "--means", "0.6,0.7", "--sds", "0.03", "--names", "svm,nb", "--runs", "3",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "nb" in json.dumps(out) and "c0" not in json.dumps(out)
    assert main(["simulate", "--means", "0.6,0.7", "--sds", "0.03", "--names", "svm", "--runs", "3"]) == 2
    assert "--names must give 2 distinct non-empty names" in capsys.readouterr().err
    with pytest.raises(SystemExit):   # argparse: --names is an option of simulate only
        main(["show", "x.sqlite", "--names", "a"])


def test_bandit_select_docstring_says_train_and_test_are_x_y_tuples():
    from certa import bandit_select

    doc = " ".join(bandit_select.__doc__.split())
    assert "``train`` and ``test`` are ``(X, y)`` tuples" in doc


# --- items 6 and 7: progress outside a terminal, and resumed runs say what they reuse ----------

def _run_equal(store=None, progress=True, stop_after=None, budget=20):
    from certa import FunctionEvaluator, run
    from certa.engine.callbacks import Callback
    from certa.strategies import EqualAllocation

    class Stop(Callback):
        def on_evaluation(self, view, evaluation):
            if stop_after is not None and view.n_evaluations >= stop_after:
                raise KeyboardInterrupt

    return run(EqualAllocation(budget), FunctionEvaluator(_score_of_params), [{"m": 0.5}, {"m": 0.6}],
               random_state=0, store=store, progress=progress, callbacks=[Stop()])


def _score_of_params(params, seed):
    import numpy as np

    return float(np.random.default_rng(seed).normal(params["m"], 0.05))


def test_progress_true_in_a_log_writes_plain_lines_to_stderr_and_nothing_to_stdout(capsys):
    _run_equal(progress=True)
    out, err = capsys.readouterr()
    assert out == ""                      # the old rich bar wrote a blank line to stdout
    lines = [line for line in err.splitlines() if line.startswith("certa: ")]
    assert lines[0] == "certa: evaluating 20 draws..."
    # a line at every tenth of the 20 planned evaluations (2, 4, ..., 20) after the first
    for k in (2, 10, 20):
        assert any(line.startswith(f"certa: {k}/20 evaluations ({k / 20:.0%})") for line in lines), lines
    assert lines[-1].startswith("certa: end: 20/20 evaluations (100%)")
    assert len(lines) <= 14
    _run_equal(progress="auto")   # "auto": a terminal or a notebook only, so silent here
    assert capsys.readouterr() == ("", "")


def test_progress_in_a_jupyter_kernel_updates_one_display(monkeypatch, capsys):
    import sys
    import types

    shown = []

    class ZMQInteractiveShell:   # what IPython's get_ipython() returns in a Jupyter kernel
        pass

    class Handle:
        def update(self, obj):
            shown.append(obj.data)

    def display(obj, display_id=False):
        assert display_id is True
        shown.append(obj.data)
        return Handle()

    class Pretty:
        def __init__(self, data):
            self.data = data

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: ZMQInteractiveShell()
    disp = types.ModuleType("IPython.display")
    disp.display, disp.Pretty = display, Pretty
    ipython.display = disp
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", disp)
    _run_equal(progress="auto")
    assert shown[0].startswith("certa: 0/20 evaluations")
    assert shown[-1].startswith("certa: 20/20 evaluations (100%)")
    assert capsys.readouterr() == ("", "")


def test_a_resumed_run_says_how_many_evaluations_it_reuses(tmp_path, capsys):
    import pytest

    from certa import RunInterrupted

    path = str(tmp_path / "run.sqlite")
    with pytest.raises(RunInterrupted):
        _run_equal(store=path, progress=False, stop_after=8)
    capsys.readouterr()
    sel = _run_equal(store=path, progress=True)
    assert sel.n_reused == 8
    err = capsys.readouterr().err
    assert f"certa: resuming from {path}: 8 finished evaluation(s) recorded there are reused, not repeated" in err
    assert "certa: end: 20/20 evaluations (100%), 8 reused from the store" in err


def test_jkfold_verbose_says_how_many_fits_came_from_the_store(tmp_path, capsys):
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    from certa import JKFoldSearchCV

    X, y = load_iris(return_X_y=True)
    path = str(tmp_path / "jk.sqlite")

    def search():
        return JKFoldSearchCV(LogisticRegression(max_iter=300), {"C": [0.1, 1.0]}, n_splits=3, n_repeats=2,
                              random_state=0, store=path, verbose=1).fit(X, y)

    search()
    assert "Resumed from the store" not in capsys.readouterr().out
    search()
    out = capsys.readouterr().out
    assert "Fitting 6 folds for each of 2 candidates, totalling 12 fits" in out
    assert "Resumed from the store: 12 of the 12 fits were recorded there and reused, 0 run now" in out


# --- item 10: figures with long (pipeline) names --------------------------------------------------

def _pipeline_search(n_c=(0.1, 1.0)):
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from certa import JKFoldSearchCV

    X, y = load_iris(return_X_y=True)
    grid = {"logisticregression__C": list(n_c), "logisticregression__fit_intercept": [True, False],
            "standardscaler__with_mean": [True, False]}
    return JKFoldSearchCV(make_pipeline(StandardScaler(), LogisticRegression(max_iter=300)), grid, n_splits=2,
                          n_repeats=2, random_state=0).fit(X, y)


def _render(fn, selection, size):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    fn(selection, ax=ax)
    fig.tight_layout()
    fig.canvas.draw()
    return fig, ax


def test_scores_figure_with_pipeline_names_uses_short_labels_with_a_key():
    from certa.reporting import plot

    search = _pipeline_search()
    names = [c.name for c in search.selection_.candidates]
    assert min(len(n) for n in names) > 80      # e.g. "logisticregression__C=0.1, ..."
    fig, ax = _render(plot.scores, search, (8.5, 6.0))
    r = fig.canvas.get_renderer()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert sorted(labels) == sorted(f"#{i}" for i in range(1, 9))
    key = "\n".join(t.get_text() for t in ax.texts)
    assert all(n in key for n in names) and "#1  " + search.selection_.best.name in key
    box = ax.get_window_extent(r)
    figbox = fig.bbox
    assert box.width > 0.5 * figbox.width       # the plot keeps its width (it shrank to nothing)
    ticks = [t.get_window_extent(r) for t in ax.get_yticklabels()]
    assert not any(a.overlaps(b) for i, a in enumerate(ticks) for b in ticks[i + 1:])
    legend = ax.get_legend().get_window_extent(r)
    assert legend.y0 >= box.y1 - 1 and not any(legend.overlaps(t) for t in ticks)
    title = ax.title.get_window_extent(r)
    assert title.x0 >= 0 and title.x1 <= figbox.width and title.y1 <= figbox.height


def test_choice_per_partition_has_a_legend_with_many_long_named_candidates():
    from certa.reporting import plot

    search = _pipeline_search((0.01, 0.1, 1.0, 10.0))    # 16 candidates
    assert len(search.selection_.candidates) == 16
    fig, ax = _render(plot.partition_choices, search, (8.5, 6.0))
    legend = ax.get_legend()
    assert legend is not None
    texts = [t.get_text() for t in legend.get_texts()]
    best_label = plot.short_labels(search.selection_)[0][search.best_index_]
    assert best_label in texts and "choice of the partition" in texts
    assert all(len(t) <= 30 for t in texts)


def test_report_names_the_posterior_apart_from_the_guarantee_and_shows_min_evals_applied():
    from certa import bandit_select
    from certa.reporting.report import build_report

    sel = bandit_select(_toy, {"a": 0.6, "b": 0.7}, list(range(20)), confidence=0.9, random_state=0,
                        paired=False)   # top-two: the posterior the report names
    page = build_report(sel)
    assert "<th>posterior P(best)</th>" in page and "<th>P(best)</th>" not in page
    assert "it is not the stated confidence, which is the GLR rule&#x27;s frequentist guarantee" in page
    assert "min_evals=3 (raised to " in page


def test_log_progress_of_an_adaptive_run_thins_out_as_it_goes(capsys):
    from certa.engine.draws import Outcome
    from certa.engine.progress import Progress

    bar = Progress(True, None)          # no total: an adaptive run
    for i in range(25):
        bar.advance(Outcome(score=0.5) if i != 3 else Outcome.failure("boom"))
    bar.close()
    lines = capsys.readouterr().err.splitlines()
    counts = [line.split(" ")[1] for line in lines[1:-1]]
    assert counts == ["1", "2", "5", "10", "20"]   # 1, 2, 5, 10, 20, ... (or every 30 s)
    assert lines[0] == "certa: evaluating..." and lines[1].startswith("certa: 1 evaluation, ")
    assert lines[-1].startswith("certa: end: 25 evaluations, 1 failed")
