"""TestResult / ConfidenceInterval: immutability, JSON round trip, readable text."""

import dataclasses
import json

import numpy as np
import pytest

from certa.stats import (
    ConfidenceInterval,
    TestResult,
    mcnemar_table,
    paired_bootstrap_ci,
    paired_ttest,
)


def test_result_is_frozen_and_json_serialisable():
    r = paired_ttest([0.81, 0.79, 0.84, 0.80], [0.78, 0.77, 0.80, 0.79])
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.pvalue = 0.5
    d = json.loads(json.dumps(r.to_dict()))
    assert d["pvalue"] == r.pvalue and d["statistic"] == r.statistic
    assert d["ci"] == list(r.ci) and d["df"] == 3.0 and d["test"] == "paired t test"
    assert type(d["n"]) is int


def test_numpy_values_become_plain_python():
    r = TestResult(test="x", statistic=np.float64(1.5), pvalue=np.float32(0.25), n=np.int64(3),
                   df=(np.float64(10), 5.0), details={"s2": np.arange(2)})
    d = r.to_dict()
    assert type(d["statistic"]) is float and type(d["n"]) is int and d["df"] == [10.0, 5.0]
    assert d["details"]["s2"] == [0, 1]
    json.dumps(d)


def test_str_is_readable():
    text = str(mcnemar_table([[50, 9], [2, 39]]))
    assert text.startswith("McNemar (exact): statistic=2")
    assert "p=0.06543 (two-sided)" in text and "n=100" in text and "assumes:" in text
    text = str(paired_ttest([0.81, 0.79, 0.84, 0.80], [0.78, 0.77, 0.80, 0.79]))
    assert "df=3" in text and "95% CI=[" in text


def test_confidence_interval_text_and_dict():
    ci = paired_bootstrap_ci([0.81, 0.79, 0.84, 0.80, 0.83], [0.78, 0.77, 0.80, 0.79, 0.80],
                             random_state=0, n_resamples=999)
    assert isinstance(ci, ConfidenceInterval)
    assert "95% CI of the mean difference" in str(ci)
    d = json.loads(json.dumps(ci.to_dict()))
    assert d["low"] == ci.low and d["n_resamples"] == 999 and d["method"] == "percentile"


def test_pytest_does_not_collect_testresult():
    assert TestResult.__test__ is False
