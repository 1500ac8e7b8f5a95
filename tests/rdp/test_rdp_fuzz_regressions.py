"""Regression tests for what the fuzz harnesses (fuzz/, docs/fuzzing.md) found in the Renyi-DP kernels,
mechanisms and RDPAccountant.

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

import dpbounds
from dpbounds import rdp


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
# tests/rdp/test_rdp_outward.py checks them against mpmath).
def test_rdp_epsilon_rounds_towards_the_bound():
    r, o, d = np.array([897687.35876041]), np.array([9.00719925e15]), 2.2250738585072014e-308
    eps = rdp.epsilon(r, o, d, "improved")
    assert rdp.delta(r, o, eps, "improved") <= d


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


# fuzz_rdp: the quadrature node count of rdp.poisson_gaussian involves 0.9 pi sigma, beyond the
# doubles at sigma = 1.8e308: no RuntimeWarning escapes
def test_poisson_gaussian_at_the_largest_sigma_raises_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = rdp.poisson_gaussian(np.array([1.5]), 1.7976931348623157e308, 0.999999999999999, "exact")
    assert np.all(np.isfinite(out)) and np.all(out >= 0)


# the fuzz gate (fuzz/FINDINGS.md): RDPAccountant with explicit orders above 1e6 and a without-replacement mechanism.
# Orders beyond the mechanism's tables are unusable for it (NaN, skipped and counted as for the
# Poisson-subsampled Gaussian's), so a usable order next to them still answers; when none is usable
# the error names the accountant's `orders`, not the mechanism's alpha.
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


# the fuzz gate (fuzz/FINDINGS.md): rdp.delta (and RDPAccountant.get_delta) at the order 1.8e308 with rdp = 9e307 and eps
# one ulp above it, where (alpha - 1)(rdp - eps) overflows to -inf: the exact delta is far below the
# smallest subnormal, so log delta is -DBL_MAX and delta rounds up to 5e-324 (never NaN read as 1).
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
