"""The "compat" series' negative-coefficient sum at large sigma and q near 1/2.

There its terms decay only like a power of the index up to i ~ sigma, so the series ran to
its 4e6-term cap (about 1 s per fractional order, a fuzz finding: the accountant's order
search took minutes) and returned its partial sum.  After 16384 terms the kernel now adds a
certified upper bound on the rest (convexity of the completely monotone terms, see
csrc/dpb_rdp_poisson.c).  The reference is the sum's defining integral, evaluated by mpmath:

    N = (1-q)^a E[h(r) 1{r<1}] + q^a E[(mu1/mu0)^a h(1/r) 1{r>1}],
    h(x) = sum over k with C(a,k) < 0 of |C(a,k)| x^k   (closed form from (1 +- x)^a),

with r the likelihood ratio q mu1 / ((1-q) mu0) and the expectations over N(0, sigma^2) --
an evaluation that shares nothing with the kernel's term-by-term sum.
"""
from __future__ import annotations

import mpmath as mp
import pytest

import dpbounds
from dpbounds import _ufuncs


def _neg_h(a: mp.mpf, x: mp.mpf) -> mp.mpf:
    fa = int(mp.floor(a))
    x = min(x, mp.mpf(1))   # at the split point itself, rounding may put r a hair above 1
    if x < mp.mpf("0.75"):  # the series itself converges geometrically here (no cancellation)
        return mp.nsum(lambda m: abs(mp.binomial(a, fa + 2 * m)) * x ** (fa + 2 * m), [1, mp.inf])
    # Q = sum_{k>fa} |C(a,k)| x^k, P = sum_{k>fa} C(a,k) x^k; the negative part is (Q - P)/2
    tp = mp.fsum(mp.binomial(a, k) * x ** k for k in range(fa + 1))
    tm = mp.fsum(mp.binomial(a, k) * (-x) ** k for k in range(fa + 1))
    p = (1 + x) ** a - tp
    qq = (-1) ** (fa + 1) * ((1 - x) ** a - tm)
    return (qq - p) / 2


def o_negseries_log(a: float, sigma: float, q: float) -> mp.mpf:
    """log of the negative-coefficient sum by its defining integral (50 digits)."""
    # working digits: 50 + the cancellation of (1 + x)^a against its first terms (x >= 0.75)
    with mp.workdps(80 + int(a)):
        a_, s, q_ = mp.mpf(a), mp.mpf(sigma), mp.mpf(q)
        lr1 = mp.log((1 - q_) / q_)
        u0 = (s ** 2 * lr1 + mp.mpf(1) / 2) / s          # the split point z0 / sigma

        def lr(u: mp.mpf) -> mp.mpf:                     # log r at z = sigma u
            return -lr1 + (2 * s * u - 1) / (2 * s ** 2)

        def f0(u: mp.mpf) -> mp.mpf:
            return mp.npdf(u) * (1 - q_) ** a_ * _neg_h(a_, mp.exp(lr(u)))

        def f1(u: mp.mpf) -> mp.mpf:
            return mp.npdf(u) * q_ ** a_ * mp.exp(a_ * (2 * s * u - 1) / (2 * s ** 2)) * _neg_h(a_, mp.exp(-lr(u)))

        lo, hi = mp.mpf(-60), mp.mpf(60)                 # outside, the Gaussian weight is < e^-1800
        tot = mp.mpf(0)
        for f, a0, b0 in ((f0, lo, min(u0, hi)), (f1, max(u0, lo), hi)):
            if a0 < b0:
                pts = [a0] + [mp.mpf(p) for p in (-8, 0, 8) if a0 < p < b0] + [b0]
                tot += mp.quad(f, pts)
        return mp.log(tot)


# The grid measured so far (q = 0.5 +- 1e-3, 0.1, 0.9 and the orders 2.5, 10.5, 100.5 are
# not in it: at q = 0.501 a power-law tail shortcut instead of the certified tail is off by up
# to +9.8e-10 (sigma = 1e8) and -1.4e-11 (sigma = 1e3) -- open)
SIGMAS = [1e3, 1e5, 1e8, 2.0 ** 53 - 1]
QS = [0.5, 0.5 + 1e-6, 0.5 - 1e-6]
ORDERS = [1.5]
# ~1 s each: one in the fast suite (the slow grid below holds them all)
FAST = [(2.0 ** 53 - 1, 0.5, 1.5), pytest.param(1e8, 0.5 + 1e-6, 1.5, marks=pytest.mark.slow),
        pytest.param(1e5, 0.5, 2.5, marks=pytest.mark.slow)]


def _check(a: float, sigma: float, q: float) -> None:
    got = float(_ufuncs.rdp_poisson_negseries_log(a, sigma, q))
    ref = o_negseries_log(a, sigma, q)
    err = got - float(ref)  # log scale: an absolute error is the relative error of the sum
    # 1e-10: the documented accuracy of the compat series.  The tail is bounded from above, so
    # the sum must not fall below the reference by more than the rounding of the ~16000 terms
    # summed one by one before it (measured down to -8.9e-15 in log; 1e-13 allowed): an
    # approximated tail that falls short, such as a cut-off partial sum (-1.2e-10 at
    # sigma = 2^53 - 1, q = 1/2, a = 1.5), fails here
    assert abs(err) < 1e-10, (a, sigma, q, got, ref)
    assert err >= -1e-13, (a, sigma, q, got, ref)


@pytest.mark.parametrize("sigma,q,a", FAST)
def test_negseries_hard_points_fast(sigma, q, a):
    _check(a, sigma, q)


@pytest.mark.slow
@pytest.mark.parametrize("sigma", SIGMAS)
@pytest.mark.parametrize("q", QS)
@pytest.mark.parametrize("a", ORDERS)
def test_negseries_hard_points(sigma, q, a):
    _check(a, sigma, q)


@pytest.mark.slow  # ~2 s
def test_fuzz_accountant_compat_half_completes():
    # the fuzz input: ~100 fractional orders at sigma = 2^53 - 1, q = 1/2 (minutes before)
    s, q = 2.0 ** 53 - 1, 0.5
    acc = dpbounds.rdp.RDPAccountant(None, "improved", 1e4).compose(
        dpbounds.rdp.PoissonGaussian(s, q, mode="compat"), 1)
    # independent: at epsilon = 0 the pair's hockey-stick divergence is the total variation
    # q (2 Phi(1/(2 sigma)) - 1) ~ 2e-17, below both deltas, so epsilon(delta) is exactly 0
    tv = q * float(mp.erf(1 / (2 * mp.sqrt(2) * mp.mpf(s))))
    assert tv < 1e-16
    assert acc.get_epsilon(1 - 1e-15) == 0.0
    assert acc.get_epsilon(1e-5) == 0.0
    # the curve itself: integer orders below the (unsubsampled) Gaussian's alpha / (2 sigma^2);
    # a fractional order is log(1 + (A_a - 1) + 2 N)/(a - 1), checked with N from mpmath (the
    # |C| series' artefact: it stays ~1e-2 however large sigma is)
    for alpha in (2.0, 3.0):
        assert acc.rdp(alpha) <= alpha / (2 * s * s) * (1 + 1e-12)
    a = 2.5
    lam = float(_ufuncs.rdp_poisson_quad_log(a, s, q))
    with mp.workdps(50):
        ref = mp.log1p(mp.exp(lam) + 2 * mp.exp(o_negseries_log(a, s, q))) / (a - 1)
    assert abs(acc.rdp(a) - float(ref)) <= 1e-10 * float(ref)
    assert acc.rdp(a) >= float(_ufuncs.rdp_poisson_gaussian_exact(a, s, q))

