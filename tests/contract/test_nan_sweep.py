"""NaN in -> NaN out, silently, for every ufunc (scipy's test_nan_inputs idea).

Each ufunc of the declaration table (the table and the compiled module list the same ufuncs:
tests/special/test_ufunc_infra.py::test_table_and_module_agree) gets NaN in each argument in turn, the
others at its declared valid point, and then NaN in every argument at once.  Each floating
output must be NaN and each status output must flag the bad input (BAD_INPUT = 1), with no
IEEE flag raised (underflow included) and no warning.  An argument whose NaN is a documented
sentinel (``nan_means``) is skipped in the one-at-a-time walk.
"""
import warnings

import numpy as np
import pytest

from dpbounds import _ufuncs
from dpbounds._ufunc_table import UFUNCS


def _silently(f, args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            out = f(*args)
    return out if isinstance(out, tuple) else (out,)


def _assert_nan_out(outs, what):
    for o in outs:
        o = np.asarray(o)
        if np.issubdtype(o.dtype, np.floating):
            assert np.isnan(o), what
        else:
            assert o & 1, what  # the status output flags the bad input (BAD_INPUT = 1)


@pytest.mark.parametrize("u", UFUNCS, ids=lambda u: u.name)
def test_nan_in_nan_out_silently(u):
    f = getattr(_ufuncs, u.name)
    assert all(c in "df" for c in f.types[0].split("->")[0]), u.name  # every input is floating
    for i, arg in enumerate(u.args):
        if arg.nan_means:
            continue  # NaN is a documented sentinel for this argument
        a = list(u.point)
        a[i] = np.nan
        _assert_nan_out(_silently(f, a), (u.name, arg.name))
    _assert_nan_out(_silently(f, [np.nan] * u.nin), (u.name, "all arguments NaN"))
