"""Regression tests for what the fuzz harnesses (fuzz/, docs/fuzzing.md) found in the validated API's
input contract and the IEEE-flag rule.

Each test replays the input a harness reported, in plain pytest (no atheris), and checks the
contract that input broke; a test's comment names the harness that found it where the record says
which one did. Findings that are not fixed yet are ``xfail(strict=True)`` with the reason and the
owner, so that the fix turns them into passing tests (and the strict mark makes the run fail until
the ``xfail`` is removed).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dpbounds
from dpbounds import rdp, ufuncs

# The validated API reads only real numbers: complex input (whose imaginary part numpy's float
# conversion would drop), strings ("1.5"), None and a Python int beyond the double range are each
# a DPBoundsError naming the parameter.
NOT_REAL = [
    pytest.param(np.array([1.0 + 1.0j]), id="complex-array"),
    pytest.param(np.array([], dtype=np.complex128).reshape(4, 0, 0), id="empty-complex-array"),
    pytest.param("1.5", id="str"),
    pytest.param(b"1", id="bytes"),
    pytest.param(None, id="None"),
    pytest.param(np.array([1.0, None], dtype=object), id="object-with-None"),
    pytest.param(np.array(["2.0"]), id="str-array"),
    pytest.param(10 ** 400, id="int-beyond-double"),
    # a bool is not the number 1
    pytest.param(True, id="bool"),
    pytest.param(np.array([True, False]), id="bool-array"),
]

CALLS = [
    pytest.param(lambda v: dpbounds.delta_bound(v, 1000), "sigma", id="delta_bound"),
    pytest.param(lambda v: dpbounds.rounds_required(v, 0.01, "simplified", "target"), "sigma", id="rounds_required"),
    pytest.param(lambda v: dpbounds.compose_delta(v, 1.0), "delta", id="compose_delta"),
    pytest.param(lambda v: dpbounds.tradeoff_clt(v, 1.0, 100), "a", id="tradeoff_clt"),
    pytest.param(lambda v: dpbounds.tradeoff_clt_slope(0.1, v, 100), "sigma", id="tradeoff_clt_slope"),
    pytest.param(lambda v: dpbounds.edgeworth_status(v, 1.0, 100.0), "a", id="edgeworth_status"),
    pytest.param(lambda v: rdp.gaussian(2.0, v), "sigma", id="rdp.gaussian"),
    pytest.param(lambda v: dpbounds.lognormal_moments(v), "sigma", id="lognormal_moments"),
]


@pytest.mark.parametrize("call, name", CALLS)
@pytest.mark.parametrize("value", NOT_REAL)
def test_non_real_input_is_refused_naming_the_parameter(call, name, value):
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a ComplexWarning would be the old, silent path
        with pytest.raises(dpbounds.DPBoundsError, match=rf"^{name} must be"):
            call(value)


@pytest.mark.parametrize("value", [1.5, np.float32(2.0), np.array([1.0, 2.0]), [1.0, 2], np.array([3], dtype=np.int8),
                                   np.array([1.5, 2], dtype=object)])
def test_real_input_still_accepted(value):
    # what numpy converts exactly to float64 is accepted, with those values
    got = rdp.gaussian(2.0, value)
    want = 2.0 / (2.0 * np.asarray(value, dtype=np.float64) ** 2)
    np.testing.assert_array_equal(got, want)


# The raw kernels raise no IEEE flag at extreme or NaN arguments where the value they return is
# the right one: the documented contract is "NaN in -> NaN out, silently"
# (tests/special/test_ufunc_infra.py) and, as scipy.special, no floating-point warnings from the special
# functions.  Each C kernel guards its extreme branch before the operation that would overflow.
FP_FLAGS = [
    pytest.param(lambda: ufuncs.normal_pdf(-4.37086174e307), 0.0, id="normal_pdf-huge-x"),
    pytest.param(lambda: ufuncs.tradeoff_clt_slope(0.0, np.nan, np.nan), math.nan, id="tradeoff_clt_slope-nan"),
    pytest.param(lambda: dpbounds.compose_delta(1.0 - 2.0 ** -53, 4.0183737216871536e307), 1.0,
                 id="compose_delta-huge-epochs"),
    pytest.param(lambda: rdp.laplace(1.7976931348623157e308, 9007199254740994.0), 1.0 / 9007199254740994.0,
                 id="rdp_laplace-huge-alpha"),
]


@pytest.mark.parametrize("call, expected", FP_FLAGS)
def test_no_floating_point_warning(call, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):   # no flag at all, not even underflow
            got = call()
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, rel=1e-15, abs=0.0)
