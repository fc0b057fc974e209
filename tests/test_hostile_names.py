"""Issue 26 item 4: names from a store are truncated and escaped in every output (show, --json, report, plots)."""
from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
from _helpers import resign_store

from certa import FunctionEvaluator, JKFoldGrid, load, run
from certa.cli import main
from certa.reporting.summary import display_text

HUGE = "C=" + "9" * 1_000_000
ESCAPE = "C=1\x1b[31m\x1b]0;owned\x07[bold]"


@pytest.fixture
def hostile_store(tmp_path):
    """A finished store whose candidate names were rewritten as a hostile file would have them."""
    path = tmp_path / "hostile.sqlite"
    run(JKFoldGrid(2, 1), FunctionEvaluator(lambda p, s: {"score": p["x"] + 0.01 * (s % 3)}),
        {"x": [0.1, 0.2, 0.3]}, random_state=0, store=path)
    con = sqlite3.connect(path)
    desc = json.loads(con.execute("SELECT value FROM meta WHERE key='description'").fetchone()[0])
    desc["candidates"] = [HUGE, ESCAPE, "C=\u202eevil"]
    desc["params"][0] = {"x": HUGE}
    con.execute("UPDATE meta SET value=? WHERE key='description'", (json.dumps(desc),))
    con.execute("UPDATE evaluations SET status='failed', score=NULL, error=? WHERE seq=1", ("boom\x1b[2J" * 1000,))
    con.commit()
    con.close()
    resign_store(path)  # as a hostile file would be: its checksums match what it holds
    return str(path)


def _safe(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert len(text) < 50_000  # the 1 MB name is not printed


def test_show_truncates_and_escapes(hostile_store, capsys):
    assert main(["show", hostile_store]) == 0
    out = capsys.readouterr().out
    _safe(out)
    assert "\\x1b[31m" in out and "1,000,002 characters" in out.replace("\n", "")


def test_show_json_truncates_and_escapes(hostile_store, capsys):
    assert main(["show", hostile_store, "--json"]) == 0
    out = capsys.readouterr().out
    _safe(out)
    summary = json.loads(out)
    texts = [c["name"] for c in summary["candidates"]] + [f["error"] for f in summary["failures"]] + [
        summary["choice"]["name"], summary["statement"], json.dumps(summary["candidates"][-1]["params"])]
    for text in texts:  # the parsed strings too: JSON's own \u001b escapes would come back raw
        assert "\x1b" not in text and "\u202e" not in text and len(text) < 1000
    assert "C=1\\x1b[31m\\x1b]0;owned\\x07[bold]" in {c["name"] for c in summary["candidates"]}


def test_report_and_plots_truncate_and_escape(hostile_store, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from certa.reporting import plot
    from certa.reporting.report import build_report

    page = build_report(load(hostile_store))
    assert "\x1b" not in page and "\u202e" not in page
    assert "\\x1b[31m" in page and len(page) < 1_000_000  # figures included, the 1 MB name not
    ax = plot.scores(load(hostile_store))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert all(len(s) < 200 and "\x1b" not in s for s in labels)


def test_display_text_is_bounded_and_escapes_controls():
    assert display_text("a\tb\x00c\x9b") == "a\\tb\\x00c\\x9b"
    out = display_text("x" * 10_000_000)
    assert len(out) < 200 and out.startswith("x" * 120) and "10,000,000 characters" in out
    assert display_text(np.float64(0.5)) == "0.5"
