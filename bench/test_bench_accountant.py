"""Benchmarks: exact random-allocation accountant vs PLD_accounting (sigma=1, delta=1e-5).

Run:  PYTHONPATH=src python -m pytest bench/test_bench_accountant.py --benchmark-only
Every round is cold (all caches cleared), so the timings include the window/tail-bound set-up.
"""
import os

import pytest

from dpbounds import accountant as A


def _cold_eps(M, E, tol=2e-3):
    A.clear_cache()
    return A.RandomAllocationPLD(1.0, M, E, tolerance=tol).epsilon(1e-5)


@pytest.mark.benchmark(group="eps-M100-E1")
def test_ours_m100_e1(benchmark):
    lo, hi = benchmark(_cold_eps, 100, 1)
    assert 0.6085 <= hi and lo <= 0.6357 and hi - lo <= 0.005 * hi


def _warm_eps(M, delta=1e-5):
    # a new accountant object over the cached single-epoch law: the query a training loop repeats
    return A.RandomAllocationPLD(1.0, M, 1).epsilon(delta)


@pytest.mark.benchmark(group="eps-M100-E1-warm")
def test_ours_m100_e1_warm(benchmark):
    A.clear_cache()
    cold = _warm_eps(100)  # builds and caches the law
    lo, hi = benchmark(_warm_eps, 100)
    assert (lo, hi) == (cold[0], cold[1])  # the cache changes the time, never the answer
    assert 0.6085 <= hi and lo <= 0.6357 and hi - lo <= 1e-6 * hi


@pytest.mark.benchmark(group="eps-tilted-new-delta")
def test_ours_tilted_new_delta(benchmark):
    # sigma = 0.5, M = 1000 (tilted series, ~4e5 coefficients): a further query on a built law
    A.clear_cache()
    p = A.RandomAllocationPLD(0.5, 1000, 1)
    p.epsilon(1e-5)
    deltas = iter([2.2e-6 * (1 + 1e-3 * k) for k in range(10 ** 6)])
    lo, hi = benchmark(lambda: p.epsilon(next(deltas)))
    assert 3.5 < lo <= hi < 4.0 and hi - lo <= 1e-6 * hi


def _peer_eps(benchmark, epochs):
    """PLD_accounting's (upper, lower) bracket at sigma = 1, M = 100, delta = 1e-5, timed once."""
    pa = pytest.importorskip("PLD_accounting", reason="pld-accounting not installed")
    return benchmark.pedantic(pa.gaussian_allocation_epsilon_range,
                              kwargs=dict(delta=1e-5, sigma=1.0, num_steps=100, num_epochs=epochs),
                              rounds=1, iterations=1)


@pytest.mark.benchmark(group="eps-M100-E1")
def test_peer_m100_e1(benchmark):
    up, lo = _peer_eps(benchmark, 1)
    assert lo <= up


@pytest.mark.benchmark(group="eps-M100-E10")
def test_ours_m100_e10(benchmark):
    lo, hi = benchmark.pedantic(_cold_eps, args=(100, 10), rounds=2, iterations=1)
    assert hi - lo <= 0.005 * hi and 1.0 < lo


@pytest.mark.benchmark(group="eps-M100-E10")
@pytest.mark.skipif(not os.environ.get("DPBOUNDS_SLOW_PEERS"),
                    reason="PLD_accounting needs minutes at E = 10; set DPBOUNDS_SLOW_PEERS=1 to run it")
def test_peer_m100_e10(benchmark):
    up, lo = _peer_eps(benchmark, 10)
    ours = _cold_eps(100, 10)
    print(f"\nPLD_accounting E=10: [{lo:.6g}, {up:.6g}] (width {(up - lo) / up:.2%}); "
          f"dpbounds: [{ours[0]:.6g}, {ours[1]:.6g}] (width {(ours[1] - ours[0]) / ours[1]:.2%})")
    assert ours[1] >= lo and ours[0] <= up


# E = 100 with PLD_accounting did not finish in 19 min (per the issue): not run.


@pytest.mark.benchmark(group="eps-M100-E100")
def test_ours_m100_e100(benchmark):
    lo, hi = benchmark.pedantic(_cold_eps, args=(100, 100), rounds=1, iterations=1)
    assert hi - lo <= 0.005 * hi


@pytest.mark.benchmark(group="eps-M1e6-E1")
def test_ours_m1e6_e1(benchmark):
    lo, hi = benchmark(_cold_eps, 1_000_000, 1)
    assert hi - lo <= 0.01 * hi


@pytest.mark.benchmark(group="eps-M100-E2")
def test_ours_m100_e2(benchmark):
    lo, hi = benchmark.pedantic(_cold_eps, args=(100, 2), rounds=3, iterations=1)
    assert hi - lo <= 0.005 * hi


@pytest.mark.benchmark(group="eps-M100-E2")
def test_peer_m100_e2(benchmark):
    up, lo = _peer_eps(benchmark, 2)
    ours = _cold_eps(100, 2)
    assert ours[1] >= lo and ours[0] <= up


@pytest.mark.parametrize("tolerance", [2e-3, 0.05])
def test_peak_rss_e10000(tolerance):
    # issue target: peak RSS <= 200 MB for E = 1e4, at the default tolerance too: the window is
    # capped at max_lattice = 2^21 points and the lattice coarsened (bracket ~3.4% wide instead of
    # 0.2%; still certified); measured in a fresh process
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("reads VmHWM from /proc (Linux only)")
    # VmHWM (not ru_maxrss, which Linux carries over from the parent across exec)
    code = ("from dpbounds.accountant import RandomAllocationPLD;"
            f"p = RandomAllocationPLD(1.0, 10000, 10000, tolerance={tolerance!r}); r = p.epsilon(1e-5);"
            "assert r[0] <= r[1] < 1.05 * r[0], r;"
            "assert p.lattice_spacing > 0;"
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    peak_mb = int(out.stdout.split()[-1]) / 1024  # kB
    assert peak_mb <= 200, peak_mb
