"""Composition of lattice PMFs, each a number of times, by a product of FFT spectra on one
window, with the E-independent parts cached (private; the random-allocation history engine's,
:mod:`dpbounds.accountant._history`).

:func:`dpbounds.accountant._lattice.compose` recomputes everything for every E (the trim of the
PMF's ends, which depended on E, its Chernoff table and its FFT), and different PMFs are then
convolved over their full supports.  A training loop asks for E, E + 1, ... epochs of the same
PMF, and a history of many noise levels composes many PMFs: here every PMF's trim and Chernoff
table are functions of the PMF alone (:func:`pmf_stats`), the window of the whole composition
comes from the sum of the pieces' Chernoff exponents, and its FFT length from a coarse set
(2^k and 3 * 2^(k-1)) that stays the same over many E.  The composed PMF is one inverse FFT of
the product of the pieces' spectra, each raised to its count (in history order).  The result is
a pure function of the pieces, their counts, tau and the memory cap.
"""
from __future__ import annotations

import math
from typing import Hashable, NamedTuple, Sequence

import numpy as np
from numpy.typing import NDArray

from dpbounds.accountant._cache import cached, lookup
from dpbounds.accountant._lattice import WindowTooLarge

FArr = NDArray[np.float64]
CArr = NDArray[np.complex128]

__all__ = ["PMFStats", "pmf_stats", "compose_spectral", "fft_bucket"]

_TRIM = 1e-24  # mass cut from each end of a PMF (count times it is counted, at any count)
# Chernoff parameters in lattice steps^-1 (one grid for every PMF, so that the exponents of
# several PMFs add): from 1e-12 (windows of ~1e13 steps) to 1
_LAM = np.logspace(-12.0, 0.0, 49)


class PMFStats(NamedTuple):
    """What the composition needs of one lattice PMF, whatever its count."""
    jmin: int           # lattice index of pmf[0] (after the trim)
    pmf: FArr           # the trimmed PMF
    cut: float          # mass trimmed (both ends, an upper bound)
    mean: float         # mean index relative to jmin (normalised by the total mass)
    lmgf_p: FArr        # log E e^{lam (k - mean)} on _LAM (sub-probability: an upper bound)
    lmgf_m: FArr        # log E e^{-lam (k - mean)}


def pmf_stats(jmin: int, pmf: FArr) -> PMFStats:
    """Trim ``pmf`` (mass at index jmin + k) at :data:`_TRIM` per end and tabulate its Chernoff
    log-MGFs, log-sum-exp without clipping (masses below 1e-300 raised to it: that only
    enlarges the MGF, which stays an upper bound)."""
    cs = np.cumsum(pmf)
    a = min(int(np.searchsorted(cs, _TRIM, side="right")), pmf.size - 1)
    rc = np.cumsum(pmf[::-1])
    nb = int(np.searchsorted(rc, _TRIM, side="right"))
    b = max(pmf.size - nb, a + 1)
    cut = (float(np.sum(pmf[:a])) + float(np.sum(pmf[b:]))) * (1.0 + 1e-12)
    p = np.ascontiguousarray(pmf[a:b])
    k = np.arange(p.size, dtype=float)
    tot = float(p.sum())
    mean = float(np.sum(k * p)) / tot if tot > 0.0 else 0.0
    kc = k - mean
    lpm = np.log(np.maximum(p, 1e-300))
    lp = np.empty(_LAM.size)
    lm = np.empty(_LAM.size)
    for i in range(0, _LAM.size, 7):  # blocks of parameters: (7, size) temporaries
        e = _LAM[i:i + 7, None] * kc[None, :]
        for sign, out in ((1.0, lp), (-1.0, lm)):
            x = sign * e + lpm[None, :]
            mx = np.max(x, axis=1)
            out[i:i + 7] = mx + np.log(np.sum(np.exp(x - mx[:, None]), axis=1))
    return PMFStats(jmin + a, p, cut, mean, lp, lm)


def fft_bucket(n: int) -> int:
    """The smallest 2^k or 3 * 2^(k-1) >= n (at least 16): FFT lengths that change rarely as n grows."""
    n = max(int(n), 16)
    p2 = 1 << (n - 1).bit_length()
    three = 3 * (p2 // 4)
    return three if three >= n else p2


def _window(pieces: Sequence[tuple[PMFStats, int]], tau: float) -> tuple[int, int, bool]:
    """(L, s0, aliased): the FFT length and the window's first (relative) index of the
    composition; the window holds all but tau of the composed mass on each side (Chernoff, the
    pieces' exponents added)."""
    log_tau = math.log(tau)
    ep = sum(c * st.lmgf_p for st, c in pieces)
    em = sum(c * st.lmgf_m for st, c in pieces)
    a_hi = float(np.min((ep - log_tau) / _LAM))
    a_lo = float(np.min((em - log_tau) / _LAM))
    mean = sum(c * st.mean for st, c in pieces)
    span = sum(c * (st.pmf.size - 1) for st, c in pieces)
    lo_i = max(0.0, mean - a_lo)
    hi_i = min(float(span), mean + a_hi)
    L = fft_bucket(int(math.ceil(hi_i - lo_i)) + 3)
    if L >= span + 1:
        return fft_bucket(span + 1), 0, False
    return L, int(math.floor(lo_i)), True


def compose_spectral(pieces: Sequence[tuple[PMFStats, int, Hashable]], tau: float,
                     max_lattice: int) -> tuple[int, FArr, float]:
    """The composition of ``pieces`` = [(stats, count, key)], in order: ``(s0, g, outside)``
    with ``g[k]`` the composed mass at lattice index ``s0 + k`` and ``outside`` bounding the
    mass left out (the window's tails: what lies outside it aliases into it, 2 tau; the trimmed
    ends, count times each) plus an FFT round-off estimate (as :func:`_lattice.compose`'s).
    ``key`` identifies each PMF (the cache key of its spectrum and powers).  Raises
    :class:`WindowTooLarge` above ``max_lattice``."""
    L, s0, aliased = _window([(st, c) for st, c, _ in pieces], tau)
    if L > max_lattice:
        raise WindowTooLarge(L)

    def spectrum(st: PMFStats) -> CArr:
        p = st.pmf
        if p.size > L:  # fold modulo L (the mass moved lies outside the window: counted)
            p = np.asarray(np.bincount(np.arange(p.size) % L, weights=p, minlength=L), dtype=np.float64)
        return np.fft.rfft(p, n=L)

    def power(st: PMFStats, c: int, key: Hashable) -> CArr:
        f = cached(("ra spectrum", key, L), lambda: spectrum(st))
        return f ** c if c > 1 else f

    def power_of(i: int) -> CArr:
        st, c, key = pieces[i]
        return cached(("ra power", key, c, L), lambda: power(st, c, key))

    def product_key(n: int) -> Hashable:
        return ("ra product", tuple((k, c) for _, c, k in pieces[:n]), L)

    def product(upto: int) -> CArr:
        """The product of the first ``upto`` pieces' powers, left to right.  Every prefix of two
        or more pieces is cached, so a history that grows by a piece reuses the product of the
        others; the longest cached prefix is found first and the rest multiplied on in a loop
        (no recursion: a history may have thousands of pieces)."""
        n, acc = upto, None
        while n > 1:
            found, value = lookup(product_key(n))
            if found:
                acc = value
                break
            n -= 1
        if acc is None:
            n, acc = 1, power_of(0)
        for i in range(n, upto):
            prev, f = acc, power_of(i)
            acc = cached(product_key(i + 1), lambda: prev * f)
        return acc

    g = np.fft.irfft(product(len(pieces)), n=L)
    shift = s0 % L
    if shift:
        g = np.roll(g, -shift)
    n_tot = sum(c for _, c, _ in pieces)
    outside = (2.0 * tau if aliased else 0.0) + 4e-16 * math.log2(L) * n_tot * math.sqrt(L)
    outside += sum(c * st.cut for st, c, _ in pieces)
    jmin = sum(c * st.jmin for st, c, _ in pieces)
    return jmin + s0, np.asarray(g, dtype=np.float64), outside
