"""Accuracy of the trade-off kernels against mpmath (formulas: docs/tradeoff.md).

The oracle (tests/oracle.py) integrates the same formulas in 30-digit
arithmetic with tanh-sinh quadrature; its own error estimate is asserted small.
"""
import mpmath as mp
import numpy as np
import oracle
import pytest

import dpbounds
from dpbounds import _ufuncs as uf

BIT = {name: bit for name, bit, _ in uf.STATUS_BITS}


def _box_points(n, seed):
    """Random (a, sigma, M) in the accuracy box of the CLT kernels: a log-uniform in
    [1e-300, 1/2] or 1 - a log-uniform in [1e-15, 1/2]; sigma log-uniform [0.3, 50];
    M log-uniform [3, 1e15]."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        if rng.random() < 0.6:
            a = 10 ** rng.uniform(-300, np.log10(0.5))
        else:
            a = 1 - 10 ** rng.uniform(-15, np.log10(0.5))
        sigma = float(np.exp(rng.uniform(np.log(0.3), np.log(50))))
        M = float(np.round(10 ** rng.uniform(np.log10(3), 15)))
        out.append((float(a), sigma, M))
    return out


HARD_CLT = [
    (0.5, 1.0, 10.0), (0.5, 0.5, 10.0), (0.99, 1.0, 10.0), (1e-300, 0.3, 3.0), (1e-300, 50.0, 1e15),
    (1 - 1e-15, 0.3, 1e15), (1 - 1e-15, 50.0, 3.0), (1e-300, 0.3, 1e15), (0.3, 0.3, 3.0),
    (1e-100, 1.0, 1e3), (1e-8, 0.5, 1e6), (0.01, 2.0, 100.0), (1e-12, 0.3, 1e4), (0.999, 0.3, 30.0),
    (0.499053, 0.31154, 3.0),  # a unit-panel grid (+ z_c +- w_z 2^k) is off by 2e-11 here (see dpb_tradeoff.h)
]


# Regime: the whole box of _box_points.  Tolerance 1e-14 absolute is the declared accuracy
# (docs/accuracy.md); the measured maximum is ~3e-16 (sums of ~500 terms of size <= 0.4 * weight).
# the hard points and the first 8 random points in the fast suite, the other 18 random points slow
@pytest.mark.parametrize("a,sigma,M", HARD_CLT + _box_points(26, 11)[:8]
                         + [pytest.param(*p, marks=pytest.mark.slow) for p in _box_points(26, 11)[8:]])
def test_clt_vs_mpmath(a, sigma, M, record_accuracy):
    ref, err = oracle.tradeoff_clt(a, sigma, M)
    assert err < 1e-20
    got = uf.tradeoff_clt(a, sigma, M)
    record_accuracy("tradeoff_clt", abs(got - float(ref)), "absolute",
                    f"{len(HARD_CLT)} hard points and 26 random points of the box")
    assert abs(got - float(ref)) <= 1e-14


# Beyond the box of _box_points: small sigma (w up to e^1111, A(z) formed in log space when w
# overflows) and huge sigma.  Same 1e-14 absolute tolerance; measured <= 2.3e-16.
@pytest.mark.parametrize("a,sigma,M", [(1e-300, 0.03, 2.0), (0.3, 0.03, 1e15), (0.5, 0.05, 100.0), (0.3, 0.08, 10.0),
                                        (1e-5, 0.1, 1e4), (0.99, 0.15, 3.0), (0.5, 1000.0, 3.0), (1e-200, 1e4, 1e15)])
def test_clt_outside_box_vs_mpmath(a, sigma, M):
    ref, err = oracle.tradeoff_clt(a, sigma, M)
    assert err < 1e-20
    assert abs(uf.tradeoff_clt(a, sigma, M) - float(ref)) <= 1e-14


@pytest.mark.parametrize("a,sigma,M", [(0.5, 1.0, 10.0), (0.5, 0.5, 10.0), (0.99, 1.0, 10.0),
                                        (0.5, 1.0, 1000.0), (1e-10, 0.3, 3.0), (0.9, 0.3, 3.0)]
                         + _box_points(6, 12))
def test_clt_truncated_vs_mpmath(a, sigma, M, record_accuracy):
    ref, err = oracle.tradeoff_clt(a, sigma, M, truncated=True)
    assert err < 1e-20
    got = uf.tradeoff_clt_truncated(a, sigma, M)
    record_accuracy("tradeoff_clt_truncated", abs(got - float(ref)), "absolute",
                    "6 hard points and 6 random points of the box")
    assert abs(got - float(ref)) <= 1e-14
    # truncation removes a non-negative amount <= Phi(-z_max) (docs/tradeoff.md)
    assert got <= uf.tradeoff_clt(a, sigma, M) + 1e-15


def test_truncation_sizes_match_independent_values():
    # untruncated - truncated at three points: independent reference values to 2 significant digits
    for (a, s, M), expect in [((0.5, 1, 10), 8.8e-5), ((0.5, 0.5, 10), 4.9e-2), ((0.99, 1, 10), 4.1e-3)]:
        d = uf.tradeoff_clt(a, s, M) - uf.tradeoff_clt_truncated(a, s, M)
        assert d == pytest.approx(expect, rel=0.02, abs=0)
    assert uf.tradeoff_clt(0.5, 1, 1000) - uf.tradeoff_clt_truncated(0.5, 1, 1000) < 1e-15


# slope: relative 1e-12 (measured <= 7e-15): ratio of two quadratures
@pytest.mark.parametrize("a,sigma,M", [(0.5, 1.0, 10.0), (1e-10, 0.3, 3.0), (0.9, 0.3, 3.0), (1e-12, 2.0, 1e6),
                                        (1 - 1e-12, 1.0, 100.0), (0.2, 50.0, 1e15)] + [
    (min(max(a, 1e-12), 1 - 1e-12), s, M) for a, s, M in _box_points(6, 13)])
def test_clt_slope_vs_mpmath(a, sigma, M, record_accuracy):
    ref, err = oracle.tradeoff_clt_slope(a, sigma, M)
    assert abs(err) < 1e-18 * abs(ref)
    got = uf.tradeoff_clt_slope(a, sigma, M)
    record_accuracy("tradeoff_clt_slope", oracle.rel_error(got, ref), "relative",
                    "6 hard points and 6 random points of the box, a in [1e-12, 1 - 1e-12]")
    assert got == pytest.approx(float(ref), rel=1e-12, abs=0)


def test_slope_matches_finite_difference():
    a = np.linspace(0.05, 0.95, 7)
    h = 1e-6
    fd = (uf.tradeoff_clt(a + h, 1.5, 50) - uf.tradeoff_clt(a - h, 1.5, 50)) / (2 * h)
    np.testing.assert_allclose(uf.tradeoff_clt_slope(a, 1.5, 50), fd, rtol=1e-7)


# Edgeworth: same formula in mpmath; 1e-13 absolute (measured ~2e-17); NaN must agree.
@pytest.mark.parametrize("a,sigma,M", [(0.5, 2.0, 100.0), (0.01, 2.0, 100.0), (0.99, 2.0, 100.0), (0.5, 1.0, 100.0),
                                        (1e-6, 1.0, 100.0), (0.1, 0.5, 1000.0), (0.5, 1.0, 10.0),
                                        (1e-9, 1.0, 1e6), (0.999, 3.0, 20.0)])
def test_edgeworth_vs_mpmath(a, sigma, M, record_accuracy):
    ref, err = oracle.tradeoff_edgeworth(a, sigma, M)
    got = uf.tradeoff_edgeworth(a, sigma, M)
    if mp.isnan(ref):
        assert np.isnan(got) and uf.edgeworth_status(a, sigma, M) == BIT["OUT_OF_RANGE"]
        return
    assert err < 1e-20
    record_accuracy("tradeoff_edgeworth", abs(got - float(ref)), "absolute",
                    "9 points, a in [1e-9, 0.999], sigma in [0.5, 3], M in [10, 1e6], where defined")
    assert abs(got - float(ref)) <= 1e-13
    assert uf.edgeworth_status(a, sigma, M) == 0


def test_edgeworth_polynomial_vs_mpmath(record_accuracy):
    worst = 0.0
    for y, s, n in [(0.3, 2.0, 100), (-2.0, 1.0, 50), (3.0, 0.7, 1e4)]:
        with mp.workdps(40):   # the reference at its own precision, whatever other tests left set
            c, d = oracle.edgeworth_coefs(s, n)
            ref = oracle.edgeworth_p(mp.mpf(y), c, d)
            worst = max(worst, oracle.rel_error(uf.edgeworth_p(y, s, n), ref))
        assert uf.edgeworth_p(y, s, n) == pytest.approx(float(ref), rel=1e-14, abs=0)
    record_accuracy("edgeworth_p", worst, "relative", "3 points, y in [-2, 3], sigma in [0.7, 2], n in [50, 1e4]")


def test_edgeworth_status_reasons():
    # For the lognormal, p_n'(0) = 1 + 3 d_n - 7 c_n^2 > 0 always (gamma2/8 > 7 gamma1^2/36),
    # so NOT_MONOTONE_AT_0 never occurs; OUT_OF_RANGE (x outside p_M's range) does at small a / small M.
    a, s, M = np.meshgrid(np.logspace(-12, -0.01, 15), np.geomspace(0.3, 50, 9), [3, 10, 100, 1e4])
    st = uf.edgeworth_status(a, s, M)
    assert not np.any(st & BIT["NOT_MONOTONE_AT_0"])
    assert np.any(st == BIT["OUT_OF_RANGE"]) and np.any(st == 0)
    np.testing.assert_array_equal(np.isnan(uf.tradeoff_edgeworth(a, s, M)), st != 0)
    assert uf.edgeworth_status(0.5, 1.0, 2.0) == BIT["BAD_INPUT"] and np.isnan(uf.tradeoff_edgeworth(0.5, 1.0, 2.0))


# Gaussian trade-off: relative 2e-13 (the rounding of x - mu is amplified by |x - mu|^2 in the
# lower tail: |x - mu| <= 40 gives up to ~1.5e-13; measured 1.2e-13).
@pytest.mark.parametrize("a", [1e-300, 1e-200, 1e-50, 1e-16, 1e-8, 1e-3, 0.1, 0.5, 0.9, 1 - 1e-8, 1 - 1e-12, 1 - 1e-16])
@pytest.mark.parametrize("mu", [1e-8, 0.01, 0.5, 1.0, 3.0, 10.0, 30.0])
def test_gaussian_tradeoff_vs_mpmath(a, mu, record_accuracy):
    ref = oracle.gaussian_tradeoff(a, mu)
    got = uf.gaussian_tradeoff(a, mu)
    if ref < mp.mpf("1e-300"):
        assert got <= 1e-290
        return
    record_accuracy("gaussian_tradeoff", oracle.rel_error(got, ref), "relative",
                    "a in [1e-300, 1 - 1e-16] x mu in [1e-8, 30], 84 points, where G >= 1e-300")
    assert got == pytest.approx(float(ref), rel=2e-13, abs=0)


# gdp_delta: relative 1e-13 for mu >= 0.1; 1e-11 for mu in [0.01, 0.1) (conditioning |u|/mu).
# The small-mu form (mu <= 0.01, 0 <= eps <= 1/2) has no such factor: its points are eps = z mu
# for z from 0 to 30, down to mu = 2.2e-308 (where the difference of Mills ratios lost every digit).
SMALL_MU = (0.01, 1e-3, 1e-8, 1e-30, 1e-150, 1e-300, 2.2250738585072014e-308)
GDP_POINTS = ([(e, m) for m in (0.01, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 50.0)
               for e in (0.0, 1e-6, 0.01, 0.5, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0)]
              + [(z * m, m) for m in SMALL_MU for z in (0.5, 3.0, 10.0, 30.0)])


def _small_mu_form(eps: float, mu: float) -> bool:
    return mu <= 0.01 and 0.0 <= eps <= 0.5


@pytest.mark.parametrize("eps,mu", GDP_POINTS)
def test_gdp_delta_vs_mpmath(eps, mu, record_accuracy):
    ref = oracle.gdp_delta(eps, mu, dps=60)
    got = uf.gdp_delta(eps, mu)
    if ref < mp.mpf("1e-300"):
        assert got == 0 or got == pytest.approx(float(ref), rel=1e-6, abs=0)  # subnormal range
        return
    # the claim is relative error in units of the conditioning max(1, |u|/mu), u = mu/2 - eps/mu,
    # outside the small-mu form; plain relative error inside it
    scale = 1.0 if _small_mu_form(eps, mu) else max(1.0, abs(0.5 * mu - eps / mu) / mu)
    regime = ("eps in [0, 1000] x mu in [0.01, 50] and eps = z mu, z in [0.5, 30] x mu in [2.2e-308, 0.01], "
              "118 points, where delta >= 1e-300; error / max(1, |u|/mu) outside mu <= 0.01, eps <= 1/2")
    record_accuracy("gdp_delta", oracle.rel_error(got, ref) / scale, "relative", regime)
    if ref <= 0.5:  # near delta = 1, log delta -> 0 and only its absolute error stays ~1e-16
        with mp.workdps(60):
            log_ref = mp.log(ref)
        record_accuracy("gdp_log_delta", oracle.rel_error(uf.gdp_log_delta(eps, mu), log_ref) / scale, "relative",
                        regime.replace("delta >= 1e-300", "1e-300 <= delta <= 0.5"))
    rtol = 1e-13 if mu >= 0.1 or _small_mu_form(eps, mu) else 1e-11
    assert got == pytest.approx(float(ref), rel=rtol, abs=0)


# delta(0) = erf(mu/(2 sqrt 2)) ~ 0.4 mu: at small mu the targets are ratios delta/mu
GDP_EPS_POINTS = ([(d, m) for m in (0.01, 0.1, 0.5, 1.0, 3.0, 10.0, 50.0)
                   for d in (1e-300, 1e-100, 1e-30, 1e-10, 1e-5, 1e-3, 0.05)]
                  + [(r * m, m) for m in SMALL_MU[1:] for r in (0.3, 1e-3, 1e-10, 1e-100) if r * m >= 1e-300])


@pytest.mark.parametrize("delta,mu", GDP_EPS_POINTS)
def test_gdp_epsilon_vs_mpmath(delta, mu, record_accuracy):
    got = uf.gdp_epsilon(delta, mu)
    d0 = float(mp.erf(mp.mpf(mu) / (2 * mp.sqrt(2))))
    if delta >= d0:
        assert got == 0.0
        return
    # the root in z = eps/mu (findroot's tolerance is absolute: eps itself may be 1e-300)
    with mp.workdps(60):
        g = lambda z: mp.log(oracle.gdp_delta(z * mp.mpf(mu), mu, dps=60)) - mp.log(delta)  # noqa: E731
        ref = mp.findroot(g, mp.mpf(got) / mu * (1 + mp.mpf("1e-9"))) * mp.mpf(mu)
    rtol = 1e-13  # measured 1.8e-15 (mu >= 0.1), 7.2e-15 (mu = 0.01), 6e-16 (mu < 0.01)
    record_accuracy("gdp_epsilon", oracle.rel_error(got, ref), "relative",
                    "delta in [1e-300, 0.05] x mu in [0.01, 50] and delta = r mu, r in [1e-100, 0.3] x "
                    "mu in [2.2e-308, 1e-3], 65 points, where delta < delta(0)")
    assert got == pytest.approx(float(ref), rel=rtol, abs=0)


def test_mu_poisson_drs_vs_mpmath(record_accuracy):
    worst = 0.0
    for s in (0.05, 0.3, 1.0, 5.0, 50.0, 1e3, 1e4):
        with mp.workdps(50):
            S = mp.mpf(s)
            br = mp.exp(1 / S**2) * mp.ncdf(3 / (2 * S)) + 3 * mp.ncdf(-1 / (2 * S)) - 2
            ref = mp.mpf("0.01") * mp.sqrt(2 * 1000 * br)
        worst = max(worst, oracle.rel_error(uf.gdp_mu_poisson_drs(s, 0.01, 1000), ref))
        if s == 1e4:
            record_accuracy("gdp_mu_poisson_drs", worst, "relative", "sigma in [0.05, 1e4], 7 points")
        assert uf.gdp_mu_poisson_drs(s, 0.01, 1000) == pytest.approx(float(ref), rel=1e-14, abs=0)
        with mp.workdps(50):
            refb = mp.mpf("0.01") * mp.sqrt(1000 * mp.expm1(1 / mp.mpf(s) ** 2))
        assert uf.gdp_mu_poisson(s, 0.01, 1000) == pytest.approx(float(refb), rel=1e-14, abs=0)


def test_drs_ratio_limits():
    r = lambda s: uf.gdp_mu_poisson_drs(s, 0.1, 100) / uf.gdp_mu_poisson(s, 0.1, 100)  # noqa: E731
    assert r(0.1) == pytest.approx(np.sqrt(2), rel=1e-3, abs=0)
    assert r(1e3) == pytest.approx(1.0, rel=1e-3, abs=0)


def test_mills_ratio_vs_mpmath(record_accuracy):
    xs = (-1e4, -300.0, -40.0, -10.0, -5.0001, -4.999, -1.0, 0.0, 3.0)
    worst = 0.0
    for x in xs:
        with mp.workdps(40):
            ref = mp.ncdf(x) / mp.npdf(x)
            worst = max(worst, oracle.ulp_error(uf.normal_mills(x), ref))
        assert uf.normal_mills(x) == pytest.approx(float(ref), rel=2e-15, abs=0)
    record_accuracy("normal_mills", worst, "ulp", f"x in [-1e4, 3], {len(xs)} points")


def test_mills_overflow_no_flag():
    # R(x) = Phi(x)/n(x) exceeds DBL_MAX above 37.6527...: the answer is +inf, returned without
    # dividing by a subnormal n(x) (which would raise the overflow flag on (37.65, 38]).
    x0 = float.fromhex("0x1.2d38c6d50394ep+5")
    above = np.concatenate([x0 + np.arange(1, 2000) * np.spacing(x0), np.linspace(37.66, 38.5, 1001)])
    with np.errstate(all="raise"):
        assert np.all(np.isinf(uf.normal_mills(above)))
    # just below, the quotient is finite and matches mpmath (the n(x) subnormal regime)
    with mp.workdps(40):
        ref = mp.ncdf(x0) / mp.npdf(x0)
    assert ref < mp.mpf(np.finfo(float).max) < mp.ncdf(np.nextafter(x0, 99)) / mp.npdf(np.nextafter(x0, 99))
    with np.errstate(under="ignore"):
        assert uf.normal_mills(x0) == pytest.approx(float(ref), rel=1e-14, abs=0)


def test_max_gap_vs_mpmath(record_accuracy):
    worst = 0.0
    for mu in (1e-10, 1e-3, 0.5, 2.0, 20.0):
        for d in (0.0, 1e-6, 0.1):
            with mp.workdps(40):
                ref = 1 - (1 - mp.mpf(d)) * 2 * mp.ncdf(-mp.mpf(mu) / 2)
                worst = max(worst, oracle.ulp_error(uf.gaussian_max_gap(mu, d), ref))
            assert uf.gaussian_max_gap(mu, d) == pytest.approx(float(ref), rel=1e-15, abs=0)
    record_accuracy("gaussian_max_gap", worst, "ulp", "mu in [1e-10, 20], delta in [0, 0.1], 15 points")


@pytest.mark.slow  # ~2 s
def test_clt_small_sigma_terminates_and_keeps_its_edges():
    # Below sigma ~ 0.048 a uniform panel grid (step 6 sigma) would overflow the edge array (the
    # last panel then spanning the rest of the range), and below sigma ~ 1e-14 the edge loop must
    # still finish.  Run in a subprocess so a regression fails instead of hanging the suite.
    import subprocess
    import sys as _sys
    code = ("from dpbounds import _ufuncs as U\n"
            "import numpy as np\n"
            "with np.errstate(all='ignore'):\n"
            "    for s in (1e-300, 1e-20, 1e-14, 1e-5, 0.01):\n"
            "        U.tradeoff_clt(0.5, s, 3.0); U.tradeoff_clt_truncated(0.5, s, 3.0); U.tradeoff_clt_slope(0.5, s, 3.0)\n"
            "print('ok')\n")
    r = subprocess.run([_sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
    for sigma in (0.04, 0.045, 0.047):       # the regime where a uniform edge array would overflow
        for a, M in ((0.5, 3.0), (0.1, 100.0), (1e-6, 1e6)):
            ref, err = oracle.tradeoff_clt(a, sigma, M)
            assert err < 1e-20
            assert abs(uf.tradeoff_clt(a, sigma, M) - float(ref)) <= 1e-14, (a, sigma, M)


# Small sigma, where w = e^{1/sigma^2} overflows (sigma < 0.0375) and A(z) is formed in log space.
# Two defects lived here: the vector integrand clamped the exponent before subtracting ln D (f was
# 0.0055 too high at sigma = 0.01), and the truncated curve took h = inf (so it was the untruncated
# one: 0.36 instead of 1e-39 at sigma = 0.035, M = 1e15).  Below 0.03 the answer is refused.
@pytest.mark.parametrize("a,sigma,M", [(1e-10, 0.03, 1e15), (0.5, 0.03, 2.0), (0.3, 0.032, 3.0),
                                        (0.01, 0.035, 100.0), (0.5, 0.035, 1e15), (0.9, 0.036, 1e6)])
def test_clt_small_sigma_vs_mpmath(a, sigma, M):
    ref, err = oracle.tradeoff_clt(a, sigma, M)
    assert err < 1e-20
    assert abs(uf.tradeoff_clt(a, sigma, M) - float(ref)) <= 2e-14
    ref_t, err_t = oracle.tradeoff_clt(a, sigma, M, truncated=True)
    assert err_t < 1e-20
    assert abs(uf.tradeoff_clt_truncated(a, sigma, M) - float(ref_t)) <= 2e-14


def test_clt_below_min_sigma_is_refused():
    for s in (0.029, 0.01, 1e-5):
        assert np.isnan(uf.tradeoff_clt(0.5, s, 3.0)) and np.isnan(uf.tradeoff_clt_truncated(0.5, s, 3.0))
        with pytest.raises(dpbounds.DPBoundsError, match=r"^sigma must be >= 0.03"):
            dpbounds.tradeoff_clt(0.5, s, 3.0)
        with pytest.raises(dpbounds.DPBoundsError, match=r"^sigma must be >= 0.03"):
            dpbounds.tradeoff_clt([0.1, 0.5], [1.0, s], 3.0, truncated=True)
    assert uf.tradeoff_clt(0.0, 0.01, 3.0) == 1.0 and uf.tradeoff_clt(1.0, 0.01, 3.0) == 0.0
