"""mpmath oracles for the trade-off integrals (formulas: docs/tradeoff.md).

Independent of the C code: arbitrary-precision integrand, tanh-sinh quadrature
(mpmath.quad) split at the integrand's switch point and at geometric distances
from it, with its own error estimate checked by the callers.
"""
from __future__ import annotations

import math

import mpmath as mp

DPS = 30


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


def tradeoff_clt(a, sigma, rounds, truncated=False, dps=DPS):
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


def tradeoff_clt_slope(a, sigma, rounds, dps=DPS):
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


def tradeoff_edgeworth(a, sigma, rounds, dps=DPS):
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


def gaussian_tradeoff(a, mu, dps=DPS):
    with mp.workdps(dps):
        return mp.ncdf(ndtri_complement(a) - mp.mpf(mu))


def gdp_delta(eps, mu, dps=DPS):
    # the two terms agree to ~log10(1/mu) digits at small mu: that many more
    if 0 < mu < 1:
        dps += int(-math.log10(mu)) + 1
    with mp.workdps(dps):
        eps, mu = mp.mpf(eps), mp.mpf(mu)
        return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)
