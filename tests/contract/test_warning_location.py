"""Every warning the package issues points at the caller's line, not at a line inside dpbounds.

One case per kind of warning the package emits: PrecisionWarning from the accountants (direct,
through the Opacus-style history, Poisson), from the trade-off envelope and from a sweep;
numpy's RuntimeWarning for a genuine overflow,
re-issued at the caller's line.  Each asserts the warning's filename is this file and its line
the line of the call.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import dpbounds
import dpbounds.outer
import dpbounds.rdp as rdp
from dpbounds import PoissonAccountant, PrecisionWarning, RandomAllocationAccountant, RandomAllocationPLD
from dpbounds._errors import numpy_warnings_at_caller, warn


def _caught(fn, category):
    """Run fn; return (its warnings of ``category``, the line of the call inside fn)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [w for w in caught if issubclass(w.category, category)]


def _line_of(fn):
    # the lambdas below are one line each: that line is the user's call
    return inspect.getsourcelines(fn)[1]


def _history_run():
    acc = RandomAllocationAccountant(tolerance=1e-6, max_lattice=2 ** 12)
    for _ in range(1000):
        acc.step(noise_multiplier=1.0, sample_rate=0.01)
    return acc.get_epsilon(1e-5)   # the line the warning must name


CASES = {
    # an exact accountant whose tolerance needs a larger lattice than allowed
    "accountant": (PrecisionWarning, lambda: RandomAllocationAccountant(1.0, 100, 10, tolerance=1e-6, max_lattice=2 ** 12).get_epsilon(1e-5)),  # noqa: E501
    "pld_tradeoff_lower": (PrecisionWarning, lambda: RandomAllocationPLD(1.0, 100, 3).tradeoff_lower([0.1, 0.5], tol=1e-12)),  # noqa: E501
    "sweep": (PrecisionWarning, lambda: dpbounds.sweep("epsilon_random_allocation", sigma=[1.0], rounds=[100], epochs=[1], delta=1e-5, tolerance=1e-12)),  # noqa: E501
    "overflow_outer": (RuntimeWarning, lambda: dpbounds.outer.min_dataset_size_outer(np.array([1e308]), np.array([1e308]))),  # noqa: E501
    "overflow_rdp": (RuntimeWarning, lambda: rdp.laplace(2.0, 5e-324)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_warning_points_at_the_callers_line(name):
    category, fn = CASES[name]
    caught = _caught(fn, category)
    assert caught, f"{name}: no {category.__name__} was issued"
    for w in caught:
        assert w.filename == __file__, (name, w.filename, w.lineno, str(w.message))
        assert w.lineno == _line_of(fn), (name, w.lineno, str(w.message))


def test_history_accountant_warning_points_at_the_callers_line():
    # the Opacus-style protocol goes through the history module before the bracket is made
    caught = _caught(_history_run, PrecisionWarning)
    assert caught
    last_line = _line_of(_history_run) + inspect.getsource(_history_run).count("\n") - 1
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, last_line)] * len(caught)


@pytest.mark.slow
def test_poisson_accountant_warning_points_at_the_callers_line():
    fn = lambda: PoissonAccountant(1.0, 0.01, 1000, tolerance=1e-7).get_epsilon(1e-5)  # noqa: E731
    caught = _caught(fn, PrecisionWarning)
    assert caught and all((w.filename, w.lineno) == (__file__, _line_of(fn)) for w in caught)


def test_warning_filter_by_module_matches_the_caller():
    # filterwarnings(module=...) matches the module the warning is attributed to: the caller's
    category, fn = CASES["accountant"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=PrecisionWarning, module=__name__)
        fn()
    assert not [w for w in caught if issubclass(w.category, PrecisionWarning)]


def test_numpy_policy_of_the_caller_is_kept():
    # np.errstate(over="raise") still raises; "ignore" stays silent; the caller's own callback wins
    with pytest.raises(FloatingPointError), np.errstate(over="raise"):
        rdp.laplace(2.0, 5e-324)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="ignore"):
            assert rdp.laplace(2.0, 5e-324) == np.inf
    seen = []
    with np.errstate(over="call", call=lambda kind, flag: seen.append(kind)):
        rdp.laplace(2.0, 5e-324)
    assert seen == ["overflow"]
    with numpy_warnings_at_caller("x"):  # no flag raised: nothing issued
        assert np.add(1.0, 1.0) == 2.0


def test_warn_called_outside_the_package_names_that_line():
    # the first frame outside the package is the one that called warn() itself
    def helper():
        warn("here", UserWarning); return inspect.currentframe().f_lineno  # noqa: E702

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = helper()
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]
