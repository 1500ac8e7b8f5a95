"""Memory caps and unusable orders: refused before any work, named, documented.

Every query whose allocation grows with a user number has a documented cap; above it the call
raises DPBoundsError naming the parameter before allocating (checked here by the error and by
its speed: the capped work would take seconds to hours and gigabytes).  The RDP accountant
skips orders where the composed curve is NaN (documented), says how many in the bracket's
``method``, keeps the minimum over the usable orders exactly, and refuses when none is usable.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
import pytest

import dpbounds
from dpbounds import composition, rdp
from dpbounds.accountant._params import MAX_LATTICE_CAP

QUICK = 0.5  # seconds: a refusal does no work (the refused calls would run for minutes or more)


def _refused(call: Callable[[], Any], name: str) -> str:
    t0 = time.perf_counter()
    with pytest.raises(dpbounds.DPBoundsError, match=name) as info:
        call()
    assert time.perf_counter() - t0 < QUICK
    return str(info.value)


@pytest.mark.parametrize("make", [
    lambda n: dpbounds.RandomAllocationAccountant(1.0, 100, 10, max_lattice=n),
    lambda n: dpbounds.RandomAllocationPLD(1.0, 100, 10, max_lattice=n),
    lambda n: dpbounds.PoissonAccountant(noise_multiplier=1.0, sample_rate=0.01, steps=10, max_lattice=n),
    lambda n: dpbounds.accountant._poisson_pld.PoissonPLD(1.0, 0.01, 10, max_lattice=n),
])
def test_max_lattice_cap(make: Callable[[int], Any]) -> None:
    assert make(MAX_LATTICE_CAP).max_lattice == MAX_LATTICE_CAP  # the cap itself is accepted
    for n in (MAX_LATTICE_CAP + 1, 10 ** 12):
        msg = _refused(lambda: make(n), "max_lattice")
        assert "2**26" in msg


def test_composition_window_cap() -> None:
    # k = 1e15 at eps -> 0 needs ~3e8 binomial terms per array (GBs); refused at once, naming k
    for k in (10 ** 12, 10 ** 15):
        msg = _refused(lambda: composition.optimal(0.001, 0.0, k, 1e-5), "k=")
        assert f"{composition.WINDOW_MAX:,}" in msg
        _refused(lambda: composition.optimal_delta(0.001, 0.0, k, 1.0), "k=")
    # below the cap it still answers (and matches the delta it inverts)
    e = composition.optimal(0.01, 0.0, 10 ** 6, 1e-5)
    assert composition.optimal_delta(0.01, 0.0, 10 ** 6, e) <= 1e-5 * (1 + 1e-9)


def test_rdp_orders_cap() -> None:
    from dpbounds.rdp._accountant import ORDERS_MAX
    _refused(lambda: rdp.RDPAccountant(orders=np.full(ORDERS_MAX + 1, 2.0)), "orders")


# ---------------------------------------------------------------- unusable (NaN) RDP orders
# sigma = 0.005: fractional orders above ~25 need more than 1e6 quadrature nodes, where the
# Poisson-subsampled Gaussian's curve is NaN (rdp.poisson_gaussian refuses them, naming alpha)
_MECH = rdp.PoissonGaussian(0.005, 0.01)


def test_nan_orders_are_unusable_here() -> None:
    # the premise of the tests below, from the public function: those orders cannot be evaluated
    with pytest.raises(dpbounds.DPBoundsError, match="alpha"):
        rdp.poisson_gaussian(30.5, 0.005, 0.01)
    assert np.isfinite(rdp.poisson_gaussian(2.0, 0.005, 0.01))


def test_fixed_orders_skip_nan_exactly() -> None:
    with_nan = rdp.RDPAccountant(orders=[2.0, 30.5, 3.0, 40.5]).compose(_MECH, 10)
    usable = rdp.RDPAccountant(orders=[2.0, 3.0]).compose(_MECH, 10)
    # the minimum over the usable orders, bit for bit: not a min polluted by NaN
    assert with_nan.get_epsilon(1e-5) == usable.get_epsilon(1e-5)
    assert with_nan.get_delta(50.0) == usable.get_delta(50.0)
    # an independent conversion at those orders (the functional API) gives the same bound
    r = 10 * np.asarray(rdp.poisson_gaussian(np.array([2.0, 3.0]), 0.005, 0.01))
    assert with_nan.get_epsilon(1e-5) == pytest.approx(float(rdp.epsilon(r, [2.0, 3.0], 1e-5)), rel=1e-12)
    # and it says so
    assert "2 unusable (NaN) order evaluations skipped" in with_nan.get_epsilon_bracket(1e-5).method
    assert "skipped" in with_nan.get_delta_bracket(50.0).method
    assert "skipped" not in usable.get_epsilon_bracket(1e-5).method


def test_no_usable_order_raises() -> None:
    acc = rdp.RDPAccountant(orders=[30.5, 40.5]).compose(_MECH, 10)
    _refused(lambda: acc.get_epsilon(1e-5), "no usable order")
    _refused(lambda: acc.get_delta(1.0), "no usable order")


def test_continuous_search_skips_and_says_so() -> None:
    acc = rdp.RDPAccountant().compose(_MECH, 10)
    b = acc.get_epsilon_bracket(1e-5)
    assert "unusable (NaN) order evaluations skipped" in b.method
    # a valid bound: never below the best of the usable integer orders it scans (2..12), and
    # not above it either (the search only adds orders)
    ints = rdp.RDPAccountant(orders=np.arange(2.0, 13.0)).compose(_MECH, 10).get_epsilon(1e-5)
    assert np.isfinite(b.upper) and b.upper <= ints


def test_custom_mechanism_nan_orders() -> None:
    # a user curve undefined above alpha = 5 (NaN there): the orders up to 5 decide
    mech = rdp.Custom(lambda a: np.where(np.asarray(a) > 5, np.nan, np.asarray(a) / 2.0))
    acc = rdp.RDPAccountant(orders=[2.0, 4.0, 8.0, 16.0]).compose(mech)
    ref = rdp.RDPAccountant(orders=[2.0, 4.0]).compose(rdp.Gaussian(1.0))  # alpha / 2 = Gaussian, sigma 1
    assert acc.get_epsilon(1e-5) == ref.get_epsilon(1e-5)
    assert "2 unusable" in acc.get_epsilon_bracket(1e-5).method
