"""Sweeps against the package's own vectorised kernels on the same grids, in one run.

    python bench/report_sweep_kernels.py [--repeat 9] [--clock cpu|wall] [--quick]

Separable closed forms: ``dpbounds.sweep`` in memory (values, ``valid``, ``reason``) against
``dpbounds.outer.*_outer`` on the same Cartesian grid (its output only; for delta_bound also
with its status bits), at 10^6 and 10^7 points, on the issue's grid (sigma 0.5:4 x rounds
1e3:1e9, 14 % of the points invalid) and an all-valid one; also what reading the ``reason``
column costs afterwards (it is computed when read).

Renyi DP: ``rdp_epsilon_poisson`` / ``rdp_epsilon_wor`` against the vectorised path --
``rdp.epsilon(steps * rdp.poisson_gaussian(DEFAULT_ORDERS, sigma, q), DEFAULT_ORDERS, delta)``
(``subsampled_gaussian_wor`` for WOR) -- on the same grid: the sweep with ``orders="default"``
(the same orders), and with its default ``orders="search"`` (the accountant's order search,
more orders per point), and that search point by point as the sweep ran it before (one
RDPAccountant per point).

Interleaved runs, minimum of each; the ratio is what counts on a shared machine.  Target
(issue 21): separable sweeps within 1.5x of the outer function, RDP sweeps within 1.5x of the
vectorised path.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

import dpbounds
import dpbounds.rdp as R
from dpbounds.outer import delta_bound_outer, min_dataset_size_outer, rounds_required_outer
from dpbounds.sweep import parse_axis
from dpbounds.sweep._quantities import QUANTITIES


def best(runs: dict, repeat: int, clock) -> dict[str, float]:
    times = {k: [] for k in runs}
    for _ in range(repeat):
        for k, f in runs.items():
            t0 = clock()
            f()
            times[k].append(clock() - t0)
    return {k: min(v) for k, v in times.items()}


def separable(repeat: int, clock, quick: bool) -> None:
    sizes = ((1000, 1000),) if quick else ((1000, 1000), (1000, 10000))
    for n_s, n_m in sizes:
        for label, s_lo, m_lo in (("issue grid", 0.5, 1e3), ("all-valid", 1.0, 1e6)):
            s = parse_axis("sigma", (s_lo, 4.0, n_s, "lin"))
            m = np.unique(np.rint(np.geomspace(m_lo, 1e9, n_m)))
            k = n_m
            while m.size < n_m:   # integer rounding drops repeats at the low end: top the axis up
                k += n_m - m.size
                m = np.unique(np.rint(np.geomspace(m_lo, 1e9, k)))
            ds = dpbounds.sweep("delta_bound", sigma=s, rounds=m, progress=False)
            ref, status = delta_bound_outer(s, m, return_status=True)
            assert np.array_equal(np.asarray(ds["delta_bound"]), ref, equal_nan=True)
            invalid = 1 - float(np.asarray(ds["valid"]).mean())

            def sweep_and_reasons():
                np.asarray(dpbounds.sweep("delta_bound", sigma=s, rounds=m, progress=False)["reason"])

            t = best({"outer": lambda: delta_bound_outer(s, m),
                      "outer+status": lambda: delta_bound_outer(s, m, return_status=True),
                      "sweep": lambda: dpbounds.sweep("delta_bound", sigma=s, rounds=m, progress=False),
                      "sweep+reasons read": sweep_and_reasons}, repeat, clock)
            n = s.size * m.size
            print(f"  delta_bound {n_s} x {n_m} ({label}, {invalid:.0%} invalid): outer {t['outer'] * 1e9 / n:.2f} "
                  f"ns/pt; sweep {t['sweep'] / t['outer']:.2f}x outer ({t['sweep'] / t['outer+status']:.2f}x outer "
                  f"with status); reading the reasons too {t['sweep+reasons read'] / t['outer']:.2f}x")
    s = parse_axis("sigma", (0.5, 4.0, 200, "lin"))
    d = parse_axis("delta", (1e-12, 1e-2, 200, "log"))
    t = best({"outer": lambda: rounds_required_outer(s, d),
              "sweep": lambda: dpbounds.sweep("rounds_required", sigma=s, delta=d, progress=False)}, repeat, clock)
    print(f"  rounds_required 200 x 200: sweep {t['sweep'] / t['outer']:.2f}x rounds_required_outer")
    s = parse_axis("sigma", (0.5, 4.0, 1000, "lin"))
    m = parse_axis("rounds", (1, 1e9, 5000, "log"))
    t = best({"outer": lambda: min_dataset_size_outer(s, m),
              "sweep": lambda: dpbounds.sweep("min_dataset_size", sigma=s, rounds=m, progress=False)}, repeat, clock)
    print(f"  min_dataset_size 1000 x {m.size}: sweep {t['sweep'] / t['outer']:.2f}x min_dataset_size_outer")


def _per_point(name, axes, options):
    q = QUANTITIES[name]
    S, Q = np.meshgrid(axes["sigma"], axes["sample_rate"], indexing="ij")
    for s, r in zip(S.ravel(), Q.ravel()):
        try:
            q.compute.point({"sigma": float(s), "sample_rate": float(r), "steps": axes["steps"],
                             "delta": axes["delta"]}, options)
        except ValueError:
            pass


def rdp(repeat: int, clock, quick: bool) -> None:
    orders = np.asarray(R.DEFAULT_ORDERS)
    n = 6 if quick else 12
    cases = [
        ("rdp_epsilon_poisson", dict(sigma=np.geomspace(0.7, 4.0, n), sample_rate=np.geomspace(1e-3, 0.1, n),
                                     steps=2000.0, delta=1e-6),
         lambda a: R.epsilon(a["steps"] * R.poisson_gaussian(orders, a["sigma"][:, None, None],
                                                             a["sample_rate"][None, :, None]), orders, a["delta"]),
         dict(conversion="improved", mode="exact")),
        ("rdp_epsilon_wor", dict(sigma=np.geomspace(1.6, 40.0, n), sample_rate=np.geomspace(1e-4, 0.1, n),
                                 steps=60000.0, delta=1e-8),
         lambda a: R.epsilon(a["steps"] * R.subsampled_gaussian_wor(orders, a["sigma"][:, None, None] / 2,
                                                                    a["sample_rate"][None, :, None]), orders,
                             a["delta"]),
         dict(conversion="improved", bound="improved")),
    ]
    for name, axes, vectorised, options in cases:
        pts = axes["sigma"].size * axes["sample_rate"].size
        runs = {"vectorised": lambda: vectorised(axes),
                "sweep default orders": lambda: dpbounds.sweep(name, orders="default", progress=False, **axes),
                "sweep search": lambda: dpbounds.sweep(name, progress=False, **axes)}
        if not quick:
            runs["search point by point"] = lambda: _per_point(name, axes, dict(options, orders="search"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = best(runs, max(2, repeat // 3), clock)
        v = t["vectorised"]
        line = (f"  {name} {axes['sigma'].size} x {axes['sample_rate'].size}: vectorised path {v * 1e3 / pts:.2f} "
                f"ms/pt; sweep orders='default' {t['sweep default orders'] / v:.2f}x it; sweep orders='search' "
                f"{t['sweep search'] / v:.2f}x it")
        if "search point by point" in t:
            line += (f"; the search point by point (before) {t['search point by point'] / v:.2f}x it, "
                     f"{t['search point by point'] / t['sweep search']:.2f}x the block search")
        print(line)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="cpu: this process' CPU time (steadier on a shared machine); wall: elapsed time")
    ap.add_argument("--quick", action="store_true", help="the smaller grids only")
    a = ap.parse_args()
    clock = time.process_time if a.clock == "cpu" else time.perf_counter
    dpbounds.sweep("delta_bound", sigma=1.0, rounds=1e6, progress=False)   # imports (xarray) out of the timings
    print(f"sweeps against the package's kernels, best of {a.repeat} ({a.clock} time); load average "
          f"{os.getloadavg()[0]:.1f}")
    separable(a.repeat, clock, a.quick)
    rdp(a.repeat, clock, a.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
