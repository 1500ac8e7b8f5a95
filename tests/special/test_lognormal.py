"""Lognormal moments and the Theorem 3.1 coefficients vs the mpmath oracle (docs/theorem31.md)."""
import warnings

import numpy as np
import oracle
import pytest

import dpbounds
from dpbounds import ufuncs

RTOL = 1e-14  # stated in csrc/dpb_lognormal.h and lognormal_moments' docstring

SIGMAS = np.unique(np.concatenate([
    np.logspace(np.log10(0.07), 4, 250),
    [0.07, 0.0915, 0.1, 0.208, 0.25, 0.5, 0.75, 1.0, 1.2499999999999998, 1.25, 1.2500000000000002,
     1.5, 2.0, 4.0, 5.0, 6.0, 100.0, 1e4,
     # branch points: closed form/series at 0.85, series lengths at y = 0.64, 0.25, 0.04, 0.01
     0.8499999999999999, 0.85, 0.8500000000000001, 1.2499, 1.9999999, 2.0000001, 4.9999999, 5.0000001,
     9.9999999, 10.0000001],
]))

CASES = [
    ("variance", ufuncs.lognormal_variance, oracle.variance),
    ("mu3", ufuncs.lognormal_mu3, oracle.mu3),
    ("mu4", ufuncs.lognormal_mu4, oracle.mu4),
    ("rho3", ufuncs.lognormal_rho3, oracle.rho3_closed),
    ("coef_simplified", ufuncs.coef_simplified, oracle.coef_simplified),
    ("coef_exact", ufuncs.coef_exact, oracle.coef_exact),
]


@pytest.mark.parametrize("name,f,ref", CASES, ids=[c[0] for c in CASES])
def test_accuracy(name, f, ref, record_accuracy):
    got = f(SIGMAS)
    worst = 0.0
    for g, s in zip(got, SIGMAS):
        r = ref(s)
        if r > np.finfo(float).max:
            assert g == np.inf, (name, s)
            continue
        e = oracle.rel_error(g, r)
        worst = max(worst, e)
        assert e <= RTOL, f"{name}({s!r}) = {g!r}, rel error {e:.2e}"
    assert worst > 0 or name == "variance"  # the comparison really ran
    record_accuracy(name if name.startswith("coef") else f"lognormal_{name}", worst, "relative",
                    f"sigma in [0.07, 1e4], {SIGMAS.size} points")


def test_lognormal_moments_fields(record_accuracy):
    # every field of dpbounds.lognormal_moments, including the skewness and kurtosis it forms
    # from the variance in Python, against the oracle: the docstring's 1e-14
    m = dpbounds.lognormal_moments(SIGMAS)
    worst = 0.0
    for i, s in enumerate(SIGMAS):
        v = oracle.variance(s)
        refs = (v, oracle.mu3(s), oracle.mu4(s), oracle.rho3_closed(s), (v + 3) * oracle.mp.sqrt(v),
                v * (16 + v * (15 + v * (6 + v))))
        for got, r in zip(m, refs):
            if r > np.finfo(float).max:
                assert got[i] == np.inf, s
                continue
            worst = max(worst, oracle.rel_error(got[i], r))
    record_accuracy("dpbounds.lognormal_moments", worst, "relative",
                    f"sigma in [0.07, 1e4], {SIGMAS.size} points, all six fields")
    assert 0 < worst <= RTOL


@pytest.mark.parametrize("sigma", [0.3, 0.5, 1.0, 1.7, 3.0, 10.0])
def test_rho3_closed_form_equals_quadrature(sigma):
    # the oracle's closed form (Prop. D.2) checked against direct integration of E|Y-1|^3
    assert oracle.rel_error(float(oracle.rho3_closed(sigma)), oracle.rho3_quad(sigma)) < 1e-15
    assert oracle.rel_error(dpbounds.lognormal_rho3(sigma), oracle.rho3_quad(sigma)) <= RTOL


def test_rho3_large_sigma_asymptote():
    # rho3 ~ sqrt(8/pi)/sigma^3 (E|Z|^3), coef_exact ~ sqrt(8/pi) sigma, coef_simplified ~ 5 sigma^4
    s = 1e4
    assert dpbounds.lognormal_rho3(s) * s**3 == pytest.approx(np.sqrt(8 / np.pi), rel=1e-7, abs=0)
    assert ufuncs.coef_exact(100.0) / (np.sqrt(8 / np.pi) * 100) == pytest.approx(1.00014, abs=1e-5)
    assert ufuncs.coef_simplified(100.0) / (5 * 100.0**4) == pytest.approx(0.99996, abs=1e-5)


def test_overflow_is_inf_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            assert ufuncs.lognormal_mu4(0.09) == np.inf
            assert ufuncs.lognormal_mu3(0.06) == np.inf
            assert ufuncs.lognormal_rho3(0.06) == np.inf
            assert ufuncs.coef_simplified(0.03) == np.inf
            assert ufuncs.coef_exact(0.03) == np.inf
            assert np.isfinite(ufuncs.coef_exact(0.05))


def test_domain():
    for f in (ufuncs.lognormal_variance, ufuncs.lognormal_mu3, ufuncs.lognormal_mu4, ufuncs.lognormal_rho3,
              ufuncs.coef_simplified, ufuncs.coef_exact):
        assert np.isnan(f(np.nan)) and np.isnan(f(0.0)) and np.isnan(f(-1.0)) and np.isnan(f(-np.inf))
    assert ufuncs.lognormal_rho3(np.inf) == 0.0 and ufuncs.lognormal_variance(np.inf) == 0.0


def test_coef_ordering_and_section31_claims():
    s = np.logspace(np.log10(0.07), 4, 500)
    assert np.all(ufuncs.coef_simplified(s) >= ufuncs.coef_exact(s))
    # section 3.1: the coefficients differ by 0.1% at sigma = 0.5 and 10% at 0.75
    r05 = ufuncs.coef_simplified(0.5) / ufuncs.coef_exact(0.5) - 1
    r075 = ufuncs.coef_simplified(0.75) / ufuncs.coef_exact(0.75) - 1
    assert round(r05 * 100, 1) == 0.1 and round(r075 * 100) == 10


def test_lognormal_moments_api():
    m = dpbounds.lognormal_moments(1.0)
    w = np.e
    assert m.variance == pytest.approx(w - 1, rel=1e-15, abs=0)
    assert m.skewness == pytest.approx((w + 2) * np.sqrt(w - 1), rel=1e-14, abs=0)
    assert m.excess_kurtosis == pytest.approx(w**4 + 2 * w**3 + 3 * w**2 - 6, rel=1e-14, abs=0)
    big = dpbounds.lognormal_moments(1e4)
    with oracle.workdps():
        e = oracle.mp.expm1(oracle.mp.mpf(1e-8))
        kurt = (1 + e) ** 4 + 2 * (1 + e) ** 3 + 3 * (1 + e) ** 2 - 6
    assert oracle.rel_error(big.excess_kurtosis, kurt) < 1e-14
    arr = dpbounds.lognormal_moments([0.5, 2.0])
    assert arr.rho3.shape == (2,)
    with pytest.raises(ValueError, match="sigma"):
        dpbounds.lognormal_moments(-1.0)
