"""The sweep's fast paths give what the plain computation gives, bit for bit.

The sweep reads the reasons of delta_bound's invalid points from the status bits its kernels
compute in the same pass as the values (the ``_delta_bound_checked_*`` ufuncs and the checked
mode of the separable kernel), instead of calling ``theorem31_status_*(sigma, M, NaN)`` on those
points afterwards; and it evaluates Cartesian grids row by row with broadcast coordinates.  The
equalities this relies on are checked here at hard points (NaN, infinities, M < 3, non-integer
M, sigma at the edge sigma^2 ln M = 3 and where condition (2) flips, tiny and huge sigma,
M up to 2**53 and beyond), and the sweep's results are compared with a reference built
directly from the public ufuncs: values to the bit, valid, reason.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import dpbounds
from dpbounds import _kernels, _ufuncs, ufuncs
from dpbounds._errors import status_reasons
from dpbounds._validation import Constraint
from dpbounds.sweeps import _evaluate
from dpbounds.sweeps._evaluate import put_reasons
from dpbounds.sweeps._grid import Grid
from dpbounds.sweeps._quantities import get_quantity

COEFS = ["exact", "simplified"]


def _edge_sigmas(rounds):
    """sigma = sqrt(3/ln M) and its neighbouring doubles: the sigma-edge condition flips there."""
    out = []
    for m in rounds:
        s = np.sqrt(3.0 / np.log(m))
        out += [np.nextafter(s, 0), s, np.nextafter(s, 1)]
    return out


def _condition2_sigmas(coefficient, rounds):
    """sigma where condition (2) at delta_min flips for each M (bisection on theorem31_status)."""
    status = getattr(ufuncs, f"theorem31_status_{coefficient}")
    out = []
    for m in rounds:
        lo, hi = 0.05, 50.0
        if status(lo, m, np.nan) & 8 == 0 or status(hi, m, np.nan) & 8:
            continue
        while True:
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            if status(mid, m, np.nan) & 8:
                lo = mid
            else:
                hi = mid
        out += [lo, hi]
    return out


FINITE_M = [3.0, 4.0, 5.0, 10.0, 100.0, 1e3, 1e4, 1e6, 1e9, 1e12, 2.0**53]
HARD_M = np.r_[np.nan, -np.inf, np.inf, -1.0, 0.0, 1.0, 2.0, 2.5, 3.5, 10.5, 2.0**53 + 2, 1e300, FINITE_M,
               np.rint(np.geomspace(3, 1e15, 60))]


def _hard_sigmas(coefficient):
    rng = np.random.default_rng(20261201)
    return np.r_[np.nan, -np.inf, np.inf, -1.0, -0.0, 0.0, 5e-324, 1e-300, 0.01, 0.029, 0.03, 0.031, 0.06, 0.061,
                 np.linspace(0.2, 6.0, 40), 1e3, 1e10, 1e11, 1e150, 1e151, 1e200, 1.7e308,
                 _edge_sigmas(FINITE_M), _condition2_sigmas(coefficient, FINITE_M), rng.uniform(0.05, 10.0, 30)]


def _valid_axes(sigma, rounds):
    """Where both arguments obey the constraints the sweep checks (sigma finite > 0, M an integer >= 3)."""
    return Constraint.FINITE_POSITIVE.holds(sigma) & Constraint.INTEGER_GE_3.holds(rounds)


def _bits(x):
    return np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)


# ---------------------------------------------------------------- the kernels' status equals theorem31_status
@pytest.mark.parametrize("coefficient", COEFS)
def test_checked_ufunc_is_delta_bound_and_theorem31_status_where_the_axes_are_valid(coefficient):
    S, M = np.meshgrid(_hard_sigmas(coefficient), HARD_M, indexing="ij")
    ok = _valid_axes(S, M)
    with np.errstate(all="ignore"):   # tiny sigma overflows inside the kernels, as in the ufuncs
        plain = getattr(_ufuncs, f"delta_bound_{coefficient}")(S, M)
        value, status = getattr(_ufuncs, f"_delta_bound_checked_{coefficient}")(S, M)
        want = getattr(_ufuncs, f"theorem31_status_{coefficient}")(S, M, np.nan)
    assert ok.any() and (~ok).any()
    # both kinds of reason occur among the valid-axis points, and so do valid points
    assert (want[ok] == 0).any() and (want[ok] & 4).any() and (want[ok] & 8).any()
    np.testing.assert_array_equal(_bits(value[ok]), _bits(plain[ok]))
    np.testing.assert_array_equal(status[ok].astype(np.int64), want[ok].astype(np.int64))
    # elsewhere the sweep marks the axis; the checked kernel says BAD_INPUT there
    assert np.isnan(value[~ok]).all() and (status[~ok] == 1).all()


# long rows (2^18 columns, seconds): one coefficient in the fast suite, the other in the slow tier
@pytest.mark.parametrize("coefficient,long_rows", [(c, False) for c in COEFS] + [
    (COEFS[0], True), pytest.param(COEFS[1], True, marks=pytest.mark.slow)])
def test_outer_kernel_status_is_the_checked_ufunc_bit_for_bit(coefficient, long_rows):
    s = _hard_sigmas(coefficient)
    m = HARD_M
    if long_rows:   # rows longer than the kernel's tile: evaluated in pieces of one row
        s = s[::9]
        m = np.r_[HARD_M, np.rint(np.geomspace(3, 1e12, (1 << 18) + 5))]
    S, M = np.meshgrid(s, m, indexing="ij")
    with np.errstate(all="ignore"):
        value, status = getattr(_ufuncs, f"_delta_bound_checked_{coefficient}")(S, M)
        plain = np.empty(S.shape)
        _kernels.outer_delta_bound(s, m, coefficient, False, plain)
        got, got_status = np.empty(S.shape), np.empty(S.shape, dtype=np.int8)
        _kernels.outer_delta_bound(s, m, coefficient, True, got, got_status)
    np.testing.assert_array_equal(_bits(got), _bits(value))
    np.testing.assert_array_equal(got_status, status)
    ok = _valid_axes(S, M)
    np.testing.assert_array_equal(_bits(got[ok]), _bits(plain[ok]))


# ---------------------------------------------------------------- the sweep against a direct reference
def _reference(coefficient, names, axes):
    """What the sweep must return, from the public ufuncs: values (NaN where an axis breaks its
    constraint), valid, and the reason ("<axis> must be ..." for the first such axis in the
    declared order sigma, rounds; else the status reasons of a non-finite value)."""
    grids = dict(zip(names, np.meshgrid(*(axes[n] for n in names), indexing="ij")))
    S, M = grids["sigma"], grids["rounds"]
    with np.errstate(all="ignore"):
        value = getattr(ufuncs, f"delta_bound_{coefficient}")(S, M)
        status = getattr(ufuncs, f"theorem31_status_{coefficient}")(S, M, np.nan)
    reason = np.empty(S.shape, dtype=object)
    reason.fill("")
    for idx in np.ndindex(S.shape):
        if not Constraint.FINITE_POSITIVE.holds(S[idx]):
            reason[idx] = f"sigma must be {Constraint.FINITE_POSITIVE.text}"
        elif not Constraint.INTEGER_GE_3.holds(M[idx]):
            reason[idx] = f"rounds must be {Constraint.INTEGER_GE_3.text}"
        elif not np.isfinite(value[idx]):
            reason[idx] = "; ".join(status_reasons(int(status[idx]))) or "the result is not finite"
    value[~_valid_axes(S, M)] = np.nan   # a non-finite value at valid axes is kept as computed
    return value, reason == "", reason


def _hard_axes(coefficient):
    # a region of invalid points between valid ones: blocks switch to and from the status pass
    sigma = np.r_[2.0, 3.0, 0.5, 0.61, 0.7, -1.0, np.inf, 1.5, 1e200, 0.03, _edge_sigmas([1e3, 1e6])[:4],
                  _condition2_sigmas(coefficient, [1e4])[:2], 4.0]
    rounds = np.r_[2.0, 10.5, np.inf, np.rint(np.geomspace(3, 2.0**53, 150)), 2.0**53 + 2]
    return sigma, rounds


def _run(quantity, **kw):
    res = dpbounds.sweep(quantity, progress=False, **kw)
    if isinstance(res, dict):
        return {k: np.asarray(res[k]) for k in ("delta_bound", "valid", "reason")}
    return {k: np.asarray(res[k].values) for k in ("delta_bound", "valid", "reason")}


@pytest.mark.parametrize("coefficient", COEFS)
@pytest.mark.parametrize("block", [64, 1000, None])
def test_sweep_paths_equal_the_direct_reference(coefficient, block, monkeypatch):
    if block is not None:   # many blocks per chunk, with and without invalid points
        monkeypatch.setattr(_evaluate, "BLOCK", block)
    sigma, rounds = _hard_axes(coefficient)
    elementwise = dataclasses.replace(get_quantity("delta_bound"), outer=None)
    for names in (("sigma", "rounds"), ("rounds", "sigma")):
        axes = {"sigma": sigma, "rounds": rounds}
        want_value, want_valid, want_reason = _reference(coefficient, names, axes)
        assert want_valid.any() and not want_valid.all()
        ordered = {n: axes[n] for n in names}
        with np.errstate(all="ignore"):
            runs = [_run(q, chunk_size=cs, coefficient=coefficient, **ordered)
                    for q in ("delta_bound", elementwise) for cs in (5, 777, 10**6)]
        for got in runs:
            np.testing.assert_array_equal(_bits(got["delta_bound"]).reshape(want_value.shape), _bits(want_value))
            np.testing.assert_array_equal(got["valid"], want_valid)
            np.testing.assert_array_equal(got["reason"], want_reason)


@pytest.mark.parametrize("coefficient", COEFS)
def test_zip_sweep_equals_the_direct_reference(coefficient):
    sigma, rounds = _hard_axes(coefficient)
    S, M = np.meshgrid(sigma, rounds, indexing="ij")
    want_value, want_valid, want_reason = _reference(coefficient, ("sigma", "rounds"),
                                                     {"sigma": sigma, "rounds": rounds})
    with np.errstate(all="ignore"):
        got = _run("delta_bound", sigma=S.ravel(), rounds=M.ravel(), zip=True, coefficient=coefficient)
    np.testing.assert_array_equal(_bits(got["delta_bound"]), _bits(want_value.ravel()))
    np.testing.assert_array_equal(got["valid"], want_valid.ravel())
    np.testing.assert_array_equal(got["reason"], want_reason.ravel())


# ---------------------------------------------------------------- the pieces of a chunk and its reasons
@pytest.mark.parametrize("shape", [(7,), (3, 70), (2, 3, 65), (4, 5), (65, 2, 3)])
def test_grid_pieces_broadcast_to_the_coordinates(shape):
    rng = np.random.default_rng(len(shape) * 100 + shape[-1])
    names = ("a", "b", "c")[:len(shape)]
    grid = Grid.build({n: rng.normal(size=k) for n, k in zip(names, shape)}, {}, False)
    ranges = [(0, grid.size), (1, grid.size - 1), (grid.size - 1, grid.size)]
    for _ in range(20):   # non-empty ranges: the engine never asks for an empty one
        lo = int(rng.integers(0, grid.size))
        ranges.append((lo, int(rng.integers(lo + 1, grid.size + 1))))
    for min_row in (1, 64, 10**9):
        for lo, hi in ranges:
            pieces = grid.pieces(lo, hi, min_row)
            assert [p.lo for p in pieces] == [lo] + [p.hi for p in pieces[:-1]] and pieces[-1].hi == hi
            want = grid.coords(lo, hi)
            for n in names:
                got = np.concatenate([np.broadcast_to(p.coords[n], p.shape).ravel() for p in pieces])
                np.testing.assert_array_equal(got, want[n])
            assert all(int(np.prod(p.shape)) == p.hi - p.lo for p in pieces)


@pytest.mark.parametrize("pattern", ["none", "runs", "scattered", "all"])
def test_put_reasons_writes_each_coded_point(pattern):
    rng = np.random.default_rng(7)
    n = 5000
    codes = np.zeros(n, dtype=np.int16)
    if pattern == "runs":
        for start in range(0, n, 1000):
            codes[start + 10:start + 300] = rng.integers(1, 5)
        codes[-3:] = 2
    elif pattern == "scattered":   # too many runs for a slice per run
        codes[:] = rng.integers(0, 5, size=n)
    elif pattern == "all":
        codes[:] = 3
    table = np.asarray(["", "one", "two", "three", "four"], dtype=object)
    dest = np.empty(n, dtype=object)
    dest.fill("keep")
    put_reasons(dest, codes, table)
    want = np.array([table[c] if c else "keep" for c in codes], dtype=object)
    np.testing.assert_array_equal(dest, want)


# ---------------------------------------------------------------- reason codes from the status bits
def test_finish_codes_every_status_value_and_broken_axis():
    """finish's whole-block arithmetic against the per-point rule: the first broken axis (declared
    order) gives 1 + its index and a NaN value; else a non-finite value gives STATUS_BASE + bits,
    or NONFINITE without bits; else 0.  Every int8 status value (bits >= 128 included) occurs at
    finite, NaN and infinite values, with and without a broken axis."""
    from dpbounds.sweeps._quantities import NONFINITE, STATUS_BASE
    from dpbounds.sweeps._sweep import plan_sweep

    bits = np.tile(np.arange(256), 6)
    n = bits.size
    kind = np.repeat(np.arange(6), 256)            # value finite / NaN / -inf, axes valid or sigma broken
    sigma = np.where(kind >= 3, -1.0, 1.5)
    rounds = np.where((kind % 3 == 0) & (kind >= 3), 2.0, 1e6)   # rounds broken too where sigma is
    plan = plan_sweep("delta_bound", {"sigma": sigma, "rounds": rounds}, zipped=True)
    raw = np.select([kind % 3 == 1, kind % 3 == 2], [np.nan, -np.inf], 0.25)
    status = bits.astype(np.uint8).view(np.int8)
    want = np.zeros(n, dtype=np.int16)
    for i in range(n):
        if sigma[i] <= 0:
            want[i] = 1
        elif not np.isfinite(raw[i]):
            want[i] = STATUS_BASE + bits[i] if bits[i] else NONFINITE
    for lo, hi in ((0, n), (300, 1100), (1000, 1001)):
        for out in (None, np.full(hi - lo, 12345, dtype=np.int16)):
            values = {"delta_bound": raw[lo:hi].copy()}
            got = _evaluate.finish(plan, lo, hi, values, status=status[lo:hi], out=out)
            np.testing.assert_array_equal(got, want[lo:hi])
            want_values = np.where(sigma[lo:hi] <= 0, np.nan, raw[lo:hi])
            np.testing.assert_array_equal(_bits(values["delta_bound"]), _bits(want_values))
    # all finite and valid: no codes at all
    ok = plan_sweep("delta_bound", {"sigma": [1.5, 2.0], "rounds": [1e6, 1e7]}, zipped=True)
    assert _evaluate.finish(ok, 0, 2, {"delta_bound": np.array([0.1, 0.2])},
                            status=np.array([3, -1], dtype=np.int8)) is None


def _no_status(a, o):
    raise AssertionError("the fused kernel's status bits should be used, not a separate status pass")


@pytest.mark.parametrize("zipped", [False, True])
def test_dask_engine_uses_the_fused_status_and_equals_the_local_engine(zipped):
    pytest.importorskip("dask", reason="dask not installed")
    sigma, rounds = _hard_axes("exact")
    if zipped:
        S, M = np.meshgrid(sigma, rounds, indexing="ij")
        axes = {"sigma": S.ravel(), "rounds": M.ravel(), "zip": True}
    else:
        axes = {"sigma": sigma, "rounds": rounds}
    # the element-wise path (no separable kernel), and no separate status pass to fall back on
    fused_only = dataclasses.replace(get_quantity("delta_bound"), outer=None, status=_no_status)
    with np.errstate(all="ignore"):
        ref = _run(fused_only, chunk_size=97, **axes)
        got = _run(fused_only, chunk_size=97, engine="dask", workers=2, **axes)
    np.testing.assert_array_equal(_bits(got["delta_bound"]), _bits(ref["delta_bound"]))
    np.testing.assert_array_equal(got["valid"], ref["valid"])
    np.testing.assert_array_equal(got["reason"], ref["reason"])
    assert ref["valid"].any() and not ref["valid"].all()


def test_dask_engine_equals_local_for_a_status_pass_quantity():
    """tradeoff_edgeworth has no fused kernel: its reasons come from its status function."""
    pytest.importorskip("dask", reason="dask not installed")
    axes = dict(a=np.r_[-0.1, 0.0, 1e-12, 0.3, 0.9, 1.0], sigma=np.r_[0.02, 0.3, 1.0, 3.0],
                rounds=np.r_[2.0, 3.0, 10.0, 1e3, 1e8])
    res = {}
    for engine in ("local", "dask"):
        with np.errstate(all="ignore"):
            r = dpbounds.sweep("tradeoff_edgeworth", chunk_size=11, engine=engine, workers=2, progress=False, **axes)
        res[engine] = {k: np.asarray(r[k]) for k in ("tradeoff_edgeworth", "valid", "reason")}
    np.testing.assert_array_equal(_bits(res["dask"]["tradeoff_edgeworth"]), _bits(res["local"]["tradeoff_edgeworth"]))
    for k in ("valid", "reason"):
        np.testing.assert_array_equal(res["dask"][k], res["local"][k])
    assert not res["local"]["valid"].all()
