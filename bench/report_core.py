"""Measure, in one run, the speed/memory ratios of the compiled core vs plain numpy/scipy.

    python bench/report_core.py        (after installing dpbounds[test])

Absolute times on shared machines are noisy; the ratios are what the README quotes.
"""
import math
import os
import sys
import timeit
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from baselines import delta_bound_numpy, delta_min_numpy, rounds_brentq  # noqa: E402

import dpbounds  # noqa: E402
import dpbounds._kernels  # noqa: E402
from dpbounds import ufuncs  # noqa: E402


def best(f, number=1, repeat=5):
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number


def peak(f):
    tracemalloc.start()
    tracemalloc.reset_peak()
    b = tracemalloc.get_traced_memory()[0]
    f()
    p = tracemalloc.get_traced_memory()[1] - b
    tracemalloc.stop()
    return p


def main():
    rng = np.random.default_rng(1)
    n = 10**6
    s = rng.uniform(0.3, 5.0, n)
    m = np.floor(10 ** rng.uniform(2, 12, n))
    t_uf, t_np, t_val, t_npv = [], [], [], []
    for _ in range(7):  # interleaved, so load changes hit both sides alike
        t_uf.append(best(lambda: ufuncs.delta_min_exact(s, m), repeat=1))
        t_np.append(best(lambda: delta_min_numpy(s, m), repeat=1))
        t_val.append(best(lambda: dpbounds.delta_bound(s, m, "exact"), repeat=1))
        t_npv.append(best(lambda: delta_bound_numpy(s, m), repeat=1))
    t_uf, t_np, t_val, t_npv = min(t_uf), min(t_np), min(t_val), min(t_npv)
    m_uf = peak(lambda: ufuncs.delta_min_exact(s, m))
    m_np = peak(lambda: delta_min_numpy(s, m))
    m_val = peak(lambda: dpbounds.delta_bound(s, m, "exact"))
    m_npv = peak(lambda: delta_bound_numpy(s, m))
    print(f"libmvec in use: {dpbounds._kernels._libmvec_in_use()}")
    print("1e6 distinct (sigma, M), exact coefficient:")
    print(f"  six terms only:  ufunc {t_uf * 1e9 / n:6.1f} ns/pt  numpy+scipy {t_np * 1e9 / n:6.1f} ns/pt"
          f"  -> {t_np / t_uf:5.2f}x;  peak extra memory {m_uf / 2**20:.1f} vs {m_np / 2**20:.1f} MiB"
          f" (1/{m_np / m_uf:.1f})")
    print(f"  delta_bound (validated, NaN where invalid): {t_val * 1e9 / n:6.1f} ns/pt  numpy+scipy"
          f" {t_npv * 1e9 / n:6.1f} ns/pt  -> {t_npv / t_val:5.2f}x;  peak extra memory"
          f" {m_val / 2**20:.1f} vs {m_npv / 2**20:.1f} MiB (1/{m_npv / m_val:.1f})")

    rng = np.random.default_rng(2)
    k = 10**4
    s2, d2 = rng.uniform(0.5, 3.0, k), 10 ** rng.uniform(-4, -1, k)
    t_rr = best(lambda: dpbounds.rounds_required(s2, d2, "exact"), repeat=3)
    kb = 100
    t_bq = best(lambda: [rounds_brentq(s2[i], d2[i]) for i in range(kb)], repeat=3)
    print(f"rounds_required, 1e4 (sigma, delta): {t_rr * 1e9 / k:8.0f} ns/pt; brentq loop "
          f"{t_bq * 1e9 / kb:10.0f} ns/pt (timed on {kb} pts) -> {t_bq / kb / (t_rr / k):6.0f}x")

    reps = 200000
    t_exp = best(lambda: math.exp(1.0), number=reps)
    t_db = best(lambda: dpbounds.delta_bound(1.0, 1e6), number=reps)
    sig = iter(np.linspace(0.5, 2.0, 7 * reps + 10).tolist())
    t_db_new = best(lambda: dpbounds.delta_bound(next(sig), 1e6), number=reps)
    t_next = best(lambda: next(iter((1.0,))), number=reps)
    print(f"scalar: math.exp(1.0) {t_exp * 1e9:.0f} ns; delta_bound(1.0, 1e6) {t_db * 1e9:.0f} ns "
          f"({t_db / t_exp:.2f}x exp); with a new sigma each call ~{(t_db_new - t_next) * 1e9:.0f} ns "
          f"({(t_db_new - t_next) / t_exp:.2f}x exp)")


if __name__ == "__main__":
    main()
