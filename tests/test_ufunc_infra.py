"""Every public ufunc: real numpy ufunc, NaN in -> NaN out, broadcasting, out=, no stray FP warnings."""
import warnings

import numpy as np
import pytest

import dpbounds
from dpbounds import _ufuncs

UFUNCS = sorted(name for name in dir(_ufuncs) if isinstance(getattr(_ufuncs, name), np.ufunc))

# a valid value for each float argument position, and for the long (flag) arguments
VALID = {
    "ndtr": (0.3,), "log_ndtr": (0.3,), "ndtri": (0.3,), "ndtri_complement": (0.3,), "normal_pdf": (0.3,),
    "lognormal_variance": (1.0,), "lognormal_mu3": (1.0,), "lognormal_mu4": (1.0,), "rho3": (1.0,),
    "coef_simplified": (1.0,), "coef_exact": (1.0,),
    "delta_min_simplified": (1.0, 1e6), "delta_min_exact": (1.0, 1e6),
    "delta_bound_simplified": (1.0, 1e6), "delta_bound_exact": (1.0, 1e6),
    "delta_terms_simplified": (1.0, 1e6), "delta_terms_exact": (1.0, 1e6),
    "theorem31_status": (1.0, 1e6, 0.01, 0),
    "rounds_closed_form": (1.0, 0.01, 0), "rounds_required": (1.0, 0.01, 0, 0),
    "min_dataset_size": (1.0, 1e6, 1.0, 0.1),
    "compose_delta": (0.01, 4.0), "per_epoch_delta": (0.01, 4.0),
    "_delta_bound_checked_simplified": (1.0, 1e6), "_delta_bound_checked_exact": (1.0, 1e6),
}


def test_every_ufunc_is_covered():
    assert set(UFUNCS) == set(VALID)
    assert len(UFUNCS) >= 20


@pytest.mark.parametrize("name", UFUNCS)
def test_is_ufunc_with_float64_loop(name):
    f = getattr(_ufuncs, name)
    assert isinstance(f, np.ufunc)
    assert all(t.split("->")[0].startswith("d" * min(f.nin, 1)) for t in f.types)
    assert f.__doc__


@pytest.mark.parametrize("name", UFUNCS)
def test_nan_in_nan_out_silently(name):
    f = getattr(_ufuncs, name)
    args = VALID[name]
    float_pos = [i for i, t in enumerate(f.types[0].split("->")[0]) if t == "d"]
    if name == "theorem31_status":
        float_pos.remove(2)  # delta = NaN is the documented "evaluate (2) at delta_min" sentinel
    for i in float_pos:
        a = list(args)
        a[i] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):
                out = f(*a)
        outs = out if isinstance(out, tuple) else (out,)
        for o in outs:
            if np.issubdtype(np.asarray(o).dtype, np.integer):
                assert o != 0  # a status output flags the bad input
            else:
                assert np.isnan(o), (name, i)


@pytest.mark.parametrize("name", UFUNCS)
def test_broadcasting_and_out(name):
    f = getattr(_ufuncs, name)
    args = list(VALID[name])
    args[0] = np.full((3, 1), args[0])
    if len(args) > 1 and isinstance(args[1], float):
        args[1] = np.full((1, 4), args[1])
    res = f(*args)
    first = res[0] if isinstance(res, tuple) else res
    assert first.shape == ((3, 4) if len(args) > 1 and np.ndim(args[1]) else (3, 1))
    outs = tuple(np.empty_like(r) for r in (res if isinstance(res, tuple) else (res,)))
    got = f(*args, out=outs if len(outs) > 1 else outs[0])
    for o, r in zip(outs, res if isinstance(res, tuple) else (res,)):
        np.testing.assert_array_equal(o, r)
    assert (got[0] if isinstance(got, tuple) else got) is outs[0]


def test_no_warnings_on_valid_extreme_input(rng):
    s = np.concatenate([10 ** rng.uniform(-2, 6, 2000), [1e-300, 0.03, 0.0301, 1e300]])
    m = np.floor(10 ** rng.uniform(0.48, 18, s.size))
    d = 10 ** rng.uniform(-300, -1e-9, s.size)
    x = rng.uniform(-1e3, 1e3, s.size)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f in (_ufuncs.ndtr, _ufuncs.log_ndtr, _ufuncs.normal_pdf):
            f(x)
        _ufuncs.ndtri(d)
        for f in (_ufuncs.lognormal_variance, _ufuncs.lognormal_mu3, _ufuncs.lognormal_mu4, _ufuncs.rho3,
                  _ufuncs.coef_simplified, _ufuncs.coef_exact):
            f(s)
        for k in (0, 1):
            _ufuncs.delta_terms_simplified(s, m)
            _ufuncs.delta_terms_exact(s, m)
            _ufuncs.theorem31_status(s, m, d, k)
            _ufuncs.rounds_closed_form(s, d, k)
        _ufuncs.compose_delta(d, m)
        _ufuncs.per_epoch_delta(d, m)


def test_rounds_required_no_warnings_wide_range(rng):
    s = 10 ** rng.uniform(-1.5, 2, 300)
    d = 10 ** rng.uniform(-20, -0.01, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in (0, 1):
            for t in (0, 1):
                out = _ufuncs.rounds_required(s, d, k, t)
                assert np.all((out >= 3) | np.isinf(out))


def test_out_of_domain_is_nan():
    assert np.isnan(_ufuncs.delta_min_simplified(1.0, 2.0))
    assert np.isnan(_ufuncs.delta_min_exact(-1.0, 100.0))
    assert np.isnan(_ufuncs.rounds_required(1.0, 1.5, 0, 0))
    assert np.isnan(_ufuncs.rounds_closed_form(1.0, 0.0, 1))
    assert np.isnan(_ufuncs.compose_delta(1.5, 2.0))


def test_float32_and_int_inputs_cast():
    out = _ufuncs.ndtr(np.array([0.0, 1.0], dtype=np.float32))
    assert out.dtype == np.float64
    assert _ufuncs.delta_min_simplified(1, 1000000) == _ufuncs.delta_min_simplified(1.0, 1e6)


def test_dask_passthrough():
    da = pytest.importorskip("dask.array", reason="dask not installed")
    s = da.from_array(np.linspace(0.5, 2, 10), chunks=5)
    lazy = dpbounds.ufuncs.delta_min_exact(s, 1e6)
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), dpbounds.ufuncs.delta_min_exact(np.linspace(0.5, 2, 10), 1e6))


def test_xarray_passthrough():
    xr = pytest.importorskip("xarray", reason="xarray not installed")
    s = xr.DataArray(np.linspace(0.5, 2, 4), dims=["sigma"])
    m = xr.DataArray([1e5, 1e6], dims=["rounds"])
    out = dpbounds.ufuncs.delta_min_simplified(s, m)
    assert isinstance(out, xr.DataArray) and out.dims == ("sigma", "rounds")


@pytest.mark.parametrize("name", ["delta_min_simplified", "delta_min_exact", "delta_bound_simplified",
                                  "delta_bound_exact", "_delta_bound_checked_simplified",
                                  "_delta_bound_checked_exact"])
def test_paired_loop_matches_one_point_path(rng, name):
    # the Theorem 3.1 loops take two points at a time; every point must equal the
    # one-point evaluation bit for bit, whatever its neighbour (odd lengths, strides,
    # special values next to regular ones)
    f = getattr(_ufuncs, name)
    specials = np.array([np.nan, -1.0, 0.0, 0.02, 0.0379, 1e200, np.inf])
    s = np.concatenate([10 ** rng.uniform(-1.2, 2, 301), specials])
    m = np.concatenate([np.floor(10 ** rng.uniform(0, 15, 301)), [2.0, 3.0, 2.5, np.inf, np.nan, 1e15, 7.0]])
    perm = rng.permutation(s.size)
    s, m = s[perm], m[perm]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        whole = f(s, m)
        strided = f(s[::-1][::2], m[::-1][::2])
        single = [f(np.float64(a), np.float64(b)) for a, b in zip(s, m)]
    whole = whole if isinstance(whole, tuple) else (whole,)
    strided = strided if isinstance(strided, tuple) else (strided,)
    for k, arr in enumerate(whole):
        one = np.array([x[k] if isinstance(x, tuple) else x for x in single])
        np.testing.assert_array_equal(arr, one)
        np.testing.assert_array_equal(strided[k], one[::-1][::2])
