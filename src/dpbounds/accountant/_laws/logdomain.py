"""Law of log S, S a sum of M i.i.d. lognormals, on a uniform grid (private).

The small-sigma path of the exact accountant.  At sigma ~ 0.3 a per-round likelihood ratio
Y = exp(X/sigma - 1/(2 sigma^2)) spans tens of decades (log-scale 1/sigma = 3.3), so for small M
neither a linear grid nor a Fourier series (the characteristic function barely decays) resolves
S = Y_1 + ... + Y_M.  U = log S is smooth and unimodal-ish on a uniform grid, and
log(X + Z) has an exact integral representation in the log densities of X and Z
(``csrc/dpb_logsum.h``); S_M is built from the exact Gaussian density of log Y by binary
powering (about log2 M + popcount M convolutions, each O(n J) in C).

Everything the accountant needs follows from the H0 density q of U (H1 is its size-biased
version: P1[U in du] = e^u q(u) du / M):

* P0[U > x] and P1[U <= x] (trade-off curve), by a sliding 8-point Newton-Cotes rule per cell
  and the integrated interpolant inside the cell that holds x;
* delta(eps) for both directions as integrals of non-negative integrands
  ``(e^u/M - e^eps)^+ q`` and ``(1 - e^(eps + u)/M)^+ q`` (no cancellation between CDFs).

Error estimate: every answer is also computed on a grid of twice the step (same range); the
method is of high order (8-point interpolation, 8th-order Gregory end correction), so the
difference overestimates the fine-grid error by orders of magnitude.  It is an *estimate*, not
a proof; the mass defects |int q - 1| and |int e^u q / M - 1| are added to it.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbounds._kernels import logsum_convolve  # type: ignore[import-not-found, unused-ignore]
from dpbounds.accountant._cache import memoize
from dpbounds.accountant._laws.interface import LatticePMFs, SingleEpochLaw
from dpbounds.accountant._place import place_aligned, place_cells

FArr = NDArray[np.float64]

__all__ = ["LogDomainSum", "LogDomainLaw"]

_LN2 = math.log(2.0)
_TAPS = 8           # Lagrange nodes of the near-part interpolation and of the cell rule
_GREGORY = 8        # order of the end correction at d = ln 2
_FAR_G = 2e-6       # g(d) below which the second-order expansion is used (error ~ g^3 ~ 1e-17)
_TAIL_SD = 11.0     # grid half-width in units of the log-scale (Gaussian tail 2e-28)
_MAX_CELLS = 2 ** 20  # loss cells of one lattice_pmfs call (8 MiB per mass array), as the Fourier law
_NODES = np.arange(-(_TAPS // 2 - 1), _TAPS // 2 + 1)  # stencil offsets -3 .. 4 around a cell's left node


@functools.lru_cache(maxsize=None)
def _gregory_weights(p: int) -> tuple[float, ...]:
    """Trapezoid weights on [0, inf) with the order-p Gregory correction at 0 (exact rationals)."""
    g = [Fraction(1, 12), Fraction(1, 24), Fraction(19, 720), Fraction(3, 160), Fraction(863, 60480),
         Fraction(275, 24192), Fraction(33953, 3628800), Fraction(8183, 1036800)]
    w = [Fraction(1)] * (p + 1)
    w[0] = Fraction(1, 2)
    for k in range(1, p + 1):
        c = (-1) ** (k + 1) * g[k - 1]
        for j in range(k + 1):
            w[j] += c * (-1) ** (k - j) * math.comb(k, j)
    return tuple(float(x) for x in w)


def _lagrange_weights(x: FArr, nodes: FArr) -> FArr:
    """Lagrange basis values at points x (rows) for the given nodes (columns)."""
    x = np.asarray(x, dtype=float)[:, None]
    out = np.ones((x.shape[0], nodes.size))
    for k in range(nodes.size):
        for m in range(nodes.size):
            if m != k:
                out[:, k] *= (x[:, 0] - nodes[m]) / (nodes[k] - nodes[m])
    return out


@memoize("log-domain near tables")
def _near_tables(K: int) -> tuple[FArr, FArr, FArr, float, float]:
    """Interpolation offsets/weights and quadrature coefficients for h = ln2 / K."""
    h = _LN2 / K
    # d_j = ln2 + j h for j < J1 (until g(d) <= _FAR_G)
    d_far = -math.log(-math.expm1(-_FAR_G))
    J1 = int(math.ceil((d_far - _LN2) / h))
    d = _LN2 + h * np.arange(J1)
    g = -np.log1p(-np.exp(-d))
    c = 1.0 / (-np.expm1(-d))
    omega = np.ones(J1)
    gw = _gregory_weights(_GREGORY)
    omega[:len(gw)] = gw
    # q_X(u_i - g_j): position p = i - g_j/h; nodes floor(p) - taps/2 + 1 ... floor(p) + taps/2
    pos = -g / h
    fl = np.floor(pos)
    off = (fl - (_TAPS // 2 - 1)).astype(np.int64)
    frac = pos - fl
    nodes = _NODES.astype(float)
    # one vectorised evaluation (the same element-wise operations as row by row, so the same
    # bits): the row-by-row loop was most of the build time of the small-sigma law (1-2.6 s)
    w = _lagrange_weights(frac, nodes)
    coef = h * omega * c
    tail_scale = math.exp(-(_LN2 + J1 * h))
    return off, w, coef, tail_scale, h


@functools.lru_cache(maxsize=1)
def _cell_rules() -> tuple[FArr, FArr]:
    """8-point rules: integral over [0, 1] (cell) of the interpolant through nodes -3..4 (in units h)."""
    nodes = _NODES.astype(float)
    gx, gw = np.polynomial.legendre.leggauss(_TAPS)
    x = 0.5 * (gx + 1.0)
    full = (0.5 * gw) @ _lagrange_weights(x, nodes)
    return nodes, full


def _partial_rule(phi: FArr) -> FArr:
    """Weights (rows) of int_0^phi of the interpolant through nodes -3..4, phi in [0, 1]."""
    nodes, _ = _cell_rules()
    gx, gw = np.polynomial.legendre.leggauss(_TAPS)
    phi = np.asarray(phi, dtype=float)
    x = 0.5 * (gx[None, :] + 1.0) * phi[:, None]           # (P, G)
    L = _lagrange_weights(x.ravel(), nodes).reshape(phi.size, gx.size, nodes.size)
    return np.asarray(np.einsum('pg,pgk->pk', 0.5 * gw[None, :] * phi[:, None], L), dtype=np.float64)


class LogDomainSum:
    """Density of U = log S_M under H0 on the grid u = u0 + h * arange(n), h = ln2 / K."""

    def __init__(self, sigma: float, M: int, K: int, u0: float, n: int):
        self.sigma, self.M, self.K, self.u0, self.n = float(sigma), int(M), int(K), float(u0), int(n)
        off, w, coef, tail, h = _near_tables(self.K)
        self.h = h
        self.u = self.u0 + h * np.arange(self.n)
        s = 1.0 / sigma
        m = -0.5 * s * s
        base = np.exp(-0.5 * ((self.u - m) / s) ** 2) / (s * math.sqrt(2 * math.pi))
        self.convolutions = 0
        acc: FArr | None = None
        k = self.M
        while True:
            if k & 1:
                acc = base if acc is None else self._conv(acc, base, off, w, coef, tail)
            k >>= 1
            if not k:
                break
            base = self._conv(base, base, off, w, coef, tail)
        assert acc is not None
        self.q = np.asarray(acc, dtype=np.float64)
        # cell integrals of q and of e^{u - log M} q (H1): sliding 8-point rule
        full = _cell_rules()[1]
        self._lw = np.exp(self.u - math.log(self.M))
        self.c0 = self._cells(self.q, full)
        self.c1 = self._cells(self.q * self._lw, full)
        self.mass_defect = abs(float(np.sum(self.c0)) - 1.0) + abs(float(np.sum(self.c1)) - 1.0)
        # cumulative: cdf[i] = int_{-inf}^{u_i}, sf[i] = int_{u_i}^{inf} (summed from the far end)
        self.cdf0 = np.concatenate([[0.0], np.cumsum(self.c0)])[:-1]
        self.sf0 = np.cumsum(self.c0[::-1])[::-1]
        self.cdf1 = np.concatenate([[0.0], np.cumsum(self.c1)])[:-1]
        self.sf1 = np.cumsum(self.c1[::-1])[::-1]

    def _conv(self, a: FArr, b: FArr, off: FArr, w: FArr, coef: FArr, tail: float) -> FArr:
        self.convolutions += 1
        out = logsum_convolve(a, a if b is a else b, self.h, self.K, off, w, coef, tail)
        return np.asarray(out, dtype=np.float64)

    def _cells(self, f: FArr, full: FArr) -> FArr:
        pad = np.concatenate([np.zeros(_TAPS), f, np.zeros(_TAPS)])
        lo = _TAPS - (_TAPS // 2 - 1)
        out = np.zeros(self.n)
        for t in range(_TAPS):
            out += full[t] * pad[lo + t: lo + t + self.n]
        return out * self.h

    def _stencil(self, f: FArr, i: NDArray[np.intp]) -> FArr:
        """f at nodes i-3 .. i+4 (zero off the grid), shape (len(i), taps)."""
        idx = i[:, None] + _NODES[None, :]
        ok = (idx >= 0) & (idx < self.n)
        return np.where(ok, f[np.clip(idx, 0, self.n - 1)], 0.0)

    def _split(self, x: FArr) -> tuple[NDArray[np.intp], FArr]:
        t = (np.asarray(x, dtype=float) - self.u0) / self.h
        i = np.clip(np.floor(t), 0, self.n - 1).astype(np.intp)
        phi = np.clip(t - i, 0.0, 1.0)
        return i, phi

    def partial(self, f: FArr, x: FArr) -> FArr:
        """int_{u_i}^{x} f for x in cell i (vectorised)."""
        x = np.asarray(x, dtype=float)
        out = np.empty(x.size)
        for b in range(0, x.size, 8192):  # blocks keep the (points, nodes, nodes) temporaries small
            i, phi = self._split(x[b:b + 8192])
            out[b:b + 8192] = np.einsum('pk,pk->p', _partial_rule(phi), self._stencil(f, i))
        return out * self.h

    # ---- distribution functions of U (x in log-space) --------------------------------
    def sf0_at(self, x: Any) -> FArr:
        x = np.atleast_1d(np.asarray(x, dtype=float))
        i, _ = self._split(x)
        return np.asarray(self.sf0[i] - self.partial(self.q, x), dtype=np.float64)

    def cdf0_at(self, x: Any) -> FArr:
        x = np.atleast_1d(np.asarray(x, dtype=float))
        i, _ = self._split(x)
        return np.asarray(self.cdf0[i] + self.partial(self.q, x), dtype=np.float64)

    def cdf1_at(self, x: Any) -> FArr:
        x = np.atleast_1d(np.asarray(x, dtype=float))
        i, _ = self._split(x)
        return np.asarray(self.cdf1[i] + self.partial(self.q * self._lw, x), dtype=np.float64)

    def quantile_sf0(self, a: FArr) -> FArr:
        """x with P0[U > x] = a (0 < a < 1), by bisection inside the grid cell."""
        a = np.asarray(a, dtype=float)
        # sf0 is non-increasing in i (up to round-off)
        sf = np.minimum.accumulate(self.sf0)
        k = np.searchsorted(-sf, -a, side="left")  # first i with sf[i] <= a
        k = np.clip(k, 1, self.n - 1)
        lo = self.u[k - 1].copy()
        hi = self.u[k].copy()
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            big = self.sf0_at(mid) > a
            lo = np.where(big, mid, lo)
            hi = np.where(big, hi, mid)
        return 0.5 * (lo + hi)

    def delta_remove(self, eps: float) -> float:
        """P1[L > eps] - e^eps P0[L > eps] = int (e^u/M - e^eps)^+ q(u) du."""
        L = math.log(self.M) + eps
        f = self.q * (self._lw - math.exp(eps))
        i, _ = self._split(np.array([L]))
        if L <= self.u0:
            return float(np.sum(self.c1) - math.exp(eps) * np.sum(self.c0))
        tail = self._cells(f, _cell_rules()[1])
        return float(np.sum(tail[i[0]:]) - self.partial(f, np.array([L]))[0])

    def delta_add(self, eps: float) -> float:
        """P0[L < -eps] - e^eps P1[L < -eps] = int (1 - e^(eps + u)/M)^+ q(u) du."""
        L = math.log(self.M) - eps
        f = self.q * (1.0 - math.exp(eps) * self._lw)
        i, _ = self._split(np.array([L]))
        head = self._cells(f, _cell_rules()[1])
        return float(np.sum(head[:i[0]]) + self.partial(f, np.array([L]))[0])


def grid_for(sigma: float, M: int, h_max: float) -> tuple[int, float, int]:
    """(K, u0, n): step ln2/K <= h_max, range holding q0 and the size-biased q1 of S_M."""
    s = 1.0 / sigma
    m = -0.5 * s * s
    K = int(math.ceil(_LN2 / h_max))
    K += K % 2  # the half-resolution check uses K / 2
    h = _LN2 / K
    u0 = m - _TAIL_SD * s
    u1 = math.log(M) + m + s * s + _TAIL_SD * s
    n = int(math.ceil((u1 - u0) / h)) + 1
    n += n % 2
    return K, u0, n


class LogDomainLaw(SingleEpochLaw):
    """A fine and a half-resolution :class:`LogDomainSum`, with error estimates.

    Error estimate of an answer v: |v_fine - v_coarse| / 16 + d |v| + 1e-16, d the mass defect
    |int q - 1| + |int e^u q / M - 1| of the fine grid (a normalisation error, applied in
    proportion).  The scheme converges at order ~8 (measured: halving h cuts the error by
    300-500x at sigma = 0.3-0.7, M = 2 ... 1e4, in the bulk and in the tails alike), so
    |v_fine - v_coarse| is ~300x the fine error and the estimate keeps a margin of ~20x; tests
    check it against mpmath (M = 2), a grid of half the step, and the Fourier series
    (sigma >= 0.5).  An estimate, not a proof.
    """

    def __init__(self, sigma: float, M: int, h: float | None = None):
        self.sigma, self.M = float(sigma), int(M)
        if h is None:
            h = default_step(sigma, M)
        K, u0, n = grid_for(sigma, M, h)
        self.fine = LogDomainSum(sigma, M, K, u0, n)
        self.coarse = LogDomainSum(sigma, M, K // 2, u0, n // 2)
        self.defect = self.fine.mass_defect
        self.floor = 1e-16 + self.defect  # the estimate's size for v ~ 1 (callers' tail slack)

    def _est(self, v: Any, d: Any) -> Any:
        # + 6e-13 |v|: errors both grids share, which their difference cannot see (round-off of the
        # cell sums with mixed-sign Newton-Cotes weights, the partial cell at a kink); at sigma =
        # 0.8, M = 20, eps = 1 they reach 3.8e-13 relative (tests/accountant/test_laws.py checks the brackets
        # of the two laws overlap).  The law claims no better than ~6e-13 relative.
        return np.abs(d) / 16.0 + (self.defect + 6e-13) * np.abs(v) + 1e-16

    def tradeoff_value(self, a: FArr) -> tuple[FArr, FArr]:
        """f(a) = P1[U <= x_a] with P0[U > x_a] = a, and the error estimate.

        Valid for a strictly inside the grid's tail masses; see :func:`dpbounds.accountant.tradeoff_exact`
        for the edges.
        """
        fa = self.fine.cdf1_at(self.fine.quantile_sf0(a))
        fb = self.coarse.cdf1_at(self.coarse.quantile_sf0(a))
        return fa, self._est(fa, fa - fb)

    def delta_value(self, eps: float) -> tuple[float, float]:
        """max of the two directions' delta(eps), and its error estimate (eps <= 700)."""
        da = max(self.fine.delta_remove(eps), self.fine.delta_add(eps))
        db = max(self.coarse.delta_remove(eps), self.coarse.delta_add(eps))
        return da, float(self._est(da, da - db))

    def lattice_masses(self, delta_l: float) -> tuple[int, FArr, FArr, float, float]:
        """Masses of U on the cells [log M + k delta_l, log M + (k+1) delta_l), k = k0 ... .

        Returns (k0, p0, p1, outside, err): H0 and H1 masses per cell, the mass outside the grid
        (both laws, estimate from the grid tails) and an l1 error estimate of each mass array.
        """
        k0, p0, p1, _, _, outside, err = self._lattice_masses_pair(delta_l)
        return k0, p0, p1, outside, err
    # -------------------------------------------------------------- the law interface
    method = "log-domain grid"
    certified = "loss discretisation of the lattice (rounding up and down)"
    estimated = ("the grid's discretisation error (fine vs half-resolution grid, ~20x the measured "
                 "error) and its mass defect")

    @property
    def converged(self) -> bool:
        return True

    @property
    def key(self) -> tuple[object, ...]:
        return ("log-domain", self.sigma, self.M, self.fine.h)

    def x_range(self) -> tuple[float, float]:
        u = self.fine.u
        return math.exp(float(u[0])) - self.M, math.exp(float(u[-1])) - self.M

    def delta(self, eps: float) -> tuple[float, float]:
        if eps > 700.0:  # beyond every loss on the grid; only the tail mass off the grid remains
            return 0.0, self.floor
        d, e = self.delta_value(eps)
        return float(max(d - e, 0.0)), float(min(d + e, 1.0))

    def tv(self) -> tuple[float, float]:
        return self.delta_value(0.0)

    def curve_points(self) -> tuple[FArr, FArr, FArr, FArr]:
        """(a, f) = (P0[U > u], P1[U <= u]) at the coarse grid's nodes (shared with the fine grid),
        with the fine-vs-coarse error estimate."""
        f, c = self.fine, self.coarse
        n = min(c.n, (f.n + 1) // 2)
        a_f, a_c = f.sf0[::2][:n], c.sf0[:n]
        f_f, f_c = f.cdf1[::2][:n], c.cdf1[:n]
        ea = self._est(a_f, a_f - a_c)
        ef = self._est(f_f, f_f - f_c)
        a, fv, ea, ef = a_f[::-1], f_f[::-1], ea[::-1], ef[::-1]
        return a - ea, a + ea, fv - ef, fv + ef

    def tradeoff(self, flat: FArr) -> tuple[FArr, FArr]:
        """f_M(a) from the log-domain law; a beyond the grid's tail masses gets an honest interval."""
        f = np.where(flat <= 0, 1.0, 0.0)
        err = np.zeros(flat.size)
        fine = self.fine
        a_min = float(fine.sf0[-1])   # P0[U > u_top]: thresholds beyond the grid
        a_max = float(fine.sf0[0])    # P0[U > u_0]
        interior = (flat > 0) & (flat < 1)
        inside = interior & (flat > a_min) & (flat < a_max)
        idx = np.nonzero(inside)[0]
        if idx.size:
            f[idx], err[idx] = self.tradeoff_value(flat[idx])
        # f is non-increasing with f(a) <= 1 - a: bracket the edges by the nearest served value
        below = interior & (flat <= a_min)   # f(a) in [f(a_min) - e, 1 - a]
        if np.any(below):
            f_ref, e_ref = self.tradeoff_value(np.array([a_min * (1 + 1e-12)]))
            lo_f, hi_f = float(f_ref[0] - e_ref[0]), 1.0 - flat[below]
            f[below], err[below] = 0.5 * (lo_f + hi_f), 0.5 * np.maximum(hi_f - lo_f, 0.0)
        above = interior & (flat >= a_max)   # f(a) in [0, min(f(a_max) + e, 1 - a)]
        if np.any(above):
            f_ref, e_ref = self.tradeoff_value(np.array([a_max * (1 - 1e-12)]))
            hi_f = np.minimum(float(f_ref[0] + e_ref[0]), 1.0 - flat[above])
            f[above], err[above] = 0.5 * hi_f, 0.5 * np.maximum(hi_f, 0.0)
        return f, err

    def lattice_pmfs(self, delta_l: float, cell_span: float | None = None) -> LatticePMFs:
        """Lattice PMFs from the log-domain law: loss cells are the lattice intervals themselves.

        Cell k holds U in [log M + k d, log M + (k+1) d), d = ``delta_l`` (``cell_span`` is
        accepted for the interface: exact cell edges need no finer cells).  remove: loss
        U - log M under H1, in [k d, (k+1) d]; add: loss log M - U under H0, in [-(k+1) d, -k d].
        With both masses of each interval known, the connect-the-dots split is exact and the
        lower PMF's merging uses the exact slack (:func:`dpbounds.accountant._place.place_aligned`).
        The per-cell error is the fine-vs-coarse difference (/16) and the normalisation defect;
        mass off the grid and the l1 error estimate go to +inf loss (upper bound) / are
        subtracted (lower bound).  Where the grid would need more than 2^20 intervals, cells of
        a multiple of ``delta_l`` are placed by their loss bounds instead (still certified).
        """
        d = float(delta_l)
        width = self.fine.u[-1] - self.fine.u[0]
        out: LatticePMFs = {}
        if width / d <= _MAX_CELLS:
            k0, p0, p1, q0, q1, outside, err = self._lattice_masses_pair(d)
            e_cell = self._cell_errors(p0, p1, q0, q1)
            k = np.arange(k0, k0 + p0.size, dtype=np.int64)
            for direction, p, q, jj in (("remove", p1, p0, k), ("add", p0, p1, -k - 1)):
                ju, pu, jd, pd = place_aligned(jj, p, q, e_cell, d)
                out[direction] = (ju, pu, outside + err, jd, pd, err)
            return out
        # at most _MAX_CELLS cells over the grid: a tiny spacing would otherwise ask for ~1e8
        # cells and several GiB of masses (sigma 0.74, M 16: test_log_domain_lattice_cells_are_capped).  The
        # cells are then wider than the lattice; each mass is known to within the whole l1 error
        # estimate only (conservative), and the bracket is wider and says so if it misses.
        dc = width / _MAX_CELLS
        k0, p0, p1, outside, err = self.lattice_masses(dc)
        kf = np.arange(k0, k0 + p0.size, dtype=float)
        for direction, p, q, lo, hi in (("remove", p1, p0, kf * dc, (kf + 1.0) * dc),
                                        ("add", p0, p1, -(kf + 1.0) * dc, -kf * dc)):
            ju, pu, jd, pd = place_cells(lo, hi, p, q, err, d)
            out[direction] = (ju, pu, outside + err, jd, pd, err)
        return out

    def _cell_errors(self, p0: FArr, p1: FArr, q0: FArr, q1: FArr) -> FArr:
        """Per-cell error estimate of both mass arrays (fine p, coarse q): the difference / 16 and
        the normalisation defect in proportion, as :meth:`_est` does for every answer."""
        return np.asarray(np.maximum(np.abs(p0 - q0), np.abs(p1 - q1)) / 16.0
                          + (self.defect + 6e-13) * np.maximum(p0, p1) + 1e-300, dtype=np.float64)

    def _lattice_masses_pair(self, delta_l: float) -> tuple[int, FArr, FArr, FArr, FArr, float, float]:
        """:meth:`lattice_masses` with both grids' masses: (k0, p0, p1, q0, q1, outside, err)."""
        f = self.fine
        lm = math.log(self.M)
        k0 = int(math.floor((f.u[0] - lm) / delta_l))
        k1 = int(math.ceil((f.u[-1] - lm) / delta_l))
        x = lm + delta_l * np.arange(k0, k1 + 1)
        out = []
        for law in (self.fine, self.coarse):
            xc = np.clip(x, law.u[0], law.u[-1])
            out.append((np.diff(law.cdf0_at(xc)), np.diff(law.cdf1_at(xc))))
        (p0, p1), (q0, q1) = out
        err = float(max(np.sum(np.abs(p0 - q0)), np.sum(np.abs(p1 - q1)))) / 16.0 + self.defect + 1e-16
        outside = max(abs(1.0 - float(np.sum(p0))), abs(1.0 - float(np.sum(p1))))
        return k0, np.maximum(p0, 0.0), np.maximum(p1, 0.0), q0, q1, outside, err

    # -------------------------------------------------------------- the diluted pair (partial epoch)
    def diluted_directions(self, eps: float, r: float, M_outer: float) -> dict[str, tuple[float, float]]:
        """The grids' own per-direction integrals at the remapped eps: remove = r delta^remove(eps1),
        e^{eps1} = 1 + (e^eps - 1)/r; add = a0 delta^add(eps2), a0 = e^eps r - (e^eps - 1),
        e^{eps2} = e^eps r / a0.

        Both integrals are non-negative (no cancellation of CDFs).  The remapped eps is rounded;
        each direction is monotone in it, so evaluating at eps' -/+ (its round-off bound) brackets
        the exact value; the fine-vs-coarse estimate is applied to each end."""
        ulp = 2.220446049250313e-16

        def remove_k(e: float, w: float) -> tuple[float, float]:
            vf, vc = w * self.fine.delta_remove(e), w * self.coarse.delta_remove(e)
            return vf, float(self._est(vf, vf - vc))

        def add_k(e: float, w: float) -> tuple[float, float]:
            vf, vc = w * self.fine.delta_add(e), w * self.coarse.delta_add(e)
            return vf, float(self._est(vf, vf - vc))

        out: dict[str, tuple[float, float]] = {}
        em = math.expm1(eps) if eps <= 700.0 else math.inf
        eps1 = math.log1p(em / r) if math.isfinite(em) else math.inf
        d1 = 8.0 * ulp * (1.0 + eps1)
        if eps1 + d1 > 700.0:
            out["remove"] = (0.0, r * self.floor)
        else:
            vl, el = remove_k(eps1 + d1, r)
            vh, eh = remove_k(max(eps1 - d1, 0.0), r)
            out["remove"] = (vl - el, vh + eh)
        if not math.isfinite(em):
            out["add"] = (0.0, 0.0)
            return out
        ee = math.exp(eps)
        a0 = r * ee - em
        da = 8.0 * ulp * (r * ee + em)
        if a0 + da <= 0.0:
            out["add"] = (0.0, 0.0)  # the add loss never exceeds -log(1 - r) < eps
            return out
        hi_a = a0 + da
        eps2 = math.log(r * ee / hi_a)
        d2 = 8.0 * ulp * (1.0 + eps2)
        if eps2 - d2 > 700.0:
            hi = hi_a * self.floor
        else:
            vh, eh = add_k(max(eps2 - d2, 0.0), hi_a)
            hi = vh + eh
        lo_a = a0 - da
        lo = 0.0
        if lo_a > 0.0:
            eps2 = math.log(r * ee / lo_a)
            d2 = 8.0 * ulp * (1.0 + eps2)
            if eps2 + d2 <= 700.0:
                vl, el = add_k(eps2 + d2, lo_a)
                lo = vl - el
        out["add"] = (lo, hi)
        return out

    def diluted_lattice_pmfs(self, delta_l: float, r: float, M_outer: float) -> LatticePMFs:
        """Cells of U = log S with exact loss edges: U in [u_j, u_{j+1}) <=> remove loss in
        [j D, (j+1) D), u_j = log M_outer + log(e^{jD} - 1 + r).  Masses from the grids' CDFs
        (fine, with the coarse grid for the l1 error estimate, as :meth:`lattice_pmfs`)."""
        D = float(delta_l)
        lm = math.log(M_outer)
        l1mr = math.log1p(-r)
        u = self.fine.u
        ends = np.logaddexp(l1mr, np.array([u[0], u[-1]]) - lm)  # remove losses at the grid's ends
        j0 = int(math.floor(ends[0] / D))
        j1 = int(math.ceil(ends[1] / D))
        j = np.arange(j0, j1 + 1, dtype=float)
        t = np.expm1(j * D) + r
        with np.errstate(divide="ignore", invalid="ignore"):
            uj = np.where(t > 0, lm + np.log(np.maximum(t, 1e-300)), -np.inf)
        masses = []
        for g in (self.fine, self.coarse):
            xc = np.clip(uj, g.u[0], g.u[-1])
            masses.append((np.diff(g.cdf0_at(xc)), np.diff(g.cdf1_at(xc))))
        (p0, p1), (q0, q1) = masses
        err = float(max(np.sum(np.abs(p0 - q0)), np.sum(np.abs(p1 - q1)))) / 16.0 + self.defect + 1e-16
        outside = max(abs(1.0 - float(np.sum(p0))), abs(1.0 - float(np.sum(p1))))
        e_cell = self._cell_errors(p0, p1, q0, q1)
        p0 = np.maximum(p0, 0.0)
        pm = (1.0 - r) * p0 + r * np.maximum(p1, 0.0)
        jj = j0 + np.arange(p0.size, dtype=np.int64)
        # remove: cell j is the lattice interval [j D, (j+1) D], P = the mixture, Q = H0
        ju, pu, jd, pd = place_aligned(jj, pm, p0, e_cell, D)
        # add: cell j has loss in [-(j+1) D, -j D], P = H0, Q = the mixture; off-grid mass and the
        # error estimate at the largest possible add loss -log(1 - r) (not +inf)
        au, apu, ad, apd = place_aligned(-jj - 1, p0, pm, e_cell, D)
        j_top = max(int(math.ceil(-l1mr / D)), au + apu.size - 1)
        up = np.zeros(j_top - au + 1)
        up[:apu.size] = apu
        up[-1] += outside + err
        return {
            "remove": (ju, pu, outside + err, jd, pd, err),
            "add": (au, up, 0.0, ad, apd, err),
        }


def default_step(sigma: float, M: int) -> float:
    """Grid step: 1/100 of the log-scale of S_M (Fenton-Wilkinson), at most 0.016."""
    s = 1.0 / sigma
    w = math.sqrt(math.log1p(math.expm1(s * s) / M))
    return min(0.016, max(w, 1e-4) / 100.0)


def compose_step(sigma: float, M: int) -> float:
    """Grid step for E > 1 lattices: 1/25 of the log-scale of S_M, at most 0.016 (4x
    :func:`default_step` where that is 1/100 of the log-scale; lattices need ~1e-9, not 1e-13)."""
    s = 1.0 / sigma
    w = math.sqrt(math.log1p(math.expm1(s * s) / M))
    return min(0.016, max(w, 1e-4) / 25.0)


def estimated_seconds(sigma: float, M: int, step: float | None = None) -> float:
    """Rough build time of a LogDomainLaw (both grids) on one core, from n, J1 and the
    number of convolutions (calibrated at sigma = 0.3-0.5, M = 300-1e5: ~6 ns per n * J1), for a
    grid step ``step`` (default :func:`default_step`)."""
    K, u0, n = grid_for(sigma, M, default_step(sigma, M) if step is None else step)
    J1 = (-math.log(_FAR_G) - _LN2) * K / _LN2
    convs = max(int(M).bit_length() - 1 + bin(int(M)).count("1") - 1, 1)
    return 1.25 * 6.0e-9 * n * J1 * convs
