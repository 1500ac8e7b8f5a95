"""Calibration of the noise multiplier, the epochs and the batch size: certified on both sides."""
import math

import pytest

from dpbounds import calibrate_batch_size, calibrate_epochs, calibrate_noise
from dpbounds.calibration import _Setting

N, B = 60000, 256
RTOL = 1e-3


@pytest.mark.parametrize("sampling, accountant, target, epochs", [
    ("random_allocation", "exact", 1.0, 3),
    ("poisson", "exact", 2.0, 10),
    ("poisson", "rdp", 2.0, 10),
    ("without_replacement", "rdp", 4.0, 10),
])
def test_noise_is_certified_on_both_sides(sampling, accountant, target, epochs):
    s = calibrate_noise(target, 1e-5, dataset_size=N, batch_size=B, epochs=epochs,
                        sampling=sampling, accountant=accountant, rtol=RTOL)
    run = _Setting(sampling, accountant, N, B, epochs, None, 2e-3)
    assert run.epsilon(s, 1e-5) <= target                    # re-checked: meets the target
    assert run.epsilon(s / (1 + RTOL), 1e-5) > target        # one step less noise does not


def test_noise_matches_peers_where_they_exist():
    # Poisson, N = 60000, B = 256, 10 epochs (2343 steps), eps = 3, delta = 1e-5:
    # dp-accounting's calibrate_dp_mechanism gives 0.74200 (RDP) and 0.69367 (PLD)
    dpa = pytest.importorskip("dp_accounting", reason="dp-accounting not installed")
    q, T = B / N, int(10 / (B / N))

    def event(s):
        return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), T)

    ref_rdp = dpa.calibrate_dp_mechanism(dpa.rdp.RdpAccountant, event, 3.0, 1e-5)
    ours_rdp = calibrate_noise(3.0, 1e-5, dataset_size=N, batch_size=B, epochs=10, sampling="poisson",
                               accountant="rdp")
    # our RDP conversion is the improved one over real orders: never above dp-accounting's
    assert ours_rdp <= ref_rdp * (1 + 2e-3)
    assert ours_rdp == pytest.approx(ref_rdp, rel=0.01)
    ours_pld = calibrate_noise(3.0, 1e-5, dataset_size=N, batch_size=B, epochs=10, sampling="poisson")
    assert ours_pld == pytest.approx(0.69367, rel=5e-3)


def test_epochs_and_batch_size_are_certified_on_both_sides():
    E = calibrate_epochs(2.0, 1e-5, noise_multiplier=1.0, dataset_size=N, batch_size=B, sampling="poisson",
                         accountant="rdp")
    run = lambda e: _Setting("poisson", "rdp", N, B, e, None, 2e-3).epsilon(1.0, 1e-5)  # noqa: E731
    assert run(E) <= 2.0 < run(E + 1)
    b = calibrate_batch_size(2.0, 1e-5, noise_multiplier=1.0, dataset_size=N, epochs=5, sampling="poisson",
                             accountant="rdp")
    runb = lambda bb: _Setting("poisson", "rdp", N, bb, 5, None, 2e-3).epsilon(1.0, 1e-5)  # noqa: E731
    assert runb(b) <= 2.0 < runb(b + 1)


def test_random_allocation_epochs():
    E = calibrate_epochs(1.0, 1e-5, noise_multiplier=1.5, dataset_size=10000, batch_size=100)
    run = lambda e: _Setting("random_allocation", "exact", 10000, 100, e, None, 2e-3).epsilon(1.5, 1e-5)  # noqa: E731
    assert run(E) <= 1.0 < run(E + 1)


def test_errors_name_the_parameter():
    with pytest.raises(ValueError, match="target_epsilon"):
        calibrate_noise(-1.0, 1e-5, dataset_size=N, batch_size=B, epochs=1)
    with pytest.raises(ValueError, match="target_delta"):
        calibrate_noise(1.0, 2.0, dataset_size=N, batch_size=B, epochs=1)
    with pytest.raises(ValueError, match="exactly one of epochs and steps"):
        calibrate_noise(1.0, 1e-5, dataset_size=N, batch_size=B)
    with pytest.raises(ValueError, match="accountant='rdp'"):
        calibrate_noise(1.0, 1e-5, dataset_size=N, batch_size=B, epochs=1, sampling="without_replacement")
    with pytest.raises(ValueError, match="exact accountant only"):
        calibrate_noise(1.0, 1e-5, dataset_size=N, batch_size=B, epochs=1, accountant="rdp")
    with pytest.raises(ValueError, match="sampling"):
        calibrate_noise(1.0, 1e-5, dataset_size=N, batch_size=B, epochs=1, sampling="shuffle")
    with pytest.raises(ValueError, match="batch_size"):
        calibrate_noise(1.0, 1e-5, dataset_size=N, batch_size=N + 1, epochs=1)
    with pytest.raises(ValueError, match="epochs"):
        calibrate_noise(1.0, 1e-5, dataset_size=N, batch_size=B, epochs=1e308)
    # a fractional epoch count is floor(E M) steps, the partial epoch accounted as such (one rule)
    assert _Setting("random_allocation", "exact", N, B, 1.5, None, 2e-3).steps == (3 * (N // B)) // 2


def test_sigma_guess_starts_near_the_answer():
    # the search starts from the Gaussian-DP asymptotics, never from a tiny sigma
    run = _Setting("poisson", "rdp", N, B, 10, None, 2e-3)
    g = run.sigma_guess(3.0, 1e-5)
    assert 0.5 < g < 1.0 and math.isfinite(g)


@pytest.mark.parametrize("sampling, accountant, rate", [
    ("random_allocation", "exact", 1 / (N // B)),
    ("poisson", "exact", B / N),
    ("poisson", "rdp", B / N),
    ("without_replacement", "rdp", B / N),
])
def test_sample_rate_describes_the_same_run_as_dataset_and_batch_size(sampling, accountant, rate):
    """What Opacus users have (get_noise_multiplier's sample_rate with epochs or steps) is the same run."""
    for epochs, steps in ((10, None), (None, 777)):
        a = _Setting(sampling, accountant, N, B, epochs, steps, 2e-3)
        b = _Setting(sampling, accountant, None, None, epochs, steps, 2e-3, sample_rate=rate)
        assert (a.rate, a.steps) == (b.rate, b.steps)
    if sampling == "random_allocation":
        assert _Setting(sampling, accountant, None, None, 3, None, 2e-3, sample_rate=1 / 234).steps == 3 * 234
    else:  # Opacus' rule, int(epochs / sample_rate)
        assert _Setting(sampling, accountant, None, None, 2.5, None, 2e-3, sample_rate=0.01).steps == int(2.5 / 0.01)


def test_noise_from_sample_rate_is_certified_on_both_sides():
    q, steps = 0.02, 300
    s = calibrate_noise(2.0, 1e-5, sample_rate=q, steps=steps, sampling="poisson", accountant="rdp", rtol=RTOL)
    run = _Setting("poisson", "rdp", None, None, None, steps, 2e-3, sample_rate=q)
    assert run.epsilon(s, 1e-5) <= 2.0 < run.epsilon(s / (1 + RTOL), 1e-5)
    assert s == calibrate_noise(2.0, 1e-5, dataset_size=1000, batch_size=20, steps=steps, sampling="poisson",
                                accountant="rdp", rtol=RTOL)
    E = calibrate_epochs(2.0, 1e-5, noise_multiplier=1.0, sample_rate=B / N, sampling="poisson", accountant="rdp")
    assert E == calibrate_epochs(2.0, 1e-5, noise_multiplier=1.0, dataset_size=N, batch_size=B, sampling="poisson",
                                 accountant="rdp")


def test_sample_rate_errors_name_the_parameter():
    with pytest.raises(ValueError, match="give sample_rate, or dataset_size and batch_size, not both"):
        calibrate_noise(1.0, 1e-5, sample_rate=0.01, dataset_size=N, batch_size=B, epochs=1)
    with pytest.raises(ValueError, match="give dataset_size and batch_size \\(or sample_rate\\)"):
        calibrate_noise(1.0, 1e-5, epochs=1)
    with pytest.raises(ValueError, match="give dataset_size and batch_size"):
        calibrate_noise(1.0, 1e-5, dataset_size=N, epochs=1)
    for bad in (0.0, 1.5, float("nan"), "0.1"):
        with pytest.raises(ValueError, match="sample_rate"):
            calibrate_noise(1.0, 1e-5, sample_rate=bad, epochs=1, sampling="poisson")
    with pytest.raises(ValueError, match="sample_rate = 1/M"):
        calibrate_noise(1.0, 1e-5, sample_rate=0.3, epochs=1)
    with pytest.raises(ValueError, match="sample_rate"):
        calibrate_epochs(1.0, 1e-5, noise_multiplier=1.0, sample_rate=0.3)
