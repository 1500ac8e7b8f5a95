"""Regression tests for what the fuzz harnesses (fuzz/, docs/fuzzing.md) found.

Each test replays the input a harness reported, in plain pytest (no atheris), and checks the
contract that input broke.  Findings that are not fixed yet are ``xfail(strict=True)`` with the
reason and the owner, so that the fix turns them into passing tests (and the strict mark makes
the run fail until the ``xfail`` is removed).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dpbounds
from dpbounds import rdp, ufuncs

# ----------------------------------------------------------------------------- fixed here
# The validated API read non-numbers as numbers: numpy's float conversion drops the imaginary
# part of complex input (only a ComplexWarning), parses strings ("1.5") and reads None as NaN;
# a Python int beyond the double range escaped as OverflowError.  Each must be DPBoundsError
# naming the parameter.
NOT_REAL = [
    pytest.param(np.array([1.0 + 1.0j]), id="complex-array"),
    pytest.param(np.array([], dtype=np.complex128).reshape(4, 0, 0), id="empty-complex-array"),
    pytest.param("1.5", id="str"),
    pytest.param(b"1", id="bytes"),
    pytest.param(None, id="None"),
    pytest.param(np.array([1.0, None], dtype=object), id="object-with-None"),
    pytest.param(np.array(["2.0"]), id="str-array"),
    pytest.param(10 ** 400, id="int-beyond-double"),
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
                                   np.array([1.5, 2], dtype=object), True])
def test_real_input_still_accepted(value):
    # the same values as before the check: what numpy converts exactly to float64
    got = rdp.gaussian(2.0, value)
    want = 2.0 / (2.0 * np.asarray(value, dtype=np.float64) ** 2)
    np.testing.assert_array_equal(got, want)


def test_delta_bound_empty_broadcast_still_checks_rounds():
    # fuzz_special: an empty sigma next to rounds = NaN was accepted (the array path read the
    # status of the empty broadcast only); every other validated function refuses it
    with pytest.raises(dpbounds.DPBoundsError, match=r"^rounds must be an integer >= 3"):
        dpbounds.delta_bound(np.empty((0, 0, 0)), np.nan, "simplified")
    with pytest.raises(dpbounds.DPBoundsError, match=r"^rounds must be an integer >= 3"):
        dpbounds.theorem31(np.empty((0,)), np.nan)
    out = dpbounds.delta_bound(np.empty((0, 3)), 1000)
    assert out.shape == (0, 3)


def test_rdp_delta_at_order_inf_takes_the_total_variation_bound():
    # fuzz_rdp: rdp.epsilon([1e-100], [inf], 1e-15) = 0, yet rdp.delta(..., 0) was 1.0: at order
    # inf the improved delta conversion skipped its total-variation bound sqrt(1 - e^{-rdp}),
    # which its docstring promises (and which it applies at every finite order)
    for r in (1e-100, 1e-3, 0.01, 2.0):
        tv = math.sqrt(-math.expm1(-r))
        d_inf = rdp.delta([r], [math.inf], 0.0)
        assert d_inf <= tv * (1 + 1e-15), (r, d_inf, tv)
        # a finite order is never better than order inf with the same value at order inf alone
        assert d_inf <= rdp.delta([r], [1e6], 0.0) * (1 + 1e-12)
    eps = rdp.epsilon([1e-100], [math.inf], 1e-15)
    assert rdp.delta([1e-100], [math.inf], eps) <= 1e-15
    # the classic conversion has no such bound: delta(eps < rdp) is 1 there, as before
    assert rdp.delta([0.01], [math.inf], 0.0, "classic") == 1.0
    assert rdp.delta([0.01], [math.inf], 0.02) == 0.0


def test_rounds_required_underflowed_per_epoch_delta_is_inf_not_nan():
    # fuzz_bounds: rounds_required(1e-200, 5e-324, "simplified", "target", epochs=2) was NaN: the
    # per-epoch delta 1 - (1 - 5e-324)^(1/2) underflows to 0, outside the kernel's (0, 1).  No M
    # reaches a delta below the smallest double (delta_min >= T6 > 1e-17 for M <= 2**53): inf.
    assert dpbounds.per_epoch_delta(5e-324, 2) == 0.0
    for s, vat in ((1e-200, "target"), (1.0, "delta_min"), (3.0, "target")):
        assert dpbounds.rounds_required(s, 5e-324, "simplified", vat, epochs=2) == math.inf
        assert dpbounds.rounds_required(s, 5e-324, "simplified", vat) == math.inf   # one epoch: as before
        got = dpbounds.rounds_required(np.array([s, s]), np.array([5e-324, 0.01]), "simplified", vat, epochs=2)
        assert got[0] == math.inf
        assert got[1] == dpbounds.rounds_required(s, 0.01, "simplified", vat, epochs=2)


# ----------------------------------------------------------------------------- not fixed here
# RDPAccountant.get_delta misses the optimum over orders when it sits at the top of the order range
# and the total-variation shortcut makes a local minimum near alpha = 1: the answer is valid (an
# upper bound) but up to 1e23 times looser than what the same curve gives, and inconsistent with
# get_epsilon on the same accountant.  Left to the RDP owner (the order search in rdp/_accountant.py).
@pytest.mark.xfail(strict=True, reason="found by fuzzing (issue 14): RDPAccountant.get_delta's order search "
                   "stops at the total-variation local minimum near alpha = 1; not fixed yet")
@pytest.mark.parametrize("sigma, delta", [(1e6, 1e-30), (9007199254740991.0, 1e-100)])
def test_rdp_accountant_delta_at_its_own_epsilon(sigma, delta):
    acc = rdp.RDPAccountant().compose(rdp.PoissonGaussian(sigma, 1.0), 1)
    eps, order = acc.get_epsilon(delta, return_order=True)
    # the conversion at the order get_epsilon chose already certifies delta: get_delta may not be worse
    assert rdp.delta(acc.rdp([order]), [order], eps) <= delta * (1 + 1e-9)
    assert acc.get_delta(eps) <= delta * (1 + 1e-9)



# The raw kernels raise IEEE flags at extreme or NaN arguments although the value they return is
# the right one, so numpy warns "RuntimeWarning: overflow encountered in normal_pdf".  The
# documented contract is "NaN in -> NaN out, silently" (tests/test_ufunc_infra.py) and, as
# scipy.special, no floating-point warnings from the special functions.  The fix belongs in each
# C kernel (guard the extreme branch before the overflowing operation); left for the C core's
# owner: fuzz/_contract.py tolerates these while they are open (DPBOUNDS_FUZZ_STRICT_FP=1 reports them).
_FP_FLAG_XFAIL = pytest.mark.xfail(strict=True, reason="found by fuzzing (issue 14): the C kernel raises an IEEE "
                                   "flag at this argument although its value is right; not fixed yet")
FP_FLAGS = [
    pytest.param(lambda: ufuncs.normal_pdf(-4.37086174e307), 0.0, id="normal_pdf-huge-x", marks=_FP_FLAG_XFAIL),
    pytest.param(lambda: ufuncs.tradeoff_clt_slope(0.0, np.nan, np.nan), math.nan, id="tradeoff_clt_slope-nan",
                 marks=_FP_FLAG_XFAIL),
    pytest.param(lambda: dpbounds.compose_delta(1.0 - 2.0 ** -53, 4.0183737216871536e307), 1.0,
                 id="compose_delta-huge-epochs", marks=_FP_FLAG_XFAIL),
    pytest.param(lambda: rdp.laplace(1.7976931348623157e308, 9007199254740994.0), 1.0 / 9007199254740994.0,
                 id="rdp_laplace-huge-alpha", marks=_FP_FLAG_XFAIL),
]


@pytest.mark.parametrize("call, expected", FP_FLAGS)
def test_no_floating_point_warning(call, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="warn", under="ignore"):   # numpy's defaults
            got = call()
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, rel=1e-15, abs=0.0)


# subsampled_gaussian_wor never returns at sigma = 1e-9 (any order, e.g. 2.5; 0.3 s at sigma = 1e-6),
# inside a nogil C loop that Ctrl-C cannot interrupt.  Run in a subprocess with a time limit.
@pytest.mark.xfail(strict=True, reason="found by fuzzing (issue 14): rdp.subsampled_gaussian_wor hangs at "
                   "sigma = 1e-9 (C loop, no interrupt); not fixed yet")
def test_subsampled_gaussian_wor_tiny_sigma_returns():
    import subprocess
    import sys

    code = "from dpbounds import rdp; print(rdp.subsampled_gaussian_wor(2.5, 1e-9, 0.5))"
    try:
        subprocess.run([sys.executable, "-c", code], timeout=3, check=True, capture_output=True)
    except subprocess.TimeoutExpired:
        pytest.fail("rdp.subsampled_gaussian_wor(2.5, 1e-9, 0.5) did not return within 3 s")


# The RDP mechanism objects accepted a sampling rate above 1 and a negative sigma (issue 14's
# example) and answered inf; they validate with the constraint table now.
@pytest.mark.parametrize("make", [lambda: rdp.PoissonGaussian(1.1, 1.5), lambda: rdp.PoissonGaussian(-1.0, 0.01),
                                  lambda: rdp.Gaussian(-1.0)], ids=["q=1.5", "sigma<0", "gaussian-sigma<0"])
def test_mechanism_objects_validate(make):
    with pytest.raises(dpbounds.DPBoundsError, match=r"^(q|sigma)\b"):
        make()
