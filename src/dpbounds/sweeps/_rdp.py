"""The Rényi-DP epsilons of a sweep, a block of points at a time.

``rdp_epsilon_poisson`` and ``rdp_epsilon_wor`` equal, at every point,
``RDPAccountant(...).compose(mechanism, steps).get_epsilon(delta, return_order=True)`` bit
for bit.  Evaluated point by point, that is a Python search per point over a few hundred
orders, one or two orders at a time.  Here the search runs for the whole block in lock step:
every step of :meth:`dpbounds.rdp.RDPAccountant._search` (the scan, its extension, the
golden-section refinement and the integer candidates) evaluates its orders for all the points
that are at that step in one call of the mechanism's compiled kernel and of the conversion
(:func:`dpbounds.rdp._outward.eps_objective`), element-wise on the same numbers as the
accountant, so the result is the same.

With ``orders="default"`` the epsilon is the minimum over the fixed order list of
TF-Privacy and dp-accounting (:data:`dpbounds.rdp.DEFAULT_ORDERS`), as
``RDPAccountant(orders="default")`` computes it: one evaluation of the block's curves at
those orders, the vectorised path of :func:`dpbounds.rdp.poisson_gaussian` /
:func:`dpbounds.rdp.epsilon`.

The arguments of each point are checked by the accountant's own constructors first, so a
point outside the domain carries the accountant's error message, as before.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np
from numpy.typing import NDArray

from dpbounds import (
    _kernels,  # type: ignore[attr-defined, unused-ignore]
    _ufuncs,  # type: ignore[attr-defined, unused-ignore]
)
from dpbounds._errors import DPBoundsError

__all__ = ["rdp_epsilons"]

FArr = NDArray[np.float64]
IArr = NDArray[np.intp]

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


class _Curves:
    """The composed RDP curves ``count * eps(alpha)`` of the points' mechanisms, at any orders.

    ``kind`` "poisson": the Poisson-subsampled Gaussian's raw ufunc, element-wise (NaN where a
    fractional order's quadrature would pass its cap: the accountant skips such an order, where
    :func:`dpbounds.rdp.poisson_gaussian` refuses it).  "wor": the without-replacement
    Gaussian's integer orders (the kernel of :func:`dpbounds.rdp.subsampled_gaussian_wor`, at
    the integer orders the search asks for, kept per distinct (sigma, gamma)) and their
    interpolation, as the mechanism object evaluates it
    (:class:`dpbounds.rdp._mechanisms.SubsampledGaussianWOR`).
    """

    def __init__(self, kind: str, sigma: FArr, q: FArr, count: FArr, option: str) -> None:
        self.kind, self.sigma, self.q, self.count = kind, sigma, q, count
        if kind == "poisson":
            self.f = getattr(_ufuncs, f"rdp_poisson_gaussian_{option}")
            return
        from dpbounds.rdp._mechanisms import _BOUNDS

        self.bound = int(_BOUNDS[option])
        uniq, row = np.unique(np.stack([sigma, q], axis=1), axis=0, return_inverse=True)
        self.row = row.ravel()
        self.usig, self.ugam = uniq[:, 0], uniq[:, 1]
        # the rows of each distinct sigma (np.unique sorted them by sigma, then gamma) and one
        # kernel workspace per sigma, kept between the search's steps: its Pearson-Vajda table
        # (O(order^2) to build) serves every later step at that sigma
        self.sig_of_row = np.cumsum(np.r_[True, self.usig[1:] != self.usig[:-1]]) - 1
        self.works = [_kernels.wor_work() for _ in range(int(self.sig_of_row[-1]) + 1)]
        self.table = np.full((uniq.shape[0], 0), np.nan)
        self.known = np.zeros((uniq.shape[0], 0), dtype=bool)

    def _tables_at(self, rows: IArr, idx: IArr) -> FArr:
        """The integer-order curves at the orders ``idx`` (one row of orders per point; ``rows``: the
        points' tables).  Each order is the kernel's value bit for bit, whichever orders are
        computed together (its workspace is a cache: ``_kernels.wor_work``); only the
        orders asked for and not yet known are computed."""
        need = int(idx.max()) + 1
        if need > self.table.shape[1]:
            grown = np.full((self.table.shape[0], need), np.nan)
            grown[:, :self.table.shape[1]] = self.table
            known = np.zeros(grown.shape, dtype=bool)
            known[:, :self.known.shape[1]] = self.known
            self.table, self.known = grown, known
        rr = np.broadcast_to(rows[:, None], idx.shape)
        missing = ~self.known[rr, idx]
        if missing.any():
            # the distinct (row, order) pairs still missing, rows (sigma, then gamma) slowest and
            # the orders rising: the kernel's per-(sigma, gamma) preparation serves a row's orders
            key = np.unique(rr[missing].astype(np.int64) * self.table.shape[1] + idx[missing])
            r_all, o_all = np.divmod(key, self.table.shape[1])
            s_all = self.sig_of_row[r_all]
            cuts = np.flatnonzero(np.r_[True, s_all[1:] != s_all[:-1], True])
            vals = np.empty(r_all.size)
            for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
                r = r_all[a:b]
                vals[a:b] = _kernels.wor_gaussian(o_all[a:b].astype(np.float64), self.usig[r], self.ugam[r],
                                                  self.bound, self.works[int(s_all[a])])
            self.table[r_all, o_all] = vals
            self.known[r_all, o_all] = True
        return self.table[rr, idx]

    def __call__(self, points: IArr, alpha: FArr) -> FArr:
        """The composed curves of ``points`` (shape (m,)) at ``alpha`` (shape (m, k))."""
        s, q, c = self.sigma[points, None], self.q[points, None], self.count[points, None]
        if self.kind == "poisson":
            v = np.asarray(self.f(alpha, s, q), dtype=np.float64)
        else:
            v = self._wor(points, alpha)
        with np.errstate(invalid="ignore", over="ignore"):
            return np.zeros(alpha.shape) + c * v   # as RDPAccountant._rdp composes one mechanism

    def _wor(self, points: IArr, alpha: FArr) -> FArr:
        # SubsampledGaussianWOR.rdp (bounds "improved", "theorem9"): _IntegerTable.rdp with the
        # Gaussian's own curve as the cap
        rows = self.row[points]
        fin = np.isfinite(alpha)
        af = np.where(fin, alpha, 2.0)
        lo = np.clip(np.floor(af), 2, None).astype(np.intp)
        hi = np.clip(np.ceil(af), 2, None).astype(np.intp)
        both = self._tables_at(rows, np.concatenate([lo, hi], axis=1))
        k = alpha.shape[1]
        out = np.asarray(_ufuncs.rdp_interp(af, both[:, :k], both[:, k:]), dtype=np.float64)
        out = np.minimum(out, np.asarray(_ufuncs.rdp_gaussian(af, self.sigma[points, None])))
        at_inf = np.where(self.q[points, None] > 0, np.inf, 0.0)
        return np.where(fin, out, at_inf)


class _Objective:
    """The conversion objective of every point (NaN orders count as +inf and are tallied per point)."""

    def __init__(self, curves: _Curves, delta: FArr, conversion: str) -> None:
        from dpbounds.rdp._outward import eps_objective

        self.curves, self.delta, self.conversion = curves, delta, conversion
        self.eps_objective = eps_objective
        n = delta.shape[0]
        self.skipped = np.zeros(n, dtype=np.int64)
        self.usable = np.zeros(n, dtype=np.int64)

    def __call__(self, points: IArr, alpha: FArr) -> FArr:
        alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        v = self.eps_objective(alpha, self.curves(points, alpha), self.delta[points, None], self.conversion)
        nan = np.isnan(v)
        k = nan.sum(axis=1)
        self.skipped[points] += k
        self.usable[points] += alpha.shape[1] - k
        return np.where(nan, np.inf, v)


def _argmin_rows(v: FArr) -> IArr:
    return np.asarray(np.argmin(v, axis=1), dtype=np.intp)


def _refine(obj: _Objective, points: IArr, grid: FArr, best_v: FArr, best_a: FArr,
            stop: Callable[[], None]) -> tuple[FArr, FArr]:
    """RDPAccountant._refine for every point (``grid``: the scan each point ended on, one row each)."""
    m = points.shape[0]
    if m == 0:
        return best_v, best_a
    rows = np.arange(m)
    width = grid.shape[1]
    j = np.array([np.searchsorted(grid[i], best_a[i]) for i in range(m)], dtype=np.intp)
    lo_a = grid[rows, np.maximum(j - 1, 0)]
    hi_a = grid[rows, np.minimum(j + 1, width - 1)]
    x1 = hi_a - _GOLDEN * (hi_a - lo_a)
    x2 = lo_a + _GOLDEN * (hi_a - lo_a)
    f = obj(points, np.stack([x1, x2], axis=1))
    f1, f2 = f[:, 0].copy(), f[:, 1].copy()
    active = np.ones(m, dtype=bool)
    for _ in range(60):
        stop()
        active &= ~(hi_a - lo_a <= 1e-9 * hi_a)
        if not active.any():
            break
        left = active & (f1 <= f2)
        right = active & ~(f1 <= f2)
        # left: hi_a, x2, f2 = x2, x1, f1 and a new x1; right: lo_a, x1, f1 = x1, x2, f2 and a new x2
        hi_a = np.where(left, x2, hi_a)
        lo_a = np.where(right, x1, lo_a)
        nx2 = np.where(left, x1, x2)
        nf2 = np.where(left, f1, f2)
        nx1 = np.where(right, x2, x1)
        nf1 = np.where(right, f2, f1)
        x1, x2, f1, f2 = nx1, nx2, nf1, nf2
        x1 = np.where(left, hi_a - _GOLDEN * (hi_a - lo_a), x1)
        x2 = np.where(right, lo_a + _GOLDEN * (hi_a - lo_a), x2)
        ia = np.flatnonzero(active)
        new = np.where(left[ia], x1[ia], x2[ia])
        fv = obj(points[ia], new[:, None])[:, 0]
        f1[ia] = np.where(left[ia], fv, f1[ia])
        f2[ia] = np.where(right[ia], fv, f2[ia])
    cand = np.stack([x1, x2, np.maximum(np.floor(best_a), 2.0), np.ceil(best_a)], axis=1)
    cv = obj(points, cand)
    k = _argmin_rows(cv)
    ck = cv[rows, k]
    better = ck < best_v
    best_v = np.where(better, ck, best_v)
    best_a = np.where(better, cand[rows, k], best_a)
    # interpolated (integer-order) curves put the optimum at an integer: taken when as good up to rounding
    r = np.round(best_a)
    near = (r != best_a) & (np.abs(best_a - r) < 1e-6) & (r > 1)
    if near.any():
        ia = np.flatnonzero(near)
        vr = obj(points[ia], r[ia, None])[:, 0]
        take = vr <= best_v[ia] * (1 + 1e-13)
        best_v[ia[take]] = vr[take]
        best_a[ia[take]] = r[ia[take]]
    return best_v, best_a


def _search(obj: _Objective, points: IArr, max_order: float, stop: Callable[[], None]) -> tuple[FArr, FArr]:
    """RDPAccountant._search (continuous orders, no scan above the optimum) for every point."""
    m = points.shape[0]
    best_v = np.full(m, np.inf)
    best_a = np.full(m, 2.0)
    hi = min(256.0, max_order)
    active = np.arange(m)
    ended: list[tuple[IArr, FArr]] = []    # (points that ended on this scan, the scan)
    while active.size:
        stop()
        grid = 1.0 + np.geomspace(1e-6, hi - 1.0, 56)
        grid = np.unique(np.concatenate([grid, np.arange(2.0, min(hi, 12.0) + 1.0)]))
        v = obj(points[active], np.broadcast_to(grid, (active.size, grid.size)))
        i = _argmin_rows(v)
        vi = v[np.arange(active.size), i]
        better = vi < best_v[active]
        best_v[active] = np.where(better, vi, best_v[active])
        best_a[active] = np.where(better, grid[i], best_a[active])
        done = (i < grid.size - 1) | (hi >= max_order) | ~np.isfinite(best_v[active])
        ended.append((active[done], grid))
        active = active[~done]
        hi = min(hi * 4.0, max_order)
    for ids, grid in ended:
        ids = ids[np.isfinite(best_v[ids])]   # no finite value: returned as it is, unrefined
        if ids.size:
            v, a = _refine(obj, points[ids], np.broadcast_to(grid, (ids.size, grid.size)), best_v[ids], best_a[ids],
                           stop)
            best_v[ids], best_a[ids] = v, a
    return best_v, best_a


def _checked(values: FArr, stages: tuple[Callable[[float], float], ...]) -> tuple[list[NDArray[np.object_]], FArr]:
    """Apply the checks ``stages`` (each takes the previous one's result) to every distinct value
    of an axis once: per stage, the error message of each point ("" if it passed), and the last
    stage's result (NaN where a stage failed)."""
    uniq, inv = np.unique(values, return_inverse=True)
    errors = [np.empty(uniq.size, dtype=object) for _ in stages]
    result = np.full(uniq.size, np.nan)
    for j, v in enumerate(uniq.tolist()):
        x = v
        for k in range(len(stages)):
            errors[k][j] = ""
        for k, stage in enumerate(stages):
            try:
                x = stage(x)
            except ValueError as exc:   # DPBoundsError
                errors[k][j] = str(exc)
                break
        else:
            result[j] = x
    inv = inv.ravel()
    return [e[inv] for e in errors], result[inv]


def rdp_epsilons(kind: str, args: Mapping[str, FArr], options: Mapping[str, Any],
                 stop: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """Epsilon, order, valid and reason of every point of a block (see the module docstring).

    ``kind``: "poisson" (options conversion, mode, orders) or "wor" (conversion, bound, orders;
    the mechanism's sigma is the noise multiplier / 2, replace-one neighbours).  ``stop`` is
    called between the steps of the search (it raises to abandon the block).
    """
    from dpbounds import _validation as V
    from dpbounds.rdp import DEFAULT_ORDERS, RDPAccountant
    from dpbounds.rdp._mechanisms import PoissonGaussian, SubsampledGaussianWOR

    sig, rate, steps, dlt = (np.asarray(args[k], dtype=np.float64) for k in ("sigma", "sample_rate", "steps", "delta"))
    n = sig.shape[0]
    conversion = options["conversion"]
    fixed = options.get("orders", "search") == "default"
    acc = RDPAccountant(orders="default" if fixed else None, conversion=conversion)
    C = V.Constraint
    # The checks a point goes through when it is evaluated alone, in that order (the sweep's
    # arguments, then the mechanism's, the composition count's and the query's): each depends on
    # one axis, so each is run once per distinct value of its axis and the first failure of a
    # point in that order is its error, the same message as point by point.
    if kind == "poisson":
        mech_sigma: Callable[[float], float] = lambda s: PoissonGaussian(s, 0.5, options["mode"]).sigma
        mech_rate: Callable[[float], float] = lambda q: PoissonGaussian(1.0, q, options["mode"]).q
    else:
        mech_sigma = lambda s: SubsampledGaussianWOR(s / 2.0, 0.5, options["bound"]).sigma  # noqa: E731
        mech_rate = lambda q: SubsampledGaussianWOR(1.0, q, options["bound"]).gamma  # noqa: E731
    e_sig, ms = _checked(sig, (lambda x: float(V.check_finite_positive("sigma", x)), mech_sigma))
    e_rate, mq = _checked(rate, (lambda x: V.check_rate("sample_rate", x), mech_rate))
    e_steps, mc = _checked(steps, (lambda x: float(V.check_rounds("steps", x, minimum=1)),
                                   lambda t: V.check_scalar("count", t, C.FINITE_NONNEGATIVE)))
    e_delta, md = _checked(dlt, (lambda x: float(V.check_open_unit("delta", x)),
                                 lambda d: V.check_scalar("delta", d, C.OPEN_UNIT)))
    reasons = np.empty(n, dtype=object)
    reasons.fill("")
    for e in (e_sig[0], e_rate[0], e_steps[0], e_delta[0], e_sig[1], e_rate[1], e_steps[1], e_delta[1]):
        unset = reasons == ""
        reasons[unset] = e[unset]
    eps = np.full(n, np.nan)
    order = np.full(n, np.nan)
    valid = np.zeros(n, dtype=bool)
    points = np.flatnonzero(reasons == "")
    if points.size:
        option = options["mode"] if kind == "poisson" else options["bound"]
        curves = _Curves(kind, ms, mq, mc, option)
        obj = _Objective(curves, md, conversion)
        if fixed:
            orders = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
            v = obj(points, np.broadcast_to(orders, (points.size, orders.size)))
            i = _argmin_rows(v)
            bv, ba = v[np.arange(points.size), i], orders[i]
        else:
            bv, ba = _search(obj, points, acc.max_order, stop)
        for j, p in enumerate(points.tolist()):
            if obj.usable[p] == 0:
                reasons[p] = str(DPBoundsError(
                    f"orders must include a usable one: no usable order for delta = {float(md[p])!r}, "
                    f"the composed RDP curve is NaN at all {int(obj.skipped[p])} orders tried "
                    "(e.g. fractional orders of the Poisson-subsampled Gaussian beyond its quadrature cap "
                    "of 1e6 nodes, cost ~ alpha / sigma^2); give integer orders (orders=...)"))
                continue
            eps[p], order[p], valid[p] = bv[j], ba[j], True
    return {"eps": eps, "order": order, "valid": valid, "reasons": reasons}
