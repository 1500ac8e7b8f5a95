"""A piecewise-linear trade-off function (f-DP object); see docs/tradeoff.md.

:class:`TradeoffCurve` holds the vertices ``(a_i, f_i)`` of a piecewise-linear,
non-increasing trade-off function on [0, 1] and offers: evaluation of f and f^{-1},
symmetrisation (the largest convex function below min{f, f^{-1}}), conversion to the
(eps, delta(eps)) profile and to the tightest mu-GDP it implies, and a plot.

Every operation is EXACT for the piecewise-linear object.  When the vertices sample a
convex curve, the chords lie above that curve, so the object is an upper
approximation of it; sample densely (or sample a lower bound) if a guarantee is needed.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbounds import _ufuncs as _core
from dpbounds import _ufuncs as _uf  # type: ignore[attr-defined, unused-ignore]
from dpbounds._errors import DPBoundsError
from dpbounds._validation import as_float_array, check, check_closed_unit, check_count, scalar_or_array

#: Most uniform points :meth:`TradeoffCurve.from_function` samples (512 MiB per float64 array);
#: a larger ``n`` is refused by name before anything is allocated.
MAX_POINTS = 2 ** 26

__all__ = ["TradeoffCurve"]


#: Smallest normal double: a product below it has lost precision (or is 0) by underflow
_TINY = 2.2250738585072014e-308


def _cross(ox: float, oy: float, ax: float, ay: float, px: float, py: float) -> float:
    """The orientation ``(a - o) x (p - o)``: its sign is exact where a product underflows.

    Near the bottom of the double range the products underflow (2.2e-308 * 1e-300 is 0), which
    would make a strict turn look collinear and drop a hull vertex; there the sign is taken
    from exact rational arithmetic.  Elsewhere it is the float value.
    """
    u1, v2, v1, u2 = ax - ox, py - oy, ay - oy, px - ox
    t1, t2 = u1 * v2, v1 * u2
    if (abs(t1) < _TINY and u1 != 0.0 and v2 != 0.0) or (abs(t2) < _TINY and v1 != 0.0 and u2 != 0.0):
        from fractions import Fraction as Q
        exact = (Q(ax) - Q(ox)) * (Q(py) - Q(oy)) - (Q(ay) - Q(oy)) * (Q(px) - Q(ox))
        return float((exact > 0) - (exact < 0))
    return t1 - t2


def _lower_hull(x: NDArray[np.float64], y: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower convex hull (Andrew's monotone chain) of points, sorted by x."""
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    hx: list[float] = []
    hy: list[float] = []
    for px, py in zip(x.tolist(), y.tolist()):
        if hx and px == hx[-1]:
            continue  # same abscissa: the first (lowest) point is kept
        while len(hx) >= 2:
            # keep the turn strictly convex (counter-clockwise)
            if _cross(hx[-2], hy[-2], hx[-1], hy[-1], px, py) <= 0.0:
                hx.pop()
                hy.pop()
            else:
                break
        hx.append(px)
        hy.append(py)
    return np.array(hx), np.array(hy)


class TradeoffCurve:
    """Piecewise-linear trade-off function through the vertices ``(a_i, f_i)``.

    Parameters
    ----------
    a, f : array_like
        Vertices; ``a`` in [0, 1] and strictly increasing after sorting, ``f`` in [0, 1]
        and non-increasing in ``a`` with ``f_i <= 1 - a_i`` (the defining properties of a
        trade-off function).  The curve is completed by ``(0, f_0)`` if ``a_0 > 0`` (the
        lowest non-increasing extension) and ``(1, 0)`` (every trade-off function has
        ``f(1) = 0``).
    check : bool
        Validate the properties above (default True); a ``ValueError`` names the first
        violation.  Tolerance 1e-12 for rounding in sampled curves.
    """

    def __init__(self, a: ArrayLike, f: ArrayLike, *, check_input: bool = True) -> None:
        av = as_float_array("a", a).ravel()
        fv = as_float_array("f", f).ravel()
        if av.shape != fv.shape:
            raise DPBoundsError(f"a and f must have the same length, got {av.size} and {fv.size}")
        if av.size == 0:
            raise DPBoundsError("a must hold at least one point")
        order = np.argsort(av, kind="stable")
        av, fv = av[order], fv[order]
        if check_input:
            check_closed_unit("a", av)
            check_closed_unit("f", fv)
            check("a", av, np.append(np.diff(av) > 0, True), "strictly increasing (no duplicates)")
            check("f", fv, np.append(np.diff(fv) <= 1e-12, True), "non-increasing in a")
            check("f", fv, fv <= 1.0 - av + 1e-12, "<= 1 - a (a trade-off function)")
        fv = np.minimum(np.maximum.accumulate(fv[::-1])[::-1], 1.0 - av)  # exact monotone, <= 1 - a
        fv = np.maximum(fv, 0.0)
        if av[0] > 0.0:
            av, fv = np.concatenate([[0.0], av]), np.concatenate([[fv[0]], fv])
        if av[-1] < 1.0:
            av, fv = np.concatenate([av, [1.0]]), np.concatenate([fv, [0.0]])
        else:
            fv[-1] = 0.0
        self.a: NDArray[np.float64] = av
        self.f: NDArray[np.float64] = fv

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_function(
        cls, func: Callable[[NDArray[np.float64]], ArrayLike], grid: ArrayLike | None = None, n: int = 2001
    ) -> "TradeoffCurve":
        """Sample a vectorised trade-off function on ``grid`` (default: ``n`` uniform
        points plus log-spaced points towards 0 and 1; ``n`` is an integer in [2, 2^26], the
        vertices of one curve in memory, 512 MiB per array at the cap)."""
        if grid is None:
            n = check_count("n", n, minimum=2, maximum=MAX_POINTS)
            tail = np.logspace(-15, -3, 60)
            g = np.unique(np.concatenate([np.linspace(0.0, 1.0, n), tail, 1.0 - tail]))
        else:
            g = check_closed_unit("grid", grid).ravel()
        vals = np.asarray(func(g), dtype=np.float64)
        ok = np.isfinite(vals)
        return cls(g[ok], vals[ok])

    @classmethod
    def gaussian(cls, mu: float, n: int = 2001) -> "TradeoffCurve":
        """Sampled ``G_mu`` (docs/tradeoff.md)."""
        return cls.from_function(lambda g: _uf.gaussian_tradeoff(g, mu), n=n)

    # ---------------------------------------------------------------- evaluation
    def __call__(self, a: ArrayLike) -> Any:
        """f(a) by linear interpolation between the vertices."""
        av = check_closed_unit("a", a)
        return scalar_or_array(np.interp(av, self.a, self.f))

    def inverse(self, b: ArrayLike) -> Any:
        """``f^{-1}(b) = inf{a : f(a) <= b}`` (the reflection of the graph in the diagonal)."""
        bv = check_closed_unit("b", b)
        # distinct f values, each with its smallest a (flat parts map to their left end)
        fr, ar = self.f[::-1], self.a[::-1]
        keep = np.append(fr[1:] != fr[:-1], True)
        fx, ax = fr[keep], ar[keep]
        res = np.interp(bv, fx, ax)
        res = np.where(bv >= self.f[0], 0.0, res)
        return scalar_or_array(res)

    def max_gap(self) -> float:
        """``max_a (1 - a - f(a))`` (= the total variation distance for a symmetric curve)."""
        return float(np.max(1.0 - self.a - self.f))

    # ---------------------------------------------------------------- structure
    def symmetrize(self) -> "TradeoffCurve":
        """The largest convex function below ``min{f, f^{-1}}``.

        It is the lower convex hull of the vertices of f together with their
        reflections ``(f_i, a_i)`` (the convex envelope of a minimum of piecewise-linear
        functions is the lower hull of their joint vertex set).  The result is convex
        and symmetric (``f = f^{-1}``); a mechanism that is f-DP for both orders of the
        pair is f_sym-DP (section 2 of "Trade-off Functions for DP-SGD with Subsampling
        based on Random Allocation: Tight Upper and Lower Bounds"; docs/theorem31.md).
        """
        x = np.concatenate([self.a, self.f])
        y = np.concatenate([self.f, self.a])
        hx, hy = _lower_hull(x, y)
        hy = np.minimum(np.maximum(hy, 0.0), 1.0 - hx)
        return TradeoffCurve(hx, hy, check_input=False)

    def is_convex(self, tol: float = 1e-12) -> bool:
        """True if the slopes between consecutive vertices are non-decreasing
        (checked with cross products, so tiny segments cause no overflow)."""
        da, df = np.diff(self.a), np.diff(self.f)
        lhs = df[1:] * da[:-1]
        rhs = df[:-1] * da[1:]
        return bool(np.all(lhs - rhs >= -tol * (np.abs(lhs) + np.abs(rhs) + da[1:] * da[:-1])))

    def is_symmetric(self, tol: float = 1e-9) -> bool:
        """True if ``f = f^{-1}`` (within ``tol``) at every vertex and reflected vertex."""
        pts = np.unique(np.concatenate([self.a, self.f]))
        diff = np.asarray(self(pts), dtype=np.float64) - np.asarray(self.inverse(pts), dtype=np.float64)
        return bool(np.all(np.abs(diff) <= tol))

    # ---------------------------------------------------------------- conversions
    def delta(self, eps: ArrayLike) -> Any:
        """``delta(eps) = max_a (1 - f(a) - e^eps a)``, clipped at 0 (Dong-Roth-Su Prop. 2.12).

        The maximum over a piecewise-linear curve is attained at a vertex, so this is
        exact for the object.  For a two-sided (eps, delta) guarantee the curve should
        be symmetric (see :meth:`symmetrize`).
        """
        ev = as_float_array("eps", eps)
        check("eps", ev, ~np.isnan(ev), "a real number (not NaN)")
        e = np.exp(np.minimum(ev, 700.0))[..., None]
        ea = e * self.a
        big = (ev > 700.0)[..., None]
        if np.any(big):
            # e^eps overflows beyond ~709, but e^eps a need not (a vertex at a subnormal a):
            # exp(eps + log a) there, so that delta(epsilon(d)) <= d holds where epsilon
            # answered a finite eps above 700 (a clamp at 700 would make delta too large;
            # tests/tradeoff/test_tradeoff_fuzz_regressions.py::test_tradeoff_curve_epsilon_at_a_subnormal_vertex)
            with np.errstate(over="ignore"):
                far = np.where(self.a > 0, np.exp(ev[..., None] + np.log(np.where(self.a > 0, self.a, 1.0))), 0.0)
            ea = np.where(big, far, ea)
        d = np.max(1.0 - self.f - ea, axis=-1)
        return scalar_or_array(np.maximum(d, 0.0))

    def epsilon(self, delta: ArrayLike) -> Any:
        """Smallest ``eps >= 0`` with ``delta(eps) <= delta`` (closed form over the vertices:
        ``max_i log((1 - f_i - delta)/a_i)``; inf if ``1 - f(0) > delta``)."""
        dv = check_closed_unit("delta", delta)
        num = 1.0 - self.f - dv[..., None]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            top, a = np.maximum(num, 1e-300), np.where(self.a > 0, self.a, 1.0)
            ratio = top / a
            # at a subnormal vertex a the quotient overflows: log(top) - log(a) is then the finite
            # answer (about 744); elsewhere log of the quotient, as always
            lr = np.where(np.isinf(ratio), np.log(top) - np.log(a), np.log(ratio))
            r = np.where(num > 0, np.where(self.a > 0, lr, np.inf), -np.inf)
        res = np.maximum(np.max(r, axis=-1), 0.0)
        return scalar_or_array(res)

    def mu(self) -> float:
        """Tightest mu with ``f >= G_mu`` everywhere (the mu-GDP this curve implies).

        ``G_mu`` is convex, so ``f - G_mu`` is concave on every linear piece of f and the
        condition needs checking only at the vertices:
        ``mu = max_i Phi^{-1}(1 - a_i) - Phi^{-1}(f_i)``; inf if ``f(0) < 1`` or f reaches 0
        before ``a = 1``.
        """
        inner = (self.a > 0) & (self.a < 1)
        if self.f[0] < 1.0:
            return float("inf")
        if not np.any(inner):
            return 0.0
        ai, fi = self.a[inner], self.f[inner]
        if np.any(fi <= 0.0):
            return float("inf")
        vals = _core.ndtri_complement(ai) - _core.ndtri(fi)
        return float(max(np.max(vals), 0.0))

    # ---------------------------------------------------------------- display
    def plot(self, ax: Any = None, diagonal: bool = True, **kwargs: Any) -> Any:
        """Plot the curve with matplotlib (imported here, an optional dependency)."""
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("TradeoffCurve.plot needs matplotlib: pip install dpbounds[plot]") from exc
        if ax is None:
            _, ax = plt.subplots(figsize=(4, 4))
        ax.plot(self.a, self.f, **kwargs)
        if diagonal:
            ax.plot([0, 1], [1, 0], color="0.7", lw=0.8, ls="--")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("type I error a")
        ax.set_ylabel("type II error f(a)")
        ax.set_aspect("equal")
        return ax

    def __repr__(self) -> str:
        return f"TradeoffCurve({self.a.size} vertices, max gap {self.max_gap():.3g})"
