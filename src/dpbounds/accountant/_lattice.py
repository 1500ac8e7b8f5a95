"""Loss lattices and their composition (private).

A privacy-loss distribution rounded onto the lattice ``delta_l * Z`` (up for an upper bound on
delta, down for a lower one) composes by one FFT power (:func:`compose`); different lattice
PMFs on the same spacing compose by convolution (:func:`convolve`).  :class:`HockeyStick` then
answers delta(eps) = sum_{l > eps} g_l (1 - e^{eps - l}) in O(1) per query.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

FArr = NDArray[np.float64]

__all__ = ["compose", "convolve", "HockeyStick", "WindowTooLarge"]


def compose(jmin: int, pmf: FArr, E: int, tau: float, max_lattice: int) -> tuple[int, FArr, float]:
    """E-fold self-convolution of a lattice PMF by one FFT power, on a window.

    ``pmf[k]`` is the mass at lattice index ``jmin + k`` (a sub-probability: mass at +inf is
    the caller's).  The window holds all but ``tau`` of the composed mass on each side
    (Chernoff bounds of the lattice law).  Returns ``(s0, g, outside)``: ``g[k]`` is the
    composed mass at index ``s0 + k`` and ``outside`` bounds the mass left out plus an FFT
    round-off estimate.  Raises :class:`WindowTooLarge` if the window exceeds ``max_lattice``.
    """
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
    if L > max_lattice:
        raise WindowTooLarge(int(hi_i - lo_i + pmf.size + 2))
    f = np.fft.rfft(pmf, n=L)
    f **= E
    g = np.fft.irfft(f, n=L)
    del f
    # index k of g holds total s with s = k (mod L), s in [s0, s0 + L)
    shift = s0 % L
    g = np.roll(g, -shift)
    err_fft = 4e-16 * math.log2(L) * E * math.sqrt(L)  # round-off estimate
    return E * jmin + s0, g, outside + err_fft


class WindowTooLarge(Exception):
    """The composition window would exceed the memory cap; ``needed`` is its size in points."""

    def __init__(self, needed: int):
        super().__init__(needed)
        self.needed = needed


class HockeyStick:
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
        if eps > 700.0:  # e^eps t2 <= t1 there is not representable; the stored tail bounds it
            return float(self.t1[k]) + self.dropped
        return float(self.t1[k] - math.exp(eps) * self.t2[k]) + self.dropped


def convolve(a: tuple[int, FArr], b: tuple[int, FArr]) -> tuple[int, FArr, float]:
    """Convolution of two lattice PMFs ``(jmin, pmf)`` on the same spacing (FFT, full support).

    Returns ``(jmin, pmf, err)`` with ``err`` an estimate of the summed FFT round-off (the same
    estimate as :func:`compose`); negative round-off values are kept, not clipped, so that the
    caller's bounds can account for them.
    """
    ja, pa = a
    jb, pb = b
    n = pa.size + pb.size - 1
    L = 1 << max(4, (n - 1).bit_length())
    g = np.fft.irfft(np.fft.rfft(pa, L) * np.fft.rfft(pb, L), L)[:n]
    err = 4e-16 * math.log2(L) * math.sqrt(L) * float(np.sum(pa)) * float(np.sum(pb))
    return ja + jb, g, err
