"""Benchmarks: the Cartesian-grid kernels of dpbounds.outer against the numpy broadcasting
expressions they replace and against the memory bandwidth of writing their output.

Groups (pytest-benchmark, one grid each):
  outer-delta_bound      sigma (1e4) x rounds (2e3), exact coefficient:
                         * delta_bound_outer(sigma, rounds, out=out) and without out (new array);
                         * the raw ufunc broadcast ufuncs.delta_bound_exact(sigma[:, None], rounds[None, :]);
                         * the validated broadcast dpbounds.delta_bound(sigma[:, None], rounds[None, :]);
                         * out.fill(1.0) and np.copyto(out, src): writing (reading and writing)
                           the same 160 MB, the bandwidth limit.
  outer-rounds_required  sigma (200) x delta (200): rounds_required_outer vs the broadcast.
  outer-min_dataset_size sigma (1e4) x rounds (2e3): min_dataset_size_outer vs the broadcast.

``test_ratios_interleaved`` measures the same things interleaved (each round times every
variant once; the minimum over rounds is kept, so load changes hit all sides alike), on
1e4 x 2e3 and, where at least 4 GB of memory are available, on the 1e4 x 1e4 grid of the
issue (800 MB of output), prints the ratios and asserts the target: delta_bound_outer at
least 5x the throughput of the broadcasting expression.  With --benchmark-disable (the test
suite) every benchmark runs once on a 200 x 100 grid and asserts its answer only.

Run:  PYTHONPATH=src python -m pytest bench/test_bench_outer.py --benchmark-only -s
"""
from __future__ import annotations

import time

import numpy as np
import pytest

import dpbounds
from dpbounds import ufuncs
from dpbounds.outer import delta_bound_outer, min_dataset_size_outer, rounds_required_outer

NS, NM = 10**4, 2 * 10**3
NS_UNTIMED, NM_UNTIMED = 200, 100


def _axes(ns, nm):
    return np.linspace(0.5, 4.0, ns), np.floor(np.logspace(3, 12, nm))


@pytest.fixture(scope="module")
def grid(timing):
    ns, nm = (NS, NM) if timing else (NS_UNTIMED, NM_UNTIMED)
    s, m = _axes(ns, nm)
    return s, m, np.empty((ns, nm)), np.ones((ns, nm))


def _check_rows(got, s, m):
    for i in range(0, s.size, 997 if s.size > 997 else 37):
        np.testing.assert_array_equal(got[i], dpbounds.delta_bound(s[i], m))


@pytest.mark.benchmark(group="outer-delta_bound")
def test_delta_bound_outer_into_out(benchmark, grid):
    s, m, out, _ = grid
    got = benchmark(delta_bound_outer, s, m, out=out)
    _check_rows(got, s, m)


@pytest.mark.benchmark(group="outer-delta_bound")
def test_delta_bound_outer_new_array(benchmark, grid):
    s, m, _, _ = grid
    _check_rows(benchmark(delta_bound_outer, s, m), s, m)


@pytest.mark.benchmark(group="outer-delta_bound")
def test_delta_bound_ufunc_broadcast(benchmark, grid):
    s, m, _, _ = grid
    _check_rows(benchmark(ufuncs.delta_bound_exact, s[:, None], m[None, :]), s, m)


@pytest.mark.benchmark(group="outer-delta_bound")
def test_delta_bound_validated_broadcast(benchmark, grid):
    s, m, _, _ = grid
    _check_rows(benchmark(dpbounds.delta_bound, s[:, None], m[None, :]), s, m)


@pytest.mark.benchmark(group="outer-delta_bound")
def test_write_bandwidth_fill(benchmark, grid):
    _, _, out, _ = grid
    benchmark(out.fill, 1.0)
    assert out[-1, -1] == 1.0


@pytest.mark.benchmark(group="outer-delta_bound")
def test_write_bandwidth_copyto(benchmark, grid):
    _, _, out, src = grid
    benchmark(np.copyto, out, src)
    assert out[-1, -1] == 1.0


@pytest.fixture(scope="module")
def sigma_delta():
    return np.linspace(0.5, 3.0, 200), np.logspace(-4, -1, 200)


@pytest.mark.benchmark(group="outer-rounds_required")
def test_rounds_required_outer(benchmark, sigma_delta):
    s, d = sigma_delta
    got = benchmark(rounds_required_outer, s, d)
    for i in range(0, s.size, 37):
        np.testing.assert_array_equal(got[i], dpbounds.rounds_required(s[i], d))


@pytest.mark.benchmark(group="outer-rounds_required")
def test_rounds_required_broadcast(benchmark, sigma_delta):
    s, d = sigma_delta
    got = benchmark(dpbounds.rounds_required, s[:, None], d[None, :])
    np.testing.assert_array_equal(got, rounds_required_outer(s, d))


@pytest.mark.benchmark(group="outer-min_dataset_size")
def test_min_dataset_size_outer(benchmark, grid):
    s, m, out, _ = grid
    got = benchmark(min_dataset_size_outer, s, m, 1.0, 0.1, out=out)
    k = 997 if s.size > 997 else 37
    np.testing.assert_array_equal(got[::k], dpbounds.min_dataset_size(s[::k, None], m[None, :]))


@pytest.mark.benchmark(group="outer-min_dataset_size")
def test_min_dataset_size_broadcast(benchmark, grid):
    s, m, _, _ = grid
    got = benchmark(dpbounds.min_dataset_size, s[:, None], m[None, :])
    k = 997 if s.size > 997 else 37
    np.testing.assert_array_equal(got[::k], min_dataset_size_outer(s[::k], m))


# ---------------------------------------------------------------- same-run ratios
def _interleaved(variants, rounds):
    best = dict.fromkeys(variants, np.inf)
    for _ in range(rounds):
        for name, f in variants.items():
            t = time.perf_counter()
            f()
            best[name] = min(best[name], time.perf_counter() - t)
    return best


def _mem_available_bytes():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _delta_bound_ratios(ns, nm, rounds):
    s, m = _axes(ns, nm)
    out = np.empty((ns, nm))
    src = np.ones((ns, nm))
    out.fill(0.0)            # fault the pages in before timing
    variants = {
        "delta_bound_outer(out=)": lambda: delta_bound_outer(s, m, out=out),
        "delta_bound_outer": lambda: delta_bound_outer(s, m),
        "ufunc broadcast": lambda: ufuncs.delta_bound_exact(s[:, None], m[None, :]),
        "validated broadcast": lambda: dpbounds.delta_bound(s[:, None], m[None, :]),
        "out.fill(1.0)": lambda: out.fill(1.0),
        "np.copyto(out, src)": lambda: np.copyto(out, src),
        "np.full (new array)": lambda: np.full((ns, nm), 1.0),
    }
    best = _interleaved(variants, rounds)
    n = ns * nm
    t_out = best["delta_bound_outer(out=)"]
    lines = [f"delta_bound, sigma {ns} x rounds {nm} ({n * 8 / 1e6:.0f} MB of output), best of {rounds}:"]
    for name, t in best.items():
        lines.append(f"  {name:24s} {t * 1e9 / n:7.2f} ns/point   this / outer(out=) = {t / t_out:6.3f}")
    ratio_ufunc = best["ufunc broadcast"] / t_out
    ratio_new = best["ufunc broadcast"] / best["delta_bound_outer"]
    lines.append(f"  speed-up over the ufunc broadcast: {ratio_ufunc:.1f}x into out=, {ratio_new:.1f}x new array; "
                 f"over the validated broadcast {best['validated broadcast'] / t_out:.1f}x")
    lines.append(f"  time / write-bandwidth time: {t_out / best['out.fill(1.0)']:.2f}x fill, "
                 f"{t_out / best['np.copyto(out, src)']:.2f}x copyto; new array "
                 f"{best['delta_bound_outer'] / best['np.full (new array)']:.2f}x np.full")
    return ratio_ufunc, ratio_new, lines


@pytest.mark.benchmark(group="outer-ratios")
def test_ratios_interleaved(benchmark, timing):
    # a benchmark test only so that --benchmark-only runs it; the timing is done here
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    if not timing:
        # --benchmark-disable: every variant once on a small grid; the ratios are the timed run's
        _delta_bound_ratios(NS_UNTIMED, NM_UNTIMED, 1)
        s, d = np.linspace(0.5, 3.0, 20), np.logspace(-4, -1, 20)
        _interleaved({"outer": lambda: rounds_required_outer(s, d),
                      "broadcast": lambda: dpbounds.rounds_required(s[:, None], d[None, :])}, 1)
        return
    lines = []
    r1, r1n, text = _delta_bound_ratios(NS, NM, 5)
    lines += text
    ratios = [r1, r1n]
    if _mem_available_bytes() >= 4 * 2**30:
        r2, r2n, text = _delta_bound_ratios(10**4, 10**4, 3)
        lines += text
        ratios += [r2, r2n]
    else:
        lines.append("1e4 x 1e4 skipped: less than 4 GB of memory available")

    s, d = np.linspace(0.5, 3.0, 200), np.logspace(-4, -1, 200)
    out = np.empty((200, 200))
    best = _interleaved({"outer": lambda: rounds_required_outer(s, d, out=out),
                         "broadcast": lambda: dpbounds.rounds_required(s[:, None], d[None, :])}, 5)
    lines.append(f"rounds_required, sigma 200 x delta 200: outer {best['outer'] * 1e9 / 4e4:.0f} ns/point, "
                 f"broadcast {best['broadcast'] * 1e9 / 4e4:.0f} ns/point -> {best['broadcast'] / best['outer']:.2f}x")
    rr_ratio = best["broadcast"] / best["outer"]

    sm, mm = _axes(NS, NM)
    out = np.empty((NS, NM))
    out.fill(0.0)
    best = _interleaved({"outer": lambda: min_dataset_size_outer(sm, mm, out=out),
                         "broadcast": lambda: dpbounds.min_dataset_size(sm[:, None], mm[None, :]),
                         "fill": lambda: out.fill(1.0)}, 5)
    lines.append(f"min_dataset_size, sigma {NS} x rounds {NM}: outer {best['outer'] * 1e9 / (NS * NM):.2f} ns/point, "
                 f"broadcast {best['broadcast'] * 1e9 / (NS * NM):.2f} -> {best['broadcast'] / best['outer']:.2f}x; "
                 f"outer / fill {best['outer'] / best['fill']:.2f}x")
    print("\n" + "\n".join(lines))
    assert min(ratios) >= 5.0, lines          # the target
    assert rr_ratio >= 0.8, lines             # the search dominates: no slower beyond noise
