"""dpbounds.composition against independent computations.

* the binomial log-probabilities against mpmath's exact binomial;
* the optimal (Kairouz-Oh-Viswanath) delta against an mpmath evaluation of the sum, and, for
  small k, against a brute-force enumeration of the k-fold composition of the extremal
  4-outcome mechanism (no binomial formula involved);
* the optimal epsilon against an mpmath root of the mpmath sum;
* subsample / naive / advanced against their formulas in mpmath;
* structural facts: monotone in k, optimal <= advanced and <= naive, the budget split is a
  minimum (checked against a dense scan);
* the claims of Section 4 of "Subsampled Rényi Differential Privacy and Analytical Moments
  Accountant" about its Figure 2, computed here (not hard-coded).
"""
from __future__ import annotations

import doctest
import itertools
import math

import mpmath as mp
import numpy as np
import oracle
import pytest

import dpbounds
from dpbounds import composition as comp
from dpbounds._binomial import log_pmf
from dpbounds.rdp import RDPAccountant, SubsampledGaussianWOR

# ----------------------------------------------------------------------------- oracles

def _mp_rr_delta(eps: float, k: int, eg: float) -> mp.mpf:
    """d_rr(eg) = sum_{(2j-k) eps > eg} C(k,j) (e^{j eps} - e^{eg} e^{(k-j) eps}) / (1 + e^eps)^k."""
    e, g = mp.mpf(eps), mp.mpf(eg)
    tot = mp.mpf(0)
    for j in range(k + 1):
        if (2 * j - k) * e > g:
            tot += mp.binomial(k, j) * (mp.exp(j * e) - mp.exp(g + (k - j) * e))
    return tot / (1 + mp.exp(e)) ** k


def _mp_optimal_delta(eps: float, delta: float, k: int, eg: float) -> mp.mpf:
    return 1 - (1 - mp.mpf(delta)) ** k * (1 - _mp_rr_delta(eps, k, eg))


def _brute_force_delta(eps: float, delta: float, k: int, eg: float) -> mp.mpf:
    """Hockey-stick divergence of the k-fold product of KOV's extremal pair, by enumeration."""
    e, d = mp.mpf(eps), mp.mpf(delta)
    z = 1 + mp.exp(e)
    p = [d, (1 - d) * mp.exp(e) / z, (1 - d) / z, mp.mpf(0)]
    q = [mp.mpf(0), (1 - d) / z, (1 - d) * mp.exp(e) / z, d]
    w = mp.exp(mp.mpf(eg))
    tot = mp.mpf(0)
    for outcome in itertools.product(range(4), repeat=k):
        pp = mp.fprod(p[o] for o in outcome)
        qq = mp.fprod(q[o] for o in outcome)
        tot += max(pp - w * qq, 0)
    return tot


# ----------------------------------------------------------------------------- binomial

@pytest.mark.parametrize("k, p, js", [
    (10, 0.3, range(11)),
    (600_000, 0.5002499999, [300_000, 300_150, 301_000, 303_000, 599_999, 600_000, 0, 1]),
    (5000, 0.999, [4990, 4900, 4800, 5000, 2500]),
    (16, 0.7, range(17)),
])
def test_log_pmf_vs_mpmath(k, p, js):
    mp.mp.dps = 50
    lp, lq = math.log(p), math.log1p(-p)
    j = np.array(list(js), dtype=np.float64)
    got = log_pmf(j, k, lp, lq, k * p, k * (1 - p))
    pm = mp.mpf(p)
    for jj, g in zip(j, got):
        want = mp.log(mp.binomial(k, int(jj))) + int(jj) * mp.log(pm) + (k - int(jj)) * mp.log(1 - pm)
        # absolute error of a log = relative error of the probability; the second term is the
        # problem's own sensitivity to the rounding of n p and n (1 - p), which are inputs
        tol = 1e-14 * max(1.0, abs(float(want))) + 2.3e-16 * abs(jj - k * p) / (p * (1 - p))
        assert abs(g - float(want)) <= tol, (jj, g, want)


# ----------------------------------------------------------------------------- optimal

@pytest.mark.parametrize("eps, delta, k", [(0.7, 0.0, 3), (0.2, 1e-3, 4), (1.5, 0.05, 5), (0.05, 0.0, 5)])
def test_optimal_delta_equals_brute_force_composition(eps, delta, k):
    mp.mp.dps = 40
    for eg in [0.0, 0.5 * eps, eps, 1.3 * eps, (k - 2) * eps, k * eps * 0.999, k * eps, k * eps * 1.001, 10.0]:
        want = _brute_force_delta(eps, delta, k, eg)
        got = comp.optimal_delta(eps, delta, k, eg)
        assert oracle.rel_error(got, float(want)) <= 1e-13 or abs(got - float(want)) <= 1e-300, (eg, got, want)


@pytest.mark.parametrize("eps, delta, k", [(0.1, 0.0, 100), (1e-3, 1e-12, 5000), (0.01, 1e-9, 1000),
                                           (2.0, 1e-4, 60)])
def test_optimal_delta_vs_mpmath_sum(eps, delta, k, record_accuracy):
    mp.mp.dps = 40
    worst = 0.0
    for eg in [0.0, eps / 3, 0.5, 1.0, 2.0 + eps / 7, 5.0]:
        want = _mp_optimal_delta(eps, delta, k, eg)
        got = comp.optimal_delta(eps, delta, k, eg)
        worst = max(worst, oracle.rel_error(got, want))
        assert oracle.rel_error(got, want) <= 1e-12, (eg, got, want)
    record_accuracy("dpbounds.composition.optimal_delta", worst, "relative",
                    "eps in [1e-3, 2], delta in [0, 1e-4], k in [60, 5000], eps_g in [0, 5]: 4 x 6 points")


def test_optimal_delta_tiny_values_vs_mpmath():
    # far in the tail: the value is tiny, yet every term is positive, so still relative accuracy
    mp.mp.dps = 40
    eps, k = 0.05, 2000
    for eg in [30.0, 45.0, 60.0]:
        want = float(_mp_rr_delta(eps, k, eg))
        assert 0 < want < 1e-20
        assert oracle.rel_error(comp.optimal_delta(eps, 0.0, k, eg), want) <= 1e-12


@pytest.mark.parametrize("eps, delta, k, target", [
    (0.1, 0.0, 100, 1e-5), pytest.param(0.01, 1e-10, 1000, 1e-6, marks=pytest.mark.slow), (0.5, 1e-6, 40, 1e-3),
    pytest.param(1e-3, 0.0, 20000, 1e-8, marks=pytest.mark.slow)])
def test_optimal_vs_mpmath_root(eps, delta, k, target, record_accuracy):
    mp.mp.dps = 40
    got = comp.optimal(eps, delta, k, target)
    # the mpmath delta is decreasing in eps_g, so a sign change across got (1 -+ 1e-10) puts the
    # exact root within 1e-10 relative of got
    f = lambda x: _mp_optimal_delta(eps, delta, k, x) - target  # noqa: E731
    lo, hi = mp.mpf(got) * (1 - mp.mpf(1e-10)), mp.mpf(got) * (1 + mp.mpf(1e-10))
    assert f(lo) > 0 >= f(hi)
    # the root itself (bisection in mpmath on the bracket, f decreasing) for the measured error
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    record_accuracy("dpbounds.composition.optimal", oracle.rel_error(got, (lo + hi) / 2), "relative",
                    "eps in [1e-3, 0.5], k in [40, 1000], target in [1e-6, 1e-3]; root by mpmath bisection")


def test_optimal_edge_cases():
    # infeasible: the mechanisms' own delta exceeds the target
    assert comp.optimal(0.1, 1e-3, 100, 1e-5) == math.inf
    # zero target with pure DP: pure composition k eps
    assert comp.optimal(0.1, 0.0, 10, 0.0) == pytest.approx(1.0, rel=1e-15)
    # eps = 0: no privacy loss beyond delta
    assert comp.optimal(0.0, 0.0, 10, 1e-5) == 0.0
    # target above the total variation: eps 0
    assert comp.optimal(0.01, 0.0, 10, 0.5) == 0.0
    assert comp.optimal_delta(0.1, 0.01, 5, math.inf) == pytest.approx(1 - 0.99 ** 5, rel=1e-14)


def test_optimal_monotone_in_k_and_below_advanced_and_naive():
    eps, delta, slack = 0.01, 1e-10, 1e-6
    ks = np.array([1, 2, 5, 10, 100, 1000, 10_000, 100_000])
    opt = comp.optimal(eps, delta, ks, ks * delta + slack)
    assert np.all(np.diff(opt) > 0)
    adv, adv_delta = comp.advanced(eps, delta, ks, slack)
    assert np.all(opt <= adv)
    nai, nai_delta = comp.naive(eps, delta, ks)
    assert np.all(comp.optimal(eps, delta, ks, nai_delta) <= nai * (1 + 1e-14))
    # the delta the optimal theorem certifies at advanced's eps is within advanced's delta
    assert np.all(comp.optimal_delta(eps, delta, ks, adv) <= adv_delta)


def test_optimal_large_k_agrees_with_clt_scale():
    # k = 600,000 runs (the companion paper's range) and lands between the sqrt(k) scale and advanced
    eps, k = 1e-3, 600_000
    got = comp.optimal(eps, 0.0, k, 1e-8)
    adv = comp.advanced(eps, 0.0, k, 1e-8)[0]
    assert eps * math.sqrt(k) < got < adv


# ----------------------------------------------------------------------------- formulas

def test_subsample_naive_advanced_vs_mpmath(record_accuracy):
    mp.mp.dps = 50
    ulp = 2.0 ** -52
    worst_s = worst_a = 0.0
    rng = np.random.default_rng(1)
    eps = np.concatenate([10 ** rng.uniform(-8, 1.5, 40), [0.0, 700.0, 800.0]])
    gam = np.concatenate([10 ** rng.uniform(-9, 0, 40), [0.3, 1e-3, 0.5]])
    dl = 10 ** rng.uniform(-12, -1, eps.size)
    ks = np.floor(10 ** rng.uniform(0, 6, eps.size))
    slack = 10 ** rng.uniform(-12, -1, eps.size)
    se, sd = comp.subsample(eps, dl, gam)
    ae, ad = comp.advanced(eps, dl, ks, slack)
    ne, nd = comp.naive(eps, dl, ks)
    for i in range(eps.size):
        e, g, d, k, s = (mp.mpf(float(v)) for v in (eps[i], gam[i], dl[i], ks[i], slack[i]))
        rs = oracle.rel_error(se[i], mp.log(1 + g * (mp.exp(e) - 1)))
        if eps[i] <= 700:
            worst_s = max(worst_s, rs / ulp)
        assert rs <= 4e-16
        assert sd[i] == float(g * d)
        if eps[i] < 700:
            ra = oracle.rel_error(ae[i], mp.sqrt(2 * k * mp.log(1 / s)) * e + k * e * (mp.exp(e) - 1))
            worst_a = max(worst_a, ra / ulp)
            assert ra <= 1e-15
        assert ad[i] == pytest.approx(min(1.0, float(k * d + s)), rel=1e-15)
        assert ne[i] == float(k * e) and nd[i] == min(1.0, float(k * d))
    assert comp.subsample(1.0, 0.5, 0.0) == (0.0, 0.0)
    assert comp.subsample(math.inf, 0.0, 0.5)[0] == math.inf
    record_accuracy("dpbounds.composition.subsample", worst_s, "ulp",
                    "eps in [1e-8, 700] (40 log-uniform + edges), gamma in [1e-9, 1]; relative, in units of 2^-52")
    record_accuracy("dpbounds.composition.advanced", worst_a, "ulp",
                    "eps in [1e-8, 32], k in [1, 1e6], delta' in [1e-12, 0.1]; relative, in units of 2^-52")


@pytest.mark.parametrize("call, name", [
    (lambda: comp.subsample(-1.0, 0.0, 0.5), "epsilon"),
    (lambda: comp.subsample(1.0, 1.5, 0.5), "delta"),
    (lambda: comp.subsample(1.0, 0.1, 2.0), "gamma"),
    (lambda: comp.naive(1.0, 0.1, 2.5), "k"),
    (lambda: comp.advanced(1.0, 0.1, 3, 0.0), "delta_slack"),
    (lambda: comp.optimal(math.inf, 0.0, 3, 1e-5), "epsilon"),
    (lambda: comp.optimal(1.0, 0.0, 3, -1e-5), "target_delta"),
    (lambda: comp.optimal_delta(1.0, 0.0, 0, 1.0), "k"),
    (lambda: comp.optimal_delta(1.0, 0.0, 3, float("nan")), "epsilon_total"),
    (lambda: comp.subsampled_epsilon(10, gamma=0.0, sigma=1.0), "gamma"),
    (lambda: comp.subsampled_epsilon(10, gamma=0.1, delta=1.0, sigma=1.0), "delta"),
    (lambda: comp.subsampled_epsilon(10, gamma=0.1, sigma=-1.0), "sigma"),
    (lambda: comp.subsampled_epsilon(10, gamma=0.1, pure_epsilon=-1.0), "pure_epsilon"),
    (lambda: comp.subsampled_epsilon(10, gamma=0.1), "sigma"),
    (lambda: comp.subsampled_epsilon(10, gamma=0.1, sigma=1.0, method="strong"), "method"),
    (lambda: comp.subsampled_epsilon(10, gamma=0.1, sigma=1.0, gaussian_profile="x"), "gaussian_profile"),
    (lambda: comp.subsampled_epsilon(0, gamma=0.1, sigma=1.0), "k"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(dpbounds.DPBoundsError, match=name):
        call()


# ----------------------------------------------------------------------------- the paper's curves

def _gauss_eps0(d0: float, sigma: float, profile: str) -> float:
    if d0 >= 1:
        return 0.0
    if profile == "exact":
        return float(dpbounds.gdp_epsilon(d0, 1.0 / sigma))
    return math.sqrt(2 * math.log(1 / d0)) / sigma + 0.5 / sigma ** 2


# seconds each: the fast suite keeps one point of each profile, the slow tier all three
@pytest.mark.parametrize("sigma, profile", [pytest.param(5.0, "exact", marks=pytest.mark.slow), (1.0, "exact"),
                                            (5.0, "rdp")])
def test_subsampled_advanced_is_the_minimum_over_a_dense_scan(sigma, profile):
    gamma, budget = 1e-3, 1e-8
    for k in [1, 300, 600_000]:
        r = comp.subsampled_epsilon(k, gamma=gamma, delta=budget, sigma=sigma, gaussian_profile=profile,
                                    full_output=True)
        # the reported choice is feasible and gives the reported epsilon
        assert k * gamma * r.base_delta + r.delta_slack <= budget * (1 + 1e-12)
        e1 = comp.subsample(_gauss_eps0(r.base_delta, sigma, profile), r.base_delta, gamma)[0]
        assert oracle.rel_error(r.epsilon, comp.advanced(e1, 0.0, k, r.delta_slack)[0]) <= 1e-12
        # and no split of a dense scan does better
        u = np.concatenate([np.linspace(1e-6, 1 - 1e-6, 20001), 10 ** np.linspace(-16, -6, 2001),
                            1 - 10 ** np.linspace(-16, -6, 2001)])
        d0 = u * budget / (k * gamma)
        e0 = np.array([_gauss_eps0(x, sigma, profile) for x in d0])
        scan = comp.advanced(comp.subsample(e0, 0.0, gamma)[0], 0.0, k, (1 - u) * budget)[0]
        assert r.epsilon <= scan.min() * (1 + 1e-9)


def test_subsampled_naive_uses_the_whole_budget():
    gamma, budget, sigma = 1e-3, 1e-8, 2.0
    ks = np.array([1, 10, 1000, 600_000])
    got = comp.subsampled_epsilon(ks, gamma=gamma, delta=budget, sigma=sigma, method="naive")
    for k, g in zip(ks, got):
        d0 = min(1.0, budget / (k * gamma))
        assert oracle.rel_error(g, k * comp.subsample(_gauss_eps0(d0, sigma, "exact"), 0.0, gamma)[0]) <= 1e-15


def test_subsampled_pure_dp():
    e0, gamma, budget = 0.5, 1e-3, 1e-8
    ks = np.array([1, 100, 10_000])
    e1 = comp.subsample(e0, 0.0, gamma)[0]
    assert np.array_equal(comp.subsampled_epsilon(ks, gamma=gamma, delta=budget, pure_epsilon=e0, method="naive"),
                          ks * e1)
    assert np.array_equal(comp.subsampled_epsilon(ks, gamma=gamma, delta=budget, pure_epsilon=e0),
                          comp.advanced(e1, 0.0, ks, budget)[0])
    opt = comp.subsampled_epsilon(ks, gamma=gamma, delta=budget, pure_epsilon=e0, method="optimal")
    assert np.array_equal(opt, comp.optimal(e1, 0.0, ks, budget))


def test_subsampled_curves_monotone_and_ordered():
    ks = np.array([1, 10, 100, 1000, 10_000, 100_000, 600_000])
    for sigma in (5.0, 1.0):
        kw = dict(gamma=1e-3, delta=1e-8, sigma=sigma)
        adv = comp.subsampled_epsilon(ks, **kw)
        nai = comp.subsampled_epsilon(ks, method="naive", **kw)
        assert np.all(np.diff(adv) > 0) and np.all(np.diff(nai) > 0)
        opt = comp.subsampled_epsilon(ks[[0, 3]], method="optimal", **kw)
        assert np.all(opt <= adv[[0, 3]] * (1 + 1e-9)) and np.all(opt <= nai[[0, 3]] * (1 + 1e-9))
        # the exact profile gives a smaller base epsilon than the Renyi-curve conversion
        assert np.all(comp.subsampled_epsilon(ks, gaussian_profile="rdp", **kw) >= adv)


def test_docstring_examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    # the public names (defined in the package's modules, one per concept)
    tests = [t for name in comp.__all__ for t in finder.find(getattr(comp, name), f"{comp.__name__}.{name}")
             if t.examples]
    assert len(tests) >= 6
    for t in tests:
        runner.run(t)
    assert runner.failures == 0


# ----------------------------------------------------------------------------- the paper's claims

def _rdp_epsilon(sigma: float, k: int, conversion: str) -> float:
    acc = RDPAccountant(conversion=conversion).compose(SubsampledGaussianWOR(sigma, 1e-3), k)
    return float(acc.get_epsilon(1e-8))  # type: ignore[arg-type]


def _ratio_at_large_k(sigma: float, profile: str, conversion: str) -> float:
    """best baseline / moments accountant at k = 600,000."""
    k = 600_000
    kw = dict(gamma=1e-3, delta=1e-8, sigma=sigma, gaussian_profile=profile)
    best_baseline = min(comp.subsampled_epsilon(k, **kw), comp.subsampled_epsilon(k, method="naive", **kw))
    return float(best_baseline / _rdp_epsilon(sigma, k, conversion))


@pytest.mark.parametrize("profile, conversion", [("exact", "improved"), ("rdp", "classic")])
def test_claim_an_order_of_magnitude_at_large_k_high_privacy(profile, conversion):
    # "about an order of magnitude smaller eps than the baseline approaches" (sigma = 5):
    # log10 of the ratio rounds to 1 (measured 9.1x with the exact profile, 11.2x as in the paper)
    r = _ratio_at_large_k(5.0, profile, conversion)
    assert 10 ** 0.5 <= r < 10 ** 1.5, r


def test_claim_five_orders_at_large_k_low_privacy():
    # "five orders of magnitude smaller eps in the low privacy regime" (sigma = 1), with the
    # paper's baselines (Renyi-curve eps0(delta0)) and conversion: log10 of the ratio rounds to 5
    r = _ratio_at_large_k(1.0, "rdp", "classic")
    assert r >= 10 ** 4.5, r


@pytest.mark.xfail(strict=True, reason="does not reproduce against the stronger baseline: with the Gaussian's "
                   "exact privacy profile the gap at k = 600,000 is 10^4.48 (3.0e4x), about four and a half "
                   "orders of magnitude, not five")
def test_claim_five_orders_at_large_k_low_privacy_exact_profile():
    r = _ratio_at_large_k(1.0, "exact", "improved")
    assert r >= 10 ** 4.5, r


@pytest.mark.parametrize("profile, conversion", [("exact", "improved"), ("rdp", "classic")])
def test_claim_rdp_worse_than_baselines_at_small_k_for_the_gaussian(profile, conversion):
    # "the RDP approach initially performs worse than the naive composition and strong
    # composition": at k = 1 worse than both, and worse than the better of them up to k = 5
    # (measured crossovers: k = 29 / 10 (sigma = 5 / 1) with the exact profile, 29 / 6 as in the paper)
    for sigma in (5.0, 1.0):
        kw = dict(gamma=1e-3, delta=1e-8, sigma=sigma, gaussian_profile=profile)
        r1 = _rdp_epsilon(sigma, 1, conversion)
        assert r1 > comp.subsampled_epsilon(1, method="naive", **kw) and r1 > comp.subsampled_epsilon(1, **kw)
        for k in (2, 5):
            best = min(comp.subsampled_epsilon(k, method="naive", **kw), comp.subsampled_epsilon(k, **kw))
            assert _rdp_epsilon(sigma, k, conversion) > best



def test_chunked_logaddexp_fold_is_numpys_reduce_bit_for_bit():
    # the windows' sums are folded in chunks so that Ctrl-C is answered between them
    # (tests/contract/test_interrupts.py); the chunking must not move a bit
    from dpbounds.composition._optimal import _FOLD_CHUNK, _logaddexp_fold

    rng = np.random.default_rng(7)
    for n in (1, 2, _FOLD_CHUNK - 1, _FOLD_CHUNK, _FOLD_CHUNK + 1, 5 * _FOLD_CHUNK + 3):
        x = rng.normal(size=n) * 30.0 - 40.0
        assert _logaddexp_fold(x) == float(np.logaddexp.reduce(x)), n
