"""dpbounds.outer: the Cartesian-grid kernels equal the elementwise functions bit for bit.

The claim (docstrings, csrc/dpb_outer.h) is identity with the ufunc at every point: the same
value to the last bit, NaN at the same points, the same status bits.  It is checked on seeded
random grids and at hard points (sigma at the validity edges, tiny and huge sigma, M = 3, 4,
up to 2**53 and beyond, non-integer and non-finite M for the raw kernels, delta at the values
where the required rounds jump), and the values are checked once more against an independent
50-digit evaluation of the six-term formula (tests/oracle.py).
"""
import doctest
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import oracle
import pytest

import dpbounds
import dpbounds.outer
from dpbounds import _kernels, ufuncs
from dpbounds.outer import delta_bound_outer, min_dataset_size_outer, rounds_required_outer

COEFS = ["exact", "simplified"]


def ulp_distance(a, b):
    """Elementwise distance in representable doubles (0 = identical, +0 and -0 count as one
    value); NaN pairs count 0, NaN against a number counts 2**62."""
    big = np.int64(2**62)
    ia, ib = a.view(np.int64), b.view(np.int64)
    # the sign-magnitude bit patterns mapped onto a monotone integer line
    ka = np.where(ia < 0, -(ia & np.int64(0x7FFFFFFFFFFFFFFF)), ia)
    kb = np.where(ib < 0, -(ib & np.int64(0x7FFFFFFFFFFFFFFF)), ib)
    far = ((ka < 0) != (kb < 0)) & ((np.abs(ka) >= big) | (np.abs(kb) >= big))   # ka - kb would wrap
    d = np.where(far, big, np.abs(np.where(far, 0, ka - kb)))
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    d[nan_a != nan_b] = big
    d[nan_a & nan_b] = 0
    return d


def assert_identical(got, ref):
    assert got.shape == ref.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    assert int(ulp_distance(got, ref).max(initial=0)) == 0


def _edge_sigmas(rounds):
    """sigma = sqrt(3/ln M) and its neighbours: the sigma-edge condition flips there."""
    out = []
    for m in rounds:
        s = np.sqrt(3.0 / np.log(m))
        out += [np.nextafter(s, 0), s, np.nextafter(s, 1), s * (1 - 1e-12), s * (1 + 1e-12)]
    return out


def _condition2_sigmas(coefficient, rounds):
    """sigma where condition (2) (at delta_min) flips for each M, found by bisection on the ufunc."""
    status = getattr(ufuncs, f"theorem31_status_{coefficient}")
    out = []
    for m in rounds:
        lo, hi = 0.2, 20.0   # (2) fails at small sigma for these M and holds at large (for M = 1e6, 1e9)
        if status(lo, m, np.nan) & 8 == 0 or status(hi, m, np.nan) & 8:
            continue
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            if status(mid, m, np.nan) & 8:
                lo = mid
            else:
                hi = mid
        out += [np.nextafter(lo, 0), lo, hi, np.nextafter(hi, 30)]
    return out


HARD_ROUNDS = np.array([3, 4, 5, 6, 10, 100, 1e3, 12345, 1e6, 1140369, 1e9, 2**40, 1e15, 2**53 - 1, 2**53,
                        2**60, 1e300])
HARD_SIGMAS = np.array([1e-3, 0.02, 0.03, 0.0378, 0.05, 0.0599, 0.06, 0.0601, 0.07, 0.1, 0.3, 0.5, 0.8, 1.0,
                        2.0, 4.6, 10.0, 1e3, 1e9, 1e10, 1.0000001e10, 1e12, 1e150, 1e154, 1e200, 1e300])


def _hard_grid(coefficient):
    sig = np.concatenate([HARD_SIGMAS, _edge_sigmas(HARD_ROUNDS[:-3]),
                          _condition2_sigmas(coefficient, [1e6, 1e9])])
    return np.sort(sig), HARD_ROUNDS


def _random_grid(seed, ns=300, nm=400):
    rng = np.random.default_rng(seed)
    s = 10 ** rng.uniform(np.log10(0.04), 2, ns)
    m = np.floor(10 ** rng.uniform(np.log10(3), 15.9, nm))
    return s, m


# ---------------------------------------------------------------- delta_bound: raw kernel vs ufunc
@pytest.mark.parametrize("coefficient", COEFS)
@pytest.mark.parametrize("grid", ["random", "hard"])
def test_delta_bound_kernel_is_the_ufunc(coefficient, grid):
    s, m = _random_grid(11) if grid == "random" else _hard_grid(coefficient)
    ref = getattr(ufuncs, f"delta_bound_{coefficient}")(s[:, None], m[None, :])
    got = _kernels.outer_delta_bound(s, m, coefficient, False, np.empty(ref.shape))
    assert_identical(got, ref)
    # both outcomes occur (the grid exercises the validity checks)
    assert 0 < np.isnan(ref).sum() < ref.size


@pytest.mark.parametrize("coefficient", COEFS)
def test_delta_bound_kernel_raw_domain(coefficient):
    """NaN, inf, sigma <= 0, M < 3, non-integer M: NaN exactly where the ufunc gives NaN, and
    the checked variant's status bits exactly as its ufunc's."""
    s = np.concatenate([[np.nan, -1.0, 0.0, 5e-324, np.inf, -np.inf], HARD_SIGMAS])
    m = np.concatenate([[np.nan, -np.inf, -3.0, 0.0, 2.0, 2.999, 3.5, 1e6 + 0.5, np.inf], HARD_ROUNDS,
                        np.arange(3.0, 40.0)])
    with np.errstate(all="ignore"):   # the ufunc may raise IEEE flags on this junk; its values are the reference
        ref = getattr(ufuncs, f"delta_bound_{coefficient}")(s[:, None], m[None, :])
        ref_c, ref_st = getattr(ufuncs, f"_delta_bound_checked_{coefficient}")(s[:, None], m[None, :])
    assert_identical(_kernels.outer_delta_bound(s, m, coefficient, False, np.empty(ref.shape)), ref)
    st = np.full(ref.shape, -1, dtype=np.int8)
    got_c = _kernels.outer_delta_bound(s, m, coefficient, True, np.empty(ref.shape), st)
    assert_identical(got_c, ref_c)
    np.testing.assert_array_equal(st, ref_st)
    assert set(np.unique(st)) >= {0, 1, 8}


@pytest.mark.parametrize("coefficient", COEFS)
def test_delta_bound_tiles_do_not_change_values(coefficient):
    """Rows longer than a tile are split into pieces, short rows are grouped; both as the ufunc."""
    rng = np.random.default_rng(5)
    m = np.floor(10 ** rng.uniform(0.5, 12, _kernels._OUTER_TILE_T31 + 7))
    m[::1001] = np.nan        # odd columns on both sides of a tile boundary
    s = np.array([0.9, 3.0])
    ref = getattr(ufuncs, f"delta_bound_{coefficient}")(s[:, None], m[None, :])
    assert_identical(_kernels.outer_delta_bound(s, m, coefficient, False, np.empty(ref.shape)), ref)
    s2 = 10 ** rng.uniform(-0.5, 1, 2000)
    m2 = np.floor(10 ** rng.uniform(0.5, 12, 300))   # 873 rows per tile: 3 tiles
    ref2 = getattr(ufuncs, f"delta_bound_{coefficient}")(s2[:, None], m2[None, :])
    assert_identical(_kernels.outer_delta_bound(s2, m2, coefficient, False, np.empty(ref2.shape)), ref2)


# ---------------------------------------------------------------- delta_bound_outer: public API
@pytest.mark.parametrize("coefficient", COEFS)
def test_delta_bound_outer_is_the_broadcast_delta_bound(coefficient, record_accuracy):
    s, m = _random_grid(12, 200, 250)
    s = np.concatenate([s, _edge_sigmas(m[:5])])
    ref = dpbounds.delta_bound(s[:, None], m[None, :], coefficient)
    got = delta_bound_outer(s, m, coefficient)
    record_accuracy("dpbounds.outer.delta_bound_outer", float(ulp_distance(got, ref).max(initial=0)), "ulp",
                    "vs dpbounds.delta_bound at the same points: random grid + sigma edges, both coefficients")
    assert got.flags.c_contiguous and got.dtype == np.float64
    assert_identical(got, ref)
    got2, status = delta_bound_outer(list(s), list(m), coefficient, return_status=True)
    assert_identical(got2, ref)
    _, ref_st = getattr(ufuncs, f"_delta_bound_checked_{coefficient}")(s[:, None], m[None, :])
    np.testing.assert_array_equal(status, ref_st)
    assert status.dtype == np.int8
    assert (status == 0).any() and (status & 4).any() and (status == 8).any()
    np.testing.assert_array_equal(np.isnan(got), status != 0)


@pytest.mark.parametrize("coefficient", COEFS)
def test_delta_bound_outer_against_mpmath(coefficient):
    """An independent 50-digit evaluation of the six-term sum and of the validity conditions."""
    s = np.array([0.5, 0.9, 1.0, 2.0, 7.0])
    m = np.array([3.0, 1000.0, 1140369.0, 1e9, 2.0**53])
    got = delta_bound_outer(s, m, coefficient)
    checked = 0
    for i in range(s.size):
        for j in range(m.size):
            margin = oracle.condition2_margin(s[i], m[j], None, coefficient)
            edge = oracle.mp.mpf(s[i]) ** 2 * oracle.mp.log(m[j]) - 3
            if min(abs(margin), abs(edge)) < 1e-12:
                continue   # a tie at double precision
            if oracle.theorem31_valid(s[i], m[j], None, coefficient):
                ref = oracle.delta_min(s[i], m[j], coefficient)
                assert oracle.rel_error(got[i, j], ref) <= 1e-14, (s[i], m[j])
                checked += 1
            else:
                assert np.isnan(got[i, j]), (s[i], m[j])
    assert checked >= 8


def test_delta_bound_outer_out_argument():
    s, m = np.array([1.0, 2.0]), np.array([1e6, 1e7, 1e8])
    out = np.full((2, 3), -1.0)
    assert delta_bound_outer(s, m, out=out) is out
    assert_identical(out, dpbounds.delta_bound(s[:, None], m[None, :]))
    res, status = delta_bound_outer(s, m, "simplified", out=out, return_status=True)
    assert res is out and status.shape == (2, 3)
    assert delta_bound_outer([], m).shape == (0, 3)
    assert delta_bound_outer(s, np.array([])).shape == (2, 0)


@pytest.mark.parametrize("bad_out, match", [
    (np.empty((3, 2)), r"out must have shape \(2, 3\)"),
    (np.empty((2, 3), dtype=np.float32), "out must have dtype float64"),
    (np.empty((3, 2)).T, "out must be a writeable C-contiguous"),
    ([[0.0] * 3] * 2, "out must be a numpy array"),
])
def test_out_is_checked(bad_out, match):
    s, m = np.array([1.0, 2.0]), np.array([1e6, 1e7, 1e8])
    with pytest.raises(dpbounds.DPBoundsError, match=match):
        delta_bound_outer(s, m, out=bad_out)
    with pytest.raises(dpbounds.DPBoundsError, match=match):
        min_dataset_size_outer(s, m, out=bad_out)
    with pytest.raises(dpbounds.DPBoundsError, match=match):
        rounds_required_outer(s, np.array([0.1, 0.01, 0.001]), out=bad_out)


def test_out_readonly_or_aliasing_is_refused():
    ro = np.empty((2, 3))
    ro.flags.writeable = False
    with pytest.raises(dpbounds.DPBoundsError, match="out must be a writeable"):
        delta_bound_outer([1.0, 2.0], [1e6, 1e7, 1e8], out=ro)
    buf = np.full(6, 1e6)
    with pytest.raises(dpbounds.DPBoundsError, match="out must not share memory"):
        delta_bound_outer(np.array([1.0, 2.0]), buf[:3], out=buf.reshape(2, 3))


@pytest.mark.parametrize("call, match", [
    (lambda: delta_bound_outer([[1.0]], [1e6]), "sigma must be a 1-D array"),
    (lambda: delta_bound_outer(1.0, [1e6]), r"sigma must be a 1-D array .* shape \(\)"),
    (lambda: delta_bound_outer([1.0], 1e6), "rounds must be a 1-D array"),
    (lambda: delta_bound_outer([1.0, -1.0], [1e6]), "sigma must be finite and > 0: 1 of 2"),
    (lambda: delta_bound_outer([1.0], [1e6, 2.5]), "rounds must be an integer >= 3"),
    (lambda: delta_bound_outer([1.0], [1e6, 2]), "rounds must be an integer >= 3"),
    (lambda: delta_bound_outer([1.0], ["x"]), "rounds must be a real number"),
    (lambda: delta_bound_outer([1.0], [1e6], "approx"), "coefficient must be one of"),
    (lambda: rounds_required_outer([1.0], [0.0, 0.1]), r"delta must be in the open interval \(0, 1\)"),
    (lambda: rounds_required_outer([np.nan], [0.1]), "sigma must be finite and > 0"),
    (lambda: rounds_required_outer([1.0], [[0.1]]), "delta must be a 1-D array"),
    (lambda: rounds_required_outer([1.0], [0.1], validity_at="both"), "validity_at must be one of"),
    (lambda: rounds_required_outer([1.0], [0.1], epochs=1.5), "epochs must be an integer >= 1"),
    (lambda: rounds_required_outer([1.0], [0.1], epochs=[1, 2]), "epochs must be a single number"),
    (lambda: min_dataset_size_outer([1.0], [0.0]), "rounds must be an integer >= 1"),
    (lambda: min_dataset_size_outer([1.0], [10.0], clip_norm=0.0), "clip_norm must be finite and > 0"),
    (lambda: min_dataset_size_outer([1.0], [10.0], noise_ratio=[0.1, 0.2]), "noise_ratio must be a single"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(dpbounds.DPBoundsError, match=match):
        call()


# ---------------------------------------------------------------- rounds_required_outer
@pytest.mark.parametrize("coefficient", COEFS)
@pytest.mark.parametrize("validity_at", ["delta_min", "target"])
def test_rounds_required_outer_is_the_broadcast_rounds_required(coefficient, validity_at, record_accuracy):
    rng = np.random.default_rng(21)
    s = np.concatenate([10 ** rng.uniform(np.log10(0.3), 1, 30), [0.05, 0.5, 1.0, 4.6, 5.0, 1e3]])
    d = np.concatenate([10 ** rng.uniform(-12, np.log10(0.5), 30), [1e-300, 0.01, 0.3, 0.5, 1 - 2**-53]])
    # delta at delta_min(sigma, M) and its neighbours: the required M jumps there
    for m in (1e3, 1140369.0, 1e9):
        dm = float(ufuncs.delta_min_simplified(1.0, m))
        d = np.append(d, [np.nextafter(dm, 0), dm, np.nextafter(dm, 1)])
    ref = dpbounds.rounds_required(s[:, None], d[None, :], coefficient, validity_at)
    got = rounds_required_outer(s, d, coefficient, validity_at)
    record_accuracy("dpbounds.outer.rounds_required_outer", float(ulp_distance(got, ref).max(initial=0)), "ulp",
                    "vs dpbounds.rounds_required at the same points: random grid + delta_min jumps")
    assert_identical(got, ref)
    assert np.isinf(ref).any() and np.isfinite(ref).any()
    if coefficient == "simplified":   # the columns at delta_min(1, 1140369) straddle the jump
        np.testing.assert_array_equal(got[list(s).index(1.0), -6:-3], [1140370.0, 1140369.0, 1140369.0])


def test_rounds_required_outer_epochs_and_out():
    s = np.array([0.8, 1.0, 2.0])
    d = np.array([1e-5, 1e-3, 0.05])
    ref = dpbounds.rounds_required(s[:, None], d[None, :], "exact", epochs=7)
    out = np.empty((3, 3))
    assert rounds_required_outer(s, d, epochs=7, out=out) is out
    assert_identical(out, ref)


@pytest.mark.parametrize("coefficient", COEFS)
def test_rounds_required_kernel_raw_domain_and_tiles(coefficient):
    s = np.array([np.nan, -1.0, 0.0, np.inf, 0.02, 0.7, 1.0, 3.0, 1e6])
    d = np.concatenate([[np.nan, -0.1, 0.0, 1.0, 2.0, np.inf], 10 ** np.linspace(-9, -0.31, 1200)])
    for at_target, name in ((False, ""), (True, "_at_target")):
        with np.errstate(all="ignore"):
            ref = getattr(ufuncs, f"rounds_required_{coefficient}{name}")(s[:, None], d[None, :])
        got = _kernels.outer_rounds_required(s, d, coefficient, at_target, np.empty(ref.shape))
        assert_identical(got, ref)   # 1206 columns > one tile of 1024 points: pieces of rows


# ---------------------------------------------------------------- min_dataset_size_outer
def test_min_dataset_size_outer_is_the_broadcast_min_dataset_size(record_accuracy):
    rng = np.random.default_rng(31)
    s = 10 ** rng.uniform(-2, 2, 123)
    m = np.floor(10 ** rng.uniform(0, 15, 321))
    worst = 0.0
    for cn, nr in ((1.0, 0.1), (0.37, 3e-3)):
        ref = dpbounds.min_dataset_size(s[:, None], m[None, :], cn, nr)
        got = min_dataset_size_outer(s, m, cn, nr)
        worst = max(worst, float(ulp_distance(got, ref).max(initial=0)))
        assert_identical(got, ref)
    record_accuracy("dpbounds.outer.min_dataset_size_outer", worst, "ulp",
                    "vs dpbounds.min_dataset_size at the same points: 123 x 321 random grid, two constants")
    # overflow to inf: the same values and the same warning as the elementwise function
    with pytest.warns(RuntimeWarning, match="overflow"):
        ref = dpbounds.min_dataset_size(s[:, None], m[None, :], 1e290, 1e-10)
    with pytest.warns(RuntimeWarning, match="overflow"):
        got = min_dataset_size_outer(s, m, 1e290, 1e-10)
    assert np.isinf(ref).any() and np.isfinite(ref).any()
    assert_identical(got, ref)
    s2 = np.array([np.nan, -1.0, 0.0, np.inf, 1.0, 2.0])
    m2 = np.array([np.nan, -1.0, 0.0, 0.5, 1.0, 1.5, np.inf, 1e6])
    for cn, nr in ((1.0, 0.1), (np.nan, 0.1), (1.0, 0.0), (np.inf, 1.0)):
        with np.errstate(all="ignore"):
            ref = ufuncs.min_dataset_size(s2[:, None], m2[None, :], cn, nr)
        assert_identical(_kernels.outer_min_dataset_size(s2, m2, cn, nr, np.empty(ref.shape)), ref)


# ---------------------------------------------------------------- docs, interrupts
def test_docstring_examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(dpbounds.outer, "dpbounds.outer") if t.examples]
    assert len(tests) == 3
    for t in tests:
        runner.run(t)
    assert runner.failures == 0 and runner.tries >= 10


_CHILD = """
import sys, time
import numpy as np
from dpbounds.outer import {func}
s = np.linspace(0.5, 4.0, {ns})
x = {axis}
print("go", flush=True)
try:
    {func}(s, x)
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
else:
    print("finished", flush=True)
"""


def _sigint_latency(func, ns, axis, wait):
    code = textwrap.dedent(_CHILD.format(func=func, ns=ns, axis=axis))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "go"
        time.sleep(wait)          # well inside the call
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    words = out.split()
    assert words and words[0] == "interrupted", (out, err)
    return float(words[1]) - t0


@pytest.mark.xdist_group("sigint_latency")  # with tests/contract/test_interrupts.py's: one at a time
def test_ctrl_c_interrupts_a_long_grid_quickly():
    """rounds_required on 1500 x 2000 takes seconds; SIGINT must end it within 0.2 s."""
    latency = _sigint_latency("rounds_required_outer", 1500, "10 ** np.linspace(-9, -1, 2000)", 0.3)
    assert latency < 0.2, latency


@pytest.mark.slow
@pytest.mark.xdist_group("sigint_latency")
def test_ctrl_c_interrupts_a_1e4_by_1e4_delta_bound_grid():
    """The 800 MB grid of the issue: delta_bound_outer answers SIGINT within 0.2 s."""
    latency = _sigint_latency("delta_bound_outer", 10**4, "np.floor(np.logspace(3, 12, 10**4))", 0.15)
    assert latency < 0.2, latency
