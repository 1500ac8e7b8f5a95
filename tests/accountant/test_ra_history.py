"""The random-allocation history engine: incremental queries are the cold ones, partial epochs
bracketed by step buckets, one composition of many pieces, and the cost of hopeless requests
refused or bounded up front."""
import json
import math
import subprocess
import sys
import time

import numpy as np
import pytest
from cli_harness import child_env, run

import dpbounds
from dpbounds import DPBoundsError, RandomAllocationAccountant
from dpbounds.accountant import clear_cache
from dpbounds.accountant._composition import compose_spectral, fft_bucket, pmf_stats
from dpbounds.accountant._history import runs_from_history
from dpbounds.accountant._lattice import HockeyStick, compose, convolve


def _cold(state, delta):
    clear_cache()
    acc = RandomAllocationAccountant()
    acc.load_state_dict(state)
    return acc.get_epsilon_bracket(delta)


def _same(a, b):
    return tuple(a) == tuple(b) and a.method == b.method and a.tolerance_met == b.tolerance_met


# ------------------------------------------------------------------ incremental == cold
def test_training_loop_queries_equal_cold_queries_small_history():
    # exact partial epochs (few epochs): every query after a step equals a cold query, bit for bit
    s, M = 1.0, 20
    acc = RandomAllocationAccountant(s, M, 3)
    seen = []
    for k in range(1, 2 * M + 3):
        acc.step(noise_multiplier=s, sample_rate=1 / M)
        if k in (1, M, M + 1, 2 * M + 2):
            seen.append((acc.state_dict(), acc.get_epsilon_bracket(1e-5)))
    for state, b in seen:
        assert _same(b, _cold(state, 1e-5))


def test_training_loop_queries_equal_cold_queries_with_step_buckets():
    # many epochs: a partial epoch is bracketed by a step bucket; the loop's cached compositions
    # give the cold answer, bit for bit, and the bucketed bracket meets the tolerance
    s, M, E = 1.0, 100, 400
    acc = RandomAllocationAccountant(s, M, E)
    b0 = acc.get_epsilon_bracket(1e-5)
    seen = [(acc.state_dict(), b0)]
    for n in (1, 1, 60, M - 62, 1, M):
        for _ in range(n):
            acc.step(noise_multiplier=s, sample_rate=1 / M)
        seen.append((acc.state_dict(), acc.get_epsilon_bracket(1e-5)))
    assert any("upper:" in b.method for _, b in seen)  # the bucket path was taken
    for state, b in seen:
        assert b.tolerance_met
        assert _same(b, _cold(state, 1e-5))


def test_partial_bucket_bracket_contains_the_exact_partial_epoch():
    # the bucketed bracket [E + k_lo, E + k_hi] and the exact partial epoch's bracket overlap
    # (both certified) and the epsilon grows with the steps across buckets
    from dpbounds.accountant._history import _epsilon, _sides

    s, M, E = 1.0, 100, 400
    prev = 0.0
    for k in (1, 37, 64, 99):
        runs = ((s, float(M), E, k),)
        bucketed = _epsilon(runs, _sides(runs, 64), 1e-5, 2e-3, 2 ** 21)[0]
        exact = _epsilon(runs, _sides(runs, 1), 1e-5, 2e-3, 2 ** 21)[0]
        assert bucketed[0] <= exact[1] and exact[0] <= bucketed[1], (k, bucketed, exact)
        assert exact[1] >= prev
        prev = exact[0]


# ------------------------------------------------------------------ history grouping
def _runs_by_enumeration(history):
    """The grouping rule step by step (the reference the arithmetic one must equal)."""
    from dpbounds.accountant._protocol import rounds_from_rate

    epochs = []
    for s, q, n in history:
        M = rounds_from_rate(q)
        for _ in range(n):
            if epochs and epochs[-1][1] == M and epochs[-1][2] < M:
                epochs[-1] = (min(epochs[-1][0], s), M, epochs[-1][2] + 1)
            else:
                epochs.append((s, M, 1))
    runs = []
    for s, M, k in epochs:
        full = k == M
        if runs and full and runs[-1][0] == s and runs[-1][1] == M and runs[-1][3] == 0:
            runs[-1] = (s, float(M), runs[-1][2] + 1, 0)
        else:
            runs.append((s, float(M), 1, 0) if full else (s, float(M), 0, k))
    return tuple(runs)


def test_runs_from_history_is_the_step_by_step_grouping():
    rng = np.random.default_rng(5)
    for _ in range(200):
        hist = [(float(rng.choice([0.9, 1.0, 1.3])), 1.0 / int(rng.choice([3, 4, 7])), int(rng.integers(1, 25)))
                for _ in range(int(rng.integers(1, 6)))]
        assert runs_from_history(hist) == _runs_by_enumeration(hist), hist


def test_runs_from_history_counts_huge_histories_without_enumerating():
    t0 = time.perf_counter()
    runs = runs_from_history([(1.0, 0.01, 2 ** 64 + 37), (0.9, 0.01, 10 ** 20)])
    assert time.perf_counter() - t0 < 0.1
    assert runs[0] == (1.0, 100.0, (2 ** 64 + 37) // 100, 0)
    assert sum(E * int(M) + k for _, M, E, k in runs) == 2 ** 64 + 37 + 10 ** 20


# ------------------------------------------------------------------ composition engine
def _pmf(rng, n):
    p = rng.random(n) ** 4
    p[rng.random(n) < 0.3] = 0.0
    p[0] = p[-1] = 1e-3
    return p / p.sum() * 0.999


@pytest.mark.parametrize("E", [1, 2, 7, 50])
def test_compose_spectral_is_compose_for_one_piece(E):
    rng = np.random.default_rng(E)
    pmf = _pmf(rng, 300)
    dl = 0.01
    s0, g, out = compose(-40, pmf, E, 1e-14, 2 ** 20)
    s1, g1, out1 = compose_spectral([(pmf_stats(-40, pmf), E, ("p", E))], 1e-14, 2 ** 20)
    h0, h1 = HockeyStick(s0, g, dl), HockeyStick(s1, g1, dl)
    for eps in (0.0, 0.05, 0.3, 1.0, 2.0):
        assert abs(h0(eps) - h1(eps)) <= out + out1 + 1e-14, (eps, h0(eps), h1(eps))


def test_compose_spectral_of_several_pieces_is_their_convolution():
    rng = np.random.default_rng(11)
    pieces = [(-30, _pmf(rng, 200), 3), (5, _pmf(rng, 120), 1), (-80, _pmf(rng, 400), 2)]
    dl = 0.02
    acc = None
    for jmin, p, c in pieces:
        s, g, _ = compose(jmin, p, c, 1e-16, 2 ** 20)
        acc = (s, g) if acc is None else convolve(acc, (s, g))[:2]
    ref = HockeyStick(acc[0], acc[1], dl)
    s1, g1, out = compose_spectral([(pmf_stats(j, p), c, ("q", i)) for i, (j, p, c) in enumerate(pieces)],
                                   1e-16, 2 ** 20)
    got = HockeyStick(s1, g1, dl)
    for eps in (0.0, 0.2, 1.0, 3.0):
        assert abs(ref(eps) - got(eps)) <= out + 1e-13


def test_fft_bucket():
    assert [fft_bucket(n) for n in (1, 16, 17, 24, 25, 33, 49, 1000)] == [16, 16, 24, 24, 32, 48, 64, 1024]
    for n in range(1, 5000, 37):
        L = fft_bucket(n)
        assert L >= n and L <= max(2 * n, 16)


# ------------------------------------------------------------------ refused or bounded up front
def test_hopeless_lengths_are_refused_at_once_by_name():
    t0 = time.perf_counter()
    with pytest.raises(DPBoundsError, match=r"^epochs: .* epochs <= ~1\.1"):
        RandomAllocationAccountant(noise_multiplier=1.0, rounds_per_epoch=100, epochs=10 ** 9)
    with pytest.raises(DPBoundsError, match=r"^steps: "):
        RandomAllocationAccountant(noise_multiplier=1.0, rounds_per_epoch=100, steps=10 ** 12)
    acc = RandomAllocationAccountant(1.0, 100, 2)
    state = acc.state_dict()
    state["history"] = [[1.0, 0.01, 2 ** 64]]
    with pytest.raises(DPBoundsError, match=r"^state\['history'\]: "):
        acc.load_state_dict(state)
    assert acc.history == [(1.0, 0.01, 200)]  # the accountant kept its own history
    # a history that grows past it by step() is refused at the query, by the same rule
    grown = RandomAllocationAccountant()
    grown._history = [[1.0, 0.01, 10 ** 12]]
    with pytest.raises(DPBoundsError, match=r"^steps: .*can account for at most"):
        grown.get_epsilon(1e-5)
    assert time.perf_counter() - t0 < 2.0
    # the approximations have no such limit
    assert RandomAllocationAccountant(1.0, 100, 10 ** 9, method="gdp_asymptotic").get_epsilon(1e-5) > 1e4


def _child(code):
    out = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True,
                         timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_tiny_tolerance_and_many_noise_levels_are_bounded():
    # tolerance=1e-12 (random allocation) and 100 noise levels x 100 steps stay within the time
    # and memory bounds below.  Measured in a fresh process: time and peak memory (VmHWM)
    code = """
import json, time, warnings
warnings.simplefilter("ignore")
import numpy as np
from dpbounds import RandomAllocationAccountant as RA
out = {}
t0 = time.perf_counter(); b = RA(1.0, 100, 10, tolerance=1e-12).get_epsilon_bracket(1e-5)
out["tol"] = [time.perf_counter() - t0, b.lower, b.upper]
a = RA()
for s in np.linspace(0.8, 3.0, 100):
    for _ in range(100):
        a.step(noise_multiplier=float(s), sample_rate=1 / 100)
t0 = time.perf_counter(); b = a.get_epsilon_bracket(1e-5)
out["levels"] = [time.perf_counter() - t0, b.lower, b.upper, b.tolerance_met]
out["hwm_mb"] = int([l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]) / 1024
print(json.dumps(out))
"""
    if not sys.platform.startswith("linux"):
        pytest.skip("reads VmHWM from /proc")
    r = _child(code)
    t_tol, lo, hi = r["tol"]
    assert t_tol < 15.0 and 0 < lo <= hi < 1.01 * lo   # bounded; the best bracket it can give
    ref = RandomAllocationAccountant(1.0, 100, 10).get_epsilon_bracket(1e-5)
    assert lo <= ref.upper and ref.lower <= hi
    t_lv, lo, hi, met = r["levels"]
    assert t_lv < 60.0 and met and 0 < lo <= hi
    assert r["hwm_mb"] < 600, r


# ------------------------------------------------------------------ calibrated means accountable
@pytest.mark.slow
def test_calibrated_sigma_is_accountable_at_every_epoch_and_in_between():
    # the README's loop at the sigma calibrate_noise returns: every query meets the default
    # tolerance (a PrecisionWarning would fail this test: warnings are errors in the suite)
    s = dpbounds.calibrate_noise(3.0, 1e-5, dataset_size=60000, batch_size=256, epochs=10)
    M = 60000 // 256
    acc = RandomAllocationAccountant()
    for step in range(1, 10 * M + 1):
        acc.step(noise_multiplier=s, sample_rate=1 / M)
        if step % M == 0 or step % 97 == 0:
            b = acc.get_epsilon_bracket(1e-5)
            assert b.tolerance_met, (step, b)
    assert b.upper <= 3.0


def test_cli_epsilon_at_the_calibrated_sigma_exits_0(capsys):
    code, out, err = run(capsys, "epsilon", "--sigma", "0.684", "--rounds", "234", "--epochs", "10",
                         "--delta", "1e-5")
    assert code == 0, err
    assert "warning" not in err


def test_bracket_of_several_noise_levels_overlaps_its_bounds():
    # a history of 4 noise levels lies between the same history at the smallest and at the
    # largest of them (more noise is a post-processing)
    M = 50
    acc = RandomAllocationAccountant()
    for s in (0.9, 1.1, 1.4, 2.0):
        for _ in range(M):
            acc.step(noise_multiplier=s, sample_rate=1 / M)
    b = acc.get_epsilon_bracket(1e-5)
    lo = RandomAllocationAccountant(2.0, M, 4).get_epsilon_bracket(1e-5)
    hi = RandomAllocationAccountant(0.9, M, 4).get_epsilon_bracket(1e-5)
    assert lo.lower <= b.upper and b.lower <= hi.upper and b.tolerance_met
    assert not math.isnan(b.upper)


@pytest.mark.slow
def test_many_noise_levels_compose_without_recursion():
    # a history of many distinct noise levels composes its pieces in a loop: the depth of the
    # call stack does not grow with the number of pieces (120 levels under a recursion limit
    # of 150), and a warm query after one more piece gives the cold query's bracket

    from dpbounds.accountant import clear_cache

    acc = RandomAllocationAccountant()
    for i in range(120):
        for _ in range(10):
            acc.step(noise_multiplier=1.0 + i / 100, sample_rate=1 / 10)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(150)
    try:
        b = acc.get_epsilon_bracket(1e-5)
        for _ in range(10):
            acc.step(noise_multiplier=0.9, sample_rate=1 / 10)
        warm = acc.get_epsilon_bracket(1e-5)
    finally:
        sys.setrecursionlimit(old)
    assert b.tolerance_met and 0 < b.lower <= b.upper
    clear_cache()
    cold = acc.get_epsilon_bracket(1e-5)
    assert (warm.lower, warm.upper) == (cold.lower, cold.upper)
