"""certa.load, certa show, certa.reporting.plot and certa report on stores of all five methods (real bundled data)."""
import base64
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile

import matplotlib
import numpy as np
import pytest

import certa
from certa.analysis.comparison import comparison_table
from certa.cli import main
from certa.reporting import plot
from certa.reporting.report import build_report
from certa.reporting.summary import candidate_intervals, ranked_table

sys.path.insert(0, os.path.dirname(__file__))
from _gate import gate_env, wait_until
from _helpers import stored_rows
from run_stores import KILLED_SCRIPT, build_all

METHODS = ["jkfold", "bandit", "progressive", "quantification", "nested"]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    return build_all(str(tmp_path_factory.mktemp("stores")))


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """A J-K-fold run SIGKILLed half-way; ``load`` is also called while it is still running."""
    d = tmp_path_factory.mktemp("killed")
    store = str(d / "killed.sqlite")
    script = d / "run.py"
    script.write_text(KILLED_SCRIPT.format(tests=os.path.dirname(__file__), store=store))
    # the 9th scoring blocks until the kill (tests/_gate.py): read at 3 rows, killed at 8, whatever the speed
    proc = subprocess.Popen([sys.executable, str(script)], cwd=str(d),
                            env=gate_env(d, 8, {**os.environ, "PYTHONPATH": os.getcwd()}))
    seen_running = []
    try:
        wait_until(lambda: stored_rows(store) >= 3, "3 evaluations recorded", proc)
        sel = certa.load(store)  # read while the other process writes
        seen_running.append((sel.n_evaluations, sel.finished, stored_rows(store)))
        wait_until(lambda: stored_rows(store) >= 8, "8 evaluations recorded", proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return store, seen_running


@pytest.mark.parametrize("method", METHODS)
def test_load_gives_the_runs_selection(stores, method):
    path, original = stores[method]
    sel = certa.load(path)
    assert sel.method == method and sel.finished
    if method == "nested":
        np.testing.assert_allclose(sel.evaluations["score"], original.outer_scores)
        assert list(sel.evaluations["inner_best_score"]) == pytest.approx(list(original.inner_best_scores))
        return
    assert sel.best_index == original.best_index
    np.testing.assert_allclose(np.asarray(sel.result["estimates"], float), np.asarray(original.result["estimates"], float))
    assert list(sel.evaluations["key"]) == list(original.evaluations["key"])
    np.testing.assert_allclose(sel.evaluations["score"], original.evaluations["score"])
    # every candidate's parameters come back from the store, as JSON where possible
    for c, o in zip(sel.candidates, original.candidates):
        assert c.name == o.name
        if method != "bandit":
            assert c.params == o.params
        else:  # estimators are kept as their one-line repr
            assert c.params["model"] == " ".join(repr(o.params["model"]).split())
    key = next(k for k in sel.candidates[0].params)
    col = sel.evaluations[f"param_{key}"].tolist()
    assert col == [sel.candidates[c].params[key] for c in sel.evaluations["candidate"]]


def test_load_of_a_bandit_run_keeps_its_belief(stores):
    path, original = stores["bandit"]
    sel = certa.load(path)
    # the history is rebuilt from the store alone, and equals the one of the run's own strategy
    hist = certa.reporting.loading.belief_history(sel)
    np.testing.assert_allclose(hist, certa.reporting.loading.belief_history(original))
    assert hist.shape[1] == len(sel.candidates) and hist[-1].max() >= sel.strategy["confidence"]
    assert sel.result["confidence"] == pytest.approx(original.result["confidence"])


@pytest.mark.parametrize("method", METHODS)
def test_show_json(stores, method, capsys):
    path, original = stores[method]
    assert main(["show", path, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == method and out["finished"] is True
    assert out["n_evaluations"] == len(certa.load(path).evaluations)
    sel = certa.load(path)
    assert out["choice"]["name"] == sel.best.name
    assert out["candidates"][0]["name"] == sel.best.name  # ranked: the choice first
    means = sel.summary()["mean"]
    for c in out["candidates"]:
        m = means[c["candidate"]]
        assert (c["mean"] is None and np.isnan(m)) or c["mean"] == pytest.approx(m)
    if method == "jkfold":
        assert out["stability"]["partition_choices"] == original.stability_.to_dict()["partition_choices"] \
            if hasattr(original, "stability_") else True
        assert "would choose it" in out["statement"]
    if method == "bandit":
        assert out["bandit"]["confidence"] == pytest.approx(original.result["confidence"])
        # the default stopping rule is the GLR one, so the statement is a frequentist guarantee
        assert original.result["stopping"] == "glr"
        assert out["statement"].startswith(f"{sel.best.name} chosen; guarantee: the best with confidence ")
        assert "delta-correct" in out["statement"] and "P(best)" not in out["statement"]
    if method == "progressive":
        assert [r["n_survived"] for r in out["rounds"]] == [r["n_survived"] for r in original.result["rounds"]]
    if method == "quantification":
        assert [b["bound"] for b in out["bounds"]] == pytest.approx(list(sel.evaluations["bound"]))


@pytest.mark.parametrize("method", METHODS)
def test_show_text(stores, method, capsys):
    path, _ = stores[method]
    assert main(["show", path]) == 0
    text = capsys.readouterr().out
    sel = certa.load(path)
    assert "Choice" in text and sel.best.name.split("=")[0][:12] in text
    assert f"{sel.n_evaluations} evaluations" in text


def test_intervals_are_the_corrected_t_interval(stores):
    from scipy import stats as sps

    sel = certa.load(stores["jkfold"][0])
    iv = candidate_intervals(sel)
    ev = sel.evaluations
    for c in sel.candidates:
        sub = ev[ev["candidate"] == c.index]
        x = sub["score"].to_numpy()
        n = x.size
        se = np.sqrt(np.var(x, ddof=1) * (1 / n + sub["n_test"].mean() / sub["n_train"].mean()))
        half = sps.t.ppf(0.975, n - 1) * se
        assert iv.loc[c.index, "ci_low"] == pytest.approx(x.mean() - half)
        assert iv.loc[c.index, "ci_high"] == pytest.approx(x.mean() + half)


def test_killed_and_running_store(killed, capsys):
    store, seen_running = killed
    assert seen_running, "the run finished before it could be read while running"
    n_running, finished_running, _ = seen_running[0]
    assert not finished_running and n_running >= 3
    sel = certa.load(store)
    assert not sel.finished
    total = 3 * 3 * 2
    assert 8 <= sel.n_evaluations < total
    # what was told is a prefix of the J-K-fold order: partition by partition, fold by fold, candidate by candidate
    expected = [(c, (j, k)) for j in range(2) for k in range(3) for c in range(3)][:sel.n_evaluations]
    assert [(c, tuple(i)) for c, i in zip(sel.evaluations["candidate"], sel.evaluations["index"])] == expected
    assert main(["show", store, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["finished"] is False and out["n_planned"] == total
    assert "not finished" in out["statement"]
    assert main(["show", store]) == 0
    assert "not finished" in capsys.readouterr().out
    # no decision yet: the leader so far is the highest mean, and that is what the figures mark
    assert sel.best_index == int(np.nanargmax(sel.summary()["mean"].to_numpy()))
    assert out["candidates"][0]["name"] == sel.best.name
    # the report of a killed run: the figures that apply; stability needs two complete partitions
    html = build_report(sel)
    assert "class='certa-figure' data-figure='scores'" in html
    assert "data-figure-skipped='stability'" in html
    assert "Leader so far" in html


def test_show_errors(tmp_path, capsys):
    assert main(["show", str(tmp_path / "missing.sqlite")]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database")
    assert main(["show", str(bad)]) == 2
    assert "not a certa SQLite store" in capsys.readouterr().err


# -- plots: the drawn data are the selection's numbers -----------------------------------------

def _new_ax():
    from matplotlib.figure import Figure

    return Figure().add_subplot()


def test_plot_scores_draws_the_ranked_means_and_intervals(stores):
    sel = certa.load(stores["jkfold"][0])
    ax = plot.scores(sel, ax=_new_ax())
    table = ranked_table(sel)
    lines = {line.get_label(): line for line in ax.lines}
    chosen = lines["chosen"]
    assert chosen.get_xdata()[0] == pytest.approx(sel.summary()["mean"][sel.best_index])
    others = lines["mean score"]
    np.testing.assert_allclose(sorted(others.get_xdata()), sorted(table["mean"].to_numpy()[1:]))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == table["name"].tolist()  # best first = top = first tick label after reversal
    segs = ax.collections[0].get_segments()
    lows = sorted(s[0][0] for s in segs)
    np.testing.assert_allclose(lows, sorted(table["ci_low"].to_numpy()))


def test_plot_bandit_figures(stores):
    sel = certa.load(stores["bandit"][0])
    ax = plot.evaluations_over_time(sel, ax=_new_ax())
    counts = sel.evaluations["candidate"].value_counts()
    for line, c in zip(ax.lines, sel.candidates):
        assert line.get_ydata()[-1] == counts[c.index]
    ax = plot.evaluations_over_time(sel, ax=_new_ax(), share=True)
    n = len(sel.evaluations)
    assert sum(line.get_ydata()[-1] for line in ax.lines) == pytest.approx(1.0)
    for line, c in zip(ax.lines, sel.candidates):
        assert line.get_ydata()[-1] == pytest.approx(counts[c.index] / n)
    ax = plot.belief(sel, ax=_new_ax())
    for line, c in zip(ax.lines, sel.candidates):
        np.testing.assert_allclose(line.get_ydata(), certa.reporting.loading.belief_history(sel)[:, c.index])
    ax = plot.score_distributions(sel, ax=_new_ax())
    points = [line for line in ax.lines if line.get_linestyle() == "None"]
    for line, c in zip(points, sel.candidates):
        ev = sel.evaluations
        np.testing.assert_allclose(line.get_ydata(), ev[ev["candidate"] == c.index]["score"])


def test_plot_jkfold_figures(stores):
    sel = certa.load(stores["jkfold"][0])
    ax = plot.partition_choices(sel, ax=_new_ax())
    part = np.asarray(sel.result["scores"]).mean(axis=2)
    for c in range(len(sel.candidates)):
        np.testing.assert_allclose(ax.lines[c].get_ydata(), part[c])
    circled = ax.lines[len(sel.candidates)].get_ydata()
    np.testing.assert_allclose(circled, part.max(axis=0))
    ax = plot.stability(sel, ax=_new_ax())
    rep = certa.stability_report(np.asarray(sel.result["scores"]), sel.candidates, random_state=sel.seed)
    assert [p.get_height() for p in ax.patches] == [rep.subsample_disagreement[j] for j in sorted(rep.subsample_disagreement)]


def test_plot_progressive_figures(stores):
    sel = certa.load(stores["progressive"][0])
    ax = plot.learning_curves(sel, ax=_new_ax())
    ev = sel.evaluations
    first = ev[ev["candidate"] == 0].sort_values("size")
    np.testing.assert_allclose(ax.lines[0].get_xdata(), first["size"])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), first["score"])
    ax = plot.survivors(sel, ax=_new_ax())
    rounds = sel.result["rounds"]
    heights = [p.get_height() for p in ax.patches]
    assert heights == [r["n_evaluated"] for r in rounds] + [r["n_survived"] for r in rounds]


def test_plot_bounds_and_nested(stores):
    sel = certa.load(stores["quantification"][0])
    test_scores = [0.5, 0.6, 0.7]
    ax = plot.bounds(sel, ax=_new_ax(), test_scores=test_scores)
    np.testing.assert_allclose(ax.lines[0].get_xdata(), [0.1, 1.0, 10.0])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), sel.evaluations.sort_values("candidate")["bound"])
    np.testing.assert_allclose(ax.lines[2].get_ydata(), test_scores)
    assert ax.get_xscale() == "log"
    nested = certa.load(stores["nested"][0])
    ax = plot.nested_folds(nested, ax=_new_ax())
    np.testing.assert_allclose(ax.lines[0].get_ydata(), nested.evaluations["score"])
    np.testing.assert_allclose(ax.lines[1].get_ydata(), nested.evaluations["inner_best_score"])


def test_plot_comparison_shows_holm_pvalues(stores):
    sel = certa.load(stores["jkfold"][0])
    ax = plot.comparison(sel, ax=_new_ax())
    cells = ax.tables[0].get_celld()
    table = comparison_table(sel)
    holm = [cells[(i + 1, 5)].get_text().get_text() for i in range(len(table))]
    assert holm == [f"{p:.4f}" for p in table["pvalue_holm"]]


def test_plot_failures_counts_failed_attempts():
    sel = certa.run(certa.JKFoldGrid(2, 1), certa.FunctionEvaluator(_fails_for_b), {"x": ["a", "b"]}, retries=1)
    ax = plot.failures(sel, ax=_new_ax())
    # "b" fails on both folds; without the store's attempts, its two final outcomes count
    widths = {t.get_text(): 0 for t in ax.get_yticklabels()}
    for patch, label in zip(ax.patches, [t.get_text() for t in ax.get_yticklabels()]):
        widths[label] += patch.get_width()
    assert widths == {"x='a'": 0, "x='b'": 2}


def _fails_for_b(params, seed):
    if params["x"] == "b":
        raise RuntimeError("b always fails")
    return 1.0


def test_plotting_changes_no_global_state(stores):
    import matplotlib.pyplot as plt

    before = matplotlib.get_backend()
    plt.switch_backend("svg")  # a user's choice that is not Agg
    try:
        rc = dict(matplotlib.rcParams)
        sel = certa.load(stores["bandit"][0])
        for fn in (plot.belief, certa.plot_belief, plot.scores, plot.evaluations_over_time):
            ax = fn(sel)
            assert ax.figure is not None
        assert matplotlib.get_backend() == "svg"
        assert dict(matplotlib.rcParams) == rc
    finally:
        plt.close("all")
        plt.switch_backend(before)


# -- report ---------------------------------------------------------------------------------

EXPECTED = {"jkfold": ["scores", "partition_choices", "stability"],
            "bandit": ["scores", "evaluations_over_time", "belief", "score_distributions"],
            "progressive": ["scores", "learning_curves", "survivors"],
            "quantification": ["scores", "bounds"],
            "nested": ["scores", "nested_folds"]}


@pytest.mark.parametrize("method", METHODS)
def test_report_is_self_contained_with_the_methods_figures(stores, method, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", stores[method][0], "-o", str(out)]) == 0
    page = out.read_text()
    figs = re.findall(r"data-figure='([a-z_]+)'", page)
    assert figs == EXPECTED[method]
    for src in re.findall(r"src='([^']+)'", page):
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "http://" not in page and "https://" not in page
    if method != "nested":
        assert "p (Holm)" in page  # the comparison table


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage"]

COUNT_SCRIPT = """<script>
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('img.certa-figure');
  var ok = Array.prototype.filter.call(imgs, function (i) { return i.complete && i.naturalWidth > 0; });
  document.body.setAttribute('data-rendered', ok.length + '/' + imgs.length);
});
</script></body>"""


@pytest.mark.browser
@pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (Debian: apt-get install chromium)")
@pytest.mark.parametrize("method", METHODS + ["killed", "pipeline"])
def test_report_in_a_real_browser(stores, killed, method, tmp_path):
    path = killed[0] if method == "killed" else stores[method][0]
    page = build_report(certa.load(path), title=f"certa report: {method} run on Debian package descriptions")
    n = page.count("class='certa-figure'")
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", COUNT_SCRIPT))
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                              "--virtual-time-budget=5000", probe.as_uri()],
                             capture_output=True, text=True, timeout=120, check=False).stdout
    assert f"data-rendered=\"{n}/{n}\"" in dom, dom[:500]
    if os.environ.get("CERTA_SCREENSHOTS"):  # keep screenshots for the docs (docs/img/report-*.png)
        target = os.path.join(os.environ["CERTA_SCREENSHOTS"], f"report-{method}.png")
        real = tmp_path / "report.html"
        real.write_text(page)
        with tempfile.TemporaryDirectory() as profile:
            subprocess.run([_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--hide-scrollbars",
                            "--window-size=1000,2600", f"--screenshot={target}", real.as_uri()],
                           capture_output=True, timeout=120, check=True)
        assert os.path.getsize(target) > 10_000


def test_load_of_an_older_store_and_of_an_unknown_strategy(tmp_path):
    path = str(tmp_path / "old.sqlite")
    sel = certa.run(certa.JKFoldGrid(2, 1), certa.FunctionEvaluator(lambda p, seed: p["x"] / 10), {"x": [1, 3, 2]},
                    store=path)
    with sqlite3.connect(path) as conn:  # a store written before parameters were kept
        desc = json.loads(conn.execute("SELECT value FROM meta WHERE key='description'").fetchone()[0])
        old = {k: desc[k] for k in ("strategy", "candidates", "seed")}
        conn.execute("UPDATE meta SET value=? WHERE key='description'", (json.dumps(old),))
        conn.execute("DELETE FROM meta WHERE key='checksum'")  # nor checksums (store format 3)
    loaded = certa.load(path)
    assert loaded.finished and loaded.best.name == sel.best.name == "x=3"
    assert all(c.params == {} for c in loaded.candidates)
    with sqlite3.connect(path) as conn:  # a strategy this version does not know: the means decide
        conn.execute("UPDATE meta SET value=? WHERE key='description'",
                     (json.dumps({**old, "strategy": {"strategy": "SomethingNew"}}),))
    loaded = certa.load(path)
    assert not loaded.finished and loaded.best.name == "x=3"
    np.testing.assert_allclose(loaded.result["estimates"], [0.1, 0.3, 0.2])
    assert loaded.n_evaluations == 6
