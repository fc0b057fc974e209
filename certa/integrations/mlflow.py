"""Record a certa run in MLflow: every evaluation, then the choice, its confidence and the report.

Needs MLflow (``pip install "certa[mlflow]"``). :class:`MLflowLogger` is a run callback
(:mod:`certa.engine.callbacks`): pass it as ``callbacks=`` to any front.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
import time
from typing import Any

from ..engine.callbacks import Callback, Evaluation, RunView
from ..engine.candidates import jsonable_params
from ..engine.selection import Selection
from ..reporting.summary import _finite

__all__ = ["MLflowLogger"]

_MODES = ("steps", "child_runs")
_MAX_KEY = 250      # MLflow's limit on a param or metric key
_MAX_VALUE = 6000   # and on a param value
_BAD_KEY = re.compile(r"[^A-Za-z0-9_\-. /]")


def _key(text: str) -> str:
    """``text`` as a valid MLflow key (alphanumerics, ``_-. /``; others become ``_``)."""
    return _BAD_KEY.sub("_", str(text))[:_MAX_KEY] or "_"


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=repr, sort_keys=True)
    return text[:_MAX_VALUE]




class MLflowLogger(Callback):
    """A run callback that records a certa run in MLflow.

    One MLflow run (the *parent*) stands for the selection. At the start it gets the run's
    settings as params (``strategy``, ``strategy.<setting>``, ``seed``, ``n_candidates``) and
    the candidates as the artifact ``candidates.json``. Each evaluation is then recorded, in
    the order certa tells it to its strategy:

    - ``per_evaluation="steps"`` (default): metrics of the parent at step = the evaluation's
      position: ``score`` (not for a failed evaluation), ``scores/<candidate name>``,
      ``candidate`` (its index), ``failed`` (0/1), ``duration`` (seconds);
    - ``per_evaluation="child_runs"``: one nested MLflow run per evaluation (tag
      ``mlflow.parentRunId``), named ``"<candidate> #<position>"``, with the candidate's
      parameters and the evaluation's ``seed`` as params, ``score`` and ``duration`` as
      metrics and its draw, status, error and ``reused`` flag as tags.

    At the end the parent gets the choice as params (``best``, ``best.<parameter>``), the
    numbers as metrics (``confidence`` reached, ``target_confidence``, ``target_reached``,
    ``best_score``, ``n_evaluations``, ``n_failed``, ``n_reused``), the guarantee in words
    as the tag ``certa.guarantee``, and the artifacts ``summary.json`` (what ``certa show
    --json`` prints), ``evaluations.csv`` and, with ``log_report=True``, ``report.html``
    (``certa report``). The parent ends ``FINISHED``, or ``KILLED`` after Ctrl-C (the
    anytime answer is still logged), or ``FAILED`` when the run raised.

    On resume (a store with finished evaluations), the evaluations read back from the store
    are logged too, with ``reused`` = 1, so the new MLflow run holds the whole selection;
    ``log_reused=False`` logs only those evaluated by this run.

    Parameters
    ----------
    experiment_name : str or None
        MLflow experiment (created if missing); ``None``: MLflow's ``"Default"`` experiment.
    run_name : str or None
        Name of the parent run.
    tracking_uri : str or None
        Where to log (e.g. ``"sqlite:///mlflow.db"``, ``"http://host:5000"``); ``None``: MLflow's
        current tracking URI (``MLFLOW_TRACKING_URI`` or ``mlflow.set_tracking_uri``).
    parent_run_id : str or None
        Log into this existing MLflow run instead of creating one (it is left open).
    per_evaluation : {"steps", "child_runs"}, default "steps"
    log_reused : bool, default True
    log_report : bool, default True
    tags : dict or None
        Extra tags of the parent run.

    Attributes
    ----------
    run_id : str
        The parent run of the last certa run logged.

    Examples
    --------
    >>> from certa import bandit_select
    >>> from certa.integrations.mlflow import MLflowLogger
    >>> logger = MLflowLogger(experiment_name="model choice",
    ...                       tracking_uri="sqlite:///mlflow.db")          # doctest: +SKIP
    >>> sel = bandit_select(evaluate, candidates, data, callbacks=[logger])  # doctest: +SKIP
    >>> logger.run_id                                                       # doctest: +SKIP
    """

    def __init__(self, experiment_name: str | None = None, run_name: str | None = None, *,
                 tracking_uri: str | None = None, parent_run_id: str | None = None,
                 per_evaluation: str = "steps", log_reused: bool = True, log_report: bool = True,
                 tags: dict[str, Any] | None = None) -> None:
        if per_evaluation not in _MODES:
            raise ValueError(f"per_evaluation must be one of {list(_MODES)}, got {per_evaluation!r}")
        for name, value in (("experiment_name", experiment_name), ("run_name", run_name),
                            ("tracking_uri", tracking_uri), ("parent_run_id", parent_run_id)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str or None, got {type(value).__name__}")
        if tags is not None and not isinstance(tags, dict):
            raise TypeError(f"tags must be a dict or None, got {type(tags).__name__}")
        self.experiment_name = experiment_name
        self.run_name = run_name
        self.tracking_uri = tracking_uri
        self.parent_run_id = parent_run_id
        self.per_evaluation = per_evaluation
        self.log_reused = bool(log_reused)
        self.log_report = bool(log_report)
        self.tags = tags
        self.run_id: str | None = None
        self._client: Any = None

    # -- the hooks ------------------------------------------------------------------------
    def on_run_start(self, run: RunView) -> None:
        try:
            from mlflow.tracking import MlflowClient
        except ImportError as exc:  # pragma: no cover - the extra is missing
            raise ImportError('MLflowLogger needs MLflow: pip install "certa[mlflow]"') from exc
        self._client = client = MlflowClient(self.tracking_uri)
        self._own_run = self.parent_run_id is None
        if self._own_run:
            experiment_id = self._experiment_id(client)
            tags = {"certa.seed": str(run.seed), **{k: str(v) for k, v in (self.tags or {}).items()}}
            self.run_id = client.create_run(experiment_id, run_name=self.run_name, tags=tags).info.run_id
        else:
            self.run_id = self.parent_run_id
        self._experiment = client.get_run(self.run_id).info.experiment_id
        self._names = self._metric_names(run)
        spec = dict(run.strategy)
        params = {"strategy": spec.pop("strategy", "?"), "seed": run.seed, "n_candidates": len(run.candidates),
                  **{f"strategy.{k}": v for k, v in spec.items()}}
        self._log_params(self.run_id, params)
        self._log_json("candidates.json", [{"index": c.index, "name": c.name, "params": jsonable_params(c.params)}
                                           for c in run.candidates])

    def on_evaluation(self, run: RunView, evaluation: Evaluation) -> None:
        if evaluation.reused and not self.log_reused:
            return
        if self.per_evaluation == "steps":
            self._log_step(evaluation)
        else:
            self._log_child(run, evaluation)

    def on_run_end(self, run: RunView, selection: Selection | None, error: BaseException | None = None) -> None:
        client = self._client
        if client is None:
            return
        try:
            if selection is not None:
                self._log_selection(run, selection)
            else:
                client.set_tag(self.run_id, "certa.error", _value(f"{type(error).__name__}: {error}"))
        finally:
            if self._own_run:
                status = "FAILED" if selection is None else ("FINISHED" if selection.finished else "KILLED")
                client.set_terminated(self.run_id, status=status)
            self._client = None   # a logger holds no connection between runs (it is cloned, pickled)

    # -- helpers --------------------------------------------------------------------------
    def _experiment_id(self, client: Any) -> str:
        name = "Default" if self.experiment_name is None else self.experiment_name
        found = client.get_experiment_by_name(name)
        return found.experiment_id if found is not None else client.create_experiment(name)

    @staticmethod
    def _metric_names(run: RunView) -> list[str]:
        names, seen = [], set()
        for c in run.candidates:
            name = _key(f"scores/{c.name}")
            if name in seen:
                name = _key(f"scores/{c.index}.{c.name}")
            seen.add(name)
            names.append(name)
        return names

    def _log_params(self, run_id: str, params: dict[str, Any]) -> None:
        from mlflow.entities import Param

        items = [Param(_key(k), _value(v)) for k, v in params.items()]
        for i in range(0, len(items), 100):   # MLflow takes at most 100 params per batch
            self._client.log_batch(run_id, params=items[i:i + 100])

    def _log_json(self, name: str, data: Any) -> None:
        self._log_text(name, json.dumps(data, indent=2, default=repr, sort_keys=True))

    def _log_text(self, name: str, text: str) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            self._client.log_artifact(self.run_id, path)

    def _log_step(self, ev: Evaluation) -> None:
        from mlflow.entities import Metric

        now, step, out = int(time.time() * 1000), ev.order, ev.outcome
        metrics = [Metric("candidate", float(ev.draw.candidate), now, step),
                   Metric("failed", 0.0 if out.ok else 1.0, now, step),
                   Metric("reused", 1.0 if ev.reused else 0.0, now, step),
                   Metric("duration", float(out.duration), now, step)]
        if out.ok:
            metrics += [Metric("score", float(out.score), now, step),
                        Metric(self._names[ev.draw.candidate], float(out.score), now, step)]
        self._client.log_batch(self.run_id, metrics=metrics)

    def _log_child(self, run: RunView, ev: Evaluation) -> None:
        from mlflow.entities import Metric

        client, out = self._client, ev.outcome
        tags = {"mlflow.parentRunId": self.run_id, "certa.draw": ev.draw.key, "certa.status": out.status,
                "certa.reused": str(ev.reused).lower(), "certa.order": str(ev.order)}
        if out.error:
            tags["certa.error"] = _value(out.error)
        child = client.create_run(self._experiment, run_name=f"{ev.candidate.name} #{ev.order}",
                                  tags=tags).info.run_id
        self._log_params(child, {**{f"param.{k}": v for k, v in jsonable_params(ev.candidate.params).items()},
                                 "candidate": ev.candidate.name, "seed": ev.draw.seed, "attempt": out.attempt})
        now = int(time.time() * 1000)
        metrics = [Metric("duration", float(out.duration), now, 0)]
        if out.ok:
            metrics.append(Metric("score", float(out.score), now, 0))
        client.log_batch(child, metrics=metrics)
        client.set_terminated(child, status="FINISHED" if out.ok else "FAILED")

    def _log_selection(self, run: RunView, selection: Selection) -> None:
        from mlflow.entities import Metric

        from ..reporting.loading import METHODS
        from ..reporting.summary import summarize

        client, res = self._client, selection.result
        if selection.method is None:
            selection.method = METHODS.get(str(selection.strategy.get("strategy")), "other")
        best = selection.best
        self._log_params(self.run_id, {"best": best.name,
                                       **{f"best.{k}": v for k, v in jsonable_params(best.params).items()}})
        ev = selection.evaluations
        numbers = {"best_score": selection.best_score, "n_evaluations": selection.n_evaluations,
                   "n_failed": int((ev["status"] != "ok").sum()) if len(ev) else 0, "n_reused": selection.n_reused,
                   "confidence": res.get("confidence"), "target_confidence": res.get("target_confidence"),
                   "tolerance": res.get("tolerance")}
        if "target_reached" in res:
            numbers["target_reached"] = float(bool(res["target_reached"]))
        now = int(time.time() * 1000)
        metrics = [Metric(k, v, now, 0) for k, v in ((k, _finite(v)) for k, v in numbers.items()) if v is not None]
        client.log_batch(self.run_id, metrics=metrics)
        if res.get("guarantee"):
            client.set_tag(self.run_id, "certa.guarantee", _value(res["guarantee"]))
        client.set_tag(self.run_id, "certa.finished", str(bool(selection.finished)).lower())
        self._log_json("summary.json", summarize(selection))
        self._log_text("evaluations.csv", ev.to_csv(index=False))
        if self.log_report:
            from ..reporting.report import build_report

            self._log_text("report.html", build_report(selection, title=self.run_name or "certa selection"))
