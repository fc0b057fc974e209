"""What a newcomer tripped on: help text, compare's verdict and JSON keys, demo's table, simulate's note, progress."""
import json
import sys

import numpy as np
import pytest

from certa.cli import COMPARE_KEYS, main


@pytest.fixture
def scores_csv(tmp_path):
    rng = np.random.default_rng(0)
    a = 0.80 + rng.normal(0, 0.01, 10)
    b = 0.78 + rng.normal(0, 0.01, 10)
    path = tmp_path / "s.csv"
    path.write_text("svm,nb\n" + "\n".join(f"{x},{y}" for x, y in zip(a, b)) + "\n")
    return path, a, b


@pytest.mark.parametrize("test", ["corrected-kfold", "corrected-resampled", "paired-t", "permutation", "bootstrap"])
def test_compare_json_has_the_same_keys_for_every_test_and_names_the_better_model(scores_csv, test, capsys):
    path, a, b = scores_csv
    extra = {"corrected-kfold": ["--repeats", "2", "--folds", "5", "--n-train", "80", "--n-test", "20"],
             "corrected-resampled": ["--n-train", "80", "--n-test", "20"]}.get(test, [])
    assert main(["compare", "--scores", str(path), "--columns", "svm,nb", "--test", test, "--json", *extra]) == 0
    out = json.loads(capsys.readouterr().out)
    assert tuple(sorted(out)) == tuple(sorted(COMPARE_KEYS))
    assert out["better"] == "svm"
    assert out["scores"] == {"svm": pytest.approx(a.mean()), "nb": pytest.approx(b.mean())}
    assert out["estimate"] == pytest.approx(a.mean() - b.mean())
    assert main(["compare", "--scores", str(path), "--columns", "svm,nb", "--test", test, *extra]) == 0
    text = capsys.readouterr().out
    assert f"svm is better: {a.mean():.4f} against nb's {b.mean():.4f}" in text


def test_compare_predictions_says_which_is_better(tmp_path, capsys):
    truth = ["a", "b", "a", "b", "a", "a"]
    p1 = ["a", "b", "a", "b", "a", "b"]  # 5/6 right
    p2 = ["a", "a", "a", "a", "a", "b"]  # 3/6 right
    for name, labels in (("truth", truth), ("one", p1), ("two", p2)):
        (tmp_path / name).write_text("\n".join(labels) + "\n")
    assert main(["compare", str(tmp_path / "one"), str(tmp_path / "two"), "--truth", str(tmp_path / "truth"),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    one, two = str(tmp_path / "one"), str(tmp_path / "two")
    # 2 discordant pairs, both for one: exact McNemar p = 0.5, so "higher", not "better" (issue 25 item 12)
    assert out["higher"] == one and out["better"] is None
    assert out["scores"] == {one: pytest.approx(5 / 6), two: pytest.approx(3 / 6)}


@pytest.mark.parametrize("command", ["demo", "show", "select", "report", "simulate", "compare"])
def test_help_has_no_doubled_percent(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert "%%" not in text
    assert len(text) > 300  # the subcommand is described


def test_bad_jobs_value_names_the_option_not_a_function(capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--jobs", "two"])
    err = capsys.readouterr().err
    assert "_jobs" not in err and "--jobs" in err and "'two'" in err


def test_top_level_help_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for command in ("demo", "simulate", "compare", "select", "show", "report"):
        assert command in text


def test_demo_json_has_the_table_the_text_shows(capsys):
    assert main(["demo", "-J", "1", "-K", "2", "--jobs", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    top = out["top_settings"]
    assert len(top) == 5 and top[0]["params"] == out["best_params"]
    assert top[0]["mean"] == pytest.approx(out["best_score"])
    assert [t["mean"] for t in top] == sorted((t["mean"] for t in top), reverse=True)


def test_simulate_says_the_lower_bound_does_not_apply_to_the_bayes_rule(capsys):
    args = ["simulate", "--means", "0.6,0.7", "--sds", "0.05,0.05", "--runs", "20"]
    for bayes in (["--stopping", "bayes"], ["--strategy", "fiesta"]):
        assert main([*args, *bayes]) == 0
        assert "the Bayes stopping rule is not one" in capsys.readouterr().out
        assert main([*args, *bayes, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["lower_bound_applies"] is False
    assert main(args) == 0   # the default rule is delta-correct (the paired rule)
    assert "Bayes stopping rule" not in capsys.readouterr().out
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["lower_bound_applies"] is True


def test_simulate_one_sd_for_every_candidate(capsys):
    # --sds 0.05 means the same SD for each candidate: the same runs as writing it out
    base = ["simulate", "--means", "0.6,0.7,0.65", "--runs", "10", "--seed", "3", "--json"]
    assert main([*base, "--sds", "0.05"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main([*base, "--sds", "0.05,0.05,0.05"]) == 0
    assert json.loads(capsys.readouterr().out) == one
    assert main([*base, "--sds", "0.05,0.05"]) == 2
    assert "got 3 means and 2 SDs" in capsys.readouterr().err


def test_bandit_search_best_params_has_the_candidates_name():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    from certa import BanditSearchCV

    X, y = load_iris(return_X_y=True)
    s = BanditSearchCV(candidates={"stump": DecisionTreeClassifier(max_depth=1),
                                   "logreg": LogisticRegression(max_iter=500)}, confidence=0.9, random_state=0).fit(X, y)
    assert s.best_params_["name"] == s.best_name_ == s.selection_.best.name
    assert s.best_params_["model"] is s.selection_.best.params["model"]


def test_progress_auto_follows_the_terminal(monkeypatch):
    from certa.engine.progress import Progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert Progress("auto", 3).mode is None
    assert Progress(True, 3).mode == "log"   # progress=True outside a terminal: plain lines (issue 25 item 6)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    bar = Progress("auto", 3)
    try:
        assert bar.mode == "terminal" and bar._bar is not None
    finally:
        bar.close()
    assert Progress(False, 3).mode is None
