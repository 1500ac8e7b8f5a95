"""Every raw ufunc is NaN outside the domain its declaration states, for every argument.

The declaration table (``dpbounds._ufunc_table``) gives each argument a
:class:`~dpbounds._validation.Constraint`; the validated API raises for a value that breaks
it, and the raw ufunc must return NaN there (and set the BAD_INPUT status bit where it has a
status output) -- never a valid-looking number such as ``min_dataset_size`` at 1.5 rounds.
The walk below takes each ufunc x each argument x every probe value that argument's own
predicate rejects, with the other arguments at the ufunc's declared valid point, so a ufunc
added to the table is covered without touching this file.
"""
import math
import warnings

import numpy as np
import pytest
from ufunc_generator import GEN

from dpbounds import _ufunc_table, _ufuncs
from dpbounds._errors import STATUS_BITS
from dpbounds._ufunc_table import UFUNCS
from dpbounds._validation import Constraint

BAD_INPUT = next(s.bit for s in STATUS_BITS if s.name == "BAD_INPUT")

# Probe values: each argument is tried at those its constraint rejects (by the constraint's own
# numpy predicate, so the set follows the declaration).  Non-integers just above an integer
# bound, the largest non-integer doubles (2**52 - 0.5; from 2**52 on every double is an
# integer) and beyond, signed
# zeros, subnormals, the ends of the double range, infinities and NaN.
PROBES = np.array([
    np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 1e-300, 0.25, 0.5, 1 - 2**-53, 1.0,
    1 + 2**-52, 1.5, 2.0, 2.5, 2.999, 3.0, 3.5, 1e4, 1e4 + 1, 1e6 + 0.5, 2.0**52 - 0.5, 2.0**52, 2.0**63, 1e300,
    np.finfo(np.float64).max, -0.5, -1.0, -3.0, -1e300,
])

CONSTRAINED = [(u, k) for u in UFUNCS for k, a in enumerate(u.args) if a.constraint is not Constraint.ANY]


def _outputs(result):
    return result if isinstance(result, tuple) else (result,)


def _assert_rejected(u, outs, where, what):
    for j, (o, t) in enumerate(zip(outs, u.outputs)):
        o = o[where]
        if t == "double":
            assert np.isnan(o).all(), f"{u.name} output {j} finite {what}: {o}"
        else:
            assert (o & BAD_INPUT).all(), f"{u.name} status output {j} lacks BAD_INPUT {what}: {o}"


def test_every_constraint_of_the_table_is_exercised():
    # the walk below is only as good as the probes: each constraint in use rejects some of them
    # and accepts some (the valid points are accepted by construction, checked next)
    for c in {u.args[k].constraint for u, k in CONSTRAINED}:
        held = c.holds(PROBES)
        assert held.any() and not held.all(), c


@pytest.mark.parametrize("u", UFUNCS, ids=lambda u: u.name)
def test_the_valid_point_is_valid(u):
    # inside the declared domain, and the ufunc answers there: every floating output finite,
    # every status output 0 ("no problem"), silently (no warning, no IEEE flag but underflow,
    # which numpy ignores by default)
    for a, x in zip(u.args, u.point):
        assert a.constraint.holds(np.array(x)), (u.name, a.name, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise", under="ignore"):
            outs = _outputs(getattr(_ufuncs, u.name)(*u.point))
    for o, t in zip(outs, u.outputs):
        if t == "double":
            assert np.isfinite(o), (u.name, u.point, o)
        else:
            assert o == 0, (u.name, u.point, o)


@pytest.mark.parametrize("u,k", CONSTRAINED, ids=[f"{u.name}-{u.args[k].name}" for u, k in CONSTRAINED])
def test_nan_outside_the_declared_domain(u, k):
    arg = u.args[k]
    bad = PROBES[~arg.constraint.holds(PROBES)]
    f = getattr(_ufuncs, u.name)
    at_point = _outputs(f(*u.point))
    # each bad value alone (0-d) and interleaved with the valid point in one array, so that the
    # loops that treat elements in pairs or blocks (the Theorem 3.1 loop) see bad and good
    # neighbours; the good elements keep their value at the point, bit for bit
    for x in bad:
        args = list(u.point)
        args[k] = x
        _assert_rejected(u, [np.asarray(o) for o in _outputs(f(*args))], (), f"at {arg.name}={x!r}")
    column = np.empty(2 * bad.size + 1)
    column[0::2] = u.point[k]
    column[1::2] = bad
    args = [np.full(column.shape, p) for p in u.point]
    args[k] = column
    outs = _outputs(f(*args))
    _assert_rejected(u, outs, np.s_[1::2], f"at {arg.name} in {bad.tolist()} (array)")
    for o, ref in zip(outs, at_point):
        np.testing.assert_array_equal(o[0::2], ref)


def _python_test(expr):
    """The generator's C domain test of a constraint as a Python predicate of one float.

    The generated Cython evaluates the same expression (``and``/``or``/``not`` and C99's
    quiet comparisons), so this checks the text the loops are compiled from.
    """
    env = {
        "isgreater": lambda a, b: a > b, "isgreaterequal": lambda a, b: a >= b,
        "isless": lambda a, b: a < b, "islessequal": lambda a, b: a <= b,
        "isnan": math.isnan, "INFINITY": math.inf,
        "_trunc": lambda v: float(int(v)),  # C's (long long) conversion, reached below 2**52 only
        **_ufunc_table.DEFINED_HERE,        # the limits csrc/dpb_domain.h defines (DPB_CLT_SIGMA_MIN)
    }
    code = expr.format(x="x").replace("<double><long long>x", "_trunc(x)")
    return lambda x: bool(eval(code, dict(env, x=x)))  # noqa: S307 -- our own table


@pytest.mark.parametrize("c", list(Constraint), ids=lambda c: c.name)
def test_generated_domain_test_is_the_constraint(c):
    # every constraint has a C test in the generator, and it accepts exactly what the
    # constraint's numpy predicate (the validated API's check) accepts
    expr = GEN._C_TESTS[c.name]
    held = c.holds(PROBES)
    if expr is None:
        assert held.all()
        return
    pred = _python_test(expr)
    assert [pred(float(x)) for x in PROBES] == held.tolist()


def test_paired_loop_domain_is_declared():
    # the Theorem 3.1 ufuncs run a C loop the generator does not write: it refuses a table whose
    # declared domain differs from what that loop enforces
    for u in UFUNCS:
        if u.loop == "t31":
            assert tuple(a.constraint.name for a in u.args) == GEN._T31_DOMAIN[u.c_function]


def test_theorem31_status_reports_non_integer_rounds_as_bad_input():
    # theorem31_status declares rounds ANY (it reports, never refuses): a non-integer M must be
    # reported as a bad argument, not as a point where the theorem applies
    from dpbounds import _ufuncs as U

    for v in ("exact", "simplified"):
        st = getattr(U, f"theorem31_status_{v}")(1.0, np.array([1e6, 1e6 + 0.5, 2.0**52 - 0.5]), np.nan)
        assert st.tolist() == [0, 1, 1]
        assert np.isnan(getattr(U, f"delta_bound_{v}")(1.0, 1e6 + 0.5))


def test_delta_min_is_nan_below_three_rounds():
    # delta_min declares rounds ANY (no validity check) and documents NaN for M < 3: never a number
    for v in ("exact", "simplified"):
        f = getattr(_ufuncs, f"delta_min_{v}")
        assert np.isnan(f(1.0, np.array([2.0, 2.5, 1.0, 0.0, -1.0]))).all()
        assert np.isfinite(f(1.0, 3.0))
