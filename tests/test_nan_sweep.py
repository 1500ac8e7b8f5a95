"""NaN in -> NaN out, silently, for every ufunc of every compiled module (scipy's test_nan_inputs idea)."""
import importlib
import warnings

import numpy as np
import pytest

# every ufunc of the package lives in the one generated module
MODULES = ["dpbounds._ufuncs"]


def _ufuncs():
    for modname in MODULES:
        mod = importlib.import_module(modname)
        for name in sorted(dir(mod)):
            f = getattr(mod, name)
            if isinstance(f, np.ufunc):
                yield pytest.param(f, id=f"{modname}.{name}")


@pytest.mark.parametrize("f", list(_ufuncs()))
def test_all_nan_inputs(f):
    sig = f.types[0].split("->")[0]
    args = [np.nan if c in "df" else 0 for c in sig]
    if not any(c in "df" for c in sig):
        pytest.skip("no floating-point input")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            out = f(*args)
    for o in out if isinstance(out, tuple) else (out,):
        o = np.asarray(o)
        if np.issubdtype(o.dtype, np.floating):
            assert np.isnan(o), f.__name__
        else:
            assert o != 0, f.__name__  # an integer status flags the bad input


def test_sweep_covers_all_modules():
    ids = [p.id for p in _ufuncs()]
    assert {i.rsplit(".", 1)[0] for i in ids} == set(MODULES) and len(ids) >= 60
