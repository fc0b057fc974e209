"""P(best) of the leader alone, kept up to date incrementally: FIESTA's Bayesian stopping rule.

The rule needs only the P(best) of the candidate with the highest posterior location (see
:class:`LeaderBelief`); :func:`certa.strategies._posterior.p_best` gives the whole vector.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import stdtr

from ._posterior import _GL_ORDER, _GL_W, _GL_X, _log_t_pdf_norm, _saturated_cdf, _t_quantile

__all__ = ["LeaderBelief"]

# The leader's integral is cut where its own CDF is below _LEADER_LOW (the neglected part
# of P_L is below it) and its upper tail below _LEADER_HIGH (midpoint tail, error <= half).
_LEADER_LOW = 1e-10
_LEADER_HIGH = 1e-9
# A rival's breakpoints only refine panels where the leader's mass is above this: on a
# coarser panel the integrand f_L G is at most f_L, so the error there is below the mass.
_REFINE_MASS = 1e-10


def _log_cdf_rows(x: np.ndarray, loc: np.ndarray, scale: np.ndarray, df: np.ndarray) -> np.ndarray:
    """``log F_j(x)`` for rows j, with the CDF set to 0 / 1 where it is so to 1e-20 (as _p_best_raw)."""
    F = _saturated_cdf((x[None, :] - loc[:, None]) / scale[:, None], df)
    with np.errstate(divide="ignore"):
        return np.log(F)


class _LeaderState:
    """Nodes of the current panels and every candidate's log CDF there, for one leader."""

    __slots__ = ("S", "Z", "keys", "logF", "params", "w", "x")

    def __init__(self, keys, x, w, logF, params) -> None:
        self.keys, self.x, self.w, self.logF, self.params = keys, x, w, logF, params
        finite = np.isfinite(logF)
        self.S = np.where(finite, logF, 0.0).sum(axis=0)   # sum of the finite log F_j per node
        self.Z = (~finite).sum(axis=0)                      # candidates with F_j == 0 per node


class LeaderBelief:
    """``P_L = integral f_L(x) prod_{j != L} F_j(x) dx`` for the leader L, cached across calls.

    The stopping rule of FIESTA only needs the P(best) of the candidate with the highest
    posterior location (for a confidence above 1/2 no other candidate can reach it, see
    :func:`certa.strategies._posterior.p_best_upper_bound`), and between two evaluations only the
    candidate just told changes. The integral is taken on the leader's support
    ``[q(1e-10), q(1 - 1e-9)]`` by 8-point Gauss-Legendre on *dyadic* panels (aligned
    intervals of width ``2^e``), refined by the rule of :func:`~certa.strategies._posterior.p_best`: near a candidate of
    scale ``s`` panels are at most ``2^floor(log2 s)`` wide, and at distance ``d`` at most
    ``d / 2`` (geometric growth in the tails); a rival refines only panels where the leader's
    mass exceeds 1e-10. Because panels are aligned, a panel keeps its nodes when the leader
    moves a little, so each panel's ``log F_j`` rows are cached and only the rows of
    candidates whose posterior changed are recomputed; the sum over candidates is updated
    in place. The upper tail beyond the last panel is the midpoint of its bounds, as in
    :func:`p_best`. Measured against :func:`p_best` to below 1e-8 (tests: 1e-6).

    Examples
    --------
    >>> from certa.strategies._posterior import p_best
    >>> loc, scale, df = np.array([1.0, 0.0, 0.5]), np.ones(3), np.full(3, 5.0)
    >>> bool(abs(LeaderBelief()(loc, scale, df, 0) - p_best(loc, scale, df)[0]) < 1e-6)
    True
    """

    def __init__(self, max_leaders: int = 4) -> None:
        self._states: dict[int, _LeaderState] = {}
        self._max_leaders = max_leaders
        self._partitions: dict[tuple, list[tuple[int, int]]] = {}

    @staticmethod
    def _nodes(keys: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
        """Gauss-Legendre nodes and weights of the panels; a ``("tail", b)`` key is b (weight 0)."""
        x = np.empty((len(keys), _GL_ORDER))
        w = np.zeros((len(keys), _GL_ORDER))
        panels = [i for i, key in enumerate(keys) if key[0] != "tail"]
        e = np.array([keys[i][0] for i in panels], dtype=float)
        k = np.array([keys[i][1] for i in panels], dtype=float)
        half = 0.5 * np.exp2(e)
        x[panels] = ((2.0 * k + 1.0) * half)[:, None] + half[:, None] * _GL_X
        w[panels] = half[:, None] * _GL_W
        for i, key in enumerate(keys):
            if key[0] == "tail":
                x[i] = key[1]
        return x.ravel(), w.ravel()

    def _state(self, loc, scale, df, leader: int, keys: list[tuple[int, int]]) -> _LeaderState:
        st = self._states.get(leader)
        params = (loc.copy(), scale.copy(), df.copy())
        if st is not None and st.params[0].size != loc.size:
            st = None
        if st is not None:
            old_loc, old_scale, old_df = st.params
            changed = np.flatnonzero((old_loc != loc) | (old_scale != scale) | (old_df != df))
            if changed.size:   # only the candidates told since: their rows on the kept nodes
                old = st.logF[changed]
                new = _log_cdf_rows(st.x, loc[changed], scale[changed], df[changed])
                fo, fn = np.isfinite(old), np.isfinite(new)
                st.S += np.where(fn, new, 0.0).sum(axis=0) - np.where(fo, old, 0.0).sum(axis=0)
                st.Z += (~fn).sum(axis=0) - (~fo).sum(axis=0)
                st.logF[changed] = new
            st.params = params
            if st.keys == keys:
                return st
            # the panels changed (the leader moved or narrowed): keep the columns of the
            # panels still in use, compute the new panels' columns for every candidate
            where = {key: i for i, key in enumerate(st.keys)}
            x, w = self._nodes(keys)
            n = _GL_ORDER
            logF = np.empty((loc.size, x.size))
            S, Z = np.empty(x.size), np.empty(x.size, dtype=np.int64)
            fresh = [i for i, key in enumerate(keys) if key not in where]
            kept = [(i, where[key]) for i, key in enumerate(keys) if key in where]
            if kept:
                dst = np.concatenate([np.arange(i * n, (i + 1) * n) for i, _ in kept])
                src = np.concatenate([np.arange(j * n, (j + 1) * n) for _, j in kept])
                logF[:, dst], S[dst], Z[dst] = st.logF[:, src], st.S[src], st.Z[src]
            if fresh:
                cols = np.concatenate([np.arange(i * n, (i + 1) * n) for i in fresh])
                part = _LeaderState(None, None, None, _log_cdf_rows(x[cols], loc, scale, df), None)
                logF[:, cols], S[cols], Z[cols] = part.logF, part.S, part.Z
            st.keys, st.x, st.w, st.logF, st.S, st.Z = keys, x, w, logF, S, Z
            return st
        x, w = self._nodes(keys)
        st = _LeaderState(keys, x, w, _log_cdf_rows(x, loc, scale, df), params)
        if len(self._states) >= self._max_leaders:
            self._states.pop(next(iter(self._states)))
        self._states[leader] = st
        return st

    # -- the partition ------------------------------------------------------------------
    @staticmethod
    def _range(lo: float, hi: float, centre: float, unit: float) -> tuple[float, float]:
        """``[lo, hi]`` widened to multiples of a power of two about a quarter of their distance
        from the centre, so that the range (and the panels) stay put while the leader moves a little."""
        def snap(x: float, down: bool) -> float:
            step = 2.0 ** math.floor(math.log2(max(unit, 0.25 * abs(x - centre))))
            return (math.floor(x / step) if down else math.ceil(x / step)) * step
        return snap(lo, True), snap(hi, False)

    def _partition(self, loc, scale, df, leader: int) -> list[tuple[int, int]]:
        """Dyadic panels ``(e, k)`` = ``[k 2^e, (k + 1) 2^e]`` covering the leader's support."""
        sL, dL = float(scale[leader]), float(df[leader])
        # every candidate's unit (a power of two <= its scale) and anchor (its loc rounded
        # to the unit, so that small moves of loc do not change the panels)
        e_all = np.floor(np.log2(scale))
        unit = np.exp2(e_all)
        anchor = np.round(loc / unit) * unit
        lo, hi = self._range(float(loc[leader]) + sL * _t_quantile(dL, _LEADER_LOW),
                             float(loc[leader]) - sL * _t_quantile(dL, _LEADER_HIGH),
                             float(anchor[leader]), float(unit[leader]))
        # A rival refines only if its unit is below the width the leader alone allows at its
        # anchor (wider rivals are resolved by the leader's panels), and only where its rule is
        # the finer one: from its anchor outwards and half way towards the leader; that region
        # must reach into the leader's range (elsewhere the leader's mass is below 1e-10).
        uL, aL = float(unit[leader]), float(anchor[leader])
        reach = np.maximum(uL, 0.5 * np.maximum(0.0, np.abs(anchor - aL) - 2 * uL))
        mid = 0.5 * (anchor + aL)
        near = (unit < reach) & (mid + unit + uL > lo) & (mid - unit - uL < hi)
        near[leader] = False
        idx = np.flatnonzero(near)
        idx = np.sort(np.append(idx, leader))
        # The panels depend on the leader's exact posterior only through the range (snapped) and
        # the mass test, which uses a widened leader (anchor, twice its unit, df rounded down to a
        # power of 2: heavier tails); so they are cached by these few numbers and the rivals' units.
        df_b = 2.0 ** math.floor(math.log2(max(dL, 1.0)))
        key = (leader, float(e_all[leader]), aL, df_b, lo, hi, idx.tobytes(), e_all[idx].tobytes(),
               anchor[idx].tobytes())
        hit = self._partitions.get(key)
        if hit is not None:
            return hit
        is_leader = idx == leader
        u_r, a_r, lvl_min = unit[idx], anchor[idx], float(e_all[idx].min())
        E = int(np.ceil(np.log2(hi - lo)))
        width = 2.0 ** E
        ks = np.arange(np.floor(lo / width), np.floor(hi / width) + 1)
        e = E
        out: list[tuple[int, int]] = []
        while ks.size:
            width = 2.0 ** e
            x0, x1 = ks * width, (ks + 1) * width
            keep = (x1 > lo) & (x0 < hi)
            ks, x0, x1 = ks[keep], x0[keep], x1[keep]
            if e <= lvl_min:
                out += [(e, int(k)) for k in ks]
                break
            dist = np.maximum(0.0, np.maximum(a_r[None, :] - x1[:, None], x0[:, None] - a_r[None, :])
                              - u_r[None, :])
            allowed = np.maximum(u_r[None, :], 0.5 * dist)
            if not is_leader.all():   # rivals only where the leader has mass
                F = stdtr(df_b, (np.stack([x0, x1]) - aL) / (2.0 * uL))
                heavy = (F[1] - F[0]) > _REFINE_MASS
                allowed[:, ~is_leader] = np.where(heavy[:, None], allowed[:, ~is_leader], np.inf)
            split = width > allowed.min(axis=1)
            out += [(e, int(k)) for k in ks[~split]]
            ks = np.concatenate([2 * ks[split], 2 * ks[split] + 1])
            e -= 1
        out.sort(key=lambda panel: panel[1] * 2.0 ** panel[0])
        if len(self._partitions) >= 64:
            self._partitions.pop(next(iter(self._partitions)))
        self._partitions[key] = out
        return out

    # -- the value ----------------------------------------------------------------------
    def __call__(self, loc: np.ndarray, scale: np.ndarray, df: np.ndarray, leader: int) -> float:
        if loc.size == 1:
            return 1.0
        keys = self._partition(loc, scale, df, leader)
        e, k = keys[-1]
        b = (k + 1) * 2.0 ** e
        keys = keys + [("tail", b)]
        st = self._state(loc, scale, df, leader, keys)
        n = st.x.size - _GL_ORDER   # the tail key's columns come last (its weights are unused)
        x, w, lf = st.x[:n], st.w[:n], st.logF[leader, :n]
        ok = np.isfinite(lf) & (st.Z[:n] == 0)
        z = (x[ok] - loc[leader]) / scale[leader]
        lnorm = float(_log_t_pdf_norm(df[leader:leader + 1], scale[leader:leader + 1])[0])
        logf = lnorm - 0.5 * (df[leader] + 1.0) * np.log1p(z * z / df[leader])
        total = float(np.dot(w[ok], np.exp(logf + st.S[:n][ok] - lf[ok])))
        # tail above b: between sf_L(b) prod_{j != L} F_j(b) and sf_L(b); the midpoint
        lb = st.logF[leader, n]
        others = 0.0 if (st.Z[n] > 0 or not np.isfinite(lb)) else float(np.exp(st.S[n] - lb))
        sf = float(stdtr(df[leader], -(b - loc[leader]) / scale[leader]))
        return total + 0.5 * sf * (1.0 + others)

