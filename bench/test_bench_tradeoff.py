"""Benchmarks: tradeoff_clt vs a per-point scipy.integrate.quad loop, gdp_epsilon vs a
per-point brentq loop (each baseline in the same group, run on a subset and compared per
point; the compiled kernels run on 1e5 points).  Every benchmark asserts its result.

    PYTHONPATH=src python -m pytest bench/test_bench_tradeoff.py --benchmark-only
Per-point cost = mean time / number of points (1e5 for dpbounds, 300 for the loops).
"""
import math
import warnings

import numpy as np
import pytest
from scipy.integrate import IntegrationWarning, quad
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri

from dpbounds import _ufuncs as uf

N_FAST = 100_000
N_UNTIMED = 3_000   # --benchmark-disable: the compiled kernels on fewer points (the loops' 300 included)
N_LOOP = 300
SQRT1_2 = math.sqrt(0.5)
INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _clt_points(n, seed=0):
    rng = np.random.default_rng(seed)
    a = np.where(rng.random(n) < 0.5, 10 ** rng.uniform(-300, np.log10(0.5), n), rng.uniform(0.0, 1.0, n))
    a = np.clip(a, 1e-300, 1 - 1e-15)
    sigma = np.exp(rng.uniform(np.log(0.3), np.log(50.0), n))
    M = np.round(10 ** rng.uniform(np.log10(3), 15, n))
    return a, sigma, M


def quad_clt(a, sigma, M, phi=None):
    """A careful per-point baseline: the same integrand (math.erfc-based Phi, expm1), finite
    range [-12, 12] and a break point at the switch point z_c, QUADPACK qagp.  ``phi``
    swaps in another Phi (e.g. scipy.special.ndtr, the usual choice)."""
    x = -float(ndtri(a))
    s = math.sqrt(M / (M - 1))
    D = math.sqrt((M - 1) * math.expm1(1 / sigma**2))
    c = 0.5 / sigma**2
    xs = x * s

    if phi is None:
        def f(z):
            arg = xs - math.expm1(z / sigma + c) / D
            return 0.5 * math.erfc(-arg * SQRT1_2) * math.exp(-0.5 * z * z) * INV_SQRT2PI
    else:
        def f(z):
            return phi(xs - math.expm1(z / sigma + c) / D) * math.exp(-0.5 * z * z) * INV_SQRT2PI

    t = 1 + xs * D
    zc = sigma * math.log(t) - 0.5 / sigma if t > 0 else sigma * math.log(D) - 0.5 / sigma
    pts = [zc] if -12 < zc < 12 else None
    with warnings.catch_warnings():
        # QUADPACK reports "roundoff error" when asked for ~1e-15; the value is still good
        warnings.simplefilter("ignore", IntegrationWarning)
        return quad(f, -12, 12, points=pts, epsabs=1e-15, epsrel=1e-14, limit=500)[0]


@pytest.fixture(scope="module")
def clt_points(timing):
    return _clt_points(N_FAST if timing else N_UNTIMED)


@pytest.mark.benchmark(group="tradeoff_clt")
def test_bench_tradeoff_clt_dpbounds(benchmark, clt_points):
    a, s, M = clt_points
    out = benchmark(uf.tradeoff_clt, a, s, M)
    assert np.all(np.isfinite(out)) and np.all((out >= 0) & (out <= 1 - a + 1e-15))
    sub = slice(0, N_LOOP)
    ref = np.array([quad_clt(*p) for p in zip(a[sub], s[sub], M[sub])])
    assert np.max(np.abs(out[sub] - ref)) < 1e-12


@pytest.mark.benchmark(group="tradeoff_clt")
def test_bench_tradeoff_clt_scipy_quad_loop(benchmark, clt_points):
    a, s, M = (v[:N_LOOP] for v in clt_points)
    out = benchmark.pedantic(lambda: [quad_clt(*p) for p in zip(a, s, M)], rounds=3, iterations=1)
    assert np.max(np.abs(np.array(out) - uf.tradeoff_clt(a, s, M))) < 1e-12


@pytest.mark.benchmark(group="tradeoff_clt")
def test_bench_tradeoff_clt_scipy_quad_loop_ndtr(benchmark, clt_points):
    """Same loop with scipy.special.ndtr as Phi (what most code would write)."""
    a, s, M = (v[:N_LOOP] for v in clt_points)
    out = benchmark.pedantic(lambda: [quad_clt(*p, phi=ndtr) for p in zip(a, s, M)], rounds=3, iterations=1)
    assert np.max(np.abs(np.array(out) - uf.tradeoff_clt(a, s, M))) < 1e-12


# ---------------------------------------------------------------- gdp_epsilon


def _gdp_points(n, seed=1):
    rng = np.random.default_rng(seed)
    delta = 10 ** rng.uniform(-12, -2, n)
    mu = rng.uniform(0.5, 5.0, n)
    return delta, mu


def _delta_py(eps, mu):
    u = -eps / mu + mu / 2
    return 0.5 * math.erfc(-u * SQRT1_2) - math.exp(eps) * 0.5 * math.erfc((eps / mu + mu / 2) * SQRT1_2)


def _delta_ndtr(eps, mu):
    return float(ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2))


def brentq_eps(delta, mu, fdelta=_delta_py):
    """Per-point baseline: brentq on the textbook delta(eps) (fine for delta >= 1e-12)."""
    hi = 1.0
    while fdelta(hi, mu) > delta:
        hi *= 2
    return brentq(lambda e: fdelta(e, mu) - delta, 0.0, hi, xtol=1e-14, rtol=1e-15)


@pytest.fixture(scope="module")
def gdp_points(timing):
    return _gdp_points(N_FAST if timing else N_UNTIMED)


@pytest.mark.benchmark(group="gdp_epsilon")
def test_bench_gdp_epsilon_dpbounds(benchmark, gdp_points):
    d, mu = gdp_points
    out = benchmark(uf.gdp_epsilon, d, mu)
    assert np.all(np.isfinite(out)) and np.all(out > 0)
    np.testing.assert_allclose(uf.gdp_delta(out, mu), d, rtol=1e-10)


@pytest.mark.benchmark(group="gdp_epsilon")
def test_bench_gdp_epsilon_brentq_loop(benchmark, gdp_points):
    d, mu = (v[:N_LOOP] for v in gdp_points)
    out = benchmark.pedantic(lambda: [brentq_eps(*p) for p in zip(d, mu)], rounds=3, iterations=1)
    np.testing.assert_allclose(out, uf.gdp_epsilon(d, mu), rtol=1e-8)


@pytest.mark.benchmark(group="gdp_epsilon")
def test_bench_gdp_epsilon_brentq_loop_ndtr(benchmark, gdp_points):
    """Same loop with scipy.special.ndtr in delta(eps)."""
    d, mu = (v[:N_LOOP] for v in gdp_points)
    out = benchmark.pedantic(lambda: [brentq_eps(*p, fdelta=_delta_ndtr) for p in zip(d, mu)], rounds=3, iterations=1)
    np.testing.assert_allclose(out, uf.gdp_epsilon(d, mu), rtol=1e-8)
