"""The exponentially tilted Fourier-series law of the lognormal sum (private).

For small sigma with M beyond the log-domain budget (see :mod:`dpbounds.accountant._laws.select`).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbounds._kernels import (  # type: ignore[import-not-found, unused-ignore]
    FOURIER_SERIES_ERR_UNITS,
    fourier_series_re,
    lognormal_cf_m1,
    lognormal_cf_m1_tilted,
    lognormal_cf_m1_tilted_grid,
)
from dpbounds.accountant._cache import cached
from dpbounds.accountant._invert import bisect, invert_cdf
from dpbounds.accountant._laws.fourier import _clog1p
from dpbounds.accountant._laws.interface import FArr, SingleEpochLaw
from dpbounds.accountant._laws.tails import extend_cdf_brackets, lower_tail_h0, upper_tail_h0, upper_tail_h1

__all__ = ["TiltedFourierLaw"]

_TWO_PI = 2.0 * math.pi
_U = 2.0 ** -53  # unit round-off


class TiltedFourierLaw(SingleEpochLaw):
    """Law of x = S - M under H0 and H1 from the exponentially tilted characteristic function.

    For small sigma the right tail of x is far too heavy for a window that contains it (the
    signal term wY reaches 1e7 at the 1e-13 level for sigma = 0.5).  Tilting removes the need:
    with q(x) = e^{-lam x} p(x) (lam > 0; legitimate because x >= -M) the P-periodic wrapping of
    q has Fourier coefficients psi(t_n + i lam) (C kernel ``dpb_exact_lognormal_cf_tilted``), and

        P[x <= c] = int_{xlo}^{c} e^{lam x} q_w(x) dx + (mass below xlo) - (aliased mass)

    where the integral of each Fourier mode is elementary.  With u = c - xlo and
    b_n = E[exp((i t_n - lam)(x - xlo))] (|b_n| <= 1):

        G(c) = (1/P) sum_{n in Z} b_n (e^{(lam - i t_n) u} - 1) / (lam - i t_n).

    Error of G(c) as a value of P[x <= c] (``err(u)``):
      * right-hand aliasing: the k-th image of the mass above the window enters with weight
        e^{-lam k P}, so it is <= e^{-lam P} / (1 - e^{-lam P}) WITHOUT any tail bound (certified);
      * left-hand: mass below xlo (Chernoff bound L(xlo), or 0 if xlo = -M) plus its images,
        weighted e^{lam j P}: <= sum_j e^{lam j P} L(xlo - (j-1) P) (certified);
      * series truncation and round-off are amplified by e^{lam u}: estimates, as in
        :class:`FourierLaw`.
    lam = (amp + guard)/P makes the right aliasing ~e^{-(amp + guard)} and the amplification at
    the last query point xhi = xlo + amp/lam equal to e^{amp}.  Queries beyond xhi are not served
    (callers fall back to honest intervals there).
    """

    def __init__(self, sigma: float, M: float, amp: float = 12.0, guard: float = 37.0,
                 cut: float = 1e-17, max_freq: int = 350_000, reach_tail: float = 1e-10):
        self.sigma = float(sigma)
        self.M = float(M)
        self.w_m1 = math.expm1(1.0 / (self.sigma * self.sigma))
        self.sd = math.sqrt(self.M * self.w_m1)
        logcut = math.log(cut)
        # ---- left end: Chernoff lower tail below 1e-40 (or the support end -M)
        target = 1e-40

        def f_lo(xx: float) -> float:
            return float(lower_tail_h0(self.sigma, self.M, [-xx])[0])

        if self.M > 1.0 and f_lo(self.M) <= target:
            lo_mag = bisect(f_lo, 1e-9 * self.sd, self.M, target, log=True, iters=30)
        else:
            lo_mag = self.M
        self.xlo = -lo_mag
        # ---- frequency cut-off of |psi|: scan far (slow, ~exp(-(log t)^2) decay at small sigma)
        # first crossing below the cut that persists for 4 grid points (beyond ~1e6 the kernel's
        # absolute error floor, not the true modulus, is what one would see)
        tg = np.logspace(-6, 8, 281) / max(math.sqrt(self.w_m1), 1e-300)
        with np.errstate(divide="ignore"):
            lg = self.M * np.log(np.abs(1.0 + lognormal_cf_m1(self.sigma, tg)))
        below = lg < logcut
        run = below[:-3] & below[1:-2] & below[2:-1] & below[3:]
        first = np.nonzero(run)[0]
        t_cut = float(tg[first[0]]) if first.size else float(tg[-1])
        p_budget = _TWO_PI * 0.9 * max_freq / t_cut
        # ---- reach wanted: where the rigorous upper tail bounds fall below reach_tail
        def f_hi(xx: float) -> float:
            return max(float(upper_tail_h0(self.sigma, self.M, [xx])[0]),
                       float(upper_tail_h1(self.sigma, self.M, [xx])[0]))

        span_cap = p_budget * amp / (amp + guard)
        reach = max(10.0 * self.sd, 10.0)
        while reach - self.xlo < span_cap and f_hi(reach) > reach_tail:
            reach *= 2.0
        P = min(p_budget, (reach - self.xlo) * (amp + guard) / amp)
        self.t_cut = t_cut
        self.P = float(P)
        self.lam = (amp + guard) / self.P
        if self.P * amp / (amp + guard) <= -self.xlo or self.lam > 50.0:
            # the affordable window cannot even reach x = 0 with a tolerable amplification:
            # infeasible (tiny M at small sigma); the caller falls back
            self.truncated = True
            self.xhi = self.xlo
            self.n_eff = 0
            return
        self.xhi = self.xlo + min(amp / self.lam, 0.999 * self.P)
        # certified pieces of the error (independent of the query point)
        if lo_mag >= self.M:
            self.err_left = 0.0
        else:
            e = f_lo(lo_mag)
            j = 1
            while True:
                pos = self.xlo - (j - 1) * self.P
                if pos <= -self.M:
                    break
                lt = f_lo(-pos)
                e += math.exp(min(self.lam * j * self.P, 700.0)) * lt
                j += 1
                if j > 50:
                    e = math.inf
                    break
            self.err_left = min(e, 1.0)
        elp = math.exp(-self.lam * self.P)
        self.err_right = elp / (1.0 - elp)
        # ---- coefficients b_n, n = 0..N
        dt = _TWO_PI / self.P
        lam = self.lam
        chunks0, chunks1 = [], []
        n0, block = 0, 256
        converged = False
        xl_frac = self.xlo / self.P
        while True:
            n = np.arange(n0, n0 + block, dtype=float)
            t = n * dt
            # the kernel on the equally spaced t_n (same values as at t, ~10x faster)
            r0 = lognormal_cf_m1_tilted_grid(self.sigma, n0, block, dt, lam)
            chi_w = lognormal_cf_m1_tilted_grid(self.sigma, n0, block, dt, lam, True, True)  # direct: no cancellation
            l0 = _clog1p(r0)
            l0 = np.where(np.isfinite(l0.real), l0, -800.0)
            with np.errstate(divide="ignore"):
                lw = np.log(chi_w)
            lw = np.where(np.isfinite(lw.real), lw, -800.0)
            # phase e^{-i t_n xlo} reduced modulo 2 pi in units of P
            ph = -_TWO_PI * np.mod(n * xl_frac, 1.0)
            e0 = self.M * l0 + lam * self.xlo
            e1 = (self.M - 1.0) * l0 + lw + lam * self.xlo
            b0 = np.exp(np.minimum(e0.real, 50.0)) * np.exp(1j * (e0.imag + ph))
            b1 = np.exp(np.minimum(e1.real, 50.0)) * np.exp(1j * (e1.imag + ph))
            chunks0.append(b0)
            chunks1.append(b1)
            n_last = n0 + block - 1
            if max(np.max(e0.real), np.max(e1.real)) < logcut and n0 > 0:
                tt = t[-1] * np.array([1.5, 2, 3, 4, 6, 8, 12, 16, 32, 64])
                la = self.M * _clog1p(lognormal_cf_m1_tilted(self.sigma, tt, lam)).real + lam * self.xlo
                if np.all(la < logcut):
                    converged = True
                    break
            if n_last >= max_freq:
                break
            n0 += block
            block = min(block * 2, 65536)
        self.n_eff = n_last
        self.b0 = np.concatenate(chunks0)
        self.b1 = np.concatenate(chunks1)
        self.truncated = not converged
        self.t = np.arange(0, n_last + 1, dtype=float) * dt
        den = lam - 1j * self.t
        self.c0 = self.b0 / den
        self.c1 = self.b1 / den
        self.base0 = float(self.c0[0].real + 2.0 * np.sum(self.c0[1:]).real)
        self.base1 = float(self.c1[0].real + 2.0 * np.sum(self.c1[1:]).real)
        last = max(abs(self.b0[-1]), abs(self.b1[-1]))
        self._trunc_unit = (4.0 * last / (self.P * dt) * (1.0 + math.log(1e3))
                            if converged else math.inf)
        a0, a1 = np.abs(self.c0), np.abs(self.c1)
        s_abs = max(float(np.sum(a0)), float(np.sum(a1)))
        self._round_unit = 2.0 / self.P * s_abs
        # point evaluations sum the series only over n < n_keep: the terms left out move each G
        # by at most e^{lam u} (2/P) sum_{n >= n_keep} |c_n| (certified: _trim_unit, in err()).
        # n_keep is the first n where that is below 1/512 of the round-off bound's amplified term,
        # so the brackets widen by < 0.2 % (sigma = 0.5, M = 1000: 393k -> ~250k coefficients);
        # (1 + 1e-8) covers the rounding of the cumulative sums (relative N u < 1e-10)
        tails = (2.0 / self.P) * (1.0 + 1e-8) * np.maximum(
            np.cumsum(a0[::-1])[::-1], np.cumsum(a1[::-1])[::-1])
        small = np.nonzero(tails <= _U * (FOURIER_SERIES_ERR_UNITS + 4.0) * self._round_unit / 512.0)[0]
        n_keep = max(int(small[0]), 2) if small.size else self.n_eff + 1
        self._trim_unit = float(tails[n_keep]) if n_keep <= self.n_eff else 0.0
        self._ck = (self.c0[1:n_keep], self.c1[1:n_keep])

    # -------------------------------------------------------------- error of one CDF value
    def err(self, x: Any) -> FArr:
        """Bound on |G_which(x) - P_which[x' <= x]| (both hypotheses), vectorised over x."""
        u = np.asarray(x, dtype=float) - self.xlo
        amp = np.exp(np.minimum(self.lam * np.maximum(u, 0.0), 700.0))
        # round-off of G = (amp s - base)/P: s = c_0 + 2 Re sum_{n>=1} from the C kernel (within
        # FOURIER_SERIES_ERR_UNITS u sum|c|, csrc/dpb_fourier_series.h), base by numpy's pairwise
        # sum (within ~(log2 N + 16) u sum|c| <= 40 u sum|c|), each term scaled by 2/P:
        # _round_unit = (2/P) sum|c|; plus a few u for exp (amp) and the combination
        rnd = _U * (8.0 + (FOURIER_SERIES_ERR_UNITS + 4.0) * amp * self._round_unit
                    + 44.0 * self._round_unit)
        return np.asarray(self.err_left + self.err_right + amp * (self._trunc_unit + self._trim_unit) + rnd,
                          dtype=np.float64)

    # -------------------------------------------------------------- series evaluation
    def wrapped_cdf_pair(self, x: Any, density: bool = False) -> Any:
        """(G0(x), G1(x)[, H0 density at x]) for x in [xlo, xhi] (C kernel for the series)."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        u = x - self.xlo
        g0 = np.zeros(x.size)
        g1 = np.zeros(x.size)
        d0 = np.empty(x.size)
        # G(xlo) = 0 exactly (every mode's integral over [xlo, xlo] vanishes): only the density
        # needs the series there; delta() asks for x = xlo whenever M expm1(-eps) <= xlo
        need = (u != 0.0) | density
        if np.any(need):
            un = u[need]
            # the CDFs from the trimmed series (err() covers the terms left out); the density,
            # which only steers Newton steps, from the full one
            sr = fourier_series_re(un / self.P, list(self._ck))
            amp = np.exp(np.minimum(self.lam * un, 700.0))
            s0 = self.c0[0].real + 2.0 * sr[0]
            s1 = self.c1[0].real + 2.0 * sr[1]
            zero = un == 0.0
            g0[need] = np.where(zero, 0.0, (amp * s0 - self.base0) / self.P)
            g1[need] = np.where(zero, 0.0, (amp * s1 - self.base1) / self.P)
            if density:
                sd = fourier_series_re(un / self.P, [self.b0[1:]])[0]
                d0[need] = amp * (self.b0[0].real + 2.0 * sd) / self.P
        return (g0, g1, d0) if density else (g0, g1)

    def cdf_grid(self) -> tuple[FArr, FArr]:
        """(x_k, G0(x_k)) on a uniform grid of [xlo, xhi] by one inverse FFT."""
        nf = int(2 ** math.ceil(math.log2(max(4.0 * self.n_eff + 4.0, 65536.0))))
        X = np.zeros(nf // 2 + 1, dtype=complex)
        X[:self.n_eff + 1] = np.conj(self.c0)
        s = np.fft.irfft(X, n=nf) * nf  # sum_{|n| <= N} c_n e^{-2 pi i n k / nf}
        h = self.P / nf
        kmax = int(math.floor((self.xhi - self.xlo) / h))
        u = h * np.arange(kmax + 1)
        amp = np.exp(self.lam * u)
        g = (amp * s[:kmax + 1] - self.base0) / self.P
        return np.asarray(self.xlo + u, dtype=np.float64), np.asarray(g, dtype=np.float64)

    # -------------------------------------------------------------- the law interface
    method = "tilted Fourier series"
    certified = "left and right aliasing (tail bounds and the tilt), loss discretisation"
    estimated = "series truncation and round-off, amplified by the tilt up to e^12 at the served edge"

    @property
    def converged(self) -> bool:
        # unusable if the series did not converge or the served range does not reach x = 0 (TV)
        return not self.truncated and self.xhi > 0.0

    supports_lattice = False

    @property
    def key(self) -> tuple[object, ...]:
        return ("tilted", self.sigma, self.M, self.P)

    def tv(self) -> tuple[float, float]:
        g0t, g1t = self.wrapped_cdf_pair([0.0])
        return float(g0t[0] - g1t[0]), 2.0 * float(self.err(0.0))

    def cdf_grid_pair(self) -> tuple[FArr, FArr, FArr]:
        """(x_k, G0(x_k), G1(x_k)) on a uniform grid of [xlo, xhi] by one inverse FFT each."""
        nf = int(2 ** math.ceil(math.log2(max(4.0 * self.n_eff + 4.0, 65536.0))))
        h = self.P / nf
        kmax = int(math.floor((self.xhi - self.xlo) / h))
        u = h * np.arange(kmax + 1)
        amp = np.exp(self.lam * u)
        out = []
        for c, base in ((self.c0, self.base0), (self.c1, self.base1)):
            X = np.zeros(nf // 2 + 1, dtype=complex)
            X[:self.n_eff + 1] = np.conj(c)
            s = np.fft.irfft(X, n=nf) * nf  # sum_{|n| <= N} c_n e^{-2 pi i n k / nf}
            out.append(np.asarray((amp * s[:kmax + 1] - base) / self.P, dtype=np.float64))
        return np.asarray(self.xlo + u, dtype=np.float64), out[0], out[1]

    def curve_points(self) -> tuple[FArr, FArr, FArr, FArr]:
        x, g0, g1 = self.cdf_grid_pair()
        e = self.err(x) + 4.0 * 2.2e-16 * np.exp(self.lam * (x - self.xlo)) * self._round_unit
        a = (1.0 - g0)[::-1]
        f = g1[::-1]
        er = e[::-1]
        return a - er, a + er, f - er, f + er

    def tradeoff(self, flat: FArr) -> tuple[FArr, FArr]:
        """f_M(a) and its error bound from the tilted series (x_a up to self.xhi)."""
        m = self.M
        f = np.where(flat <= 0, 1.0, 0.0)
        err = np.zeros(flat.size)
        grid, g0 = self.cdf_grid()
        g0 = np.maximum.accumulate(g0)
        target = 1.0 - flat
        k = np.searchsorted(g0, target)
        interior = (flat > 0) & (flat < 1)
        inside = interior & (k > 0) & (k < grid.size)
        below = interior & (k == 0)            # x_a at or below xlo: f <= P1[x <= xlo]
        above = interior & (k >= grid.size)    # x_a beyond the served range
        e_lo = float(self.err(self.xlo))
        f[below], err[below] = 0.0, 2.0 * e_lo
        if np.any(above):
            # f is non-increasing: f(a) >= P1[x <= xhi] - (slack of x_a near xhi); f(a) <= 1 - a
            _, g1h = self.wrapped_cdf_pair([self.xhi])
            eh = float(self.err(self.xhi))
            lo_f = max(0.0, float(g1h[0]) - eh - (1.0 + self.xhi / m) * 2.0 * eh)
            hi_f = 1.0 - flat[above]
            f[above] = 0.5 * (lo_f + hi_f)
            err[above] = 0.5 * np.maximum(hi_f - lo_f, 0.0)
        idx = np.nonzero(inside)[0]
        if idx.size:
            tg = target[idx]
            x = invert_cdf(self, grid, g0, k[idx], tg)
            g0x, g1x = self.wrapped_cdf_pair(x)
            ex = self.err(x)
            resid = np.abs(g0x - tg)
            f[idx] = g1x
            slope = np.maximum(0.0, 1.0 + x / m)
            err[idx] = ex + slope * (ex + resid)
        return f, err

    def cdf_brackets(self, y: FArr) -> tuple[FArr, FArr, FArr, FArr]:
        """Inside the served range: the series value +- :meth:`err`; beyond it:
        :func:`extend_cdf_brackets`."""
        y = np.atleast_1d(np.asarray(y, dtype=float))
        yc = np.clip(y, self.xlo, self.xhi)
        g0, g1 = self.wrapped_cdf_pair(yc)
        e = self.err(yc)
        return extend_cdf_brackets(self.sigma, self.M, self.xlo, self.xhi, y, g0 - e, g0 + e, g1 - e, g1 + e)

    def _eps_table(self) -> tuple[FArr, FArr]:
        """(eps_j, sqrt(-2 log delta~(eps_j))) on [0, log(1 + xhi/M)] (4096 points, non-decreasing),
        delta~ an approximation of delta's midpoint for starting the epsilon search.

        The series at the 2^16 points x_k = xlo + k P/2^16 by one FFT of each coefficient array
        folded modulo 2^16 (e^{-2 pi i n k/2^16} is 2^16-periodic in n: the folded sums are the
        series' values there, not an approximation), cubic interpolation in x between them."""
        nf = 2 ** 16
        h = self.P / nf
        kmax = int(math.floor((self.xhi - self.xlo) / h))
        amp = np.exp(self.lam * h * np.arange(kmax + 1))
        eps = np.linspace(0.0, math.log1p(self.xhi / self.M), 4096)
        y = self.M * np.expm1(eps)
        y2 = self.M * np.expm1(-eps)
        vals = []
        for c, base in ((self.c0, self.base0), (self.c1, self.base1)):
            z = np.zeros(-(-c.size // nf) * nf, dtype=complex)
            z[1:c.size] = c[1:]
            s = c[0].real + 2.0 * np.fft.fft(z.reshape(-1, nf).sum(axis=0)).real
            gk = (amp * s[:kmax + 1] - base) / self.P
            for yy in (y, y2):
                p = (np.clip(yy, self.xlo, self.xhi) - self.xlo) / h
                k = np.clip(np.floor(p).astype(np.intp), 1, kmax - 2)
                t = p - k  # 4-point Lagrange cubic through x_{k-1}..x_{k+2}
                vals.append(-t * (t - 1) * (t - 2) / 6 * gk[k - 1] + (t + 1) * (t - 1) * (t - 2) / 2 * gk[k]
                            - (t + 1) * t * (t - 2) / 2 * gk[k + 1] + (t + 1) * t * (t - 1) / 6 * gk[k + 2])
        g0y, g0a, g1y, g1a = vals
        ee = np.exp(eps)
        mid = np.maximum((1.0 - g1y) - ee * (1.0 - g0y), g0a - ee * g1a)
        mid = np.minimum.accumulate(np.clip(mid, 1e-300, 1.0))
        return eps, np.sqrt(-2.0 * np.log(mid))

    def eps_start(self, d: float) -> tuple[float, float] | None:
        if not self.converged or self.n_eff < 4:
            return None
        eps, gt = cached(("eps table",) + self.key, self._eps_table)
        td = math.sqrt(-2.0 * math.log(d))
        j = int(np.searchsorted(gt, td))
        if j == 0 or j >= gt.size or not gt[j] > gt[j - 1]:
            return None  # eps = 0, or beyond the served range: the search brackets by itself
        slope = float((gt[j] - gt[j - 1]) / (eps[j] - eps[j - 1]))
        return float(eps[j - 1] + (td - gt[j - 1]) / slope), slope

    def delta(self, eps: float) -> tuple[float, float]:
        law, M = self, self.M
        ee = math.exp(min(eps, 700.0))
        # remove: P1[x > y] - e^eps P0[x > y]; y capped at eps = 600 (no overflow; far beyond xhi,
        # where only the tail bound P1[x > y] <= P1[x > y(600)] is used, still an upper bound)
        y = M * math.expm1(min(eps, 600.0))
        y2 = M * math.expm1(-eps)  # add: P0[x <= y2] - e^eps P1[x <= y2]
        yq = min(max(y, law.xlo), law.xhi)
        y2q = min(max(y2, law.xlo), law.xhi)
        # the remove direction first: where the add direction is provably below its lower end
        # (add <= P0[x <= y2] <= the Chernoff bound), the add point's series is not needed
        g0, g1 = law.wrapped_cdf_pair([yq])
        er0 = float(law.err(yq))
        if y > law.xhi:
            # only an upper bound: delta_remove <= P1[x > y] <= P1[x > xhi] (and the tail bound)
            r_lo = 0.0
            r_hi = min(1.0 - g1[0] + er0, float(upper_tail_h1(self.sigma, M, [y])[0]))
        else:
            c = (1 - g1[0]) - ee * (1 - g0[0])
            r_hi = c + er0 * (1.0 + ee)
            r_lo = c - er0 * (1.0 + ee)
        if y2 <= law.xlo:
            a_lo, a_hi = 0.0, float(law.err(law.xlo))  # P0[x <= xlo] <= the left-tail error
        else:
            t_add = float(lower_tail_h0(self.sigma, M, [y2])[0])
            if t_add <= r_lo:
                # add <= t_add <= r_lo: max(remove, add) is bracketed by the remove direction alone
                # (any series lower end of the add direction is <= add <= r_lo as well)
                a_lo, a_hi = 0.0, t_add
            else:
                g0a, g1a = law.wrapped_cdf_pair([y2q])
                er1 = float(law.err(y2q))
                c = g0a[0] - ee * g1a[0]
                a_hi = c + er1 * (1.0 + ee)
                a_lo = c - er1 * (1.0 + ee)
        return float(max(r_lo, a_lo, 0.0)), float(min(max(r_hi, a_hi), 1.0))
