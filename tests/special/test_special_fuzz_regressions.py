"""Regression tests for what the fuzz harnesses (fuzz/, docs/fuzzing.md) found in the Theorem 3.1
kernels (delta_bound, rounds_required, the terms).

Each test replays the input a harness reported, in plain pytest (no atheris), and checks the
contract that input broke; a test's comment names the harness that found it where the record says
which one did. Findings that are not fixed yet are ``xfail(strict=True)`` with the reason and the
owner, so that the fix turns them into passing tests (and the strict mark makes the run fail until
the ``xfail`` is removed).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import dpbounds


def test_delta_bound_empty_broadcast_still_checks_rounds():
    # fuzz_special: an empty sigma next to rounds = NaN is refused, as by every other validated
    # function (an empty broadcast has no status to read: the arguments are checked themselves)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^rounds must be an integer >= 3"):
        dpbounds.delta_bound(np.empty((0, 0, 0)), np.nan, "simplified")
    with pytest.raises(dpbounds.DPBoundsError, match=r"^rounds must be an integer >= 3"):
        dpbounds.theorem31(np.empty((0,)), np.nan)
    out = dpbounds.delta_bound(np.empty((0, 3)), 1000)
    assert out.shape == (0, 3)


def test_rounds_required_underflowed_per_epoch_delta_is_inf_not_nan():
    # fuzz_bounds: at epochs=2 the per-epoch delta 1 - (1 - 5e-324)^(1/2) underflows to 0, outside
    # the kernel's (0, 1).  No M reaches a delta below the smallest double (delta_min >= T6 > 1e-17
    # for M <= 2**53): the answer is inf, not NaN.
    assert dpbounds.per_epoch_delta(5e-324, 2) == 0.0
    for s, vat in ((1e-200, "target"), (1.0, "delta_min"), (3.0, "target")):
        assert dpbounds.rounds_required(s, 5e-324, "simplified", vat, epochs=2) == math.inf
        assert dpbounds.rounds_required(s, 5e-324, "simplified", vat) == math.inf   # one epoch
        got = dpbounds.rounds_required(np.array([s, s]), np.array([5e-324, 0.01]), "simplified", vat, epochs=2)
        assert got[0] == math.inf
        assert got[1] == dpbounds.rounds_required(s, 0.01, "simplified", vat, epochs=2)


# fuzz_bounds, fuzz_tradeoff: no IEEE flag where two arguments are extreme at once
# (tests/contract/test_fp_flags.py probes every pair).  At sigma = 1.8e308 the exact coefficient
# sqrt(8/pi) sigma overflows, yet the term T1 = 2 B coef mu it feeds is right from sigma ~ 1e151
# on (tests below, against mpmath).
def test_delta_bound_at_huge_sigma_and_rounds_raises_no_flag():
    with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
        d, st = dpbounds.ufuncs._delta_bound_checked_exact(1.7976931348623157e308, 1e15)
    assert np.isnan(d) and st != 0


@pytest.mark.parametrize("sigma", [1e10, 1e50, 1e150, 1e155])
@pytest.mark.parametrize("rounds", [3.0, 1e15, 1e300])
def test_theorem31_terms_at_huge_sigma_vs_mpmath(sigma, rounds):
    import mpmath as mp
    import oracle
    dps = 60 + int(4 * math.log10(sigma))   # the closed form of rho3 cancels ~4 log10(sigma) digits
    old, oracle.DPS = oracle.DPS, dps
    try:
        want = oracle.t31_terms(sigma, rounds, "exact")
    finally:
        oracle.DPS = old
    got = dpbounds.ufuncs.delta_terms_exact(sigma, rounds)
    for g, w in zip(got, want):
        # T4, T5 underflow (mu^3 < 1e-300): absolute
        assert abs(mp.mpf(float(g)) - w) <= 1e-15 * w + 1e-300, (sigma, rounds, got, want)


@pytest.mark.parametrize("sigma", [1e200, 1e300, 1.7976931348623157e308])
def test_theorem31_t1_at_huge_sigma_is_its_limit(sigma):
    # beyond 1e150, coef_exact mu = sqrt(8/pi) sigma / (sigma sqrt(M - 1)) to 1e-300 relative
    import mpmath as mp
    with mp.workdps(40):
        want = 2 * mp.mpf("0.4748") * mp.sqrt(8 / mp.pi) / mp.sqrt(mp.mpf(1e15) - 1)
    with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
        got = dpbounds.ufuncs.delta_terms_exact(sigma, 1e15)[0]
    assert got == pytest.approx(float(want), rel=1e-15)
