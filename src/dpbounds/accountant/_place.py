"""Placing loss cells with known P- and Q-masses on a loss lattice (private).

A cell is a set of atoms of the privacy-loss pair whose losses lie in [la, lb]; the law gives its
P-mass p and its Q-mass q (both with an absolute error of at most ``e``).  Knowing q as well as
p is what makes the placement exact inside a lattice interval:

* upper PMF (connect-the-dots, as in "Connect the Dots: Tighter Discrete Approximations of Privacy
  Loss Distributions"): an atom of P-mass m at loss l in [t_j, t_{j+1}] is split into P-masses
  m (1 - w(l)) at t_j and m w(l) at t_{j+1}, w(l) = (e^{-t_j} - e^{-l}) / (e^{-t_j} - e^{-t_{j+1}}),
  which keeps its P- and Q-mass; the true pair is a post-processing (the merge) of the split pair,
  so every composition of the split pair dominates.  The split is linear in (P-mass, Q-mass), so
  the split of a whole cell inside [t_j, t_{j+1}] is exactly top = (p - q e^{t_j}) / (1 - e^{-Delta})
  at t_{j+1} and p - top at t_j: no first-order error from the cell's width at all.  With the
  masses' errors, top is raised by its error bound and kept in [p w(la), p w(lb)] (the range every
  cell with those loss bounds has).  A cell that straddles a lattice point keeps the bound-based
  split with its upper loss (:func:`dpbounds.accountant._lattice.place_upper`).
* lower PMF (balanced merging, as :func:`dpbounds.accountant._lattice.place_lower`): interval j's
  cells send a fraction alpha_j up to t_{j+1} and merge it with the part of interval j + 1 moved
  down, feasible when alpha_j C_j <= (1 - alpha_{j+1}) S_{j+1}, S_j = e^{-t_j} P_j - Q_j (slack)
  and C_j = Q_j - e^{-t_{j+1}} P_j (excess).  Both need only the exact masses (P_j, Q_j) of the
  cells assigned to interval j (any assignment by the lower loss bound), so the per-cell bounds
  used are the better of the loss-bound ones and the mass ones (each a bound for the true masses).

Every error term is an upper bound given the per-cell mass errors ``e``, which the laws bound
(certified window tails) or estimate (FFT round-off, grid error) as their own error terms.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpbounds.accountant._lattice import balance, place_upper

FArr = NDArray[np.float64]
IArr = NDArray[np.int64]

__all__ = ["place_cells", "place_aligned"]

_ULP = 4.5e-16   # relative slack on computed losses (as in _lattice)
_REL = 1e-12     # relative slack on the computed split fractions and slacks
_T_MAX = 600.0   # e^{t} for t above this is not formed (such cells keep the bound-based split)


def _add(a: tuple[int, FArr], b: tuple[int, FArr]) -> tuple[int, FArr]:
    """The sum of two lattice PMFs (jmin, pmf)."""
    (ja, pa), (jb, pb) = a, b
    if pa.size == 0:
        return b
    if pb.size == 0:
        return a
    j0 = min(ja, jb)
    n = max(ja + pa.size, jb + pb.size) - j0
    out = np.zeros(n)
    out[ja - j0:ja - j0 + pa.size] += pa
    out[jb - j0:jb - j0 + pb.size] += pb
    return j0, out


def _split_up(j: IArr, p: FArr, q: FArr, e: FArr, w_lo: FArr, w_hi: FArr,
              delta_l: float) -> tuple[int, FArr]:
    """Upper PMF of cells inside [t_j, t_{j+1}]: the exact split, raised by its error bound."""
    t = j.astype(float) * delta_l
    et = np.exp(t)
    d = -math.expm1(-delta_l)
    qe = q * et
    top = (p - qe) / d
    unc = (e * (1.0 + et) + _REL * (p + qe)) / d
    top = np.minimum(np.maximum(top + unc, p * w_lo), p * w_hi)
    jmin = int(j.min())
    n = int(j.max()) - jmin + 2
    ji = j - jmin
    pmf = np.bincount(ji + 1, weights=top, minlength=n)
    pmf += np.bincount(ji, weights=p - top, minlength=n)
    return jmin, np.asarray(pmf, dtype=np.float64)


def _balance(ji: IArr, jmin: int, p: FArr, s: FArr, c: FArr, delta_l: float) -> tuple[int, FArr]:
    """Lower PMF from per-cell P-masses ``p``, slacks ``s`` (lower bounds of e^{t_j} S, >= 0 is
    not required) and excesses ``c`` (upper bounds of e^{t_j} C), cells assigned to ``ji``
    (0-based from ``jmin``): the fractions alpha of :func:`dpbounds.accountant._lattice.place_lower`."""
    n = int(ji.max()) + 2
    P = np.bincount(ji, weights=p, minlength=n)
    S = np.maximum(np.bincount(ji, weights=s, minlength=n), 0.0)
    C = np.maximum(np.bincount(ji, weights=c, minlength=n), 0.0)
    return jmin, balance(P, S, C, delta_l)


def place_cells(la: FArr, lb: FArr, p: FArr, q: FArr, e: FArr | float, delta_l: float,
                extra_up: list[tuple[float, float]] | None = None) -> tuple[int, FArr, int, FArr]:
    """``(jmin_up, pmf_up, jmin_dn, pmf_dn)`` for cells with loss bounds ``[la, lb]`` (finite),
    P-masses ``p`` and Q-masses ``q`` (>= 0, each within ``e`` of the true mass).

    ``extra_up``: (loss upper bound, P-mass) pairs placed on the upper PMF only (mass outside the
    law's window, whose loss bound is all that is known).  The caller adds sum(e) to the upper
    side's mass at +inf and subtracts it from the lower side (the masses' own error)."""
    la = np.asarray(la, dtype=float)
    lb = np.asarray(lb, dtype=float)
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    e = np.broadcast_to(np.asarray(e, dtype=float), p.shape)
    lo_c = la - _ULP * (1.0 + np.abs(la))
    hi_c = lb + _ULP * (1.0 + np.abs(lb))
    j = np.floor(lo_c / delta_l)
    u = lo_c - j * delta_l - _ULP * (1.0 + np.abs(lo_c))  # la - t_j, lowered by the rounding slack
    neg = u < 0.0
    j[neg] -= 1.0
    u[neg] += delta_l
    np.clip(u, 0.0, delta_l, out=u)
    t = j * delta_l
    small = t <= _T_MAX
    # inside [t_j, t_{j+1}]: the upper loss (raised) below t_{j+1} (lowered by the slack)
    t1 = (j + 1.0) * delta_l
    inside = small & (hi_c <= t1 - _ULP * (1.0 + np.abs(t1))) & (p > 0.0)
    d = math.expm1(-delta_l)
    # ---- upper PMF
    ji = j.astype(np.int64)
    parts: list[tuple[int, FArr]] = []
    if np.any(inside):
        ii = np.nonzero(inside)[0]
        w_lo = np.maximum(np.expm1(-u[ii]) / d * (1.0 - _REL), 0.0)
        r_hi = np.minimum(hi_c[ii] - t[ii] + _ULP * (1.0 + np.abs(hi_c[ii])), delta_l)
        w_hi = np.minimum(np.expm1(-r_hi) / d * (1.0 + _REL) + 1e-15, 1.0)
        parts.append(_split_up(ji[ii], p[ii], q[ii], e[ii], w_lo, w_hi, delta_l))
    rest = ~inside & (p > 0.0)
    hi_rest, p_rest = hi_c[rest], p[rest]
    if extra_up:
        hi_rest = np.concatenate([hi_rest, np.array([lv for lv, _ in extra_up])])
        p_rest = np.concatenate([p_rest, np.array([mv for _, mv in extra_up])])
    if p_rest.size:
        parts.append(place_upper(hi_rest, p_rest, delta_l))
    up = parts[0] if parts else (0, np.zeros(1))
    for part in parts[1:]:
        up = _add(up, part)
    # ---- lower PMF: cells assigned to the interval of their lower loss bound
    nz = p > 0.0
    if not np.any(nz):
        return up[0], up[1], 0, np.zeros(1)
    ji, u, p_, q_, e_, t_, sm = ji[nz], u[nz], p[nz], q[nz], e[nz], t[nz], small[nz]
    em = np.expm1(-u)
    s = -p_ * em - e_                     # p (1 - e^{-u}): the slack from the loss bound
    c = p_ * (em - d) + e_                # p (e^{-u} - e^{-Delta}): the excess from the loss bound
    if np.any(sm):
        et = np.exp(np.where(sm, t_, 0.0))
        qe = q_ * et
        unc = e_ * (1.0 + et) + _REL * (p_ + qe)
        s = np.where(sm, np.maximum(s, p_ - qe - unc), s)
        c = np.where(sm, np.minimum(c, qe - p_ * math.exp(-delta_l) + unc), c)
    jmin = int(ji.min())
    jd, pd = _balance(ji - jmin, jmin, p_, s, c, delta_l)
    return up[0], up[1], jd, pd


def place_aligned(j: IArr, p: FArr, q: FArr, e: FArr | float, delta_l: float) -> tuple[int, FArr, int, FArr]:
    """:func:`place_cells` for cells that are whole lattice intervals [t_j, t_{j+1}] (the caller's
    cells have these exact loss edges), P-masses ``p`` and Q-masses ``q`` within ``e``."""
    j = np.asarray(j, dtype=np.int64)
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    e = np.broadcast_to(np.asarray(e, dtype=float), p.shape)
    keep = p > 0.0
    j, p, q, e = j[keep], p[keep], q[keep], e[keep]
    if p.size == 0:
        return 0, np.zeros(1), 0, np.zeros(1)
    t = j.astype(float) * delta_l
    small = t <= _T_MAX
    parts: list[tuple[int, FArr]] = []
    if np.any(small):
        ones = np.ones(int(np.count_nonzero(small)))
        parts.append(_split_up(j[small], p[small], q[small], e[small], 0.0 * ones, ones, delta_l))
    if not np.all(small):  # everything at the top of its interval
        js = j[~small]
        jmin_s = int(js.min())
        parts.append((jmin_s + 1, np.bincount(js - jmin_s, weights=p[~small]).astype(np.float64)))
    up = parts[0]
    for part in parts[1:]:
        up = _add(up, part)
    d = math.expm1(-delta_l)
    s = -e
    c = p * (1.0 - math.exp(-delta_l)) + e  # p (e^{0} - e^{-Delta}) + e: the loss-bound excess
    if np.any(small):
        et = np.exp(np.where(small, t, 0.0))
        qe = q * et
        unc = e * (1.0 + et) + _REL * (p + qe)
        s = np.where(small, np.maximum(s, p - qe - unc), s)
        c = np.where(small, np.minimum(c, qe - p * math.exp(-delta_l) + unc), c)
    del d
    jmin = int(j.min())
    jd, pd = _balance(j - jmin, jmin, p, s, c, delta_l)
    return up[0], up[1], jd, pd
