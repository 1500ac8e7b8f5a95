"""Benchmarks of the compiled core against plain numpy/scipy in the same run.

    python -m pytest bench/test_bench_core.py --benchmark-only --benchmark-group-by=group
    python bench/report_core.py          # the ratios quoted in the README, measured in one run
"""
import math
import tracemalloc

import numpy as np
import pytest
from baselines import delta_bound_numpy, delta_min_numpy, rounds_brentq

import dpbounds
from dpbounds import ufuncs


@pytest.mark.benchmark(group="delta_min exact, 1e6 distinct (sigma, M)")
def test_delta_min_ufunc(benchmark, sigma_rounds):
    s, m = sigma_rounds
    out = benchmark(ufuncs.delta_min_exact, s, m)
    np.testing.assert_allclose(out[:1000], delta_min_numpy(s[:1000], m[:1000]), rtol=1e-9)


@pytest.mark.benchmark(group="delta_bound exact (with validity), 1e6 distinct (sigma, M)")
def test_delta_bound_validated(benchmark, sigma_rounds):
    s, m = sigma_rounds
    out = benchmark(dpbounds.delta_bound, s, m, "exact")
    ok = ~np.isnan(out)
    assert 0 < ok.sum() < out.size
    np.testing.assert_array_equal(out[ok], ufuncs.delta_min_exact(s[ok], m[ok]))


@pytest.mark.benchmark(group="delta_bound exact (with validity), 1e6 distinct (sigma, M)")
def test_delta_bound_numpy_scipy(benchmark, sigma_rounds):
    s, m = sigma_rounds
    out = benchmark(delta_bound_numpy, s, m)
    ref = dpbounds.delta_bound(s[:20000], m[:20000], "exact")
    both = ~np.isnan(out[:20000]) & ~np.isnan(ref)
    assert both.sum() > 1000
    np.testing.assert_allclose(out[:20000][both], ref[both], rtol=1e-9)


@pytest.mark.benchmark(group="delta_min exact, 1e6 distinct (sigma, M)")
def test_delta_min_numpy_scipy(benchmark, sigma_rounds):
    s, m = sigma_rounds
    out = benchmark(delta_min_numpy, s, m)
    np.testing.assert_allclose(out[:1000], ufuncs.delta_min_exact(s[:1000], m[:1000]), rtol=1e-9)


def _peak_extra_bytes(f, *args):
    tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    out = f(*args)
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return peak, out


def test_memory_ufunc_vs_numpy(sigma_rounds):
    """Peak extra memory: the ufunc allocates its output only; numpy a temporary per step."""
    s, m = sigma_rounds
    peak_u, out_u = _peak_extra_bytes(ufuncs.delta_min_exact, s, m)
    peak_n, out_n = _peak_extra_bytes(delta_min_numpy, s, m)
    assert peak_u <= 1.1 * out_u.nbytes
    assert peak_u <= peak_n / 5, (peak_u, peak_n)


@pytest.mark.benchmark(group="rounds_required, per point")
def test_rounds_required_ufunc(benchmark, sigma_delta):
    s, d = sigma_delta
    out = benchmark(dpbounds.rounds_required, s, d, "exact")
    for i in range(0, s.size, 2500):
        assert out[i] == rounds_brentq(s[i], d[i])


@pytest.mark.benchmark(group="rounds_required, per point")
def test_rounds_required_brentq_loop(benchmark, sigma_delta):
    s, d = sigma_delta
    k = 50  # the loop is slow: time a subset and compare per point
    out = benchmark(lambda: [rounds_brentq(s[i], d[i]) for i in range(k)])
    np.testing.assert_array_equal(out, dpbounds.rounds_required(s[:k], d[:k], "exact"))


@pytest.mark.benchmark(group="scalar latency")
def test_scalar_delta_bound(benchmark):
    assert benchmark(dpbounds.delta_bound, 1.0, 1e6, "simplified") == pytest.approx(0.0106789, rel=1e-5, abs=0)


@pytest.mark.benchmark(group="scalar latency")
def test_scalar_math_exp(benchmark):
    assert benchmark(math.exp, 1.0) == math.e
