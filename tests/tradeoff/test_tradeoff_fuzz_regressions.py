"""Regression tests for what the fuzz harnesses (fuzz/, docs/fuzzing.md) found in the trade-off curves,
mu-GDP and TradeoffCurve.

Each test replays the input a harness reported, in plain pytest (no atheris), and checks the
contract that input broke; a test's comment names the harness that found it where the record says
which one did. Findings that are not fixed yet are ``xfail(strict=True)`` with the reason and the
owner, so that the fix turns them into passing tests (and the strict mark makes the run fail until
the ``xfail`` is removed).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpbounds


def test_tradeoff_clt_names_a_sigma_beyond_the_doubles():
    # a Python int beyond the double range is named, never numpy's OverflowError (the arguments
    # are checked in order, so a bad a is named first)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^sigma\b"):
        dpbounds.tradeoff_clt(np.array([0.5]), 10**400, 3.0)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^a\b"):
        dpbounds.tradeoff_clt(np.array([np.nan]), 10**400, 3.0)


def test_gdp_delta_monotone_to_its_stated_accuracy():
    # fuzz_tradeoff: gdp_delta at eps = 1e-4 and at eps 135 ulps above it (true delta 0.06 ulp
    # lower) may differ by more than 4 ulps in the wrong direction, within the docstring's
    # relative error (<= 1e-13 for mu >= 0.1): the harness allows that, and this test holds the
    # kernel to the claim.
    import mpmath as mp
    mp.mp.dps = 50
    eps = np.array([0.0001, 0.00010000000000000183])
    mu = 0.3
    got = dpbounds.gdp_delta(eps, mu)
    M = mp.mpf(mu)
    want = [mp.ncdf(-mp.mpf(e) / M + M / 2) - mp.exp(mp.mpf(e)) * mp.ncdf(-mp.mpf(e) / M - M / 2) for e in eps]
    assert want[1] < want[0]
    for g, w in zip(got, want):
        assert abs(mp.mpf(g) - w) <= 1e-13 * w
    assert got[1] <= got[0] * (1 + 2.5e-13)


# fuzz_tradeoff: a curve whose f is the smallest normal double at a = 0 and 1e-300 symmetrizes
# to a symmetric curve.  The hull's cross product (2.2e-308 * 1e-300) underflows to 0 there; the
# orientation's sign is exact where a product underflows, so the strict turn at (2.2e-308, 0)
# keeps its vertex.
def test_symmetrize_of_a_near_zero_curve_is_symmetric():
    c = dpbounds.TradeoffCurve(np.array([0.0, 1e-300, 1.0]),
                               np.array([2.2250738585072014e-308, 2.2250738585072014e-308, 0.0]))
    s = c.symmetrize()
    assert s.is_convex()
    assert s.is_symmetric(1e-9)
    # by hand: min(f, f^-1) is 2.2e-308 at 0 and 0 from a = 2.2e-308 on (f^-1(b) = 0 for
    # b >= 2.2e-308); its convex minorant is the two segments through (2.2e-308, 0)
    assert s.a.tolist() == [0.0, 2.2250738585072014e-308, 1.0]
    assert s.f.tolist() == [2.2250738585072014e-308, 0.0, 0.0]


def test_tradeoff_curve_epsilon_at_a_subnormal_vertex():
    # fuzz_tradeoff (seed 3): at a vertex a = 5e-324 the quotient (1 - f - delta)/a of
    # TradeoffCurve.epsilon overflows; the answer is the finite log(0.5/5e-324) ~ 743.7, without
    # a RuntimeWarning
    import mpmath as mp

    c = dpbounds.TradeoffCurve(np.array([0.0, 5e-324, 1.0]), np.array([1.0, 0.5, 0.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eps = c.epsilon(0.0)
    want = mp.log(mp.mpf(0.5) / mp.mpf(5e-324))
    assert abs(mp.mpf(eps) - want) <= 4 * np.spacing(float(want))
    # and delta at that epsilon (above 700, where e^eps overflows but e^eps a does not) is 0:
    # delta(epsilon(d)) <= d holds there too
    assert c.delta(eps) == 0.0 and c.delta(701.0) == 0.5
    # an ordinary vertex keeps the quotient's log, bit for bit
    d = dpbounds.TradeoffCurve(np.array([0.0, 0.25, 1.0]), np.array([1.0, 0.5, 0.0]))
    assert d.epsilon(0.0) == np.log(0.5 / 0.25)


# gdp_epsilon at mu = 2.2e-308, where delta(0) ~ 8.9e-309 exceeds the target
# 5e-324, is the positive eps that meets it (the small-mu form solves for eps/mu), with no flag
def test_gdp_epsilon_at_a_subnormal_mu_is_sufficient():
    eps = dpbounds.gdp_epsilon(5e-324, 2.2250738585072014e-308)
    assert eps > 0 and dpbounds.gdp_delta(eps, 2.2250738585072014e-308) <= 5e-324


# The small-mu form of gdp_delta at z = eps/mu ~ 1e119: the Taylor correction's P_1 = -q h
# underflows, so the correction, O(h^2), is skipped below h = 1e-9 (never 0/0).
# log delta ~ log mu - z^2/2 - log sqrt(2 pi) - 2 log z + eps/2 there.
@pytest.mark.parametrize("eps, mu", [(0.1026839629462507, 7.152309831353345e-121),
                                     (0.41046224785626617, 9.739953491276525e-111)])
def test_gdp_log_delta_at_huge_eps_over_mu_is_finite(eps, mu):
    with np.errstate(all="raise", under="ignore"):
        got = dpbounds.ufuncs.gdp_log_delta(eps, mu)
        assert dpbounds.gdp_delta(eps, mu) == 0.0
    z = eps / mu
    want = math.log(mu) - 0.5 * z * z - 0.5 * math.log(2 * math.pi) - 2 * math.log(z) + 0.5 * eps
    assert got == pytest.approx(want, rel=1e-15)


# fuzz_special (seed 3): edgeworth_status names the parameters whose shapes do not broadcast,
# like every validated function, never numpy's ValueError
def test_edgeworth_status_names_shapes_that_do_not_broadcast():
    with pytest.raises(dpbounds.DPBoundsError, match=r"^shapes do not broadcast together: a\(2, 0\), sigma\(2, 0\), rounds\(0, 3\)"):
        dpbounds.edgeworth_status(np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((0, 3)))
    assert dpbounds.edgeworth_status(0.1, 1.0, 1000) == 0


# edgeworth_status sets the bad-input bit at a fractional number of rounds, where
# tradeoff_edgeworth is NaN (its declared domain: an integer >= 3)
def test_edgeworth_status_is_bad_input_at_fractional_rounds():
    assert dpbounds.edgeworth_status(0.03, 0.9311351969305441, 4.626820680102791) == 1
    assert np.isnan(dpbounds.ufuncs.tradeoff_edgeworth(0.03, 0.9311351969305441, 4.626820680102791))


@given(st.floats(0.0, 1.0), st.floats(0.05, 5.0), st.one_of(st.integers(3, 10**6).map(float),
                                                           st.floats(3.0, 1e6)))
@settings(max_examples=150, deadline=None)
def test_edgeworth_nan_exactly_where_its_status_says(a, sigma, rounds):
    # the curve is NaN exactly where the status has a bit set, and the status explains every NaN
    with np.errstate(all="raise", under="ignore"):
        f = dpbounds.ufuncs.tradeoff_edgeworth(a, sigma, rounds)
        st_ = dpbounds.ufuncs.edgeworth_status(a, sigma, rounds)
    assert bool(np.isnan(f)) == (st_ != 0), (a, sigma, rounds, f, st_)


# gdp_delta at a tiny mu and a slightly negative eps, e.g. (-2.2e-308, 1e-200),
# is at least gdp_delta(0, 1e-200) = 4e-201: the small-mu form covers eps down to
# -min(1/2, 30 mu).  References: mpmath at 260 digits.
@pytest.mark.parametrize("mu", [1e-200, 1e-5, 0.01])
@pytest.mark.parametrize("z", [-2.2e-108, -0.5, -5.0, -29.9])
def test_gdp_delta_small_mu_negative_eps_vs_mpmath(mu, z):
    import mpmath as mp

    eps = z * mu
    with mp.workdps(60 + int(-math.log10(mu))):
        e, m = mp.mpf(eps), mp.mpf(mu)
        ref = mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)
    with np.errstate(all="raise", under="ignore"):
        got = dpbounds.gdp_delta(eps, mu)
    assert abs(mp.mpf(got) - ref) <= 1e-13 * ref
    assert dpbounds.gdp_delta(-2.2250738585072014e-308, 1e-200) >= dpbounds.gdp_delta(0.0, 1e-200)


# the fuzz gate (fuzz/FINDINGS.md): gdp_delta at a slightly negative eps with a tiny mu (z = eps/mu < -30, outside the
# small-mu form) must not cancel: Phi(u) - e^eps Phi(v) is computed as -expm1(eps) Phi(v) plus
# Phi(-v) - Phi(-u), both >= 0, and meets the documented accuracy down to eps = -2.2e-308, mu = 5e-324
# (true delta ~ -expm1(eps)) with no floating-point flag.  References: mpmath.
@pytest.mark.parametrize("eps, mu", [(-2.2250738585072014e-308, 5e-324), (-4.280259055276949e-147, 1e-323),
                                     (-1e-15, 1e-300), (-1e-5, 1e-10), (-0.31, 0.01), (-0.45, 1e-3),
                                     (-0.05, 0.3), (-0.6, 0.5), (-2.0, 3.0)])
def test_gdp_delta_slightly_negative_eps_vs_mpmath(eps, mu):
    import mpmath as mp

    with mp.workdps(60 + int(-math.log10(abs(eps)))):
        e, m = mp.mpf(eps), mp.mpf(mu)
        ref = mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)
        log_ref = mp.log(ref)
    with np.errstate(all="raise", under="ignore"):
        got = dpbounds.gdp_delta(eps, mu)
        log_got = dpbounds.ufuncs.gdp_log_delta(eps, mu)
    # the documented accuracy: relative <= 1e-13 for mu <= 0.01 (z < -30 here), and
    # 1e-13 max(1, |u|/mu) above; below delta = 1e-300 the last exp loses a few more digits
    u = 0.5 * mu - eps / mu
    scale = 1.0 if mu <= 0.01 else max(1.0, abs(u) / mu)
    tol = 1e-13 * scale if ref >= mp.mpf("1e-300") else 1e-6
    assert abs(mp.mpf(got) - ref) <= tol * ref, (got, ref)
    assert abs(mp.mpf(log_got) - log_ref) <= 1e-15 * abs(log_ref) * scale + 1e-15, (log_got, log_ref)
