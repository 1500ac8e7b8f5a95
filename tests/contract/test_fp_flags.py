"""No IEEE flag from any raw ufunc at the hard doubles, except a genuine overflow.

The rule (docs/fuzzing.md): a ufunc raises the overflow flag only where its true value is finite
but beyond the largest double, so the inf it returns is that value rounded -- as numpy's own
``np.exp(1000)`` does.  It never raises divide-by-zero or invalid, and no flag at all where inf or
NaN is an exact limit, a sentinel ("unreachable") or a refusal.  Every ufunc of the declaration
table is called with each argument in turn set to each probe below (the others at the ufunc's
valid point), so a new ufunc is checked without being listed here; and random valid points with
every argument varying, over the working range.
"""
import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from dpbounds import _ufuncs as U
from dpbounds._dispatch import MAY_OVERFLOW
from dpbounds._ufunc_table import UFUNCS

PROBES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-200,
          1e-160, 1e-17, 0.01, 0.03, 0.07, 40.0, -40.0, 1e4, 2.0 ** 53, 1e154, 1e155, 1e200, -1e200,
          1e308, -1e308]

# (ufunc, argument) -> why an overflow flag is the right behaviour there (the true value overflows).
GENUINE_OVERFLOW = {
    ("min_dataset_size", "sigma"): "clip_norm sigma rounds / noise_ratio beyond DBL_MAX (plain arithmetic, "
                                   "documented in dpbounds.outer like numpy's)",
    ("min_dataset_size", "rounds"): "as for sigma",
    ("min_dataset_size", "clip_norm"): "as for sigma",
    ("min_dataset_size", "noise_ratio"): "as for sigma",
    ("rdp_laplace", "b"): "the RDP exceeds 1/b + log(alpha/(2 alpha - 1))/(alpha - 1) > DBL_MAX at b = 5e-324",
}



def test_every_overflowing_ufunc_is_redirected():
    # the ufuncs that may flag overflow are exactly those whose warning the package re-issues at
    # the caller's line (tests/contract/test_warning_location.py)
    assert {u for u, _ in GENUINE_OVERFLOW} == set(MAY_OVERFLOW)

def _cases():
    for u in UFUNCS:
        for k, a in enumerate(u.args):
            yield pytest.param(u, k, id=f"{u.name}-{a.name}")


@pytest.mark.parametrize("u, k", list(_cases()))
def test_no_flag_at_hard_doubles(u, k):
    f = getattr(U, u.name)
    args = [np.full(len(PROBES), p, dtype=np.float64) for p in u.point]
    args[k] = np.array(PROBES)
    allowed = GENUINE_OVERFLOW.get((u.name, u.args[k].name))
    try:
        with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
            f(*args)
    except FloatingPointError as exc:
        if allowed is None or "overflow" not in str(exc):
            raise
    if allowed is not None:
        # the allowance is only for an overflow to inf: check each probe that flags returns inf
        for p in PROBES:
            one = list(u.point)
            one[k] = p
            try:
                with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
                    f(*one)
            except FloatingPointError as exc:
                assert "overflow" in str(exc)
                with np.errstate(over="ignore"):
                    out = f(*one)
                assert np.isinf(out), (u.name, p, out)


# Two arguments extreme at once (flags no single-argument probe shows, e.g. sigma 0.07 with
# M 1e308 in the CLT set-up, sigma 1e155 with M 1e308 in the Edgeworth branch edges, sigma
# 1.8e308 in Theorem 3.1's exact coefficient; tests/special/test_special_fuzz_regressions.py replays them).  Where an overflow is genuine in a
# pair, the true value is beyond the doubles for the reason given.
GENUINE_PAIR_OVERFLOW = {
    "min_dataset_size": "clip_norm sigma rounds / noise_ratio: any two extreme factors overflow the product",
    "rdp_laplace": "1/b beyond DBL_MAX at b = 5e-324 (as above), for any alpha",
}
THEOREM31_INTERNAL = ("_delta_bound_checked_exact", "_delta_bound_checked_simplified",
                      "delta_terms_exact", "delta_terms_simplified")
PAIR_PROBES = PROBES + [1.7976931348623157e308, 1e15, 3.0]


def _pair_cases():
    for u in UFUNCS:
        for i in range(len(u.args)):
            for j in range(i + 1, len(u.args)):
                yield pytest.param(u.name, u.point, (i, j), id=f"{u.name}-{u.args[i].name}-{u.args[j].name}")
    for name in THEOREM31_INTERNAL:     # (sigma, rounds): the checked and term kernels behind the public API
        yield pytest.param(name, (1.0, 1000.0), (0, 1), id=f"{name}-sigma-rounds")


@pytest.mark.parametrize("name, point, pair", list(_pair_cases()))
def test_no_flag_with_two_extreme_arguments(name, point, pair):
    f = getattr(U, name)
    g0, g1 = np.meshgrid(np.array(PAIR_PROBES), np.array(PAIR_PROBES), indexing="ij")
    args = [np.full(g0.size, p, dtype=np.float64) for p in point]
    args[pair[0]], args[pair[1]] = g0.ravel(), g1.ravel()
    try:
        with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
            f(*args)
        return
    except FloatingPointError as exc:
        if name not in GENUINE_PAIR_OVERFLOW or "overflow" not in str(exc):
            raise
    # an allowed overflow: every flagged point returns inf (the true value rounded), and only overflow
    for k in range(g0.size):
        one = [a[k] for a in args]
        try:
            with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
                f(*one)
        except FloatingPointError as exc:
            assert "overflow" in str(exc), (name, one, exc)
            with np.errstate(over="ignore"):
                out = f(*one)
            assert np.isinf(out), (name, one, out)


def test_genuine_pair_overflow_list_is_needed():
    for name in GENUINE_PAIR_OVERFLOW:
        u = next(v for v in UFUNCS if v.name == name)
        hit = False
        for i in range(len(u.args)):
            for j in range(i + 1, len(u.args)):
                g0, g1 = np.meshgrid(np.array(PAIR_PROBES), np.array(PAIR_PROBES), indexing="ij")
                args = [np.full(g0.size, p, dtype=np.float64) for p in u.point]
                args[i], args[j] = g0.ravel(), g1.ravel()
                try:
                    with np.errstate(over="raise", divide="ignore", invalid="ignore", under="ignore"):
                        getattr(U, name)(*args)
                except FloatingPointError:
                    hit = True
        assert hit, f"{name} no longer overflows at any pair: remove it from GENUINE_PAIR_OVERFLOW"


def test_genuine_overflow_list_is_needed():
    # each allowance must still be exercised: a fixed kernel must leave the list
    for (name, arg), _why in GENUINE_OVERFLOW.items():
        u = next(v for v in UFUNCS if v.name == name)
        k = [a.name for a in u.args].index(arg)
        args = [np.full(len(PROBES), p, dtype=np.float64) for p in u.point]
        args[k] = np.array(PROBES)
        with pytest.raises(FloatingPointError, match="overflow"):
            with np.errstate(over="raise", under="ignore"):
                getattr(U, name)(*args)


def test_rdp_laplace_overflow_is_the_true_value():
    # RDP_alpha(b) = log(alpha/(2 alpha-1) e^{(alpha-1)/b} + (alpha-1)/(2 alpha-1) e^{-alpha/b})/(alpha-1)
    mp.mp.dps = 30
    A, B = mp.mpf(2), mp.mpf(5e-324)
    exact = mp.log(A / (2 * A - 1) * mp.exp((A - 1) / B) + (A - 1) / (2 * A - 1) * mp.exp(-A / B)) / (A - 1)
    assert exact > mp.mpf(np.finfo(np.float64).max)
    with np.errstate(over="ignore"):
        assert U.rdp_laplace(2.0, 5e-324) == math.inf


def _gdp_epsilon_mp(delta, mu):
    """eps of mu-GDP at delta by mpmath: delta = Phi(u) - phi(u) R(u - mu), eps = mu (mu/2 - u)
    (e^eps phi(u - mu) = phi(u) exactly; R the lower-tail Mills ratio), solved for u."""
    mp.mp.dps = 60
    mu, delta = mp.mpf(mu), mp.mpf(delta)

    def g(u):
        v = u - mu
        return mp.ncdf(u) - mp.npdf(u) * mp.ncdf(v) / mp.npdf(v) - delta if v > -30 else \
            mp.ncdf(u) - mp.npdf(u) * mp.mpf(1) / (-v) * (1 - 1 / v ** 2 + 3 / v ** 4) - delta
    u = mp.findroot(g, mp.sqrt(2) * mp.erfinv(2 * delta - 1))
    return mu * (mu / 2 - u)


@pytest.mark.parametrize("mu", [1e150, 1e154, 1.8e154])
def test_gdp_epsilon_at_huge_mu_vs_mpmath(mu):
    # finite and accurate just below the overflow, without an overflow flag
    with np.errstate(all="raise", under="ignore"):
        got = U.gdp_epsilon(1e-5, mu)
    ref = _gdp_epsilon_mp(1e-5, mu)
    assert abs(got - ref) <= 1e-13 * ref


@pytest.mark.parametrize("mu", [1.9e154, 1e155, 1e200, 1.7976931348623157e308])
def test_gdp_epsilon_overflowing_is_inf_without_flag(mu):
    # eps > mu (mu/2 - 8.3) > DBL_MAX: the true value overflows
    assert mp.mpf(mu) * (mp.mpf(mu) / 2 - mp.mpf("8.3")) > mp.mpf(np.finfo(np.float64).max)
    with np.errstate(all="raise"):
        assert U.gdp_epsilon(np.array([1e-300, 1e-5, 0.5, 1 - 2 ** -53]), mu).tolist() == [math.inf] * 4


@pytest.mark.parametrize("steps", [1e300, 1e308, 1.7976931348623157e308])
@pytest.mark.parametrize("sigma", [0.05, 1.0, 30.0])
def test_gdp_mu_at_huge_counts_is_finite(sigma, steps):
    # the products T (w - 1) overflowed although mu does not (it was +inf); mpmath reference
    mp.mp.dps = 40
    s, T, p = mp.mpf(sigma), mp.mpf(steps), mp.mpf("0.01")
    w1 = mp.expm1(1 / s ** 2)
    with np.errstate(all="raise", under="ignore"):
        got = [U.gdp_mu_poisson(sigma, 0.01, steps), U.gdp_mu_poisson_drs(sigma, 0.01, steps),
               U.gdp_mu_random_allocation(sigma, 3.0, steps)]
    drs = p * mp.sqrt(2 * T * (mp.exp(1 / s ** 2) * mp.ncdf(3 / (2 * s)) + 3 * mp.ncdf(-1 / (2 * s)) - 2))
    ref = [p * mp.sqrt(T * w1), drs, mp.sqrt(T * w1 / 2)]
    for g, r in zip(got, ref):
        assert abs(g - r) <= 1e-14 * r, (g, r)


def test_negseries_log_tiny_sigma_limit():
    # every term is -1/(8 sigma^2) + O(log): checked against the loop where it still runs
    # (sigma = 1e-150; its terms i^2/(2 sigma^2) ~ 1e300 cancel to 1e299, so the loop itself is
    # only good to ~1e-13 there), and the closed form below 1e-152 down to where it overflows
    a, q = 2.5, 0.01
    s = 1e-150
    with np.errstate(all="raise", under="ignore"):
        loop = U.rdp_poisson_negseries_log(a, s, q)
        assert abs(loop - (-0.125 / s / s)) <= 1e-13 * abs(loop)
        for s in (1e-153, 1e-154, 3e-155):
            assert U.rdp_poisson_negseries_log(a, s, q) == -(0.125 / s) / s
        assert U.rdp_poisson_negseries_log(a, 2.6e-155, q) == -math.inf
        assert U.rdp_poisson_negseries_log(a, 5e-324, q) == -math.inf


def _edgeworth_p_exact(y: float, dps: int) -> "mp.mpf":
    """The Edgeworth polynomial p_n(y) at sigma = 1, n = 100 in mpmath (the reference of both tests below)."""
    mp.mp.dps = dps
    s, n = mp.mpf(1), mp.mpf(100)
    w = mp.exp(1 / s ** 2)
    c = (w + 2) * mp.sqrt(w - 1) / (6 * mp.sqrt(n))
    d = (w ** 4 + 2 * w ** 3 + 3 * w ** 2 - 6) / (24 * n)
    Y = mp.mpf(y)
    return Y - c * (Y ** 2 - 1) - d * (Y ** 3 - 3 * Y) + c ** 2 * (4 * Y ** 3 - 7 * Y)


def test_no_flag_over_wide_valid_ranges(rng):
    # Random valid points over the whole working range, all arguments varying at once (the
    # probes above vary one or two): sigma in [1e-2, 1e6] and its ends, M up to 1e18, delta down
    # to 1e-300, x in [-1e3, 1e3]
    s = np.concatenate([10 ** rng.uniform(-2, 6, 2000), [1e-300, 0.03, 0.0301, 1e300]])
    m = np.floor(10 ** rng.uniform(0.48, 18, s.size))
    d = 10 ** rng.uniform(-300, -1e-9, s.size)
    x = rng.uniform(-1e3, 1e3, s.size)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
            for f in (U.ndtr, U.log_ndtr, U.normal_pdf):
                f(x)
            U.ndtri(d)
            for f in (U.lognormal_variance, U.lognormal_mu3, U.lognormal_mu4, U.lognormal_rho3,
                      U.coef_simplified, U.coef_exact):
                f(s)
            for c in ("simplified", "exact"):
                getattr(U, f"delta_terms_{c}")(s, m)
                getattr(U, f"theorem31_status_{c}")(s, m, d)
                getattr(U, f"rounds_closed_form_{c}")(s, d)
            U.compose_delta(d, m)
            U.per_epoch_delta(d, m)


def test_rounds_required_no_flag_over_a_wide_range(rng):
    s = 10 ** rng.uniform(-1.5, 2, 300)
    d = 10 ** rng.uniform(-20, -0.01, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
            for name in ("rounds_required_simplified", "rounds_required_exact", "rounds_required_simplified_at_target",
                         "rounds_required_exact_at_target"):
                out = getattr(U, name)(s, d)
                assert np.all((out >= 3) | np.isinf(out))


@pytest.mark.parametrize("y", [1e104, -1e104, 1e154, -1e200, 1e308])
def test_edgeworth_p_at_huge_y_is_the_signed_overflow(y):
    # p(y) ~ (4 c^2 - d) y^3: beyond the doubles with the sign of (4 c^2 - d) y, never NaN
    exact = _edgeworth_p_exact(y, 40)
    assert abs(exact) > mp.mpf(np.finfo(np.float64).max)
    with np.errstate(all="raise", under="ignore"):
        assert U.edgeworth_p(y, 1.0, 100.0) == math.copysign(math.inf, float(exact))


@pytest.mark.parametrize("y", [1e20, -3e40, 1e60, 1e100, 1e103, -1e103])
def test_edgeworth_p_large_finite_y_vs_mpmath(y):
    exact = _edgeworth_p_exact(y, 60)
    with np.errstate(all="raise", under="ignore"):
        got = U.edgeworth_p(y, 1.0, 100.0)
    assert abs(got - exact) <= 1e-14 * abs(exact)


def test_clt_slope_refused_below_sigma_min_like_the_curve():
    # the slope's panels lose accuracy below 0.03 as the curve's do (relative 3.4e-5 at sigma =
    # 0.001 against mpmath); below 1.3e-154 the limit is about -s/2 at a = 1/2, not 0
    sig = np.array([0.029, 1e-3, 1e-100, 1e-160, 5e-324])
    with np.errstate(all="raise", under="ignore"):
        assert np.isnan(U.tradeoff_clt_slope(0.5, sig, 1000.0)).all()
        assert np.isnan(U.tradeoff_clt(0.5, sig, 1000.0)).all()
        # exact endpoints are kept
        assert (U.tradeoff_clt_slope(0.0, sig, 1000.0) == -math.inf).all()
        assert (U.tradeoff_clt_slope(1.0, sig, 1000.0) == 0.0).all()
        assert (U.tradeoff_clt(0.0, sig, 1000.0) == 1.0).all() and (U.tradeoff_clt(1.0, sig, 1000.0) == 0.0).all()
        assert (U.edgeworth_status(0.5, sig, 1000.0) == 32).all()
