"""Sweeps against the package's own vectorised kernels on the same grids, in one run.

    python bench/report_sweep_kernels.py [--repeat 9] [--clock cpu|wall] [--quick]

Separable closed forms: ``dpbounds.sweep`` in memory (values, ``valid``, ``reason``) against
``dpbounds.outer.*_outer`` on the same Cartesian grid (its output only): delta_bound at 10^6
and 10^7 points on the issue's grid (sigma 0.5:4 x rounds 1e3:1e9, 14 % of the points
invalid) and an all-valid one, rounds_required and min_dataset_size at 10^6 points (and
min_dataset_size on a 1000 x 3917 grid).  The sweep returns an xarray Dataset (its ``reason``
column computed when read), or without xarray a dict of numpy arrays (the reasons built at
once); also the Dataset with its reason column read.

Renyi DP: ``rdp_epsilon_poisson`` / ``rdp_epsilon_wor`` against the vectorised path doing the same
computation on the same grid.  ``orders="default"``: ``rdp.epsilon(steps * rdp.poisson_gaussian(
DEFAULT_ORDERS, sigma, q), DEFAULT_ORDERS, delta)`` (``subsampled_gaussian_wor`` for WOR).  The
sweep's default, the accountant's order search (real orders, as many as it needs, up to 1e4): that
path at the orders the search evaluates at each point -- recorded from the sweep, the curve of every
point at its own orders in one call of ``poisson_gaussian`` / ``subsampled_gaussian_wor``, then the
conversion -- which gives the sweep's answer (asserted).  The search against the default-orders
path is printed too, for scale: it evaluates other (more, higher) orders and gives another answer,
so that ratio is not like for like.  And the search point by point as the sweep ran it before
(one RDPAccountant per point).

Interleaved runs, minimum of each; the ratio is what counts on a shared machine.  Target
(issue 21): separable sweeps within 1.5x of the outer function, RDP sweeps within 1.5x of the
vectorised path.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import warnings

import numpy as np

import dpbounds
import dpbounds.rdp as R
from dpbounds.outer import delta_bound_outer, min_dataset_size_outer, rounds_required_outer
from dpbounds.rdp._outward import eps_objective
from dpbounds.sweeps import _rdp, parse_axis
from dpbounds.sweeps._quantities import QUANTITIES


def best(runs: dict, repeat: int, clock) -> dict[str, float]:
    times = {k: [] for k in runs}
    for _ in range(repeat):
        for k, f in runs.items():
            t0 = clock()
            f()
            times[k].append(clock() - t0)
    return {k: min(v) for k, v in times.items()}


@contextlib.contextmanager
def no_xarray():
    """``import xarray`` fails inside the block: the sweep returns its dict of numpy arrays."""
    saved = sys.modules.get("xarray")
    sys.modules["xarray"] = None
    try:
        yield
    finally:
        if saved is None:
            del sys.modules["xarray"]
        else:
            sys.modules["xarray"] = saved


def _rounds_axis(lo: float, n: int) -> np.ndarray:
    """n distinct integers geometrically spaced from lo to 1e9 (rounding drops repeats at the low end)."""
    k = n
    m = np.unique(np.rint(np.geomspace(lo, 1e9, k)))
    while m.size < n:
        k += n - m.size
        m = np.unique(np.rint(np.geomspace(lo, 1e9, k)))
    return m


def separable_case(label: str, quantity: str, outer, a_name: str, a, b_name: str, b, repeat: int, clock) -> None:
    """One grid: the outer function, and the sweep in memory as an xarray Dataset, as a dict
    (xarray hidden), and as a Dataset whose reason column is then read."""
    axes = {a_name: a, b_name: b}
    ds = dpbounds.sweep(quantity, progress=False, **axes)
    ref = outer(a, b)
    assert np.array_equal(np.asarray(ds[quantity]), ref, equal_nan=True)
    with no_xarray():
        d = dpbounds.sweep(quantity, progress=False, **axes)
    assert isinstance(d, dict) and np.array_equal(d["reason"], np.asarray(ds["reason"]))
    invalid = 1 - float(np.asarray(ds["valid"]).mean())

    def as_dict():
        with no_xarray():
            dpbounds.sweep(quantity, progress=False, **axes)

    def read_reasons():
        np.asarray(dpbounds.sweep(quantity, progress=False, **axes)["reason"])

    # the Dataset against the outer function alone, then the variants that build 10^6 Python
    # strings in a loop of their own: freeing those between two timed calls would change the
    # memory the next call gets, and with it the ratio
    t = best({"outer": lambda: outer(a, b),
              "xarray": lambda: dpbounds.sweep(quantity, progress=False, **axes)}, repeat, clock)
    t2 = best({"outer": lambda: outer(a, b), "dict": as_dict, "xarray+reasons": read_reasons},
              max(2, repeat // 2), clock)
    n = a.size * b.size
    o, o2 = t["outer"], t2["outer"]
    print(f"  {quantity} {a.size} x {b.size} ({label}, {invalid:.0%} invalid): {outer.__name__} {o * 1e9 / n:.2f} ns/pt; "
          f"sweep -> Dataset {t['xarray'] / o:.2f}x; -> dict {t2['dict'] / o2:.2f}x, "
          f"Dataset then its reason column read {t2['xarray+reasons'] / o2:.2f}x")


def separable(repeat: int, clock, quick: bool) -> None:
    sizes = ((1000, 1000),) if quick else ((1000, 1000), (1000, 10000))
    for n_s, n_m in sizes:
        for label, s_lo, m_lo in (("issue grid", 0.5, 1e3), ("all-valid", 1.0, 1e6)):
            s = parse_axis("sigma", (s_lo, 4.0, n_s, "lin"))
            separable_case(label, "delta_bound", delta_bound_outer, "sigma", s, "rounds", _rounds_axis(m_lo, n_m),
                           repeat, clock)
    n = 200 if quick else 1000
    s = parse_axis("sigma", (0.5, 4.0, n, "lin"))
    d = parse_axis("delta", (1e-12, 1e-2, n, "log"))
    separable_case("45% no M qualifies", "rounds_required", rounds_required_outer, "sigma", s, "delta", d,
                   max(2, repeat // 3) if not quick else repeat, clock)
    s = parse_axis("sigma", (0.5, 4.0, 1000, "lin"))
    for m in (_rounds_axis(1.0, 1000), parse_axis("rounds", (1, 1e9, 5000, "log"))):
        separable_case("all finite", "min_dataset_size", min_dataset_size_outer, "sigma", s, "rounds", m, repeat, clock)


def _per_point(name, axes, options):
    q = QUANTITIES[name]
    S, Q = np.meshgrid(axes["sigma"], axes["sample_rate"], indexing="ij")
    for s, r in zip(S.ravel(), Q.ravel()):
        try:
            q.compute.point({"sigma": float(s), "sample_rate": float(r), "steps": axes["steps"],
                             "delta": axes["delta"]}, options)
        except ValueError:
            pass


def _search_orders(name, axes):
    """The orders the sweep's search evaluates at each point of the grid (points in C order, one
    row each, padded by repeating the last), recorded from one sweep in one chunk; and its epsilons."""
    seen: dict[int, list[float]] = {}
    original = _rdp._Objective.__call__

    def record(self, points, alpha):
        a = np.broadcast_to(alpha, (points.size, np.shape(alpha)[1]))
        for p, row in zip(points.tolist(), a.tolist()):
            seen.setdefault(p, []).extend(row)
        return original(self, points, alpha)

    _rdp._Objective.__call__ = record
    try:
        ds = dpbounds.sweep(name, progress=False, chunk_size=10 ** 9, **axes)
    finally:
        _rdp._Objective.__call__ = original
    n = axes["sigma"].size * axes["sample_rate"].size
    assert sorted(seen) == list(range(n)), "every point of the bench grid is valid"
    k = max(len(v) for v in seen.values())
    orders = np.array([seen[p] + [seen[p][-1]] * (k - len(seen[p])) for p in range(n)])
    return orders, np.asarray(ds[name], dtype=np.float64).ravel()


def _at_orders(curve, orders, delta):
    """epsilon = the minimum over each point's own orders of the conversion (as rdp.epsilon; NaN
    orders skipped, as the accountant skips them)."""
    v = eps_objective(orders, curve, delta, "improved")
    return np.min(np.where(np.isnan(v), np.inf, v), axis=1)


def rdp(repeat: int, clock, quick: bool) -> None:
    """Each RDP sweep against the vectorised path doing the same computation: with
    ``orders="default"`` that path at the default orders; with the order search (the sweep's
    default) that path at the orders the search evaluates at each point -- the curve of each
    point at its own orders in one call of the public vectorised function, then the conversion
    at those orders (the same answer: asserted).  The search is sequential (a scan, its
    extension, a golden-section refinement: ~40 rounds), so its orders are known only once it
    has run; the reference is what the search would cost were they known in advance.  Also, for
    scale, the search against the default-orders path (fewer orders, capped at 1024: another
    answer) and the search point by point as the sweep ran it before (one RDPAccountant a point)."""
    orders = np.asarray(R.DEFAULT_ORDERS)
    n = 6 if quick else 12
    cases = [
        ("rdp_epsilon_poisson", dict(sigma=np.geomspace(0.7, 4.0, n), sample_rate=np.geomspace(1e-3, 0.1, n),
                                     steps=2000.0, delta=1e-6),
         lambda a, o, s, q: a["steps"] * np.asarray(R.poisson_gaussian(o, s, q)),
         dict(conversion="improved", mode="exact")),
        ("rdp_epsilon_wor", dict(sigma=np.geomspace(1.6, 40.0, n), sample_rate=np.geomspace(1e-4, 0.1, n),
                                 steps=60000.0, delta=1e-8),
         lambda a, o, s, q: a["steps"] * np.asarray(R.subsampled_gaussian_wor(o, s / 2, q)),
         dict(conversion="improved", bound="improved")),
    ]
    for name, axes, curve, options in cases:
        pts = axes["sigma"].size * axes["sample_rate"].size
        S, Q = (x.ravel() for x in np.meshgrid(axes["sigma"], axes["sample_rate"], indexing="ij"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            visited, eps = _search_orders(name, axes)
        same = _at_orders(curve(axes, visited, S[:, None], Q[:, None]), visited, axes["delta"])
        # the search keeps an integer order within 1e-6 of its optimum when as good up to 1e-13
        assert np.allclose(same, eps, rtol=1e-12, atol=0), "the reference computes the sweep's answer"
        default = lambda: R.epsilon(curve(axes, orders, axes["sigma"][:, None, None],  # noqa: E731
                                          axes["sample_rate"][None, :, None]), orders, axes["delta"])
        runs = {"default orders": default,
                "sweep default orders": lambda: dpbounds.sweep(name, orders="default", progress=False, **axes),
                "search orders": lambda: _at_orders(curve(axes, visited, S[:, None], Q[:, None]), visited,
                                                    axes["delta"]),
                "sweep search": lambda: dpbounds.sweep(name, progress=False, **axes)}
        if not quick:
            runs["search point by point"] = lambda: _per_point(name, axes, dict(options, orders="search"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = best(runs, max(2, repeat // 3), clock)
        v, w = t["default orders"], t["search orders"]
        line = (f"  {name} {axes['sigma'].size} x {axes['sample_rate'].size}: orders='default': vectorised path "
                f"{v * 1e3 / pts:.2f} ms/pt, sweep {t['sweep default orders'] / v:.2f}x it; order search "
                f"({visited.shape[1]} orders a point at most): vectorised path at the search's orders "
                f"{w * 1e3 / pts:.2f} ms/pt, sweep {t['sweep search'] / w:.2f}x it "
                f"({t['sweep search'] / v:.2f}x the default-orders path)")
        if "search point by point" in t:
            line += (f"; the search point by point (before) {t['search point by point'] / w:.2f}x the "
                     f"same-orders path, {t['search point by point'] / t['sweep search']:.2f}x the sweep")
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
