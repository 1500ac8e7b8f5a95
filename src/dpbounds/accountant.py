"""Tight numerical accountant for random allocation (SPEC Part A sections 1, 10b, 11).

One epoch of random allocation with noise multiplier ``sigma`` and ``M`` rounds is dominated
by the pair H0: x ~ N(0, I_M) vs H1: x ~ (1/M) sum_j N(e_j/sigma, I_M).  Its likelihood ratio
is S/M with S a sum of M i.i.d. lognormals; everything here is computed from the law of S
(H1 is its size-biased version).

Public names
------------
tradeoff_exact(a, sigma, rounds)            f_M(a) and an absolute error bound
exact_max_gap(sigma, rounds)                TV(P0, P1), the true delta of f >= f_{0, delta}
gap_ratio(sigma, rounds, coefficient)       delta_min (Theorem 3.1) / true gap
RandomAllocationPLD(sigma, rounds, epochs)  certified [lower, upper] brackets of eps(delta), delta(eps)
RandomAllocationAccountant(noise_multiplier, rounds_per_epoch, epochs, method=...)

Three representations of the single-epoch law, chosen per (sigma, M) by ``_law_best``:

1. the characteristic-function series of S - M on a window certified by tail bounds
   (:class:`dpbounds._exact_sum.LognormalSum`), wherever its window error is <= 1e-11 (sigma
   around 0.8 and up, or large M) -- the fast path (milliseconds);
2. small sigma with small or moderate M (sigma = 0.3 up to M ~ 1e5, 0.4 up to ~2e3, 0.5 up to
   ~500; estimated build time <= 5 s): the law of log S on a uniform grid, built from the exact
   Gaussian density of log Y by log-domain convolutions in C (:mod:`dpbounds._logdomain_sum`).
   It covers what no Fourier budget can (M = 2 at sigma = 0.3, whose summands span tens of
   decades) and the far tails (delta ~ 1e-10 at eps ~ 15), serves E > 1 too (its cells are
   loss cells), and carries an error *estimate* from a half-resolution grid (checked against
   mpmath at M = 2, Monte Carlo, and the Fourier laws);
3. otherwise (small sigma with M beyond that) the exponentially tilted series psi(t + i lam)
   (:class:`dpbounds._exact_sum.TiltedLognormalSum`): right-hand aliasing damped by e^{-lam P},
   CDF values served up to ``xhi`` (round-off amplified by at most e^{12}); E = 1 only -- E > 1
   uses the log-domain law up to a 20 s build, beyond that the untilted series, whose outside
   mass is placed along certified tail bounds (``_spread_tail``) instead of at +inf.

What is certified.  The loss discretisation (rounding up / down), the window tails (rigorous
Chernoff / truncated-MGF bounds), aliasing and the trimmed composition tails are accounted
for exactly.  The Fourier-series truncation and floating-point round-off are covered by
explicit *estimates* (the series is cut where |psi| < 1e-20 after a look-ahead scan; FFT
round-off is bounded by a standard 1e-15 * log2 N * sum|coefficient| estimate), not proofs;
so is the log-domain law's discretisation error (fine vs half-resolution grid).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds._exact import gdp_delta as _gdp_delta  # type: ignore[import-not-found, unused-ignore]
from dpbounds._exact_sum import LognormalSum, TiltedLognormalSum, _cell_masses, upper_tail_h0, upper_tail_h1
from dpbounds._logdomain_sum import LogDomainPair, estimated_seconds as _logdomain_seconds

__all__ = [
    "tradeoff_exact",
    "exact_max_gap",
    "gap_ratio",
    "RandomAllocationPLD",
    "RandomAllocationAccountant",
]

_SIGMA_MIN, _SIGMA_MAX = 0.3, 20.0


def _check_sigma_rounds(sigma: Any, rounds: Any) -> tuple[float, float]:
    s = float(V.check_finite_positive("sigma", sigma))
    if not (_SIGMA_MIN <= s <= _SIGMA_MAX):
        raise ValueError(f"sigma must be in [{_SIGMA_MIN}, {_SIGMA_MAX}], got {s!r}")
    m = float(V.check_rounds("rounds", rounds, minimum=2))
    if m > 1e9:
        raise ValueError(f"rounds must be <= 1e9, got {m!r}")
    return s, m


_LAW_CACHE: dict[tuple[float, float, float], LognormalSum] = {}


def _law(sigma: float, M: float, tail: float = 1e-13) -> LognormalSum:
    key = (sigma, M, tail)
    law = _LAW_CACHE.get(key)
    if law is None:
        if len(_LAW_CACHE) > 16:
            _LAW_CACHE.clear()
        law = LognormalSum(sigma, M, tail=tail)
        _LAW_CACHE[key] = law
    return law


_BEST_CACHE: dict[tuple[float, float, float], Any] = {}
_TILT_CACHE: dict[tuple[float, float], TiltedLognormalSum] = {}


_LOG_CACHE: dict[tuple[float, float], LogDomainPair] = {}
_LOGDOMAIN_BUDGET_S = 5.0  # largest estimated build time for which the log-domain law is used
# E > 1 has no tilted lattice: the log-domain law is worth a longer build there (the untilted
# lattice with its spread tail is the fallback, much wider at small sigma)
_LOGDOMAIN_BUDGET_COMPOSE_S = 20.0


def _clear_caches() -> None:
    """Forget every cached single-epoch law (benchmarks time cold queries with this)."""
    for cache in (_LAW_CACHE, _BEST_CACHE, _TILT_CACHE, _LOG_CACHE):
        cache.clear()
    from dpbounds import _exact_sum

    _exact_sum._mgf_tables.cache_clear()
    _exact_sum._upper_exponent.cache_clear()


def _log_law(sigma: float, M: float, budget: float | None = None) -> LogDomainPair | None:
    """The log-domain law of S_M (small sigma, small/moderate M), or None if too costly.

    ``budget``: largest estimated build time in seconds (default ``_LOGDOMAIN_BUDGET_S``).
    """
    key = (sigma, M)
    law = _LOG_CACHE.get(key)
    if law is None:
        limit = _LOGDOMAIN_BUDGET_S if budget is None else budget
        if _logdomain_seconds(sigma, int(M)) > limit:
            return None
        if len(_LOG_CACHE) > 8:
            _LOG_CACHE.clear()
        law = LogDomainPair(sigma, int(M))
        _LOG_CACHE[key] = law
    return law


def _untilted_ok(sigma: float, M: float, tail: float) -> LognormalSum | None:
    """The untilted series if its window holds the tails (error <= 1e-11), else None."""
    probe = _LAW_CACHE.get((sigma, M, tail))
    if probe is None:
        probe = LognormalSum(sigma, M, tail=tail, abort_above=1e-11)
        if not probe.aborted:
            _LAW_CACHE[(sigma, M, tail)] = probe
    ok = (not probe.truncated and max(probe.tail_lo0 + probe.tail_hi0, probe.tail_lo1 + probe.tail_hi1)
          + probe.err_trunc + probe.err_round <= 1e-11)
    return probe if ok else None


def _law_best(sigma: float, M: float, tail: float = 1e-13) -> Any:
    """The single-epoch law to use.

    1. the untilted Fourier series where its window holds the tails (error <= 1e-11);
    2. else the log-domain law (:mod:`dpbounds._logdomain_sum`) where it is affordable
       (small sigma with M up to ~1e5 at sigma = 0.3);
    3. else the tilted series; falls back to the untilted law (with its honest, possibly NaN,
       error bars) when that does not converge either.
    """
    key = (sigma, M, tail)
    law = _BEST_CACHE.get(key)
    if law is not None:
        return law
    if len(_BEST_CACHE) > 16:
        _BEST_CACHE.clear()
    law = _untilted_ok(sigma, M, tail)
    if law is None:
        law = _log_law(sigma, M)
    if law is None:
        law = _TILT_CACHE.get((sigma, M))
        if law is None:
            if len(_TILT_CACHE) > 8:
                _TILT_CACHE.clear()
            law = TiltedLognormalSum(sigma, M)
            _TILT_CACHE[(sigma, M)] = law
        # unusable if the series did not converge or the served range does not reach x = 0 (TV)
        if law.truncated or law.xhi <= 0.0:
            law = _law(sigma, M, tail)
    _BEST_CACHE[key] = law
    return law


def _require_converged(law: Any) -> None:
    if law.truncated:
        raise ValueError(
            f"the exact computation does not converge within its Fourier budget at sigma={law.sigma}, "
            f"rounds={law.M:g} (the characteristic function of a sum of so few lognormals decays too "
            "slowly); use a larger rounds value or method='closed_form'")


# ------------------------------------------------------------------ trade-off and TV
def _invert_cdf(law: Any, grid: NDArray[np.float64], g0: NDArray[np.float64],
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


def tradeoff_exact(a: Any, sigma: float, rounds: float) -> tuple[Any, Any]:
    """Exact trade-off curve f_M(a) = T(P0, P1)(a) of one epoch, with an error bound.

    Parameters
    ----------
    a : array_like, in [0, 1]
        Type-I error levels.
    sigma : float in [0.3, 20]
    rounds : int in [2, 1e9]

    Returns
    -------
    f, err : float or ndarray
        f_M(a) and a bound on |f - f_M(a)| (SPEC A.1: reject H0 iff S > M + x_a with
        P0[S - M > x_a] = a; f = P1[S - M <= x_a]).  Which law serves (sigma, M) is described
        in the module docstring.
        * Fourier series (sigma >= ~0.8, or large M): the bound adds the certified window
          tails/aliasing and the estimated series truncation/round-off; about 1e-13.
        * Log-domain law (small sigma, small/moderate M, including M = 2 at sigma = 0.3): an
          error *estimate* (fine vs half-resolution grid); measured <= 1e-9 for every a in
          [1e-6, 1 - 1e-6] at sigma = 0.3 with M in {2, 5, 14, 1e4}, 0.4 with M in {2, 5},
          0.5 with M = 2 (about 1e-13 at M = 2, growing with M); checked against mpmath at
          M = 2 (agreement within the estimate, which is ~20x the actual error).  For a beyond
          the grid's tail mass (a < ~1e-40) an interval [f(a_min) - err, 1 - a] is returned as
          midpoint +- half-width.
        * Tilted series (small sigma, M beyond the log-domain budget): about 1e-13 in the bulk;
          <= 1e-9 for a >= 0.01 when the threshold is well inside the served range; for a so
          small that the threshold lies beyond it, the interval [P1[x <= xhi] - err, 1 - a] as
          midpoint +- half-width.  Where no series converges the bound is NaN and ``f`` an
          approximation.
    """
    s, m = _check_sigma_rounds(sigma, rounds)
    av = V.check_closed_unit("a", a)
    law = _law_best(s, m)
    if isinstance(law, LogDomainPair):
        f_l, e_l = _tradeoff_logdomain(law, np.atleast_1d(av).ravel())
        return (V.scalar_or_array(np.clip(f_l, 0.0, 1.0).reshape(np.shape(av))),
                V.scalar_or_array(e_l.reshape(np.shape(av))))
    if isinstance(law, TiltedLognormalSum):
        f_t, e_t = _tradeoff_tilted(law, np.atleast_1d(av).ravel())
        return (V.scalar_or_array(np.clip(f_t, 0.0, 1.0).reshape(np.shape(av))),
                V.scalar_or_array(e_t.reshape(np.shape(av))))
    flat = np.atleast_1d(av).ravel()
    f = np.empty(flat.size)
    err = np.empty(flat.size)
    e_num = law.err_trunc + law.err_round
    e0 = law.tail_lo0 + law.tail_hi0 + e_num
    e1 = law.tail_lo1 + law.tail_hi1 + e_num
    # grid bracket for x_a, then a vectorised bisection on the wrapped CDF (monotone up to e0)
    # fine grid of the wrapped CDF from one FFT of cell masses (cells start at xlo)
    edges, hcell, p0c, _, _ = _cell_masses(law, law.P / 65536.0)
    grid = np.concatenate([edges, [edges[-1] + hcell]])
    g0 = np.concatenate([[0.0], np.cumsum(p0c)])
    keep = grid <= law.xhi
    grid, g0 = grid[keep], np.maximum.accumulate(g0[keep])
    target = 1.0 - flat  # G0(x_a) = 1 - a
    k = np.searchsorted(g0, target)
    inside = (flat > 0) & (flat < 1) & (k > 0) & (k < grid.size)
    f[:] = np.where(flat <= 0, 1.0, 0.0)
    err[:] = 0.0
    below = (flat > 0) & (flat < 1) & (k == 0)      # x_a below the window: f <= P1[x <= xlo]
    above = (flat > 0) & (flat < 1) & (k >= grid.size)  # x_a above the window
    f[below], err[below] = 0.0, e1 + law.tail_lo1
    f[above], err[above] = 1.0, max(e1, law.tail_hi1)
    idx = np.nonzero(inside)[0]
    if idx.size:
        tg = target[idx]
        x = _invert_cdf(law, grid, g0, k[idx], tg)
        g0x, g1x = law.wrapped_cdf_pair(x)
        resid = np.abs(g0x - tg)
        f[idx] = g1x
        slope = np.maximum(0.0, 1.0 + x / m)  # |f'| = likelihood ratio at the threshold
        err[idx] = e1 + slope * (e0 + resid)
    f_out = np.clip(f, 0.0, 1.0).reshape(np.shape(av))
    err_out = err.reshape(np.shape(av))
    if law.truncated:
        err_out = np.full_like(err_out, np.nan)
    return V.scalar_or_array(f_out), V.scalar_or_array(err_out)


def _tradeoff_logdomain(law: LogDomainPair, flat: NDArray[np.float64]) -> tuple[Any, Any]:
    """f_M(a) from the log-domain law; a beyond the grid's tail masses gets an honest interval."""
    f = np.where(flat <= 0, 1.0, 0.0)
    err = np.zeros(flat.size)
    fine = law.fine
    a_min = float(fine.sf0[-1])   # P0[U > u_top]: thresholds beyond the grid
    a_max = float(fine.sf0[0])    # P0[U > u_0]
    interior = (flat > 0) & (flat < 1)
    inside = interior & (flat > a_min) & (flat < a_max)
    idx = np.nonzero(inside)[0]
    if idx.size:
        f[idx], err[idx] = law.tradeoff(flat[idx])
    # f is non-increasing with f(a) <= 1 - a: bracket the edges by the nearest served value
    below = interior & (flat <= a_min)   # f(a) in [f(a_min) - e, 1 - a]
    if np.any(below):
        f_ref, e_ref = law.tradeoff(np.array([a_min * (1 + 1e-12)]))
        lo_f, hi_f = float(f_ref[0] - e_ref[0]), 1.0 - flat[below]
        f[below], err[below] = 0.5 * (lo_f + hi_f), 0.5 * np.maximum(hi_f - lo_f, 0.0)
    above = interior & (flat >= a_max)   # f(a) in [0, min(f(a_max) + e, 1 - a)]
    if np.any(above):
        f_ref, e_ref = law.tradeoff(np.array([a_max * (1 - 1e-12)]))
        hi_f = np.minimum(float(f_ref[0] + e_ref[0]), 1.0 - flat[above])
        f[above], err[above] = 0.5 * hi_f, 0.5 * np.maximum(hi_f, 0.0)
    return f, err


def _tradeoff_tilted(law: TiltedLognormalSum, flat: NDArray[np.float64]) -> tuple[Any, Any]:
    """f_M(a) and its error bound from the tilted series (x_a up to law.xhi)."""
    m = law.M
    f = np.where(flat <= 0, 1.0, 0.0)
    err = np.zeros(flat.size)
    grid, g0 = law.cdf_grid()
    g0 = np.maximum.accumulate(g0)
    target = 1.0 - flat
    k = np.searchsorted(g0, target)
    interior = (flat > 0) & (flat < 1)
    inside = interior & (k > 0) & (k < grid.size)
    below = interior & (k == 0)            # x_a at or below xlo: f <= P1[x <= xlo]
    above = interior & (k >= grid.size)    # x_a beyond the served range
    e_lo = float(law.err(law.xlo))
    f[below], err[below] = 0.0, 2.0 * e_lo
    if np.any(above):
        # f is non-increasing: f(a) >= P1[x <= xhi] - (slack of x_a near xhi); f(a) <= 1 - a
        _, g1h = law.wrapped_cdf_pair([law.xhi])
        eh = float(law.err(law.xhi))
        lo_f = max(0.0, float(g1h[0]) - eh - (1.0 + law.xhi / m) * 2.0 * eh)
        hi_f = 1.0 - flat[above]
        f[above] = 0.5 * (lo_f + hi_f)
        err[above] = 0.5 * np.maximum(hi_f - lo_f, 0.0)
    idx = np.nonzero(inside)[0]
    if idx.size:
        tg = target[idx]
        x = _invert_cdf(law, grid, g0, k[idx], tg)
        g0x, g1x = law.wrapped_cdf_pair(x)
        ex = law.err(x)
        resid = np.abs(g0x - tg)
        f[idx] = g1x
        slope = np.maximum(0.0, 1.0 + x / m)
        err[idx] = ex + slope * (ex + resid)
    return f, err


def exact_max_gap(sigma: float, rounds: float, *, return_error: bool = False) -> Any:
    """TV(P0, P1) = E0[(1 - S/M)^+] = max_a (1 - a - f_M(a)) for one epoch.

    This is the smallest delta with f_M >= f_{0, delta}.  Fourier laws: P0[S <= M] - P1[S <= M]
    from one series with the combined coefficients (no cancellation between two CDFs);
    log-domain law: the integral of the non-negative (1 - e^u / M)^+ q(u).  Relative error
    <= 1e-8 on sigma in [0.3, 20], M in [2, 1e9] (absolute error ~1e-13 for the Fourier laws,
    <= 2e-10 estimated for the log-domain law at sigma = 0.3, M <= 1e4; tests check against
    mpmath at M = 2, Monte Carlo, and between laws); ``return_error=True`` also returns the
    absolute error bound.  Raises ValueError where no law converges.
    """
    s, m = _check_sigma_rounds(sigma, rounds)
    best = _law_best(s, m, tail=1e-16)
    if isinstance(best, LogDomainPair):
        tv_l, e_l = best.delta(0.0)
        return (tv_l, e_l) if return_error else tv_l
    if isinstance(best, TiltedLognormalSum):
        g0t, g1t = best.wrapped_cdf_pair([0.0])
        tv_t = float(g0t[0] - g1t[0])
        e_t = 2.0 * float(best.err(0.0))
        return (tv_t, e_t) if return_error else tv_t
    law = _law(s, m, tail=1e-16)
    _require_converged(law)
    g0 = float(law.wrapped_cdf([0.0], 0)[0])
    g1 = float(law.wrapped_cdf([0.0], 1)[0])
    tv = g0 - g1
    e = (law.tail_lo0 + law.tail_hi0 + law.tail_lo1 + law.tail_hi1 + 2 * (law.err_trunc + law.err_round))
    return (tv, e) if return_error else tv


def gap_ratio(sigma: float, rounds: float, coefficient: str = "exact") -> float:
    """delta_min(sigma, M) of Theorem 3.1 divided by the true gap TV(P0, P1).

    SPEC A.3.1 predicts about 1 + 2 B coef sqrt(2 pi) for large M.  NaN where Theorem 3.1
    does not apply (condition (2) at delta_min).
    """
    from dpbounds import _ufuncs as U

    V.check_choice("coefficient", coefficient, ("exact", "simplified"))
    s, m = _check_sigma_rounds(sigma, rounds)
    f = U.delta_bound_exact if coefficient == "exact" else U.delta_bound_simplified
    dmin = float(f(s, m))
    return float(dmin / exact_max_gap(s, m))


# ------------------------------------------------------------------ privacy-loss distribution
class RandomAllocationPLD:
    """Privacy-loss distribution of E epochs of random allocation, with certified brackets.

    Parameters
    ----------
    sigma : float in [0.3, 20]
    rounds : int in [2, 1e9]  (M, rounds per epoch)
    epochs : int >= 1
    tolerance : float
        Target relative width of the epsilon bracket (default 2e-3).  For ``epochs == 1``
        no loss lattice is needed (SPEC 10b) and the bracket width is set by the ~1e-13
        numerical error instead.
    max_lattice : int
        Largest composition window in lattice points (default 2**21, i.e. 16 MiB per array;
        peak RSS stays under 200 MB at E = 1e4).  Where ``tolerance`` would need a larger
        window (many epochs: the spacing must shrink like tolerance * eps / E), the lattice is
        coarsened instead: the bracket stays certified but is wider than ``tolerance``;
        ``lattice_spacing`` reports the spacing used.

    Notes
    -----
    Both directions (remove: log(S/M) under H1; add: -log(S/M) under H0) are computed and the
    larger delta is reported.  ``epochs > 1``: the single-epoch law is put on cells by one
    FFT, each cell's loss is rounded up (upper bound) and down (lower bound) onto a lattice of
    spacing Delta, and the E-fold convolution is one FFT power on a window around E times the
    mean loss whose outside mass is bounded by a Chernoff bound of the lattice law (added to
    the upper bound, subtracted from the lower one).
    """

    def __init__(self, sigma: float, rounds: float, epochs: int = 1, tolerance: float = 2e-3,
                 max_lattice: int = 2 ** 21):
        self.sigma, self.rounds = _check_sigma_rounds(sigma, rounds)
        self.epochs = int(V.check_rounds("epochs", epochs, minimum=1))
        self.tolerance = float(V.check_open_unit("tolerance", tolerance))
        self.max_lattice = int(V.check_rounds("max_lattice", max_lattice, minimum=1024))
        self.lattice_spacing = math.nan  # loss-lattice spacing of the last E > 1 composition
        # E = 1 uses the best single-epoch representation (tilted for small sigma); the E > 1
        # lattice needs cell masses over the whole window, i.e. the untilted series
        self._law: Any
        if self.epochs == 1:
            self._law = _law_best(self.sigma, self.rounds)
        else:
            self._law = (_untilted_ok(self.sigma, self.rounds, 1e-13)
                         or _log_law(self.sigma, self.rounds, _LOGDOMAIN_BUDGET_COMPOSE_S)
                         or _law(self.sigma, self.rounds))
        _require_converged(self._law)
        self._lattice: dict[float, Any] = {}

    # ---- E = 1: direct series ------------------------------------------------
    def _delta1_tilted(self, eps: float) -> tuple[float, float]:
        law, M = self._law, self.rounds
        ee = math.exp(min(eps, 700.0))
        y = M * math.expm1(eps)  # remove: P1[x > y] - e^eps P0[x > y]
        y2 = M * math.expm1(-eps)  # add: P0[x <= y2] - e^eps P1[x <= y2]
        yq = min(max(y, law.xlo), law.xhi)
        y2q = min(max(y2, law.xlo), law.xhi)
        g0, g1 = law.wrapped_cdf_pair([yq, y2q])
        er = law.err(np.array([yq, y2q]))
        if y > law.xhi:
            # only an upper bound: delta_remove <= P1[x > y] <= P1[x > xhi] (and the tail bound)
            r_lo = 0.0
            r_hi = min(1.0 - g1[0] + er[0], float(upper_tail_h1(self.sigma, M, [y])[0]))
        else:
            c = (1 - g1[0]) - ee * (1 - g0[0])
            r_hi = c + er[0] * (1.0 + ee)
            r_lo = c - er[0] * (1.0 + ee)
        if y2 <= law.xlo:
            a_lo, a_hi = 0.0, float(law.err(law.xlo))  # P0[x <= xlo] <= the left-tail error
        else:
            c = g0[1] - ee * g1[1]
            a_hi = c + er[1] * (1.0 + ee)
            a_lo = c - er[1] * (1.0 + ee)
        return float(max(r_lo, a_lo, 0.0)), float(min(max(r_hi, a_hi), 1.0))

    def _delta1(self, eps: float) -> tuple[float, float]:
        law, M = self._law, self.rounds
        if isinstance(law, LogDomainPair):
            if eps > 700.0:  # beyond every loss on the grid; only the tail mass off the grid remains
                return 0.0, law.floor
            d, e = law.delta(eps)
            return float(max(d - e, 0.0)), float(min(d + e, 1.0))
        if isinstance(law, TiltedLognormalSum):
            return self._delta1_tilted(eps)
        if eps > 700.0:  # e^eps would overflow; only the mass beyond the window can remain
            return 0.0, min(1.0, law.tail_hi1 + law.tail_lo0)
        num = law.err_trunc + law.err_round
        ee = math.exp(eps)
        y = M * math.expm1(eps)  # remove: P1[x > y] - e^eps P0[x > y]
        y2 = M * math.expm1(-eps)  # add: P0[x <= y2] - e^eps P1[x <= y2]
        pts = [min(max(y, law.xlo), law.xhi), min(max(y2, law.xlo), law.xhi)]
        g0, g1 = law.wrapped_cdf_pair(pts)
        if y >= law.xhi:
            r_lo, r_hi = 0.0, law.tail_hi1
        else:
            c = (1 - g1[0]) - ee * (1 - g0[0])
            r_hi = c + law.tail_lo1 + law.tail_hi1 + num + ee * (law.tail_lo0 + num)
            r_lo = c - law.tail_lo1 - num - ee * (law.tail_lo0 + law.tail_hi0 + num)
        if y2 <= law.xlo:
            a_lo, a_hi = 0.0, law.tail_lo0
        else:
            c = g0[1] - ee * g1[1]
            a_hi = c + law.tail_lo0 + num + ee * (law.tail_lo1 + law.tail_hi1 + num)
            a_lo = c - law.tail_lo0 - law.tail_hi0 - num - ee * (law.tail_lo1 + num)
        lo = max(r_lo, a_lo, 0.0)
        hi = min(max(r_hi, a_hi), 1.0)
        return float(lo), float(hi)

    # ---- E > 1: lattice PLD ------------------------------------------------
    def _lattice_pmfs(self, delta_l: float) -> dict[str, Any]:
        """Single-epoch lattice PMFs: dict direction -> (jmin, p_up, inf_up, jmin_lo, p_lo, miss_lo)."""
        law, M = self._law, self.rounds
        if isinstance(law, LogDomainPair):
            return self._lattice_pmfs_logdomain(delta_l)
        # cells of x = S - M narrow enough that the loss varies by <= delta_l / 2 near x = 0, but at
        # most 2^20 of them (memory; coarser cells are rounded over more lattice points: still certified)
        h_target = max(delta_l * M * 0.5, law.P / 2 ** 20)
        edges, h, p0, p1, err = _cell_masses(law, h_target)
        p0 = np.maximum(p0, 0.0)
        p1 = np.maximum(p1, 0.0)
        xa = edges
        xb = edges + h
        with np.errstate(divide="ignore", invalid="ignore"):
            la = np.where(xa > -M, np.log1p(np.maximum(xa, -M) / M), -np.inf)
            lb = np.where(xb > -M, np.log1p(np.maximum(xb, -M) / M), -np.inf)
        out = {}
        hi0, hi1 = law.tail_hi0, law.tail_hi1
        if max(hi0, hi1) > 1e-10:  # the far tables tighten the window's upper tail bounds
            hi0 = min(hi0, float(upper_tail_h0(self.sigma, M, [law.xhi], far=True)[0]))
            hi1 = min(hi1, float(upper_tail_h1(self.sigma, M, [law.xhi], far=True)[0]))
        tails_up = {"remove": hi1 + law.tail_lo1, "add": law.tail_lo0 + hi0}
        # Mass outside the window, upper bound (moving loss mass up only raises delta): at +inf only
        # where its loss is unbounded.  remove: H1 mass below xlo has loss <= log1p(xlo/M); H1 mass
        # above xhi follows the certified survival bound (far tables).  add: H0 mass above xhi has
        # loss <= -log1p(xhi/M); H0 mass below xlo (loss up to +inf) stays at +inf.
        l_xlo = math.log1p(max(law.xlo, -M) / M) if law.xlo > -M else -math.inf
        l_xhi = math.log1p(law.xhi / M)
        spread = self._spread_tail(hi1, l_xhi)
        extra = {"remove": [(l_xlo, law.tail_lo1)] + spread, "add": [(-l_xhi, hi0)]}
        inf_tail = {"remove": hi1 - sum(mk for _, mk in spread), "add": law.tail_lo0}
        for direction, p, l_lo, l_hi in (("remove", p1, la, lb), ("add", p0, -lb, -la)):
            fin_hi = np.isfinite(l_hi)
            inf_up = float(np.sum(p[~fin_hi])) + max(inf_tail[direction], 0.0) + err
            ex = [(lv, mv) for lv, mv in extra[direction] if mv > 0 and math.isfinite(lv)]
            j_up = np.ceil(l_hi[fin_hi] / delta_l).astype(np.int64)
            j_dn = np.floor(np.where(np.isfinite(l_lo[fin_hi]), l_lo[fin_hi], -1e6) / delta_l).astype(np.int64)
            pf = p[fin_hi]
            if ex:  # append the placed outside mass to the upper PMF only
                j_up = np.concatenate([j_up, np.ceil(np.array([lv for lv, _ in ex]) / delta_l).astype(np.int64)])
                pf_up = np.concatenate([pf, np.array([mv for _, mv in ex])])
            else:
                pf_up = pf
            # drop negligible low-loss mass far below (moves it up for the upper bound)
            jmin = int(j_up.min())
            jmax = int(j_up.max())
            pu = np.bincount(j_up - jmin, weights=pf_up, minlength=jmax - jmin + 1)
            jdmin = max(int(j_dn.min()), jmin - 10 ** 7)
            jd = np.maximum(j_dn, jdmin)
            pd = np.bincount(jd - jdmin, weights=pf)
            miss_lo = tails_up[direction] + err + float(np.sum(p[~fin_hi])) * 0.0
            out[direction] = (jmin, pu, inf_up, jdmin, pd, miss_lo)
        return out

    def _spread_tail(self, tot: float, l_xhi: float) -> list[tuple[float, float]]:
        """H1 mass above the window (at most ``tot``) as (loss, mass) pairs under a certified survival bound.

        B(y) >= P1[x > y] (truncated Chernoff with the far tables) on a geometric grid y_k from
        xhi, loss step 0.05; the mass B(y_k) - B(y_{k+1}) is placed at the loss of y_{k+1} (its
        upper end); what remains beyond the last point goes to +inf (the caller).
        """
        M = self.rounds
        if not tot > 1e-10:
            return []  # negligible next to any delta asked for (E * tot at +inf): keep it there
        losses = np.empty(0)
        B = np.empty(0)
        for k in range(16):  # chunks of 50 points (loss step 0.05) until the bound is negligible
            lk = l_xhi + 0.05 * np.arange(50 * k + 1, 50 * k + 51)
            losses = np.concatenate([losses, lk])
            B = np.concatenate([B, upper_tail_h1(self.sigma, M, M * np.expm1(lk), far=True)])
            if B[-1] < 1e-25 * tot:
                break
        B = np.minimum.accumulate(np.minimum(B, tot))  # S is non-increasing: a bound at y_k holds beyond
        masses = -np.diff(np.concatenate([[tot], B]))
        keep = masses > 0
        return [(float(lv), float(mv)) for lv, mv in zip(losses[keep], masses[keep])]

    def _lattice_pmfs_logdomain(self, delta_l: float) -> dict[str, Any]:
        """Lattice PMFs from the log-domain law: loss cells are cells of U = log S (exact edges).

        Cell k holds U in [log M + k D, log M + (k+1) D).  remove: loss U - log M under H1, in
        [k D, (k+1) D) -> rounded up to k+1, down to k.  add: loss log M - U under H0, in
        (-(k+1) D, -k D] -> up to -k, down to -(k+1).  Mass off the grid and the l1 error
        estimate of the masses go to +inf loss (upper bound) / are subtracted (lower bound).
        """
        k0, p0, p1, outside, err = self._law.lattice_masses(delta_l)
        n = p0.size
        return {
            "remove": (k0 + 1, p1, outside + err, k0, p1, err),
            "add": (-(k0 + n - 1), p0[::-1].copy(), outside + err, -(k0 + n), p0[::-1].copy(), err),
        }

    def _compose(self, jmin: int, pmf: NDArray[np.float64], E: int, delta_l: float,
                 tau: float) -> tuple[int, NDArray[np.float64], float]:
        """E-fold convolution on a window; returns (s0, composed pmf, outside-mass bound)."""
        k = np.arange(pmf.size, dtype=float)
        tot = float(pmf.sum())
        # (np.sum of products rather than np.dot: BLAS threads are slow on a loaded machine)
        mean = float(np.sum(k * pmf)) / tot
        var = float(np.sum((k - mean) ** 2 * pmf)) / tot
        # Chernoff bounds for the sum of E i.i.d. lattice variables (sub-probability, mass tot)
        lam = np.logspace(-6, 0, 31) / max(math.sqrt(var), 1.0)
        kc = k - mean
        # exponents clipped to [-700, 700]: raising the small terms only enlarges the MGF
        # (still a valid Chernoff bound) and keeps subnormals out of the dot products
        pm = np.maximum(pmf, 1e-150)  # raising tiny masses keeps the MGF an upper bound
        lmgf_p = np.array([math.log(float(np.sum(np.exp(np.clip(l * kc, -300.0, 700.0)) * pm))) for l in lam])
        lmgf_m = np.array([math.log(float(np.sum(np.exp(np.clip(-l * kc, -300.0, 700.0)) * pm))) for l in lam])
        log_tau = math.log(tau)
        # smallest a with min_l exp(-l a + E lmgf) <= tau
        a_hi = float(np.min((E * lmgf_p - log_tau) / lam))
        a_lo = float(np.min((E * lmgf_m - log_tau) / lam))
        span = E * (pmf.size - 1)
        lo_i = max(0.0, E * mean - a_lo)
        hi_i = min(float(span), E * mean + a_hi)
        L = int(2 ** math.ceil(math.log2(max(hi_i - lo_i + pmf.size + 2, 16))))
        if L >= span + 1:
            L = int(2 ** math.ceil(math.log2(span + 1)))
            s0 = 0
            outside = 0.0
        else:
            s0 = int(math.floor(lo_i))
            outside = 2.0 * tau
        if L > self.max_lattice:
            raise _WindowTooLarge(int(hi_i - lo_i + pmf.size + 2))
        f = np.fft.rfft(pmf, n=L)
        f **= E
        g = np.fft.irfft(f, n=L)
        del f
        # index k of g holds total s with s = k (mod L), s in [s0, s0 + L)
        shift = s0 % L
        g = np.roll(g, -shift)
        err_fft = 4e-16 * math.log2(L) * E * math.sqrt(L)  # round-off estimate
        return E * jmin + s0, g, outside + err_fft

    def _lattice_delta_fn(self, delta_l: float) -> dict[str, Any]:
        if delta_l in self._lattice:
            cached: dict[str, Any] = self._lattice[delta_l]
            return cached
        self._lattice.clear()  # one lattice at a time: E = 1e4 windows hold tens of MB each
        dl = delta_l
        while True:
            try:
                comp = self._build_lattice(dl)
                break
            except _WindowTooLarge as exc:
                # memory cap: a coarser lattice (certified still, just a wider bracket)
                dl *= 1.1 * exc.needed / self.max_lattice
        self.lattice_spacing = dl
        self._lattice[delta_l] = comp
        return comp

    def _build_lattice(self, delta_l: float) -> dict[str, Any]:
        E = self.epochs
        pm = self._lattice_pmfs(delta_l)
        comp = {}
        for direction, (jmin, pu, inf_up, jdmin, pd, miss) in pm.items():
            tau = 1e-14
            s_up, g_up, out_up = self._compose(jmin, pu, E, delta_l, tau)
            hs_up = _HockeyStick(s_up, g_up, delta_l)
            del g_up
            s_dn, g_dn, out_dn = self._compose(jdmin, pd, E, delta_l, tau)
            hs_dn = _HockeyStick(s_dn, g_dn, delta_l)
            del g_dn
            inf_tot = -math.expm1(E * math.log1p(-min(inf_up, 1.0))) if inf_up < 1 else 1.0
            comp[direction] = (hs_up, out_up + inf_tot, hs_dn, out_dn + E * miss)
        return comp

    def _deltaE(self, eps: float, delta_l: float) -> tuple[float, float]:
        comp = self._lattice_delta_fn(delta_l)
        lo_all, hi_all = 0.0, 0.0
        for hs_up, add_up, hs_dn, sub_dn in comp.values():
            lo_all = max(lo_all, hs_dn(eps) - sub_dn)
            hi_all = max(hi_all, hs_up(eps) + add_up)
        return max(lo_all, 0.0), min(hi_all, 1.0)

    def _delta_l_for(self, eps_guess: float) -> float:
        E = self.epochs
        return max(self.tolerance * max(eps_guess, 1e-3) / (2.0 * E), 1e-6)

    # ---- public -----------------------------------------------------------
    def delta(self, epsilon: float) -> tuple[float, float]:
        """Certified bracket [lower, upper] of delta(epsilon) for the E-epoch mechanism."""
        eps = float(V.check_finite_positive("epsilon", epsilon)) if epsilon != 0 else 0.0
        if self.epochs == 1:
            return self._delta1(eps)
        # lattice spacing from the larger of eps and the GDP scale mu (relative width ~ tolerance)
        mu = math.sqrt(self.epochs * math.expm1(1.0 / self.sigma ** 2) / self.rounds)
        return self._deltaE(eps, self._delta_l_for(max(eps, mu)))

    def tradeoff_lower(self, a: Any, n_eps: int = 400) -> Any:
        """Certified lower bound on the E-epoch mechanism's trade-off curve (symmetrised, both directions).

        Uses the (eps, delta) duality f(a) >= sup_eps max{0, 1 - delta(eps) - e^eps a,
        e^{-eps} (1 - delta(eps) - a)} with the certified *upper* delta(eps) on an eps grid of
        ``n_eps`` points (any grid gives a valid bound; a finer grid a tighter one).
        """
        av = V.check_closed_unit("a", a)
        fn: Callable[[float], tuple[float, float]]
        if self.epochs == 1:
            fn = self._delta1
        else:
            mu = math.sqrt(self.epochs * math.expm1(1.0 / self.sigma ** 2) / self.rounds)
            dl = self._delta_l_for(_gdp_eps(mu, 1e-4))

            def fn(e: float) -> tuple[float, float]:
                return self._deltaE(e, dl)

        # eps range: up to where the certified delta is negligible
        e_max = 1.0
        while fn(e_max)[1] > 1e-12 and e_max < 200:
            e_max *= 2
        eps = np.linspace(0.0, e_max, n_eps)
        d_up = np.array([fn(float(e))[1] for e in eps])
        x = np.atleast_1d(av).ravel()[:, None]
        with np.errstate(over="ignore"):
            c1 = 1.0 - d_up[None, :] - np.exp(eps)[None, :] * x
            c2 = np.exp(-eps)[None, :] * (1.0 - d_up[None, :] - x)
        f = np.max(np.maximum(np.maximum(c1, c2), 0.0), axis=1)
        return V.scalar_or_array(f.reshape(np.shape(av)))

    def epsilon(self, delta: float) -> tuple[float, float]:
        """Certified bracket [lower, upper] of epsilon(delta) (upper may be inf)."""
        d = float(V.check_open_unit("delta", delta))
        fn: Callable[[float], tuple[float, float]]
        if self.epochs == 1:
            fn = self._delta1
        else:
            # a first guess of epsilon from the GDP asymptotics sets the lattice spacing
            mu = math.sqrt(self.epochs * math.expm1(1.0 / self.sigma ** 2) / self.rounds)
            guess = _gdp_eps(mu, d)
            dl = self._delta_l_for(guess)

            def fn(e: float) -> tuple[float, float]:
                return self._deltaE(e, dl)

            lo, hi = _invert(fn, d)
            # the GDP guess can be far off (small sigma): refine the lattice from the bracket found
            # when it missed the target by more than 2x (each refinement rebuilds the lattice)
            for _ in range(2):
                if not (math.isfinite(hi) and hi - lo > 2.0 * self.tolerance * hi and lo > 0):
                    break
                dl_new = 0.8 * dl * self.tolerance * hi / (hi - lo)
                if dl_new < 1e-6 or self.lattice_spacing > dl:  # spacing floor / memory cap reached
                    break
                dl = dl_new
                lo2, hi2 = _invert(fn, d)
                lo, hi = max(lo, lo2), min(hi, hi2)  # both brackets are certified
            return lo, hi

        return _invert(fn, d)


class _WindowTooLarge(Exception):
    def __init__(self, needed: int):
        super().__init__(needed)
        self.needed = needed


class _HockeyStick:
    """eps -> sum_{l > eps} g_l (1 - e^{eps - l}) in O(1) from two tail sums (eps >= 0).

    Only the tail sums over the positive losses are stored (memory ~ 2 arrays).
    """

    def __init__(self, s0: int, g: NDArray[np.float64], delta_l: float):
        k0 = max(0, 1 - s0)  # first index with loss (s0 + k) * delta_l > 0
        self.j0 = s0 + k0  # lattice index of the first stored entry
        self.delta_l = delta_l
        gk = g[k0:]
        self.t1 = np.cumsum(gk[::-1])[::-1]
        w = np.arange(gk.size, dtype=float)  # reused in place: loss, e^{-loss}, g e^{-loss}
        w += self.j0
        w *= -delta_l
        np.exp(w, out=w)
        w *= gk
        t2 = np.cumsum(w[::-1], out=w)[::-1]
        # keep only the part where the tail mass matters (> 1e-30); beyond it the hockey-stick
        # value is below 1e-30, which ``dropped`` accounts for (added to upper bounds)
        n = int(np.searchsorted(-self.t1, -1e-30, side="right")) + 1
        n = min(n, self.t1.size)
        self.dropped = 1e-30 if n < self.t1.size else 0.0
        self.t1 = np.array(self.t1[:n])
        self.t2 = np.array(t2[:n])

    def __call__(self, eps: float) -> float:
        # first stored index with loss > eps
        j = math.floor(eps / self.delta_l) + 1
        while (j - 1) * self.delta_l > eps:
            j -= 1
        while j * self.delta_l <= eps:
            j += 1
        k = max(j - self.j0, 0)
        if k >= self.t1.size:
            return self.dropped
        return float(self.t1[k] - math.exp(eps) * self.t2[k]) + self.dropped


def _gdp_eps(mu: float, delta: float) -> float:
    lo, hi = 0.0, 1.0
    while float(_gdp_delta(mu, hi)) > delta and hi < 1e4:
        hi *= 2
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if float(_gdp_delta(mu, mid)) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def _invert(fn: Callable[[float], tuple[float, float]], d: float) -> tuple[float, float]:
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
        if b > 256:
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
        if e_up > 1000.0:
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


# ------------------------------------------------------------------ accountant
class RandomAllocationAccountant:
    """(eps, delta) and trade-off accounting for E epochs of random allocation.

    Parameters
    ----------
    noise_multiplier : float (sigma)
    rounds_per_epoch : int (M)
    epochs : int (E)
    method : {"exact", "closed_form", "gdp_asymptotic"}
        ``"exact"``: certified numerical brackets (this module).  ``"closed_form"``: Theorem 3.1
        delta_min composed over epochs (an upper bound on delta, valid only where the theorem
        applies, else ValueError).  ``"gdp_asymptotic"``: the Theorem 4.2 / Poisson limit
        mu = sqrt(E (e^{1/sigma^2} - 1) / M) -- an asymptotic *approximation*, never a bound.
    tolerance : float
        Relative width target of the exact epsilon bracket.

    ``get_epsilon`` / ``get_delta`` return ``(lower, upper)`` for ``"exact"``, the bound for
    ``"closed_form"`` (as ``(nan, upper)`` -- no lower bound) and the approximation
    ``(value, value)`` for ``"gdp_asymptotic"``; ``bound_kind`` says which.
    """

    METHODS = ("exact", "closed_form", "gdp_asymptotic")

    def __init__(self, noise_multiplier: float, rounds_per_epoch: int, epochs: int = 1,
                 method: str = "exact", tolerance: float = 2e-3):
        self.sigma, self.rounds = _check_sigma_rounds(noise_multiplier, rounds_per_epoch)
        self.epochs = int(V.check_rounds("epochs", epochs, minimum=1))
        self.method = V.check_choice("method", method, self.METHODS)
        self.tolerance = tolerance
        self.bound_kind = {"exact": "certified bracket", "closed_form": "upper bound (Theorem 3.1)",
                           "gdp_asymptotic": "asymptotic approximation (not a bound)"}[self.method]
        self._pld: RandomAllocationPLD | None = None

    @property
    def pld(self) -> RandomAllocationPLD:
        if self._pld is None:
            self._pld = RandomAllocationPLD(self.sigma, self.rounds, self.epochs, self.tolerance)
        return self._pld

    def gdp_mu(self) -> float:
        """mu of Gaussian DP.

        ``"gdp_asymptotic"``: sqrt(E (w - 1)/M) (Theorem 4.2 limit; an approximation).
        ``"exact"``: the smallest mu such that G_mu <= f_M holds on the whole interval
        a in [1e-10, 1 - 1e-10], certified between the points of a grid a_i (2001 points; 257
        where the single-epoch law is the slow tilted series) by convexity: on [a_i, a_{i+1}],
        f_M lies above the secants through (a_{i-1}, a_i) and through (a_{i+1}, a_{i+2}) extended
        (built from the error-bar ends that make them lowest), and G_mu - (that envelope) is
        convex on each of its linear pieces, so checking the piece ends suffices.  Composed as
        mu sqrt(E) (G_mu is symmetric, so f_M^{-1} is covered too).  Below a = 1e-10 (both curves
        within 1e-10 of 1) it is not certified.  ``gdp_mu_scan()`` gives the value checked only
        at the grid points.
        """
        return self._gdp_mu(certified=True)

    def gdp_mu_scan(self) -> float:
        """As :meth:`gdp_mu` for ``"exact"``, but checked only at the grid points (not a certificate)."""
        return self._gdp_mu(certified=False)

    def _gdp_mu(self, certified: bool) -> float:
        if self.method == "closed_form":
            raise ValueError("Theorem 3.1 gives no Gaussian-DP statement; use method='exact' "
                             "(certified scan) or 'gdp_asymptotic' (approximation)")
        if self.method == "gdp_asymptotic":
            return math.sqrt(self.epochs * math.expm1(1.0 / self.sigma ** 2) / self.rounds)
        from dpbounds._ufuncs import ndtr, ndtri_complement, ndtri  # type: ignore[import-not-found, unused-ignore]

        slow = isinstance(_law_best(self.sigma, self.rounds), TiltedLognormalSum)  # ~25 ms per point
        # uniform in the Gaussian scale z = Phi^{-1}(1 - a): G_mu varies evenly along it
        z = np.linspace(float(ndtri_complement(1e-10)), float(ndtri(1e-10)), 257 if slow else 2001)
        a = np.asarray(ndtr(-z), dtype=float)  # a_i = Phi(-z_i), increasing
        f, err = tradeoff_exact(a, self.sigma, self.rounds)
        f_lo = np.asarray(f) - np.asarray(err)
        if not certified:
            pts, env = a, f_lo
        else:
            f_hi = np.asarray(f) + np.asarray(err)
            a0, a1 = a[:-1], a[1:]            # intervals [a_i, a_{i+1}]
            # left secant through (a_{i-1}, a_i), right secant through (a_{i+1}, a_{i+2}), each
            # evaluated on [a_i, a_{i+1}] with the ends of the error bars that make it lowest
            sl = np.full(a0.size, np.nan)
            sl[1:] = (f_lo[1:-1] - f_hi[:-2]) / (a[1:-1] - a[:-2])
            sr = np.full(a0.size, np.nan)
            sr[:-1] = (f_hi[2:] - f_lo[1:-1]) / (a[2:] - a[1:-1])

            def envelope(x: NDArray[np.float64]) -> NDArray[np.float64]:
                left = np.where(np.isnan(sl), -np.inf, f_lo[:-1] + sl * (x - a0))
                right = np.where(np.isnan(sr), -np.inf, f_lo[1:] + sr * (x - a1))
                return np.asarray(np.maximum(np.maximum(left, right), 0.0), dtype=np.float64)

            with np.errstate(divide="ignore", invalid="ignore"):
                xs = (f_lo[1:] - f_lo[:-1] + sl * a0 - sr * a1) / (sl - sr)  # where the secants cross
            xs = np.where(np.isfinite(xs) & (xs > a0) & (xs < a1), xs, a0)
            pts = np.concatenate([a0, a1, xs])
            env = np.concatenate([envelope(a0), envelope(a1), envelope(xs)])
        env = np.clip(env, 1e-300, 1.0)
        mus = ndtri_complement(pts) - ndtri(env)  # G_mu(p) <= env(p)  <=>  mu >= this
        return float(np.nanmax(mus)) * math.sqrt(self.epochs)

    def get_delta(self, epsilon: float) -> tuple[float, float]:
        eps = float(V.check_finite_positive("epsilon", epsilon))
        if self.method == "exact":
            return self.pld.delta(eps)
        if self.method == "gdp_asymptotic":
            d = float(_gdp_delta(self.gdp_mu(), eps))
            return d, d
        return math.nan, self._closed_form_delta()

    def _closed_form_delta(self) -> float:
        from dpbounds import _ufuncs as U

        d = float(U.delta_bound_exact(self.sigma, self.rounds))
        if not math.isfinite(d):
            raise ValueError(
                f"Theorem 3.1 does not apply at sigma={self.sigma}, rounds={self.rounds} "
                "(condition (2) or M >= 3 / sigma >= sqrt(3/ln M) fails); use method='exact'")
        return float(U.compose_delta(d, float(self.epochs)))

    def get_epsilon(self, delta: float) -> tuple[float, float]:
        d = float(V.check_open_unit("delta", delta))
        if self.method == "exact":
            return self.pld.epsilon(d)
        if self.method == "gdp_asymptotic":
            e = _gdp_eps(self.gdp_mu(), d)
            return e, e
        # Theorem 3.1 gives f >= f_{0, delta_min}: (0, delta)-DP for delta >= composed delta_min
        return (math.nan, 0.0) if self._closed_form_delta() <= d else (math.nan, math.inf)

    def tradeoff(self, a: Any) -> tuple[Any, Any]:
        """Trade-off information at type-I errors ``a``.

        ``epochs == 1``: the exact curve f_M(a) of the dominating pair and its error bound
        (:func:`tradeoff_exact`).  ``epochs > 1``: ``(lower, nan)`` where ``lower`` is a
        certified lower bound on the E-epoch mechanism's symmetrised trade-off curve
        (:meth:`RandomAllocationPLD.tradeoff_lower`); no error bound/upper curve is provided.
        """
        if self.method != "exact":
            raise ValueError("tradeoff(a) is available for method='exact'")
        if self.epochs == 1:
            return tradeoff_exact(a, self.sigma, self.rounds)
        lower = self.pld.tradeoff_lower(a)
        return lower, np.full(np.shape(lower), np.nan) if np.ndim(lower) else math.nan
