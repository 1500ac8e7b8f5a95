"""Benchmarks: PoissonPLD / PoissonAccountant vs dp-accounting (PLD) and prv-accountant, in one run.

Groups
------
poisson-eps      epsilon(1e-5) of 1e4 Poisson-subsampled Gaussian steps (q = 0.01, sigma = 1), cold:
                 * ours: ``clear_cache()`` then ``PoissonPLD(...).epsilon`` inside the timed call
                   (default tolerance 2e-3; the certified bracket is asserted to meet it);
                 * dp-accounting: ``PLDAccountant(value_discretization_interval=...)`` at 1e-4 (its
                   default) and 1e-3, pessimistic connect-the-dots, composing
                   ``PoissonSampledDpEvent(q, GaussianDpEvent(sigma))``;
                 * prv-accountant at Opacus' ``PRVAccountant.get_epsilon`` settings: eps_error = 0.01,
                   delta_error = delta / 1000.
poisson-table    the same comparison on DP-SGD settings (q in [1e-3, 0.05], sigma in [0.8, 3], up to
                 1e5 steps, delta 1e-5 to 1e-7), each tool timed interleaved with ours (best of 5 for
                 ours and dp-accounting at 1e-3, wall-clock and CPU time, one run of the slow ones),
                 widths and ratios side by side on every row.
poisson-incr     PoissonAccountant.get_epsilon in a training loop at 1e5 steps (q = 256/60000,
                 sigma = 1): a cold call, then after one more step and after one more epoch (best
                 of 5, wall-clock and process CPU time); the answers must equal a cold call on the
                 same history.

The ratio tests print what this run measured and assert only generous floors (timings on a
shared machine are noisy); the targets are in the printout.

Run:  PYTHONPATH=src python -m pytest bench/test_bench_poisson.py --benchmark-only -s
"""
from __future__ import annotations

import math
import time
import warnings

import pytest

from dpbounds import accountant as A

Q, SIGMA, STEPS, DELTA = 0.01, 1.0, 10_000, 1e-5
_RESULTS: dict[str, tuple[float, tuple[float, float]]] = {}  # name -> (best seconds, (lo, hi))

# (sigma, q, steps, delta): the headline point, published-table style runs and the range's corners
TABLE = [
    (1.0, 0.01, 10_000, 1e-5),
    (1.1, 256 / 60000, 2344, 1e-5),
    (1.0, 256 / 60000, 100_000, 1e-5),
    (0.676, 2e-3, 10_000, 1e-7),
    (0.8, 1e-3, 10_000, 1e-5),
    (0.8, 1e-3, 10_000, 1e-6),  # the saddle-point epsilon guess is 39 % high here (a heavy-tailed tilt)
    (1.0, 1e-3, 50_000, 1e-5),
    (0.8, 1e-3, 50_000, 1e-6),
    (2.0, 0.05, 1000, 1e-5),
    (3.0, 0.02, 50_000, 1e-5),
    (1.0, 0.05, 50_000, 1e-5),
]


def _timed(name, fn):
    """fn() timed by the wall clock as well (works with --benchmark-disable); keeps the best time."""
    def run():
        t = time.perf_counter()
        res = fn()
        dt = time.perf_counter() - t
        if name not in _RESULTS or dt < _RESULTS[name][0]:
            _RESULTS[name] = (dt, res)
        return res
    return run


def _ours(sigma=SIGMA, q=Q, steps=STEPS, delta=DELTA):
    A.clear_cache()
    br = A.PoissonPLD(sigma, q, steps).epsilon(delta)
    assert br.tolerance_met, br.note
    return (br.lower, br.upper)


def _dp_accounting(sigma=SIGMA, q=Q, steps=STEPS, delta=DELTA, interval=1e-4):
    dpa = pytest.importorskip("dp_accounting", reason="dp-accounting (peer) not installed")
    from dp_accounting.pld import PLDAccountant

    acc = PLDAccountant(value_discretization_interval=interval)
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    eps = acc.get_epsilon(delta)
    return (eps, eps)


def _prv_opacus(sigma=SIGMA, q=Q, steps=STEPS, delta=DELTA):
    prv = pytest.importorskip("prv_accountant", reason="prv-accountant (peer) not installed")
    acc = prv.PRVAccountant(
        prvs=[prv.PoissonSubsampledGaussianMechanism(sampling_probability=q, noise_multiplier=sigma)],
        max_self_compositions=[steps], eps_error=0.01, delta_error=delta / 1000)
    lo, _, hi = acc.compute_epsilon(delta, [steps])
    return (lo, hi)


@pytest.mark.benchmark(group="poisson-eps")
def test_ours_cold(benchmark):
    lo, hi = benchmark.pedantic(_timed("ours", _ours), rounds=5, iterations=1)
    assert 0 < lo <= hi and (hi - lo) / hi <= 2e-3


@pytest.mark.slow  # a peer cross-check (seconds)
@pytest.mark.peers
@pytest.mark.benchmark(group="poisson-eps")
def test_peer_dp_accounting(benchmark):
    pytest.importorskip("dp_accounting", reason="dp-accounting (peer) not installed")
    eps, _ = benchmark.pedantic(_timed("dp-accounting 1e-4", _dp_accounting), rounds=2, iterations=1)
    lo, hi = _ours()
    assert lo <= eps * (1 + 1e-3) and eps <= hi * (1 + 1e-3)  # the pessimistic value sits at our bracket


@pytest.mark.slow  # a peer cross-check (seconds)
@pytest.mark.peers
@pytest.mark.benchmark(group="poisson-eps")
def test_peer_dp_accounting_coarse(benchmark):
    pytest.importorskip("dp_accounting", reason="dp-accounting (peer) not installed")
    eps, _ = benchmark.pedantic(_timed("dp-accounting 1e-3", lambda: _dp_accounting(interval=1e-3)),
                                rounds=3, iterations=1)
    lo, _ = _ours()
    assert lo <= eps  # pessimistic: above the certified lower end


@pytest.mark.slow  # a peer cross-check (seconds)
@pytest.mark.peers
@pytest.mark.benchmark(group="poisson-eps")
def test_peer_prv_opacus(benchmark):
    pytest.importorskip("prv_accountant", reason="prv-accountant (peer) not installed")
    p_lo, p_hi = benchmark.pedantic(_timed("prv (opacus)", _prv_opacus), rounds=2, iterations=1)
    lo, hi = _ours()
    assert lo <= p_hi and p_lo <= hi and hi - lo <= p_hi - p_lo


@pytest.mark.benchmark(group="poisson-ratios")
def test_ratios(benchmark, timing):
    # a benchmark test only so that --benchmark-only runs it; it times nothing of interest
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    if not timing:
        pytest.skip("time ratios: measured by the timed run (--benchmark-only)")
    if "ours" not in _RESULTS or len(_RESULTS) < 2:
        pytest.skip("run the whole file: the ratios need ours and at least one peer timed in this run")
    t_ours, (lo, hi) = _RESULTS["ours"]
    lines = [f"ours               {t_ours * 1e3:8.1f} ms  eps in [{lo:.6f}, {hi:.6f}]  "
             f"width {(hi - lo) / hi:.3%} (certified)"]
    floor_ok = True
    for name, target in (("dp-accounting 1e-4", 10.0), ("dp-accounting 1e-3", 3.0), ("prv (opacus)", 20.0)):
        if name not in _RESULTS:
            continue
        t, (a, b) = _RESULTS[name]
        ratio = t / t_ours
        floor_ok &= ratio >= 1.5
        lines.append(f"{name:18s} {t * 1e3:8.1f} ms  eps in [{a:.6f}, {b:.6f}]  "
                     f"ours is {ratio:.1f}x faster (target >= {target:g}x)")
    print("\n" + "\n".join(lines))
    assert (hi - lo) / hi <= 2e-3
    assert floor_ok, lines


@pytest.mark.slow  # peer cross-checks at 11 settings (about 30 s)
@pytest.mark.peers
@pytest.mark.benchmark(group="poisson-table")
def test_ratio_table(benchmark):
    """Interleaved per setting: ours (cold) and dp-accounting at 1e-3 best of 5 each (wall-clock
    and process CPU time, each the minimum over the rounds), dp-accounting at 1e-4 and
    prv-accountant (Opacus' settings, up to 2e4 steps) once.  Every row prints its ratios; the
    1e-3 target applies where dp-accounting's answer is looser than our upper end."""
    pytest.importorskip("dp_accounting", reason="dp-accounting (peer) not installed")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    has_prv = True
    try:
        import prv_accountant  # noqa: F401
    except ImportError:
        has_prv = False

    def timed(fn):
        w, c = time.perf_counter(), time.process_time()
        res = fn()
        return res, time.perf_counter() - w, time.process_time() - c

    rows = ["sigma      q  steps  delta |  ours ms (cpu)   width  | dpa1e-4 ms  x   | dpa1e-3 ms (cpu)  "
            "x wall  x cpu  looser? | prv ms     x   prv width"]
    worst4 = worst3 = worst3_cpu = float("inf")
    for sigma, q, steps, delta in TABLE:
        t_o = c_o = t_3 = c_3 = float("inf")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(5):
                (lo, hi), t, c = timed(lambda: _ours(sigma, q, steps, delta))
                t_o, c_o = min(t_o, t), min(c_o, c)
                (e3, _), t, c = timed(lambda: _dp_accounting(sigma, q, steps, delta, 1e-3))
                t_3, c_3 = min(t_3, t), min(c_3, c)
            (e4, _), t_4, _ = timed(lambda: _dp_accounting(sigma, q, steps, delta, 1e-4))
            if has_prv and steps <= 20_000:
                (p_lo, p_hi), t_p, _ = timed(lambda: _prv_opacus(sigma, q, steps, delta))
                prv_txt = f"| {t_p * 1e3:8.0f} {t_p / t_o:5.0f}  {(p_hi - p_lo) / p_hi:.2e}"
                assert hi - lo <= p_hi - p_lo, (sigma, q, steps, delta)
            else:
                prv_txt = "| (skipped: > 2e4 steps)"
        looser = e3 > hi
        worst4 = min(worst4, t_4 / t_o)
        if looser:
            worst3 = min(worst3, t_3 / t_o)
            worst3_cpu = min(worst3_cpu, c_3 / c_o)
        assert lo <= e4 * (1 + 1e-3)  # dp-accounting's pessimistic value is not below our lower end
        rows.append(f"{sigma:5.3g} {q:8.3g} {steps:6d} {delta:6.0e} | {t_o * 1e3:6.1f} ({c_o * 1e3:5.1f})  "
                    f"{(hi - lo) / hi:.1e} | {t_4 * 1e3:9.0f} {t_4 / t_o:5.1f} | {t_3 * 1e3:7.1f} ({c_3 * 1e3:5.1f}) "
                    f"{t_3 / t_o:5.2f} {c_3 / c_o:5.2f}   {'yes' if looser else 'no ':4s}  {prv_txt}")
    rows.append(f"smallest ratio vs dp-accounting 1e-4: {worst4:.1f}x (target >= 10x); vs 1e-3 where it is "
                f"looser: {worst3:.2f}x wall, {worst3_cpu:.2f}x CPU (target >= 3x)")
    print("\n" + "\n".join(rows))
    assert worst4 >= 5.0 and worst3 >= 1.5, rows


@pytest.mark.benchmark(group="poisson-incr")
def test_incremental_accountant(benchmark):
    """get_epsilon at 1e5 steps cold, then after one more step and after one more epoch (best of
    5 each): wall-clock and process CPU time (the CPU time is what a loaded shared machine does
    not inflate); the answers equal a cold call on the same history."""
    from dpbounds import PoissonAccountant

    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    q, sigma = 256 / 60000, 1.0
    epoch = round(1 / q)

    def timed(fn):
        w, c = time.perf_counter(), time.process_time()
        res = fn()
        return res, time.perf_counter() - w, time.process_time() - c

    A.clear_cache()
    acc = PoissonAccountant(noise_multiplier=sigma, sample_rate=q, steps=100_000)
    _, w_cold, c_cold = timed(lambda: acc.get_epsilon_bracket(1e-5))
    best = {"step": [math.inf, math.inf], "epoch": [math.inf, math.inf]}
    for _ in range(5):
        for kind, n in (("step", 1), ("epoch", epoch)):
            for _ in range(n):
                acc.step(noise_multiplier=sigma, sample_rate=q)
            warm, w, c = timed(lambda: acc.get_epsilon_bracket(1e-5))
            best[kind] = [min(best[kind][0], w), min(best[kind][1], c)]
    A.clear_cache()
    cold, w_cold2, c_cold2 = timed(lambda: PoissonAccountant(noise_multiplier=sigma, sample_rate=q,
                                                             steps=acc.history[0][2]).get_epsilon_bracket(1e-5))
    print(f"\nPoissonAccountant at 1e5 steps (wall / CPU): cold {w_cold * 1e3:.1f} / {c_cold * 1e3:.1f} ms, "
          f"{w_cold2 * 1e3:.1f} / {c_cold2 * 1e3:.1f} ms (target <= 500 ms); after one more step "
          f"{best['step'][0] * 1e3:.1f} / {best['step'][1] * 1e3:.1f} ms, after one more epoch ({epoch} steps) "
          f"{best['epoch'][0] * 1e3:.1f} / {best['epoch'][1] * 1e3:.1f} ms (best of 5, target <= 50 ms); "
          f"bracket [{warm.lower:.6f}, {warm.upper:.6f}] == cold: {tuple(warm) == tuple(cold)}")
    assert tuple(warm) == tuple(cold)
    assert w_cold < 5.0 and best["step"][0] < 0.5 and best["epoch"][0] < 0.5  # generous floors (shared machine)
