"""Binomial log-probabilities with small absolute error for large n (Loader's saddle-point form).

``log C(n, j) + j log p + (n - j) log q`` computed from ``lgamma`` loses about
``lgamma(n) * 2^-52`` absolutely -- 1e-9 at n = 6e5 -- because it subtracts numbers of size
n log n.  Loader's form ("Fast and Accurate Computation of Binomial Probabilities", 2000) writes
the log-probability as small quantities only: Stirling-series remainders and the deviance
``bd0(x, M) = x log(x/M) + M - x``, each computed without cancellation, so the error stays at a
few ulp of the (moderate) log-probability itself.  numpy has no vectorised lgamma; this needs
none except for a 16-entry table.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["log_pmf"]

FArr = NDArray[np.float64]

_LN_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n/e)^n) for n = 1..15: the values are O(1e-2), and
# lgamma at these small arguments is accurate to ~1e-15 absolutely, so the table is too.
_STIRLERR_SMALL = np.array([0.0] + [math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - _LN_SQRT_2PI
                                    for n in range(1, 16)])
_S = (1.0 / 12.0, 1.0 / 360.0, 1.0 / 1260.0, 1.0 / 1680.0, 1.0 / 1188.0)


def _stirlerr(n: FArr) -> FArr:
    """Stirling remainder at integers n >= 1; above 15 the asymptotic series (next term < 1e-16)."""
    small = n <= 15
    m = np.where(small, 16.0, n)
    nn = m * m
    series = (_S[0] - (_S[1] - (_S[2] - (_S[3] - _S[4] / nn) / nn) / nn) / nn) / m
    return np.where(small, _STIRLERR_SMALL[np.clip(n, 0, 15).astype(np.intp)], series)


def _bd0(x: FArr, m: float) -> FArr:
    """Deviance ``x log(x/m) + m - x`` >= 0 without cancellation for x near m."""
    d = x - m
    near = np.abs(d) < 0.1 * (x + m)
    # near m: the series 2x sum_{i>=1} v^(2i+1)/(2i+1) - d v with v = d/(x+m), |v| < 0.1:
    # each term is 100x smaller than the last, so 12 terms reach 1e-24 relative.
    v = np.where(near, d / (x + m), 0.0)
    s = d * v
    ej = 2.0 * x * v
    v2 = v * v
    for i in range(1, 13):
        ej = ej * v2
        s = s + ej / (2 * i + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        far = x * np.log(np.where(near, 1.0, x / m)) + m - x
    return np.where(near, s, far)


def log_pmf(j: FArr, n: int, log_p: float, log_q: float, np_: float, nq: float) -> FArr:
    """log P[Bin(n, p) = j] for integer-valued float ``j`` in [0, n].

    ``log_p``, ``log_q`` are log p and log(1 - p), and ``np_``, ``nq`` are n p and n (1 - p),
    passed in so that a caller with p close to 0 or 1 supplies them without rounding.
    Absolute error of the result <= 1e-14 max(1, |result|) (tested against mpmath
    in tests/accountant/test_composition.py).
    """
    nf = float(n)
    inner = (j > 0) & (j < nf)
    jj = np.where(inner, j, 0.5 * nf)  # any interior value: masked out below
    rest = nf - jj
    lc = _stirlerr(np.asarray(nf)) - _stirlerr(jj) - _stirlerr(rest) - _bd0(jj, np_) - _bd0(rest, nq)
    lf = 2.0 * _LN_SQRT_2PI + np.log(jj) + np.log1p(-jj / nf)
    out = lc - 0.5 * lf
    out = np.where(j == 0, nf * log_q, out)
    return np.asarray(np.where(j == nf, nf * log_p, out), dtype=np.float64)
