"""Bad input to the validated API: one ValueError that names the parameter (and counts bad elements)."""
import math
import re

import numpy as np
import pytest

import dpbounds

BAD_SIGMA = [float("nan"), float("inf"), -float("inf"), -1.0, 0.0]
BAD_ROUNDS = [float("nan"), float("inf"), 2, 2.5, -5, 0]
BAD_DELTA = [float("nan"), 0.0, 1.0, -0.1, 1.5, float("inf")]


# The validated wrappers of the declaration table (delta_bound, rounds_required, rounds_closed_form,
# min_dataset_size, compose_delta, ...) are walked with every bad value of their declared constraints
# by tests/contract/test_input_contract.py::test_table_wrappers_reject; here, the functions built on them.
@pytest.mark.parametrize("bad", BAD_SIGMA)
@pytest.mark.parametrize("call", [
    lambda s: dpbounds.delta_bound_terms(s, 1000),
    lambda s: dpbounds.theorem31(s, 1000),
    lambda s: dpbounds.lognormal_moments(s),
])
def test_bad_sigma(call, bad):
    with pytest.raises(ValueError, match="sigma"):
        call(bad)
    with pytest.raises(ValueError, match=r"sigma .*1 of 3 elements"):
        call(np.array([1.0, bad, 2.0]))


@pytest.mark.parametrize("bad", BAD_ROUNDS)
@pytest.mark.parametrize("call", [
    lambda m: dpbounds.delta_bound_terms(1.0, m),
    lambda m: dpbounds.theorem31(1.0, m),
])
def test_bad_rounds(call, bad):
    with pytest.raises(ValueError, match="rounds"):
        call(bad)
    with pytest.raises(ValueError, match="rounds"):
        call(np.array([100.0, bad]))


@pytest.mark.parametrize("bad", BAD_DELTA)
@pytest.mark.parametrize("call", [
    lambda d: dpbounds.theorem31(1.0, 1000, delta=d),
])
def test_bad_delta(call, bad):
    with pytest.raises(ValueError, match="delta"):
        call(bad)


def test_bad_choices_and_epochs():
    with pytest.raises(ValueError, match="coefficient"):
        dpbounds.delta_bound(1.0, 1000, coefficient="exactly")
    with pytest.raises(ValueError, match="validity_at"):
        dpbounds.rounds_required(1.0, 0.01, validity_at="both")
    with pytest.raises(ValueError, match="on_invalid"):
        dpbounds.delta_bound(0.5, 100, on_invalid="warn")
    for bad in (0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="epochs"):
            dpbounds.rounds_required(1.0, 0.01, epochs=bad)


def test_mismatched_shapes():
    with pytest.raises(ValueError, match=r"sigma\(2,\), rounds\(3,\)"):
        dpbounds.delta_bound([1.0, 2.0], [100, 200, 300])
    with pytest.raises(ValueError, match="shapes"):
        dpbounds.rounds_required([1.0, 2.0], [0.1, 0.2, 0.3])


def test_non_numeric():
    with pytest.raises(ValueError, match="sigma"):
        dpbounds.delta_bound("one", 100)
    with pytest.raises(ValueError, match="rounds"):
        dpbounds.delta_bound(1.0, [100, "x"])


def test_scalar_types_out():
    assert type(dpbounds.delta_bound(1.0, 10**6)) is float
    assert type(dpbounds.delta_bound(np.float64(1.0), np.int64(10**6))) is float
    assert type(dpbounds.rounds_required(1.0, 0.01)) is float
    assert isinstance(dpbounds.delta_bound([1.0], [10**6]), np.ndarray)
    # Python int rounds beyond 2**62 still work through the array path
    assert math.isfinite(dpbounds.delta_bound(1.0, 2**63))


def test_nothing_is_lost_scalar_vs_numpy_scalar():
    assert dpbounds.delta_bound(1.0, 10**6) == dpbounds.delta_bound(np.float32(1.0), np.int32(10**6))


# ---------------------------------------------------------------- the one constraint vocabulary
from dpbounds import _kernels  # noqa: E402
from dpbounds._validation import Constraint, check_args, check_constraint  # noqa: E402

_HARD = [np.nan, -np.inf, -1.0, -0.0, 0.0, 5e-324, 1e-300, 0.5, 1.0 - 2**-53, 1.0, 1.0 + 2**-52, 1.5, 2.0,
         2.5, 3.0, 3.0 - 2**-51, 4.0, 1e15, 2.0**53 + 2, 1e300, np.inf]


@pytest.mark.parametrize("name", ["FINITE_POSITIVE", "OPEN_UNIT", "INTEGER_GE_1", "INTEGER_GE_3"])
def test_fast_path_predicates_agree_with_the_constraint_table(name):
    # the compiled scalar fast paths carry a scalar twin of a few rules; they must agree exactly
    arr = np.array(_HARD)
    expect = Constraint[name].holds(arr)
    got = np.array([_kernels._scalar_holds(name, float(x)) for x in arr])
    np.testing.assert_array_equal(got, expect)


@pytest.mark.parametrize("c", list(Constraint), ids=lambda c: c.name)
def test_every_constraint_rejects_nan_except_any(c):
    held = c.holds(np.array([np.nan]))[0]
    assert held == (c is Constraint.ANY)
    if c is not Constraint.ANY:
        with pytest.raises(dpbounds.DPBoundsError, match=r"^x must be " + re.escape(c.text)):
            check_constraint("x", np.nan, c)


def test_check_args_names_first_bad_argument_and_broadcasts():
    a, b = check_args({"a": Constraint.CLOSED_UNIT, "b": Constraint.FINITE_POSITIVE}, a=[0.1, 0.2], b=[[1.0], [2.0]])
    assert a.shape == b.shape == (2, 2)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^b must be finite and > 0: 1 of 3 elements"):
        check_args({"a": Constraint.CLOSED_UNIT, "b": Constraint.FINITE_POSITIVE}, a=0.5, b=[1.0, -1.0, 2.0])
    with pytest.raises(dpbounds.DPBoundsError, match=r"shapes do not broadcast together: a\(3,\), b\(2,\)"):
        check_args({"a": Constraint.ANY, "b": Constraint.ANY}, a=[1, 2, 3], b=[1, 2])
    assert issubclass(dpbounds.DPBoundsError, ValueError)


def test_scalar_fast_path_and_array_path_give_the_same_error():
    for call in (lambda x: dpbounds.delta_bound(x, 100), lambda x: dpbounds.rounds_required(x, 0.01),
                 lambda x: dpbounds.rounds_closed_form(x, 0.01), lambda x: dpbounds.min_dataset_size(x, 100)):
        with pytest.raises(dpbounds.DPBoundsError) as scalar:
            call(-1.0)
        with pytest.raises(dpbounds.DPBoundsError) as array:
            call(np.array(-1.0))
        assert str(scalar.value) == str(array.value) == "sigma must be finite and > 0, got -1.0"
    with pytest.raises(dpbounds.DPBoundsError, match="rounds must be an integer >= 3, got 3.5"):
        dpbounds.delta_bound(1.0, 3.5)
    with pytest.raises(dpbounds.DPBoundsError, match="rounds must be an integer >= 1, got 2.5"):
        dpbounds.min_dataset_size(1.0, 2.5)
