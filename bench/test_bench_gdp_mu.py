"""Benchmarks: the exact accountant's gdp_mu() at small sigma, and the log-domain law's tables.

Run:  PYTHONPATH=src python -m pytest bench/test_bench_gdp_mu.py --benchmark-only
Every round is cold (all caches cleared).  The table group compares the vectorised evaluation of
the near-part Lagrange weights with the row-by-row loop it replaced (the same bits): most of the
build time of the small-sigma law went there.
"""
import numpy as np
import pytest

from dpbounds import accountant as A
from dpbounds.accountant._laws import logdomain as L


def _rows(frac: np.ndarray) -> np.ndarray:
    # the replaced form: one Lagrange evaluation per row
    nodes = L._NODES.astype(float)
    w = np.empty((frac.size, L._TAPS))
    for j in range(frac.size):
        w[j] = L._lagrange_weights(np.array([frac[j]]), nodes)[0]
    return w


def _frac(K: int) -> np.ndarray:
    h = L._LN2 / K
    d_far = -np.log(-np.expm1(-L._FAR_G))
    d = L._LN2 + h * np.arange(int(np.ceil((d_far - L._LN2) / h)))
    pos = np.log1p(-np.exp(-d)) / h
    return pos - np.floor(pos)


@pytest.mark.benchmark(group="logdomain-near-weights-K128")
def test_weights_vectorised(benchmark, timing):
    f = _frac(128 if timing else 16)  # untimed: the rows of K = 16
    w = benchmark(L._lagrange_weights, f, L._NODES.astype(float))
    assert np.array_equal(w, _rows(f))


@pytest.mark.benchmark(group="logdomain-near-weights-K128")
def test_weights_row_by_row(benchmark, timing):
    f = _frac(128 if timing else 16)
    w = benchmark(_rows, f)
    assert w.shape == (f.size, L._TAPS)


def _cold_gdp_mu(sigma: float, M: int) -> float:
    A.clear_cache()
    return A.RandomAllocationAccountant(sigma, M, 1).gdp_mu()


@pytest.mark.benchmark(group="gdp-mu-cold-sigma0.8-M10")
def test_gdp_mu_small_sigma(benchmark):
    mu = benchmark.pedantic(_cold_gdp_mu, args=(0.8, 10), rounds=3, iterations=1)
    assert 0.90 < mu < 0.91
