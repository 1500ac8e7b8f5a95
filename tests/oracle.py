"""Independent high-precision reference values (mpmath), computed by the tests.

Nothing here calls dpbounds: each function evaluates the mathematical definition
(docs/theorem31.md) at high precision, treating its double inputs as exact binary values.
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np

DPS = 60
B = mp.mpf("0.4748")
ULP1 = 2.0**-52


def ulp_error(got: float, ref: mp.mpf) -> float:
    """|got - ref| in units of ref's relative epsilon (2^-52 * |ref|)."""
    if ref == 0:
        return 0.0 if got == 0 else float("inf")
    with workdps():  # independent of the ambient mpmath precision (other tests change it)
        return float(abs(mp.mpf(got) - ref) / (abs(ref) * mp.mpf(ULP1)))


def rel_error(got: float, ref: mp.mpf) -> float:
    if ref == 0:
        return 0.0 if got == 0 else float("inf")
    with workdps():
        return float(abs(mp.mpf(got) - ref) / abs(ref))


def workdps(dps: int = DPS):
    return mp.workdps(dps)


# ---------------------------------------------------------------- normal
def ndtr(x: float) -> mp.mpf:
    with workdps():
        return mp.ncdf(mp.mpf(x))


def log_ndtr(x: float) -> mp.mpf:
    with workdps():
        x = mp.mpf(x)
        return mp.log1p(-mp.ncdf(-x)) if x > 0 else mp.log(mp.ncdf(x))


def ndtri(p: float) -> mp.mpf:
    """Solve Phi(x) = p in log space (handles subnormal p)."""
    with workdps():
        p = mp.mpf(p)
        if p == 0.5:
            return mp.mpf(0)
        if p > 0.5:
            return -ndtri(float(1 - p)) if 1 - p == mp.mpf(float(1 - p)) else _ndtri_mp(p)
        return _ndtri_mp(p)


def _ndtri_mp(p: mp.mpf) -> mp.mpf:
    lp = mp.log(p)
    x0 = -mp.sqrt(2) * mp.erfinv(1 - 2 * p) if p > mp.mpf("1e-30") else -mp.sqrt(-2 * lp - mp.log(-4 * mp.pi * lp))
    return mp.findroot(lambda x: mp.log(mp.ncdf(x)) - lp, x0)


# ---------------------------------------------------------------- lognormal Y = exp(X/s - 1/(2 s^2))
def _w(sigma: float):
    s = mp.mpf(sigma)
    return mp.exp(1 / s**2), mp.expm1(1 / s**2), s


def variance(sigma: float) -> mp.mpf:
    with workdps():
        return _w(sigma)[1]


def mu3(sigma: float) -> mp.mpf:
    with workdps():
        w, e, _ = _w(sigma)
        return (w + 2) * e**2


def mu4(sigma: float) -> mp.mpf:
    with workdps():
        w, e, _ = _w(sigma)
        return (w**4 + 2 * w**3 + 3 * w**2 - 3) * e**2


def rho3_closed(sigma: float) -> mp.mpf:
    """Proposition D.2 closed form at 60+ digits (cancellation is harmless at this precision)."""
    with workdps(DPS + 30):
        w, _, s = _w(sigma)
        r = 2 * mp.sqrt(2) * s
        return +(w**3 * mp.erf(5 / r) - 3 * w * mp.erf(3 / r) + 4 * mp.erf(1 / r))


def rho3_quad(sigma: float) -> mp.mpf:
    """E|Y - 1|^3 by direct quadrature over X ~ N(0,1), split at the kink X = 1/(2 sigma)."""
    with workdps(40):
        s = mp.mpf(sigma)
        b = 1 / (2 * s)

        def f(x):
            y = mp.exp(x / s - 1 / (2 * s**2))
            return abs(y - 1) ** 3 * mp.npdf(x)

        return mp.quad(f, [-mp.inf, b - 4, b, b + 4, mp.inf])


def coef_simplified(sigma: float) -> mp.mpf:
    with workdps():
        w, e, _ = _w(sigma)
        return (w**3 + 4) / e**2


def coef_exact(sigma: float) -> mp.mpf:
    with workdps(DPS + 30):
        return rho3_closed(sigma) / _w(sigma)[1] ** 2


# ---------------------------------------------------------------- Theorem 3.1
def t31_terms(sigma: float, rounds: float, coefficient: str = "simplified") -> list[mp.mpf]:
    with workdps(DPS + 30):
        w, e, s = _w(sigma)
        M = mp.mpf(rounds)
        coef = coef_simplified(sigma) if coefficient == "simplified" else coef_exact(sigma)
        mu = mp.sqrt(e / (M - 1))
        s2p, s2ep = mp.sqrt(2 * mp.pi), mp.sqrt(2 * mp.e * mp.pi)
        L = mp.log(M)
        return [
            2 * B * coef * mu,
            mu / s2p,
            (1 / (4 * s2p) + (1 + w / (1 - 1 / w)) / (2 * s2ep)) * mu**2,
            mu**3 / (4 * s2ep),
            mu**4 / (32 * s2ep),
            mp.mpf("4.52") / (mp.mpf("2.88") * mp.sqrt(L) - mp.mpf("2.41") / mp.sqrt(L)) * M ** (mp.mpf(-25) / 24),
        ]


def delta_min(sigma: float, rounds: float, coefficient: str = "simplified") -> mp.mpf:
    return mp.fsum(t31_terms(sigma, rounds, coefficient))


def condition2_margin(sigma: float, rounds: float, delta: float | None, coefficient: str = "simplified") -> mp.mpf:
    """RHS - LHS of condition (2); >= 0 where it holds. delta None -> at delta_min."""
    with workdps(DPS + 30):
        w, e, s = _w(sigma)
        M = mp.mpf(rounds)
        coef = coef_simplified(sigma) if coefficient == "simplified" else coef_exact(sigma)
        mu = mp.sqrt(e / (M - 1))
        d = delta_min(sigma, rounds, coefficient) if delta is None else mp.mpf(delta)
        rhs = mp.mpf(1) / 2 - mp.ncdf(-e / 2)
        return rhs - (B * coef * mu + d)


def theorem31_valid(sigma: float, rounds: float, delta: float | None, coefficient: str = "simplified") -> bool:
    if rounds < 3:
        return False
    with workdps():
        if mp.mpf(sigma) ** 2 * mp.log(rounds) < 3:
            return False
    if condition2_margin(sigma, rounds, delta, coefficient) < 0:
        return False
    return delta is None or delta_min(sigma, rounds, coefficient) <= delta


def rounds_closed_form(sigma: float, delta: float, coefficient: str = "simplified") -> mp.mpf:
    with workdps(DPS + 30):
        w, e, s = _w(sigma)
        coef = coef_simplified(sigma) if coefficient == "simplified" else coef_exact(sigma)
        r = (2 * B * coef * mp.sqrt(e) + mp.sqrt(e / (2 * mp.pi))) / mp.mpf(delta)
        return 1 + r**2


def as_array(values) -> np.ndarray:
    return np.array([float(v) for v in values])

# ---------------------------------------------------------------- trade-off integrals
# (formulas: docs/tradeoff.md).  An arbitrary-precision integrand and tanh-sinh quadrature
# (mpmath.quad) split at the integrand's switch point and at geometric distances from it, with its
# own error estimate checked by the callers.  30 digits by default: the quadrature is the costly part.

TRADEOFF_DPS = 30


def ndtri_complement(a):
    """Phi^{-1}(1 - a) at the current precision (root of log Phi(-x) = log a)."""
    a = mp.mpf(a)
    if a == mp.mpf(1) / 2:
        return mp.mpf(0)
    # start from the erfinv form when 1 - 2a is representable, refine in log space
    if a > mp.mpf("1e-10") and a < 1 - mp.mpf("1e-10"):
        x0 = mp.sqrt(2) * mp.erfinv(1 - 2 * a)
    elif a < mp.mpf(1) / 2:
        la = -mp.log(a)
        x0 = mp.sqrt(2 * la - mp.log(2 * mp.pi * (2 * la - mp.log(4 * mp.pi * la))))
    else:
        return -ndtri_complement(1 - a)
    return mp.findroot(lambda t: mp.log(mp.ncdf(-t)) - mp.log(a), x0)


def _setup(a, sigma, rounds):
    a, sigma, M = mp.mpf(a), mp.mpf(sigma), mp.mpf(rounds)
    w1 = mp.expm1(1 / sigma**2)
    D = mp.sqrt((M - 1) * w1)
    x = ndtri_complement(a)
    s = mp.sqrt(M / (M - 1))
    return a, sigma, M, w1, D, x, s


def _points(sigma, D, xs, lo=-40, hi=40):
    t = 1 + xs * D
    if t > 0:
        zc = sigma * mp.log(t) - 1 / (2 * sigma)
        wz = sigma / max(abs(xs + 1 / D), 1)
    else:
        zc = sigma * mp.log(D) - 1 / (2 * sigma)
        wz = sigma
    pts = {mp.mpf(lo), mp.mpf(hi)}
    for k in range(-6, 7, 2):
        for sgn in (-1, 1):
            p = zc + sgn * wz * mp.mpf(2) ** k
            if lo < p < hi:
                pts.add(p)
    if lo < zc < hi:
        pts.add(zc)
    # where the Phi argument crosses a few levels (sharp features at small sigma)
    for lev in (8, 2, 0, -1, -4, -16):
        t = 1 + D * (xs - lev)
        if t > 0:
            p = sigma * mp.log(t) - 1 / (2 * sigma)
            if lo < p < hi:
                pts.add(p)
    return sorted(pts)


def _A(z, sigma, D):
    return mp.expm1(z / sigma + 1 / (2 * sigma**2)) / D


def tradeoff_clt(a, sigma, rounds, truncated=False, dps=TRADEOFF_DPS):
    """(value, quad error estimate) of the CLT integral (docs/tradeoff.md)."""
    with mp.workdps(dps):
        a, sigma, M, w1, D, x, s = _setup(a, sigma, rounds)
        xs = x * s
        hi = 40
        if truncated:
            h = 1 + x * mp.sqrt(w1 / M)
            if h <= 0:
                return mp.mpf(0), mp.mpf(0)
            hi = min(40, sigma * mp.log(M * h) - 1 / (2 * sigma))
        def f(z):
            g = xs - _A(z, sigma, D)
            return mp.ncdf(g) * mp.npdf(z) if g > -60 else mp.mpf(0)   # Phi(-60) < 1e-780
        val, err = mp.quad(f, _points(sigma, D, xs, hi=hi), error=True, maxdegree=8)
        return val, err


def tradeoff_clt_slope(a, sigma, rounds, dps=TRADEOFF_DPS):
    with mp.workdps(dps):
        a, sigma, M, w1, D, x, s = _setup(a, sigma, rounds)
        xs = x * s
        f = lambda z: mp.npdf(xs - _A(z, sigma, D)) * mp.npdf(z)
        val, err = mp.quad(f, _points(sigma, D, xs), error=True, maxdegree=8)
        return -s * val / mp.npdf(x), s * err / mp.npdf(x)


def edgeworth_coefs(sigma, n):
    w = mp.exp(1 / mp.mpf(sigma) ** 2)
    g1 = (w + 2) * mp.sqrt(w - 1)
    g2 = w**4 + 2 * w**3 + 3 * w**2 - 6
    return g1 / (6 * mp.sqrt(n)), g2 / (24 * mp.mpf(n))


def edgeworth_p(y, c, d):
    return y - c * (y**2 - 1) - d * (y**3 - 3 * y) + c**2 * (4 * y**3 - 7 * y)


def edgeworth_branch(c, d):
    """Monotone branch (lo, hi) of p through 0 (roots of the quadratic p')."""
    A2, A1, A0 = 12 * c**2 - 3 * d, -2 * c, 1 + 3 * d - 7 * c**2
    assert A0 > 0
    disc = A1**2 - 4 * A2 * A0
    if disc <= 0:
        return -mp.inf, mp.inf
    r = sorted([(-A1 - mp.sqrt(disc)) / (2 * A2), (-A1 + mp.sqrt(disc)) / (2 * A2)])
    if A2 < 0:
        return r[0], r[1]
    return (-mp.inf, r[0]) if r[0] > 0 else (r[1], mp.inf)


def tradeoff_edgeworth(a, sigma, rounds, dps=TRADEOFF_DPS):
    """The Edgeworth-corrected integral (docs/tradeoff.md) with the outer polynomial frozen at its branch ends (as documented)."""
    with mp.workdps(dps):
        a, sigma, M, w1, D, x, s = _setup(a, sigma, rounds)
        cM, dM = edgeworth_coefs(sigma, M)
        c1, d1 = edgeworth_coefs(sigma, M - 1)
        lo, hi = edgeworth_branch(cM, dM)
        lo1, hi1 = edgeworth_branch(c1, d1)
        plo = edgeworth_p(lo, cM, dM) if mp.isfinite(lo) else -mp.inf
        phi = edgeworth_p(hi, cM, dM) if mp.isfinite(hi) else mp.inf
        if not (plo < x < phi):
            return mp.nan, mp.mpf(0)          # not invertible on the monotone branch
        blo, bhi = lo, hi
        if not mp.isfinite(blo):
            blo = mp.mpf(-1)
            while edgeworth_p(blo, cM, dM) > x:
                blo *= 2
        if not mp.isfinite(bhi):
            bhi = mp.mpf(1)
            while edgeworth_p(bhi, cM, dM) < x:
                bhi *= 2
        y = mp.findroot(lambda t: edgeworth_p(t, cM, dM) - x, (blo, bhi), solver="anderson")
        assert lo < y < hi
        ys = y * s

        def f(z):
            u = ys - _A(z, sigma, D)
            u = min(max(u, lo1), hi1)
            return mp.ncdf(edgeworth_p(u, c1, d1)) * mp.npdf(z)

        pts = _points(sigma, D, ys)
        for ub in (lo1, hi1):   # kinks where the outer polynomial is frozen
            if mp.isfinite(ub) and 1 + D * (ys - ub) > 0:
                zk = sigma * mp.log(1 + D * (ys - ub)) - 1 / (2 * sigma)
                if pts[0] < zk < pts[-1]:
                    pts = sorted(set(pts) | {zk})
        val, err = mp.quad(f, pts, error=True, maxdegree=8)
        return val, err


def gaussian_tradeoff(a, mu, dps=TRADEOFF_DPS):
    with mp.workdps(dps):
        return mp.ncdf(ndtri_complement(a) - mp.mpf(mu))


def gdp_delta(eps, mu, dps=TRADEOFF_DPS):
    # the two terms agree to ~log10(1/mu) digits at small mu: that many more
    if 0 < mu < 1:
        dps += int(-math.log10(mu)) + 1
    with mp.workdps(dps):
        eps, mu = mp.mpf(eps), mp.mpf(mu)
        return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)
