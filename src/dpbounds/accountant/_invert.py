"""Root finding of the exact accountants (private).

* :func:`bisect` -- the feasible end of a monotone threshold search (windows, tail levels);
* :func:`invert_cdf` -- safeguarded Newton for thresholds of a law's CDF (trade-off curve);
* :func:`invert` -- a certified epsilon bracket from a delta-bracket function.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

__all__ = ["bisect", "invert_cdf", "invert"]


def bisect(fun: Callable[[float], float], lo: float, hi: float, target: float,
            iters: int = 60, log: bool = False) -> float:
    """Smallest/largest x with fun(x) <= target, fun monotone; returns the feasible end."""
    # assumes fun(hi) <= target < fun(lo)
    for _ in range(iters):
        mid = math.sqrt(lo * hi) if log else 0.5 * (lo + hi)
        if fun(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi



def invert_cdf(law: Any, grid: NDArray[np.float64], g0: NDArray[np.float64],
                k: NDArray[np.intp], tg: NDArray[np.float64]) -> NDArray[np.float64]:
    """x with G0(x) = tg inside grid cells [k-1, k]: safeguarded Newton (density from the same series)."""
    lo = grid[k - 1].copy()
    hi = grid[k].copy()
    glo, ghi = g0[k - 1], g0[k]
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(ghi > glo, lo + (hi - lo) * (tg - glo) / (ghi - glo), 0.5 * (lo + hi))
    act = np.arange(k.size)
    for _ in range(40):
        xa = x[act]
        gx, _, dx = law.wrapped_cdf_pair(xa, density=True)
        low = gx < tg[act]
        lo[act] = np.where(low, xa, lo[act])
        hi[act] = np.where(low, hi[act], xa)
        with np.errstate(divide="ignore", invalid="ignore"):
            xn = xa - (gx - tg[act]) / dx
        bad = ~np.isfinite(xn) | (xn <= lo[act]) | (xn >= hi[act])
        xn = np.where(bad, 0.5 * (lo[act] + hi[act]), xn)
        hit = np.abs(gx - tg[act]) <= 4e-16  # xa itself solves it: keep xa
        done = hit | (np.abs(xn - xa) <= 1e-13 * np.maximum(1.0, np.abs(xa)))
        x[act] = np.where(hit, xa, xn)
        act = act[~done]
        if act.size == 0:
            break
    return x



def invert(fn: Callable[[float], tuple[float, float]], d: float) -> tuple[float, float]:
    """eps bracket from a delta-bracket function fn(eps) -> (lo, hi), both non-increasing.

    Upper end: an eps with hi(eps) <= d (so the true eps(delta) <= it); lower end: an eps with
    lo(eps) >= d (so the true eps(delta) >= it), or 0.  Found by an Illinois root search on
    the bracket midpoint followed by outward steps that are checked, so the certification does
    not depend on the root search.
    """
    cache: dict[float, tuple[float, float]] = {}

    def f(e: float) -> tuple[float, float]:
        if e not in cache:
            cache[e] = fn(e)
        return cache[e]

    if f(0.0)[1] <= d:
        return 0.0, 0.0
    # bracket the midpoint root
    a, b = 0.0, 1.0
    while sum(f(b)) / 2 > d:
        a, b = b, 2 * b
        if b > 1e4:  # no finite epsilon below 1e4 (the caller says why)
            return (a if f(a)[0] >= d else 0.0), math.inf
    # Illinois on g(e) = log(mid(e)) - log(d) (smooth, nearly linear in e)
    def g(e: float) -> float:
        m = sum(f(e)) / 2
        return math.log(max(m, 1e-300)) - math.log(d)

    ga, gb = g(a), g(b)
    side = 0
    root = math.nan
    for _ in range(60):
        c = (a * gb - b * ga) / (gb - ga) if gb != ga else 0.5 * (a + b)
        if not (a < c < b):
            c = 0.5 * (a + b)
        gc = g(c)
        fc = f(c)
        if abs(gc) <= 0.05 * (fc[1] - fc[0]) / max(sum(fc) / 2, 1e-300):
            root = c  # within the delta bracket's own fuzz: the checked steps below finish it
            break
        if gc > 0:
            a, ga = c, gc
            if side == 1:
                gb /= 2
            side = 1
        else:
            b, gb = c, gc
            if side == -1:
                ga /= 2
            side = -1
        if b - a <= 1e-13 * b:
            break
    if not math.isfinite(root):
        root = 0.5 * (a + b)
    # outward, checked steps, starting at the eps-width the delta bracket implies at the root
    fa, fb, fr = f(a), f(b), f(root)
    slope = abs(sum(fa) - sum(fb)) / (2.0 * (b - a)) if b > a else 0.0
    step0 = max(1e-12 * root, 1e-15)
    if slope > 0.0 and math.isfinite(slope):
        step0 = max(step0, 0.6 * (fr[1] - fr[0]) / slope)
    step = step0
    e_up = root
    for _ in range(200):
        if f(e_up)[1] <= d:
            break
        e_up += step
        step *= 2
        if e_up > 2e4:
            e_up = math.inf
            break
    else:
        e_up = math.inf
    step = step0
    e_lo = root
    for _ in range(200):
        if e_lo <= 0:
            e_lo = 0.0
            break
        if f(e_lo)[0] >= d:
            break
        e_lo = max(e_lo - step, 0.0)
        step *= 2
    return float(e_lo), float(e_up)
