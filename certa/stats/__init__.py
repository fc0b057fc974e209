"""Significance tests for comparing two candidates (models or hyperparameter settings).

Which test fits which design is explained in ``docs/statistics.md``. In short:

- one test set, two trained classifiers: :func:`mcnemar` (exact by default);
- repeated K-fold CV scores: :func:`corrected_repeated_kfold_ttest` (never the plain
  :func:`paired_ttest`, which over-rejects on folds);
- random train/test splits: :func:`corrected_resampled_ttest`;
- Dietterich's 5x2cv design: :func:`ttest_5x2cv`, :func:`ftest_5x2cv`
  (:func:`differences_5x2cv` runs it);
- independent paired scores (e.g. per test example, or per independent data set):
  :func:`paired_permutation_test`, :func:`paired_bootstrap_ci`, :func:`paired_ttest`;
- several comparisons: :func:`holm` (or :func:`bonferroni`) on the p-values.

A room at the bottom, beside :mod:`certa.engine`: the tests take plain arrays of scores (or, for
:func:`differences_5x2cv`, two estimators) and import nothing else of certa; imported by
:mod:`certa.strategies` (the progressive race), :mod:`certa.analysis` and the demo.
"""

from certa.stats._result import ConfidenceInterval, TestResult
from certa.stats.mcnemar import mcnemar, mcnemar_table
from certa.stats.multipletests import bonferroni, holm
from certa.stats.resampling import paired_bootstrap_ci, paired_permutation_test
from certa.stats.ttests import (
    corrected_repeated_kfold_ttest,
    corrected_resampled_ttest,
    differences_5x2cv,
    ftest_5x2cv,
    paired_ttest,
    ttest_5x2cv,
)

__all__ = [
    "ConfidenceInterval",
    "TestResult",
    "bonferroni",
    "corrected_repeated_kfold_ttest",
    "corrected_resampled_ttest",
    "differences_5x2cv",
    "ftest_5x2cv",
    "holm",
    "mcnemar",
    "mcnemar_table",
    "paired_bootstrap_ci",
    "paired_permutation_test",
    "paired_ttest",
    "ttest_5x2cv",
]
