"""The sweep engine's overhead on a 10^7-point closed-form sweep, against the raw ufunc.

    python bench/report_sweep_overhead.py [--points 1e7] [--repeat 5] [--clock cpu|wall]

delta_bound over sigma 0.5:4 (lin) x rounds 1e3:1e9 (log), ``dpbounds.sweep`` (engine="local",
in memory: values, valid, reason) by its two paths -- the element-wise one (the ufunc on chunks;
what every closed form uses) and the separable one it picks for this Cartesian grid
(``dpbounds.outer``) -- against ``dpbounds.ufuncs.delta_bound_exact`` on the same points already
flattened (its output only).
Interleaved runs, minimum of each; the ratio is what counts on a shared machine (CPU time by
default: wall time there also counts the waits for a core).  Two grids:
the issue's (14% of the points invalid: the sweep also computes their reasons) and an
all-valid one (sigma 1:4, rounds 1e6:1e9: the engine overhead alone).  Memory: the peak
(tracemalloc) of the same sweep streamed to Parquet at 10^6 and 10^7 points -- flat.
"""
import argparse
import dataclasses
import os
import sys
import tempfile
import time
import tracemalloc

import numpy as np

import dpbounds
from dpbounds import ufuncs
from dpbounds.sweeps import parse_axis
from dpbounds.sweeps._quantities import get_quantity

#: delta_bound without its separable kernel: the element-wise path of the engine
ELEMENTWISE = dataclasses.replace(get_quantity("delta_bound"), outer=None)


def grid(n_sigma, n_rounds, s_lo, m_lo):
    s = parse_axis("sigma", (s_lo, 4.0, n_sigma, "lin"))
    m = parse_axis("rounds", (m_lo, 1e9, n_rounds, "log"))
    return s, m


def _timed(clock, f):
    t0 = clock()
    f()
    return clock() - t0


def compare(s, m, repeat, clock):
    S, M = np.repeat(s, m.size), np.tile(m, s.size)
    runs = {
        "raw": lambda: ufuncs.delta_bound_exact(S, M),
        "elementwise": lambda: dpbounds.sweep(ELEMENTWISE, sigma=s, rounds=m, progress=False),
        "separable": lambda: dpbounds.sweep("delta_bound", sigma=s, rounds=m, progress=False),
    }
    times = {k: [] for k in runs}
    for _ in range(repeat):
        for k, f in runs.items():
            times[k].append(_timed(clock, f))
    raw, swept, separable = times["raw"], times["elementwise"], times["separable"]
    ref = ufuncs.delta_bound_exact(S, M)
    for q in (ELEMENTWISE, "delta_bound"):
        ds = dpbounds.sweep(q, sigma=s, rounds=m, progress=False)
        assert np.array_equal(np.asarray(ds["delta_bound"]).ravel(), ref, equal_nan=True)
    invalid = 1 - float(np.asarray(ds["valid"]).mean())
    return min(raw), min(swept), min(separable), invalid, S.size


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
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="cpu: this process' CPU time (steadier on a shared machine; the sweep and the "
                         "ufunc run in one thread); wall: elapsed time")
    a = ap.parse_args()
    clock = time.process_time if a.clock == "cpu" else time.perf_counter
    n = int(a.points)
    n_s = 1000
    n_m = n // n_s
    print(f"delta_bound, {n_s} sigma x {n_m} rounds = {n_s * n_m:.3g} points, best of {a.repeat} "
          f"(interleaved, {a.clock} time)")
    for label, s_lo, m_lo in (("issue grid (sigma 0.5:4, rounds 1e3:1e9)", 0.5, 1e3),
                              ("all-valid grid (sigma 1:4, rounds 1e6:1e9)", 1.0, 1e6)):
        s, m = grid(n_s, n_m, s_lo, m_lo)
        # integer rounding may drop repeats at the low end: top the axis up to n_m values
        k = n_m
        while m.size < n_m:
            k += n_m - m.size
            m = parse_axis("rounds", (m_lo, 1e9, k, "log"))
        t_raw, t_sw, t_sep, invalid, size = compare(s, m, a.repeat, clock)
        print(f"  {label}: {invalid:.1%} invalid; raw ufunc {t_raw * 1e9 / size:.1f} ns/pt; "
              f"sweep element-wise {t_sw * 1e9 / size:.1f} ns/pt -> overhead {t_sw / t_raw - 1:+.1%}; "
              f"sweep separable (default here) {t_sep * 1e9 / size:.1f} ns/pt -> {t_raw / t_sep:.1f}x the raw ufunc")
    s, m = grid(1000, 1000, 0.5, 1e3)
    p6 = parquet_peak(s, m)
    s, m = grid(1000, 10000, 0.5, 1e3)
    p7 = parquet_peak(s, m)
    print(f"  to Parquet, peak traced memory: {p6 / 2**20:.0f} MiB at 1e6 points, {p7 / 2**20:.0f} MiB at 1e7 "
          "(flat: chunks of 2^20 points)")


if __name__ == "__main__":
    sys.exit(main())
