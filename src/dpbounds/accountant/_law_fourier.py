"""The Fourier-series law of the lognormal sum (private): the fast path of the exact accountant.

x = S - M is represented by its characteristic function psi0(t) = chi(t)^M (H0) and
psi1(t) = chi(t)^(M-1) chi_w(t) (H1 = size-biased H0), with chi - 1 from the C kernel
``dpb_exact_lognormal_cf`` (shifted-contour trapezoid).  A window [xlo, xlo + P) is chosen from
rigorous tail bounds (:mod:`dpbounds.accountant._tails`); CDFs inside it come from the Fourier
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
from dpbounds.accountant._invert import bisect, falsi_log, invert_cdf
from dpbounds.accountant._lattice import fft_size, place_lower, place_upper
from dpbounds.accountant._law import FArr, LatticePMFs, SingleEpochLaw
from dpbounds.accountant._tails import (
    extend_cdf_brackets,
    lower_tail_h0,
    spread_along_bound,
    upper_tail_h0,
    upper_tail_h1,
)

CArr = NDArray[np.complex128]

__all__ = ["LognormalSum"]

_TWO_PI = 2.0 * math.pi
_U = 2.0 ** -53  # unit round-off


class LognormalSum(SingleEpochLaw):
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
        for hi_i in range(tg.size, 0, -48):
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

        def tails_hi(xx: float) -> tuple[float, float]:
            if xx not in hi_vals:
                hi_vals[xx] = (float(upper_tail_h0(self.sigma, self.M, [xx])[0]),
                               float(upper_tail_h1(self.sigma, self.M, [xx])[0]))
            return hi_vals[xx]

        def f_hi(xx: float) -> float:
            return max(tails_hi(xx))

        cap = p_max / 1.05 + self.xlo
        if xhi_max is not None:
            cap = min(cap, xhi_max)
        hi = max(10 * sd, 10.0)
        while f_hi(hi) > tail and hi < cap:
            hi *= 4.0
        hi = min(hi, cap)
        if f_hi(hi) <= tail:
            lo_b = hi / 4.0 if hi > 10 * sd else 1e-9
            hi = falsi_log(f_hi, lo_b, hi, tail, rtol=0.006)  # xhi to 0.6 %: ample
        self.xhi = hi
        self.tail_hi0, self.tail_hi1 = tails_hi(hi)  # the bounds at the final point itself
        self.tail_lo1 = self.tail_lo0 * max(0.0, 1.0 + self.xlo / self.M)
        self.P = (self.xhi - self.xlo) * 1.05
        self.aborted = False
        if abort_above is not None and max(self.tail_hi0, self.tail_hi1) > abort_above:
            # the window cannot hold the heavy right tail: skip the (expensive) coefficients;
            # the caller switches to the tilted representation (TiltedLognormalSum)
            self.aborted = True
            self.truncated = True
            return
        # ---- Fourier coefficients
        dt = _TWO_PI / self.P
        # the series stops at the end of the first block (256, 512, 1024, ... coefficients) where
        # |psi| stays below the cut; the coefficients are computed ahead up to the end of the
        # block after the one holding t_max (where the scan saw |psi| fall below the cut for
        # good), both laws in one kernel pass (lognormal_cf_m1_pair_grid, the tilted grid kernel
        # at lam = 0); the stopping rule is then checked block by block as before
        ends = []
        e, block = 0, 256
        while e < max_freq:
            e += block
            ends.append(e)
            block = min(block * 2, 65536)
        # (the block holding t_max still holds the last crossing of the cut; the next one is the
        # first that can lie below it throughout)
        n_pred = math.ceil(self.t_max / dt)
        i_pred = next((i for i, x in enumerate(ends) if x >= n_pred), len(ends) - 1)
        ahead = ends[min(i_pred + 1, len(ends) - 1)]
        r0s: list[CArr] = []
        r1s: list[CArr] = []
        have = 0
        n_eff = 0
        converged = False
        start = 1
        for end in ends:
            if end > have:
                upto = max(end, ahead) if have == 0 else end
                a0, a1 = lognormal_cf_m1_pair_grid(self.sigma, have + 1, upto - have, dt)
                r0s.append(a0)
                r1s.append(a1)
                have = upto
            n_eff = end
            r0_all = np.concatenate(r0s) if len(r0s) > 1 else r0s[0]
            r0s = [r0_all]
            l0 = _clog1p(r0_all[start - 1:end])
            mx = self.M * np.max(np.where(np.isfinite(l0.real), l0.real, -800.0))
            if mx < logcut:
                # look ahead: the modulus must stay below the cut further out
                tt = end * dt * np.array([1.5, 2, 3, 4, 6, 8, 12, 16, 32, 64])
                la = self.M * _clog1p(lognormal_cf_m1(self.sigma, tt)).real
                if np.all(la < logcut):
                    converged = True
                    break
            start = end + 1
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

        Cells of x = S - M of width ~ ``cell_span * M`` (loss span ~ ``cell_span`` near x = 0;
        default ``delta_l / 2``), at most 2^20 of them over the window.  A cell's loss lies in
        [l(xa), l(xb)]; its mass is placed by connect-the-dots with the upper end for the upper
        PMF (:func:`place_upper`) and by balanced merging with the lower end for the lower PMF
        (:func:`place_lower`): the bracket's width comes from the cells' loss spans (first
        order) and the lattice spacing (second order).
        """
        law, M = self, self.M
        span = 0.5 * delta_l if cell_span is None else float(cell_span)
        h_target = max(span * M, law.P / 2 ** 20)
        # cells of P / 2^k (at least as fine as asked: still certified) so that the cell masses,
        # the costly part, are shared by every lattice spacing that asks for the same k (a
        # training loop's epoch-end queries at E = 1, 2, ... reuse a handful of them)
        h_target = law.P / 2.0 ** math.ceil(math.log2(law.P / h_target) - 1e-9)

        def cells() -> tuple[FArr, float, FArr, FArr, float]:
            e_, h_, q0, q1, er = _cell_masses(law, h_target)
            return e_, h_, np.maximum(q0, 0.0), np.maximum(q1, 0.0), er

        edges, h, p0, p1, err = cached(("fourier cells", law.sigma, law.M, law.P, law.xlo, h_target), cells)
        xa, xb, p0, p1 = _merge_light_cells(edges, h, p0, p1, M, span)
        del edges
        with np.errstate(divide="ignore", invalid="ignore"):
            la = np.where(xa > -M, np.log1p(np.maximum(xa, -M) / M), -np.inf)
            lb = np.where(xb > -M, np.log1p(np.maximum(xb, -M) / M), -np.inf)
        out: LatticePMFs = {}
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
            hi_up, p_up = l_hi[fin_hi], p[fin_hi]
            if ex:  # the placed outside mass joins the upper PMF only (its loss bound is exact)
                hi_up = np.concatenate([hi_up, np.array([lv for lv, _ in ex])])
                p_up = np.concatenate([p_up, np.array([mv for _, mv in ex])])
            jmin, pu = place_upper(hi_up, p_up, delta_l)
            fin_lo = np.isfinite(l_lo) & (p > 0.0)  # mass at loss -inf dropped (lower bound)
            jdmin, pd = place_lower(l_lo[fin_lo], p[fin_lo], delta_l, err)
            miss_lo = tails_up[direction] + err
            out[direction] = (jmin, pu, inf_up, jdmin, pd, miss_lo)
        return out

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
        """Cells of x = S - M narrow enough that the loss varies by <= delta_l / 2 near x = 0 (at
        most 2^20 over the window); the mixture's cell masses are (1 - r) p0 + r p1.  The add loss
        never exceeds -log(1 - r): mass below the window (and the cell-mass error) goes there in
        the upper PMF instead of to +inf."""
        M, k = float(M_outer), self.M
        delta_l = float(delta_l)
        edges, h, p0, p1, err = _cell_masses(self, max(delta_l * M * 0.5, self.P / 2 ** 20))
        p0 = np.maximum(p0, 0.0)
        p1 = np.maximum(p1, 0.0)
        la = np.log1p(edges / M)  # edges >= xlo >= -k > -M: finite
        lb = np.log1p((edges + h) / M)
        hi0, hi1 = self.tail_hi0, self.tail_hi1
        if max(hi0, hi1) > 1e-10:  # the far tables tighten the window's upper tail bounds
            hi0 = min(hi0, float(upper_tail_h0(self.sigma, k, [self.xhi], far=True)[0]))
            hi1 = min(hi1, float(upper_tail_h1(self.sigma, k, [self.xhi], far=True)[0]))
        lo0, lo1 = self.tail_lo0, self.tail_lo1
        l_xlo = math.log1p(self.xlo / M)
        l_xhi = math.log1p(self.xhi / M)
        l_add_max = -math.log1p(-r)
        # remove (loss unbounded above): mass below xlo at loss <= log1p(xlo/M); above xhi along
        # the mixture's certified survival bound, the rest and the cell-mass error at +inf
        tot_hi = (1.0 - r) * hi0 + r * hi1

        def survival(lk: FArr) -> FArr:
            y = M * np.expm1(lk)
            return np.asarray((1.0 - r) * upper_tail_h0(self.sigma, k, y, far=True)
                              + r * upper_tail_h1(self.sigma, k, y, far=True), dtype=np.float64)

        spread = spread_along_bound(tot_hi, l_xhi, survival)
        pm = (1.0 - r) * p0 + r * p1
        rem = _place_cells(pm, la, lb, delta_l, err, [(l_xlo, (1.0 - r) * lo0 + r * lo1)] + spread)
        inf_rem = max(tot_hi - sum(m for _, m in spread), 0.0) + err
        miss_rem = (1.0 - r) * (lo0 + hi0) + r * (lo1 + hi1) + err
        # add (loss <= -log(1 - r)): above xhi at loss <= -log1p(xhi/M); below xlo and the
        # cell-mass error at the largest possible loss
        add = _place_cells(p0, -lb, -la, delta_l, err, [(-l_xhi, hi0), (l_add_max, lo0 + err)])
        miss_add = lo0 + hi0 + err
        return {
            "remove": (rem[0], rem[1], inf_rem, rem[2], rem[3], miss_rem),
            "add": (add[0], add[1], 0.0, add[2], add[3], miss_add),
        }


def _place_cells(p: FArr, l_lo: FArr, l_hi: FArr, delta_l: float, err: float,
                 extra: list[tuple[float, float]]) -> tuple[int, FArr, int, FArr]:
    """(jmin_up, pmf_up, jmin_dn, pmf_dn): cell masses ``p`` (l1 error <= ``err``) with losses in
    [l_lo, l_hi] placed by connect-the-dots with the upper loss for the upper PMF (plus the
    ``extra`` (loss, mass) pairs, placed the same way: their losses are upper bounds) and by
    balanced merging with the lower loss for the lower PMF (cells only): :func:`place_upper`,
    :func:`place_lower`, as :meth:`LognormalSum.lattice_pmfs` places the full epoch's cells."""
    ex = [(lv, mv) for lv, mv in extra if mv > 0 and math.isfinite(lv)]
    hi_up, p_up = l_hi, p
    if ex:
        hi_up = np.concatenate([l_hi, np.array([lv for lv, _ in ex])])
        p_up = np.concatenate([p, np.array([mv for _, mv in ex])])
    jmin, pu = place_upper(hi_up, p_up, delta_l)
    nz = p > 0.0
    jdmin, pd = place_lower(l_lo[nz], p[nz], delta_l, err)
    return jmin, pu, jdmin, pd


def _merge_light_cells(edges: FArr, h: float, p0: FArr, p1: FArr, M: float,
                       span: float) -> tuple[FArr, FArr, FArr, FArr]:
    """Cells (xa, xb, p0, p1) with blocks of 64 light cells merged into one cell each.

    A merged cell is still a cell (its loss lies between those of its ends), so the placement
    stays certified; only its span is larger.  A block is merged where its mass times its loss
    span is below 1e-6 * ``span`` (the whole merged part then adds at most ~2^14 * 1e-6 spans to
    the composed loss's shift: negligible), which in the far tails cuts the cell count ~64-fold.
    Empty cells are dropped (no mass, nothing to place).
    """
    B = 64
    n = edges.size
    if n % B or n < 4 * B:
        keep = (p0 > 0.0) | (p1 > 0.0)
        return edges[keep], edges[keep] + h, p0[keep], p1[keep]
    nb = n // B
    m0 = p0.reshape(nb, B).sum(axis=1)
    m1 = p1.reshape(nb, B).sum(axis=1)
    x0 = edges[::B]
    x1 = x0 + B * h
    with np.errstate(divide="ignore", invalid="ignore"):
        sb = np.log1p(x1 / M) - np.log1p(np.maximum(x0, -M) / M)
    light = (x0 > -M) & np.isfinite(sb) & ((m0 + m1) * sb <= 1e-6 * span)
    heavy_cells = np.repeat(~light, B)
    keep_f = heavy_cells & ((p0 > 0.0) | (p1 > 0.0))
    keep_b = light & ((m0 > 0.0) | (m1 > 0.0))
    xa = np.concatenate([edges[keep_f], x0[keep_b]])
    xb = np.concatenate([edges[keep_f] + h, x1[keep_b]])
    q0 = np.concatenate([p0[keep_f], m0[keep_b]])
    q1 = np.concatenate([p1[keep_f], m1[keep_b]])
    return xa, xb, q0, q1


def _clog1p(r: CArr) -> CArr:
    """Principal log(1 + r) for complex r, accurate for small |r|."""
    re = r.real
    im = r.imag
    with np.errstate(divide="ignore"):
        mod = 0.5 * np.log1p(2.0 * re + re * re + im * im)
    return mod + 1j * np.arctan2(im, 1.0 + re)


def _cell_masses(law: LognormalSum, h_target: float) -> tuple[FArr, float, FArr, FArr, float]:
    """Wrapped masses of x = S - M on N cells [xlo + k h, xlo + (k+1) h), by one inverse FFT.

    Returns (edges_lo, h, p0, p1, err) where err bounds the sum over cells of the absolute
    round-off/truncation error of each mass array (an estimate: FFT round-off
    ~ 1e-16 * N * (h/P) * sum|psi|, plus the truncated series).
    """
    P = law.P
    # an even 5-smooth size (pocketfft is fast on those; power-of-2 rounding wasted up to 2x)
    # (a multiple of 128: blocks of light cells are merged in 64s by the lattice code)
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
    s = float(np.sum(np.abs(law.psi0))) + float(np.sum(np.abs(law.psi1)))
    err = 1e-15 * (1.0 + 2.0 * s) * math.log2(N) + N * law.err_trunc * h / P
    edges = np.asarray(law.xlo + h * np.arange(N), dtype=np.float64)
    return edges, h, out[0], out[1], err


