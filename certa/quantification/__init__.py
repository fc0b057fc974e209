"""Quantification (CC, PCC) and quantification-based upper bounds for model selection.

After Balikas et al., IDA 2015: ``bound="certa"`` (the default) is certa's own, proven and
tighter set of bounds; ``bound="theorem1"`` is the paper's Theorem 1 and Algorithm 1 to the
letter, for reproducing the paper (it warns where its guarantee cannot hold or is void). See ``docs/quantification.md``.
"""

from .bounds import (
    BOUNDS,
    Quantification,
    QuantificationBound,
    Theorem1Warning,
    accuracy_bound,
    algorithm1_epsilon,
    bound_from_quantification,
    bounds_for_classifier,
    l1_confidence_radius,
    macro_f1_bound,
    macro_precision_bound,
    macro_recall_bound,
    max_epsilon,
    quantification_epsilon,
    quantify_classifier,
    resolve_quantifier,
    theorem1_accuracy_bound,
    theorem1_bounds,
    theorem1_confidence_term,
    theorem1_macro_f1_bound,
    theorem1_macro_precision_bound,
    theorem1_macro_recall_bound,
    theorem1_point_values,
    theorem1_warnings,
    true_proportion_intervals,
)
from .quantifiers import (
    choose_sigma,
    classify_and_count,
    decision_to_proba,
    predictions_from_decision,
    probabilistic_classify_and_count,
)

__all__ = [
    "BOUNDS",
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
