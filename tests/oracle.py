"""Independent high-precision reference values (mpmath), computed by the tests.

Nothing here calls dpbounds: each function evaluates the mathematical definition
(docs/theorem31.md) at high precision, treating its double inputs as exact binary values.
"""
from __future__ import annotations

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
