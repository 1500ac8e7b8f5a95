"""PoissonPLD's certified brackets against the peers at fine resolution (slow: minutes per setting).

On 32 DP-SGD settings -- a published-table style sweep of (noise multiplier, sample rate, steps)
at delta = 1e-6, the issue's q = 2e-3, sigma = 0.676, delta = 1e-7 point, and points across
q in [1e-3, 0.05], sigma in [0.8, 3] -- every bracket must be consistent with

* dp-accounting's pessimistic (connect-the-dots, an upper estimate) and optimistic (rounded
  down, a lower estimate) epsilons at value_discretization_interval 1e-5, and
* prv-accountant's [lower, upper] at eps_error = 2e-3 (five times tighter than Opacus' 0.01),

i.e. the true epsilon lies in all three: our lower end is at most both peers' upper ends and our
upper end at least both peers' lower ends.  Our default bracket must also meet its tolerance and
be no wider than prv-accountant's at Opacus' eps_error = 0.01.  (The peers' own bounds are not
certified: dp-accounting drops tails and both round; a disagreement beyond their stated
resolution fails the test either way.)
"""
import math

import pytest

from dpbounds.accountant import PoissonPLD

SETTINGS = [  # (sigma, q, steps, delta)
    # published-table style DP-SGD runs at delta = 1e-6 (MNIST B=256/60000, CIFAR-10 B=4096/50000,
    # ImageNet B=16384/1.28M, and common grid points)
    (1.1, 256 / 60000, 2344, 1e-6), (1.1, 256 / 60000, 7031, 1e-6), (0.7, 256 / 60000, 2344, 1e-6),
    (1.5, 256 / 60000, 9375, 1e-6), (4.0, 256 / 60000, 14062, 1e-6), (3.0, 4096 / 50000, 875, 1e-6),
    (3.0, 4096 / 50000, 1750, 1e-6), (2.5, 16384 / 1281167, 2000, 1e-6), (1.0, 0.01, 1000, 1e-6),
    (1.0, 0.01, 10000, 1e-6), (2.0, 0.01, 10000, 1e-6), (0.9, 0.02, 2000, 1e-6),
    (1.3, 0.05, 500, 1e-6), (2.0, 0.05, 2000, 1e-6), (3.0, 0.05, 5000, 1e-6), (5.0, 0.1, 1000, 1e-6),
    # the point
    (0.676, 2e-3, 10000, 1e-7),
    # across q in [1e-3, 0.05], sigma in [0.8, 3], delta = 1e-5
    (0.8, 1e-3, 10000, 1e-5), (1.0, 1e-3, 20000, 1e-5), (3.0, 1e-3, 20000, 1e-5),
    (0.8, 4e-3, 1000, 1e-5), (1.0, 4e-3, 5000, 1e-5), (1.5, 4e-3, 20000, 1e-5), (3.0, 4e-3, 20000, 1e-5),
    (0.8, 0.01, 500, 1e-5), (1.0, 0.01, 10000, 1e-5), (1.5, 0.01, 3000, 1e-5), (3.0, 0.01, 20000, 1e-5),
    (0.8, 0.05, 100, 1e-5), (1.0, 0.05, 1000, 1e-5), (1.5, 0.05, 1000, 1e-5), (3.0, 0.05, 3000, 1e-5),
]


def _dp_accounting(sigma, q, steps, delta, interval):
    pld_mod = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution",
                                  reason="dp-accounting (peer) not installed")
    out = []
    for pessimistic in (False, True):
        pld = pld_mod.from_gaussian_mechanism(sigma, sampling_prob=q, pessimistic_estimate=pessimistic,
                                              use_connect_dots=pessimistic,
                                              value_discretization_interval=interval)
        out.append(pld.self_compose(steps).get_epsilon_for_delta(delta))
    return out[0], out[1]


def _prv(sigma, q, steps, delta, eps_error):
    prv = pytest.importorskip("prv_accountant", reason="prv-accountant (peer) not installed")
    acc = prv.PRVAccountant(prvs=[prv.PoissonSubsampledGaussianMechanism(sampling_probability=q,
                                                                         noise_multiplier=sigma)],
                            max_self_compositions=[steps], eps_error=eps_error, delta_error=delta / 1000)
    lo, _, hi = acc.compute_epsilon(delta, [steps])
    return lo, hi


def test_settings_count():
    assert len(SETTINGS) >= 30


@pytest.mark.slow
@pytest.mark.peers
@pytest.mark.parametrize("sigma, q, steps, delta", SETTINGS)
def test_bracket_contains_the_fine_peers(sigma, q, steps, delta):
    br = PoissonPLD(sigma, q, steps).epsilon(delta)
    lo, hi = br
    assert 0 < lo <= hi < math.inf and br.tolerance_met, (tuple(br), br.note)
    opt, pess = _dp_accounting(sigma, q, steps, delta, 1e-5)
    p_lo, p_hi = _prv(sigma, q, steps, delta, 2e-3)
    # the true epsilon is in every interval: they must overlap
    assert lo <= pess and opt <= hi, ("dp-accounting 1e-5", tuple(br), (opt, pess))
    assert lo <= p_hi and p_lo <= hi, ("prv 2e-3", tuple(br), (p_lo, p_hi))
    # and the default bracket is no wider than prv-accountant's at Opacus' eps_error = 0.01
    o_lo, o_hi = _prv(sigma, q, steps, delta, 0.01)
    assert hi - lo <= o_hi - o_lo, (tuple(br), (o_lo, o_hi))
