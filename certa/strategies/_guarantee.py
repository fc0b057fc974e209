"""The guarantee of a fixed-confidence run in words, with its confidence rounded so it never overstates."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["certified_text", "fmt_tolerance", "guarantee_text", "states_certified"]


def guarantee_text(confidence: float, tolerance: float, stopping: str) -> str:
    """The guarantee in words, e.g. "within 0.005 of the best with confidence 0.95".

    Examples
    --------
    >>> guarantee_text(0.95473, 0.0, "glr")
    'the best with confidence 0.955 (frequentist, delta-correct for Gaussian scores)'
    """
    if not np.isfinite(confidence):
        return "no confidence yet (fewer than 3 scores of some candidate)"
    what = "the best" if tolerance == 0 else f"within {tolerance:g} of the best"
    kind = ("frequentist, delta-correct for Gaussian scores" if stopping == "glr"
            else "GLR with Garivier & Kaufmann's heuristic threshold: calibrated by simulation, not proven"
            if stopping == "gk16"
            else "frequentist, delta-correct for Gaussian scores, from paired differences on common rows"
            if stopping == "paired"
            else "Bayesian posterior P(best)" + ("" if tolerance == 0 else f" within {tolerance:g}")
            + ", not a frequentist guarantee")
    return f"{what} with confidence {_fmt_conf(confidence)} ({kind})"


def fmt_tolerance(eps: float) -> str:
    """A certified tolerance in words, rounded *up* to two significant digits (never understated).

    Examples
    --------
    >>> fmt_tolerance(0.003121), fmt_tolerance(0.0), fmt_tolerance(12.01)
    ('0.0032', '0', '13')
    """
    if eps <= 0:
        return "0"
    q = 10.0 ** (math.floor(math.log10(eps)) - 1)
    return f"{math.ceil(eps / q) * q:.2g}"


def states_certified(stop_reason: str, certified: float, confidence: float, target: float) -> bool:
    """Whether a stopped run's words state its certified tolerance: it stopped before its target
    (a budget, a cap, the last split) with a finite tolerance above 0 certified, and the confidence it
    reached for the best itself is below the target.

    Examples
    --------
    >>> states_certified("budget", 0.003, 0.4, 0.95), states_certified("confident", 0.0, 0.96, 0.95)
    (True, False)
    """
    return (stop_reason != "confident" and math.isfinite(certified) and certified > 0
            and math.isfinite(confidence) and confidence < target)


def certified_text(target: float, certified: float, confidence: float, stopping: str = "paired") -> str:
    """What a run that stopped before its target has shown: within the certified tolerance of the best
    at the target confidence, and the confidence reached for the best itself.

    Examples
    --------
    >>> certified_text(0.95, 0.00312, 0.62)[:60]
    'within 0.0032 of the best with confidence 0.95 (the toleranc'
    """
    kind = guarantee_text(target, 0.0, stopping)
    kind = kind[kind.index(" (") + 2:-1] if " (" in kind else ""
    return (f"within {fmt_tolerance(certified)} of the best with confidence {_fmt_conf(target)} (the tolerance "
            f"certified when the run stopped; {kind}); the best itself with confidence {_fmt_conf(confidence)}")


def _fmt_conf(p: float) -> str:
    if p >= 1.0 - 1e-12:
        return "1"
    # rounded (0.95473 reads 0.955), with a digit more while rounding up would give a shorter,
    # rounder number, so a confidence just below a target never reads as the target (0.94996, not 0.95)
    digits = max(2, int(np.ceil(-np.log10(max(1.0 - p, 1e-12)))) + 1)
    while True:
        text = f"{p:.{digits}f}"
        short = text.rstrip("0").rstrip(".")
        if float(text) <= p or len(short) == len(text) or digits >= 12:
            return short
        digits += 1
