"""mpmath oracles for every RDP kernel (formulas and sources: docs/rdp.md).

Each oracle is an independent high-precision evaluation of the defining formula (not of
our algorithm): binomial sums in mpmath at 50+ digits, Pearson-Vajda differences by exact
alternating sums at high precision, and fractional-order Poisson moments by mpmath
quadrature of the defining integral.  Tolerances are stated per regime.
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import oracle
import pytest

import dpbounds
from dpbounds import _kernels, _ufuncs

# ---------------------------------------------------------------- oracles


def o_laplace(a, b):
    a, b = mp.mpf(a), mp.mpf(b)
    if a == 1:
        return 1 / b + mp.exp(-1 / b) - 1
    return mp.log(a / (2 * a - 1) * mp.exp((a - 1) / b) + (a - 1) / (2 * a - 1) * mp.exp(-a / b)) / (a - 1)


def o_rr(a, p):
    a, p = mp.mpf(a), mp.mpf(p)
    if a == 1:
        return (2 * p - 1) * mp.log(p / (1 - p))
    return mp.log(p ** a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)


def o_wor_upper(a, g, eps, eps_inf, improved, logs=None):
    """Theorem 9 / Theorem 27 from the formula (docs/rdp.md); eps(j) an mpmath callable."""
    g = mp.mpf(g)
    s = lambda i: mp.mpf(1) if i < 2 else mp.exp((i - 1) * eps(i))  # noqa: E731
    D = {}

    def Dl(l):
        if l not in D:
            D[l] = mp.fsum((-1) ** (l - i) * mp.binomial(l, i) * s(i) for i in range(l + 1))
        return D[l]

    em = mp.inf if eps_inf == mp.inf else mp.expm1(eps_inf)
    e2 = eps(2)
    tot = g ** 2 * mp.binomial(a, 2) * min(4 * mp.expm1(e2), mp.exp(e2) * min(2, em ** 2))
    for j in range(3, a + 1):
        f = s(j) * min(2, em ** j)
        if improved:
            f = min(f, 4 * mp.sqrt(abs(Dl(2 * (j // 2))) * abs(Dl(2 * ((j + 1) // 2)))))
        tot += g ** j * mp.binomial(a, j) * f
    val = mp.log1p(tot) / (a - 1)
    sub_inf = mp.inf if eps_inf == mp.inf else mp.log1p(g * em)
    return min(val, eps(a), sub_inf)


def o_wor_lower(a, g, eps):
    g = mp.mpf(g)
    tot = mp.fsum(mp.binomial(a, j) * (1 - g) ** (a - j) * g ** j * mp.expm1((j - 1) * eps(j)) for j in range(2, a + 1))
    return mp.log1p(tot) / (a - 1)


def o_poisson_quad(a, sigma, q):
    """A_a - 1 (a > 1) or KL (a == 1) by mpmath quadrature of the defining integral (z ~ N(0, sigma^2))."""
    a, s, q = mp.mpf(a), mp.mpf(sigma), mp.mpf(q)

    def f(z):
        x = q * mp.expm1((2 * z - 1) / (2 * s ** 2))
        if a == 1:
            return ((1 + x) * mp.log1p(x) - x) * mp.npdf(z, 0, s)
        return ((1 + x) ** a - 1 - a * x) * mp.npdf(z, 0, s)

    pts = sorted({-40 * s, -1, 0, mp.mpf(1) / 2, 1, a, a - 12 * s, a + 12 * s, a + 40 * s})
    return mp.quad(f, pts)


def o_poisson(a, sigma, q):
    I = o_poisson_quad(a, sigma, q)  # noqa: E741
    return I if a == 1 else mp.log1p(I) / (a - 1)


def o_mtz_series(a, sigma, q, absolute):
    a, s, q = mp.mpf(a), mp.mpf(sigma), mp.mpf(q)
    z0 = s ** 2 * mp.log(1 / q - 1) + mp.mpf(1) / 2

    def t(i):
        c = mp.binomial(a, i)
        if absolute:
            c = abs(c)
        return c * (q ** i * (1 - q) ** (a - i) * mp.exp((i * i - i) / (2 * s ** 2)) * mp.ncdf((z0 - i) / s)
                    + q ** (a - i) * (1 - q) ** i * mp.exp(((a - i) ** 2 - (a - i)) / (2 * s ** 2)) * mp.ncdf(((a - i) - z0) / s))

    return mp.log(mp.nsum(t, [0, mp.inf])) / (a - 1)


# ---------------------------------------------------------------- base mechanisms

ALPHAS = [1.0, 1.0 + 1e-9, 1.001, 1.5, 2.0, 3.7, 10.0, 100.0, 1e4]


@pytest.mark.parametrize("a", ALPHAS)
def test_laplace_vs_mpmath(a, record_accuracy):
    # 1e-14: the series branch (a/b < 0.5) and the log1p branch are both cancellation-free.
    mp.mp.dps = 40
    for b in [1e-3, 0.1, 0.5, 2.0, 37.0, 1e3, 1e6]:
        e = oracle.rel_error(_ufuncs.rdp_laplace(a, b), o_laplace(a, b))
        record_accuracy("rdp_laplace", e, "relative", f"b in [1e-3, 1e6] x {len(ALPHAS)} orders in [1, 1e4]")
        assert e < 1e-14, (a, b)


@pytest.mark.parametrize("a", ALPHAS)
def test_randomized_response_vs_mpmath(a, record_accuracy):
    # 1e-14: the sinh-product identity removes the cancellation near p = 1/2.
    mp.mp.dps = 60
    for p in [1e-6, 0.1, 0.4, 0.5 + 1e-7, 0.6, 0.9, 1 - 1e-6]:
        e = oracle.rel_error(_ufuncs.rdp_randomized_response(a, p), o_rr(a, p))
        record_accuracy("rdp_randomized_response", e, "relative",
                        f"p in [1e-6, 1 - 1e-6] x {len(ALPHAS)} orders in [1, 1e4]")
        assert e < 1e-14, (a, p)


def test_base_edges(record_accuracy):
    # alpha/(2 sigma^2): two roundings, so <= 2 ulp (measured against mpmath on a grid)
    worst = 0.0
    for a in ALPHAS + [1e6, 1e300]:
        for s in (1e-100, 0.3, 1.0, 1.1, 7.0, 1e100):
            with mp.workdps(40):
                ref = mp.mpf(a) / (2 * mp.mpf(s) ** 2)
                if ref < mp.mpf("1e300"):
                    worst = max(worst, oracle.ulp_error(_ufuncs.rdp_gaussian(a, s), ref))
    record_accuracy("rdp_gaussian", worst, "ulp", f"{len(ALPHAS) + 2} orders in [1, 1e300] x sigma in [1e-100, 1e100]")
    assert worst <= 2
    assert _ufuncs.rdp_gaussian(np.inf, 1.0) == np.inf
    assert _ufuncs.rdp_gaussian(3.0, 2.0) == 3.0 / 8.0
    assert _ufuncs.rdp_laplace(np.inf, 2.0) == 0.5
    assert _ufuncs.rdp_randomized_response(np.inf, 0.9) == pytest.approx(math.log(9.0), rel=1e-15)
    assert _ufuncs.rdp_randomized_response(5.0, 0.5) == 0.0
    for f, bad in [(_ufuncs.rdp_gaussian, 0.0), (_ufuncs.rdp_laplace, -1.0), (_ufuncs.rdp_randomized_response, 1.0)]:
        assert np.isnan(f(2.0, bad))
        assert np.isnan(f(0.5, 0.7))       # alpha < 1 is outside the domain


# ---------------------------------------------------------------- without replacement

# each point is ~1-2 s of mpmath (sigma = 50: more): the fast suite keeps the ends of sigma,
# the slow tier every point
_SLOW = pytest.mark.slow
GRID_WOR = [pytest.param(1.0, 1e-3, marks=_SLOW), pytest.param(1.0, 0.1, marks=_SLOW),
            pytest.param(5.0, 1e-3, marks=_SLOW), (5.0, 0.05), pytest.param(50.0, 0.01, marks=_SLOW),
            pytest.param(50.0, 0.1, marks=_SLOW), (0.5, 0.01)]
ORDERS = [2, 3, 4, 7, 16, 33, 64, 128, 256]


@pytest.mark.parametrize("sigma,g", GRID_WOR)
def test_wor_gaussian_vs_mpmath(sigma, g, record_accuracy):
    # Theorem 9 and the lower bound: positive sums, 1e-12.  Theorem 27: the oracle takes exact
    # alternating sums at 330 digits; ours uses quadrature of positive integrands: 1e-12.
    mp.mp.dps = 60 if sigma < 10 else 330   # D^256 at sigma = 50 ~ 1e-180 from terms ~ 1e77
    eps = lambda j: mp.mpf(j) / (2 * mp.mpf(sigma) ** 2)  # noqa: E731
    orders = np.array(ORDERS, float)
    t9 = _kernels.wor_gaussian(orders, sigma, g, 0)
    t27 = _kernels.wor_gaussian(orders, sigma, g, 1)
    lo = _kernels.wor_gaussian(orders, sigma, g, 2)
    worst = 0.0
    for k, a in enumerate(ORDERS):
        e9, e27, elo = (oracle.rel_error(t9[k], o_wor_upper(a, g, eps, mp.inf, False)), oracle.rel_error(t27[k], o_wor_upper(a, g, eps, mp.inf, True)),
                        oracle.rel_error(lo[k], o_wor_lower(a, g, eps)))
        worst = max(worst, e9, e27, elo)
        assert e9 < 1e-12, ("thm9", a)
        assert e27 < 1e-12, ("thm27", a)
        assert elo < 1e-12, ("lower", a)
    record_accuracy("dpbounds.rdp.subsampled_gaussian_wor", worst, "relative",
                    "integer orders 2..256 on the GRID_WOR (sigma, gamma) grid; all three bounds")


def test_wor_gaussian_independent_reference_values():
    # Theorem 27 vs Theorem 9 at large sigma, and upper/lower bounds at one point: values from
    # independent mpmath runs (examples in docs/rdp.md).
    assert _kernels.wor_gaussian(256.0, 50.0, 0.01, 1) == pytest.approx(2.1043e-5, rel=1e-4)
    assert _kernels.wor_gaussian(256.0, 50.0, 0.01, 0) == pytest.approx(1.0038e-2, rel=1e-4)
    assert _kernels.wor_gaussian(4.0, 100.0, 0.01, 0) == pytest.approx(2.754e-6, rel=1e-3)
    assert _kernels.wor_gaussian(4.0, 100.0, 0.01, 1) == pytest.approx(8.001e-8, rel=1e-3)
    assert _kernels.wor_gaussian(256.0, 5.0, 0.001, 1) == pytest.approx(2.1539e-5, rel=1e-4)
    assert _kernels.wor_gaussian(32.0, 5.0, 0.01, 1) == pytest.approx(2.70466e-4, rel=1e-5)
    assert _kernels.wor_gaussian(32.0, 5.0, 0.01, 0) == pytest.approx(6.46999e-4, rel=1e-5)
    assert _kernels.wor_gaussian(32.0, 5.0, 0.01, 2) == pytest.approx(6.61125e-5, rel=1e-5)


def test_wor_table_general_mechanisms_vs_mpmath(record_accuracy):
    # Theorem 9 for Laplace and randomized response (finite eps_inf: the (e^{eps_inf}-1)^j factors).
    mp.mp.dps = 50
    worst = 0.0
    for name, f, o, par, einf in [("lap", _ufuncs.rdp_laplace, o_laplace, 0.5, 2.0), ("lap", _ufuncs.rdp_laplace, o_laplace, 2.0, 0.5),
                                  ("rr", _ufuncs.rdp_randomized_response, o_rr, 0.9, math.log(9)),
                                  ("rr", _ufuncs.rdp_randomized_response, o_rr, 0.6, math.log(1.5))]:
        table = np.zeros(70)
        table[2:] = f(np.arange(2, 70.0), par)
        for g in [1e-3, 0.1]:
            cur = _kernels.wor_table(table, einf, g, 0)
            eps = lambda j, o=o, par=par: o(j, par)  # noqa: E731
            einf_mp = o(mp.inf, par) if False else (1 / mp.mpf(par) if name == "lap" else abs(mp.log(mp.mpf(par) / (1 - mp.mpf(par)))))
            for a in [2, 3, 5, 20, 69]:
                e = oracle.rel_error(cur[a], o_wor_upper(a, g, eps, einf_mp, False))
                worst = max(worst, e)
                assert e < 1e-12, (name, par, g, a)
    record_accuracy("dpbounds.rdp.subsampled_wor", worst, "relative",
                    "Theorem 9: Laplace (b = 0.5, 2) and randomized response (p = 0.9, 0.6), gamma in {1e-3, 0.1}, orders 2..69")


def test_wor_generic_improved_is_valid_upper():
    # Generic (alternating-sum, padded) Pearson-Vajda differences never under-state D^l.
    mp.mp.dps = 400
    for sigma in [1.0, 5.0, 30.0]:
        logs = np.array([0.0, 0.0] + [j * (j - 1) / (2 * sigma ** 2) for j in range(2, 80)])
        ld = _kernels.pv_logd(logs)
        for l in range(2, 80, 2):
            exact = mp.fsum((-1) ** (l - i) * mp.binomial(l, i) * (mp.exp(mp.mpf(i * (i - 1)) / (2 * mp.mpf(sigma) ** 2)))
                            for i in range(l + 1))
            assert ld[l] >= float(mp.log(exact)) - 1e-13, (sigma, l)
        # and it is tight wherever the sum does not cancel much (small l, small sigma; at sigma=30
        # D^4 ~ 3/sigma^4 cancels 6 digits of O(1) terms, so only validity is asserted there)
        if sigma <= 5:
            assert ld[4] == pytest.approx(float(mp.log(mp.fsum((-1) ** (4 - i) * mp.binomial(4, i) * mp.exp(mp.mpf(i * (i - 1)) / (2 * mp.mpf(sigma) ** 2)) for i in range(5)))), rel=1e-9)


def test_wor_fractional_interpolation():
    sigma, g = 5.0, 0.01
    a = np.array([2.0, 2.25, 2.5, 3.0])
    v = _kernels.wor_gaussian(a, sigma, g, 1)
    K = lambda x, e: (x - 1) * e  # noqa: E731
    assert K(2.25, v[1]) == pytest.approx(0.75 * K(2, v[0]) + 0.25 * K(3, v[3]), rel=1e-14)
    assert _kernels.wor_gaussian(1.3, sigma, g, 0) == _kernels.wor_gaussian(2.0, sigma, g, 0)
    # lower bound at fractional orders is the exact pair divergence = Poisson exact value
    assert _kernels.wor_gaussian(2.5, sigma, g, 2) == _ufuncs.rdp_poisson_gaussian_exact(2.5, sigma, g)


def test_wor_edges():
    assert _kernels.wor_gaussian(5.0, 2.0, 0.0, 0) == 0.0
    assert _kernels.wor_gaussian(5.0, 2.0, 1.0, 1) == 5.0 / 8.0
    assert _kernels.wor_gaussian(np.inf, 2.0, 0.1, 1) == np.inf
    assert np.isnan(_kernels.wor_gaussian(5.0, 2.0, 1.5, 0))
    assert np.isnan(_kernels.wor_gaussian(5.0, 2.0, 0.1, 7))
    assert np.isnan(_kernels.wor_gaussian(2e6, 2.0, 0.1, 0))


def test_wor_kept_workspace_gives_the_same_bits():
    """A workspace kept between calls (wor_work) is a cache: every value equals the call's own
    workspace bit for bit, whatever the earlier calls built (other sigmas, gammas, orders in any
    order, tables grown and shrunk back), for each bound."""
    rng = np.random.default_rng(7)
    for b in (0, 1, 2):
        w = _kernels.wor_work()
        for sigma, top in ((0.3, 300), (1.7, 1200), (6.0, 300), (1.7, 40), (40.0, 500), (6.0, 800)):
            a = np.concatenate([rng.permutation(np.arange(2.0, top, 7.0)), rng.uniform(1.0, top, 20),
                                [np.inf, 1.0, 2.0]])
            g = rng.choice([0.0, 1e-4, 0.01, 0.3, 1.0], a.size)
            kept = _kernels.wor_gaussian(a, sigma, g, b, w)
            fresh = np.array([_kernels.wor_gaussian(x, sigma, y, b) for x, y in zip(a.tolist(), g.tolist())])
            assert kept.tobytes() == fresh.tobytes(), (b, sigma)
    with pytest.raises(ValueError):
        _kernels.wor_gaussian(5.0, 2.0, 0.1, 1, object())


def test_wor_large_alpha_no_overflow():
    # alpha up to 1e4: finite, monotone, and below the base curve.
    a = np.array([1e3, 5e3, 1e4])
    for b in (0, 1, 2):
        v = _kernels.wor_gaussian(a, 1.0, 0.01, b)
        assert np.all(np.isfinite(v)) and np.all(np.diff(v) > 0) and np.all(v <= a / 2)


# ---------------------------------------------------------------- Poisson

@pytest.mark.parametrize("sigma,q", [(0.7, 1e-9), (1.0, 1e-6), (1.0, 0.01), (5.0, 0.001), (2.0, 0.3), (30.0, 0.9)])
def test_poisson_integer_vs_mpmath(sigma, q, record_accuracy):
    # positive closed sum: 1e-13 for q down to 1e-9 (autodp is 34% off at 1e-7, docs/rdp.md)
    mp.mp.dps = 50
    eps = lambda j: mp.mpf(j) / (2 * mp.mpf(sigma) ** 2)  # noqa: E731
    for a in [2, 3, 8, 32, 256]:
        e = oracle.rel_error(_ufuncs.rdp_poisson_gaussian_exact(float(a), sigma, q), o_wor_lower(a, q, eps))
        record_accuracy("rdp_poisson_gaussian_exact", e, "relative",
                        "integer alpha in [2, 256], 6 (sigma, q) in [0.7, 30] x [1e-9, 0.9]")
        assert e < 1e-13


# the two ends of the (sigma, q) range in the fast suite, the middle three slow (~1 s of mpmath each)
@pytest.mark.parametrize("sigma,q", [(0.5, 1e-9), pytest.param(1.0, 1e-4, marks=pytest.mark.slow),
                                     pytest.param(1.0, 0.01, marks=pytest.mark.slow),
                                     pytest.param(5.0, 0.3, marks=pytest.mark.slow), (30.0, 0.9)])
def test_poisson_fractional_exact_vs_quadrature(sigma, q, record_accuracy):
    # trapezoid in log space vs mpmath tanh-sinh on the same integrand: 1e-12.
    mp.mp.dps = 30
    for a in [1.0, 1.5, 2.5, 7.25, 20.5]:
        ref = o_poisson(a, sigma, q)
        e = oracle.rel_error(_ufuncs.rdp_poisson_gaussian_exact(a, sigma, q), ref)
        # the quadrature kernel itself: log(A_alpha - 1) for alpha > 1, log KL at alpha = 1
        log_ref = mp.log(ref) if a == 1.0 else mp.log(mp.expm1(ref * (a - 1)))
        e_quad = oracle.rel_error(_ufuncs.rdp_poisson_quad_log(a, sigma, q), log_ref)
        record_accuracy("rdp_poisson_quad_log", e_quad, "relative",
                        "alpha in [1, 20.5] x 5 (sigma, q) in [0.5, 30] x [1e-9, 0.9]")
        assert e < 1e-12, a
        assert e_quad < 1e-12, a


# (0.7, 0.05, 1.5): the second point of alpha in (1, 2), ~3 s of mpmath series, in the slow tier
@pytest.mark.parametrize("sigma,q,a", [(1.0, 0.01, 1.5), pytest.param(0.7, 0.05, 1.5, marks=pytest.mark.slow),
                                       (2.0, 0.05, 7.25), (5.0, 0.001, 2.5), (1.0, 1e-6, 10.5)])
def test_poisson_compat_and_signed_series(sigma, q, a, record_accuracy):
    # compat = |C| series (1e-10: the polynomial tail is cut at e^-40 relative);
    # exact = signed series (1e-13).  The |C| series overestimates (docs/rdp.md):
    # compat > exact.
    mp.mp.dps = 30
    e_compat = oracle.rel_error(_ufuncs.rdp_poisson_gaussian_compat(a, sigma, q), o_mtz_series(a, sigma, q, True))
    record_accuracy("rdp_poisson_gaussian_compat", e_compat,
                    "relative", "5 (sigma, q, fractional alpha) points, against the infinite |C| series")
    assert e_compat < 1e-10
    assert oracle.rel_error(_ufuncs.rdp_poisson_gaussian_exact(a, sigma, q), o_mtz_series(a, sigma, q, False)) < 1e-13
    assert _ufuncs.rdp_poisson_gaussian_compat(a, sigma, q) >= _ufuncs.rdp_poisson_gaussian_exact(a, sigma, q)


def test_poisson_compat_overestimate_magnitudes():
    # the |C| series is +4.0% at a=1.5 and +0.09% at a=2.5 (sigma=1, q=0.01)
    r15 = _ufuncs.rdp_poisson_gaussian_compat(1.5, 1.0, 0.01) / _ufuncs.rdp_poisson_gaussian_exact(1.5, 1.0, 0.01) - 1
    r25 = _ufuncs.rdp_poisson_gaussian_compat(2.5, 1.0, 0.01) / _ufuncs.rdp_poisson_gaussian_exact(2.5, 1.0, 0.01) - 1
    assert r15 == pytest.approx(0.040, abs=0.001)
    assert r25 == pytest.approx(0.0009, abs=0.0001)


def test_poisson_edges():
    assert _ufuncs.rdp_poisson_gaussian_exact(3.0, 1.0, 0.0) == 0.0
    assert _ufuncs.rdp_poisson_gaussian_exact(3.0, 2.0, 1.0) == 3.0 / 8.0
    assert _ufuncs.rdp_poisson_gaussian_compat(np.inf, 2.0, 0.1) == np.inf
    assert np.isnan(_ufuncs.rdp_poisson_gaussian_exact(3.0, 2.0, -0.1))
    assert np.isnan(_ufuncs.rdp_poisson_gaussian_exact(0.9, 2.0, 0.1))
    assert _ufuncs.rdp_poisson_negseries_log(3.0, 1.0, 0.1) == -np.inf


# ---------------------------------------------------------------- NaN sweep

UFUNCS = [f for n, f in vars(_ufuncs).items() if isinstance(f, np.ufunc) and n.startswith("rdp_")]


@pytest.mark.parametrize("uf", UFUNCS, ids=lambda u: u.__name__)
def test_nan_sweep(uf):
    good = {1: [2.5], 2: [2.5, 1.5], 3: [2.5, 1.5, 0.01]}[uf.nin]
    if uf.__name__.startswith(("rdp_eps_objective", "rdp_logdelta")):
        good = [2.5, 0.1, 0.01]
    for k in range(uf.nin):
        args = list(good)
        args[k] = np.nan
        assert np.isnan(uf(*args)), (uf.__name__, k)
    out = uf(*[np.full(4, v) for v in good])      # arrays broadcast, no warning raised
    assert out.shape == (4,)


def test_nan_sweep_wor():
    for b in (0, 1, 2):
        for k in range(3):
            args = [3.0, 2.0, 0.1]
            args[k] = np.nan
            assert np.isnan(_kernels.wor_gaussian(*args, b))


# ---------------------------------------------------------------- no FP flags at extreme arguments

def test_extreme_arguments_raise_no_fp_warning():
    # pytest runs with filterwarnings=error: an overflow/invalid flag in any ufunc loop fails here.
    import itertools
    A = [1.0, 1 + 1e-15, 1.5, 2.0, 3.0, 1e4, 1e6, 1e300, np.inf]
    P = [1e-300, 1e-9, 0.3, 0.5, 0.999999, 1.0, 7.0, 1e5, 1e300, np.inf]
    a, p = (np.array(v) for v in zip(*itertools.product(A, P)))
    for f in (_ufuncs.rdp_gaussian, _ufuncs.rdp_laplace, _ufuncs.rdp_randomized_response):
        v = f(a, p)
        assert not np.any(v < 0)
    a, s, q = (np.array(v) for v in zip(*itertools.product([1.0, 1.5, 2.0, 7.5, 100.0, 1e4, np.inf],
                                                           [0.05, 0.3, 7.0, 1e5, 1e300],
                                                           [0.0, 1e-300, 1e-9, 0.5, 1 - 1e-16, 1.0])))
    for f in (_ufuncs.rdp_poisson_gaussian_exact, _ufuncs.rdp_poisson_gaussian_compat):
        v = f(a, s, q)
        assert np.all(v >= 0)
    a, r, d = (np.array(v) for v in zip(*itertools.product(A, [0.0, 1e-300, 1e-5, 1.0, 1e300, np.inf],
                                                           [1e-300, 1e-10, 0.5, 1 - 1e-16, 0.0, 10.0, np.inf])))
    for f in (_ufuncs.rdp_eps_objective_classic, _ufuncs.rdp_eps_objective_improved,
              _ufuncs.rdp_logdelta_objective_classic, _ufuncs.rdp_logdelta_objective_improved):
        f(a, r, d)


def test_poisson_exact_continuous_at_alpha_one():
    # regression: near-integer and near-1 orders (no cancellation as a -> 1, no lgamma pole)
    kl = _ufuncs.rdp_poisson_gaussian_exact(1.0, 1.0, 0.25)
    for a in (1 + 2.2e-16, 1 + 1e-12, 1 + 1e-8):
        assert _ufuncs.rdp_poisson_gaussian_exact(a, 1.0, 0.25) == pytest.approx(kl, rel=1e-6)
    for a in (2 + 1e-15, 3 - 1e-15, 1 + 2.2e-16):
        assert np.isfinite(_ufuncs.rdp_poisson_gaussian_compat(a, 1.0, 0.5))
    assert _ufuncs.rdp_poisson_gaussian_exact(3 - 1e-15, 1.0, 0.25) == pytest.approx(_ufuncs.rdp_poisson_gaussian_exact(3.0, 1.0, 0.25), rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("sigma,g", [(0.3, 1e-6), (1.0, 0.5), (20.0, 1e-4), (100.0, 0.3)])
def test_wor_large_alpha_vs_mpmath(sigma, g):
    # large orders: the binomials come from lgamma values of ~6e3 nats (a = 1000) whose absolute
    # rounding (~1e-16 x 6e3) becomes the relative error of each term: measured 1.4e-12 at a = 1000,
    # so the tolerance here is 5e-12 (it is 1e-12 for a <= 256 above).
    mp.mp.dps = 40
    eps = lambda j: mp.mpf(j) / (2 * mp.mpf(sigma) ** 2)  # noqa: E731
    for a in (500, 1000):
        assert oracle.rel_error(_kernels.wor_gaussian(float(a), sigma, g, 0), o_wor_upper(a, g, eps, mp.inf, False)) < 5e-12
        assert oracle.rel_error(_kernels.wor_gaussian(float(a), sigma, g, 2), o_wor_lower(a, g, eps)) < 5e-12
        assert oracle.rel_error(_ufuncs.rdp_poisson_gaussian_exact(float(a), sigma, g), o_wor_lower(a, g, eps)) < 5e-12


# ---------------------------------------------------------------- conversion objectives
def _objectives_mp(a, rdp, x, improved):
    """mpmath (50 digits) eps(delta) and log delta(eps) at one order, and the size of their largest term."""
    with mp.workdps(50):
        a, rdp, x = mp.mpf(a), mp.mpf(rdp), mp.mpf(x)
        ld = mp.log(x)
        if improved:
            eps = rdp + mp.log1p(-1 / a) - (ld + mp.log(a)) / (a - 1)
            scale_e = max(abs(rdp), abs(mp.log1p(-1 / a)), abs((ld + mp.log(a)) / (a - 1)))
            logd = (a - 1) * (rdp - x + mp.log1p(-1 / a)) - mp.log(a)
            scale_d = max(abs((a - 1) * rdp), abs((a - 1) * x), abs((a - 1) * mp.log1p(-1 / a)), abs(mp.log(a)))
            tv = mp.log(-mp.expm1(-rdp)) / 2
            if improved and x ** 2 >= -mp.expm1(-rdp):
                eps = mp.mpf(0)
            logd = min(logd, tv)
        else:
            eps = rdp - ld / (a - 1)
            scale_e = max(abs(rdp), abs(ld / (a - 1)))
            logd = (a - 1) * (rdp - x)
            scale_d = max(abs((a - 1) * rdp), abs((a - 1) * x))
        return float(max(eps, 0)), float(scale_e), float(min(logd, 0)), float(scale_d)


def test_conversion_objectives_vs_mpmath(record_accuracy):
    # The objectives are a few correctly rounded operations: each is within 4 ulp of its largest
    # term (relative where the terms do not cancel), as dpb_rdp_convert.h states.
    u = 2.0 ** -52
    checked = 0
    for a in (1.01, 1.5, 2.0, 8.0, 64.0, 1e3, 1e4):
        for rdp in (1e-6, 1e-3, 0.1, 1.0, 30.0, 1e3):
            for x in (1e-300, 1e-12, 1e-5, 0.1, 0.5):      # delta for eps(.), eps for log delta(.)
                for improved in (False, True):
                    e_ref, e_scale, d_ref, d_scale = _objectives_mp(a, rdp, x, improved)
                    conv = "improved" if improved else "classic"
                    e = getattr(_ufuncs, f"rdp_eps_objective_{conv}")(a, rdp, x)
                    d = getattr(_ufuncs, f"rdp_logdelta_objective_{conv}")(a, rdp, x)
                    regime = "alpha in [1.01, 1e4] x rdp in [1e-6, 1e3] x (delta or eps) in [1e-300, 0.5]; ulp of the largest term"
                    record_accuracy(f"rdp_eps_objective_{conv}", abs(e - e_ref) / (u * e_scale), "ulp", regime)
                    record_accuracy(f"rdp_logdelta_objective_{conv}", abs(d - d_ref) / (u * max(d_scale, 1e-300)), "ulp", regime)
                    assert abs(e - e_ref) <= 4 * u * e_scale, (a, rdp, x, conv, e, e_ref)
                    assert abs(d - d_ref) <= 4 * u * max(d_scale, 1e-300), (a, rdp, x, conv, d, d_ref)
                    checked += 1
    assert checked == 7 * 6 * 5 * 2


def test_poisson_real_order_cost_is_capped():
    # The real-order quadrature costs ~alpha/sigma^2 nodes (alpha = 1.5 at sigma = 1e-6 would run
    # for hours, as would quad_log at alpha = 2e11).  Above 1e6 nodes the core answers NaN at once
    # and the validated function raises, naming sigma and alpha.
    import time

    from dpbounds import _ufuncs as U
    from dpbounds import rdp
    t = time.perf_counter()
    for a, s in ((1.5, 1e-6), (1.0, 1e-6), (25.5, 0.01)):
        assert np.isnan(U.rdp_poisson_gaussian_exact(a, s, 0.01))
        assert np.isnan(U.rdp_poisson_gaussian_compat(a, s, 0.01))
        with pytest.raises(dpbounds.DPBoundsError, match=r"^sigma must be larger for the fractional order alpha"):
            rdp.poisson_gaussian(a, s, 0.01)
        with pytest.raises(dpbounds.DPBoundsError, match=r"^sigma must be larger"):
            rdp.poisson_gaussian([2.0, a], [1.0, s], 0.01)
    assert np.isnan(U.rdp_poisson_quad_log(2e11, 1.0, 0.01))
    assert time.perf_counter() - t < 1.0
    # integer orders are O(alpha) and never refused; just below the cap the value is computed and
    # agrees with the integer-order closed sum's neighbours (monotone in alpha)
    assert np.isfinite(rdp.poisson_gaussian(20.0, 1e-6, 0.01))
    lo, mid, hi = (rdp.poisson_gaussian(x, 0.01, 0.01) for x in (20.0, 20.5, 21.0))
    assert lo < mid < hi
