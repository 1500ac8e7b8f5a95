"""Hypothesis properties of the core kernels."""
import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

import dpbounds
from dpbounds import ufuncs

finite_x = st.floats(-37.0, 8.0, allow_nan=False)
probs = st.floats(1e-300, 1 - 2**-53, allow_nan=False)
sigmas = st.floats(0.3, 50.0, allow_nan=False)
rounds = st.integers(3, 10**15).map(float)
kinds = st.sampled_from([0, 1])


@given(finite_x)
def test_ndtr_symmetry(x):
    # Phi(-x) = 1 - Phi(x); Phi(x) > 0.5 carries an absolute rounding of <= 4 ulp(1)
    assert abs(dpbounds.ndtr(-x) - (1 - dpbounds.ndtr(x))) <= 4 * 2.0**-53 + 1e-15 * dpbounds.ndtr(-x)


@given(st.floats(-37.0, 0.0, allow_nan=False))
def test_ndtri_ndtr_round_trip(x):
    # error allowed: the inversion's own 1e-14 relative plus the conditioning of the
    # rounded p (half an ulp of p, divided by the density)
    p = dpbounds.ndtr(x)
    assume(p > 0)
    cond = np.spacing(p) / dpbounds.normal_pdf(x)
    assert abs(dpbounds.ndtri(p) - x) <= 1e-14 * abs(x) + cond


@given(probs)
def test_ndtr_ndtri_round_trip(p):
    assert abs(dpbounds.ndtr(dpbounds.ndtri(p)) / p - 1) <= 1e-13 * max(1, abs(dpbounds.ndtri(p)))


@given(probs)
def test_ndtri_complement_is_exact_negation(p):
    assert dpbounds.ndtri_complement(p) == -dpbounds.ndtri(p)


@given(st.floats(-1e4, 8.0, allow_nan=False), st.floats(-1e4, 8.0, allow_nan=False))
def test_log_ndtr_monotone(a, b):
    lo, hi = min(a, b), max(a, b)
    assert dpbounds.log_ndtr(lo) <= dpbounds.log_ndtr(hi)


@given(sigmas, rounds, kinds)
def test_delta_min_decreasing_in_rounds(s, m, k):
    f = ufuncs.delta_min_exact if k else ufuncs.delta_min_simplified
    assert f(s, m + 1) <= f(s, m)
    assert f(s, 2 * m) < f(s, m)


@given(sigmas, rounds)
def test_coef_simplified_dominates_exact(s, m):
    assert ufuncs.coef_simplified(s) >= ufuncs.coef_exact(s)
    assert ufuncs.delta_min_simplified(s, m) >= ufuncs.delta_min_exact(s, m)


@given(st.floats(0.3, 0.99, allow_nan=False), rounds, kinds)
def test_delta_min_decreasing_in_sigma_below_one(s, m, k):
    # coef(sigma) mu(sigma) falls with sigma on the small-sigma branch (sigma < 1)
    f = ufuncs.delta_min_exact if k else ufuncs.delta_min_simplified
    assert f(s * 1.01, m) <= f(s, m)


@given(sigmas, rounds, kinds)
def test_validity_is_monotone_in_rounds(s, m, k):
    # once Theorem 3.1 applies at M it applies at every larger M (what the M_exact search relies on)
    if (ufuncs.theorem31_status_exact if k else ufuncs.theorem31_status_simplified)(s, m, np.nan) == 0:
        assert (ufuncs.theorem31_status_exact if k else ufuncs.theorem31_status_simplified)(s, 2 * m, np.nan) == 0
        assert (ufuncs.theorem31_status_exact if k else ufuncs.theorem31_status_simplified)(s, m + 1, np.nan) == 0


@given(st.floats(0.4, 5.0), st.floats(1e-6, 0.3), kinds, st.sampled_from(["delta_min", "target"]))
def test_rounds_required_minimal(s, d, k, mode):
    coefficient = "exact" if k else "simplified"
    m = dpbounds.rounds_required(s, d, coefficient, mode)
    assume(np.isfinite(m))
    target = d if mode == "target" else np.nan
    f = ufuncs.delta_min_exact if k else ufuncs.delta_min_simplified
    assert (ufuncs.theorem31_status_exact if k else ufuncs.theorem31_status_simplified)(s, m, target) == 0 and f(s, m) <= d
    if m > 3:
        assert (ufuncs.theorem31_status_exact if k else ufuncs.theorem31_status_simplified)(s, m - 1, target) != 0 or f(s, m - 1) > d


@given(st.floats(0.4, 5.0), st.floats(1e-6, 0.3), st.floats(1e-6, 0.3))
def test_rounds_required_monotone_in_delta(s, d1, d2):
    lo, hi = min(d1, d2), max(d1, d2)
    assert dpbounds.rounds_required(s, hi) <= dpbounds.rounds_required(s, lo)


@given(st.floats(0, 1), st.integers(1, 10**6))
def test_compose_per_epoch_round_trip(d, e):
    c = dpbounds.compose_delta(d, e)
    assert 0 <= c <= 1 and c >= d
    if 1e-300 < d and c < 0.9:  # the inversion is ill-conditioned as c -> 1
        assert abs(dpbounds.per_epoch_delta(c, e) / d - 1) <= 1e-13
