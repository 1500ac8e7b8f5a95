"""Independent references for the exact random-allocation accountant, shared by its tests:
scipy quadrature of the M = 2 integrals and seeded Monte Carlo of the lognormal sum."""
import math

import numpy as np

from dpbounds.accountant import exact_max_gap, tradeoff_exact


def tv_m2_quadrature(sigma):
    # TV = E[(1 - (Y1 + Y2)/2)^+] = int n(u) [c Phi(u_c) - Phi(u_c - s)/2] du, c = 1 - y1/2
    from scipy import integrate, stats

    s = 1 / sigma
    m = -s * s / 2

    def inner(u):
        y1 = math.exp(s * u + m)
        c = 1 - y1 / 2
        if c <= 0:
            return 0.0
        uc = (math.log(2 * c) - m) / s
        return stats.norm.pdf(u) * (c * stats.norm.cdf(uc) - 0.5 * stats.norm.cdf(uc - s))

    umax = (math.log(2) - m) / s
    val, _ = integrate.quad(inner, -12, umax, epsabs=1e-15, epsrel=1e-13, limit=200)
    return val


def mc_sum(sigma, M, n, seed):
    rng = np.random.default_rng(seed)
    S = np.zeros(n)
    z = np.empty(n)
    for _ in range(M):  # in place: M = 1000 with n = 1e6 draws 1e9 normals
        rng.standard_normal(n, out=z)
        z *= 1.0 / sigma
        z -= 0.5 / sigma ** 2
        np.exp(z, out=z)
        S += z
    return S


def assert_matches_monte_carlo(sigma, M, n, seed, a_values, err_max=None):
    """TV and f(a) against seeded Monte Carlo within 4.5 SE (plus the returned error bound).

    ``err_max``: also require the returned error bounds to be at most this.
    """
    S = mc_sum(sigma, M, n, seed=seed)
    L = S / M
    v = np.maximum(1 - L, 0)
    tv, e_tv = exact_max_gap(sigma, M, return_error=True)
    if err_max is not None:
        assert e_tv <= err_max
    assert abs(tv - v.mean()) <= 4.5 * v.std() / math.sqrt(n)
    # trade-off: f(a) = E0[L 1{L <= h}] at the empirical threshold h of a few a
    for a in a_values:
        h = np.quantile(L, 1 - a)
        a_emp = float(np.mean(L > h))
        f_emp = L * (L <= h)
        f, err = tradeoff_exact(a_emp, sigma, M)
        if err_max is not None:
            assert err <= err_max
        # SE of the mean plus the effect of the threshold's sampling error (slope h)
        se_f = f_emp.std() / math.sqrt(n) + h * math.sqrt(a * (1 - a) / n)
        assert abs(f - f_emp.mean()) <= 4.5 * se_f + err


def m2_tradeoff_quadrature(sigma, c):
    # a = P0[Y1 + Y2 > c], f = P1[S <= c] = E0[Y1 1{S <= c}] (symmetry), as 1-D integrals
    from scipy import integrate, stats

    s = 1 / sigma
    m = -s * s / 2
    umax = (math.log(c) - m) / s

    def inner(u, weight):
        y1 = math.exp(s * u + m)
        uc = (math.log(c - y1) - m) / s
        return stats.norm.pdf(u) * stats.norm.cdf(uc) * (y1 if weight else 1.0)

    opts = dict(epsabs=1e-15, epsrel=1e-13, limit=400)
    cdf0 = integrate.quad(inner, -14, umax, args=(False,), **opts)[0]
    f = integrate.quad(inner, -14, umax, args=(True,), **opts)[0]
    return 1 - cdf0, f
