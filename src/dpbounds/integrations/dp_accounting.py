"""A ``dp_accounting.PrivacyAccountant`` backed by dpbounds, and a DpEvent for random allocation.

Code that takes a dp_accounting accountant -- JAX Privacy's ``DpAccountantConfig``, dp_accounting's
own ``calibrate_dp_mechanism``, anything built on ``compose(event)`` / ``get_epsilon(delta)`` --
takes :class:`DPBoundsAccountant` instead and gets dpbounds' certified answers:

==============================================================  =========================================
event (``count`` times, nested in Self/ComposedDpEvent)          how dpbounds accounts it
==============================================================  =========================================
``GaussianDpEvent(sigma)``                                      exact: the composition is mu-GDP (closed form)
``PoissonSampledDpEvent(q, GaussianDpEvent(sigma))``            exact PLD (:class:`dpbounds.PoissonAccountant`)
``RandomAllocationDpEvent(M, GaussianDpEvent(sigma))``          exact (:class:`dpbounds.RandomAllocationAccountant`)
``SampledWithoutReplacementDpEvent(n, m, GaussianDpEvent(s))``  Rényi DP (:class:`dpbounds.rdp.RDPAccountant`)
``NoOpDpEvent`` / ``NonPrivateDpEvent``                         nothing / epsilon = inf, delta = 1
==============================================================  =========================================

A sampled event's inner event may be a composition of Gaussians (one Gaussian with
1/sigma^2 = sum 1/sigma_i^2).  Anything else raises dp_accounting's ``UnsupportedEventError``
(from ``compose``; ``supports`` says False).  Requires dp-accounting
(``pip install "dpbounds[dp-accounting]"``).  See docs/dp_accounting.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Union

import attr
from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation, PrivacyAccountant

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds._result import PrivacyBracket
from dpbounds.accountant._params import check_max_lattice
from dpbounds.accountant._poisson import PoissonPLD
from dpbounds.integrations._common import HistoryFeed, gaussian_bracket

__all__ = ["DPBoundsAccountant", "RandomAllocationDpEvent", "DPBoundsAccountantConfig"]

_Details = PrivacyAccountant.CompositionErrorDetails
_ADD_REMOVE = (NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_SPECIAL)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class RandomAllocationDpEvent(dp_event.DpEvent):  # type: ignore[misc]
    """One epoch of random allocation: each record in exactly one of ``num_steps_per_epoch`` steps.

    Every record is put into one of the M = ``num_steps_per_epoch`` steps, uniformly and
    independently (balls-and-bins sampling, :func:`dpbounds.sampling.random_allocation`), and
    ``event`` -- a ``GaussianDpEvent`` (or a composition of them) -- is applied to each step's
    batch.  Compose it ``E`` times for E epochs.  dp_accounting has no such event; its own
    accountants do not support it (``UnsupportedEventError``).  Neighbouring relation: add or
    remove one record (or replace it by the zero record).
    """

    num_steps_per_epoch: int
    event: dp_event.DpEvent


def _gaussian_sigma(event: Any) -> Union[float, Any, None]:
    """The noise multiplier of one Gaussian equivalent to ``event`` (a Gaussian or a composition
    of them, applied to the same data), 0.0 for a non-private one, None for no mechanism, or the
    offending sub-event."""
    inv2 = 0.0
    stack: list[tuple[Any, int]] = [(event, 1)]
    any_mech = False
    while stack:
        e, c = stack.pop()
        if isinstance(e, dp_event.GaussianDpEvent):
            s = V.check_scalar("GaussianDpEvent.noise_multiplier", e.noise_multiplier, V.Constraint.NONNEGATIVE)
            if c == 0:
                continue
            if s == 0.0:
                return 0.0
            any_mech = True
            inv2 += c / (s * s)
        elif isinstance(e, dp_event.SelfComposedDpEvent):
            stack.append((e.event, c * V.check_count("SelfComposedDpEvent.count", e.count, minimum=0)))
        elif isinstance(e, dp_event.ComposedDpEvent):
            stack.extend((x, c) for x in e.events)
        elif isinstance(e, dp_event.NoOpDpEvent):
            continue
        else:
            return e
    if not any_mech:
        return None
    return 1.0 / math.sqrt(inv2) if math.isfinite(inv2) else 0.0


class DPBoundsAccountant(PrivacyAccountant):  # type: ignore[misc]
    """dp_accounting's ``PrivacyAccountant`` interface on dpbounds' certified accountants.

    ``compose(event, count)``, ``supports(event)``, ``get_epsilon(target_delta)`` and
    ``get_delta(target_epsilon)`` as in dp_accounting; the returned numbers are the certified
    upper ends, and :meth:`get_epsilon_bracket` / :meth:`get_delta_bracket` give the whole
    :class:`~dpbounds.PrivacyBracket`.  See the module docstring for the events covered.

    Parameters
    ----------
    neighboring_relation : dp_accounting.NeighboringRelation
        ``ADD_OR_REMOVE_ONE`` (default) or ``REPLACE_SPECIAL`` (the same answers for these
        events: replacing a record by the zero record changes a clipped sum as removing it does):
        Gaussian, Poisson-sampled and random-allocation events.  ``REPLACE_ONE``: Gaussian events
        (sensitivity 2, as dp_accounting's PLD accountant: a ``GaussianDpEvent``'s noise multiplier
        is the noise std over the per-record norm bound C, and replacing a record moves a sum by
        up to 2C) and sampling without replacement (Rényi DP at half the noise multiplier).
    tolerance : float
        Relative width target of the exact brackets (default 2e-3).
    max_lattice : int
        Memory cap of the loss lattices (see :class:`dpbounds.RandomAllocationPLD`).

    Notes
    -----
    One guarantee composes events of one family: Gaussian and Poisson-sampled events together
    (one exact PLD), random-allocation events together, or Gaussian and without-replacement
    events (Rényi DP).  A ``compose`` that would mix random allocation with another family
    raises ``UnsupportedEventError`` (nothing is composed), so ``supports`` depends on what was
    composed before.

    dp_accounting's ``RdpAccountant`` reads the noise multiplier of
    ``SampledWithoutReplacementDpEvent`` (and of a ``GaussianDpEvent`` under ``REPLACE_ONE``)
    relative to the replace-one sensitivity 2C: its numbers are this accountant's for events
    with twice the noise multiplier.
    """

    def __init__(self, neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE, *,
                 tolerance: float = 2e-3, max_lattice: int = 2 ** 21) -> None:
        if not isinstance(neighboring_relation, NeighboringRelation):
            raise DPBoundsError(f"neighboring_relation must be a dp_accounting.NeighboringRelation, "
                                f"got {neighboring_relation!r}")
        super().__init__(neighboring_relation)
        self.tolerance = V.check_scalar("tolerance", tolerance, V.Constraint.OPEN_UNIT)
        self.max_lattice = check_max_lattice(max_lattice)
        self._nonprivate = False
        self._gauss_inv2 = 0.0                    # sum of count / sigma^2 of the Gaussian events
        self._poisson: list[list[Any]] = []       # [sigma, q, count]
        self._ra: list[list[Any]] = []            # [sigma, 1/M, M * epochs]: an Opacus-style history
        self._wor: list[tuple[float, float, int]] = []  # (sigma / 2, m / n, count)
        self._ra_feed = HistoryFeed("random_allocation", self.tolerance, self.max_lattice)
        self._cache: dict[tuple[str, float], PrivacyBracket] = {}

    # ------------------------------------------------------------------ composition
    def _leaves(self, event: Any, count: int, out: list[tuple[Any, ...]]) -> Optional[Any]:
        """Collect (kind, ...) items of ``event`` composed ``count`` times; an error-details object if unsupported."""
        rel = self.neighboring_relation
        if isinstance(event, dp_event.NoOpDpEvent):
            return None
        if isinstance(event, dp_event.NonPrivateDpEvent):
            out.append(("nonprivate",))
            return None
        if isinstance(event, dp_event.SelfComposedDpEvent):
            c = V.check_count("SelfComposedDpEvent.count", event.count, minimum=0)
            return self._leaves(event.event, count * c, out)
        if isinstance(event, dp_event.ComposedDpEvent):
            for e in event.events:
                err = self._leaves(e, count, out)
                if err is not None:
                    return err
            return None
        if isinstance(event, dp_event.GaussianDpEvent):
            s = V.check_scalar("GaussianDpEvent.noise_multiplier", event.noise_multiplier, V.Constraint.NONNEGATIVE)
            if s == 0.0:
                out.append(("nonprivate",) if count else ("gaussian", 0.0))
            else:
                factor = 4.0 if rel is NeighboringRelation.REPLACE_ONE else 1.0  # sensitivity 2: (2/s)^2
                out.append(("gaussian", factor * count / (s * s)))
            return None
        if isinstance(event, dp_event.PoissonSampledDpEvent):
            if rel not in _ADD_REMOVE:
                return _Details(invalid_event=event, error_message=(
                    "PoissonSampledDpEvent needs neighboring_relation ADD_OR_REMOVE_ONE or REPLACE_SPECIAL "
                    f"(dpbounds' exact Poisson PLD is for adding or removing a record), found {rel}"))
            q = V.check_scalar("PoissonSampledDpEvent.sampling_probability", event.sampling_probability,
                               V.Constraint.CLOSED_UNIT)
            return self._sampled(event, "poisson", q, count, out)
        if isinstance(event, RandomAllocationDpEvent):
            if rel not in _ADD_REMOVE:
                return _Details(invalid_event=event, error_message=(
                    "RandomAllocationDpEvent needs neighboring_relation ADD_OR_REMOVE_ONE or REPLACE_SPECIAL, "
                    f"found {rel}"))
            m = V.check_count("RandomAllocationDpEvent.num_steps_per_epoch", event.num_steps_per_epoch,
                              minimum=2, maximum=10 ** 9)
            return self._sampled(event, "random_allocation", m, count, out)
        if isinstance(event, dp_event.SampledWithoutReplacementDpEvent):
            if rel is not NeighboringRelation.REPLACE_ONE:
                return _Details(invalid_event=event, error_message=(
                    f"SampledWithoutReplacementDpEvent needs neighboring_relation REPLACE_ONE, found {rel}"))
            n = V.check_count("SampledWithoutReplacementDpEvent.source_dataset_size", event.source_dataset_size,
                              minimum=1)
            k = V.check_count("SampledWithoutReplacementDpEvent.sample_size", event.sample_size, minimum=0,
                              maximum=n)
            return self._sampled(event, "wor", k / n, count, out)
        return _Details(invalid_event=event, error_message=(
            f"dpbounds does not account {type(event).__name__} (it covers Gaussian, Poisson-sampled Gaussian, "
            "random-allocation and without-replacement Gaussian events, and compositions of them)"))

    def _sampled(self, event: Any, kind: str, param: float, count: int, out: list[tuple[Any, ...]]) -> Optional[Any]:
        sigma = _gaussian_sigma(event.event)
        if sigma is not None and not isinstance(sigma, float):
            return _Details(invalid_event=event, error_message=(
                f"the inner event of {type(event).__name__} must be a GaussianDpEvent (or a composition of them), "
                f"found {sigma}"))
        if sigma is None or (kind != "random_allocation" and param == 0.0):
            return None  # no mechanism, or no record is ever sampled: nothing is released about anyone
        if sigma == 0.0:
            if count:
                out.append(("nonprivate",))
        else:
            out.append((kind, sigma, param, count))
        return None

    def _families(self) -> set[str]:
        fam = set()
        if self._gauss_inv2 > 0.0:
            fam.add("gaussian")
        if self._poisson:
            fam.add("poisson")
        if self._ra:
            fam.add("random_allocation")
        if self._wor:
            fam.add("wor")
        return fam

    def _maybe_compose(self, event: dp_event.DpEvent, count: int, do_compose: bool) -> Optional[Any]:
        c = V.check_count("count", count, minimum=0)
        items: list[tuple[Any, ...]] = []
        err = self._leaves(event, c, items)
        if err is not None:
            return err
        fam = self._families() | {it[0] for it in items if it[0] != "nonprivate"}
        if "random_allocation" in fam and len(fam) > 1:
            return _Details(invalid_event=event, error_message=(
                "dpbounds composes random-allocation epochs with random-allocation epochs only; this would mix "
                f"them with {sorted(fam - {'random_allocation'})} events (use a separate accountant and compose "
                "the guarantees yourself)"))
        if not do_compose:
            return None
        # items of count 0 (supports() asks with count 0) take part in the family check only
        for it in items:
            kind = it[0]
            if kind != "nonprivate" and not it[-1]:
                continue
            if kind == "nonprivate":
                self._nonprivate = True
            elif kind == "gaussian":
                self._gauss_inv2 += it[1]
            elif kind == "poisson":
                self._poisson.append([it[1], it[2], it[3]])
            elif kind == "random_allocation":
                m = int(it[2])
                self._ra.append([it[1], 1.0 / m, m * it[3]])
            else:
                self._wor.append((it[1] / 2.0, it[2], it[3]))
        if items:
            self._cache.clear()
        return None

    # ------------------------------------------------------------------ answers
    def _bracket(self, quantity: str, at: float) -> PrivacyBracket:
        key = (quantity, at)
        if key in self._cache:
            return self._cache[key]
        b = self._compute(quantity, at)
        self._cache[key] = b
        return b

    def _compute(self, quantity: str, at: float) -> PrivacyBracket:
        if self._nonprivate:
            v = math.inf if quantity == "epsilon" else 1.0
            return PrivacyBracket(v, v, quantity=quantity, at=at, tolerance=self.tolerance,
                                  method="a non-private event was composed", certified="no guarantee")
        fam = self._families()
        if not fam:
            return PrivacyBracket(0.0, 0.0, quantity=quantity, at=at, tolerance=self.tolerance,
                                  method="no privacy-relevant event composed", certified="nothing released")
        if fam == {"gaussian"}:
            return gaussian_bracket(math.sqrt(self._gauss_inv2), quantity, at, self.tolerance,
                                    method="composition of Gaussian mechanisms")
        if fam == {"random_allocation"}:
            return self._ra_feed.bracket(self._ra, quantity, at)
        if "wor" in fam:
            from dpbounds.rdp import Gaussian, RDPAccountant, SubsampledGaussianWOR

            acc = RDPAccountant()
            for s, g, c in self._wor:
                acc.compose(SubsampledGaussianWOR(s, g), c)
            if self._gauss_inv2 > 0.0:
                acc.compose(Gaussian(1.0 / math.sqrt(self._gauss_inv2)), 1)
            return acc.get_epsilon_bracket(at) if quantity == "epsilon" else acc.get_delta_bracket(at)
        segs = [(float(s), float(q), int(n)) for s, q, n in self._poisson]
        if self._gauss_inv2 > 0.0:
            segs.append((1.0 / math.sqrt(self._gauss_inv2), 1.0, 1))  # a Gaussian is a Poisson step at rate 1
        pld = PoissonPLD.from_segments(segs, tolerance=self.tolerance, max_lattice=self.max_lattice)
        return pld.epsilon(at) if quantity == "epsilon" else pld.delta(at)

    def get_epsilon_bracket(self, target_delta: float) -> PrivacyBracket:
        """The certified bracket of epsilon(target_delta) of everything composed so far."""
        d = V.check_scalar("target_delta", target_delta, V.Constraint.OPEN_UNIT)
        return self._bracket("epsilon", d)

    def get_delta_bracket(self, target_epsilon: float) -> PrivacyBracket:
        """The certified bracket of delta(target_epsilon) of everything composed so far."""
        e = V.check_scalar("target_epsilon", target_epsilon, V.Constraint.NONNEGATIVE) + 0.0
        if math.isinf(e):
            return PrivacyBracket(0.0, 0.0, quantity="delta", at=e, tolerance=self.tolerance,
                                  method="epsilon = inf", certified="every mechanism is (inf, 0)-DP")
        return self._bracket("delta", e)

    def get_epsilon(self, target_delta: float) -> float:
        """epsilon(target_delta): the certified upper end (inf after a non-private event)."""
        return self.get_epsilon_bracket(target_delta).upper

    def get_delta(self, target_epsilon: float) -> float:
        """delta(target_epsilon): the certified upper end (1 after a non-private event)."""
        return self.get_delta_bracket(target_epsilon).upper


@dataclass(frozen=True)
class DPBoundsAccountantConfig:
    """A factory of :class:`DPBoundsAccountant`, shaped as JAX Privacy's accountant configurations.

    JAX Privacy's DP-SGD accounting asks its configuration for ``create_accountant()`` and composes
    its ``PoissonSampledDpEvent``s into the result; this class answers with a dpbounds accountant.
    See docs/dp_accounting.md.
    """

    neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE
    tolerance: float = 2e-3
    max_lattice: int = 2 ** 21

    def create_accountant(self) -> DPBoundsAccountant:
        """A fresh accountant (no events composed)."""
        return DPBoundsAccountant(self.neighboring_relation, tolerance=self.tolerance, max_lattice=self.max_lattice)
