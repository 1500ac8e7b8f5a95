"""Rigorous tail bounds of the lognormal sum S - M under H0 and H1 (private).

Chernoff bounds below (the lower tail of a sum of positive variables) and truncated-MGF
bounds above (the heavy right tail of a lognormal has no MGF; truncating each summand at a
level b and paying n P[Y > b] for the truncation gives a valid exponential bound).  They
certify the windows of the Fourier laws and place the mass outside them in the E > 1 lattices.
The tables depend on sigma only and are cached by the package's law cache
(:func:`dpbounds.accountant.clear_cache` clears them); the values are pure functions of the
arguments.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from dpbounds._kernels import tail_table_lower, tail_table_upper  # type: ignore[import-not-found, unused-ignore]
from dpbounds.accountant._cache import memoize

FArr = NDArray[np.float64]

__all__ = ["lower_tail_h0", "upper_tail_h0", "upper_tail_h1", "upper_tail_h0_scan", "upper_tail_h1_joint",
           "upper_tail_h1_window", "spread_along_bound", "extend_cdf_brackets"]

def _ndtr(x: Any) -> FArr:
    from dpbounds._ufuncs import ndtr

    return np.asarray(ndtr(np.asarray(x, dtype=float)), dtype=float)


def _log1p_minus_x(a: Any) -> FArr:
    """log1p(a) - a, accurate for small |a| (a > -1)."""
    a = np.asarray(a, dtype=float)
    out = np.empty_like(a)
    small = np.abs(a) < 0.05
    s = a[small]
    # -a^2/2 + a^3/3 - ...
    acc = np.zeros_like(s)
    p = s * s
    for k in range(2, 20):
        acc += (-1.0) ** (k + 1) * p / k
        p = p * s
    out[small] = acc
    b = a[~small]
    with np.errstate(divide="ignore", invalid="ignore"):
        out[~small] = np.where(b > -1.0, np.log1p(np.maximum(b, -1.0 + 1e-300)) - b, np.inf)
    return np.asarray(out, dtype=np.float64)


# 12-point Gauss-Legendre rule (computed once: leggauss costs ~0.2 ms a call)
_GL12_X, _GL12_W = np.polynomial.legendre.leggauss(12)
_LOG_1EM4 = math.log(1e-4)


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# e^z - 1 - z <= z^2 / 2 + z^3 / 6 + z^4 / 24 + z^5 / 119 for 0 <= z < 1e-3: the terms from z^5 on
# sum to at most z^5 e^z / 120 (the series stopped at z^4 fell short by up to z^3 / 60 relative,
# 1.7e-11, the wrong side for an upper bound)
_EXPM1_MINUS_X5 = 1.0 / 119.0
# e^{-z} - 1 + z = sum_{k >= 2} (-z)^k / k!, stopped after z^10 / 10! for 0 <= z < 0.1: the
# terms alternate and shrink, so this is an upper bound, and within 1e-17 relative; above 0.1
# expm1(-z) + z loses at most ~2 eps / z to cancellation.  (Stopped after z^4 / 4! below 1e-3, as
# it was, it ran up to 1.7e-11 high there and up to 4e-13 either way just above.)
_NEG_EXP_SERIES = tuple((-1.0) ** k / math.factorial(k) for k in range(2, 11))
_NEG_EXP_COEFS = np.array(_NEG_EXP_SERIES)
# The lower-tail grid starts where the integrand of E e^{-lam_max Y} is below e^{-40} of its peak
# (by then the bound on the rest, added to the transform, is below its double resolution)
_LOWER_DROP = 40.0


def _lower_nodes(s: float, m: float, lam_max: float, hu: float) -> FArr:
    """Nodes of the lower-tail transform: step hu from u_lo to below 12 + 2s, u_lo = -12 unless
    the integrand of E e^{-lam Y} (Y = e^{s u + m}, u ~ N(0, 1)) still has mass there.

    Its log, h(u) = -lam e^{s u + m} - u^2 / 2 (+ const), is concave with its peak u* < 0 moving
    left as lam grows: to u* ~ -19 at lam = 1e3, sigma ~ 19 (the grid's old start, -12, missed
    most of the mass from sigma ~ 3 on).  u_lo is put below the point where h has dropped by
    _LOWER_DROP from its peak at lam_max; the drop at u_lo is at least as large for every smaller
    lam (its derivative in lam is y(u_lo) - y(u*_lam) < 0).  The grid stays -12 + k hu."""
    n_right = int(math.ceil((12.0 + 2.0 * s + 12.0) / hu))  # the count of np.arange(-12, 12 + 2s, hu)

    def h(v: float) -> float:
        return -lam_max * math.exp(s * v + m) - 0.5 * v * v

    # peak: h'(u) = -lam s e^{s u + m} - u, decreasing, < 0 at 0 and >= 0 at -max(1, lam s)
    lo, hi = -max(1.0, lam_max * s), 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if -lam_max * s * math.exp(s * mid + m) - mid > 0.0:
            lo = mid
        else:
            hi = mid
    u_pk = lo
    target = h(u_pk) - _LOWER_DROP
    k_ext = 0
    if u_pk <= -12.0 or h(-12.0) > target:  # the drop left of the peak is reached below -12
        # h(u_pk - d) <= h(u_pk) - d^2 / 2 (h'' <= -1): the crossing lies within sqrt(2 drop)
        lo, hi = u_pk - math.sqrt(2.0 * _LOWER_DROP), u_pk
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            if h(mid) > target:
                hi = mid
            else:
                lo = mid
        k_ext = int(math.ceil((-12.0 - lo) / hu))
    # k hu from the start (np.arange's second-minus-first spacing is hu (1 + 1.4e-14), which the
    # weights hu did not follow: a systematic 1.4e-14 relative deficit of the transform)
    return np.asarray((-12.0 - k_ext * hu) + hu * np.arange(k_ext + n_right), dtype=np.float64)


def _lower_remainders(s: float, m: float, lam: FArr, u_lo: float, u_hi: float) -> tuple[FArr, FArr]:
    """Upper bounds on the trapezoid nodes beyond [u_lo, u_hi] of q = E[e^{-lam Y} - 1 + lam Y]
    (linear) and of E e^{-lam Y} (log); the nodes are u_lo + k hu, u_lo <= -12, u_hi >= 12 + 2s - hu.

    The trapezoid sum over all k of these entire integrands is the integral up to terms of order
    e^{-2 pi d / hu} (Poisson summation; d = pi / (3 s), inside the strip where Re Y > 0, gives
    e^{-65} or less at hu <= min(0.05, sigma / 10)): the truncated sum plus these bounds is the
    transform to rounding or above (tested against mpmath).  Where the integrand is monotone
    beyond an end, the nodes there sum to at most the integral beyond it:
      - q, both ends: e^{-z} - 1 + z <= min(z, z^2 / 2), and y phi(u) = phi(u - s),
        y^2 phi(u) = e^{s^2} phi(u - 2 s) (decreasing beyond u_hi > 2s; the whole integrand
        increases below u_lo < 0): min(lam Phi(c - s), lam^2 / 2 e^{s^2} Phi(c - 2 s)) at the
        left end c = u_lo, the same with Phi(s - u_hi), Phi(2s - u_hi) at the right end.
      - E e^{-lam Y}, right end: e^{-lam y} phi <= e^{-lam y(u_hi)} phi, decreasing:
        e^{-lam y(u_hi)} Phi(-u_hi).
      - E e^{-lam Y}, left end: the integrand is <= phi, increasing: Phi(u_lo); and where its
        log h (concave) still rises at u_lo, the tangent there bounds it:
        e^{h(u_lo)} / h'(u_lo), h' = -lam s y - u.
    Phi(-t) <= phi(t) / t (t > 0) throughout, in logs (no underflow, no ndtr needed)."""
    with np.errstate(divide="ignore"):
        llam = np.log(lam)
    lphi_lo = -0.5 * u_lo * u_lo - _LOG_SQRT_2PI
    lphi_hi = -0.5 * u_hi * u_hi - _LOG_SQRT_2PI

    def lmills(c: float) -> float:  # log of the bound phi(c) / |c| >= Phi(c), c < 0
        return -0.5 * c * c - _LOG_SQRT_2PI - math.log(-c)

    ss = s * s
    q_left = np.minimum(llam + lmills(u_lo - s), 2.0 * llam - math.log(2.0) + ss + lmills(u_lo - 2.0 * s))
    q_right = np.minimum(llam + lmills(s - u_hi), 2.0 * llam - math.log(2.0) + ss + lmills(2.0 * s - u_hi))
    q_rem = np.exp(q_left) + np.exp(q_right)
    ly_lo = lam * math.exp(s * u_lo + m)
    dh = -s * ly_lo - u_lo  # h'(u_lo)
    with np.errstate(divide="ignore", invalid="ignore"):
        tangent = np.where(dh > 0.0, lphi_lo - ly_lo - np.log(np.where(dh > 0.0, dh, 1.0)), np.inf)
    left = np.minimum(tangent, lphi_lo - math.log(-u_lo))
    right = lphi_hi - lam * math.exp(s * u_hi + m) - math.log(u_hi)
    return (np.asarray(q_rem, dtype=np.float64),
            np.asarray(np.logaddexp(left, right), dtype=np.float64))


def _mgf_tables(sigma: float, far: bool = False) -> tuple[FArr, FArr, FArr, FArr, FArr, FArr]:
    """Tables for the tail bounds (depend on sigma only).

    Returns lam (L,), lower q(lam) = E[e^{-lam Y} - 1 + lam Y] (L,),
    b (B,), Q_b = P[Y > b] (B,), D2(b, lam) = E[e^{lam min(Y,b)}] - 1 - lam (B, L),
    log E[e^{-lam Y}] (L,).  q, D2 and the log are upper bounds or exact to rounding (the parts of
    the transforms beyond their grids are bounded and added): the Chernoff bounds built on them
    are bounds.
    ``far=True`` adds truncation levels b up to P[Y > b] ~ 1e-300 and lam down to 30 / b_max, so
    that the upper tail bound keeps decaying far beyond 1e6 (the default table's floor is
    n P[Y > 1e6], e.g. 3e-3 at sigma = 0.3, n = 1e6); used for the tails of E > 1 lattices.
    """
    return _all_tables(sigma, far)[:6]


@memoize("tail tables", maxsize=32)
def _all_tables(sigma: float, far: bool = False) -> tuple[FArr, FArr, FArr, FArr, FArr, FArr, FArr, FArr]:
    """:func:`_mgf_tables` followed by T_b = E[Y 1{Y > b}] (B,) and the size-biased truncated
    transform minus one, K(b, lam) - 1 = E[Y e^{lam min(Y, b)}] - 1 (B, L; an upper bound or exact
    to rounding, +inf where lam b > 30, like D2), which :func:`upper_tail_h1_joint` needs: from the
    same nodes.

    K = E[Y 1{Y <= b}] + E[Y 1{Y <= b} (e^{lam Y} - 1)] + e^{lam b} T_b = 1 + J + T_b expm1(lam b)
    (E Y = 1), J = E[Y expm1(lam Y) 1{Y <= b}] summed on the nodes of D2 (no cancellation: a
    sum of positive terms) plus a bound on the part below u = -12."""
    s = 1.0 / sigma
    m = -0.5 * s * s
    log10_bmax = min((37.0 * s + m) / math.log(10.0), 300.0)
    lam = np.logspace(-12, 3, 91)
    if far and log10_bmax > 6.5:
        # (none needed while 30 / b_max is above the table's 1e-12: b_max below ~1e10, sigma ~ 1.5-2)
        lam = np.concatenate([np.logspace(-math.ceil(log10_bmax) - 2, -12.5,
                                          max(2 * int(math.ceil(log10_bmax)) - 20, 0)), lam])
    # lower-tail transform, trapezoid on the real line (smooth, double-exponential decay)
    hu = min(0.05, sigma / 10)
    u = _lower_nodes(s, m, float(lam[-1]), hu)
    nu = np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi) * hu
    y = np.exp(s * u + m)
    # e^{-z} - 1 + z at z = lam y: the series below z = 0.1 (Horner), expm1 above, in one C pass
    g = tail_table_lower(lam, y, _NEG_EXP_COEFS)
    q = g @ nu
    # the nodes beyond the grid's ends, bounded from above: both are upper bounds (see
    # _lower_remainders), so the Chernoff bounds built on them stay bounds
    q_rem, qlog_rem = _lower_remainders(s, m, lam, float(u[0]), float(u[-1]))
    q = q + q_rem
    # log E e^{-lam Y} = log1p(q - lam); by log-sum-exp over the nodes on the rows where
    # E e^{-lam Y} - 1 = q - lam <= -0.05 (the only rows _lower_exponent takes it from; the others
    # keep log1p, which is accurate there): the same values on those rows as a log-sum-exp of the
    # whole table, at a third of its cost (the small-lam rows are most of the table)
    a = q - lam
    far_rows = np.nonzero(~(np.abs(a) < 0.05))[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        qlog = np.log1p(np.maximum(a, -1.0))
    if far_rows.size:
        lw = np.log(nu)[None, :] - lam[far_rows, None] * y[None, :]
        lmx = np.max(lw, axis=1)
        qlog[far_rows] = np.logaddexp(lmx + np.log(np.sum(np.exp(lw - lmx[:, None]), axis=1)),
                                      qlog_rem[far_rows])
    # upper-tail truncated transform: Gauss-Legendre panels on [-12, u_b]
    b = np.unique(np.concatenate([np.logspace(0.2, 6, 17), [1.25, 1.5, 2.0, 3.0]]))
    if far and log10_bmax > 6.5:
        b = np.unique(np.concatenate([b, np.logspace(6.5, log10_bmax, int(math.ceil(2 * (log10_bmax - 6.5))) + 1)]))
    ub = (np.log(b) - m) / s
    Qb = _ndtr(-ub)
    Tb = _ndtr(s - ub)  # E[Y 1{Y > b}]
    D2 = np.full((b.size, lam.size), np.inf)
    # all panels of all levels b in one array (the per-b numpy loop cost ~7 ms per sigma):
    # unit panels on [-12, u_b] plus geometric refinement towards u_b, where e^{lam y} is steepest
    # (all levels at once: the same values as np.unique(np.concatenate([np.linspace(-12, u_b,
    # ceil(u_b + 12) + 1), u_b - np.exp(np.linspace(log 1e-4, log min(1, (u_b + 12) / 2), 8))]))
    # per level, built as np.linspace builds them: start + k * step, the last point set to stop)
    n_uni = np.ceil(ub + 12.0).astype(np.int64) + 1
    lvl_u = np.repeat(np.arange(b.size), n_uni)
    k_u = np.arange(lvl_u.size) - np.repeat(np.cumsum(n_uni) - n_uni, n_uni)
    uni = k_u * ((ub + 12.0) / (n_uni - 1))[lvl_u] + -12.0
    last = np.cumsum(n_uni) - 1
    uni[last] = ub
    g_stop = np.array([math.log(min(1.0, 0.5 * (v + 12.0))) for v in ub.tolist()])  # math.log, as before
    g_step = (g_stop - _LOG_1EM4) / 7.0
    gl = np.arange(8)[None, :] * g_step[:, None] + _LOG_1EM4
    gl[:, -1] = g_stop
    geo = ub[:, None] - np.exp(gl)
    vals = np.concatenate([uni, geo.ravel()])
    lvl = np.concatenate([lvl_u, np.repeat(np.arange(b.size), 8)])
    order = np.lexsort((vals, lvl))
    vals, lvl = vals[order], lvl[order]
    keep = np.ones(vals.size, dtype=bool)
    keep[1:] = (vals[1:] != vals[:-1]) | (lvl[1:] != lvl[:-1])
    vals, lvl = vals[keep], lvl[keep]
    npan = np.bincount(lvl, minlength=b.size) - 1
    inner = lvl[1:] == lvl[:-1]  # consecutive edges of one level bound a panel
    lo_e = vals[:-1][inner]
    hi_e = vals[1:][inner]
    mid = 0.5 * (hi_e + lo_e)
    half = 0.5 * (hi_e - lo_e)
    uu = mid[:, None] + half[:, None] * _GL12_X[None, :]  # (panels, 12)
    ww = (half[:, None] * _GL12_W[None, :]) * np.exp(-0.5 * uu * uu) / math.sqrt(2 * math.pi)
    yy = np.exp(s * uu + m)
    # per-level node sums: segment boundaries in the flattened (panel, node) order
    seg = np.concatenate([[0], np.cumsum(npan)]) * _GL12_X.size
    uu, ww, yy = uu.ravel(), ww.ravel(), yy.ravel()
    wy2 = ww * yy * yy
    mom = np.add.reduceat(np.stack([wy2, wy2 * yy, wy2 * yy * yy]), seg[:-1], axis=1)  # (3, B)
    lb = lam[None, :] * b[:, None]  # (B, L); y <= b on every node of level b
    ok = lb <= 30.0
    # rows with lam b < 1e-3 take the series branch on every node (lam y <= lam b): the node sum
    # of lam^2 y^2 / 2 + lam^3 y^3 / 6 + lam^4 y^4 (1 / 24 + lam b / 119) (the series, see
    # _EXPM1_MINUS_X5, with y^5 <= b y^4) is a combination of three node moments
    ser = lb < 1e-3
    l2 = lam * lam
    sum_ser = l2[None, :] * (0.5 * mom[0][:, None] + lam[None, :] * (
        mom[1][:, None] / 6.0 + lam[None, :] * mom[2][:, None] * (1.0 / 24.0 + lb * _EXPM1_MINUS_X5)))
    Ssum = np.where(ser, sum_ser, 0.0)
    # J on the series rows: y expm1(z) = lam y^2 + lam^2 y^3 / 2 + lam^3 y^4 / 6 + y sum_{k>=4} z^k / k!
    # and the last sum is at most z^4 e^z / 24 <= lam^3 y^4 (lam b) e^{1e-3} / 24 (y <= b, lam b < 1e-3)
    Jsum = np.where(ser, lam[None, :] * (mom[0][:, None] + lam[None, :] * (0.5 * mom[1][:, None] + lam[None, :] * (
        mom[2][:, None] * (1.0 / 6.0 + lb * (math.exp(1e-3) / 24.0))))), 0.0)
    # the other rows (1e-3 <= lam b <= 30): node sums of w (e^z - 1 - z) and w y (e^z - 1),
    # z = lam y, in one C pass over all levels (the series below z = 1e-3, see _EXPM1_MINUS_X5)
    Ssum = np.ascontiguousarray(Ssum)
    Jsum = np.ascontiguousarray(Jsum)
    tail_table_upper(lam, b, ww, yy, seg, _EXPM1_MINUS_X5, Ssum, Jsum)
    with np.errstate(over="ignore", invalid="ignore"):
        rest = Qb[:, None] * np.expm1(np.minimum(lb, 31.0)) - lam[None, :] * Tb[:, None]
    # the panels start at u = -12: below it e^{z} - 1 - z (z = lam y, increasing in u, at most
    # lam y(-12) < lam b <= 30 on every row kept) is at most z0^2 / 2 e^{z0}, z0 = lam y(-12),
    # over a Gaussian mass Phi(-12) <= phi(12) / 12: added, so that D2 stays an upper bound
    z0 = np.minimum(lam * math.exp(-12.0 * s + m), 31.0)
    with np.errstate(divide="ignore"):
        d2_left = np.exp(2.0 * np.log(z0) - math.log(2.0) + z0 - 72.0 - _LOG_SQRT_2PI - math.log(12.0))
    D2 = np.where(ok, Ssum + rest + d2_left[None, :], np.inf)
    # J below u = -12: y expm1(lam y) <= y0 z0 e^{z0} (y0 = y(-12), z0 = lam y0) over a Gaussian
    # mass Phi(-12) <= phi(12) / 12
    y0 = math.exp(-12.0 * s + m)
    with np.errstate(divide="ignore"):
        j_left = np.exp(math.log(y0) + np.log(z0) + z0 - 72.0 - _LOG_SQRT_2PI - math.log(12.0))
    with np.errstate(over="ignore", invalid="ignore"):
        Km1 = np.where(ok, Jsum + j_left[None, :] + Tb[:, None] * np.expm1(np.minimum(lb, 31.0)), np.inf)
    return lam, q, b, Qb, D2, qlog, Tb, np.asarray(Km1, dtype=np.float64)


def lower_tail_h0(sigma: float, n: float, x: Any) -> FArr:
    """Upper bound on P0[sum_{j<=n}(Y_j - 1) <= x] for x < 0 (Chernoff), vectorised over x."""
    lam = _mgf_tables(sigma, False)[0]  # positional, as below: one cache entry
    x = np.atleast_1d(np.asarray(x, dtype=float))
    expo_n = _lower_exponent(float(sigma), float(n))
    e = lam[None, :] * x[:, None] + expo_n[None, :]
    best = np.min(e, axis=1)
    with np.errstate(over="ignore"):
        return np.asarray(np.minimum(1.0, np.exp(np.minimum(best, 0.0)) * 1.01), dtype=np.float64)


@memoize("lower tail exponents", maxsize=64)
def _lower_exponent(sigma: float, n: float) -> FArr:
    """n * (log E e^{-lam Y} + lam) on the lam table (x-independent part of the lower bound; a
    window search evaluates the bound ~16 times, this part was ~90 % of each evaluation)."""
    lam, q, _, _, _, qlog = _mgf_tables(sigma, False)
    a = q - lam
    return np.asarray(n * np.where(np.abs(a) < 0.05, _log1p_minus_x(a) + q, qlog + lam), dtype=np.float64)


@memoize("tail exponents", maxsize=64)
def _upper_exponent(sigma: float, n: float, far: bool = False) -> FArr:
    """n * (log E e^{lam min(Y, b)} - lam) on the (b, lam) table (x-independent part of the bound)."""
    D2 = _mgf_tables(sigma, far)[4]
    with np.errstate(invalid="ignore", over="ignore"):
        expo = n * _upper_exponent_unit(sigma, far)
    return np.asarray(np.where(np.isfinite(D2), expo, np.inf), dtype=np.float64)


@memoize("tail exponent per summand", maxsize=32)
def _upper_exponent_unit(sigma: float, far: bool = False) -> FArr:
    """log E e^{lam min(Y, b)} - lam on the (b, lam) table (:func:`_upper_exponent` for n = 1,
    before the infinite entries are set; a window search asks for n = M and M - 1)."""
    lam, _, b, Qb, D2, _ = _mgf_tables(sigma, far)
    a = lam[None, :] + D2
    af = np.where(np.isfinite(a), a, 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        # series form only where it does not cancel
        return np.asarray(np.where(np.abs(af) < 0.05, _log1p_minus_x(af) + D2,
                                   np.log1p(np.maximum(af, -0.5)) - lam[None, :]), dtype=np.float64)


@memoize("tail slope keys", maxsize=64)
def _slope_keys(sigma: float, n: float, far: bool = False) -> tuple[FArr, FArr, FArr]:
    """(keys, expo_pad, lam_pad): sorted keys locating, for each truncation level b, the minimiser
    over the lam table of expo[b, l] - lam_l x (expo the x-independent part from
    :func:`_upper_exponent`), and expo (flat) and lam padded by two entries each side (+inf and
    the end values: every index within two of a real one is valid and never the minimum).

    expo is convex in lam (n times a cumulant generating function), so the minimiser is l* = the
    number of chords (expo[l+1] - expo[l]) / (lam[l+1] - lam[l]) below x.  Row b's chord slopes
    (made non-decreasing) are mapped monotonically into [b + 0.01, b + 0.99], so that one
    searchsorted over all rows finds l* for every (x, b)."""
    lam = _mgf_tables(sigma, far)[0]
    expo = _upper_exponent(float(sigma), float(n), far)
    with np.errstate(invalid="ignore", over="ignore"):
        sl = np.diff(expo, axis=1) / np.diff(lam)[None, :]
    sl = np.maximum.accumulate(np.where(np.isnan(sl), np.inf, sl), axis=1)
    keys = np.asarray(np.arange(expo.shape[0])[:, None] + _slope_key(sl), dtype=np.float64).ravel()
    expo_pad = np.pad(expo, ((0, 0), (2, 2)), constant_values=np.inf).ravel()
    lam_pad = np.pad(lam, 2, mode="edge")
    return keys, expo_pad, lam_pad


def _slope_key(v: FArr) -> FArr:
    """A monotone map of the real line into [0.01, 0.99] (distinct for distinct moderate v)."""
    with np.errstate(invalid="ignore"):
        return np.asarray(0.5 + np.clip(np.sign(v) * np.log1p(np.abs(v)) / 1500.0, -0.49, 0.49),
                          dtype=np.float64)


_AROUND = np.arange(-2, 3)  # the located minimiser and two neighbours each side


def upper_tail_h0(sigma: float, n: float, x: Any, far: bool = False) -> FArr:
    """Upper bound on P0[sum_{j<=n}(Y_j - 1) > x] for x > 0 (truncated Chernoff)."""
    lam, _, b, Qb, D2, _ = _mgf_tables(sigma, far)
    x = np.atleast_1d(np.asarray(x, dtype=float))
    nb, nl = Qb.size, lam.size
    # the minimum over lam of expo[b, l] - lam_l x (the same as over the whole table: tested), at
    # the minimiser located through the chord slopes (convexity) and two neighbours each side
    # (round-off in the slopes); every (b, lam) pair is a valid Chernoff bound in any case
    keys, expo_pad, lam_pad = _slope_keys(float(sigma), float(n), far)
    rows = np.arange(nb)
    q = rows[None, :] + _slope_key(x)[:, None]                             # (nx, B)
    pos = np.searchsorted(keys, q.ravel()).reshape(q.shape) - rows[None, :] * (nl - 1)
    li = _AROUND[:, None, None] + (pos + 2)[None, :, :]                   # (5, nx, B), padded index
    e = expo_pad.take(li + rows * (nl + 4)) - lam_pad.take(li) * x[None, :, None]
    emin = np.minimum.reduce(e, axis=0)  # (nx, B); over the leading axis: elementwise, fast
    with np.errstate(over="ignore"):
        tot = n * Qb[None, :] + np.exp(np.minimum(emin, 0.0))
    return np.asarray(np.minimum(1.0, np.min(tot, axis=1) * 1.01), dtype=np.float64)


def upper_tail_h1(sigma: float, M: float, x: Any, far: bool = False) -> FArr:
    """Upper bound on P1[S - M > x] (signal term split off, rest bounded as under H0)."""
    x = np.atleast_1d(np.asarray(x, dtype=float)).ravel()
    out = np.empty(x.size)
    fr = np.linspace(0.02, 0.98, 49)
    # the split x = (x - xr) + xr at 49 fractions, for up to 64 points per upper_tail_h0 call
    # (each value is that of the point on its own: the bound works row by row)
    for i0 in range(0, x.size, 64):
        xi = x[i0:i0 + 64, None]
        xr = fr[None, :] * xi
        sig_tail = _ndtr(0.5 / sigma - sigma * np.log1p(xi - xr))  # P[wY - 1 > xi - xr]
        rest = (upper_tail_h0(sigma, M - 1.0, xr.ravel(), far).reshape(xr.shape) if M > 1
                else np.zeros_like(xr))
        out[i0:i0 + 64] = np.minimum(1.0, np.min(sig_tail + rest, axis=1))
    return out


@memoize("joint tail exponents", maxsize=64)
def _joint_exponent(sigma: float, M: float, far: bool = False) -> FArr:
    """(M - 1) (log E e^{lam min(Y, b)} - lam) + log E[Y e^{lam min(Y, b)}] - lam on the (b, lam)
    table (x-independent part of :func:`upper_tail_h1_joint`), +inf where the table has no entry."""
    lam, _, _, _, _, _, _, Km1 = _all_tables(sigma, far)
    with np.errstate(invalid="ignore", over="ignore"):
        expo = _upper_exponent(sigma, M - 1.0, far) + (np.log1p(Km1) - lam[None, :])
    return np.asarray(np.where(np.isfinite(Km1), expo, np.inf), dtype=np.float64)


def _table_bound(expo: FArr, lam: FArr, trunc: FArr, x: FArr) -> FArr:
    """min(1, 1.01 min over the (b, lam) table of trunc[b] + e^{min(0, expo[b, lam] - lam x)}),
    for each x (by chunks of 64 points: the whole table is scanned)."""
    out = np.empty(x.size)
    for i0 in range(0, x.size, 64):
        xi = x[i0:i0 + 64]
        e = np.min(expo[None, :, :] - lam[None, None, :] * xi[:, None, None], axis=2)  # (nx, B)
        with np.errstate(over="ignore"):
            tot = trunc[None, :] + np.exp(np.minimum(e, 0.0))
        out[i0:i0 + 64] = np.minimum(1.0, np.min(tot, axis=1) * 1.01)
    return out


def upper_tail_h0_scan(sigma: float, n: float, x: Any) -> FArr:
    """:func:`upper_tail_h0` (default table) by a scan of the whole (b, lam) table: the same numbers
    (its minimiser search finds the table minimum), without that search's set-up; for a few points."""
    lam, _, _, Qb, _, _ = _mgf_tables(sigma, False)
    return _table_bound(_upper_exponent(float(sigma), float(n)), lam, n * Qb,
                        np.atleast_1d(np.asarray(x, dtype=float)).ravel())


def upper_tail_h1_joint(sigma: float, M: float, x: Any, far: bool = False) -> FArr:
    """Upper bound on P1[S - M > x] for x > 0 from one truncated Chernoff bound of the whole sum.

    Under H1 the sum is S = V + Y_2 + ... + Y_M with V size-biased (E g(V) = E[Y g(Y)]),
    independent.  Truncating every summand at the same level b, for every lam >= 0:

        P1[S > M + x] <= P[V > b] + (M - 1) P[Y > b]
                         + E[Y e^{lam min(Y, b)}] (E e^{lam min(Y, b)})^(M - 1) e^{-lam (M + x)}

    (on the event that no summand exceeds b the sum equals the truncated one; Markov's inequality
    for e^{lam (truncated sum)}), with P[V > b] = E[Y 1{Y > b}] = T_b.  Unlike the split of
    :func:`upper_tail_h1` (the size-biased summand bounded on its own), the single large jump is
    paid for once: at sigma = 1, M = 100 the bound reaches 1e-13 near x = 3100 instead of 5800.
    The minimum over the whole (b, lam) table is taken (each pair is a valid bound; x factor 1.01
    for rounding, as in :func:`upper_tail_h0`)."""
    lam, _, _, Qb, _, _, Tb, _ = _all_tables(sigma, far)
    expo = _joint_exponent(float(sigma), float(M), far)
    return _table_bound(expo, lam, Tb + (M - 1.0) * Qb, np.atleast_1d(np.asarray(x, dtype=float)).ravel())


def upper_tail_h1_window(sigma: float, M: float, x: Any, tail: float) -> FArr:
    """Upper bound on P1[S - M > x] (x > 0) for a window search against the level ``tail``: the
    joint bound (:func:`upper_tail_h1_joint`), and the smaller split bound (:func:`upper_tail_h1`)
    wherever the joint one misses ``tail`` and the split one might meet it.

    Every value is a valid bound; the skipping only saves time.  The split bound is skipped at x
    where it is certainly above ``tail``: its value min over fr of sig(x - fr x) + rest(fr x)
    (both non-increasing) is at least min(sig(0.49 x), rest(0.51 x)) (fractions fr <= 0.5 have
    rest(fr x) >= rest(0.51 x), the others sig(x - fr x) >= sig(0.49 x)), one evaluation of each."""
    x = np.atleast_1d(np.asarray(x, dtype=float)).ravel()
    out = upper_tail_h1_joint(sigma, M, x)
    miss = np.nonzero(out > tail)[0]
    if miss.size and M > 1:
        xm = x[miss]
        sig_lb = _ndtr(0.5 / sigma - sigma * np.log1p(0.49 * xm))
        rest_lb = upper_tail_h0_scan(sigma, M - 1.0, 0.51 * xm)
        maybe = miss[np.minimum(sig_lb, rest_lb) <= tail]
        if maybe.size:
            out[maybe] = np.minimum(out[maybe], upper_tail_h1(sigma, M, x[maybe]))
    return out


def spread_along_bound(tot: float, l_xhi: float,
                       survival: Callable[[FArr], FArr]) -> list[tuple[float, float]]:
    """Mass above a window (at most ``tot``) as (loss, mass) pairs under a certified survival bound.

    ``survival(losses)`` bounds the mass whose loss exceeds each of ``losses`` (an upper-tail bound
    at the thresholds those losses map to).  On a grid of losses from ``l_xhi`` in steps of 0.05,
    the mass B(l_k) - B(l_{k+1}) is placed at l_{k+1} (its upper end), in chunks of 50 points until
    the bound is below 1e-25 of ``tot``; what remains beyond the last point stays with the caller
    (at +inf).  Moving mass up only raises delta, so the upper bound stays certified.
    """
    if not tot > 1e-10:
        return []  # negligible next to any delta asked for (E * tot at +inf): keep it there
    losses = np.empty(0)
    B = np.empty(0)
    for k in range(16):
        lk = np.asarray(l_xhi + 0.05 * np.arange(50 * k + 1, 50 * k + 51), dtype=np.float64)
        losses = np.concatenate([losses, lk])
        B = np.concatenate([B, survival(lk)])
        if B[-1] < 1e-25 * tot:
            break
    B = np.minimum.accumulate(np.minimum(B, tot))  # a survival function is non-increasing
    masses = -np.diff(np.concatenate([[tot], B]))
    keep = masses > 0
    return [(float(lv), float(mv)) for lv, mv in zip(losses[keep], masses[keep])]



def extend_cdf_brackets(sigma: float, M: float, xlo: float, xhi: float, y: FArr, lo0: FArr, hi0: FArr,
                        lo1: FArr, hi1: FArr) -> tuple[FArr, FArr, FArr, FArr]:
    """CDF brackets of x = S - M (H0: ``lo0, hi0``; H1: ``lo1, hi1``, each computed at y clipped to
    the served range [xlo, xhi]) made valid at every ``y``, clipped to [0, 1].

    Beyond the range a CDF lies between its value at the range's end and 0 or 1: below xlo the
    lower ends drop to 0; above xhi the upper ends rise to 1 and the lower ends are raised to
    1 - (the rigorous upper tail bounds at y).  The arrays are modified in place."""
    above = y > xhi
    if np.any(above):
        ya = np.minimum(y[above], 1e300)
        hi0[above] = 1.0
        hi1[above] = 1.0
        lo0[above] = np.maximum(lo0[above], 1.0 - upper_tail_h0(sigma, M, ya))
        lo1[above] = np.maximum(lo1[above], 1.0 - upper_tail_h1(sigma, M, ya))
    below = y < xlo
    lo0[below] = 0.0
    lo1[below] = 0.0
    return (np.clip(lo0, 0.0, 1.0), np.clip(hi0, 0.0, 1.0),
            np.clip(lo1, 0.0, 1.0), np.clip(hi1, 0.0, 1.0))
