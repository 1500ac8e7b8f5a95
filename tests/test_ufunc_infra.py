"""Every ufunc of the declaration table: a real numpy ufunc, exposed, named by the one rule,
NaN in -> NaN out, broadcasting, ``out=``, ``where=``, dtype casting, no stray FP warnings,
and validated wrappers that check exactly the declared constraints."""
import importlib
import inspect
import warnings

import numpy as np
import pytest

import dpbounds
from dpbounds import _ufuncs
from dpbounds._ufunc_table import UFUNCS as SPECS
from dpbounds._ufunc_table import by_name, choice_suffix, stem
from dpbounds._validation import Constraint

NAMES = [u.name for u in SPECS]

# values that break each constraint (NaN breaks every one except ANY)
VIOLATIONS = {
    Constraint.REAL: [np.nan],
    Constraint.NONNEGATIVE: [-1.0, np.nan],
    Constraint.FINITE_NONNEGATIVE: [-1.0, np.inf, np.nan],
    Constraint.FINITE_POSITIVE: [0.0, -2.0, np.inf, np.nan],
    Constraint.POSITIVE: [0.0, -2.0, np.nan],
    Constraint.OPEN_UNIT: [0.0, 1.0, 1.5, np.nan],
    Constraint.CLOSED_UNIT: [-0.1, 1.5, np.nan],
    Constraint.HALF_OPEN_UNIT: [0.0, 1.5, np.nan],
    Constraint.ORDER: [0.5, np.nan],
    Constraint.ORDER_TO_1E4: [0.5, 2e4, np.nan],
    Constraint.ORDER_ABOVE_1: [1.0, np.nan],
    Constraint.INTEGER_GE_1: [0.0, 2.5, np.inf, np.nan],
    Constraint.INTEGER_GE_2: [1.0, 2.5, np.inf, np.nan],
    Constraint.INTEGER_GE_3: [2.0, 3.5, np.inf, np.nan],
}


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
def test_declared_point_is_valid(name):
    u, f = by_name(name), getattr(_ufuncs, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise", under="ignore"):  # numpy ignores underflow by default; so do we
            out = f(*u.point)
    for o, t in zip(out if isinstance(out, tuple) else (out,), u.outputs):
        if t == "double":
            assert np.isfinite(o), (name, u.point, o)
        else:
            assert o == 0, (name, u.point, o)      # a status output says "no problem" at a valid point


@pytest.mark.parametrize("name", NAMES)
def test_nan_in_nan_out_silently(name):
    u, f = by_name(name), getattr(_ufuncs, name)
    for i, arg in enumerate(u.args):
        if arg.nan_means:
            continue  # NaN is a documented sentinel for this argument
        a = list(u.point)
        a[i] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):
                out = f(*a)
        for o in out if isinstance(out, tuple) else (out,):
            if np.issubdtype(np.asarray(o).dtype, np.integer):
                assert o & 1, (name, i)  # the status output flags the bad input (BAD_INPUT = 1)
            else:
                assert np.isnan(o), (name, i)


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


def _validated(u):
    """The validated wrapper of ``u`` when its leading parameters are the declared arguments."""
    if not u.python:
        return None
    module, func = u.python.rsplit(".", 1)
    f = getattr(importlib.import_module(module), func)
    try:
        params = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):  # compiled functions without a signature
        return None
    if params[: u.nin] != [a.name for a in u.args]:
        return None
    return f


WRAPPED = [u.name for u in SPECS if _validated(u) is not None]


def test_most_validated_wrappers_are_checked():
    assert len(WRAPPED) >= 30


@pytest.mark.parametrize("name", WRAPPED)
def test_validated_wrapper_checks_declared_constraints(name):
    u = by_name(name)
    f = _validated(u)
    kwargs = dict(u.choices)
    kwargs = {k: (v == "true") if v in ("true", "false") else v for k, v in kwargs.items()}
    extra = {k: v for k, v in kwargs.items() if k in inspect.signature(f).parameters}
    for i, arg in enumerate(u.args):
        for bad in VIOLATIONS.get(arg.constraint, []):
            a = list(u.point)
            a[i] = bad
            with pytest.raises(dpbounds.DPBoundsError, match=rf"^{arg.name} must be"):
                f(*a, **extra)
            a[i] = np.array([u.point[i], bad])
            with pytest.raises(dpbounds.DPBoundsError, match=rf"^{arg.name} must be .*1 of 2 elements"):
                f(*a, **extra)
    # and the valid point passes through to the very same ufunc value
    got = f(*u.point, **extra)
    ref = getattr(_ufuncs, name)(*u.point)
    if isinstance(ref, tuple):
        ref = ref[0]
        got = got[0] if isinstance(got, tuple) else got
    assert got == ref or (np.isnan(got) and np.isnan(ref))


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
        for f in (_ufuncs.lognormal_variance, _ufuncs.lognormal_mu3, _ufuncs.lognormal_mu4, _ufuncs.lognormal_rho3,
                  _ufuncs.coef_simplified, _ufuncs.coef_exact):
            f(s)
        for c in ("simplified", "exact"):
            getattr(_ufuncs, f"delta_terms_{c}")(s, m)
            getattr(_ufuncs, f"theorem31_status_{c}")(s, m, d)
            getattr(_ufuncs, f"rounds_closed_form_{c}")(s, d)
        _ufuncs.compose_delta(d, m)
        _ufuncs.per_epoch_delta(d, m)


def test_rounds_required_no_warnings_wide_range(rng):
    s = 10 ** rng.uniform(-1.5, 2, 300)
    d = 10 ** rng.uniform(-20, -0.01, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("rounds_required_simplified", "rounds_required_exact", "rounds_required_simplified_at_target",
                     "rounds_required_exact_at_target"):
            out = getattr(_ufuncs, name)(s, d)
            assert np.all((out >= 3) | np.isinf(out))


def test_out_of_domain_is_nan():
    assert np.isnan(_ufuncs.delta_min_simplified(1.0, 2.0))
    assert np.isnan(_ufuncs.delta_min_exact(-1.0, 100.0))
    assert np.isnan(_ufuncs.rounds_required_simplified(1.0, 1.5))
    assert np.isnan(_ufuncs.rounds_closed_form_exact(1.0, 0.0))
    assert np.isnan(_ufuncs.compose_delta(1.5, 2.0))


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
