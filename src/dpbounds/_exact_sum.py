"""Distribution of the lognormal sum S = sum_j Y_j under H0 and H1 (private).

Numerics of the exact random-allocation accountant (SPEC Part A sections 1, 10b):

* x = S - M is represented by its characteristic function psi0(t) = chi(t)^M (H0) and
  psi1(t) = chi(t)^(M-1) chi_w(t) (H1 = size-biased H0), with chi - 1 from the C kernel
  ``dpb_exact_lognormal_cf`` (shifted-contour trapezoid).
* A window [xlo, xlo + P) is chosen from rigorous tail bounds (Chernoff below; a
  truncated-MGF bound above, with the heavy signal term of H1 split off).
* CDFs inside the window come from the Fourier series of the P-periodic wrapping of the law
  of x (exact coefficients psi(2 pi n / P)); the wrapped CDF differs from the true one by at
  most the mass outside the window (aliasing), which the tail bounds certify.

Only the FFT-free direct Fourier series is used here; the lattice PLD (composition) lives in
:mod:`dpbounds.accountant`.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

FArr = NDArray[np.float64]
CArr = NDArray[np.complex128]

from dpbounds._exact import lognormal_cf_m1, lognormal_cf_m1_tilted  # type: ignore[import-not-found, unused-ignore]

__all__ = ["LognormalSum", "TiltedLognormalSum"]

_TWO_PI = 2.0 * math.pi


def _ndtr(x: Any) -> FArr:
    from dpbounds._ufuncs import ndtr

    return np.asarray(ndtr(np.asarray(x, dtype=float)), dtype=float)


def _log1p_minus_x(a: Any) -> FArr:
    """log1p(a) - a, accurate for small |a| (a > -1)."""
    a = np.asarray(a, dtype=float)
    out = np.empty_like(a)
    small = np.abs(a) < 0.05
    s = a[small]
    # -a^2/2 + a^3/3 - ...
    acc = np.zeros_like(s)
    p = s * s
    for k in range(2, 20):
        acc += (-1.0) ** (k + 1) * p / k
        p = p * s
    out[small] = acc
    b = a[~small]
    with np.errstate(divide="ignore", invalid="ignore"):
        out[~small] = np.where(b > -1.0, np.log1p(np.maximum(b, -1.0 + 1e-300)) - b, np.inf)
    return np.asarray(out, dtype=np.float64)


@functools.lru_cache(maxsize=32)
def _mgf_tables(sigma: float, far: bool = False) -> tuple[FArr, FArr, FArr, FArr, FArr, FArr]:
    """Tables for the tail bounds (depend on sigma only).

    Returns lam (L,), lower q(lam) = E[e^{-lam Y} - 1 + lam Y] (L,),
    b (B,), Q_b = P[Y > b] (B,), D2(b, lam) = E[e^{lam min(Y,b)}] - 1 - lam (B, L).
    ``far=True`` adds truncation levels b up to P[Y > b] ~ 1e-300 and lam down to 30 / b_max, so
    that the upper tail bound keeps decaying far beyond 1e6 (the default table's floor is
    n P[Y > 1e6], e.g. 3e-3 at sigma = 0.3, n = 1e6); used for the tails of E > 1 lattices.
    """
    s = 1.0 / sigma
    m = -0.5 * s * s
    log10_bmax = min((37.0 * s + m) / math.log(10.0), 300.0)
    lam = np.logspace(-12, 3, 91)
    if far and log10_bmax > 6.5:
        lam = np.concatenate([np.logspace(-math.ceil(log10_bmax) - 2, -12.5, 2 * int(math.ceil(log10_bmax)) - 20), lam])
    # lower-tail transform, trapezoid on the real line (smooth, double-exponential decay)
    hu = min(0.05, sigma / 10)
    u = np.arange(-12.0, 12.0 + 2 * s, hu)
    nu = np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi) * hu
    y = np.exp(s * u + m)
    z = lam[:, None] * y[None, :]
    # e^{-z} - 1 + z, series for small z
    g = np.where(z < 1e-3, z * z / 2 - z ** 3 / 6 + z ** 4 / 24, np.expm1(-np.minimum(z, 700)) + z)
    q = np.einsum('ij,j->i', g, nu)
    # log E e^{-lam Y} by log-sum-exp (used where E e^{-lam Y} - 1 < -0.05)
    lw = np.log(nu)[None, :] - lam[:, None] * y[None, :]
    lmx = np.max(lw, axis=1)
    qlog = lmx + np.log(np.sum(np.exp(lw - lmx[:, None]), axis=1))
    # upper-tail truncated transform: Gauss-Legendre panels on [-12, u_b]
    b = np.unique(np.concatenate([np.logspace(0.2, 6, 17), [1.25, 1.5, 2.0, 3.0]]))
    if far and log10_bmax > 6.5:
        b = np.unique(np.concatenate([b, np.logspace(6.5, log10_bmax, int(math.ceil(2 * (log10_bmax - 6.5))) + 1)]))
    ub = (np.log(b) - m) / s
    Qb = _ndtr(-ub)
    Tb = _ndtr(s - ub)  # E[Y 1{Y > b}]
    gx, gw = np.polynomial.legendre.leggauss(12)
    D2 = np.full((b.size, lam.size), np.inf)
    for i in range(b.size):
        # panels refined geometrically towards u_b, where e^{lam y} is steepest
        # unit panels plus geometric refinement towards u_b, where e^{lam y} is steepest
        uni = np.linspace(-12.0, ub[i], int(math.ceil(ub[i] + 12.0)) + 1)
        geo = ub[i] - np.geomspace(1e-4, min(1.0, 0.5 * (ub[i] + 12.0)), 8)
        edges = np.unique(np.concatenate([uni, geo]))
        mid = 0.5 * (edges[1:] + edges[:-1])
        half = 0.5 * (edges[1:] - edges[:-1])
        uu = (mid[:, None] + half[:, None] * gx[None, :]).ravel()
        ww = (half[:, None] * gw[None, :]).ravel() * np.exp(-0.5 * uu * uu) / math.sqrt(2 * math.pi)
        yy = np.exp(s * uu + m)
        ok = lam * b[i] <= 30.0
        zz = lam[ok, None] * yy[None, :]
        gg = np.where(zz < 1e-3, zz * zz / 2 + zz ** 3 / 6 + zz ** 4 / 24, np.expm1(zz) - zz)
        D2[i, ok] = np.einsum('ij,j->i', gg, ww) + Qb[i] * np.expm1(lam[ok] * b[i]) - lam[ok] * Tb[i]
    return lam, q, b, Qb, D2, qlog


def lower_tail_h0(sigma: float, n: float, x: Any) -> FArr:
    """Upper bound on P0[sum_{j<=n}(Y_j - 1) <= x] for x < 0 (Chernoff), vectorised over x."""
    lam, q, _, _, _, qlog = _mgf_tables(sigma, False)  # positional, as below: one cache entry
    x = np.atleast_1d(np.asarray(x, dtype=float))
    a = q - lam
    expo_n = n * np.where(np.abs(a) < 0.05, _log1p_minus_x(a) + q, qlog + lam)  # n*(log E e^{-lam Y} + lam)
    e = lam[None, :] * x[:, None] + expo_n[None, :]
    best = np.min(e, axis=1)
    with np.errstate(over="ignore"):
        return np.asarray(np.minimum(1.0, np.exp(np.minimum(best, 0.0)) * 1.01), dtype=np.float64)


@functools.lru_cache(maxsize=64)
def _upper_exponent(sigma: float, n: float, far: bool = False) -> FArr:
    """n * (log E e^{lam min(Y, b)} - lam) on the (b, lam) table (x-independent part of the bound)."""
    lam, _, b, Qb, D2, _ = _mgf_tables(sigma, far)
    a = lam[None, :] + D2
    af = np.where(np.isfinite(a), a, 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        # series form only where it does not cancel
        expo = n * np.where(np.abs(af) < 0.05, _log1p_minus_x(af) + D2,
                            np.log1p(np.maximum(af, -0.5)) - lam[None, :])
    return np.asarray(np.where(np.isfinite(D2), expo, np.inf), dtype=np.float64)


def upper_tail_h0(sigma: float, n: float, x: Any, far: bool = False) -> FArr:
    """Upper bound on P0[sum_{j<=n}(Y_j - 1) > x] for x > 0 (truncated Chernoff)."""
    lam, _, b, Qb, D2, _ = _mgf_tables(sigma, far)
    x = np.atleast_1d(np.asarray(x, dtype=float))
    expo = _upper_exponent(float(sigma), float(n), far)
    e = -lam[None, None, :] * x[:, None, None] + expo[None, :, :]
    emin = np.min(e, axis=2)  # (nx, B)
    with np.errstate(over="ignore"):
        tot = n * Qb[None, :] + np.exp(np.minimum(emin, 0.0))
    return np.asarray(np.minimum(1.0, np.min(tot, axis=1) * 1.01), dtype=np.float64)


def upper_tail_h1(sigma: float, M: float, x: Any, far: bool = False) -> FArr:
    """Upper bound on P1[S - M > x] (signal term split off, rest bounded as under H0)."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    out = np.empty(x.size)
    fr = np.linspace(0.02, 0.98, 49)
    for i, xi in enumerate(x):
        xr = fr * xi
        sig_tail = _ndtr(0.5 / sigma - sigma * np.log1p(xi - xr))  # P[wY - 1 > xi - xr]
        rest = upper_tail_h0(sigma, M - 1.0, xr, far) if M > 1 else np.zeros_like(xr)
        out[i] = min(1.0, float(np.min(sig_tail + rest)))
    return out


def _bisect(fun: Callable[[float], float], lo: float, hi: float, target: float,
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


class LognormalSum:
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
        tg = np.logspace(-8, 6, 281) / max(math.sqrt(self.w_m1), 1e-300)
        with np.errstate(divide="ignore"):
            lg = self.M * _clog1p(lognormal_cf_m1(self.sigma, tg)).real
        above = np.nonzero(lg >= logcut)[0]
        self.t_max = float(tg[min(above[-1] + 1, tg.size - 1)]) if above.size else float(tg[0])
        p_max = _TWO_PI * 0.6 * max_freq / self.t_max  # leave room: t_max comes from a coarse scan
        # ---- window from the tail bounds
        def f_lo(xx: float) -> float:
            return float(lower_tail_h0(self.sigma, self.M, [-xx])[0])

        if f_lo(self.M) <= tail:
            lo_mag = _bisect(f_lo, 1e-9 * sd, self.M, tail, log=True, iters=14)
        else:
            lo_mag = self.M
        self.xlo = -lo_mag
        self.tail_lo0 = f_lo(lo_mag) if lo_mag < self.M else 0.0

        def f_hi(xx: float) -> float:
            return max(float(upper_tail_h0(self.sigma, self.M, [xx])[0]),
                       float(upper_tail_h1(self.sigma, self.M, [xx])[0]))

        cap = p_max / 1.05 + self.xlo
        if xhi_max is not None:
            cap = min(cap, xhi_max)
        hi = max(10 * sd, 10.0)
        while f_hi(hi) > tail and hi < cap:
            hi *= 4.0
        hi = min(hi, cap)
        if f_hi(hi) <= tail:
            lo_b = hi / 4.0 if hi > 10 * sd else 1e-9
            hi = _bisect(f_hi, lo_b, hi, tail, iters=8, log=True)  # xhi to 0.6 %: ample
        self.xhi = hi
        self.tail_hi0 = float(upper_tail_h0(self.sigma, self.M, [hi])[0])
        self.tail_hi1 = float(upper_tail_h1(self.sigma, self.M, [hi])[0])
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
        chunks0, chunks1 = [], []
        n0 = 1
        block = 256
        n_eff = 0
        converged = False
        while True:
            n = np.arange(n0, n0 + block, dtype=float)
            t = n * dt
            r0 = lognormal_cf_m1(self.sigma, t)
            r1 = lognormal_cf_m1(self.sigma, t, True) + 1j * t * self.w_m1
            l0 = _clog1p(r0)
            fin = np.isfinite(l0.real)
            l0 = np.where(fin, l0, -800.0)
            psi0 = np.exp(self.M * l0)
            psi1 = np.exp((self.M - 1.0) * l0) * (1.0 + r1)
            chunks0.append(psi0)
            chunks1.append(psi1)
            n_eff = n0 + block - 1
            mx = self.M * np.max(l0.real)
            if mx < logcut:
                # look ahead: the modulus must stay below the cut further out
                tt = t[-1] * np.array([1.5, 2, 3, 4, 6, 8, 12, 16, 32, 64])
                la = self.M * _clog1p(lognormal_cf_m1(self.sigma, tt)).real
                if np.all(la < logcut):
                    converged = True
                    break
            if n_eff >= max_freq:
                break
            n0 += block
            block = min(block * 2, 65536)
        self.n_eff = n_eff
        self.t = np.arange(1, n_eff + 1, dtype=float) * dt
        self.psi0 = np.concatenate(chunks0)
        self.psi1 = np.concatenate(chunks1)
        last = max(abs(self.psi0[-1]), abs(self.psi1[-1]))
        self.truncated = not converged
        # error of the truncated series for one CDF value (estimate: |psi| <= last beyond n_eff,
        # decaying at least like 1/n): (4/P) sum_{n>n_eff} |psi|/t_n, bounded by 4*last*(log + 1)
        self.err_trunc = 4.0 * last / (self.P * dt) * (1.0 + math.log(1e3)) if not self.truncated else float("nan")
        self.c0 = self.psi0 / (1j * self.t)
        self.c1 = self.psi1 / (1j * self.t)
        self.err_round = 64 * 2.2e-16 * (1.0 + 2.0 / self.P * float(np.sum(np.abs(self.c0))))
        ph = self._phase(self.xlo)
        self.base0 = np.sum(self.c0 * ph).real
        self.base1 = np.sum(self.c1 * ph).real

    # -------------------------------------------------------------- series evaluation
    def _phase(self, x: float) -> CArr:
        # e^{-i t_n x} with the argument reduced modulo 2 pi exactly in units of P
        frac = np.mod(np.arange(1, self.n_eff + 1, dtype=float) * (x / self.P), 1.0)
        return np.exp(-1j * _TWO_PI * frac)

    def wrapped_cdf(self, x: Any, which: int = 0) -> FArr:
        """G(x) = wrapped mass of [xlo, x) (x inside the window), vectorised."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        c = self.c0 if which == 0 else self.c1
        base = self.base0 if which == 0 else self.base1
        n = np.arange(1, self.n_eff + 1, dtype=float)
        out = np.empty(x.size)
        step = max(1, int(2_000_000 // max(self.n_eff, 1)))
        for i in range(0, x.size, step):
            xs = x[i:i + step]
            frac = np.mod(np.outer(xs / self.P, n), 1.0)
            s = np.einsum('ij,j->i', np.exp(-1j * _TWO_PI * frac), c).real
            out[i:i + step] = (xs - self.xlo) / self.P + 2.0 / self.P * (base - s)
        return out

    def wrapped_cdf_pair(self, x: Any, density: bool = False) -> Any:
        """(G0(x), G1(x)[, wrapped H0 density at x]) sharing the phase factors (chunked)."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        n = np.arange(1, self.n_eff + 1, dtype=float)
        g0 = np.empty(x.size)
        g1 = np.empty(x.size)
        d0 = np.empty(x.size)
        step = max(1, int(1_000_000 // max(self.n_eff, 1)))
        for i in range(0, x.size, step):
            xs = x[i:i + step]
            e = np.exp(-1j * _TWO_PI * np.mod(np.outer(xs / self.P, n), 1.0))
            lin = (xs - self.xlo) / self.P
            g0[i:i + step] = lin + 2.0 / self.P * (self.base0 - np.einsum('ij,j->i', e, self.c0).real)
            g1[i:i + step] = lin + 2.0 / self.P * (self.base1 - np.einsum('ij,j->i', e, self.c1).real)
            if density:
                d0[i:i + step] = (1.0 + 2.0 * np.einsum('ij,j->i', e, self.psi0).real) / self.P
        return (g0, g1, d0) if density else (g0, g1)

    def cdf_bounds(self, x: Any, which: int = 0) -> tuple[FArr, FArr, FArr]:
        """(value, lower, upper) for P_which[S - M <= x]  (certified up to the series estimate)."""
        g = self.wrapped_cdf(x, which)
        tl = self.tail_lo0 if which == 0 else self.tail_lo1
        th = self.tail_hi0 if which == 0 else self.tail_hi1
        num = self.err_trunc + self.err_round
        return g, g - tl - th - num, g + tl + num

    def sf_bounds(self, x: Any, which: int = 0) -> tuple[FArr, FArr, FArr]:
        g, lo, hi = self.cdf_bounds(x, which)
        return 1.0 - g, 1.0 - hi, 1.0 - lo


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
    N = int(2 ** math.ceil(math.log2(max(P / h_target, 2.0 * law.n_eff + 2.0, 16.0))))
    h = P / N
    n = np.arange(0, N // 2 + 1, dtype=float)
    t = n * _TWO_PI / P
    out = []
    for psi in (law.psi0, law.psi1):
        a = np.zeros(N // 2 + 1, dtype=complex)
        a[0] = 1.0
        k = min(law.n_eff, N // 2)
        a[1:k + 1] = psi[:k]
        with np.errstate(invalid="ignore", divide="ignore"):
            sinc = np.where(t > 0, np.sin(t * h / 2) / (t * h / 2), 1.0)
        # mass_k = (1/N) sum_n a_n sinc_n e^{-i t_n (xlo + h/2)} e^{-2 pi i n k / N}
        frac = np.mod(n * ((law.xlo + 0.5 * h) / P), 1.0)
        coef = a * sinc * np.exp(-1j * _TWO_PI * frac)
        mass = np.fft.irfft(np.conj(coef), n=N)
        out.append(mass)
    s = float(np.sum(np.abs(law.psi0))) + float(np.sum(np.abs(law.psi1)))
    err = 1e-15 * (1.0 + 2.0 * s) * math.log2(N) + N * law.err_trunc * h / P
    edges = np.asarray(law.xlo + h * np.arange(N), dtype=np.float64)
    return edges, h, out[0], out[1], err


class TiltedLognormalSum:
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
        :class:`LognormalSum`.
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
            lo_mag = _bisect(f_lo, 1e-9 * self.sd, self.M, target, log=True, iters=30)
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
            r0 = lognormal_cf_m1_tilted(self.sigma, t, lam)
            chi_w = lognormal_cf_m1_tilted(self.sigma, t, lam, True, True)  # direct: no cancellation
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
        s_abs = max(float(np.sum(np.abs(self.c0))), float(np.sum(np.abs(self.c1))))
        self._round_unit = 2.0 / self.P * s_abs

    # -------------------------------------------------------------- error of one CDF value
    def err(self, x: Any) -> FArr:
        """Bound on |G_which(x) - P_which[x' <= x]| (both hypotheses), vectorised over x."""
        u = np.asarray(x, dtype=float) - self.xlo
        amp = np.exp(np.minimum(self.lam * np.maximum(u, 0.0), 700.0))
        rnd = 16 * 2.2e-16 * (1.0 + (amp + 1.0) * self._round_unit)
        return np.asarray(self.err_left + self.err_right + amp * self._trunc_unit + rnd, dtype=np.float64)

    # -------------------------------------------------------------- series evaluation
    def wrapped_cdf_pair(self, x: Any, density: bool = False) -> Any:
        """(G0(x), G1(x)[, H0 density at x]) for x in [xlo, xhi] (chunked over x)."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        n = np.arange(1, self.n_eff + 1, dtype=float)
        g0 = np.empty(x.size)
        g1 = np.empty(x.size)
        d0 = np.empty(x.size)
        step = max(1, int(1_000_000 // max(self.n_eff, 1)))
        for i in range(0, x.size, step):
            u = x[i:i + step] - self.xlo
            e = np.exp(-1j * _TWO_PI * np.mod(np.outer(u / self.P, n), 1.0))
            amp = np.exp(np.minimum(self.lam * u, 700.0))
            s0 = self.c0[0].real + 2.0 * np.einsum('ij,j->i', e, self.c0[1:]).real
            s1 = self.c1[0].real + 2.0 * np.einsum('ij,j->i', e, self.c1[1:]).real
            g0[i:i + step] = (amp * s0 - self.base0) / self.P
            g1[i:i + step] = (amp * s1 - self.base1) / self.P
            if density:
                d0[i:i + step] = amp * (self.b0[0].real + 2.0 * np.einsum('ij,j->i', e, self.b0[1:]).real) / self.P
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
