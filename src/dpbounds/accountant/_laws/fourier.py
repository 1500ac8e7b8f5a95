"""The Fourier-series law of the lognormal sum (private): the fast path of the exact accountant.

x = S - M is represented by its characteristic function psi0(t) = chi(t)^M (H0) and
psi1(t) = chi(t)^(M-1) chi_w(t) (H1 = size-biased H0), with chi - 1 from the C kernel
``dpb_exact_lognormal_cf`` (shifted-contour trapezoid).  A window [xlo, xlo + P) is chosen from
rigorous tail bounds (:mod:`dpbounds.accountant._laws.tails`); CDFs inside it come from the Fourier
series of the P-periodic wrapping of the law of x (exact coefficients psi(2 pi n / P)); the
wrapped CDF differs from the true one by at most the mass outside the window (aliasing), which
the tail bounds certify.  Serves sigma from about 0.8 up, or large M (wherever the window holds
the tails to 1e-11).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbounds._kernels import FOURIER_SERIES_ERR_UNITS, fourier_series_re, lognormal_cf_m1, lognormal_cf_m1_pair_grid  # type: ignore[import-not-found, unused-ignore]
from dpbounds.accountant._cache import cached
from dpbounds.accountant._invert import bisect, invert_cdf
from dpbounds.accountant._lattice import fft_size, place_upper
from dpbounds.accountant._laws.interface import FArr, LatticePMFs, SingleEpochLaw
from dpbounds.accountant._laws.tails import (
    extend_cdf_brackets,
    lower_tail_h0,
    spread_along_bound,
    upper_tail_h0,
    upper_tail_h0_scan,
    upper_tail_h1,
    upper_tail_h1_window,
)
from dpbounds.accountant._place import place_aligned

CArr = NDArray[np.complex128]
IArr = NDArray[np.int64]
# (interval index, H0 mass, H1 mass, error, (H0, H1, error) of the piece below the lattice)
Pieces = tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], tuple[float, float, float]]

__all__ = ["FourierLaw"]

_TWO_PI = 2.0 * math.pi
_U = 2.0 ** -53  # unit round-off
_N_STEP = 64       # the series' length is a multiple of this
_N_CAP_BASE = 256  # the cap on its length: 256 + 512 + 1024 + ... (blocks of at most 65536) >= max_freq


class FourierLaw(SingleEpochLaw):
    """Law of x = S - M under H0 and H1 through its characteristic function on a window.

    Parameters
    ----------
    sigma, M : noise multiplier and rounds per epoch.
    tail : target mass outside the window (each side, each hypothesis).
    cut : |psi| below which Fourier coefficients are dropped.
    max_freq : cap on the number of Fourier coefficients.
    """

    def __init__(self, sigma: float, M: float, tail: float = 1e-13, cut: float = 1e-20,
                 max_freq: int = 250_000, xhi_max: float | None = None,
                 abort_above: float | None = None):
        self.sigma = float(sigma)
        self.M = float(M)
        s2 = 1.0 / (self.sigma * self.sigma)
        self.w_m1 = math.expm1(s2)
        sd = math.sqrt(self.M * self.w_m1)
        self.sd = sd
        # ---- frequency cut-off first: it fixes the cost per unit window width
        logcut = math.log(cut)
        # t_max: the scan point after the last one where M log|chi| >= log cut, scanned from the
        # top in chunks (the same points and values as a full scan, ~60 % fewer kernel calls)
        tg = np.logspace(-8, 6, 281) / max(math.sqrt(self.w_m1), 1e-300)
        self.t_max = float(tg[0])
        # no scan point above t_skip can be above the cut: the density f of Y is unimodal and
        # vanishes at both ends, so (integrating by parts) |chi(t)| <= (1 / t) int |f'| = 2 f_max / t,
        # f_max = e^{s^2} / (s sqrt(2 pi)) (s = 1 / sigma); twice the t where M log(2 f_max / t) =
        # log cut leaves room for the computed modulus.  The scan starts below it: the same result.
        s_ = 1.0 / self.sigma
        log_t_skip = math.log(4.0) + s_ * s_ - math.log(s_ * math.sqrt(2.0 * math.pi)) - logcut / self.M
        top = tg.size
        if log_t_skip < math.log(tg[-1]):
            top = min(tg.size, int(np.searchsorted(tg, math.exp(log_t_skip), side="right")) + 1)
        for hi_i in range(top, 0, -48):
            lo_i = max(hi_i - 48, 0)
            with np.errstate(divide="ignore"):
                lg = self.M * _clog1p(lognormal_cf_m1(self.sigma, tg[lo_i:hi_i])).real
            above = np.nonzero(lg >= logcut)[0]
            if above.size:
                self.t_max = float(tg[min(lo_i + above[-1] + 1, tg.size - 1)])
                break
        p_max = _TWO_PI * 0.6 * max_freq / self.t_max  # leave room: t_max comes from a coarse scan
        # ---- window from the tail bounds
        def f_lo(xx: float) -> float:
            return float(lower_tail_h0(self.sigma, self.M, [-xx])[0])

        if f_lo(self.M) <= tail:
            lo_mag = bisect(f_lo, 1e-9 * sd, self.M, tail, log=True, iters=14)
        else:
            lo_mag = self.M
        self.xlo = -lo_mag
        self.tail_lo0 = f_lo(lo_mag) if lo_mag < self.M else 0.0

        hi_vals: dict[float, tuple[float, float]] = {}  # this search's evaluations (a point is
        # often evaluated twice: the bracket end, and the final point for the window's tails)

        def eval_hi(xs: list[float]) -> None:
            new = [xx for xx in xs if xx not in hi_vals]
            if new:  # one vectorised call for several points (the bounds work point by point)
                h0 = upper_tail_h0_scan(self.sigma, self.M, new)
                h1 = upper_tail_h1_window(self.sigma, self.M, new, tail)
                for xx, a, b in zip(new, h0.tolist(), h1.tolist()):
                    hi_vals[xx] = (a, b)

        def tails_hi(xx: float) -> tuple[float, float]:
            eval_hi([xx])
            return hi_vals[xx]

        cap = p_max / 1.05 + self.xlo
        if xhi_max is not None:
            cap = min(cap, xhi_max)
        # the window ends where the H1 bound meets the level and the H0 bound a tenth of it (the
        # H0 tail enters every CDF error of the window and the trade-off curve's error at its
        # steep end): less where the H0 bound's floor (n P[Y > b] at the table's largest b) is
        # within 20 % of that, never more than the level itself
        h0_floor = float(upper_tail_h0_scan(self.sigma, self.M, [1e300])[0])
        h0_weight = max(1.0, min(10.0, tail / (1.2 * h0_floor))) if h0_floor > 0 else 10.0

        def f_hi(xx: float) -> float:
            t0, t1 = tails_hi(xx)
            return max(h0_weight * t0, t1)
        # hi = the first of h0, 4 h0, 16 h0, ... where the bound is met or that reaches cap;
        # the points are evaluated four at a time
        hi = max(10 * sd, 10.0)
        while True:
            pts = [hi]
            while len(pts) < 4 and pts[-1] < cap:
                pts.append(pts[-1] * 4.0)
            eval_hi(pts)
            stop = next((p for p in pts if not (f_hi(p) > tail and p < cap)), None)
            if stop is not None:
                hi = stop
                break
            hi = pts[-1] * 4.0
        hi = min(hi, cap)
        if f_hi(hi) <= tail:
            # xhi to 0.6 % (ample): the bracket [lo_b, hi] (lo_b infeasible, hi feasible) is cut at
            # 8 geometric points a round, evaluated in one call (a bracket of ratio 4 takes three
            # rounds); the point kept is one where the bounds were evaluated and met the level
            lo_b = hi / 4.0 if hi > 10 * sd else 1e-9
            while hi / lo_b > 1.006:
                pts = (lo_b * (hi / lo_b) ** (np.arange(1, 9) / 9.0)).tolist()
                eval_hi(pts)
                first = next((k for k, p in enumerate(pts) if f_hi(p) <= tail), None)
                if first is None:
                    lo_b = pts[-1]
                else:
                    hi = pts[first]
                    lo_b = pts[first - 1] if first > 0 else lo_b
        self.xhi = hi
        self.tail_hi0, self.tail_hi1 = tails_hi(hi)  # the bounds at the final point itself
        self.tail_lo1 = self.tail_lo0 * max(0.0, 1.0 + self.xlo / self.M)
        self.P = (self.xhi - self.xlo) * 1.05
        self.aborted = False
        if abort_above is not None and max(self.tail_hi0, self.tail_hi1) > abort_above:
            # the window cannot hold the heavy right tail: skip the (expensive) coefficients;
            # the caller switches to the tilted representation (TiltedFourierLaw)
            self.aborted = True
            self.truncated = True
            return
        # ---- Fourier coefficients
        dt = _TWO_PI / self.P
        # the series stops after the last coefficient where M log|chi| >= log cut, rounded up to a
        # multiple of _N_STEP, once every coefficient computed beyond it (at least a quarter as many
        # again) stays below the cut and a look-ahead further out does too.  Both laws come from one
        # kernel pass (lognormal_cf_m1_pair_grid, the tilted grid kernel at lam = 0), first up to
        # 1.25 times the count where the scan saw |psi| fall below the cut for good, then doubled
        # while the rule is not met.
        n_cap = _N_CAP_BASE
        while n_cap < max_freq:
            n_cap += min(n_cap + 256, 65536)
        n_pred = math.ceil(self.t_max / dt)
        upto = min(max(math.ceil(1.25 * n_pred), n_pred + _N_STEP, 2 * _N_STEP), n_cap)
        r0s: list[CArr] = []
        r1s: list[CArr] = []
        have = 0
        n_eff = 0
        converged = False
        while True:
            a0, a1 = lognormal_cf_m1_pair_grid(self.sigma, have + 1, upto - have, dt)
            r0s.append(a0)
            r1s.append(a1)
            have = upto
            r0_all = np.concatenate(r0s) if len(r0s) > 1 else r0s[0]
            r0s = [r0_all]
            l0 = _clog1p(r0_all)
            lg = self.M * np.where(np.isfinite(l0.real), l0.real, -800.0)
            above = np.nonzero(lg >= logcut)[0]
            n_last = int(above[-1]) + 1 if above.size else 0  # coefficients 1 .. n_last hold the last one
            n_try = max(_N_STEP * math.ceil(n_last / _N_STEP), _N_STEP)
            if have >= n_try + max(n_try // 4, _N_STEP):
                # look ahead: the modulus must stay below the cut further out
                tt = n_try * dt * np.array([1.5, 2, 3, 4, 6, 8, 12, 16, 32, 64])
                la = self.M * _clog1p(lognormal_cf_m1(self.sigma, tt)).real
                if np.all(la < logcut):
                    converged = True
                    n_eff = n_try
                    break
            if have >= n_cap:
                n_eff = n_cap
                break
            upto = min(2 * have, n_cap)
        r0 = (np.concatenate(r0s) if len(r0s) > 1 else r0s[0])[:n_eff]
        r1 = (np.concatenate(r1s) if len(r1s) > 1 else r1s[0])[:n_eff]
        t = np.arange(1, n_eff + 1, dtype=float) * dt
        r1 = r1 + 1j * t * self.w_m1
        l0 = _clog1p(r0)
        l0 = np.where(np.isfinite(l0.real), l0, -800.0)
        psi0 = np.exp(self.M * l0)
        psi1 = np.exp((self.M - 1.0) * l0) * (1.0 + r1)
        self.n_eff = n_eff
        self.t = np.arange(1, n_eff + 1, dtype=float) * dt
        self.psi0 = psi0
        self.psi1 = psi1
        last = max(abs(self.psi0[-1]), abs(self.psi1[-1]))
        self.truncated = not converged
        # error of the truncated series for one CDF value (estimate: |psi| <= last beyond n_eff,
        # decaying at least like 1/n): (4/P) sum_{n>n_eff} |psi|/t_n, bounded by 4*last*(log + 1)
        self.err_trunc = 4.0 * last / (self.P * dt) * (1.0 + math.log(1e3)) if not self.truncated else float("nan")
        self.c0 = self.psi0 / (1j * self.t)
        self.c1 = self.psi1 / (1j * self.t)
        # round-off of one CDF value G = (x - xlo)/P + (2/P)(base - s): the series s and the
        # constant base each within FOURIER_SERIES_ERR_UNITS * u * sum|c| (bound of the C kernel,
        # csrc/dpb_fourier_series.h), plus a few u for the linear part and the combination
        s_abs = max(float(np.sum(np.abs(self.c0))), float(np.sum(np.abs(self.c1))))
        self.err_round = _U * (8.0 + 2.0 * FOURIER_SERIES_ERR_UNITS * (1.0 + 1e-10) * 2.0 / self.P * s_abs)
        base = fourier_series_re([self.xlo / self.P], [self.c0, self.c1])
        self.base0 = float(base[0, 0])
        self.base1 = float(base[1, 0])

    # -------------------------------------------------------------- series evaluation
    def wrapped_cdf(self, x: Any, which: int = 0) -> FArr:
        """G(x) = wrapped mass of [xlo, x) (x inside the window), vectorised."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        c = self.c0 if which == 0 else self.c1
        base = self.base0 if which == 0 else self.base1
        s = fourier_series_re(x / self.P, [c])[0]
        return np.asarray((x - self.xlo) / self.P + 2.0 / self.P * (base - s), dtype=np.float64)

    def wrapped_cdf_pair(self, x: Any, density: bool = False) -> Any:
        """(G0(x), G1(x)[, wrapped H0 density at x]) sharing the phase factors (C kernel)."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        coefs = [self.c0, self.c1, self.psi0] if density else [self.c0, self.c1]
        s = fourier_series_re(x / self.P, coefs)
        lin = (x - self.xlo) / self.P
        g0 = lin + 2.0 / self.P * (self.base0 - s[0])
        g1 = lin + 2.0 / self.P * (self.base1 - s[1])
        if density:
            return g0, g1, (1.0 + 2.0 * s[2]) / self.P
        return g0, g1

    # -------------------------------------------------------------- the law interface
    method = "Fourier series"
    certified = ("loss discretisation, window tails (Chernoff / truncated-MGF bounds) and aliasing")
    estimated = ("Fourier-series truncation (|psi| < 1e-20 after a look-ahead scan) and round-off")

    @property
    def converged(self) -> bool:
        return not self.truncated

    @property
    def key(self) -> tuple[object, ...]:
        return ("fourier", self.sigma, self.M, self.P, self.xlo)

    def x_range(self) -> tuple[float, float]:
        return self.xlo, self.xlo + self.P

    @property
    def spread_extra(self) -> float:  # type: ignore[override]
        return 40.0 if max(self.tail_hi0, self.tail_hi1) > 1e-10 else 0.0

    @property
    def window_error(self) -> float:
        """Largest error of a CDF value in the window (tails of both hypotheses + series)."""
        return (max(self.tail_lo0 + self.tail_hi0, self.tail_lo1 + self.tail_hi1)
                + self.err_trunc + self.err_round)

    def _cdf0_grid(self) -> tuple[FArr, FArr]:
        """A fine grid of the wrapped H0 CDF on [xlo, xhi] from one FFT of cell masses."""
        edges, hcell, p0c, _, _ = _cell_masses(self, self.P / 65536.0)
        grid = np.concatenate([edges, [edges[-1] + hcell]])
        g0 = np.concatenate([[0.0], np.cumsum(p0c)])
        keep = grid <= self.xhi
        return grid[keep], np.maximum.accumulate(g0[keep])

    def _series_grid(self) -> tuple[FArr, FArr, FArr]:
        """(x_k, G0(x_k), G1(x_k)): the series itself (not cell masses) at the nodes
        x_k = xlo + k P / nf in [xlo, xhi], by one inverse FFT per hypothesis; the error of each
        value is that of a direct evaluation (window tails, truncation, round-off)."""
        nf = int(2 ** math.ceil(math.log2(max(4.0 * self.n_eff + 4.0, 2.0 ** 20))))
        kmax = int(math.floor((self.xhi - self.xlo) / self.P * nf))
        xk = self.xlo + self.P / nf * np.arange(kmax + 1)
        frac = np.mod(np.arange(1, self.n_eff + 1, dtype=float) * (self.xlo / self.P), 1.0)
        ph = np.exp(-1j * _TWO_PI * frac)  # e^{-i t_n xlo}
        out = []
        for c, base in ((self.c0, self.base0), (self.c1, self.base1)):
            X = np.zeros(nf // 2 + 1, dtype=complex)
            X[1:self.n_eff + 1] = np.conj(c * ph)
            sr = np.fft.irfft(X, n=nf)[:kmax + 1] * (nf / 2.0)  # = Re sum_n c_n e^{-i t_n x_k}
            out.append(np.asarray((xk - self.xlo) / self.P + 2.0 / self.P * (base - sr), dtype=np.float64))
        return np.asarray(xk, dtype=np.float64), out[0], out[1]

    def tradeoff(self, a: FArr) -> tuple[FArr, FArr]:
        """f_M(a) = P1[S - M <= x_a] with P0[S - M > x_a] = a; error: certified window tails and
        aliasing plus the estimated truncation/round-off, about 1e-13."""
        flat = a
        m = self.M
        f = np.empty(flat.size)
        err = np.empty(flat.size)
        e_num = self.err_trunc + self.err_round
        e0 = self.tail_lo0 + self.tail_hi0 + e_num
        e1 = self.tail_lo1 + self.tail_hi1 + e_num
        # grid bracket for x_a, then a vectorised safeguarded Newton on the wrapped CDF
        grid, g0 = self._cdf0_grid()
        target = 1.0 - flat  # G0(x_a) = 1 - a
        k = np.searchsorted(g0, target)
        inside = (flat > 0) & (flat < 1) & (k > 0) & (k < grid.size)
        f[:] = np.where(flat <= 0, 1.0, 0.0)
        err[:] = 0.0
        below = (flat > 0) & (flat < 1) & (k == 0)      # x_a below the window: f <= P1[x <= xlo]
        above = (flat > 0) & (flat < 1) & (k >= grid.size)  # x_a above the window
        f[below], err[below] = 0.0, e1 + self.tail_lo1
        f[above], err[above] = 1.0, max(e1, self.tail_hi1)
        idx = np.nonzero(inside)[0]
        if idx.size:
            tg = target[idx]
            x = invert_cdf(self, grid, g0, k[idx], tg)
            g0x, g1x = self.wrapped_cdf_pair(x)
            resid = np.abs(g0x - tg)
            f[idx] = g1x
            slope = np.maximum(0.0, 1.0 + x / m)  # |f'| = likelihood ratio at the threshold
            err[idx] = e1 + slope * (e0 + resid)
        if self.truncated:
            err[:] = np.nan
        return f, err

    def tv(self) -> tuple[float, float]:
        """P0[S <= M] - P1[S <= M] from the two series at x = 0 (no cancellation of large CDFs
        beyond the window's own error)."""
        g0 = float(self.wrapped_cdf([0.0], 0)[0])
        g1 = float(self.wrapped_cdf([0.0], 1)[0])
        e = (self.tail_lo0 + self.tail_hi0 + self.tail_lo1 + self.tail_hi1
             + 2 * (self.err_trunc + self.err_round))
        return g0 - g1, e

    def delta(self, eps: float) -> tuple[float, float]:
        M = self.M
        if eps > 700.0:  # e^eps would overflow; only the mass beyond the window can remain
            return 0.0, min(1.0, self.tail_hi1 + self.tail_lo0)
        num = self.err_trunc + self.err_round
        ee = math.exp(eps)
        y = M * math.expm1(eps)  # remove: P1[x > y] - e^eps P0[x > y]
        y2 = M * math.expm1(-eps)  # add: P0[x <= y2] - e^eps P1[x <= y2]
        pts = [min(max(y, self.xlo), self.xhi), min(max(y2, self.xlo), self.xhi)]
        g0, g1 = self.wrapped_cdf_pair(pts)
        if y >= self.xhi:
            r_lo, r_hi = 0.0, self.tail_hi1
        else:
            c = (1 - g1[0]) - ee * (1 - g0[0])
            r_hi = c + self.tail_lo1 + self.tail_hi1 + num + ee * (self.tail_lo0 + num)
            r_lo = c - self.tail_lo1 - num - ee * (self.tail_lo0 + self.tail_hi0 + num)
        if y2 <= self.xlo:
            a_lo, a_hi = 0.0, self.tail_lo0
        else:
            c = g0[1] - ee * g1[1]
            a_hi = c + self.tail_lo0 + num + ee * (self.tail_lo1 + self.tail_hi1 + num)
            a_lo = c - self.tail_lo0 - self.tail_hi0 - num - ee * (self.tail_lo1 + num)
        lo = max(r_lo, a_lo, 0.0)
        hi = min(max(r_hi, a_hi), 1.0)
        return float(lo), float(hi)

    def curve_points(self) -> tuple[FArr, FArr, FArr, FArr]:
        """Threshold pairs (a, f) = (1 - G0(x), G1(x)) from the series at 2001 thresholds x spread
        evenly in the Gaussian scale of a (located on the FFT grid of the CDF, then evaluated
        exactly at the nodes of one FFT).  A true point (a*, f*) lies within the window error of (a, f):
        f(a - e0) >= f* >= f - e1 and f(a + e0) <= f* <= f + e1 (f non-increasing)."""
        from dpbounds._ufuncs import ndtr  # type: ignore[import-not-found, unused-ignore]

        x, g0, g1 = self._series_grid()
        z = np.linspace(-6.5, 6.5, 2001)  # a from Phi(-6.5) ~ 4e-11 to 1 - 4e-11
        target = 1.0 - np.asarray(ndtr(-z), dtype=float)  # G0(x) = 1 - a
        k = np.unique(np.clip(np.searchsorted(np.maximum.accumulate(g0), target), 0, x.size - 1))
        g0x, g1x = g0[k], g1[k]
        e_num = self.err_trunc + self.err_round
        e0 = self.tail_lo0 + self.tail_hi0 + e_num
        e1 = self.tail_lo1 + self.tail_hi1 + e_num
        a = (1.0 - g0x)[::-1]
        f = g1x[::-1]
        return a - e0, a + e0, f - e1, f + e1

    def lattice_pmfs(self, delta_l: float, cell_span: float | None = None) -> LatticePMFs:
        """Single-epoch lattice PMFs: dict direction -> (jmin, p_up, inf_up, jmin_lo, p_lo, miss_lo).

        The H0 and H1 masses of every lattice interval of the loss log1p(x / M), x = S - M, over
        the window (:meth:`interval_masses`: whole FFT cells plus the parts of the cells cut at
        lattice points, by interpolation with a certified remainder), placed with both masses
        known (:func:`dpbounds.accountant._place.place_aligned`): the connect-the-dots split is
        then exact, and the bracket's width comes from the lattice spacing alone (second order).
        ``cell_span`` is accepted for the interface (the masses need no finer cells).
        """
        law, M = self, self.M
        j, p0, p1, e, (b0, b1, be) = self.interval_masses(M, delta_l)
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
        if b0 + b1 > 0.0:  # the piece below the lattice (loss < the lowest lattice point cut)
            l_top = _bottom_top(delta_l)
            extra["remove"].append((l_top, b1))  # its upper loss bound; the lower side drops it
            if law.xlo > -M:
                extra["add"].append((-l_xlo, b0))
            else:
                inf_tail["add"] += b0
        err = float(np.sum(e)) + be
        out: LatticePMFs = {}
        for direction, p, q, jj in (("remove", p1, p0, j), ("add", p0, p1, -j - 1)):
            inf_up = max(inf_tail[direction], 0.0) + err
            ex = [(lv, mv) for lv, mv in extra[direction] if mv > 0 and math.isfinite(lv)]
            out[direction] = _place_pieces(jj, p, q, e, delta_l, ex, inf_up, tails_up[direction] + err)
        return out

    def interval_masses(self, M_loss: float, delta_l: float) -> Pieces:
        """``(j, p0, p1, e, bottom)``: H0 and H1 masses of the window [xlo, xlo + P) in the intervals of the
        loss log1p(x / M_loss) between lattice points (interval j: loss in [j D, (j+1) D],
        D = ``delta_l``), each within ``e`` of the series' own masses (so within ``e`` plus the
        window's error terms of the law's).

        The masses of N FFT cells (:func:`_cell_masses`, N ~ P t_max / 1.5, the series' own
        resolution) are summed per interval; a cell cut by lattice points is split at them by
        Lagrange interpolation of the series' CDF through the 16 surrounding cell ends.  The
        remainder is bounded by max |G^(16)| prod |s - s_i| / 16!, with
        |G^(16)| <= (2 / P) sum_n |psi_n| t_n^15 (the truncated series' own derivative, exact),
        plus the interpolation weights times the cells' round-off.  Where the window reaches
        x = -M (loss -inf), the losses below -30 are one piece, ``bottom`` = (H0 mass, H1 mass,
        error), with loss in [log1p(xlo / M_loss), the lowest lattice point cut]; else zeros.
        """
        key = ("fourier pieces", self.key, float(M_loss), float(delta_l))
        return cached(key, lambda: _interval_masses(self, float(M_loss), float(delta_l)))

    def _spread_tail(self, tot: float, l_xhi: float) -> list[tuple[float, float]]:
        """H1 mass above the window (at most ``tot``) spread along its certified survival bound
        (truncated Chernoff with the far tables); see :func:`spread_along_bound`."""
        M = self.M
        return spread_along_bound(
            tot, l_xhi, lambda lk: upper_tail_h1(self.sigma, M, M * np.expm1(lk), far=True))

    # -------------------------------------------------------------- the diluted pair (partial epoch)
    def cdf_brackets(self, y: FArr) -> tuple[FArr, FArr, FArr, FArr]:
        """Inside the window: the series value and the window's error terms, one-sided as
        :meth:`delta` uses them (aliasing only adds mass to the wrapped CDF, mass below the
        window only to the true one); beyond it: :func:`extend_cdf_brackets`."""
        y = np.atleast_1d(np.asarray(y, dtype=float))
        g0, g1 = self.wrapped_cdf_pair(np.clip(y, self.xlo, self.xhi))
        num = self.err_trunc + self.err_round
        lo0 = g0 - (self.tail_lo0 + self.tail_hi0 + num)
        hi0 = g0 + (self.tail_lo0 + num)
        lo1 = g1 - (self.tail_lo1 + self.tail_hi1 + num)
        hi1 = g1 + (self.tail_lo1 + num)
        return extend_cdf_brackets(self.sigma, self.M, self.xlo, self.xhi, y, lo0, hi0, lo1, hi1)

    def diluted_lattice_pmfs(self, delta_l: float, r: float, M_outer: float) -> LatticePMFs:
        """Interval masses of x = S_k - k for the loss log1p(x / M_outer) (:meth:`interval_masses`),
        placed with both masses known (:func:`_place_pieces`); the mixture's masses are
        (1 - r) p0 + r p1.  The add loss never exceeds -log(1 - r): mass below the window (and
        the masses' error) goes there in the upper PMF instead of to +inf."""
        M, k = float(M_outer), self.M
        delta_l = float(delta_l)
        j, p0, p1, e, (b0, b1, be) = self.interval_masses(M, delta_l)
        assert b0 + b1 == 0.0  # x >= -k > -M_outer: every loss is finite and above -30
        err = float(np.sum(e))
        hi0, hi1 = self.tail_hi0, self.tail_hi1
        if max(hi0, hi1) > 1e-10:  # the far tables tighten the window's upper tail bounds
            hi0 = min(hi0, float(upper_tail_h0(self.sigma, k, [self.xhi], far=True)[0]))
            hi1 = min(hi1, float(upper_tail_h1(self.sigma, k, [self.xhi], far=True)[0]))
        lo0, lo1 = self.tail_lo0, self.tail_lo1
        l_xlo = math.log1p(self.xlo / M)
        l_xhi = math.log1p(self.xhi / M)
        l_add_max = -math.log1p(-r)
        # remove (loss unbounded above): mass below xlo at loss <= log1p(xlo/M); above xhi along
        # the mixture's certified survival bound, the rest and the masses' error at +inf
        tot_hi = (1.0 - r) * hi0 + r * hi1

        def survival(lk: FArr) -> FArr:
            y = M * np.expm1(lk)
            return np.asarray((1.0 - r) * upper_tail_h0(self.sigma, k, y, far=True)
                              + r * upper_tail_h1(self.sigma, k, y, far=True), dtype=np.float64)

        spread = spread_along_bound(tot_hi, l_xhi, survival)
        # remove: P = the mixture (1 - r) P0' + r P1', Q = P0'; add: P = P0', Q = the mixture
        pm = (1.0 - r) * p0 + r * p1
        inf_rem = max(tot_hi - sum(m for _, m in spread), 0.0) + err
        miss_rem = (1.0 - r) * (lo0 + hi0) + r * (lo1 + hi1) + err
        ex_rem = [(lv, mv) for lv, mv in [(l_xlo, (1.0 - r) * lo0 + r * lo1)] + spread if mv > 0]
        # add (loss <= -log(1 - r)): above xhi at loss <= -log1p(xhi/M); below xlo and the
        # masses' error at the largest possible loss
        miss_add = lo0 + hi0 + err
        ex_add = [(lv, mv) for lv, mv in [(-l_xhi, hi0), (l_add_max, lo0 + err)] if mv > 0]
        return {
            "remove": _place_pieces(j, pm, p0, e, delta_l, ex_rem, inf_rem, miss_rem),
            "add": _place_pieces(-j - 1, p0, pm, e, delta_l, ex_add, 0.0, miss_add),
        }


def _place_pieces(j: IArr, p: FArr, q: FArr, e: FArr, delta_l: float,
                  extra: list[tuple[float, float]], inf_up: float,
                  miss: float) -> tuple[int, FArr, float, int, FArr, float]:
    """One direction's entry of a :data:`LatticePMFs` from interval masses: P-masses ``p`` and
    Q-masses ``q`` of lattice interval ``j`` (errors ``e``), placed by
    :func:`dpbounds.accountant._place.place_aligned`, plus the ``extra`` (loss bound, mass) pairs
    on the upper side only (:func:`dpbounds.accountant._lattice.place_upper`)."""
    ju, pu, jd, pd = place_aligned(j, p, q, e, delta_l)
    if extra:
        ju, pu = _add_pmf((ju, pu), place_upper(np.array([lv for lv, _ in extra]),
                                                np.array([mv for _, mv in extra]), delta_l))
    return ju, pu, inf_up, jd, pd, miss


def _add_pmf(a: tuple[int, FArr], b: tuple[int, FArr]) -> tuple[int, FArr]:
    (ja, pa), (jb, pb) = a, b
    j0 = min(ja, jb)
    out = np.zeros(max(ja + pa.size, jb + pb.size) - j0)
    out[ja - j0:ja - j0 + pa.size] += pa
    out[jb - j0:jb - j0 + pb.size] += pb
    return j0, out


def _bottom_top(dl: float) -> float:
    """The loss of the lowest lattice point :func:`_interval_masses` cuts when floored."""
    return (int(math.floor(_LOSS_FLOOR / dl)) + 1) * dl


_INTERP = 16        # nodes of the Lagrange interpolation that cuts cells at lattice points
_CELL_RHO = 3.0     # cell width times the series' highest frequency (16-point remainder < 1e-15)
_LOSS_FLOOR = -30.0  # lattice points below this loss are not cut (x within e^-30 M of -M)


def _interval_masses(law: FourierLaw, M: float, dl: float) -> Pieces:
    """:meth:`FourierLaw.interval_masses` (uncached)."""
    P = law.P
    # cells: the series' own resolution, and at most half a lattice interval wide near x = 0
    # (each cut's error scales with the cells' round-off, ~ 1 / N: E x the cut errors is what
    # limits the width at E ~ 1e4); at most 2^20 beyond the series' own need
    need = max(min(2.0 * P / (M * dl), 2.0 ** 20), _cell_count(law), 1024.0)
    n_cells = 2 ** max(int(math.ceil(math.log2(need))), 10)

    def cells() -> tuple[FArr, float, FArr, FArr, float]:
        return _cell_masses(law, P / n_cells)

    edges, h, c0, c1, err = cached(("fourier cells", law.sigma, law.M, law.P, law.xlo, P / n_cells), cells)
    N = edges.size
    e_cell = err / N  # the l1 round-off estimate per cell (FFT round-off is uniform)
    x0 = law.xlo
    x_top = x0 + N * h
    # lattice points t_j = j dl inside the window (by the loss at its ends)
    l_lo = math.log1p(x0 / M) if x0 > -M else -math.inf
    floored = l_lo < _LOSS_FLOOR
    l_lo = max(l_lo, _LOSS_FLOOR)
    l_hi = math.log1p(x_top / M)
    ja = int(math.floor(l_lo / dl)) + 1
    jb = int(math.ceil(l_hi / dl)) - 1
    jj = np.arange(ja, jb + 1, dtype=np.int64)
    xe = M * np.expm1(jj * dl)
    pos = (xe - x0) / h
    inside = (pos > 0.0) & (pos < N)
    jj, xe, pos = jj[inside], xe[inside], pos[inside]
    if jj.size == 0:  # the whole window lies in one interval
        j_one = np.array([ja - 1], dtype=np.int64)
        return (j_one, np.array([max(float(np.sum(c0)), 0.0)]), np.array([max(float(np.sum(c1)), 0.0)]),
                np.array([N * e_cell]), (0.0, 0.0, 0.0))
    ke = np.minimum(np.floor(pos).astype(np.int64), N - 1)
    th = pos - ke
    low0, low1, e_pt = _cut_masses(law, c0, c1, e_cell, h, ke, th, xe, M)
    # ---- interval i (i = 0 .. n): between cut i - 1 and cut i (cut -1 = the window's start at
    # cell 0, cut n = its end at cell N); its mass: the part of cut i-1's cell above it, the whole
    # cells between, the part of cut i's cell below it (cuts sharing a cell: the difference)
    n = jj.size
    cut = th > 0.0
    # whole cells of interval i: [first_i, last_i) with first_i = the cell after cut i-1's cell
    # (or that cell itself when the cut is at its left end), last_i = cut i's cell
    start_after = np.where(cut, ke + 1, ke)                 # first whole cell above cut i
    first = np.concatenate([[0], start_after])
    last = np.concatenate([ke, [N]])
    last = np.maximum(last, first)
    whole0 = _segment_sums(c0, first, last)
    whole1 = _segment_sums(c1, first, last)
    n_whole = (last - first).astype(float)
    # the part of cut i's cell below it: low_i (when cut); above it: c[ke_i] - low_i
    below0 = np.where(cut, low0, 0.0)
    below1 = np.where(cut, low1, 0.0)
    above0 = np.where(cut, c0[ke] - low0, 0.0)
    above1 = np.where(cut, c1[ke] - low1, 0.0)
    e_b = np.where(cut, e_pt, 0.0)
    e_a = np.where(cut, e_pt + e_cell, 0.0)
    # cuts i-1 and i in the same cell: interval i is low_i - low_{i-1} alone
    same = np.zeros(n + 1, dtype=bool)
    same[1:n] = cut[1:] & cut[:-1] & (ke[1:] == ke[:-1])
    m0 = whole0.copy()
    m1 = whole1.copy()
    me = n_whole * e_cell
    m0[:n] += below0
    m1[:n] += below1
    me[:n] += e_b
    m0[1:] += above0
    m1[1:] += above1
    me[1:] += e_a
    if np.any(same):
        i = np.nonzero(same)[0]
        m0[i] = low0[i] - low0[i - 1]
        m1[i] = low1[i] - low1[i - 1]
        me[i] = e_pt[i] + e_pt[i - 1]
    P0 = np.maximum(m0, 0.0)
    P1 = np.maximum(m1, 0.0)
    jall = np.concatenate([[jj[0] - 1], jj])
    keep = (P0 > 0.0) | (P1 > 0.0)
    if floored and jj[0] == ja:  # interval 0 holds every loss below t_ja: not a lattice interval
        bot = (float(P0[0]), float(P1[0]), float(me[0]))
        keep[0] = False
    else:
        bot = (0.0, 0.0, 0.0)
    return (jall[keep], np.asarray(P0[keep], dtype=np.float64), np.asarray(P1[keep], dtype=np.float64),
            np.asarray(me[keep], dtype=np.float64), bot)


def _cell_count(law: FourierLaw) -> float:
    """Cells over the period: at least P t_max / _CELL_RHO (the interpolation's resolution) and
    2 n_eff + 2 (:func:`_cell_masses` uses every coefficient)."""
    t_max = float(law.t[-1]) if law.n_eff else _TWO_PI / law.P
    return max(law.P * t_max / _CELL_RHO, 2.0 * law.n_eff + 2.0)


def _segment_sums(c: FArr, first: IArr, last: IArr) -> FArr:
    """sum(c[first[i]:last[i]]) for each i (0 where empty), for ordered disjoint segments
    (first[i] <= last[i] <= first[i + 1]); each summed on its own, not as a difference of a long
    cumulative sum, so that the tails' tiny masses keep their relative accuracy."""
    ce = np.concatenate([c, [0.0]])
    idx = np.empty(2 * first.size, dtype=np.int64)
    idx[0::2] = first
    idx[1::2] = last
    sums = np.add.reduceat(ce, idx)[0::2]
    return np.asarray(np.where(last > first, sums, 0.0), dtype=np.float64)


def _cut_masses(law: FourierLaw, c0: FArr, c1: FArr, e_cell: float, h: float, ke: IArr,
                th: FArr, xe: FArr, M: float) -> tuple[FArr, FArr, FArr]:
    """(low0, low1, e): the H0 and H1 masses of [cell ke's left end, x_e] for each cut, by
    16-point Lagrange interpolation of the series' CDF through the surrounding cell ends, and a
    bound on their error (remainder, the cells' round-off times the weights, rounding, and where
    the lattice point itself lies)."""
    N = c0.size
    m = _INTERP
    P = law.P
    t = law.t
    bm = 2.0 / P * max(float(np.sum(np.abs(law.psi0) * t ** (m - 1))), float(np.sum(np.abs(law.psi1) * t ** (m - 1))))
    b2 = 2.0 / P * max(float(np.sum(np.abs(law.psi0) * t)), float(np.sum(np.abs(law.psi1) * t)))
    denom = np.array([math.prod(i - k for k in range(m) if k != i) for i in range(m)], dtype=float)
    nodes = np.arange(m, dtype=float)
    out0 = np.empty(ke.size)
    out1 = np.empty(ke.size)
    err = np.empty(ke.size)
    for b0 in range(0, ke.size, 32768):  # blocks: (points, 16) temporaries stay small
        sl = slice(b0, b0 + 32768)
        k_, th_, x_ = ke[sl], th[sl], xe[sl]
        ks = np.clip(k_ - (m // 2 - 1), 0, N + 1 - m)     # first node of the stencil
        rel = (k_ - ks).astype(np.int64)
        diff = (rel.astype(float) + th_)[:, None] - nodes[None, :]
        full = np.prod(diff, axis=1)
        hit = diff == 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(hit.any(axis=1)[:, None], hit.astype(float), full[:, None] / (diff * denom[None, :]))
        aw = np.abs(w)
        idx = ks[:, None] + np.arange(m - 1)[None, :]     # the m - 1 cells between the m nodes
        rows = np.arange(k_.size)
        vals = []
        for c in (c0, c1):
            v = np.zeros((k_.size, m))
            np.cumsum(c[idx], axis=1, out=v[:, 1:])
            v -= v[rows, rel][:, None]                   # relative to the node at ke
            vals.append((np.einsum("ij,ij->i", w, v), np.einsum("ij,ij->i", aw, np.abs(v))))
        dist = np.abs(nodes[None, :] - rel[:, None].astype(float))
        remainder = bm * np.abs(full) * h ** m / math.factorial(m)
        # where the lattice point lies: x_e = M expm1(j dl) in floating point differs from the
        # lattice point by <= 4 u (|x_e| + M |t| e^t) (t = j dl: its product, expm1 and the
        # product by M, each within an ulp or two), times the series' largest density on the
        # cell, <= |cell mass| / h + h max |G''| (mean value theorem)
        dens = (np.maximum(np.abs(c0[k_]), np.abs(c1[k_])) + e_cell) / h + b2 * h
        tt = np.abs(np.log1p(x_ / M))
        out0[sl], out1[sl] = vals[0][0], vals[1][0]
        err[sl] = (remainder + np.sum(aw * dist, axis=1) * e_cell
                   + 4.0 * _U * np.maximum(vals[0][1], vals[1][1])
                   + dens * 4.0 * _U * (np.abs(x_) + M * tt * np.exp(tt) + 1e-300))
    return out0, out1, err


def _clog1p(r: CArr) -> CArr:
    """Principal log(1 + r) for complex r, accurate for small |r|."""
    re = r.real
    im = r.imag
    with np.errstate(divide="ignore"):
        mod = 0.5 * np.log1p(2.0 * re + re * re + im * im)
    return mod + 1j * np.arctan2(im, 1.0 + re)


def _cell_masses(law: FourierLaw, h_target: float) -> tuple[FArr, float, FArr, FArr, float]:
    """Wrapped masses of x = S - M on N cells [xlo + k h, xlo + (k+1) h), by one inverse FFT.

    Returns (edges_lo, h, p0, p1, err) where err bounds the sum over cells of the absolute
    round-off/truncation error of each mass array (an estimate): the FFT's round-off in the
    2-norm is at most log2(N) eta |y|_2, eta ~ 8u for a Cooley-Tukey FFT with accurate twiddle
    factors (Higham, "Accuracy and Stability of Numerical Algorithms", section 24.1), plus ~4u
    |y|_2 from the rounded inputs (phases, sinc); N values' l1 error is at most sqrt(N) times
    that; doubled for safety; plus the truncated series.  (Measured against the same FFT in
    long double: 1e-14 where this gives ~1e-12, tests/accountant/test_interval_masses.py.)
    """
    P = law.P
    # an even 5-smooth size (pocketfft is fast on those; power-of-2 rounding wasted up to 2x),
    # a multiple of 128
    N = 128 * fft_size(int(math.ceil(max(P / h_target * (1.0 - 1e-12), 2.0 * law.n_eff + 2.0, 128.0) / 128.0)))
    h = P / N
    k = min(law.n_eff, N // 2)
    # only the first k + 1 coefficients are non-zero: sinc and phases computed for those only
    n = np.arange(0, k + 1, dtype=float)
    t = n * _TWO_PI / P
    with np.errstate(invalid="ignore", divide="ignore"):
        sinc = np.where(t > 0, np.sin(t * h / 2) / (t * h / 2), 1.0)
    # mass_k = (1/N) sum_n a_n sinc_n e^{-i t_n (xlo + h/2)} e^{-2 pi i n k / N}
    frac = np.mod(n * ((law.xlo + 0.5 * h) / P), 1.0)
    rot = sinc * np.exp(-1j * _TWO_PI * frac)
    out = []
    for psi in (law.psi0, law.psi1):
        coef = np.zeros(N // 2 + 1, dtype=complex)
        coef[0] = 1.0
        coef[1:k + 1] = psi[:k]
        coef[:k + 1] *= rot
        np.conjugate(coef[:k + 1], out=coef[:k + 1])
        out.append(np.fft.irfft(coef, n=N))
        del coef
    y2 = max(float(np.sqrt(np.sum(out[0] ** 2))), float(np.sqrt(np.sum(out[1] ** 2))))
    err = 2.0 * math.sqrt(N) * (8.0 * math.log2(N) + 4.0) * _U * y2 + N * law.err_trunc * h / P
    edges = np.asarray(law.xlo + h * np.arange(N), dtype=np.float64)
    return edges, h, out[0], out[1], err


