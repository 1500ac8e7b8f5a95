"""Properties, identities, NaN sweep and argument validation for dpbounds.tradeoff."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dpbounds import _ufuncs as core
from dpbounds import _ufuncs as uf
from dpbounds import tradeoff as T

settings.register_profile("tradeoff", deadline=None, max_examples=60)
settings.load_profile("tradeoff")

unit = st.floats(0.0, 1.0)
sigmas = st.floats(0.3, 50.0)
rounds = st.integers(3, 10**12).map(float)
mus = st.floats(0.0, 20.0)


@given(sigma=sigmas, M=rounds)
def test_clt_decreasing_and_below_diagonal(sigma, M):
    a = np.concatenate([[0.0], np.logspace(-30, -1, 12), np.linspace(0.1, 0.9, 9), 1 - np.logspace(-1, -14, 8), [1.0]])
    f = uf.tradeoff_clt(a, sigma, M)
    assert np.all(np.diff(f) <= 1e-15)
    assert np.all(f >= 0) and np.all(f <= 1 - a + 1e-15)
    assert f[0] == 1.0 and f[-1] == 0.0
    ft = uf.tradeoff_clt_truncated(a, sigma, M)
    assert np.all(ft <= f + 1e-15) and np.all(ft >= 0)


@given(sigma=st.floats(0.5, 20.0), M=st.integers(10, 10**8).map(float))
def test_clt_slope_nondecreasing(sigma, M):
    a = np.linspace(0.02, 0.98, 25)
    s = uf.tradeoff_clt_slope(a, sigma, M)
    assert np.all(s < 0)
    assert np.all(np.diff(s) >= -1e-9 * np.abs(s[1:]))  # convex on this range


@given(a=unit, mu=mus)
def test_gaussian_tradeoff_range_and_g0(a, mu):
    g = T.gaussian_tradeoff(a, mu)
    assert 0.0 <= g <= 1.0 - a + 1e-15
    assert T.gaussian_tradeoff(a, 0.0) == 1.0 - a


@given(a=unit, mu=st.floats(0, 5), E=st.integers(1, 50))
def test_gaussian_composition_identity(a, mu, E):
    mu_e = T.gaussian_compose(mu, E)
    assert mu_e == pytest.approx(mu * np.sqrt(E))
    # G_mu (x) G_mu = G_{mu sqrt 2}: check via the GDP delta profile, which multiplies correctly
    assert T.gdp_delta(1.0, T.gaussian_compose(mu, 2)) == pytest.approx(T.gdp_delta(1.0, np.hypot(mu, mu)), rel=1e-12, abs=1e-300)


@given(a=unit, mu=mus, d=st.floats(0.0, 0.5))
def test_tensor_with_f0delta(a, mu, d):
    v = T.gaussian_f0delta_tradeoff(a, mu, d)
    assert v <= T.gaussian_tradeoff(a, mu) + 1e-15       # tensoring only lowers the curve
    assert v <= T.f0delta_tradeoff(a, d) + 1e-15 or mu == 0 and abs(v - T.f0delta_tradeoff(a, d)) < 1e-15
    assert T.gaussian_f0delta_tradeoff(a, mu, 0.0) == T.gaussian_tradeoff(a, mu)
    assert T.gaussian_f0delta_tradeoff(a, 0.0, d) == pytest.approx(T.f0delta_tradeoff(a, d), abs=1e-15)


@given(d1=st.floats(0, 0.5), d2=st.floats(0, 0.5), a=unit)
def test_f0delta_composition(d1, d2, a):
    # f_{0,d1} (x) f_{0,d2} = f_{0, 1-(1-d1)(1-d2)};  E-fold: 1 - (1-d)^E
    assert T.f0delta_compose(d1, 2) == pytest.approx(1 - (1 - d1) ** 2, abs=1e-15)
    assert T.multi_epoch_tradeoff(a, d1, 3) == pytest.approx(max((1 - d1) ** 3 - a, 0.0), abs=1e-15)
    assert T.multi_epoch_tradeoff(a, d1, 1) == pytest.approx(T.f0delta_tradeoff(a, d1), abs=1e-15)


def test_f0delta_compose_tiny_delta():
    assert T.f0delta_compose(1e-20, 1000) == pytest.approx(1e-17, rel=1e-12)


@given(mu=st.floats(0.01, 10), d=st.floats(0, 0.3))
def test_max_gap_attained(mu, d):
    a = np.unique(np.concatenate([np.linspace(0, 1, 20001), np.logspace(-12, 0, 4001)]))
    gap = np.max(1 - a - uf.gaussian_f0delta_tradeoff(a, mu, d))
    assert gap <= T.gaussian_max_gap(mu, d) + 1e-15
    assert gap >= T.gaussian_max_gap(mu, d) - 1e-6
    # attained at a* = Phi(-mu/2) for d = 0
    astar = core.ndtr(-mu / 2)
    assert 1 - astar - T.gaussian_tradeoff(astar, mu) == pytest.approx(T.gaussian_max_gap(mu), rel=1e-12)


def test_sep_conventions():
    assert T.sep_gaussian(1.0) == pytest.approx(T.gaussian_max_gap(1.0) / np.sqrt(2))
    assert T.sep_gaussian(1.0, convention="text") == pytest.approx(T.gaussian_max_gap(1.0) / 2)
    assert T.sep(lambda g: T.gaussian_tradeoff(g, 1.0)) == pytest.approx(T.sep_gaussian(1.0), rel=1e-7)
    # sep(f (x) f_{0,d}) = sep f + sep h - sqrt2 sep f sep h  (equality for h = f_{0,d})
    mu, d = 0.7, 0.05
    sf, sh = T.sep_gaussian(mu), d / np.sqrt(2)
    assert T.sep_gaussian(mu, d) == pytest.approx(sf + sh - np.sqrt(2) * sf * sh, rel=1e-12)


@given(a=unit, sigma=st.floats(0.5, 10), M=st.integers(3, 10**9).map(float))
def test_gaussian_above_lower_bound(a, sigma, M):
    lb = T.tradeoff_lower_bound(a, sigma, M)
    mu = np.sqrt(np.expm1(1 / sigma**2) / (M - 1))
    if not np.isnan(lb):
        assert T.gaussian_tradeoff(a, mu) >= lb
        assert T.tradeoff_clt(a, sigma, M) >= lb - 1e-15


def test_lower_bound_nan_exactly_where_invalid():
    s, M = np.meshgrid(np.geomspace(0.3, 20, 25), np.geomspace(3, 1e12, 25))
    for coef, dbound in (("exact", core.delta_bound_exact), ("simplified", core.delta_bound_simplified)):
        lb = T.tradeoff_lower_bound(0.3, s, np.round(M), coefficient=coef)
        db = dbound(s, np.round(M))
        np.testing.assert_array_equal(np.isnan(lb), np.isnan(db))
        ok = ~np.isnan(db)
        assert ok.any() and (~ok).any()
        np.testing.assert_allclose(lb[ok], np.maximum(0.7 - db[ok], 0.0), atol=1e-15)


@given(eps=st.floats(0, 50), mu=st.floats(0.05, 20))
def test_gdp_round_trip(eps, mu):
    d = T.gdp_delta(eps, mu)
    if d < 1e-290 or d <= 0:
        return
    e2 = T.gdp_epsilon(d, mu)
    # conditioning: a relative error r in delta moves eps by r delta / |delta'(eps)|,
    # delta'(eps) = -e^eps Phi(-eps/mu - mu/2)
    slope = np.exp(eps + core.log_ndtr(-eps / mu - mu / 2))
    assert e2 == pytest.approx(eps, rel=1e-9, abs=1e-9 + 1e-15 * d / slope)


@given(eps=st.floats(0, 30), mu=st.floats(0.05, 10))
def test_gdp_delta_is_hockey_stick(eps, mu):
    # delta(eps) = max_a (1 - G_mu(a) - e^eps a), attained at a = Phi(-eps/mu - mu/2)
    a = core.ndtr(-eps / mu - mu / 2)
    v = 1 - T.gaussian_tradeoff(a, mu) - np.exp(eps) * a
    assert T.gdp_delta(eps, mu) == pytest.approx(v, rel=1e-6, abs=1e-15)


def test_gdp_edges():
    assert T.gdp_delta(np.inf, 1.0) == 0.0
    assert T.gdp_delta(0.0, 0.0) == 0.0
    assert T.gdp_epsilon(0.0, 1.0) == np.inf
    assert T.gdp_epsilon(0.5, 1.0) == 0.0
    assert T.gdp_epsilon(0.1, 0.0) == 0.0
    assert T.gdp_delta(1e4, 1.0) == 0.0  # underflow, no warning


def test_mu_random_allocation_vs_poisson():
    # same limit c sqrt(w - 1) for E = c^2 M epochs  <->  p = 1/M, T = E M steps
    s, M, E = 1.3, 1e6, 4.0
    ra = T.gdp_mu_random_allocation(s, M, E)
    po = T.gdp_mu_poisson(s, 1 / M, E * M)
    assert ra == pytest.approx(po, rel=1e-6)
    assert ra == pytest.approx(np.sqrt(E / M) * np.sqrt(np.expm1(1 / s**2)), rel=1e-6)


# ---------------------------------------------------------------- NaN sweep
from dpbounds._ufunc_table import UFUNCS as _SPECS  # noqa: E402

# the trade-off and Gaussian-DP ufuncs (tests/special/test_ufunc_infra.py sweeps every ufunc of the table)
UFUNCS = [getattr(uf, u.name) for u in _SPECS if u.group in ("tradeoff", "gdp")]


@pytest.mark.parametrize("f", UFUNCS, ids=lambda f: f.__name__)
def test_nan_in_nan_out(f):
    good = {1: [0.5], 2: [0.5, 1.0], 3: [0.5, 1.0, 10.0]}[f.nin]
    for i in range(f.nin):
        args = list(good)
        args[i] = np.nan
        r = f(*args)
        if f.__name__ == "edgeworth_status":
            assert r == 1
        else:
            assert np.isnan(r), (f.__name__, i)


def test_out_of_domain_is_quiet_nan():
    # underflow to subnormal results is legitimate (numpy ignores it by default)
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        assert np.isnan(uf.tradeoff_clt(1.5, 1.0, 10))
        assert np.isnan(uf.tradeoff_clt(0.5, -1.0, 10))
        assert np.isnan(uf.tradeoff_clt(0.5, 1.0, 1.0))
        assert np.isnan(uf.gaussian_tradeoff(0.5, -1.0))
        assert np.isnan(uf.gdp_epsilon(2.0, 1.0))
        assert np.isnan(uf.gdp_delta(1.0, -1.0))
        # extreme but valid inputs raise no FP flag
        uf.tradeoff_clt(np.array([1e-320, 1e-300, 1 - 1e-16]), 0.05, 1e15)
        uf.tradeoff_clt_slope(np.array([1e-300, 0.5]), 0.3, 3.0)
        uf.tradeoff_edgeworth(np.array([1e-300, 0.5, 1 - 1e-16]), 0.3, 3.0)
        uf.gdp_delta(np.array([0.0, 1e3, 1e300]), np.array([1e-300, 1.0, 1e300]))
        uf.gdp_epsilon(np.array([1e-320, 0.5]), np.array([1e-3, 1e3]))


def test_exact_endpoints():
    assert uf.tradeoff_clt(0.0, 1.0, 10) == 1.0 and uf.tradeoff_clt(1.0, 1.0, 10) == 0.0
    assert uf.tradeoff_edgeworth(0.0, 1.0, 10) == 1.0 and uf.tradeoff_edgeworth(1.0, 1.0, 10) == 0.0
    assert uf.gaussian_tradeoff(0.0, 2.0) == 1.0 and uf.gaussian_tradeoff(1.0, 2.0) == 0.0
    # infinite sigma or M: 1 - a is the limit, but the declared domain (finite sigma, integer M)
    # excludes them and the raw ufunc answers NaN there, like every argument outside its domain
    # (tests/special/test_ufunc_domain.py); the validated API refuses them
    assert np.isnan(uf.tradeoff_clt(0.3, np.inf, 10)) and np.isnan(uf.tradeoff_clt(0.3, 1.0, np.inf))


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize("call,name", [
    (lambda: T.tradeoff_clt(1.2, 1.0, 10), "a"),
    (lambda: T.tradeoff_clt(0.5, 0.0, 10), "sigma"),
    (lambda: T.tradeoff_clt(0.5, 1.0, 10.5), "rounds"),
    (lambda: T.tradeoff_edgeworth(0.5, 1.0, 2), "rounds"),
    (lambda: T.tradeoff_lower_bound(0.5, 1.0, 100, coefficient="bogus"), "coefficient"),
    (lambda: T.gaussian_tradeoff(0.5, -1), "mu"),
    (lambda: T.gdp_delta(np.nan, 1.0), "eps"),
    (lambda: T.gdp_epsilon(1.5, 1.0), "delta"),
    (lambda: T.sep_gaussian(1.0, convention="half"), "convention"),
    (lambda: T.gdp_mu_poisson(1.0, 2.0, 10), "sample_rate"),
])
def test_validation_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_scalar_and_array_outputs():
    assert isinstance(T.tradeoff_clt(0.5, 1.0, 10), float)
    r = T.tradeoff_clt(np.array([[0.1], [0.5]]), np.array([1.0, 2.0]), 10)
    assert r.shape == (2, 2)


# ---------------------------------------------------------------- mu-GDP at small mu
@given(st.floats(-300.0, -2.0), st.floats(-100.0, np.log10(0.39)))
@settings(max_examples=300)
def test_gdp_small_mu_round_trip(log_mu, log_ratio):
    # the small-mu forms of delta and of its inverse agree with each other: delta(eps(d)) = d
    # (eps = z mu is well conditioned: d log delta / d log eps ~ -z^2 <= ~1500)
    assume(log_mu + log_ratio >= -300.0)   # delta a normal double (d/2 too)
    mu = 10.0 ** log_mu
    d = 10.0 ** log_ratio * mu
    eps = uf.gdp_epsilon(d, mu)
    assert eps > 0
    assert uf.gdp_delta(eps, mu) == pytest.approx(d, rel=2e-12, abs=0)
    assert uf.gdp_epsilon(d * 0.5, mu) > eps          # smaller delta, larger eps


@pytest.mark.parametrize("d_over_mu", [0.3, 1e-3, 1e-30])
def test_gdp_continuous_across_the_small_mu_switch(d_over_mu):
    # mu = 0.01 is computed by the small-mu form, the next double above by the general one
    mu_lo = 0.01
    mu_hi = np.nextafter(mu_lo, 1.0)
    d = d_over_mu * mu_lo
    assert uf.gdp_epsilon(d, mu_lo) == pytest.approx(uf.gdp_epsilon(d, mu_hi), rel=1e-13)
    eps = 0.3 * uf.gdp_epsilon(d, mu_lo)
    assert uf.gdp_delta(eps, mu_lo) == pytest.approx(uf.gdp_delta(eps, mu_hi), rel=1e-13)
    assert uf.gdp_delta(0.5, mu_lo) == pytest.approx(uf.gdp_delta(np.nextafter(0.5, 1.0), mu_lo), rel=1e-13)
