"""MLflowLogger against a real, local file-based MLflow tracking directory: read back what was logged."""
from __future__ import annotations

import json

import numpy as np
import pytest

mlflow = pytest.importorskip("mlflow")  # the test extra installs it
from mlflow.tracking import MlflowClient

from certa import FunctionEvaluator, run
from certa.integrations.mlflow import MLflowLogger
from certa.strategies import TopTwoThompson


def noisy(params, seed):
    if params["mu"] < 0:
        raise ValueError("negative mu")
    return params["mu"] + np.random.default_rng(seed).normal(0, 0.05)


CANDS = [{"mu": 0.5}, {"mu": 0.62}, {"mu": 0.6}]


@pytest.fixture
def tracking(tmp_path, monkeypatch):
    # MLflow 3 keeps the file store in maintenance mode behind this switch
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = f"file:{tmp_path / 'mlruns'}"
    return uri, MlflowClient(uri)


def _read(client, run_id, path):
    local = client.download_artifacts(run_id, path)
    with open(local, encoding="utf-8") as fh:
        return fh.read()


def test_steps_and_selection_read_back(tracking):
    uri, client = tracking
    logger = MLflowLogger("choice", "run-1", tracking_uri=uri)
    sel = run(TopTwoThompson(0.9, max_evals=60), FunctionEvaluator(noisy), CANDS, random_state=4, callbacks=[logger])
    parent = client.get_run(logger.run_id)
    assert parent.info.status == "FINISHED" and parent.info.run_name == "run-1"
    assert client.get_experiment(parent.info.experiment_id).name == "choice"
    ev = sel.evaluations
    # each evaluation a metric step, in the order told
    history = sorted(client.get_metric_history(logger.run_id, "score"), key=lambda m: m.step)
    assert [m.step for m in history] == list(range(len(ev)))
    assert np.allclose([m.value for m in history], ev["score"])
    cands = sorted(client.get_metric_history(logger.run_id, "candidate"), key=lambda m: m.step)
    assert [int(m.value) for m in cands] == list(ev["candidate"])
    per = client.get_metric_history(logger.run_id, "scores/mu_0.62")
    assert len(per) == int((ev["candidate"] == 1).sum())
    # the selection: params, metrics, tags, artifacts
    p, m, t = parent.data.params, parent.data.metrics, parent.data.tags
    assert p["best"] == sel.best.name and float(p["best.mu"]) == sel.best_params["mu"]
    assert p["strategy"] == "TopTwoThompson" and float(p["strategy.confidence"]) == 0.9 and p["seed"] == "4"
    assert m["confidence"] == pytest.approx(sel.result["confidence"])
    assert m["n_evaluations"] == len(ev) and m["best_score"] == pytest.approx(sel.best_score)
    assert m["target_reached"] == float(sel.result["target_reached"])
    assert t["certa.guarantee"] == sel.result["guarantee"]
    names = {a.path for a in client.list_artifacts(logger.run_id)}
    assert names == {"candidates.json", "summary.json", "evaluations.csv", "report.html"}
    summary = json.loads(_read(client, logger.run_id, "summary.json"))
    assert summary["choice"]["name"] == sel.best.name and summary["n_evaluations"] == len(ev)
    assert "<html" in _read(client, logger.run_id, "report.html").lower()
    assert logger._client is None   # nothing held between runs


def test_child_runs_one_per_evaluation_with_failures(tracking):
    uri, client = tracking
    logger = MLflowLogger("children", tracking_uri=uri, per_evaluation="child_runs", log_report=False)
    cands = [{"mu": 0.5}, {"mu": 0.6}, {"mu": -1.0}]
    sel = run(TopTwoThompson(0.9, max_evals=30), FunctionEvaluator(noisy), cands, random_state=0, callbacks=logger)
    exp = client.get_run(logger.run_id).info.experiment_id
    children = client.search_runs([exp], filter_string=f"tags.mlflow.parentRunId = '{logger.run_id}'",
                                  max_results=1000)
    ev = sel.evaluations
    assert len(children) == len(ev)
    by_order = {int(c.data.tags["certa.order"]): c for c in children}
    for i, row in ev.iterrows():
        c = by_order[i]
        assert c.data.tags["certa.draw"] == row["key"] and c.data.tags["certa.status"] == row["status"]
        assert c.data.params["seed"] == str(row["seed"]) and c.data.params["candidate"] == row["name"]
        if row["status"] == "ok":
            assert c.data.metrics["score"] == pytest.approx(row["score"]) and c.info.status == "FINISHED"
        else:
            assert "score" not in c.data.metrics and "negative mu" in c.data.tags["certa.error"]
            assert c.info.status == "FAILED"
    assert (ev["status"] != "ok").sum() >= 5   # the failing candidate was tried (and dropped)
    parent = client.get_run(logger.run_id)
    assert parent.data.metrics["n_failed"] == (ev["status"] != "ok").sum()
    assert "report.html" not in {a.path for a in client.list_artifacts(logger.run_id)}


def test_resumed_run_logs_reused_evaluations_or_not(tracking, tmp_path):
    uri, client = tracking
    store = tmp_path / "run.sqlite"
    strategy = lambda: TopTwoThompson(0.95, max_evals=40)

    class Stop(MLflowLogger):
        def on_evaluation(self, run, ev):
            super().on_evaluation(run, ev)
            if ev.order == 9:
                raise RuntimeError("killed")

    first = Stop("resume", tracking_uri=uri)
    with pytest.raises(RuntimeError, match="killed"):
        run(strategy(), FunctionEvaluator(noisy), CANDS, random_state=1, store=store, callbacks=[first])
    failed = client.get_run(first.run_id)
    assert failed.info.status == "FAILED" and "killed" in failed.data.tags["certa.error"]
    assert len(client.get_metric_history(first.run_id, "score")) == 10

    all_of_it = MLflowLogger("resume", tracking_uri=uri)
    sel = run(strategy(), FunctionEvaluator(noisy), CANDS, random_state=1, store=store, callbacks=[all_of_it])
    reused = sorted(client.get_metric_history(all_of_it.run_id, "reused"), key=lambda m: m.step)
    assert [m.value for m in reused] == [1.0] * 10 + [0.0] * (len(sel.evaluations) - 10)
    assert client.get_run(all_of_it.run_id).data.metrics["n_reused"] == 10

    new_only = MLflowLogger("resume", tracking_uri=uri, log_reused=False)
    again = run(strategy(), FunctionEvaluator(noisy), CANDS, random_state=1, store=store, callbacks=[new_only])
    assert again.n_reused == len(again.evaluations)   # everything came from the store this time
    assert client.get_metric_history(new_only.run_id, "score") == []
    assert client.get_run(new_only.run_id).data.params["best"] == sel.best.name


def test_into_an_existing_run_left_open(tracking):
    uri, client = tracking
    exp = client.create_experiment("outer")
    outer = client.create_run(exp).info.run_id
    logger = MLflowLogger(tracking_uri=uri, parent_run_id=outer)
    run(TopTwoThompson(0.9, max_evals=20), FunctionEvaluator(noisy), CANDS, random_state=0, callbacks=[logger])
    got = client.get_run(outer)
    assert logger.run_id == outer and got.info.status == "RUNNING" and "best" in got.data.params


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="per_evaluation"):
        MLflowLogger(per_evaluation="rows")
    with pytest.raises(TypeError, match="tracking_uri"):
        MLflowLogger(tracking_uri=3)
