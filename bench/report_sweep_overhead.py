"""The sweep engine's overhead on a 10^7-point closed-form sweep, against the raw ufunc.

    python bench/report_sweep_overhead.py [--points 1e7]

delta_bound over sigma 0.5:4 (lin) x rounds 1e3:1e9 (log), the element-wise path of
``dpbounds.sweep`` (engine="local", in memory: values, valid, reason), against
``dpbounds.ufuncs.delta_bound_exact`` on the same points already flattened (its output only).
Interleaved runs, minimum of each; the ratio is what counts on a shared machine.  Two grids:
the issue's (14% of the points invalid: the sweep also computes their reasons) and an
all-valid one (sigma 1:4, rounds 1e6:1e9: the engine overhead alone).  Memory: the peak
(tracemalloc) of the same sweep streamed to Parquet at 10^6 and 10^7 points -- flat.
"""
import argparse
import os
import sys
import tempfile
import time
import tracemalloc

import numpy as np

import dpbounds
from dpbounds import ufuncs
from dpbounds.sweep import parse_axis


def grid(n_sigma, n_rounds, s_lo, m_lo):
    s = parse_axis("sigma", (s_lo, 4.0, n_sigma, "lin"))
    m = parse_axis("rounds", (m_lo, 1e9, n_rounds, "log"))
    return s, m


def compare(s, m, repeat):
    S, M = np.repeat(s, m.size), np.tile(m, s.size)
    raw, swept = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        ufuncs.delta_bound_exact(S, M)
        t1 = time.perf_counter()
        dpbounds.sweep("delta_bound", sigma=s, rounds=m, progress=False)
        t2 = time.perf_counter()
        raw.append(t1 - t0)
        swept.append(t2 - t1)
    ds = dpbounds.sweep("delta_bound", sigma=s, rounds=m, progress=False)
    v = np.asarray(ds["delta_bound"]).ravel()
    ref = ufuncs.delta_bound_exact(S, M)
    assert np.array_equal(v, ref, equal_nan=True)
    invalid = 1 - float(np.asarray(ds["valid"]).mean())
    return min(raw), min(swept), invalid, S.size


def parquet_peak(s, m):
    with tempfile.TemporaryDirectory() as d:
        tracemalloc.start()
        tracemalloc.reset_peak()
        dpbounds.sweep("delta_bound", sigma=s, rounds=m, out=os.path.join(d, "g.parquet"), progress=False)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=float, default=1e7)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    n = int(a.points)
    n_s = 1000
    n_m = n // n_s
    print(f"delta_bound, {n_s} sigma x {n_m} rounds = {n_s * n_m:.3g} points, best of {a.repeat} (interleaved)")
    for label, s_lo, m_lo in (("issue grid (sigma 0.5:4, rounds 1e3:1e9)", 0.5, 1e3),
                              ("all-valid grid (sigma 1:4, rounds 1e6:1e9)", 1.0, 1e6)):
        s, m = grid(n_s, n_m, s_lo, m_lo)
        # integer rounding may drop repeats at the low end: top the axis up to n_m values
        k = n_m
        while m.size < n_m:
            k += n_m - m.size
            m = parse_axis("rounds", (m_lo, 1e9, k, "log"))
        t_raw, t_sw, invalid, size = compare(s, m, a.repeat)
        print(f"  {label}: {invalid:.1%} invalid; raw ufunc {t_raw * 1e9 / size:.1f} ns/pt, "
              f"sweep {t_sw * 1e9 / size:.1f} ns/pt -> overhead {t_sw / t_raw - 1:+.1%}")
    s, m = grid(1000, 1000, 0.5, 1e3)
    p6 = parquet_peak(s, m)
    s, m = grid(1000, 10000, 0.5, 1e3)
    p7 = parquet_peak(s, m)
    print(f"  to Parquet, peak traced memory: {p6 / 2**20:.0f} MiB at 1e6 points, {p7 / 2**20:.0f} MiB at 1e7 "
          "(flat: chunks of 2^20 points)")


if __name__ == "__main__":
    sys.exit(main())
