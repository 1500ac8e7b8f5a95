"""The Renyi-DP sweep quantities, a block of points at a time: equal to the accountant at every point.

``rdp_epsilon_poisson`` and ``rdp_epsilon_wor`` run the accountant's order search for a whole
chunk in lock step (dpbounds/sweeps/_rdp.py); every value, order, validity and error message must
be the one ``RDPAccountant(...).compose(...).get_epsilon(delta, return_order=True)`` gives at
that point.  ``orders="default"`` is the fixed order list, the vectorised path of
``rdp.poisson_gaussian`` / ``rdp.subsampled_gaussian_wor`` and ``rdp.epsilon``.
"""
from __future__ import annotations

import itertools
import signal
import warnings

import numpy as np
import pytest

import dpbounds
import dpbounds.rdp as R
from dpbounds.sweeps._quantities import QUANTITIES


def _points(S, Q, T, D):
    pts = np.array(list(itertools.product(S, Q, T, D)))
    return {k: pts[:, i] for i, k in enumerate(("sigma", "sample_rate", "steps", "delta"))}


def _check_against_points(name, args, options):
    q = QUANTITIES[name]
    got = q.compute(args, options)
    n = args["sigma"].size
    for i in range(n):
        p = {k: float(v[i]) for k, v in args.items()}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = q.compute.point(p, options)
        except ValueError as exc:
            assert not got["valid"][i] and got["reasons"][i] == str(exc), (p, got["reasons"][i])
            assert np.isnan(got[name][i])
            continue
        assert got["valid"][i] and got["reasons"][i] == "", p
        assert np.float64(got[name][i]).view(np.uint64) == np.float64(want[name]).view(np.uint64), (p, got[name][i], want)
        assert got["order"][i] == want["order"], p
    return got


@pytest.mark.parametrize("orders", ["search", "default"])
@pytest.mark.parametrize("name, options", [
    ("rdp_epsilon_poisson", dict(conversion="improved", mode="exact")),
    ("rdp_epsilon_poisson", dict(conversion="classic", mode="compat")),
    ("rdp_epsilon_wor", dict(conversion="improved", bound="improved")),
    ("rdp_epsilon_wor", dict(conversion="classic", bound="theorem9")),
])
def test_a_block_equals_the_accountant_at_every_point(name, options, orders):
    # valid points (small and large sigma, rates at both ends, steps from 1 to 1e6), and each
    # kind of bad argument (its message is the accountant's)
    big = 25.0 if name == "rdp_epsilon_poisson" else 4.0   # (large sigma: a high optimal order, costly for WOR)
    args = _points([-1.0, 0.9, big], [1e-6, 0.02, 1.0, 1.5], [1.0, 3000.0, 0.5], [1e-9, 0.0])
    got = _check_against_points(name, args, dict(options, orders=orders))
    assert 0 < got["valid"].sum() < got["valid"].size


@pytest.mark.slow
@pytest.mark.parametrize("orders", ["search", "default"])
@pytest.mark.parametrize("name, options", [
    ("rdp_epsilon_poisson", dict(conversion="improved", mode="exact")),
    ("rdp_epsilon_poisson", dict(conversion="classic", mode="compat")),
    ("rdp_epsilon_wor", dict(conversion="improved", bound="improved")),
    ("rdp_epsilon_wor", dict(conversion="classic", bound="theorem9")),
])
def test_a_block_equals_the_accountant_on_a_wide_grid(name, options, orders):
    args = _points([-1.0, 1e-300, 0.05, 0.3, 0.6, 0.8, 1.0, 2.0, 7.0, 30.0, 1e5],
                   [0.0, 1e-9, 1e-4, 0.01, 0.3, 1.0, 1.5], [1.0, 10.0, 1000.0, 1e6, 0.5], [1e-12, 1e-5, 0.5, 0.0])
    _check_against_points(name, args, dict(options, orders=orders))


def test_fixed_orders_are_the_vectorised_path():
    S, Q, T, D = np.array([0.8, 1.1, 3.0]), np.array([0.001, 0.01, 0.1]), 2000.0, 1e-6
    orders = np.asarray(R.DEFAULT_ORDERS)
    ds = dpbounds.sweep("rdp_epsilon_poisson", sigma=S, sample_rate=Q, steps=T, delta=D, orders="default")
    eps, order = R.epsilon(T * R.poisson_gaussian(orders, S[:, None, None], Q[None, :, None]), orders, D,
                           return_order=True)
    np.testing.assert_array_equal(np.asarray(ds["rdp_epsilon_poisson"]).reshape(3, 3), eps)
    np.testing.assert_array_equal(np.asarray(ds["order"]).reshape(3, 3), order)
    # (the accountant's mechanism interpolates its integer-order table at the fractional orders,
    # the function evaluates them directly: equal to rounding)
    ds = dpbounds.sweep("rdp_epsilon_wor", sigma=S[:2], sample_rate=Q[1:], steps=T, delta=D, orders="default")
    eps = R.epsilon(T * R.subsampled_gaussian_wor(orders, S[:2, None, None] / 2, Q[None, 1:, None]), orders, D)
    np.testing.assert_allclose(np.asarray(ds["rdp_epsilon_wor"]).reshape(2, 2), eps, rtol=1e-13)


def test_a_signal_abandons_the_block_between_search_steps(tmp_path, monkeypatch):
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("the test runner handles SIGINT")
    import os

    from dpbounds.sweeps import _rdp

    steps = []
    search = _rdp._refine

    def signalling_refine(*args, **kwargs):
        steps.append(1)
        os.kill(os.getpid(), signal.SIGINT)   # deferred: the block stops at its next step
        return search(*args, **kwargs)

    monkeypatch.setattr(_rdp, "_refine", signalling_refine)
    with pytest.raises(KeyboardInterrupt):
        dpbounds.sweep("rdp_epsilon_poisson", sigma=[1.0, 2.0], sample_rate=0.01, steps=100, delta=1e-5,
                       out=tmp_path / "r.csv")
    assert len(steps) == 1
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.parametrize("orders", ["default", "search"])
def test_in_memory_chunks_are_whole_rows_and_change_no_value(orders):
    """In memory (default chunk size) a block quantity's chunks are whole rows of the first axis
    (its points share the curves' tables); a file's stay at the quantity's chunk size.  The
    values, validity and reasons are those of any other chunking."""
    pytest.importorskip("xarray", reason="xarray not installed")
    from dpbounds.sweeps._sweep import plan_sweep

    axes = dict(sigma=[-1.0, 1.6, 4.0, 12.0, 40.0], sample_rate=[0.0, 1e-3, 0.05], steps=[1000.0, 0.5],
                delta=1e-6)
    q = QUANTITIES["rdp_epsilon_wor"]
    mem = plan_sweep("rdp_epsilon_wor", dict(axes, orders=orders), in_memory=True)
    assert mem.layout.unit == 6 and mem.layout.step == q.chunk_size // 6
    assert all(mem.layout.bounds(i)[0] % 6 == 0 for i in range(mem.n_chunks))
    assert plan_sweep("rdp_epsilon_wor", dict(axes, orders=orders), in_memory=False).layout.unit == 1
    # rows longer than a chunk: points, as in a file
    assert plan_sweep("rdp_epsilon_wor", dict(axes, sample_rate=np.geomspace(1e-4, 0.1, 40), orders=orders),
                      in_memory=True).layout.unit == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = dpbounds.sweep("rdp_epsilon_wor", orders=orders, progress=False, **axes)
        ref = dpbounds.sweep("rdp_epsilon_wor", orders=orders, progress=False, chunk_size=7, **axes)
    assert list(got.data_vars) == list(ref.data_vars)
    for k in got.data_vars:
        a, b = np.asarray(got[k]), np.asarray(ref[k])
        assert a.dtype == b.dtype and (np.array_equal(a, b, equal_nan=True) if a.dtype.kind == "f"
                                       else np.array_equal(a, b)), k
    assert not np.asarray(got["valid"]).all() and np.asarray(got["valid"]).any()
