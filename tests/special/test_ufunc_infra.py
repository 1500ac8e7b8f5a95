"""Every ufunc of the declaration table: a real numpy ufunc, exposed, named by the one rule,
broadcasting, ``out=``, ``where=``, dtype casting, and the paired Theorem 3.1 loops.

One walker per property of the table elsewhere: NaN in -> NaN out in tests/contract/test_nan_sweep.py,
the valid point and NaN outside the declared domain in tests/special/test_ufunc_domain.py, no IEEE flag
in tests/contract/test_fp_flags.py, the validated wrappers' rejections in tests/contract/test_input_contract.py."""
import importlib
import warnings

import numpy as np
import pytest

import dpbounds
from dpbounds import _ufuncs
from dpbounds._ufunc_table import UFUNCS as SPECS
from dpbounds._ufunc_table import by_name, choice_suffix, stem

NAMES = [u.name for u in SPECS]


def test_table_and_module_agree():
    exposed = {n for n in dir(_ufuncs) if isinstance(getattr(_ufuncs, n), np.ufunc)}
    assert exposed == set(NAMES)
    assert len(NAMES) == len(set(NAMES)) and len(NAMES) >= 60
    public = {n for n in dir(dpbounds.ufuncs) if isinstance(getattr(dpbounds.ufuncs, n), np.ufunc)}
    assert public == set(NAMES)           # dpbounds.ufuncs exposes every one


@pytest.mark.parametrize("name", NAMES)
def test_naming_rule(name):
    u = by_name(name)
    # C dpb_<stem> -> ufunc <stem><choice suffixes> (a leading underscore marks a private ufunc)
    assert u.c_function == "dpb_" + stem(u)
    suffix = "".join(choice_suffix(a, v) for a, v in u.choices)
    assert u.name.lstrip("_") == stem(u) + suffix
    if u.python:
        # the validated function: the stem, minus the prefix of the subpackage it lives in
        module, func = u.python.rsplit(".", 1)
        prefix = module.split(".", 1)[1] + "_" if "." in module else ""
        assert stem(u) == prefix + func, (u.python, stem(u))
        assert callable(getattr(importlib.import_module(module), func))


@pytest.mark.parametrize("name", NAMES)
def test_signature_and_doc(name):
    u, f = by_name(name), getattr(_ufuncs, name)
    assert (f.nin, f.nout) == (u.nin, u.nout)
    assert f.types[0].split("->")[0] == "d" * u.nin
    assert f.__doc__ and u.doc.split(".")[0] in f.__doc__
    if u.accuracy is not None:
        assert u.accuracy.regime in f.__doc__


@pytest.mark.parametrize("name", NAMES)
def test_broadcasting_out_and_where(name):
    u, f = by_name(name), getattr(_ufuncs, name)
    args = [np.full((3, 1), u.point[0])] + [np.full((1, 4), p) if i == 1 else p for i, p in enumerate(u.point[1:], 1)]
    res = f(*args)
    res_t = res if isinstance(res, tuple) else (res,)
    assert res_t[0].shape == ((3, 4) if u.nin > 1 else (3, 1))
    outs = tuple(np.empty_like(r) for r in res_t)
    got = f(*args, out=outs if len(outs) > 1 else outs[0])
    for o, r in zip(outs, res_t):
        np.testing.assert_array_equal(o, r)
    assert (got[0] if isinstance(got, tuple) else got) is outs[0]
    # where=False leaves the output untouched
    sentinel = tuple(np.full_like(r, 7) for r in res_t)
    f(*args, out=sentinel if len(sentinel) > 1 else sentinel[0], where=np.zeros(res_t[0].shape, bool))
    for s in sentinel:
        assert np.all(s == 7)


@pytest.mark.parametrize("name", NAMES)
def test_float32_and_int_inputs_cast(name):
    u, f = by_name(name), getattr(_ufuncs, name)
    ref = f(*u.point)
    got = f(*[np.float32(p) if float(np.float32(p)) == p else p for p in u.point])
    for r, g in zip(ref if isinstance(ref, tuple) else (ref,), got if isinstance(got, tuple) else (got,)):
        assert np.asarray(g).dtype == np.asarray(r).dtype
        np.testing.assert_array_equal(g, r)


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


@pytest.mark.parametrize("name", [u.name for u in SPECS if u.loop == "t31"])
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


def test_sigma_inf_declaration_matches_the_core():
    # The declaration decides what a raw ufunc answers at sigma = +inf: NaN where the declared
    # constraint excludes it, the limit where it allows it (the lognormal family: Y = 1 there).
    for u in SPECS:
        if [a.name for a in u.args] != ["sigma"]:
            continue
        got = float(getattr(_ufuncs, u.name)(np.inf))
        allowed = bool(u.args[0].constraint.holds(np.array([np.inf]))[0])
        assert np.isnan(got) != allowed, u.name
    # the limits, against the large-sigma behaviour: moments -> 0, coefficients -> inf
    assert _ufuncs.lognormal_rho3(np.inf) == 0.0 and _ufuncs.lognormal_variance(np.inf) == 0.0
    assert 0.0 < _ufuncs.lognormal_rho3(1e100) < 1e-299
    assert _ufuncs.coef_exact(np.inf) == np.inf and _ufuncs.coef_exact(1e100) > 1e100
