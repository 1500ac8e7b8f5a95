"""One step of the Poisson-subsampled Gaussian on a loss lattice (private; for :mod:`._poisson_pld`).

The x line is cut into cells whose remove-direction loss spans one lattice step; each cell's
masses under the two hypotheses are placed on the lattice, the tails beyond the outermost cells
counted separately.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpbounds._ufuncs import ndtr as _ndtr  # type: ignore[import-not-found, unused-ignore]
from dpbounds.accountant._lattice import WindowTooLarge

FArr = NDArray[np.float64]

__all__ = ["StepCells", "remove_loss", "normal_cells", "tilt_q", "z_tail"]

_MAX_GAP = 1 << 22  # longest run of empty lattice points kept inside a single-step PMF


# ---------------------------------------------------------------------------------------
# single step: cells of the x line whose remove-direction loss spans one lattice step
# ---------------------------------------------------------------------------------------
def remove_loss(sigma: float, q: float, x: float) -> float:
    """Remove-direction loss L(x) = log(1 - q + q e^{(2x - 1)/(2 sigma^2)})."""
    z = (2.0 * x - 1.0) / (2.0 * sigma * sigma)
    if q == 1.0:
        return z
    t = q * math.expm1(z) if z < 700.0 else math.inf
    if t < 1e300:  # (z + log(q + (1 - q) e^{-z}) would cancel where q e^z is small)
        return math.log1p(t)
    return z + math.log(q + (1.0 - q) * math.exp(-z))


def normal_cells(u: FArr) -> tuple[FArr, float, float]:
    """Standard-normal masses of the cells [u_k, u_{k+1}), the mass below u_0 and above u_n.

    Every mass is a difference of ``ndtr`` values on the side where it does not cancel
    (left of 0: Phi(b) - Phi(a); right of 0: Phi(-a) - Phi(-b)), so each CDF value is
    accurate to a few ulp relative and the masses telescope.
    """
    t = _ndtr(-np.abs(u))  # the smaller tail at each edge: Phi(u) left of 0, Phi(-u) right of it
    m = np.where(u[1:] <= 0.0, t[1:] - t[:-1], t[:-1] - t[1:])
    mid = np.flatnonzero((u[:-1] < 0.0) & (u[1:] > 0.0))  # the cell around 0: 1 - both tails
    m[mid] = 1.0 - t[mid] - t[mid + 1]
    np.maximum(m, 0.0, out=m)
    bot = float(t[0]) if u[0] <= 0.0 else 1.0 - float(t[0])
    top = float(t[-1]) if u[-1] >= 0.0 else 1.0 - float(t[-1])
    return m, bot, top


def z_tail(p: float) -> float:
    """z with Phi(-z) <= p (bisection on ndtr)."""
    lo, hi = 0.0, 40.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if float(_ndtr(-mid)) > p:
            lo = mid
        else:
            hi = mid
    return hi


class StepCells:
    """One Poisson-subsampled Gaussian step on the loss lattice ``h Z``: lattice PMFs.

    Cell ``k`` (``k_lo <= k < k_hi``) is ``[x_k, x_{k+1})`` with ``x_k = L^{-1}(k h)``, so the
    remove-direction loss L lies in ``[k h, (k + 1) h]`` on it (``x_k = -inf`` where
    ``k h <= log(1 - q)``); ``a0``/``a1`` are its N(0, s^2)/N(1, s^2) masses.  The add
    direction (loss -L(x) under N(0, s^2)) uses the same cells mirrored.
    """

    def __init__(self, sigma: float, q: float, h: float, tail: float, max_points: int):
        self.sigma, self.q, self.h = sigma, q, h
        self.max_gap = min(_MAX_GAP, max_points // 4)
        z = z_tail(tail)
        k_lo = math.floor(remove_loss(sigma, q, -z * sigma) / h)
        # (losses above 700 -- sigma below ~0.03 -- are left to the top tail: e^{k h} stays finite)
        self.k_hi = min(math.ceil(remove_loss(sigma, q, 1.0 + z * sigma) / h), math.floor(700.0 / h))
        self.log1mq = math.log1p(-q) if q < 1.0 else -math.inf
        if q < 1.0 and k_lo - self.log1mq / h < self.max_gap:
            # cover the loss down to its infimum log(1 - q): no lower tail at all
            k_lo = math.floor(self.log1mq / h)
        if self.k_hi - k_lo + 1 > max_points:  # refused before anything is allocated
            raise WindowTooLarge(self.k_hi - k_lo + 1)
        self.k_lo = k_lo
        lk = np.arange(k_lo, self.k_hi + 1, dtype=np.float64) * h
        # c_k = e^{k h} - 1 + q = q e^{z(x_k)}; the edge is x_k = s^2 log(c_k / q) + 1/2
        self.c = np.expm1(lk) + q
        pos = self.c > 0.0
        x = np.full(lk.shape, -np.inf)
        x[pos] = sigma * sigma * (np.log(self.c[pos]) - math.log(q)) + 0.5
        self.a0, self.bot0, self.top0 = normal_cells(x / sigma)
        self.a1, self.bot1, self.top1 = normal_cells((x - 1.0) / sigma)

    def remove(self) -> tuple[tuple[int, FArr, float], tuple[int, FArr, FArr, float]]:
        """((jmin, connect-the-dots PMF, mass at +inf), (jmin, cell P masses, tilted Q masses, c)).

        The tilted Q mass of the cell at lattice index j is ``Q e^{(j + c) h}``, with c chosen so
        that the tilted masses sum to 1 (c ~ 1/2 on fine lattices).
        """
        q, h, c = self.q, self.h, self.c
        a0, a1 = self.a0, self.a1
        p = q * a1 if q == 1.0 else (1.0 - q) * a0 + q * a1
        # split of cell k between k h and (k + 1) h keeping its P and Q masses:
        # upper weight (p - a0 e^{k h}) / (1 - e^{-h}), with p - a0 e^{k h} = q a1 - a0 c_k
        wb = np.clip((q * a1 - a0 * c[:-1]) / -math.expm1(-h), 0.0, p)
        up = np.zeros(p.size + 1)
        up[:-1] += p - wb
        up[1:] += wb
        # below x_{k_lo}: loss in [log(1 - q), k_lo h] -> up to k_lo; above x_{k_hi}: +inf
        up[0] += (1.0 - q) * self.bot0 + q * self.bot1
        inf = (1.0 - q) * self.top0 + q * self.top1
        # lower pair: the masses beyond the cells are merged into the outermost cells (any
        # merging is a post-processing), not dropped
        pl, ql = self._merged_tails(p, a0, (1.0 - q) * self.bot0 + q * self.bot1, self.bot0, inf, self.top0)
        k = np.arange(self.k_lo, self.k_hi, dtype=np.float64)
        r, cc = tilt_q(ql, k, h)
        return (self.k_lo, up, inf), (self.k_lo, pl, r, cc)

    @staticmethod
    def _merged_tails(p: FArr, qm: FArr, p_bot: float, q_bot: float, p_top: float,
                      q_top: float) -> tuple[FArr, FArr]:
        pl, ql = p.copy(), qm.copy()
        pl[0] += p_bot
        ql[0] += q_bot
        pl[-1] += p_top
        ql[-1] += q_top
        return pl, ql

    def add(self) -> tuple[tuple[int, FArr, float], tuple[int, FArr, FArr, float]]:
        """As :meth:`remove` for the add direction: loss -L(x) under N(0, s^2)."""
        q, h, c = self.q, self.h, self.c
        a0, a1 = self.a0, self.a1
        p = q * a1 if q == 1.0 else (1.0 - q) * a0 + q * a1
        n = a0.size
        k = np.arange(self.k_lo, self.k_hi, dtype=np.float64)
        # cell k: loss in [-(k + 1) h, -k h], P mass a0, Q mass p; upper weight (at -k h)
        # (a0 - p e^{-(k+1) h}) / (1 - e^{-h}) with a0 e^{(k+1) h} - p = a0 c_{k+1} - q a1
        wb = np.clip(np.exp(-(k + 1.0) * h) * (a0 * c[1:] - q * a1) / -math.expm1(-h), 0.0, a0)
        # lattice index j = -k_hi + i, i = 0 .. n; cell k sits at i = n - 1 - (k - k_lo) (+1)
        extra = 0
        inf = 0.0
        jtop = -self.k_lo
        bot = self.bot0  # N(0, s^2) mass below x_{k_lo}: loss in [-k_lo h, -log(1 - q)]
        if bot > 0.0:
            jb = math.ceil(-self.log1mq / h) if q < 1.0 else math.inf
            if jb - jtop <= self.max_gap:
                extra = max(int(jb) - jtop, 0)
            else:
                inf = bot
        up = np.zeros(n + 1 + extra)
        up[n - 1::-1] += a0 - wb
        up[n:0:-1] += wb
        up[0] += self.top0  # above x_{k_hi}: loss <= -k_hi h
        if bot > 0.0 and inf == 0.0:
            up[n + extra] += bot
        # lower pair (P = N(0, s^2), Q = mixture), the masses beyond the cells merged in
        pl, ql = self._merged_tails(a0, p, self.bot0, (1.0 - q) * self.bot0 + q * self.bot1,
                                    self.top0, (1.0 - q) * self.top0 + q * self.top1)
        r, cc = tilt_q(ql[::-1], -(k[::-1] + 1.0), h)
        return (-self.k_hi, up, inf), (-self.k_hi, pl[::-1].copy(), r, cc)


def tilt_q(qm: FArr, j: FArr, h: float) -> tuple[FArr, float]:
    """Q masses at lattice indices j tilted by e^{(j + c) h}, c such that they sum to 1; (masses, c)."""
    with np.errstate(divide="ignore"):
        lw = np.log(qm) + j * h
    m = float(np.max(lw))
    if not math.isfinite(m):  # no Q mass at all (every cell's underflowed)
        return np.zeros(qm.size), 0.0
    r = np.exp(lw - m)
    tot = float(r.sum())
    r /= tot
    return r, -(m + math.log(tot)) / h
