"""DPBoundsAccountant: dp_accounting's PrivacyAccountant interface on dpbounds, against dp_accounting.

On the same event trees, dp_accounting's PLD accountant -- pessimistic (its upper estimate) and
optimistic (its lower estimate, built with ``pessimistic_estimate=False``) -- and dpbounds'
certified bracket must overlap: dpbounds' bracket contains the true epsilon, so the pessimistic
value is at least dpbounds' lower end and the optimistic one at most its upper end.  The
without-replacement events go to dp_accounting's RDP accountant (at half the noise multiplier:
its convention for replace-one).
"""
from __future__ import annotations

import math

import pytest

dpa = pytest.importorskip("dp_accounting", reason="dp-accounting is not installed (pip install 'dpbounds[dp-accounting]')")

from dp_accounting import dp_event as E  # noqa: E402
from dp_accounting.pld import PLDAccountant, privacy_loss_distribution  # noqa: E402
from dp_accounting.rdp import RdpAccountant  # noqa: E402

import dpbounds  # noqa: E402
from dpbounds import DPBoundsError  # noqa: E402
from dpbounds.integrations.dp_accounting import (  # noqa: E402
    DPBoundsAccountant,
    DPBoundsAccountantConfig,
    RandomAllocationDpEvent,
)

R = dpa.NeighboringRelation
UnsupportedEventError = dpa.UnsupportedEventError
DELTA = 1e-5
INTERVAL = 1e-4  # dp_accounting's default value_discretization_interval


def _pld(event, rel, pessimistic):
    """dp_accounting's PLD of a tree of Gaussian / Poisson-sampled Gaussian events."""
    def build(e, count):
        if isinstance(e, E.SelfComposedDpEvent):
            return build(e.event, count * e.count)
        if isinstance(e, E.ComposedDpEvent):
            out = None
            for x in e.events:
                p = build(x, count)
                out = p if out is None else out.compose(p)
            return out
        q, g = (e.sampling_probability, e.event) if isinstance(e, E.PoissonSampledDpEvent) else (1.0, e)
        base = privacy_loss_distribution.from_gaussian_mechanism(
            standard_deviation=g.noise_multiplier, pessimistic_estimate=pessimistic,
            value_discretization_interval=INTERVAL, sampling_prob=q, neighboring_relation=rel)
        return base.self_compose(count)
    return build(event, 1)


G, P, S, C = E.GaussianDpEvent, E.PoissonSampledDpEvent, E.SelfComposedDpEvent, E.ComposedDpEvent
_slow = pytest.mark.slow
TREES = [
    pytest.param(G(2.0), R.ADD_OR_REMOVE_ONE, id="gaussian"),
    pytest.param(S(G(3.0), 10), R.ADD_OR_REMOVE_ONE, id="gaussian x 10", marks=_slow),
    pytest.param(G(4.0), R.REPLACE_ONE, id="gaussian, replace-one", marks=_slow),
    pytest.param(C([G(3.0), S(G(5.0), 4)]), R.REPLACE_SPECIAL, id="gaussians, replace-special", marks=_slow),
    pytest.param(S(P(0.01, G(1.0)), 300), R.ADD_OR_REMOVE_ONE, id="poisson", marks=_slow),
    pytest.param(S(P(0.02, G(1.5)), 100), R.REPLACE_SPECIAL, id="poisson, replace-special"),
    pytest.param(C([S(P(0.01, G(1.0)), 200), S(P(0.05, G(2.0)), 50), G(6.0)]), R.ADD_OR_REMOVE_ONE,
                 id="poisson, two segments and a gaussian", marks=_slow),
    pytest.param(S(C([S(P(0.1, G(3.0)), 20), P(0.2, G(4.0))]), 5), R.ADD_OR_REMOVE_ONE, id="poisson, nested",
                 marks=_slow),
]


@pytest.mark.peers
@pytest.mark.parametrize("event, rel", TREES)
def test_same_epsilon_as_dp_accounting_pld_within_its_discretisation(event, rel):
    ours = DPBoundsAccountant(rel).compose(event).get_epsilon_bracket(DELTA)
    pess = PLDAccountant(rel, value_discretization_interval=INTERVAL).compose(event).get_epsilon(DELTA)
    opt = _pld(event, rel, pessimistic=False).get_epsilon_for_delta(DELTA)
    assert opt <= pess
    # both brackets contain the truth: they overlap
    slack = 1e-12 * pess
    assert pess >= ours.lower - slack, (ours, pess)
    assert opt <= ours.upper + slack, (ours, opt)
    # ... and are narrow: dpbounds' certified upper end is within its own width of dp_accounting's
    # pessimistic value, and the two agree within dp_accounting's discretisation
    assert ours.upper <= pess + (ours.upper - ours.lower) + slack
    assert abs(ours.upper - pess) <= max(ours.upper - ours.lower, pess - opt) + 2e-3 * pess
    assert DPBoundsAccountant(rel).compose(event).get_epsilon(DELTA) == ours.upper


@pytest.mark.peers
@pytest.mark.parametrize("event, rel", TREES[:6])
def test_delta_agrees_with_dp_accounting_pld(event, rel):
    acc = DPBoundsAccountant(rel).compose(event)
    eps = acc.get_epsilon(DELTA)
    ours = acc.get_delta_bracket(eps)
    pess = PLDAccountant(rel, value_discretization_interval=INTERVAL).compose(event).get_delta(eps)
    opt = _pld(event, rel, pessimistic=False).get_delta_for_epsilon(eps)
    assert ours.lower <= DELTA                     # eps is certified for DELTA
    assert pess >= ours.lower * (1 - 1e-9) and opt <= ours.upper * (1 + 1e-9)
    assert acc.get_delta(eps) == ours.upper


def test_gaussian_is_exact_closed_form():
    for rel, factor in ((R.ADD_OR_REMOVE_ONE, 1.0), (R.REPLACE_SPECIAL, 1.0), (R.REPLACE_ONE, 2.0)):
        br = DPBoundsAccountant(rel).compose(C([G(2.0), S(G(3.0), 5)])).get_epsilon_bracket(DELTA)
        mu = factor * math.sqrt(1 / 4 + 5 / 9)
        exact = dpbounds.gdp_epsilon(DELTA, mu)
        assert br.lower <= exact <= br.upper and br.upper - br.lower <= 3e-12 * exact


@pytest.mark.peers
@pytest.mark.slow
def test_without_replacement_matches_dp_accounting_rdp_at_half_the_noise():
    """dp_accounting's RDP takes the without-replacement noise multiplier relative to the replace-one
    sensitivity 2C; dpbounds relative to C (GaussianDpEvent's definition): the same bound at sigma/2."""
    for n, m, sigma, steps in ((1000, 10, 2.0, 1000), (60000, 256, 1.5, 2000), (500, 50, 4.0, 30)):
        ours = DPBoundsAccountant(R.REPLACE_ONE).compose(
            S(E.SampledWithoutReplacementDpEvent(n, m, G(sigma)), steps)).get_epsilon_bracket(DELTA)
        theirs = RdpAccountant(neighboring_relation=R.REPLACE_ONE).compose(
            S(E.SampledWithoutReplacementDpEvent(n, m, G(sigma / 2)), steps)).get_epsilon(DELTA)
        assert ours.lower == 0.0
        assert ours.upper <= theirs * (1 + 1e-9)   # continuous orders: never worse than the fixed ones
        assert ours.upper >= theirs * 0.97
    # with a Gaussian event (replace-one: sensitivity 2) in the same guarantee
    both = C([S(E.SampledWithoutReplacementDpEvent(1000, 10, G(2.0)), 100), G(10.0)])
    ours = DPBoundsAccountant(R.REPLACE_ONE).compose(both).get_epsilon(DELTA)
    theirs = RdpAccountant(neighboring_relation=R.REPLACE_ONE).compose(
        C([S(E.SampledWithoutReplacementDpEvent(1000, 10, G(1.0)), 100), G(5.0)])).get_epsilon(DELTA)
    assert ours <= theirs * (1 + 1e-9) and ours >= theirs * 0.97


def test_random_allocation_event_is_the_exact_accountant():
    ev = S(RandomAllocationDpEvent(50, G(1.0)), 4)
    br = DPBoundsAccountant().compose(ev).get_epsilon_bracket(DELTA)
    ref = dpbounds.RandomAllocationAccountant(1.0, 50, 4).get_epsilon_bracket(DELTA)
    assert (br.lower, br.upper) == (ref.lower, ref.upper)
    # epochs of different M and noise, and a Gaussian composed inside the step
    two = C([S(RandomAllocationDpEvent(50, G(1.0)), 2), RandomAllocationDpEvent(20, C([G(2.0), G(2.0)]))])
    got = DPBoundsAccountant().compose(two).get_epsilon_bracket(DELTA)
    core = dpbounds.RandomAllocationAccountant()
    sigma = 1 / math.sqrt(1 / 4 + 1 / 4)   # two Gaussians of 2.0 on the same batch: one of sqrt(2)
    core.load_state_dict({**core.state_dict(), "history": [[1.0, 1 / 50, 100], [sigma, 1 / 20, 20]]})
    assert (got.lower, got.upper) == tuple(core.get_epsilon_bracket(DELTA))
    # dp_accounting itself has no such event
    for theirs in (PLDAccountant(), RdpAccountant()):
        assert not theirs.supports(ev)
        with pytest.raises(UnsupportedEventError):
            theirs.compose(ev)
    assert E.DpEvent.from_named_tuple(ev.to_named_tuple()) == ev


def test_epsilon_grows_with_composition_and_the_ledger_records_it():
    acc = DPBoundsAccountant()
    eps = [acc.get_epsilon(DELTA)]
    for _ in range(3):
        acc.compose(P(0.02, G(1.0)), 100)
        eps.append(acc.get_epsilon(DELTA))
    assert eps[0] == 0.0 and eps == sorted(eps) and eps[1] < eps[-1]
    assert acc.ledger == S(P(0.02, G(1.0)), 300)


@pytest.mark.parametrize("event, rel, what", [
    (E.LaplaceDpEvent(1.0), R.ADD_OR_REMOVE_ONE, "LaplaceDpEvent"),
    (E.UnsupportedDpEvent(), R.ADD_OR_REMOVE_ONE, "UnsupportedDpEvent"),
    (P(0.1, E.LaplaceDpEvent(1.0)), R.ADD_OR_REMOVE_ONE, "inner event"),
    (S(P(0.1, G(1.0)), 3), R.REPLACE_ONE, "ADD_OR_REMOVE_ONE or REPLACE_SPECIAL"),
    (RandomAllocationDpEvent(10, G(1.0)), R.REPLACE_ONE, "ADD_OR_REMOVE_ONE or REPLACE_SPECIAL"),
    (E.SampledWithoutReplacementDpEvent(100, 10, G(1.0)), R.ADD_OR_REMOVE_ONE, "REPLACE_ONE"),
    (E.SampledWithReplacementDpEvent(100, 10, G(1.0)), R.ADD_OR_REMOVE_ONE, "SampledWithReplacementDpEvent"),
    (C([G(1.0), E.LaplaceDpEvent(1.0)]), R.ADD_OR_REMOVE_ONE, "LaplaceDpEvent"),
])
def test_unsupported_events_raise_dp_accountings_error(event, rel, what):
    acc = DPBoundsAccountant(rel)
    assert not acc.supports(event)
    with pytest.raises(UnsupportedEventError, match=what):
        acc.compose(event)
    assert acc.ledger == E.NoOpDpEvent() or acc.ledger == C([])
    assert acc.get_epsilon(DELTA) == 0.0


def test_random_allocation_does_not_mix_with_other_families():
    acc = DPBoundsAccountant().compose(RandomAllocationDpEvent(10, G(1.0)), 2)
    before = acc.get_epsilon_bracket(DELTA)
    for other in (G(5.0), P(0.1, G(2.0))):
        assert not acc.supports(other)
        with pytest.raises(UnsupportedEventError, match="random-allocation epochs only"):
            acc.compose(other)
    assert tuple(acc.get_epsilon_bracket(DELTA)) == tuple(before)
    assert not DPBoundsAccountant().supports(C([G(1.0), RandomAllocationDpEvent(10, G(1.0))]))


def test_trivial_events():
    assert DPBoundsAccountant().compose(E.NoOpDpEvent(), 5).get_epsilon(DELTA) == 0.0
    assert DPBoundsAccountant().compose(P(0.0, G(1.0)), 5).get_epsilon(DELTA) == 0.0
    assert DPBoundsAccountant().supports(S(G(1.0), 0))   # dp_accounting's ledger refuses count 0 itself
    for nonprivate in (E.NonPrivateDpEvent(), G(0.0), P(0.1, G(0.0)), RandomAllocationDpEvent(5, G(0.0))):
        acc = DPBoundsAccountant().compose(G(2.0)).compose(nonprivate)
        assert acc.get_epsilon(DELTA) == math.inf and acc.get_delta(1.0) == 1.0
        # the same as dp_accounting's PLD accountant on what it supports
        if not isinstance(nonprivate, RandomAllocationDpEvent):
            assert PLDAccountant().compose(G(2.0)).compose(nonprivate).get_epsilon(DELTA) == math.inf


@pytest.mark.parametrize("make, field", [
    (lambda: DPBoundsAccountant().compose(G(-1.0)), "GaussianDpEvent.noise_multiplier"),
    (lambda: DPBoundsAccountant().compose(G(math.nan)), "GaussianDpEvent.noise_multiplier"),
    (lambda: DPBoundsAccountant().compose(P(1.5, G(1.0))), "sampling_probability"),
    (lambda: DPBoundsAccountant().compose(RandomAllocationDpEvent(1, G(1.0))), "num_steps_per_epoch"),
    (lambda: DPBoundsAccountant().compose(RandomAllocationDpEvent(2.5, G(1.0))), "num_steps_per_epoch"),
    (lambda: DPBoundsAccountant(R.REPLACE_ONE).compose(E.SampledWithoutReplacementDpEvent(10, 11, G(1.0))),
     "sample_size"),
    (lambda: DPBoundsAccountant().compose(S(G(1.0), -2)), "SelfComposedDpEvent.count"),
    (lambda: DPBoundsAccountant("add"), "neighboring_relation"),
    (lambda: DPBoundsAccountant(tolerance=0.0), "tolerance"),
    (lambda: DPBoundsAccountant().get_epsilon(0.0), "target_delta"),
    (lambda: DPBoundsAccountant().get_delta(-1.0), "target_epsilon"),
])
def test_bad_arguments_name_the_field(make, field):
    with pytest.raises(DPBoundsError, match=field):
        make()


@pytest.mark.peers
@pytest.mark.slow
def test_dp_accountings_calibration_takes_the_accountant():
    """dp_accounting.calibrate_dp_mechanism with a DPBoundsAccountant factory finds dpbounds' sigma."""
    from dp_accounting.mechanism_calibration import ExplicitBracketInterval, calibrate_dp_mechanism

    q, steps, target = 0.02, 200, 2.0
    sigma = calibrate_dp_mechanism(DPBoundsAccountant, lambda s: S(P(q, G(s)), steps), target, DELTA,
                                   bracket_interval=ExplicitBracketInterval(0.3, 10.0), tol=1e-3)
    ours = dpbounds.calibrate_noise(target, DELTA, sample_rate=q, steps=steps, sampling="poisson")
    assert abs(sigma - ours) <= 1e-3 + 2e-3 * ours


def test_jax_privacy_style_config_makes_fresh_accountants():
    """JAX Privacy's DP-SGD accounting: config.create_accountant(), compose one Poisson-sampled
    Gaussian event per stage of training, get_epsilon(delta)."""
    config = DPBoundsAccountantConfig()
    stages = [(300, 1.0, 0.01), (200, 1.2, 0.02)]  # (steps, noise multiplier, sampling probability)

    def epsilon(cfg):
        acc = cfg.create_accountant()
        for t, nm, q in stages:
            acc.compose(P(q, G(nm)), t)
        return acc.get_epsilon(target_delta=DELTA)

    first, second = epsilon(config), epsilon(config)
    assert first == second     # fresh accountants: nothing carried over
    segs = [(nm, q, t) for t, nm, q in stages]
    assert first == dpbounds.accountant.PoissonPLD.from_segments(segs).epsilon(DELTA).upper
    assert isinstance(config.create_accountant(), dpa.PrivacyAccountant)
