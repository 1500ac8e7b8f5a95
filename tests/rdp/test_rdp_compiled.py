"""The compiled RDP paths: the outward conversions' new branches (mpmath), the C library's
elementary functions within the bound the conversions assume, the compiled table interpolation
and the orders evaluated beyond the table (the same doubles as the general path), the work
limit, and the calibrator's order iteration (certified on both sides).
"""
from __future__ import annotations

import math
import time

import mpmath as mp
import numpy as np
import pytest

import dpbounds
from dpbounds import _ufuncs as U
from dpbounds import calibrate_noise
from dpbounds import rdp as R
from dpbounds.rdp import _mechanisms, _outward

DBL_MAX = float(np.finfo(np.float64).max)
ULP = 2.0 ** -52


def _logdelta_exact(a: float, r: float, e: float, improved: bool) -> mp.mpf:
    with mp.workdps(60):
        a_, r_, e_ = mp.mpf(a), mp.mpf(r), mp.mpf(e)
        if improved:
            ld = (a_ - 1) * (r_ - e_ + mp.log(1 - 1 / a_)) - mp.log(a_)
            # the total-variation bound sqrt(1 - e^{-rdp}): 0 at rdp = 0
            ld = min(ld, mp.log(-mp.expm1(-r_)) / 2) if r_ > 0 else -mp.inf
        else:
            ld = (a_ - 1) * (r_ - e_)
        return min(ld, mp.mpf(0))


# (a - 1)(rdp - eps) beyond -DBL_MAX: the log delta answers -2^1023 (never below the exact value,
# which is below -DBL_MAX (1 - 4u)); delta rounds up to the smallest subnormal
BEYOND = [(1e300, 0.0, 1e10), (2.0 ** 1000, 1e-10, 1e300), (1e200, 3.0, 1e150), (1.7e308, 0.5, 1.7e308)]


@pytest.mark.parametrize("conv", ["classic", "improved"])
@pytest.mark.parametrize("a, r, e", BEYOND)
def test_log_delta_beyond_the_doubles_is_never_below_the_exact_value(a: float, r: float, e: float, conv: str) -> None:
    with np.errstate(all="raise", under="ignore"):
        ld = float(getattr(U, f"_rdp_logdelta_up_{conv}")(a, r, e))
        d = float(getattr(U, f"_rdp_delta_up_{conv}")(a, r, e))
    exact = _logdelta_exact(a, r, e, conv == "improved")
    assert mp.mpf(ld) >= exact
    with mp.workdps(60):
        assert mp.mpf(d) >= mp.exp(exact)
    if exact == -mp.inf:
        assert ld == -math.inf and d == 0.0
    elif exact < -DBL_MAX:
        assert ld == -2.0 ** 1023 or (conv == "improved" and ld > -2.0 ** 1023)
        assert d == 5e-324 or conv == "improved"


@pytest.mark.parametrize("conv", ["classic", "improved"])
def test_product_at_the_edge_of_the_doubles(conv: str) -> None:
    # (a - 1) t within a few ulps of DBL_MAX, on both sides of the rounding to inf: the overflow is
    # decided without forming the product, and every answer is >= the exact value
    am1 = 2.0 ** 600
    for t in (DBL_MAX / am1 * (1 - 2.0 ** -50), DBL_MAX / am1, np.nextafter(DBL_MAX / am1, np.inf),
              DBL_MAX / am1 * (1 + 2.0 ** -50)):
        for r, e in ((0.0, t), (t, 0.0)):
            with np.errstate(all="raise", under="ignore"):
                ld = float(getattr(U, f"_rdp_logdelta_up_{conv}")(am1 + 1.0, r, e))
            assert mp.mpf(ld) >= _logdelta_exact(am1 + 1.0, r, e, conv == "improved")
            assert ld <= 0.0


@pytest.mark.parametrize("conv", ["classic", "improved"])
def test_epsilon_next_to_dbl_max(conv: str) -> None:
    # rdp + term beyond the doubles answers inf quietly, just below it the next double up
    f = getattr(U, f"_rdp_eps_up_{conv}")
    for r in (DBL_MAX, np.nextafter(DBL_MAX, 0.0), 2.0 ** 1023, 0.9 * DBL_MAX):
        with np.errstate(all="raise", under="ignore"):
            e = float(f(3.0, r, 1e-5))
        with mp.workprec(1200):              # DBL_MAX + a few: 1024 bits and more
            a_ = mp.mpf(3)
            term = (-mp.log(mp.mpf(1e-5)) / (a_ - 1) if conv == "classic"
                    else mp.log(1 - 1 / a_) - (mp.log(mp.mpf(1e-5)) + mp.log(a_)) / (a_ - 1))
            exact = mp.mpf(r) + term
        assert mp.mpf(e) >= exact if math.isfinite(e) else exact > DBL_MAX
        if math.isfinite(e):
            assert (mp.mpf(e) - exact) <= 8 * ULP * abs(exact)
    assert float(f(3.0, DBL_MAX, 1e-5)) == math.inf    # DBL_MAX + a positive term is beyond the doubles


def test_exp_up_near_overflow() -> None:
    xs = np.array([709.0, 709.78, 709.782712893384, np.nextafter(709.782712893384, np.inf), 710.0, 1e300, np.inf])
    with np.errstate(all="raise", under="ignore"):
        got = _outward.exp_up(xs)
    with mp.workdps(50):
        for x, y in zip(xs, got):
            ex = mp.exp(mp.mpf(float(x))) if math.isfinite(x) else mp.inf
            if math.isfinite(y):
                assert mp.mpf(float(y)) >= ex and (mp.mpf(float(y)) - ex) <= 8 * ULP * ex
            else:
                assert ex > DBL_MAX


def test_c_library_elementary_functions_within_the_assumed_bound() -> None:
    # the compiled conversions call the C library's log, log1p, expm1 and exp, the ones Python's
    # math module calls: measured against mpmath over every magnitude, within _F (2 ulp)
    rng = np.random.default_rng(11)
    x = 10.0 ** rng.uniform(-300, 300, 3000)
    cases = [(math.log, mp.log, x), (math.log1p, mp.log1p, x), (math.log1p, mp.log1p, -rng.uniform(0, 1, 3000)),
             (math.expm1, mp.expm1, rng.uniform(-700, 700, 3000)), (math.expm1, mp.expm1, 10.0 ** rng.uniform(-300, 0, 3000)),
             (math.exp, mp.exp, rng.uniform(-700, 700, 3000))]
    worst = 0.0
    with mp.workdps(40):
        for f, g, xs in cases:
            for xi in xs:
                ref = g(mp.mpf(float(xi)))
                if ref != 0 and abs(ref) >= 2.0 ** -1022:
                    worst = max(worst, float(abs((mp.mpf(f(float(xi))) - ref) / ref)))
    assert worst <= _outward._F, worst / ULP


def _slow(m: R.Mechanism, a: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    """m.rdp(a) through the general numpy path (the compiled pass switched off)."""
    with monkeypatch.context() as mctx:
        mctx.setattr(type(m), "_fast_base", lambda self: None)
        return np.asarray(m.rdp(a))


@pytest.mark.parametrize("bound", ["improved", "theorem9"])
def test_table_interp_is_the_general_path(bound: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    a = np.concatenate([rng.uniform(1.0, 60.0, 500), np.arange(1.0, 61.0), [1.0, 2.0, 0.5, np.inf, -np.inf, np.nan]])
    for sigma, gamma in ((0.7, 0.01), (5.0, 1e-3), (30.0, 0.3)):
        m = R.SubsampledGaussianWOR(sigma, gamma, bound)
        m.rdp(np.array([64.0]))                       # build the table past every order asked
        fast = np.asarray(m.rdp(a))
        ref = _slow(m, a, monkeypatch)
        assert np.array_equal(fast, ref, equal_nan=True)


@pytest.mark.parametrize("bound", ["improved", "theorem9"])
def test_orders_far_beyond_the_table_are_the_tables_values(bound: str) -> None:
    # dp-accounting's order list up to 1024 evaluates 128 .. 1024 alone: the whole table's doubles
    orders = np.array(R.DEFAULT_ORDERS)
    m = R.SubsampledGaussianWOR(2.5, 0.01, bound)
    far = np.asarray(m.rdp(orders))
    assert m._table.shape[0] < 200                    # the table did not grow to 1024
    whole = R.SubsampledGaussianWOR(2.5, 0.01, bound)
    whole._table = whole._compute(1030)
    assert np.array_equal(far, np.asarray(whole.rdp(orders)))


def test_fresh_without_replacement_curve_at_orders_up_to_2() -> None:
    # a fresh object answered NaN at orders in [1, 2] (its table was a NaN placeholder)
    m = R.SubsampledGaussianWOR(5.0, 0.01)
    first = float(m.rdp(np.array([1.5]))[0])
    assert math.isfinite(first) and first > 0
    m.rdp(np.array([3.0, 40.0]))
    assert float(m.rdp(np.array([1.5]))[0]) == first == float(R.subsampled_gaussian_wor(2.0, 5.0, 0.01))
    assert R.RDPAccountant(orders=[1.5]).compose(R.SubsampledGaussianWOR(5.0, 0.01), 10).get_epsilon(1e-5) > 0


def test_work_limit_refuses_a_million_fractional_orders_at_once() -> None:
    orders = np.linspace(1.01, 1000.0, 10 ** 6)
    t = time.perf_counter()
    with pytest.raises(dpbounds.DPBoundsError, match=r"^orders must ask for at most 4e\+08 units of work"):
        R.RDPAccountant(orders=orders).compose(R.PoissonGaussian(1.0, 0.01), 1000).get_epsilon(1e-5)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^alpha must ask for at most"):
        R.poisson_gaussian(orders, 1.0, 0.01)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^orders must ask for at most"):
        R.RDPAccountant(orders=np.arange(2.0, 10 ** 6 + 2.0)).compose(R.SubsampledGaussianWOR(3.0, 0.01), 10).get_epsilon(1e-5)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^alpha must ask for at most"):
        R.subsampled_gaussian_wor(np.arange(2.0, 10 ** 5), 3.0, 0.01)
    assert time.perf_counter() - t < 10.0              # refused before the work (it took minutes)
    # ordinary requests are far below the limit
    assert _mechanisms.PoissonGaussian(1.0, 0.01).work(np.array(R.DEFAULT_ORDERS)) < 1e-3 * _mechanisms.WORK_MAX


CALIB = [("poisson", 3.0, 1e-5, 60000, 256, 10.0), ("poisson", 0.5, 1e-6, 50000, 500, 3.0),
         ("poisson", 8.0, 1e-5, 1000, 100, 30.0), ("without_replacement", 2.0, 1e-5, 20000, 200, 5.0)]


@pytest.mark.parametrize("rtol", [1e-3, 1e-6])
@pytest.mark.parametrize("sampling, eps, delta, n, b, epochs", CALIB)
def test_rdp_calibration_is_certified_on_both_sides(sampling: str, eps: float, delta: float, n: int, b: int,
                                                    epochs: float, rtol: float) -> None:
    s = calibrate_noise(eps, delta, dataset_size=n, batch_size=b, epochs=epochs, sampling=sampling,
                        accountant="rdp", rtol=rtol)
    q, steps = b / n, int(epochs / (b / n))

    def eps_at(x: float) -> float:
        mech = R.PoissonGaussian(x, q) if sampling == "poisson" else R.SubsampledGaussianWOR(x / 2, q)
        return float(R.RDPAccountant().compose(mech, steps).get_epsilon(delta))

    assert eps_at(s) <= eps < eps_at(s / (1 + rtol))
