"""RDPAccountant: continuous optimisation, fixed-orders mode, calibration, validation."""
from __future__ import annotations

import math

import numpy as np
import pytest

import dpbounds.rdp as R
from dpbounds import _ufuncs


def _brute(acc, delta, lo=1.0001, hi=2000.0, n=2001):
    a = np.geomspace(lo, hi, n)
    a = np.concatenate([a, np.arange(2.0, 301.0)])
    f = _ufuncs.rdp_eps_objective_improved if acc.conversion == "improved" else _ufuncs.rdp_eps_objective_classic
    return float(np.nanmin(f(a, acc.rdp(a), delta)))


@pytest.mark.parametrize("conv", ["improved", "classic"])
@pytest.mark.parametrize("mech,count", [
    (R.Gaussian(3.0), 10), (R.PoissonGaussian(1.0, 0.01), 1000), (R.PoissonGaussian(0.8, 0.001, "compat"), 10 ** 5),
    (R.SubsampledGaussianWOR(2.0, 0.01), 5000), (R.SubsampledWOR(R.Laplace(1.0), 0.01), 10 ** 4),
])
def test_get_epsilon_matches_dense_scan(mech, count, conv):
    # the 1-D search must do at least as well as a 2300-point scan (to 1e-9), and not implausibly better
    acc = R.RDPAccountant(conversion=conv).compose(mech, count)
    e = acc.get_epsilon(1e-6)
    ref = _brute(acc, 1e-6)
    assert e <= ref * (1 + 1e-9)
    assert e >= ref * (1 - 1e-3)


def test_gaussian_closed_form():
    # classic conversion of the Gaussian: min_a a/(2s^2) k + log(1/d)/(a-1) has the closed form
    s, k, d = 2.0, 7, 1e-7
    rho = k / (2 * s * s)
    L = math.log(1 / d)
    closed = rho + 2 * math.sqrt(rho * L)
    acc = R.RDPAccountant(conversion="classic").compose(R.Gaussian(s), k)
    e, a = acc.get_epsilon(d, return_order=True)
    assert e == pytest.approx(closed, rel=1e-12)
    assert a == pytest.approx(1 + math.sqrt(L / rho), rel=1e-4)


def test_get_delta_inverse_of_get_epsilon():
    acc = R.RDPAccountant().compose(R.PoissonGaussian(1.0, 0.01), 2000)
    e = acc.get_epsilon(1e-6)
    assert acc.get_delta(e) == pytest.approx(1e-6, rel=1e-4)
    assert acc.get_delta(e * 1.1) < 1e-6 < acc.get_delta(e * 0.9)


def test_fixed_orders_mode():
    acc = R.RDPAccountant(orders=[2, 4, 8]).compose(R.Gaussian(1.0), 1)
    e, a = acc.get_epsilon(1e-5, return_order=True)
    assert a in (2, 4, 8)
    cont = R.RDPAccountant().compose(R.Gaussian(1.0), 1).get_epsilon(1e-5)
    assert cont <= e
    assert len(R.DEFAULT_ORDERS) == 156


@pytest.mark.slow  # ~2 s
def test_calibration_sigma_steps_rate():
    # the noise multiplier has one calibrator, dpbounds.calibrate_noise: certified on both sides
    from dpbounds import calibrate_noise
    eps, delta, steps, q = 2.0, 1e-5, 1000, 0.01
    s = calibrate_noise(eps, delta, dataset_size=10_000, batch_size=100, steps=steps, sampling="poisson",
                        accountant="rdp", rtol=1e-7)
    achieved = R.RDPAccountant().compose(R.PoissonGaussian(s, q), steps).get_epsilon(delta)
    below = R.RDPAccountant().compose(R.PoissonGaussian(s / (1 + 1e-7), q), steps).get_epsilon(delta)
    assert achieved <= eps < below
    assert not hasattr(R.RDPAccountant, "calibrate_sigma")
    k = R.RDPAccountant.max_steps(eps, delta, 1.0, q)
    assert R.RDPAccountant().compose(R.PoissonGaussian(1.0, q), k).get_epsilon(delta) <= eps
    assert R.RDPAccountant().compose(R.PoissonGaussian(1.0, q), k + 1).get_epsilon(delta) > eps
    r = R.RDPAccountant.max_sampling_rate(eps, delta, 1.0, steps)
    assert R.RDPAccountant().compose(R.PoissonGaussian(1.0, r), steps).get_epsilon(delta) <= eps
    assert R.RDPAccountant().compose(R.PoissonGaussian(1.0, r * (1 + 1e-5)), steps).get_epsilon(delta) > eps
    # without replacement: calibrate_noise's noise multiplier is relative to C, the RDP bound's to 2C
    sw = calibrate_noise(eps, delta, dataset_size=10_000, batch_size=100, steps=steps,
                         sampling="without_replacement", accountant="rdp")
    assert R.RDPAccountant().compose(R.SubsampledGaussianWOR(sw / 2, q), steps).get_epsilon(delta) <= eps
    assert R.RDPAccountant().compose(R.SubsampledGaussianWOR(sw / 2 / (1 + 1e-3), q), steps).get_epsilon(delta) > eps


def test_accountant_validation():
    acc = R.RDPAccountant()
    with pytest.raises(ValueError, match="delta"):
        acc.get_epsilon(0.0)
    with pytest.raises(ValueError, match="epsilon"):
        acc.get_delta(-1.0)
    with pytest.raises(ValueError, match="count"):
        acc.compose(R.Gaussian(1.0), -1)
    with pytest.raises(ValueError, match="conversion"):
        R.RDPAccountant(conversion="optimal")
    with pytest.raises(ValueError, match="orders"):
        R.RDPAccountant(orders=[0.5, 2])
    with pytest.raises(ValueError, match="mechanism"):
        acc.compose("gaussian")
    with pytest.raises(ValueError, match="sampling"):
        R.RDPAccountant.max_steps(1.0, 1e-5, 1.0, 0.1, sampling="shuffle")
    assert acc.get_epsilon(1e-5) == 0.0      # empty composition is 0-DP
    assert "Gaussian" in repr(R.RDPAccountant().compose(R.Gaussian(1.0), 3))
