"""Quantification (CC, PCC) and quantification-based upper bounds for model selection.

The room for choosing a classifier from unlabeled data, after Balikas et al., IDA 2015: estimate
the class distribution of an unlabeled set from a classifier's predictions, and bound the
classifier's accuracy or macro measures on that set without its labels. One module per role:

* :mod:`~certa.quantification.quantifiers`: the quantifiers (Classify and Count, Probabilistic
  Classify and Count, the logistic map of decision scores and its ``sigma``);
* :mod:`~certa.quantification.certa_bounds`: certa's own, proven and tighter bounds
  (``bound="certa"``, the default);
* :mod:`~certa.quantification.theorem1`: the paper's Theorem 1 and Algorithm 1 to the letter
  (``bound="theorem1"``, for reproducing the paper; it warns where its guarantee cannot hold
  or is void);
* :mod:`~certa.quantification.bounds`: the glue that quantifies a fitted classifier and bounds
  it with either family;
* :mod:`~certa.quantification.separation`: whether the bounds tell the candidates apart, and
  which rule decided when they do not (issue 31).

See ``docs/quantification.md``.

Imports: numpy and scipy only, and nothing from the rest of certa today (the layer allows
``certa.engine`` and ``certa.stats`` below it, never ``certa.strategies``, ``certa.search`` or a
front). Imported by ``certa.search.quantification`` (:class:`certa.QuantificationBoundSearch`),
which runs these bounds through the engine.
"""

from .bounds import (
    BOUNDS,
    Quantification,
    QuantificationBound,
    bound_from_quantification,
    bounds_for_classifier,
    quantify_classifier,
)
from .certa_bounds import (
    accuracy_bound,
    l1_confidence_radius,
    macro_f1_bound,
    macro_precision_bound,
    macro_recall_bound,
    quantification_epsilon,
    resolve_quantifier,
    true_proportion_intervals,
)
from .quantifiers import (
    choose_sigma,
    classify_and_count,
    decision_to_proba,
    predictions_from_decision,
    probabilistic_classify_and_count,
)
from .separation import BoundsNotSeparatedWarning, separation
from .theorem1 import (
    Theorem1Warning,
    algorithm1_epsilon,
    max_epsilon,
    theorem1_accuracy_bound,
    theorem1_bounds,
    theorem1_confidence_term,
    theorem1_macro_f1_bound,
    theorem1_macro_precision_bound,
    theorem1_macro_recall_bound,
    theorem1_point_values,
    theorem1_warnings,
)

__all__ = [
    "BOUNDS",
    "BoundsNotSeparatedWarning",
    "Quantification",
    "QuantificationBound",
    "Theorem1Warning",
    "accuracy_bound",
    "algorithm1_epsilon",
    "bound_from_quantification",
    "bounds_for_classifier",
    "choose_sigma",
    "classify_and_count",
    "decision_to_proba",
    "l1_confidence_radius",
    "macro_f1_bound",
    "macro_precision_bound",
    "macro_recall_bound",
    "max_epsilon",
    "predictions_from_decision",
    "probabilistic_classify_and_count",
    "quantification_epsilon",
    "quantify_classifier",
    "resolve_quantifier",
    "separation",
    "theorem1_accuracy_bound",
    "theorem1_bounds",
    "theorem1_confidence_term",
    "theorem1_macro_f1_bound",
    "theorem1_macro_precision_bound",
    "theorem1_macro_recall_bound",
    "theorem1_point_values",
    "theorem1_warnings",
    "true_proportion_intervals",
]
