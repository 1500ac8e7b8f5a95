"""Benchmarks: the random-allocation accountant in a training loop, in calibration, and cold.

Run:  PYTHONPATH=src python -m pytest bench/test_bench_ra_incremental.py -s -p no:cacheprovider

* incremental vs cold at 1e5 steps: the query a training loop makes after one more step or one
  more epoch, against a cold query on the same history (all caches cleared), in one process;
  the two brackets must be identical;
* an Opacus-style noise calibration (its get_noise_multiplier bisection: ~10-20 get_epsilon
  calls on the history [(sigma, 1/M, steps)]) and dpbounds' own calibrate_noise;
* the default tolerance at E = 1e3 and 1e4 epochs;
* cold E = 1 against PLD_accounting (with numba) in the same run.
Timings are the minimum of several repetitions; on a loaded machine compare the ratios.
"""
import math
import time
import warnings

import pytest

import dpbounds
from dpbounds import RandomAllocationAccountant
from dpbounds import accountant as A


def _min_time(f, n):
    best, out = math.inf, None
    for _ in range(n):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _cold(state):
    def f():
        A.clear_cache()
        acc = RandomAllocationAccountant()
        acc.load_state_dict(state)
        return acc.get_epsilon_bracket(1e-5)
    return f


@pytest.mark.parametrize("M, E", [(100, 1000), (234, 427)])
def test_incremental_vs_cold_at_1e5_steps(M, E):
    s = 1.0
    acc = RandomAllocationAccountant(s, M, E)
    acc.get_epsilon_bracket(1e-5)  # the loop has asked before
    step_times, epoch_times, first_step = [], [], None
    checks = []
    for epoch in range(4):
        # one more step (the first query of a new epoch), then a few more steps
        for i in range(3):
            acc.step(noise_multiplier=s, sample_rate=1 / M)
            t0 = time.perf_counter()
            b = acc.get_epsilon_bracket(1e-5)
            dt = time.perf_counter() - t0
            if epoch == 0 and i == 0:
                first_step = dt
            else:
                step_times.append(dt)
        checks.append((acc.state_dict(), b))
        # to the end of the epoch: one more epoch since the last epoch-end query
        for _ in range(M - 3):
            acc.step(noise_multiplier=s, sample_rate=1 / M)
        t0 = time.perf_counter()
        b = acc.get_epsilon_bracket(1e-5)
        epoch_times.append(time.perf_counter() - t0)
        checks.append((acc.state_dict(), b))
    cold_times = []
    for state, b in checks:
        t, bc = _min_time(_cold(state), 1)
        cold_times.append(t)
        assert tuple(bc) == tuple(b) and bc.method == b.method  # the same bracket, bit for bit
        assert b.tolerance_met
    t_cold = min(cold_times)
    t_step, t_epoch = min(step_times), min(epoch_times)
    print(f"\nM={M}, E={E} ({M * E} steps), sigma={s}: cold {t_cold * 1e3:.1f} ms (min of {len(cold_times)}); "
          f"in the loop: +1 epoch {t_epoch * 1e3:.1f} ms (max {max(epoch_times) * 1e3:.1f}), "
          f"+1 step {t_step * 1e3:.2f} ms (max {max(step_times) * 1e3:.1f}; the first step into a new "
          f"bucket {first_step * 1e3:.1f} ms); cold / +1 epoch = {t_cold / t_epoch:.1f}x")
    assert t_epoch < t_cold and t_step < t_cold


def _opacus_get_noise_multiplier(target_epsilon, delta, sample_rate, steps, eps_tol=0.01):
    """Opacus' get_noise_multiplier (opacus/accountants/utils.py): double sigma_high from 10
    while epsilon is above the target, then bisect until within eps_tol below it."""
    calls = []

    def eps(sigma):
        acc = RandomAllocationAccountant()
        acc._history = [[float(sigma), float(sample_rate), int(steps)]]  # as Opacus assigns history
        t0 = time.perf_counter()
        e = acc.get_epsilon(delta)
        calls.append(time.perf_counter() - t0)
        return e

    lo, hi = 0.0, 10.0
    e_hi = math.inf
    while e_hi > target_epsilon:
        hi = 2.0 * hi
        e_hi = eps(hi)
    while target_epsilon - e_hi > eps_tol:
        mid = 0.5 * (lo + hi)
        e = eps(mid)
        if e < target_epsilon:
            hi, e_hi = mid, e
        else:
            lo = mid
    return hi, calls


def test_opacus_style_calibration_n60000_b256_e10():
    # N = 60000, B = 256: M = 234 steps per epoch (sample rate 1/234), E = 10: 2340 steps
    A.clear_cache()
    t0 = time.perf_counter()
    sigma, calls = _opacus_get_noise_multiplier(3.0, 1e-5, 1 / 234, 2340)
    total = time.perf_counter() - t0
    A.clear_cache()
    t1 = time.perf_counter()
    s2 = dpbounds.calibrate_noise(3.0, 1e-5, dataset_size=60000, batch_size=256, epochs=10)
    t_cal = time.perf_counter() - t1
    print(f"\nOpacus-style calibration: sigma={sigma:.5f} in {total:.2f} s ({len(calls)} get_epsilon calls, "
          f"max {max(calls) * 1e3:.0f} ms, median {sorted(calls)[len(calls) // 2] * 1e3:.0f} ms); "
          f"calibrate_noise(sampling='random_allocation'): sigma={s2:.6f} in {t_cal:.2f} s")
    assert abs(sigma - s2) < 0.01
    assert total < 10.0  # target 5 s on an idle machine


@pytest.mark.parametrize("sigma, M, E", [(1.0, 100, 1000), (1.0, 100, 10000), (0.8, 100, 10000),
                                         (0.8, 10000, 10000), (1.0, 10000, 10000)])
def test_default_tolerance_at_many_epochs(sigma, M, E):
    A.clear_cache()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = RandomAllocationAccountant(sigma, M, E).get_epsilon_bracket(1e-5)
    dt = time.perf_counter() - t0
    print(f"\nsigma={sigma}, M={M}, E={E}: [{b.lower:.7g}, {b.upper:.7g}] width {b.relative_width:.2e} "
          f"(tolerance 2e-3) cold {dt:.2f} s")
    assert b.tolerance_met


def test_cold_e1_vs_peer_m100():
    pa = pytest.importorskip("PLD_accounting", reason="pld-accounting not installed")

    def ours():
        A.clear_cache()
        return A.RandomAllocationPLD(1.0, 100, 1).epsilon(1e-5)

    def peer():
        return pa.gaussian_allocation_epsilon_range(delta=1e-5, sigma=1.0, num_steps=100, num_epochs=1)

    peer()  # numba compilation is not part of the timing
    to, tp = [], []
    for _ in range(5):
        to.append(_min_time(ours, 3)[0])
        tp.append(_min_time(peer, 1)[0])
    lo, hi = ours()
    up, plo = peer()
    print(f"\nsigma=1 M=100 E=1 cold: dpbounds {min(to) * 1e3:.2f} ms [{lo:.10g}, {hi:.10g}]; "
          f"PLD_accounting {min(tp) * 1e3:.1f} ms [{plo:.6g}, {up:.6g}]; ratio {min(tp) / min(to):.0f}x")
    assert lo <= up and plo <= hi
