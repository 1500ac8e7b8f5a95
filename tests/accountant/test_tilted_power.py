"""The tilted FFT composition's round-off bounds (accountant/_tilted_power.py) against exact arithmetic.

References: the DFT summed directly in extended precision (numpy longdouble, 64-bit mantissa)
for the per-coefficient FFT bound, and convolution powers of nonnegative PMFs computed by
direct convolution in longdouble -- every product and sum of nonnegative terms is then
accurate to a few units of 2^-64 relative, down to the smallest masses -- for the tail sums.
"""
import math

import numpy as np
import pytest

from dpbounds.accountant._tilted_power import TailSums, TiltFamily, compose_tilted, fft_error_level

LD = np.longdouble


def _trig(n):
    """cos and sin of 2 pi m / n, m = 0 .. n - 1, in longdouble."""
    ang = (2 * np.pi * np.arange(n).astype(LD)) / LD(n)
    return np.cos(ang), np.sin(ang)


def _exact_dft(x):
    """sum_j x_j e^{-2 pi i j k / n}, k = 0 .. n // 2, in longdouble (phases reduced exactly mod n)."""
    n = x.size
    c, s = _trig(n)
    jk = np.outer(np.arange(n // 2 + 1), np.arange(n)) % n
    xl = x.astype(LD)
    return (c[jk] * xl).sum(axis=1), -(s[jk] * xl).sum(axis=1)


def _inputs(n, rng):
    ramp = np.exp(-0.05 * np.arange(n))
    sparse = np.zeros(n)
    sparse[:: max(n // 7, 1)] = 1.0
    for x in (rng.random(n), rng.random(n) ** 8, np.ones(n), ramp, ramp[::-1].copy(), sparse,
              np.eye(1, n, 0).ravel(), np.eye(1, n, n - 1).ravel()):
        yield x / x.sum()


@pytest.mark.parametrize("n", [16, 100, 360, 1024, pytest.param(1536, marks=pytest.mark.slow),
                               pytest.param(2025, marks=pytest.mark.slow)])
def test_fft_per_coefficient_bound(n, rng):
    # the claim: every rfft coefficient within fft_error_level(n) * ||x||_1 of the exact DFT
    worst = 0.0
    for x in _inputs(n, rng):
        re, im = _exact_dft(x)
        f = np.fft.rfft(x)
        err = np.abs((f.real.astype(LD) - re) + 1j * (f.imag.astype(LD) - im)).astype(float)
        worst = max(worst, float(err.max()) / (fft_error_level(n) * float(np.abs(x).sum())))
    assert worst <= 1.0


@pytest.mark.parametrize("n", [100, 360, pytest.param(1536, marks=pytest.mark.slow)])
def test_inverse_fft_per_entry_bound(n, rng):
    # irfft: every entry within fft_error_level(n) * (full-spectrum l1 norm) / n of the exact inverse
    for x in _inputs(n, rng):
        spec = np.fft.rfft(x)
        g = np.fft.irfft(spec, n)
        # exact inverse of the (rounded) spectrum, in longdouble
        k = np.arange(n // 2 + 1)
        w = np.full(k.size, 2.0)
        w[0] = 1.0
        if n % 2 == 0:
            w[-1] = 1.0
        jk = np.outer(np.arange(n), k) % n
        c, si = _trig(n)
        exact = ((c[jk] * spec.real.astype(LD) - si[jk] * spec.imag.astype(LD)) * w).sum(axis=1) / n
        err = float(np.abs(g.astype(LD) - exact).max())
        l1 = float((w * np.abs(spec)).sum())
        assert err <= fft_error_level(n) * l1 / n + 2 * 2.0 ** -53 * float(np.abs(g).max()), (err, l1)


def _power_ld(p, e):
    r, b = None, p.astype(LD)
    while e:
        if e & 1:
            r = b if r is None else np.convolve(r, b)
        e >>= 1
        if e:
            b = np.convolve(b, b)
    return r


def _exact_composition(parts):
    """(lattice index of out[0], composed masses in longdouble) by direct convolution."""
    out, j0 = None, 0
    for j, p, e in parts:
        g = _power_ld(p, e)
        out = g if out is None else np.convolve(out, g)
        j0 += e * j
    return j0, out


def _exact_tails(ex, h):
    """Tail sums and e^{-h}-discounted tail sums of the exact masses (longdouble recursions)."""
    a = np.cumsum(ex[::-1])[::-1]
    d = np.empty_like(ex)
    acc, r = LD(0), np.exp(-LD(h))
    for i in range(ex.size - 1, -1, -1):
        acc = ex[i] + r * acc
        d[i] = acc
    return a, d


def _check_tails(parts, theta, h=0.01):
    j0, ex = _exact_composition(parts)
    c = compose_tilted(parts, theta, 1e-11, 2 ** 22)
    ts = TailSums(c, h)
    ex_a, ex_d = _exact_tails(ex, h)
    worst = 0.0
    for k in range(ts.kmin, ts.n):
        i = c.j0 + k - j0  # index into the exact array
        xa, xd = (ex_a[i], ex_d[i]) if 0 <= i < ex.size else (LD(0), LD(0))
        a, ea = ts.bound(k, False)
        d, ed = ts.bound(k, True)
        assert abs(LD(a) - xa) <= LD(ea), (k, a, float(xa), ea)
        assert abs(LD(d) - xd) <= LD(ed), (k, d, float(xd), ed)
        worst = max(worst, float(abs(LD(a) - xa)) / ea)
    return c, ts, worst


@pytest.mark.parametrize("seed", range(6))
def test_tail_sums_within_their_bounds(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    p = rng.random(n) ** 3
    p /= p.sum() * 1.0000001  # a sub-probability, as the lattice PMFs are
    e = int(rng.integers(20, 150))
    parts = [(int(rng.integers(-30, 5)), p, e)]
    if seed % 2:  # a second segment (a heterogeneous history)
        p2 = rng.random(n // 2 + 3) ** 2
        parts.append((int(rng.integers(-5, 5)), p2 / p2.sum(), int(rng.integers(5, 100))))
    fam = TiltFamily(parts)
    j0, ex = _exact_composition(parts)
    tail = np.cumsum(ex[::-1])[::-1].astype(float)
    for q_level in (0.5, 1e-2, 1e-8, 1e-25):
        k_t = int(np.searchsorted(-tail, -q_level * tail[0])) - 1
        target = j0 + max(k_t, 0)
        for frac in (1.0, 0.5, 0.0):
            theta = frac * fam.saddle(target, 5.0)
            _check_tails(parts, theta)


def test_tilt_makes_the_tail_bound_relative():
    # a 1e-12 tail of 300 steps: untilted, the bound is absolute (about the largest mass times
    # the round-off); tilted at the tail's saddle point it is ~1e-10 of the tail itself
    rng = np.random.default_rng(7)
    p = rng.random(30) ** 2
    p /= p.sum()
    parts = [(0, p, 200)]
    j0, ex = _exact_composition(parts)
    tail = np.cumsum(ex[::-1])[::-1].astype(float)
    k_t = int(np.searchsorted(-tail, -1e-12)) - 1
    fam = TiltFamily(parts)
    rel = {}
    for name, theta in (("untilted", 0.0), ("tilted", fam.saddle(j0 + k_t, 5.0))):
        c, ts, worst = _check_tails(parts, theta)
        a, ea = ts.bound(j0 + k_t - c.j0, False)
        rel[name] = ea / float(tail[k_t])
        assert worst <= 1.0
    assert rel["tilted"] <= 1e-9 < rel["untilted"], rel


def test_window_holds_the_law_and_aliasing_is_charged():
    # a heavy right tail (rare large values, as a subsampled step's loss): the window does not
    # hold the tilted law's far tail, which wraps around; the bounds must still hold everywhere
    p = np.zeros(150)
    p[:5] = [0.2, 0.3, 0.3, 0.1, 0.099]
    p[50:150] = 0.001 * np.exp(-0.05 * np.arange(100)) / np.exp(-0.05 * np.arange(100)).sum()
    parts = [(0, p, 60)]
    fam = TiltFamily(parts)
    j0, ex = _exact_composition(parts)
    tail = np.cumsum(ex[::-1])[::-1].astype(float)
    k_t = int(np.searchsorted(-tail, -1e-9 * tail[0])) - 1
    for frac in (1.0, 0.5, 0.25, 0.0):
        c, ts, worst = _check_tails(parts, frac * fam.saddle(j0 + k_t, 5.0))
        assert c.g.size < ex.size or frac == 0.0 or math.isfinite(worst)


@pytest.mark.parametrize("n", [0, 1, 2, 17, 5000])
def test_compiled_tail_sums_against_longdouble(n, rng):
    # the claim (dpb_tail_sums): a is np.cumsum(u[::-1])[::-1] bit for bit, d within gamma_{2n}
    # of the recurrence d[i] = u[i] + r d[i + 1] in exact arithmetic (relative to the sum of the
    # |terms|); signed entries (the FFT's round-off leaves some) and both ends of r included
    from dpbounds._kernels import tail_sums

    u = rng.standard_normal(n) * np.exp(rng.uniform(-30.0, 0.0, n))
    for r in (math.exp(-1e-4), math.exp(-0.7), 1.0, 0.0):
        a, d = tail_sums(u, r)
        assert np.array_equal(a, np.cumsum(u[::-1])[::-1]) and a.size == d.size == n
        ex = np.empty(n, dtype=LD)
        mag = np.empty(n, dtype=LD)
        acc = m = LD(0)
        for i in range(n - 1, -1, -1):
            acc = LD(u[i]) + LD(r) * acc
            m = abs(LD(u[i])) + LD(r) * m
            ex[i], mag[i] = acc, m
        gamma = 2 * n * 2.0 ** -53 / (1 - 2 * n * 2.0 ** -53)
        assert np.all(np.abs(d.astype(LD) - ex) <= LD(gamma) * mag), r
        a_only, d_none = tail_sums(u, r, True, False)
        a_none, d_only = tail_sums(u, r, False, True)
        assert np.array_equal(a_only, a) and np.array_equal(d_only, d) and d_none.size == a_none.size == 0
