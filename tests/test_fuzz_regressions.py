"""Regression tests for what the fuzz harnesses (fuzz/, docs/fuzzing.md) found.

Each test replays the input a harness reported, in plain pytest (no atheris), and checks the
contract that input broke.  Findings that are not fixed yet are ``xfail(strict=True)`` with the
reason and the owner, so that the fix turns them into passing tests (and the strict mark makes
the run fail until the ``xfail`` is removed).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpbounds
from dpbounds import rdp, ufuncs

# ----------------------------------------------------------------------------- the findings
# The validated API reads only real numbers: complex input (whose imaginary part numpy's float
# conversion would drop), strings ("1.5"), None and a Python int beyond the double range are each
# a DPBoundsError naming the parameter.
NOT_REAL = [
    pytest.param(np.array([1.0 + 1.0j]), id="complex-array"),
    pytest.param(np.array([], dtype=np.complex128).reshape(4, 0, 0), id="empty-complex-array"),
    pytest.param("1.5", id="str"),
    pytest.param(b"1", id="bytes"),
    pytest.param(None, id="None"),
    pytest.param(np.array([1.0, None], dtype=object), id="object-with-None"),
    pytest.param(np.array(["2.0"]), id="str-array"),
    pytest.param(10 ** 400, id="int-beyond-double"),
    # a bool is not the number 1
    pytest.param(True, id="bool"),
    pytest.param(np.array([True, False]), id="bool-array"),
]

CALLS = [
    pytest.param(lambda v: dpbounds.delta_bound(v, 1000), "sigma", id="delta_bound"),
    pytest.param(lambda v: dpbounds.rounds_required(v, 0.01, "simplified", "target"), "sigma", id="rounds_required"),
    pytest.param(lambda v: dpbounds.compose_delta(v, 1.0), "delta", id="compose_delta"),
    pytest.param(lambda v: dpbounds.tradeoff_clt(v, 1.0, 100), "a", id="tradeoff_clt"),
    pytest.param(lambda v: dpbounds.tradeoff_clt_slope(0.1, v, 100), "sigma", id="tradeoff_clt_slope"),
    pytest.param(lambda v: dpbounds.edgeworth_status(v, 1.0, 100.0), "a", id="edgeworth_status"),
    pytest.param(lambda v: rdp.gaussian(2.0, v), "sigma", id="rdp.gaussian"),
    pytest.param(lambda v: dpbounds.lognormal_moments(v), "sigma", id="lognormal_moments"),
]


@pytest.mark.parametrize("call, name", CALLS)
@pytest.mark.parametrize("value", NOT_REAL)
def test_non_real_input_is_refused_naming_the_parameter(call, name, value):
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a ComplexWarning would be the old, silent path
        with pytest.raises(dpbounds.DPBoundsError, match=rf"^{name} must be"):
            call(value)


@pytest.mark.parametrize("value", [1.5, np.float32(2.0), np.array([1.0, 2.0]), [1.0, 2], np.array([3], dtype=np.int8),
                                   np.array([1.5, 2], dtype=object)])
def test_real_input_still_accepted(value):
    # what numpy converts exactly to float64 is accepted, with those values
    got = rdp.gaussian(2.0, value)
    want = 2.0 / (2.0 * np.asarray(value, dtype=np.float64) ** 2)
    np.testing.assert_array_equal(got, want)


def test_delta_bound_empty_broadcast_still_checks_rounds():
    # fuzz_special: an empty sigma next to rounds = NaN is refused, as by every other validated
    # function (an empty broadcast has no status to read: the arguments are checked themselves)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^rounds must be an integer >= 3"):
        dpbounds.delta_bound(np.empty((0, 0, 0)), np.nan, "simplified")
    with pytest.raises(dpbounds.DPBoundsError, match=r"^rounds must be an integer >= 3"):
        dpbounds.theorem31(np.empty((0,)), np.nan)
    out = dpbounds.delta_bound(np.empty((0, 3)), 1000)
    assert out.shape == (0, 3)


def test_rdp_delta_at_order_inf_takes_the_total_variation_bound():
    # fuzz_rdp: at order inf the improved delta conversion takes its total-variation bound
    # sqrt(1 - e^{-rdp}) too, as its docstring promises and as at every finite order, so that
    # rdp.delta at rdp.epsilon([1e-100], [inf], 1e-15) meets 1e-15
    for r in (1e-100, 1e-3, 0.01, 2.0):
        tv = math.sqrt(-math.expm1(-r))
        d_inf = rdp.delta([r], [math.inf], 0.0)
        assert d_inf <= tv * (1 + 1e-15), (r, d_inf, tv)
        # a finite order is never better than order inf with the same value at order inf alone
        assert d_inf <= rdp.delta([r], [1e6], 0.0) * (1 + 1e-12)
    eps = rdp.epsilon([1e-100], [math.inf], 1e-15)
    assert rdp.delta([1e-100], [math.inf], eps) <= 1e-15
    # the classic conversion has no such bound: delta(eps < rdp) is 1 there
    assert rdp.delta([0.01], [math.inf], 0.0, "classic") == 1.0
    assert rdp.delta([0.01], [math.inf], 0.02) == 0.0


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


# RDPAccountant.get_delta finds the optimum over orders also when it sits at the top of the order
# range and the total-variation shortcut makes a local minimum near alpha = 1 (it scans the orders
# above its first optimum), so it is never looser than get_epsilon of the same accountant.
@pytest.mark.parametrize("sigma, delta", [(1e6, 1e-30), (9007199254740991.0, 1e-100)])
def test_rdp_accountant_delta_at_its_own_epsilon(sigma, delta):
    acc = rdp.RDPAccountant().compose(rdp.PoissonGaussian(sigma, 1.0), 1)
    eps, order = acc.get_epsilon(delta, return_order=True)
    # the conversion at the order get_epsilon chose already certifies delta: get_delta may not be worse
    assert rdp.delta(acc.rdp([order]), [order], eps) <= delta * (1 + 1e-9)
    assert acc.get_delta(eps) <= delta * (1 + 1e-9)


def _brute_orders(max_order: float) -> np.ndarray:
    # an independent, dense scan: 3000 log-spaced orders and every integer up to 300
    return np.unique(np.concatenate([1.0 + np.geomspace(1e-6, max_order - 1.0, 3000),
                                     np.arange(2.0, 301.0), [max_order]]))


ACCOUNTANTS = [
    pytest.param(lambda: rdp.RDPAccountant().compose(rdp.PoissonGaussian(1e6, 1.0), 1), id="PG(1e6,1)"),
    pytest.param(lambda: rdp.RDPAccountant(max_order=300).compose(rdp.PoissonGaussian(3e3, 1.0), 1), id="PG(3e3,1)-max300"),
    pytest.param(lambda: rdp.RDPAccountant().compose(rdp.PoissonGaussian(1.0, 0.01), 1000), id="PG(1,0.01)x1000"),
    pytest.param(lambda: rdp.RDPAccountant(conversion="classic").compose(rdp.PoissonGaussian(2.0, 0.1), 100),
                 id="PG(2,0.1)x100-classic"),
    pytest.param(lambda: rdp.RDPAccountant().compose(rdp.SubsampledGaussianWOR(1.0, 0.05, bound="theorem9"), 100)
                 .compose(rdp.Gaussian(50.0), 3), id="WOR+Gaussian"),
]


@pytest.mark.parametrize("make", ACCOUNTANTS)
def test_rdp_accountant_conversions_reach_the_global_minimum_over_orders(make):
    # epsilon and delta against a brute-force minimum of the same conversion objective over all orders
    # of the accountant's range, both ways; each answer is the objective at the order it reports (valid)
    acc = make()
    grid = _brute_orders(acc.max_order)
    curve = acc.rdp(grid)
    for delta in (1e-5, 1e-12, 1e-30):
        eps, a = acc.get_epsilon(delta, return_order=True)
        assert eps == pytest.approx(float(rdp.epsilon(acc.rdp([a]), [a], delta, acc.conversion)), rel=1e-12, abs=1e-300)
        brute = float(rdp.epsilon(curve, grid, delta, acc.conversion))   # min over all the orders
        assert eps <= brute + 1e-9 * max(1.0, brute), (delta, eps, brute)
        d, b = acc.get_delta(eps, return_order=True)
        assert d == pytest.approx(float(rdp.delta(acc.rdp([b]), [b], eps, acc.conversion)), rel=1e-12, abs=1e-300)
        assert d <= delta * (1 + 1e-9)          # consistent with get_epsilon
        lbrute = math.log(float(rdp.delta(curve, grid, eps, acc.conversion)))
        assert math.log(d) <= lbrute + 1e-9 * max(1.0, abs(lbrute)), (eps, d, lbrute)
        # and back: epsilon at get_delta's delta is no larger than the epsilon it came from
        assert acc.get_epsilon(d) <= eps * (1 + 1e-9) + 1e-12


# The raw kernels raise no IEEE flag at extreme or NaN arguments where the value they return is
# the right one: the documented contract is "NaN in -> NaN out, silently"
# (tests/test_ufunc_infra.py) and, as scipy.special, no floating-point warnings from the special
# functions.  Each C kernel guards its extreme branch before the operation that would overflow.
FP_FLAGS = [
    pytest.param(lambda: ufuncs.normal_pdf(-4.37086174e307), 0.0, id="normal_pdf-huge-x"),
    pytest.param(lambda: ufuncs.tradeoff_clt_slope(0.0, np.nan, np.nan), math.nan, id="tradeoff_clt_slope-nan"),
    pytest.param(lambda: dpbounds.compose_delta(1.0 - 2.0 ** -53, 4.0183737216871536e307), 1.0,
                 id="compose_delta-huge-epochs"),
    pytest.param(lambda: rdp.laplace(1.7976931348623157e308, 9007199254740994.0), 1.0 / 9007199254740994.0,
                 id="rdp_laplace-huge-alpha"),
]


@pytest.mark.parametrize("call, expected", FP_FLAGS)
def test_no_floating_point_warning(call, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):   # no flag at all, not even underflow
            got = call()
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, rel=1e-15, abs=0.0)


# subsampled_gaussian_wor returns promptly at a tiny sigma (1e-9, any order): the quadrature of the
# Pearson-Vajda moment D^2 would need ~12.5/sigma nodes, in a nogil C loop that Ctrl-C cannot
# interrupt, but the certificate that the Pearson-Vajda entry loses covers D^2 for sigma <= 0.5,
# so no quadrature runs there.  Run in a subprocess with a time limit.
def test_subsampled_gaussian_wor_tiny_sigma_returns():
    import subprocess
    import sys

    code = ("from dpbounds import rdp\n"
            "for s in (1e-6, 1e-9, 1e-100, 1e-300, 5e-324):\n"
            "    for a in (2.5, 3, 64.5, 1000):\n"
            "        rdp.subsampled_gaussian_wor(a, s, 0.5)\n")
    try:
        subprocess.run([sys.executable, "-c", code], timeout=10, check=True, capture_output=True)
    except subprocess.TimeoutExpired:
        pytest.fail("rdp.subsampled_gaussian_wor at tiny sigma did not return within 10 s")


@pytest.mark.parametrize("sigma", [0.5, 0.3, 1e-3, 1e-6, 1e-9, 1e-100, 1e-200, 5e-324])
def test_subsampled_gaussian_wor_improved_is_theorem9_where_certified(sigma):
    # at sigma <= 0.5 the Pearson-Vajda entries of Theorem 27 provably lose the min to Theorem 9's
    # (4 D^l >= 2 s_l): the improved bound must equal the Theorem-9 bound there, at every order,
    # and sit between the exact lower bound and the unsubsampled alpha/(2 sigma^2)
    alpha = np.array([2.0, 2.5, 3.0, 4.0, 7.5, 64.0, 1000.0])
    for gamma in (1e-3, 0.1, 0.5, 0.99):
        imp = rdp.subsampled_gaussian_wor(alpha, sigma, gamma, "improved")
        np.testing.assert_array_equal(imp, rdp.subsampled_gaussian_wor(alpha, sigma, gamma, "theorem9"))
        assert np.all(imp <= rdp.gaussian(alpha, sigma))
        low = rdp.subsampled_gaussian_wor(alpha[alpha == np.floor(alpha)], sigma, gamma, "lower")
        assert np.all(low <= imp[alpha == np.floor(alpha)] * (1 + 1e-12))


def test_subsampled_gaussian_wor_certificate_at_order_2_is_sharp_enough():
    # the certificate's premise at order 2 (Phi(2)(1 - 1/t)^2 >= 1/2, t = e^{3/(2 sigma^2) - 2/sigma}),
    # checked with mpmath at the largest sigma it is claimed for (0.5) and that D^2 = e^{1/sigma^2} - 1
    # there really loses: 4 sqrt(D^2 D^4) >= 2 s_3, s_j = e^{j(j-1)/(2 sigma^2)}
    import mpmath as mp
    mp.mp.dps = 40
    s = mp.mpf("0.5")
    t = mp.exp(3 / (2 * s ** 2) - 2 / s)
    assert mp.ncdf(2) * (1 - 1 / t) ** 2 >= mp.mpf(1) / 2
    D = {l: mp.fsum(mp.binomial(l, i) * (-1) ** (l - i) * mp.exp(i * (i - 1) / (2 * s ** 2)) for i in range(l + 1))
         for l in (2, 4)}
    assert 4 * mp.sqrt(D[2] * D[4]) >= 2 * mp.exp(3 / s ** 2)


@pytest.mark.parametrize("alpha", [8.99e307, 1e308, 1.7976931348623157e308])
@pytest.mark.parametrize("b", [1e290, 1e300, 1e305, 1e307, 1e308, 9007199254740994.0])
def test_rdp_laplace_at_orders_where_2_alpha_overflows(alpha, b):
    # 2 alpha overflows here: w = (alpha-1)/(2 alpha-1) must still be about 1/2, not 0
    import mpmath as mp
    mp.mp.dps = 60
    A, B = mp.mpf(alpha), mp.mpf(b)
    exact = mp.log(A / (2 * A - 1) * mp.exp((A - 1) / B) + (A - 1) / (2 * A - 1) * mp.exp(-A / B)) / (A - 1)
    with np.errstate(under="ignore"):          # the answer itself may be subnormal
        got = rdp.laplace(alpha, b)
    assert abs(got - float(exact)) <= 4e-16 * float(exact) + 2 * 5e-324


# The RDP mechanism objects validate their parameters with the constraint table: a sampling rate
# above 1 or a negative sigma is refused, naming it.
@pytest.mark.parametrize("make", [lambda: rdp.PoissonGaussian(1.1, 1.5), lambda: rdp.PoissonGaussian(-1.0, 0.01),
                                  lambda: rdp.Gaussian(-1.0)], ids=["q=1.5", "sigma<0", "gaussian-sigma<0"])
def test_mechanism_objects_validate(make):
    with pytest.raises(dpbounds.DPBoundsError, match=r"^(q|sigma)\b"):
        make()


# fuzz_rdp: at an order of 9e15 the conversion term log(1/delta)/(alpha - 1) ~ 8e-14 is below
# half an ulp of the RDP value 9e5, so eps = r + term rounded to nearest would be r, whose delta
# exceeds the target.  The conversions round towards the bound (rdp/_outward.py;
# tests/test_rdp_outward.py checks them against mpmath).
def test_rdp_epsilon_rounds_towards_the_bound():
    r, o, d = np.array([897687.35876041]), np.array([9.00719925e15]), 2.2250738585072014e-308
    eps = rdp.epsilon(r, o, d, "improved")
    assert rdp.delta(r, o, eps, "improved") <= d


def test_tradeoff_clt_names_a_sigma_beyond_the_doubles():
    # a Python int beyond the double range is named, never numpy's OverflowError (the arguments
    # are checked in order, so a bad a is named first)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^sigma\b"):
        dpbounds.tradeoff_clt(np.array([0.5]), 10**400, 3.0)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^a\b"):
        dpbounds.tradeoff_clt(np.array([np.nan]), 10**400, 3.0)


# fuzz_rdp: the node count of the real-order quadrature divides alpha by sigma; at a subnormal
# sigma that count is inf, over the cap, and the order is refused naming sigma (documented) --
# no numpy "overflow encountered in divide" RuntimeWarning.
def test_poisson_gaussian_subnormal_sigma_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            out = rdp.poisson_gaussian(np.array([3.5]), [5e-324], 0.999999999999999, "exact")
        except dpbounds.DPBoundsError as exc:       # a refusal naming sigma also keeps the contract
            assert str(exc).startswith("sigma")
        else:
            assert np.all(out >= 0)
        with pytest.raises(dpbounds.DPBoundsError, match=r"^sigma must be larger"):
            rdp.poisson_gaussian([3.5], [5e-324], 0.5)


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


# fuzz_rdp: composing at the largest double as an order, c * rdp = 10 * 9e307 is beyond the
# doubles: the composed curve is inf there, its value, without a RuntimeWarning; the order is
# useless, not an error.
def test_rdp_accountant_largest_order_warns_nothing():
    acc = rdp.RDPAccountant(np.array([1.7976931348623157e308]), "classic", 10000.0)
    acc.compose(rdp.Gaussian(1.0), 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eps = acc.get_epsilon(0.999999999999999)
        # 10 * alpha / 2 at alpha = 1.8e308 is beyond the doubles: eps(alpha) + log(1/delta) / (alpha - 1)
        assert eps == math.inf
        assert acc.get_delta(1.0) == 1.0
        # with a usable order next to it, that order decides, as without the huge one
        both = rdp.RDPAccountant(np.array([8.0, 1.7976931348623157e308]), "classic").compose(rdp.Gaussian(1.0), 10)
        assert both.get_epsilon(1e-5) == float(rdp.epsilon([40.0], [8.0], 1e-5, "classic"))


# fuzz_rdp: RDPAccountant([1e6], ...) with SubsampledGaussianWOR answers quickly: orders above
# 20000 are evaluated one by one (O(order) each), not from an integer-order table built whole
# (O(n^2) work for the one order asked); the suite's per-test time guards the speed.
def test_wor_accountant_at_order_1e6_is_quick_and_right():
    acc = rdp.RDPAccountant([1e6], "improved", 1e6).compose(rdp.SubsampledGaussianWOR(3.5, 0.5), 1)
    eps, order = acc.get_epsilon(1 - 1.3e-9, return_order=True)
    assert order == 1e6
    v = float(acc.rdp(1e6))
    # independent brackets: the divergence of the realisable pair behind the lower bound,
    # alpha / (2 sigma^2) + alpha log(gamma) / (alpha - 1), and the Gaussian without subsampling
    lo = 1e6 / (2 * 3.5 ** 2) + 1e6 * math.log(0.5) / (1e6 - 1)
    assert lo * (1 - 1e-14) <= v <= 1e6 / (2 * 3.5 ** 2)
    assert eps == float(rdp.epsilon([v], [1e6], 1 - 1.3e-9))
    # the continuous search up to 1e6 is quick as well (no table of 1e4 orders and up)
    cont = rdp.RDPAccountant(max_order=1e6).compose(rdp.SubsampledGaussianWOR(3.5, 0.5), 1)
    assert cont.get_epsilon(1e-5) <= float(rdp.epsilon([v], [1e6], 1e-5))


@pytest.mark.parametrize("bound", ["improved", "theorem9"])
def test_wor_orders_above_the_table_are_the_tables_values(bound, monkeypatch):
    # the order-by-order path above the dense table gives the table's numbers bit for bit: with the
    # table cut at order 64, against a fresh object whose table covers every order asked
    from dpbounds.rdp import _mechanisms
    a = np.array([2.0, 7.5, 63.0, 64.0, 64.5, 100.0, 1000.25, 2999.0, 3000.0])
    whole = np.asarray(rdp.SubsampledGaussianWOR(1.3, 0.02, bound).rdp(a))
    monkeypatch.setattr(_mechanisms, "_DENSE_MAX", 64)
    m = rdp.SubsampledGaussianWOR(1.3, 0.02, bound)
    assert np.array_equal(np.asarray(m.rdp(a)), whole)
    assert m._table.shape[0] <= 66          # the high orders did not grow the table


def test_no_usable_order_error_names_the_orders_and_the_query():
    # the contract: a DPBoundsError names the parameter.  No order is usable because of the orders
    # (fractional, with the quadrature over its cap at sigma = 0.005); the query is named too
    acc = rdp.RDPAccountant(orders=[30.5, 40.5]).compose(rdp.PoissonGaussian(0.005, 0.01), 10)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^orders must .* no usable order for delta = 1e-05,"):
        acc.get_epsilon(1e-5)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^orders must .* no usable order for epsilon = 1\.0,"):
        acc.get_delta(1.0)


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


def test_randomized_response_rdp_at_the_largest_order():
    # fuzz_rdp: at alpha = 1.8e308 the product alpha * r / 2 overflows, but the RDP is finite,
    # about r = |logit p|, and raises no flag
    import mpmath as mp

    mp.mp.dps = 60
    for alpha, p in ((1.7976931348623157e308, 1e-100), (2e300, 1e-100), (1.7976931348623157e308, 0.3)):
        a, pp = mp.mpf(alpha), mp.mpf(p)
        want = mp.log(pp ** a * (1 - pp) ** (1 - a) + (1 - pp) ** a * pp ** (1 - a)) / (a - 1)
        with np.errstate(all="raise", under="ignore"):
            got = dpbounds.ufuncs.rdp_randomized_response(alpha, p)
        assert abs(mp.mpf(got) - want) <= 4 * np.spacing(float(want))


# fuzz_bounds, fuzz_tradeoff: no IEEE flag where two arguments are extreme at once
# (tests/test_fp_flags.py probes every pair).  At sigma = 1.8e308 the exact coefficient
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


# fuzz_special (seed 11): at q = 1 the mixture's likelihood ratio minus one reaches -1 exactly
# where it underflows; the integrand there is a - 1 (1 at a = 1), without a divide-by-zero flag
# from log1p(-1).  At q = 1 the Poisson RDP is the Gaussian's a/(2 sigma^2).
@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.5, 7.290294928588934])
def test_rdp_poisson_quad_log_at_q_one_is_the_gaussian(alpha):
    sigma = 0.17984648772986425
    with np.errstate(all="raise", under="ignore"):
        la = dpbounds.ufuncs.rdp_poisson_quad_log(alpha, sigma, 1.0)
    rdp = math.exp(la) if alpha == 1.0 else (la + math.log1p(math.exp(-la))) / (alpha - 1.0)
    assert rdp == pytest.approx(alpha / (2 * sigma * sigma), rel=1e-12)


# fuzz_accountants (seed 11): RandomAllocationPLD(0.74, 16, 3).epsilon(~0.5) stays in bounded
# memory: an epsilon guess near 0 asks for loss cells of 2.7e-7 over a log-domain grid 34 wide
# (1.3e8 cells), and the cells are capped (2**20, as the Fourier law); checked here with a small
# cap so that the test is fast.
def test_log_domain_lattice_cells_are_capped(monkeypatch):
    from dpbounds.accountant._laws import logdomain as L

    law = dpbounds.RandomAllocationPLD(0.7405932788014288, 16, 3)._law
    assert isinstance(law, L.LogDomainPair)
    monkeypatch.setattr(L, "_MAX_CELLS", 2 ** 12)
    seen = []
    real = law.lattice_masses
    monkeypatch.setattr(law, "lattice_masses", lambda d: seen.append(d) or real(d))
    out = law.lattice_pmfs(1e-3, cell_span=1e-12)
    span_u = law.fine.u[-1] - law.fine.u[0]
    assert seen == [pytest.approx(span_u / 2 ** 12)]
    assert set(out) == {"remove", "add"}


# fuzz_sweep_axes: an axis is at most 1e7 points, and repeats of a generated (monotone) integer
# axis are dropped without a sort, so that parsing one stays in bounded memory.
def test_axis_cap_and_integer_axis_memory():
    import tracemalloc

    from dpbounds.sweeps import parse_axis
    from dpbounds.sweeps._axes import MAX_AXIS_LENGTH

    assert MAX_AXIS_LENGTH == 10 ** 7
    with pytest.raises(dpbounds.DPBoundsError, match=r"^axis epochs: num must be at most 1e\+07"):
        parse_axis("epochs", "-1:1:31e+06")
    tracemalloc.start()
    try:
        v = parse_axis("epochs", "1:1e9:1e6:log")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2 ** 20, peak            # a few 8 MB arrays, no sort
    assert np.all(np.diff(v) > 0) and v[0] == 1 and v[-1] == 1e9 and np.all(v == np.rint(v))
    assert list(parse_axis("rounds", "10:1:10")) == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]   # decreasing stays so


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


# fuzz_rdp: the quadrature node count of rdp.poisson_gaussian involves 0.9 pi sigma, beyond the
# doubles at sigma = 1.8e308: no RuntimeWarning escapes
def test_poisson_gaussian_at_the_largest_sigma_raises_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = rdp.poisson_gaussian(np.array([1.5]), 1.7976931348623157e308, 0.999999999999999, "exact")
    assert np.all(np.isfinite(out)) and np.all(out >= 0)


# gdp_delta at a slightly negative eps with a tiny mu (z = eps/mu < -30, outside the small-mu form):
# Phi(u) - e^eps Phi(v) cancelled, to 0 at eps = -2.2e-308, mu = 5e-324 (log 0 raised the
# divide-by-zero flag; the truth is ~ -expm1(eps)) and 100 % off at eps = -4.3e-147, mu = 1e-323.
# That branch now adds -expm1(eps) Phi(v) and Phi(-v) - Phi(-u), both >= 0.  References: mpmath.
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


# RDPAccountant with explicit orders above 1e6 and a without-replacement mechanism: the query raised
# the mechanism's "alpha must be <= 1e+06" (naming no parameter of the accountant or the query),
# even with a usable order next to it.  Those orders are unusable for that mechanism now (NaN,
# skipped and counted as for the Poisson-subsampled Gaussian's); none usable names the orders.
@pytest.mark.parametrize("bound", ["improved", "theorem9"])
def test_rdp_accountant_skips_orders_above_the_wor_tables(bound):
    mech = rdp.SubsampledGaussianWOR(1.0, 0.5, bound)
    acc = rdp.RDPAccountant([5.0, 2e6], "classic").compose(mech, 10)
    alone = rdp.RDPAccountant([5.0], "classic").compose(mech, 10)
    assert acc.get_epsilon(1e-5) == alone.get_epsilon(1e-5)
    assert "1 unusable (NaN) order evaluations skipped" in acc.get_epsilon_bracket(1e-5).method
    assert acc.get_delta(20.0) == alone.get_delta(20.0)
    assert np.isnan(acc.rdp(2e6)) and acc.rdp(5.0) == alone.rdp(5.0)
    for orders in ([1.7976931348623157e308], [2e6], [1e6 + 0.5]):
        big = rdp.RDPAccountant(orders, "classic").compose(mech, 10)
        with pytest.raises(dpbounds.DPBoundsError, match=r"^orders must include a usable one: .* delta = 1e-05"):
            big.get_epsilon(1e-5)
    # the mechanism itself still refuses such an order, naming alpha
    with pytest.raises(dpbounds.DPBoundsError, match=r"^alpha must be <= 1e\+06"):
        mech.rdp(np.array([2e6]))
    # a Gaussian next to it keeps its own orders: the sum is NaN wherever one term is
    mixed = rdp.RDPAccountant([5.0, 2e6], "classic").compose(mech, 10).compose(rdp.Gaussian(3.0), 2)
    assert np.isnan(mixed.rdp(2e6)) and mixed.get_epsilon(1e-5) > alone.get_epsilon(1e-5)


# rdp.delta (and RDPAccountant.get_delta) at the order 1.8e308 with rdp = 9e307 and eps one ulp
# above it: (alpha - 1)(rdp - eps) overflows to -inf and so does its error bound, and -inf + inf
# gave NaN, read as log delta = +inf: delta = 1, where the exact delta is far below the smallest
# subnormal (so get_epsilon's answer looked uncertified).  The overflowed product answers
# log delta = -DBL_MAX now, delta rounding up to 5e-324, as the comment there always intended.
def test_rdp_delta_where_the_order_product_overflows():
    big = 1.7976931348623157e308
    r = big / 2
    assert rdp.delta([r], [big], np.nextafter(r, np.inf), "classic") == 5e-324
    for conv in ("classic", "improved"):
        eps = rdp.epsilon([r], [big], 1e-15, conv)
        assert rdp.delta([r], [big], eps, conv) <= 1e-15
        acc = rdp.RDPAccountant([big], conv).compose(rdp.Gaussian(1.0), 1)
        e = acc.get_epsilon(1e-15)
        assert e == eps and acc.get_delta(e) <= 1e-15
    # rdp far above eps still gives delta = 1 (the product overflows to +inf: log delta >= 0)
    assert rdp.delta([r], [big], 1.0, "classic") == 1.0
