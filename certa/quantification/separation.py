"""Whether quantification bounds tell the candidates apart, and what decided when they do not (issue 31).

An upper bound per candidate ("accuracy on ``S`` is at most ``g``") ranks candidates, but
guarantees that are equal -- clipped at 1, where nothing is certified -- or that differ by less
than the bound resolves, do not: the choice among them rests on a rule of thumb (the value
beyond the cap, a tie-break). :func:`separation` says which candidates the guarantees do not
separate from the choice and which rule decided; ``QuantificationBoundSearch`` reports it
(``separated_``, ``decided_by_``, ``contenders_``) and warns (:class:`BoundsNotSeparatedWarning`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["BoundsNotSeparatedWarning", "separation", "separation_message"]


class BoundsNotSeparatedWarning(UserWarning):
    """The quantification bounds do not tell the choice apart from other candidates.

    Their guarantees are equal or within the bound's resolution (``1 / |S|``, one example
    of the unlabeled set), e.g. all clipped at 1: what decided is a rule of thumb (the
    unclipped value, the tie-break), not the bound. Use labelled data (a hold-out set or
    cross-validation over the contenders) for the final choice.
    """


def separation(guarantees, best: int, tied, tie_values, n_unlabeled: int, tie_rule: str = "plugin") -> dict[str, Any]:
    """Whether the guarantees separate the choice from every other candidate, and what decided.

    The bound proves "accuracy (or macro-F1) on ``S`` is at most ``g``" for each candidate.
    The guarantees separate the choice ``b`` from candidate ``j`` when ``g_b - g_j > 1/|S|``.
    Why ``1/|S|``: one example of ``S`` whose prediction moves to another class changes the
    CC counts ``||p_hat - q||_1`` by at most ``2/|S|`` and so the accuracy bound by at most
    ``1/|S|``; a smaller difference is below what the bound resolves (for macro-F1 one example
    can move the bound more, so the rule flags no more near ties than it should). Guarantees
    clipped at 1 (the cap: nothing is certified) are equal. Separated is the weaker claim
    only: an upper bound never shows that the choice is accurate, only that no other
    candidate can reach its guarantee.

    The contenders are the candidates with ``g_j >= g_b - 1/|S|`` (the choice included;
    failed candidates, NaN, never). With more than one, the bounds do not separate them and
    ``decided_by`` names the rule that did:

    * ``"unclipped value"``: the choice's guarantee is at the cap and the ranking beyond it
      decided (the unclipped value; for accuracy with CC the point value ``B_A``, how close
      the predicted class distribution is to the training priors);
    * ``"value within tolerance"``: a higher value, by at most ``1/|S|``;
    * for an exact tie of the values (``tied``): ``"plugin"`` or ``"callable tie_break"``
      when the choice's ``tie_values`` entry is above every other tied one, else ``"grid order"``.

    Otherwise ``decided_by`` is ``"bound"``.

    Parameters
    ----------
    guarantees : array-like of float
        Per candidate, the guarantee ``min(1, value)`` (NaN for a failed candidate).
    best : int
        Index of the choice.
    tied, tie_values : list of int, array-like of float
        The candidates exactly tied at the top value, and the tie-break's values
        (:func:`certa.strategies.one_shot.choose_one_shot`).
    n_unlabeled : int
        ``|S|``.
    tie_rule : {"plugin", "callable", "order"}, default "plugin"

    Returns
    -------
    dict
        ``separated`` (bool), ``contenders`` (sorted indices), ``tolerance`` (``1/|S|``),
        ``decided_by`` (str).

    Examples
    --------
    >>> r = separation([1.0, 1.0, 0.95], 0, [0], [np.nan] * 3, n_unlabeled=750)  # values 1.07, 1.03, 0.95
    >>> r["separated"], r["decided_by"], r["contenders"]
    (False, 'unclipped value', [0, 1])
    >>> separation([0.9, 0.8], 0, [0], [np.nan] * 2, n_unlabeled=750)["decided_by"]
    'bound'
    """
    g = np.asarray(guarantees, dtype=float)
    tol = 1.0 / int(n_unlabeled)
    contenders = [int(j) for j in np.flatnonzero(np.isfinite(g) & (g >= g[best] - tol - 1e-12))]
    if best not in contenders:
        contenders.append(int(best))
    out: dict[str, Any] = {"separated": len(contenders) <= 1, "contenders": sorted(contenders), "tolerance": tol,
                           "decided_by": "bound"}
    if out["separated"]:
        return out
    tied = [int(j) for j in tied]
    if len(tied) > 1:  # an exact tie of the values: the tie-break decided
        t = np.asarray(tie_values, dtype=float)
        others = [j for j in tied if j != best]
        by_value = tie_rule != "order" and np.isfinite(t[best]) and all(not t[best] <= t[j] for j in others)
        out["decided_by"] = ("callable tie_break" if tie_rule == "callable" else "plugin") if by_value \
            else "grid order"
    elif g[best] >= 1.0:
        out["decided_by"] = "unclipped value"
    else:
        out["decided_by"] = "value within tolerance"
    return out


def separation_message(sep: dict[str, Any], frame: Any, measure: str) -> str:
    """The warning's text: the contenders with their guarantees, the rule that decided, what to do.

    ``frame`` has one row per candidate with ``params`` and ``bound`` (the search's ``bounds_``).
    """
    shown = ", ".join(f"{frame['params'][j]} {frame['bound'][j]:.4f}" for j in sep["contenders"][:6])
    more = f" and {len(sep['contenders']) - 6} more" if len(sep["contenders"]) > 6 else ""
    rule = {"unclipped value": "the unclipped value above the cap of 1 (for CC a function of how close the "
                               "predicted class distribution is to the training priors), not the bound",
            "value within tolerance": f"a difference of the values below the bound's resolution "
                                      f"1/|S| = {sep['tolerance']:.3g}",
            "plugin": "the tie-break (tie_break='plugin': the bound without its confidence term)",
            "callable tie_break": "the tie-break (the callable tie_break)",
            "grid order": "the tie-break (grid order)"}[sep["decided_by"]]
    return (f"the {measure} bounds do not separate {len(sep['contenders'])} candidates (guarantees {shown}{more}: "
            f"equal within 1/|S| = {sep['tolerance']:.3g}, or clipped at 1); the choice was decided by {rule}. "
            "Use labelled data for the final choice among them (a hold-out set or cross-validation, e.g. "
            "JKFoldSearchCV over the contenders_)")
