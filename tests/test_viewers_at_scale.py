"""Issue 31 item 6: many candidates in the viewers (certa show / certa report), and repeated names.

The stores here are simulated: a cheap formula scores each candidate (no data, no model).
"""
import json
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats as sps

import certa
from certa.analysis.comparison import comparison_table
from certa.cli import main
from certa.engine.candidates import Candidate, as_candidates
from certa.reporting.report import build_report
from certa.reporting.summary import TOP, candidate_intervals, summarize
from certa.stats import corrected_repeated_kfold_ttest

N = 3_000


def _score(params, seed):
    """Simulated: a smooth function of the candidate's parameter, plus noise from the draw's seed."""
    return float(np.random.default_rng(seed).normal(0.7 + 0.1 * np.sin(params["C"]), 0.05))


def _same_named(n):
    return [Candidate(i, "same", {"C": i}) for i in range(n)]


@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("scale") / "big.sqlite")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", certa.DuplicateNamesWarning)
        certa.run(certa.JKFoldGrid(2, 1), certa.FunctionEvaluator(_score), _same_named(N), store=path, random_state=0)
    return path


# -- repeated names ---------------------------------------------------------------------------

def test_repeated_names_warn_once_saying_how_many_and_which():
    with pytest.warns(certa.DuplicateNamesWarning) as record:
        sel = certa.run(certa.JKFoldGrid(2, 1), certa.FunctionEvaluator(_score), _same_named(5) + [Candidate(5, "other", {"C": 5})])
    assert len(record) == 1
    message = str(record[0].message)
    assert message.startswith("5 of 6 candidates share their name with another: 'same' x5")
    assert sel.n_evaluations == 12   # accepted: each is evaluated and chosen on its own
    # a list of parameter dicts whose names repeat (the same setting twice)
    with pytest.warns(certa.DuplicateNamesWarning, match="2 of 3 candidates"):
        as_candidates([{"C": 1}, {"C": 1}, {"C": 2}])


def test_distinct_names_do_not_warn_and_a_front_warns_once():
    with warnings.catch_warnings():
        warnings.simplefilter("error", certa.DuplicateNamesWarning)
        as_candidates({"C": [1, 2, 3]})
        as_candidates([Candidate(0, "a", {}), Candidate(1, "b", {})])
    # bandit_select builds the candidates and passes them to run: one warning, not two
    cands = [Candidate(0, "m", {"mu": 0.5}), Candidate(1, "m", {"mu": 0.7})]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        certa.bandit_select(lambda c, tr, te, seed: c["mu"] + np.random.default_rng(seed).normal(0, 0.01),
                            cands, random_state=0)
    assert [str(w.message)[:40] for w in record if w.category is certa.DuplicateNamesWarning] == [
        "2 of 2 candidates share their name with "]


def test_outputs_tell_repeated_names_apart_by_their_parameters(tmp_path, capsys):
    path = str(tmp_path / "same.sqlite")
    cands = [Candidate(0, "same", {"C": 1}), Candidate(1, "same", {"C": 2}), Candidate(2, "same", {"C": 2}),
             Candidate(3, "other", {"C": 3})]
    with pytest.warns(certa.DuplicateNamesWarning):
        certa.run(certa.JKFoldGrid(2, 1), certa.FunctionEvaluator(_score), cands, store=path)
    assert main(["show", path, "--json"]) == 0
    names = {c["candidate"]: c["name"] for c in json.loads(capsys.readouterr().out)["candidates"]}
    assert names == {0: "same {C: 1}", 1: "same {C: 2} (candidate 1)", 2: "same {C: 2} (candidate 2)", 3: "other"}
    assert main(["show", path]) == 0
    text = capsys.readouterr().out
    assert all(name in text for name in names.values())
    page = build_report(certa.load(path))
    assert "same {C: 1}" in page and "same {C: 2} (candidate 2)" in page


# -- many candidates: bounded summaries, everything on request ---------------------------------

def test_show_summarises_many_candidates_in_bounded_output(big_store, capsys):
    assert main(["show", big_store]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert len(lines) < 90 and len(text.encode()) < 12_000, (len(lines), len(text))
    rows = [line for line in lines if line.startswith("│")]
    assert len(rows) == TOP
    assert f"{N - TOP:,} more candidates not listed" in text
    assert "estimates of the 3,000 candidates:" in text and "evaluations per candidate of the 3,000" in text
    # the histogram's counts add up to every candidate
    counts = [int(m.group(1).replace(",", "")) for m in re.finditer(r"^  \[[\d., ]+[\])]\s+([\d,]+)\s", text, re.MULTILINE)]
    assert sum(counts) == N


def test_show_json_lists_the_best_and_counts_all(big_store, capsys):
    sel = certa.load(big_store)
    assert main(["show", big_store, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_candidates"] == N and len(out["candidates"]) == out["n_candidates_listed"] == TOP
    assert [c["candidate"] for c in out["candidates"]] == [int(i) for i in np.argsort(
        -np.asarray(sel.result["estimates"]), kind="stable")[:TOP]]
    hist = out["histograms"]
    assert sum(hist["estimate"]["counts"]) == N and hist["n_evaluations"]["counts"] == [N]
    assert hist["estimate"]["edges"][0] == pytest.approx(min(sel.result["estimates"]))


def test_show_all_lists_every_candidate(big_store, capsys):
    assert main(["show", big_store, "--all"]) == 0
    text = capsys.readouterr().out
    found = {int(m.group(1)) for m in re.finditer(r"same \{C: (\d+)\}", text)}
    assert found == set(range(N))
    assert "more candidates not listed" not in text
    assert main(["show", big_store, "--all", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["candidates"]) == N and sorted(c["candidate"] for c in out["candidates"]) == list(range(N))
    assert summarize(certa.load(big_store), full=True)["candidates"] == out["candidates"]


def test_report_lists_the_best_and_everything_on_request(big_store, tmp_path):
    sel = certa.load(big_store)
    page = build_report(sel)
    table = page.split("<h2>Candidates</h2>", 1)[1].split("</table>", 1)[0]
    assert table.count("<tr>") == TOP + 1
    assert f"data-rows-left-out='{N - TOP}'" in page
    assert re.findall(r"data-figure='([a-z_]+)'", page)[:2] == ["scores", "estimates"]
    assert len(page) < 2_000_000
    out = tmp_path / "all.html"
    assert main(["report", big_store, "--all", "-o", str(out)]) == 0
    full = out.read_text()
    table = full.split("<h2>Candidates</h2>", 1)[1].split("</table>", 1)[0]
    assert table.count("<tr>") == N + 1
    assert {int(m.group(1)) for m in re.finditer(r"same \{C: (\d+)\}", table)} == set(range(N))


# -- the grouped computations give the per-candidate numbers -----------------------------------

def _failing_score(params, seed):
    if params["C"] % 4 == 1 and seed % 3 == 0:
        raise RuntimeError("simulated failure")
    return float(np.round(_score(params, seed), 2))   # rounded: ties and equal scores happen


def test_comparison_rows_are_each_candidates_own_test():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = certa.run(certa.JKFoldGrid(3, 2), certa.FunctionEvaluator(_failing_score),
                        {"C": list(range(12)) + [0]}, random_state=3)
    table = comparison_table(sel).set_index("candidate")
    ev = sel.evaluations
    ok = ev[ev["status"] == "ok"]
    scores = {c: dict(zip(g["index"], g["score"])) for c, g in ok.groupby("candidate")}
    best = scores[sel.best_index]
    assert len(table) == 12 and (table["n_pairs"] < 6).any()   # some comparisons miss folds
    for c in range(13):
        if c == sel.best_index:
            continue
        other = scores.get(c, {})
        shared = sorted(set(best) & set(other))
        row = table.loc[c]
        assert row["n_pairs"] == len(shared)
        if len(shared) == 6:
            ref = corrected_repeated_kfold_ttest([best[i] for i in shared], [other[i] for i in shared], 2, 3)
            assert row["pvalue"] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
            assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-9)
            assert (row["ci_low"], row["ci_high"]) == pytest.approx(ref.ci, rel=1e-9)
        else:
            assert np.isnan(row["pvalue"]) and "folds missing" in row["test"]


def test_welch_rows_and_summary_are_each_candidates_own_numbers():
    sel = certa.bandit_select(lambda c, tr, te, seed: c + np.random.default_rng(seed).normal(0, 0.05),
                              {"a": 0.6, "b": 0.8, "c": 0.75, "d": 0.7, "e": 0.79}, paired=False,
                              random_state=1)
    table = comparison_table(sel).set_index("candidate")
    ev = sel.evaluations
    x = ev.loc[ev["candidate"] == sel.best_index, "score"].to_numpy()
    summary, iv = sel.summary(), candidate_intervals(sel)
    for c in range(5):
        y = ev.loc[ev["candidate"] == c, "score"].to_numpy()
        assert summary.loc[c, "mean"] == pytest.approx(y.mean()) and summary.loc[c, "n_evaluations"] == y.size
        assert summary.loc[c, "sd"] == pytest.approx(y.std(ddof=1))
        half = sps.t.ppf(0.975, y.size - 1) * y.std(ddof=1) / np.sqrt(y.size)
        assert (iv.loc[c, "ci_low"], iv.loc[c, "ci_high"]) == pytest.approx((y.mean() - half, y.mean() + half))
        if c == sel.best_index:
            continue
        ref = sps.ttest_ind(x, y, equal_var=False)
        assert table.loc[c, "pvalue"] == pytest.approx(ref.pvalue, rel=1e-9)
        ci = ref.confidence_interval(0.95)
        assert (table.loc[c, "ci_low"], table.loc[c, "ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_show_imports_neither_scikit_learn_nor_scipy_stats_and_report_no_scikit_learn(big_store, tmp_path):
    """The viewers import what they use (``certa/__init__`` names each public name's module, imported on use).

    ``certa report`` uses scipy.stats (its comparison tests), ``certa show`` does not: a second of import.
    """
    heavy = "sorted({m.split('.')[0] if m.startswith('sklearn') else m for m in sys.modules if m.startswith(('sklearn', 'scipy.stats')) and m.count('.') < 2})"
    code = ("import sys\nfrom certa.cli import main\n"
            f"assert main(['show', {big_store!r}]) == 0\n"
            f"print({heavy})\n"
            f"assert main(['report', {big_store!r}, '-o', {str(tmp_path / 'r.html')!r}]) == 0\n"
            f"print({heavy})")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.getcwd()}).stdout
    lines = out.splitlines()
    assert lines[-1] == "['scipy.stats']" and lines[-3] == "[]"
    assert "Choice" in out and (tmp_path / "r.html").stat().st_size > 0


def test_every_public_name_resolves_to_its_object_on_first_use():
    code = ("import certa, certa.stats, certa.engine\n"
            "import certa.stats.mcnemar, certa.engine.runner   # a submodule named as a function: the function wins\n"
            "from certa.stats import mcnemar\nassert callable(mcnemar) and mcnemar.__module__ == 'certa.stats.mcnemar'\n"
            "for pkg in (certa, certa.stats, certa.engine):\n"
            "    for n in pkg.__all__:\n"
            "        assert not isinstance(getattr(pkg, n), type(certa)), (pkg.__name__, n)\n"
            "        assert n in dir(pkg)\n"
            "assert certa.select is certa.run is certa.engine.run and certa.Selection is certa.engine.selection.Selection\n"
            "assert certa.reporting.loading.load is certa.load\n"
            "try:\n    certa.no_such_name\nexcept AttributeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.getcwd()}).stdout
    assert out.strip() == "module 'certa' has no attribute 'no_such_name'"
