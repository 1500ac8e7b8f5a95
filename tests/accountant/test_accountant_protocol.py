"""One protocol for the three accountants (Opacus conventions), one parametrised suite."""
import json
import warnings

import pytest

from dpbounds import PoissonAccountant, PrecisionWarning, PrivacyAccountant, PrivacyBracket, RandomAllocationAccountant
from dpbounds.rdp import RDPAccountant

M = 100
Q = 1.0 / M  # random allocation takes sample_rate = 1/M; the others any rate

FACTORIES = {
    "random_allocation": lambda: RandomAllocationAccountant(),
    "poisson": lambda: PoissonAccountant(),
    "rdp": lambda: RDPAccountant(),
}


def _run(acc, n, sigma=1.0, q=Q):
    for _ in range(n):
        acc.step(noise_multiplier=sigma, sample_rate=q)
    return acc


@pytest.fixture(params=sorted(FACTORIES))
def make(request):
    return FACTORIES[request.param]


def test_is_a_privacy_accountant(make):
    assert isinstance(make(), PrivacyAccountant)


def test_step_history_len_and_grouping(make):
    acc = _run(make(), 150)
    _run(acc, 50, sigma=2.0)
    _run(acc, 10)
    assert len(acc) == 210
    assert acc.history == [(1.0, Q, 150), (2.0, Q, 50), (1.0, Q, 10)]
    with pytest.raises(TypeError):
        acc.step(1.0, Q)  # keyword-only: no positional-order trap
    with pytest.raises(ValueError, match="noise_multiplier"):
        acc.step(noise_multiplier=-1.0, sample_rate=Q)
    with pytest.raises(ValueError, match="sample_rate"):
        acc.step(noise_multiplier=1.0, sample_rate=1.5)
    assert len(acc) == 210  # a refused step records nothing


def test_get_epsilon_is_a_float_and_the_upper_end(make):
    acc = _run(make(), 2 * M)
    eps = acc.get_epsilon(1e-5)
    assert isinstance(eps, float) and 0 < eps < 3
    assert f"{eps:.2f}" and eps < 3.0  # the two things users do with it
    br = acc.get_epsilon_bracket(1e-5)
    assert isinstance(br, PrivacyBracket) and br.quantity == "epsilon"
    assert br.lower <= br.upper == eps
    d = acc.get_delta(eps)
    dbr = acc.get_delta_bracket(eps)
    assert isinstance(d, float) and dbr.lower <= d == dbr.upper <= 1.0
    # consistent: the true delta at the certified eps is <= 1e-5, so no delta bracket may lie above
    # it; the delta query's own lattice may be coarser (its upper end within its tolerance)
    assert dbr.lower <= 1e-5 * (1 + 1e-9)
    assert d <= 1e-5 * (1 + 1e-2)


def test_more_steps_never_less_epsilon(make):
    e1 = _run(make(), M).get_epsilon(1e-5)
    e3 = _run(make(), 3 * M).get_epsilon(1e-5)
    assert e3 > e1


def test_state_dict_round_trip_is_json_and_exact(make):
    acc = _run(make(), 2 * M + 7)
    _run(acc, 13, sigma=1.5)
    state = json.loads(json.dumps(acc.state_dict()))  # plain JSON-able data
    fresh = make()
    fresh.load_state_dict(state)
    assert fresh.history == acc.history and len(fresh) == len(acc)
    assert fresh.get_epsilon(1e-5) == acc.get_epsilon(1e-5)
    _run(fresh, 1)  # resumes
    assert len(fresh) == len(acc) + 1


def test_load_state_dict_refuses_other_mechanisms_and_bad_entries(make):
    acc = _run(make(), 3)
    other = next(f for k, f in FACTORIES.items() if f().mechanism != acc.mechanism)
    with pytest.raises(ValueError, match="state must be a state_dict"):
        acc.load_state_dict(_run(other(), 3).state_dict())
    bad = acc.state_dict()
    bad["history"] = [[1.0, Q, 0.5]]
    with pytest.raises(ValueError, match="num_steps"):
        acc.load_state_dict(bad)
    assert len(acc) == 3  # unchanged


def test_repr_is_readable(make):
    acc = _run(make(), 5)
    r = repr(acc)
    assert type(acc).__name__ in r and "steps=5" in r


# ---------------------------------------------------------------- random allocation specifics
def test_random_allocation_constructors_agree():
    a = RandomAllocationAccountant(noise_multiplier=1.1, dataset_size=60000, batch_size=256, epochs=2)
    b = RandomAllocationAccountant(1.1, 234, 2)
    c = RandomAllocationAccountant(noise_multiplier=1.1, rounds_per_epoch=234, steps=468)
    d = _run(RandomAllocationAccountant(), 468, 1.1, 1 / 234)
    assert a.rounds == 234.0 and len(a) == len(b) == len(c) == len(d) == 468
    assert a.get_epsilon(1e-5) == b.get_epsilon(1e-5) == c.get_epsilon(1e-5) == d.get_epsilon(1e-5)
    with pytest.raises(ValueError, match="1 / 234"):  # 1/q not an integer: says which M to use
        RandomAllocationAccountant().step(noise_multiplier=1.1, sample_rate=256 / 60000)
    with pytest.raises(ValueError, match="epochs or steps"):
        RandomAllocationAccountant(1.1, 234, epochs=2, steps=3)
    with pytest.raises(ValueError, match="dataset_size"):
        RandomAllocationAccountant(noise_multiplier=1.1, dataset_size=60000.5, batch_size=256)


def test_random_allocation_heterogeneous_history_is_between_its_bounds():
    # two epochs at sigma = 1 then one at sigma = 2: between (1, E=2) and (1, E=3)
    acc = _run(_run(RandomAllocationAccountant(), 2 * M, 1.0), M, 2.0)
    lo, hi = acc.get_epsilon_bracket(1e-5)
    e2 = RandomAllocationAccountant(1.0, M, 2).get_epsilon_bracket(1e-5)
    e3 = RandomAllocationAccountant(1.0, M, 3).get_epsilon_bracket(1e-5)
    assert e2.lower <= hi and lo <= e3.upper
    assert e2.upper < hi < e3.upper
    # sigma changing inside an epoch: that epoch is accounted at the smaller sigma (conservative)
    mid = _run(_run(RandomAllocationAccountant(), M // 2, 2.0), M // 2, 1.0)
    assert mid.get_epsilon(1e-5) == pytest.approx(RandomAllocationAccountant(1.0, M, 1).get_epsilon(1e-5), rel=2e-3)


def test_random_allocation_partial_epoch_is_bounded_by_the_whole_epoch():
    part = _run(RandomAllocationAccountant(), M + 37)
    whole = RandomAllocationAccountant(1.0, M, 2)
    one = RandomAllocationAccountant(1.0, M, 1)
    e = part.get_epsilon_bracket(1e-5)
    assert one.get_epsilon(1e-5) <= e.upper <= whole.get_epsilon(1e-5) * (1 + 2e-3)
    assert "partial epoch 37/100" in e.method


def test_poisson_constructor_follows_opacus_steps_rule():
    acc = PoissonAccountant(noise_multiplier=1.1, dataset_size=60000, batch_size=256, epochs=10)
    assert len(acc) == int(10 / (256 / 60000)) == 2343
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)
        br = acc.get_epsilon_bracket(1e-5)
    assert br.tolerance_met and 0.9 < br.lower <= br.upper < 0.93


@pytest.mark.parametrize("cls", [PoissonAccountant, RDPAccountant])
def test_poisson_sampled_constructors_agree(cls):
    a = cls(noise_multiplier=1.1, dataset_size=60000, batch_size=256, epochs=10)
    b = cls(noise_multiplier=1.1, sample_rate=256 / 60000, steps=2343)
    c = _run(cls(), 2343, 1.1, 256 / 60000)
    assert len(a) == len(b) == len(c) == 2343 and a.history == b.history == c.history
    assert a.get_epsilon(1e-5) == b.get_epsilon(1e-5) == c.get_epsilon(1e-5)
    with pytest.raises(ValueError, match="steps or epochs, not both"):
        cls(noise_multiplier=1.1, sample_rate=0.01, steps=3, epochs=1)
    with pytest.raises(ValueError, match="batch_size"):
        cls(noise_multiplier=1.1, dataset_size=100, batch_size=101, epochs=1)
    with pytest.raises(ValueError, match="noise_multiplier and sample_rate are needed"):
        cls(steps=10)
