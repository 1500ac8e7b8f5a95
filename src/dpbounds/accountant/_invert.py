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



def invert(fn: Callable[[float], tuple[float, float]], d: float,
           start: tuple[float, float] | None = None) -> tuple[float, float]:
    """eps bracket from a delta-bracket function fn(eps) -> (lo, hi), both non-increasing.

    Upper end: an eps with hi(eps) <= d (so the true eps(delta) <= it); lower end: an eps with
    lo(eps) >= d (so the true eps(delta) >= it), or 0.  The search (on the bracket midpoint) only
    proposes points: each end returned is a point where fn was evaluated and checked, so the
    certification does not depend on the search.

    Search: g(eps) = sqrt(-2 log mid(eps)) - sqrt(-2 log d), nearly linear in eps where delta has a
    Gaussian-like tail; bracketed from eps = 1 (secant extrapolation upwards, eps = 0 below), then
    secant steps through the two latest points, kept inside the bracket (Illinois otherwise).  It
    stops once the next step is within a tenth of the eps-width of the delta bracket; each end is
    then placed where the linear model (the bracket at the last evaluated point, the slope of the
    last secant, 5 % margin) puts hi = d or lo = d, and checked; an end that fails its check is
    stepped outwards with doubling steps.

    ``start`` = (eps0, slope of g at eps0), an approximation of the root (e.g. from a coarse
    table of the law): the search then begins with a Newton step from eps0 with that slope and
    continues by secant steps, under the same stopping rule; should that not settle within a few
    steps, the bracketing search above runs as without ``start`` (the points already evaluated
    are reused).  Like the search, ``start`` only proposes points.
    """
    cache: dict[float, tuple[float, float]] = {}

    def f(e: float) -> tuple[float, float]:
        if e not in cache:
            cache[e] = fn(e)
        return cache[e]

    td = math.sqrt(-2.0 * math.log(d))

    def g(e: float) -> float:
        lo, hi = f(e)
        m = min(max(0.5 * (lo + hi), 1e-300), 1.0)
        return math.sqrt(-2.0 * math.log(m)) - td

    pts: list[tuple[float, float]] = []  # (eps, g) of the search, where 0 < mid < 1 (g is finite)

    def ev(e: float) -> float:
        ge = g(e)
        lo, hi = f(e)
        if 0.0 < 0.5 * (lo + hi) < 1.0:
            pts.append((e, ge))
        return ge

    def proposal() -> float:
        """Root of the interpolant through the latest informative points (3: inverse quadratic, 2: secant)."""
        if len(pts) >= 3:
            (x0, y0), (x1, y1), (x2, y2) = pts[-3:]
            if y0 != y1 and y0 != y2 and y1 != y2:
                return (x0 * y1 * y2 / ((y0 - y1) * (y0 - y2)) + x1 * y0 * y2 / ((y1 - y0) * (y1 - y2))
                        + x2 * y0 * y1 / ((y2 - y0) * (y2 - y1)))
        if len(pts) >= 2 and pts[-1][1] != pts[-2][1]:
            (x1, y1), (x2, y2) = pts[-2:]
            return x2 - y2 * (x2 - x1) / (y2 - y1)
        return math.nan

    def eps_width(e: float, slope_g: float) -> float:
        lo, hi = f(e)
        dd = 0.5 * (lo + hi) * (g(e) + td) * abs(slope_g)  # |d mid / d eps| (mid = e^{-(g+td)^2/2})
        return (hi - lo) / dd if dd > 0.0 else math.inf

    slope = math.nan
    settled = False
    if start is not None and 0.0 < start[0] < 1e4 and 0.0 < start[1] < math.inf:
        # Newton from the approximate root with its approximate slope, then secant steps
        ev(start[0])
        sl = start[1]
        for _ in range(8):
            if not pts:
                break  # eps0 gave no informative point (delta bracket at 0 or 1)
            if len(pts) >= 2 and pts[-1][1] != pts[-2][1]:
                (x1, y1), (x2, y2) = pts[-2:]
                sl = (y2 - y1) / (x2 - x1)
            x2, y2 = pts[-1]
            if not (0.0 < sl < math.inf):
                break
            c = x2 - y2 / sl
            if abs(c - x2) <= 0.1 * eps_width(x2, sl):
                slope, settled = sl, True
                break
            if not (0.0 < c < 1e4) or c in cache:
                break
            n_pts = len(pts)
            ev(c)
            if len(pts) == n_pts:
                break
        if not settled:
            pts.clear()  # the bracketing search below, from scratch (fn's values stay cached)
    if not settled:
        done, slope, a, b = _bracket_search(f, ev, pts, proposal, eps_width, d)
        if done:
            return a, b
    else:
        a, b = pts[-1][0], math.inf
    return _place_ends(f, g, pts, slope, a, b, d, td)


def _bracket_search(f: Callable[[float], tuple[float, float]], ev: Callable[[float], float],
                    pts: list[tuple[float, float]], proposal: Callable[[], float],
                    eps_width: Callable[[float, float], float],
                    d: float) -> tuple[bool, float, float, float]:
    """The bracketing search of :func:`invert`: (True, nan, lo, hi) when it settles the bracket
    itself (eps = 0, or none below 1e4), else (False, slope of the last secant, a, b)."""
    # ---- bracket a < root < b (b = inf until found): g(a) < 0 <= g(b)
    ga = ev(1.0)
    if ga < 0.0:
        a, b, gb = 1.0, math.inf, math.nan
    else:
        b, gb = 1.0, ga
        if f(0.0)[1] <= d:
            return True, math.nan, 0.0, 0.0
        a, ga = 0.0, ev(0.0)
    slope = math.nan
    side = 0
    for _ in range(100):
        c = proposal()
        if len(pts) >= 2 and pts[-1][1] != pts[-2][1]:
            (x1, y1), (x2, y2) = pts[-2:]
            slope = (y2 - y1) / (x2 - x1)
            if a < c < b and abs(c - x2) <= 0.1 * eps_width(x2, slope):
                break  # the next step is far inside the bracket's width: place the ends
        if math.isinf(b):  # still below the root: extrapolate (at most doubling)
            c = min(c, 2.0 * a) if math.isfinite(c) and c > a * (1.0 + 1e-12) else 2.0 * a
            if c > 1e4:  # no finite epsilon below 1e4 (the caller says why)
                return True, math.nan, (a if f(a)[0] >= d else 0.0), math.inf
        elif not (a < c < b) or abs(side) >= 2:
            c = (a * gb - b * ga) / (gb - ga)  # Illinois (regula falsi with the stale end halved)
            if not (a < c < b):
                c = 0.5 * (a + b)
            side = 0
        gc = ev(c)
        if gc < 0.0:
            a, ga = c, gc
            if side > 0:
                gb *= 0.5
            side = side + 1 if side > 0 else 1
        else:
            b, gb = c, gc
            if side < 0:
                ga *= 0.5
            side = side - 1 if side < 0 else -1
        if math.isfinite(b) and b - a <= 1e-13 * b:
            break
    return False, slope, a, b


def _place_ends(f: Callable[[float], tuple[float, float]], g: Callable[[float], float],
                pts: list[tuple[float, float]], slope: float, a: float, b: float, d: float,
                td: float) -> tuple[float, float]:
    """The certified ends of :func:`invert` around the search's last point (each one checked)."""
    # ---- the two ends, from the last evaluated point e_r of the search and the local slope of the
    # bracket: hi(e) ~ hi(e_r) - s (e - e_r), lo(e) ~ lo(e_r) - s (e - e_r); then checked
    e_r = pts[-1][0] if pts else (0.5 * (a + b) if math.isfinite(b) else a)
    lo_r, hi_r = f(e_r)
    s_mid = 0.5 * (lo_r + hi_r) * (g(e_r) + td) * abs(slope) if math.isfinite(slope) else math.nan
    if not (s_mid > 0.0 and math.isfinite(s_mid)) and math.isfinite(b) and b > a:
        fa, fb = f(a), f(b)
        s_mid = abs(sum(fa) - sum(fb)) / (2.0 * (b - a))
    tiny = 1e-15 * max(e_r, 1.0)
    if s_mid > 0.0 and math.isfinite(s_mid):
        up = 1.05 * (hi_r - d) / s_mid + tiny if hi_r > d else 0.0
        down = 1.05 * (d - lo_r) / s_mid + tiny if lo_r < d else 0.0
    else:
        up = down = max(1e-12 * e_r, 1e-15)
    e_up, step = e_r + up, max(up, tiny)
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
    e_lo, step = max(e_r - down, 0.0), max(down, tiny)
    for _ in range(200):
        if e_lo <= 0.0:
            e_lo = 0.0
            break
        if f(e_lo)[0] >= d:
            break
        e_lo = max(e_lo - step, 0.0)
        step *= 2
    return float(e_lo), float(e_up)
