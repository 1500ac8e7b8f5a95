"""Plain numpy/scipy implementations of the same formulas, the way a user would write them.

These are the baselines the compiled kernels are measured against (same inputs,
same run).  They are straightforward on purpose: one numpy operation per formula
step, each allocating a temporary.
"""
import numpy as np
from scipy import optimize, special

B = 0.4748
S2P = np.sqrt(2 * np.pi)
S2EP = np.sqrt(2 * np.e * np.pi)


def delta_min_numpy(sigma, rounds, exact=True):
    """Six-term delta_min of Theorem 3.1 (docs/theorem31.md) in numpy + scipy.special."""
    y = 1.0 / sigma**2
    w = np.exp(y)
    e = np.expm1(y)
    if exact:
        r = 2 * np.sqrt(2) * sigma
        rho3 = w**3 * special.erf(5 / r) - 3 * w * special.erf(3 / r) + 4 * special.erf(1 / r)
        coef = rho3 / e**2
    else:
        coef = (w**3 + 4) / e**2
    mu = np.sqrt(e / (rounds - 1))
    t1 = 2 * B * coef * mu
    t2 = mu / S2P
    t3 = (1 / (4 * S2P) + (1 + w / (1 - 1 / w)) / (2 * S2EP)) * mu**2
    t4 = mu**3 / (4 * S2EP)
    t5 = mu**4 / (32 * S2EP)
    L = np.log(rounds)
    t6 = 4.52 / (2.88 * np.sqrt(L) - 2.41 / np.sqrt(L)) * rounds ** (-25 / 24)
    return t1 + t2 + t3 + t4 + t5 + t6


def valid_numpy(sigma, rounds, delta, exact=True):
    """Condition (2) at delta, M >= 3 and sigma^2 ln M >= 3 (docs/theorem31.md)."""
    y = 1.0 / sigma**2
    e = np.expm1(y)
    if exact:
        r = 2 * np.sqrt(2) * sigma
        w = np.exp(y)
        coef = (w**3 * special.erf(5 / r) - 3 * w * special.erf(3 / r) + 4 * special.erf(1 / r)) / e**2
    else:
        coef = (np.exp(3 * y) + 4) / e**2
    mu = np.sqrt(e / (rounds - 1))
    rhs = 0.5 - special.ndtr(-e / 2)
    return (B * coef * mu + delta <= rhs) & (rounds >= 3) & (sigma**2 * np.log(rounds) >= 3)


def delta_bound_numpy(sigma, rounds, exact=True):
    """delta_min where Theorem 3.1 applies (condition (2) at delta_min), NaN elsewhere."""
    d = delta_min_numpy(sigma, rounds, exact)
    return np.where(valid_numpy(sigma, rounds, d, exact), d, np.nan)


def rounds_brentq(sigma, delta, exact=True):
    """M_exact the way a user would: brentq on the real-valued conditions, then ceil."""

    def g(m):
        d = delta_min_numpy(sigma, m, exact)
        return max(d - delta, 0.0) if valid_numpy(sigma, m, d, exact) else 1.0

    hi = 10.0
    while g(hi) > 0:
        hi *= 4
    lo = hi / 4 if hi > 10 else 3.0
    root = optimize.brentq(lambda m: g(m) - 1e-300, lo, hi, xtol=0.5, rtol=1e-15)
    m = float(np.ceil(root))
    while m > 3 and g(m - 1) <= 0:  # brentq stops within xtol: settle the integer
        m -= 1
    while g(m) > 0:
        m += 1
    return m
