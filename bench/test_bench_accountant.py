"""Benchmarks: exact random-allocation accountant vs PLD_accounting (sigma=1, delta=1e-5).

Run:  PYTHONPATH=src python -m pytest bench/test_bench_accountant.py --benchmark-only
Every round is cold (all caches cleared), so the timings include the window/tail-bound set-up.
"""
import math
import os
import time

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
    # further queries over the same cached law, each at a delta not asked before (new accountant
    # objects, as a training loop makes them): best of 7 each, against the 5 ms target
    times = {}
    for d in (2e-6, 3e-6, 1e-7, 1e-3):
        best = math.inf
        for k in range(7):
            dd = d * (1.0 + 1e-4 * k)
            t0 = time.perf_counter()
            b = A.RandomAllocationPLD(0.5, 1000, 1).epsilon(dd)
            best = min(best, time.perf_counter() - t0)
            assert 0.0 < b[0] <= b[1] < math.inf
        times[d] = best
    print("\nfurther epsilon queries, (0.5, 1000, E=1): "
          + ", ".join(f"delta={d:g}: {t * 1e3:.2f} ms" for d, t in times.items()))


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


def _width(r):
    lo, hi = r
    return (hi - lo) / hi


@pytest.mark.benchmark(group="eps-M100-E100")
def test_ours_m100_e100(benchmark):
    # cold: the law, its cells and the composition are all timed (target: <= 0.3 s, <= 0.2 % wide)
    r = benchmark.pedantic(_cold_eps, args=(100, 100), rounds=3, iterations=1)
    print(f"\nE=100: [{r[0]:.7g}, {r[1]:.7g}] width {_width(r):.4%}")
    assert _width(r) <= 2e-3 and 6.0 < r[0]


@pytest.mark.benchmark(group="eps-M1e4-E1e4")
def test_ours_m1e4_e1e4(benchmark):
    # target: <= 5 s at <= 1 % relative width (peak memory: test_peak_rss_e10000)
    r = benchmark.pedantic(_cold_eps, args=(10_000, 10_000, 0.01), rounds=2, iterations=1)
    print(f"\nM=E=1e4, tolerance 0.01: [{r[0]:.7g}, {r[1]:.7g}] width {_width(r):.4%}")
    assert _width(r) <= 0.01


@pytest.mark.benchmark(group="eps-s0.5-M1000-E10")
def test_ours_s05_m1000_e10(benchmark):
    # small sigma: the log-domain law serves the lattice (its build dominates the cold time)
    def run():
        A.clear_cache()
        return A.RandomAllocationPLD(0.5, 1000, 10).epsilon(1e-5)
    r = benchmark.pedantic(run, rounds=1, iterations=1)
    print(f"\nsigma=0.5, M=1000, E=10: [{r[0]:.7g}, {r[1]:.7g}] width {_width(r):.4%}")
    assert _width(r) <= 2e-3


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


@pytest.mark.parametrize("tolerance,width", [(0.01, 0.01), (2e-3, 0.01)])
def test_peak_rss_e10000(tolerance, width):
    # target: M = E = 1e4 within 300 MB peak RSS, <= 1 % wide at tolerance 0.01 (the default
    # 2e-3 is capped by max_lattice and may say so; it must still be within 1 %), measured in a
    # fresh process
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("reads VmHWM from /proc (Linux only)")
    # VmHWM (not ru_maxrss, which Linux carries over from the parent across exec)
    code = ("import warnings; warnings.simplefilter('ignore');"
            "from dpbounds.accountant import RandomAllocationPLD;"
            f"p = RandomAllocationPLD(1.0, 10000, 10000, tolerance={tolerance!r}); r = p.epsilon(1e-5);"
            f"assert r[0] <= r[1] <= (1 + {width!r}) * r[0], r;"
            "assert p.lattice_spacing > 0;"
            "print((r[1] - r[0]) / r[1]);"
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    w, kb = out.stdout.split()[-2:]
    peak_mb = int(kb) / 1024
    print(f"\nM=E=1e4 tolerance {tolerance}: width {float(w):.3%}, VmHWM {peak_mb:.0f} MB")
    assert peak_mb <= 300, peak_mb


# sigma = 0.5, M = 1000, E = 1: the small-sigma single-epoch law (tilted Fourier series), the
# case closest to PLD_accounting (with numba).  Both cold, in the same run.
@pytest.mark.benchmark(group="eps-s05-M1000-E1")
def test_ours_vs_peer_s05_m1000_e1(benchmark):
    import time
    pa = pytest.importorskip("PLD_accounting", reason="pld-accounting not installed")

    def ours():
        A.clear_cache()
        return A.RandomAllocationPLD(0.5, 1000, 1).epsilon(1e-5)

    def peer():
        return pa.gaussian_allocation_epsilon_range(delta=1e-5, sigma=0.5, num_steps=1000, num_epochs=1)

    peer()  # numba compilation is not part of the timing
    t_ours, t_peer = [], []
    for _ in range(3):
        t0 = time.perf_counter(); lo, hi = ours(); t_ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter(); up, plo = peer(); t_peer.append(time.perf_counter() - t0)
    benchmark.pedantic(ours, rounds=1, iterations=1)
    to, tp = min(t_ours), min(t_peer)
    print(f"\nsigma=0.5 M=1000 E=1 cold: dpbounds {to:.3f} s [{lo:.10g}, {hi:.10g}] width {hi - lo:.3g}; "
          f"PLD_accounting {tp:.3f} s [{plo:.10g}, {up:.10g}] width {up - plo:.3g}; time ratio peer/ours {tp / to:.2f}")
    assert lo <= up and plo <= hi  # the brackets meet
    assert hi - lo < up - plo      # ours is the narrower one
