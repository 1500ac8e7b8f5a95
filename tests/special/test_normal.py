"""Phi, log Phi, Phi^{-1} against the mpmath oracle (claims in csrc/dpb_normal.h)."""
import math

import numpy as np
import oracle
import pytest

import dpbounds
from dpbounds._ufunc_table import by_name  # noqa: E402

# the accuracy the declaration table claims (it feeds the docstrings and docs/accuracy.md)
MAX_ULP = max(by_name(n).accuracy.bound for n in ("ndtr", "log_ndtr", "ndtri", "ndtri_complement"))
assert MAX_ULP == 4.0


def _max_ulp(f, xs, ref):
    got = f(np.asarray(xs, dtype=float))
    errs = np.array([oracle.ulp_error(g, ref(x)) for g, x in zip(got, xs)])
    return errs.max(), xs[int(errs.argmax())]


def _points_ndtr(rng):
    return np.concatenate([
        rng.uniform(-37.5, 8.3, 600),
        -np.logspace(-8, math.log10(37.5), 300),
        np.logspace(-8, math.log10(8.3), 100),
        [-37.5, -37.0, -20.0, -1.0, -1.0 - 2**-52, -0.9999999, 0.0, -0.0, 8.3],
    ])


def test_ndtr_accuracy(rng, record_accuracy):
    xs = _points_ndtr(rng)
    err, at = _max_ulp(dpbounds.ndtr, xs, oracle.ndtr)
    record_accuracy("ndtr", err, "ulp", f"x in [-37.5, 8.3], {xs.size} points")
    assert err <= MAX_ULP, f"ndtr: {err:.2f} ulp at x={at!r}"


def test_ndtr_beats_textbook_formula_in_deep_tail():
    # the erfc(-x/sqrt2)/2 formula loses ~x^2 ulp; ours must stay within MAX_ULP
    xs = np.array([-30.0, -35.0, -37.0, -37.4])
    naive = np.array([0.5 * math.erfc(-x / math.sqrt(2)) for x in xs])
    naive_err = max(oracle.ulp_error(g, oracle.ndtr(x)) for g, x in zip(naive, xs))
    ours = max(oracle.ulp_error(g, oracle.ndtr(x)) for g, x in zip(dpbounds.ndtr(xs), xs))
    assert naive_err > 50 and ours <= MAX_ULP


def test_ndtr_subnormal_range():
    xs = np.linspace(-38.4, -37.5, 60)
    got = dpbounds.ndtr(xs)
    for g, x in zip(got, xs):
        ref = oracle.ndtr(x)
        # subnormal results: within 4 ulp of the value or 4 subnormal spacings
        assert abs(oracle.mp.mpf(g) - ref) <= max(4 * 2.0**-52 * float(ref), 4 * 2.0**-1074), x
    assert dpbounds.ndtr(-41.0) == 0.0


def test_ndtr_edges():
    assert dpbounds.ndtr(-np.inf) == 0.0
    assert dpbounds.ndtr(np.inf) == 1.0
    assert np.isnan(dpbounds.ndtr(np.nan))
    assert dpbounds.ndtr(0.0) == 0.5
    assert dpbounds.ndtr(9.0) == 1.0  # 1 - 1.1e-19 rounds to 1


def test_log_ndtr_accuracy(rng, record_accuracy):
    xs = np.concatenate([
        -np.logspace(-6, 5, 500),
        rng.uniform(-50, 8, 400),
        np.logspace(-6, math.log10(8), 100),
        [-20.0, -20.000000000000004, -19.999999999999996, -1.0, -1.0000000000000002, 0.0],
    ])
    err, at = _max_ulp(dpbounds.log_ndtr, xs, oracle.log_ndtr)
    record_accuracy("log_ndtr", err, "ulp", f"x in [-1e5, 8], {xs.size} points")
    assert err <= MAX_ULP, f"log_ndtr: {err:.2f} ulp at x={at!r}"


def test_log_ndtr_far_tail_and_edges():
    xs = np.array([-1e7, -1e50, -1e150])
    err, at = _max_ulp(dpbounds.log_ndtr, xs, oracle.log_ndtr)
    assert err <= MAX_ULP
    assert dpbounds.log_ndtr(-1e155) == -np.inf
    assert dpbounds.log_ndtr(-np.inf) == -np.inf
    assert dpbounds.log_ndtr(np.inf) == 0.0
    assert np.isnan(dpbounds.log_ndtr(np.nan))
    # tiny positive tail: log Phi(x) ~ -Phi(-x), relative accuracy kept
    assert oracle.ulp_error(dpbounds.log_ndtr(30.0), oracle.log_ndtr(30.0)) <= MAX_ULP


def _points_ndtri(rng):
    return np.concatenate([
        np.logspace(-300, math.log10(0.5), 300),
        rng.uniform(0, 1, 200),
        1 - np.logspace(-16, -0.31, 100),
        [1e-300, 0.075, 0.0749999, 0.25, 0.2499999, 0.5, 0.925, 1 - 2**-53, 1 - 2**-52],
    ])


def test_ndtri_accuracy(rng, record_accuracy):
    ps = _points_ndtri(rng)
    err, at = _max_ulp(dpbounds.ndtri, ps, oracle.ndtri)
    sub, at_sub = _max_ulp(dpbounds.ndtri, SUBNORMAL_P, oracle.ndtri)  # the claim covers subnormal p too
    record_accuracy("ndtri", max(err, sub), "ulp",
                    f"p in [1e-300, 1 - 2**-52], {ps.size} points, and {SUBNORMAL_P.size} subnormal p")
    assert err <= MAX_ULP, f"ndtri: {err:.2f} ulp at p={at!r}"


SUBNORMAL_P = np.array([5e-324, 1e-320, 1e-310, 2.2250738585072014e-308, 1e-307])


def test_ndtri_subnormal_p():
    err, at = _max_ulp(dpbounds.ndtri, SUBNORMAL_P, oracle.ndtri)
    assert err <= MAX_ULP, f"ndtri: {err:.2f} ulp at p={at!r}"


def test_ndtri_edges():
    assert dpbounds.ndtri(0.0) == -np.inf
    assert dpbounds.ndtri(1.0) == np.inf
    assert dpbounds.ndtri(0.5) == 0.0
    for bad in (-1e-300, 1.0000000000000002, -np.inf, np.inf, np.nan):
        assert np.isnan(dpbounds.ndtri(bad))


def test_ndtri_complement_no_cancellation(record_accuracy):
    a = np.array([1e-300, 1e-100, 1e-20, 1e-17, 0.3])
    got = dpbounds.ndtri_complement(a)
    # -g, not -reference: negating the float is exact, negating the mpf rounds at the ambient precision
    errs = [oracle.ulp_error(-g, oracle.ndtri(ai)) for g, ai in zip(got, a)]
    record_accuracy("ndtri_complement", max(errs), "ulp", f"a in [1e-300, 0.3], {a.size} points")
    for e in errs:
        assert e <= MAX_ULP
    assert dpbounds.ndtri_complement(0.0) == np.inf
    assert dpbounds.ndtri_complement(1.0) == -np.inf


def test_normal_pdf(rng, record_accuracy):
    xs = np.concatenate([rng.uniform(-37.5, 37.5, 300), [0.0, 1.0, -37.0]])  # normal (not subnormal) results
    got = dpbounds.normal_pdf(xs)
    with oracle.workdps():
        errs = [oracle.ulp_error(g, oracle.mp.npdf(oracle.mp.mpf(x))) for g, x in zip(got, xs)]
    record_accuracy("normal_pdf", max(errs), "ulp", f"x in [-37.5, 37.5], {xs.size} points")
    for e in errs:
        assert e <= 3
    assert dpbounds.normal_pdf(np.inf) == 0.0
    assert np.isnan(dpbounds.normal_pdf(np.nan))


@pytest.mark.parametrize("x", [0.1, 1.0, 5.0, 20.0, 37.0])
def test_symmetry(x):
    # Phi(-x) = 1 - Phi(x); Phi(x) near 1 carries an absolute rounding of <= 4 ulp(1)
    assert dpbounds.ndtr(-x) == pytest.approx(1 - dpbounds.ndtr(x), rel=1e-15, abs=4 * 2.0**-53)
