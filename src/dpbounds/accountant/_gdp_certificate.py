"""The smallest Gaussian-DP mu under a certified trade-off curve (private).

Given boxes along a convex, non-increasing trade-off curve f -- points provably under it
(``f(a_lo[i]) >= f_lo[i]``) and over it (``f(a_hi[i]) <= f_hi[i]``) -- f is bounded below on
[a_lo[i], a_lo[i+1]] by the secants through neighbouring boxes extended (a convex function lies
above its chords' extensions): the left one through (a_hi[i-1], f_hi[i-1]) and (a_lo[i], f_lo[i]),
the right one through (a_lo[i+1], f_lo[i+1]) and (a_hi[i+2], f_hi[i+2]), each with the error-bar
ends that make it lowest.  G_mu minus that piecewise-linear envelope is convex on each linear
piece, so G_mu <= envelope holds on the piece iff it holds at the piece's ends; G_mu(p) <= v is
mu >= Phi^{-1}(1 - p) - Phi^{-1}(v).
"""
from __future__ import annotations

import numpy as np

from dpbounds._ufuncs import ndtri, ndtri_complement  # type: ignore[import-not-found, unused-ignore]
from dpbounds.accountant._laws.interface import FArr

__all__ = ["certified_gdp_mu", "A_MIN"]

A_MIN = 1e-10  # the certificate covers a in [A_MIN, 1 - A_MIN]


def certified_gdp_mu(a_lo: FArr, a_hi: FArr, f_lo: FArr, f_hi: FArr, certified: bool = True) -> float:
    """Smallest mu with G_mu <= f on [A_MIN, 1 - A_MIN] (``certified=False``: only at the points)."""
    order = np.argsort(a_lo, kind="stable")
    a_lo, a_hi, f_lo, f_hi = a_lo[order], a_hi[order], f_lo[order], f_hi[order]
    lo_end, hi_end = A_MIN, 1.0 - A_MIN
    if not certified:
        keep = (a_lo >= lo_end) & (a_lo <= hi_end)
        pts, env = a_lo[keep], f_lo[keep]
    else:
        a0, a1 = a_lo[:-1], a_lo[1:]          # pieces [a_lo[i], a_lo[i+1]]
        n = a0.size
        sl = np.full(n, np.nan)
        sr = np.full(n, np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = a_lo[1:-1] - a_hi[:-2]
            sl[1:] = np.where(d > 0, (f_lo[1:-1] - f_hi[:-2]) / d, np.nan)
            d = a_hi[2:] - a_lo[1:-1]
            sr[:-1] = np.where(d > 0, (f_hi[2:] - f_lo[1:-1]) / d, np.nan)
        fl0, fl1 = f_lo[:-1], f_lo[1:]

        def envelope(x: FArr) -> FArr:
            left = np.where(np.isnan(sl), -np.inf, fl0 + sl * (x - a0))
            right = np.where(np.isnan(sr), -np.inf, fl1 + sr * (x - a1))
            # f is non-increasing: f(x) >= f(a_lo[i+1]) >= f_lo[i+1] on the piece
            return np.asarray(np.maximum(np.maximum(np.maximum(left, right), fl1), 0.0), dtype=np.float64)

        with np.errstate(divide="ignore", invalid="ignore"):
            xs = (fl1 - fl0 + sl * a0 - sr * a1) / (sl - sr)  # where the secants cross
        b0 = np.maximum(a0, lo_end)
        b1 = np.minimum(a1, hi_end)
        live = b0 < b1
        xs = np.where(np.isfinite(xs) & (xs > b0) & (xs < b1), xs, b0)
        pieces = [(b0, live), (b1, live), (xs, live)]
        pts = np.concatenate([p[m] for p, m in pieces])
        env = np.concatenate([envelope(p)[m] for p, m in pieces])
    env = np.clip(env, 1e-300, 1.0)
    mus = np.asarray(ndtri_complement(pts), dtype=float) - np.asarray(ndtri(env), dtype=float)
    return float(np.nanmax(mus))
